"""Where a chat's game lives: one item per group chat (per forum topic in a group with topics),
read once and written once per action.

`Store` is the port; `handlers.dynamo.DynamoStore` the adapter (one consistent GetItem, one
UpdateItem conditional on the version), and `infra.harness.memory.MemoryStore` the tests' fake
with the same semantics. The game and the bot's bookkeeping travel as one compact JSON document
(`Record.document`); the ids of messages sent after a write live beside it, set by a second
update that is not conditional on the version, so they never collide with a move written
meanwhile.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Protocol

from engine import CLOCK_DEFAULT, Game, Phase, decode, encode
from handlers import outbox
from handlers.callbacks import Place
from handlers.names import TITLE_LENGTH
from handlers.outbox import Parcel

RECENT_UPDATES = 12  # a retried update comes back within a minute, after a few others


class Conflict(Exception):
    """Someone else wrote the chat's item since it was read: reload and apply again."""


@dataclass
class Record:
    """Everything the bot keeps about one group chat, or one forum topic of it."""

    chat: int
    topic: int | None = None  # the forum topic (`message_thread_id`); None: the chat itself
    version: int = 0  # 0: never written
    game: Game | None = None
    game_id: int = 0  # the current game's, in its buttons (callbacks.GAME_IDS); 0: none yet
    lang: str = "en"  # the language the chat's game speaks (the chat's, or its opener's choice)
    # The chat's language for its later games, when the opener of this one chose another for it
    # (None: `lang`); the next game opens in it.
    later_lang: str | None = None
    # R20: the seconds a person has to play in the chat's games (0: no clock), the setting new
    # games open with; and the turn (`Game.turns`) whose reminder was sent (at most one a turn).
    clock: int = CLOCK_DEFAULT
    reminded: int | None = None
    # Who pressed buttons that wrote in the last few seconds, and when: someone looking at the
    # bot needs no ping when their turn comes (`plan.turn_ping`).
    looking: dict[int, float] = field(default_factory=dict)
    title: str = ""
    langs: dict[int, str] = field(default_factory=dict)  # player → language of their hand
    previous: int = 0  # the id of the game before the current one (its Play again seats)
    # The people of that game, id → seat name, while the current one is a lobby: its table
    # says who has not come back yet.
    last: dict[int, str] = field(default_factory=dict)
    note: str | None = None  # the table's line about the latest events, kept for re-renders
    updates: list[int] = field(default_factory=list)  # update ids already applied
    # The seats whose hands the write of the latest update drew (a mask; None: not known): a
    # retry of it draws those again, and no other (a hand drawn again unticks its cards).
    drawn: int | None = None
    # The chat's flood budget, kept once for the whole chat (every forum topic's game and every
    # reply share it), beside the records: the times of new group messages as read, and until
    # when Telegram said to wait after a 429.
    sends: list[float] = field(default_factory=list)
    hold: float | None = None
    sends_read: int = 0  # how many times the budget held when read
    next_look: float | None = None  # when the timer must look at this game next (stored as `due`)
    expires: int | None = None  # epoch seconds after which DynamoDB may delete the item
    writer: str | None = None  # a token of the last write's attempt, written with it
    outbox: list[Parcel] = field(default_factory=list)  # the moments owed the group
    # Set after sending, outside the versioned document:
    moving: int | None = None  # the supergroup this item is moving to: writes here are refused
    owed: float | None = None  # when the screens are to be drawn again (Telegram said wait)
    # Whether the redraw owed includes private hands (one given up): a group's flood limit owes
    # the group's screens alone, and a hand drawn again would lose the cards ticked in it.
    owed_hands: bool = False
    redrawn: float | None = None  # the `owed` mark this write settles (cleared only if unchanged)
    table_msg: int | None = None
    final_msg: int | None = None
    hand_msgs: dict[int, int] = field(default_factory=dict)
    unreachable: set[int] = field(default_factory=set)  # players whose private chat said 403
    # Parcel stamp -> sent (True) or given up (False), marked after sending; a write drops the
    # marks of the parcels it no longer carries.
    marks: dict[int, bool] = field(default_factory=dict)

    def document(self) -> str:
        """The versioned part, compact: the whole item must stay under one 1 KB write unit."""
        doc = {
            "g": None if self.game is None else encode(self.game),
            "n": self.game_id,
            "l": self.lang,
            "t": self.title[:TITLE_LENGTH],
            # Aligned with the seats, which carry the ids: no id is stored twice.
            "pl": [self.langs.get(p, "") for p in self.game.ids] if self.game else [],
            "no": self.note,
            # In the order applied: updates may arrive out of order, and the latest must stay.
            "u": _deltas(self.updates[-RECENT_UPDATES:]),
        }
        # Written only when they differ from what an item without them reads as.
        if self.clock != CLOCK_DEFAULT:
            doc["c"] = self.clock
        if self.reminded is not None:
            doc["rm"] = self.reminded
        if self.later_lang is not None:
            doc["ll"] = self.later_lang
        if self.previous:
            doc["pv"] = self.previous
        if self.last and self.game is not None and self.game.phase is Phase.LOBBY:
            doc["lp"] = [[p, name] for p, name in self.last.items()]
        if self.looking:
            doc["lk"] = [[p, round(at)] for p, at in self.looking.items()]
        if self.outbox:
            doc["ob"] = [outbox.encode(p) for p in self.outbox]
        if self.drawn is not None:
            doc["dh"] = self.drawn
        return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)

    def read_document(self, text: str) -> None:
        doc = json.loads(text)
        self.game = None if doc["g"] is None else decode(doc["g"])
        self.game_id = doc["n"]
        self.lang = doc["l"]
        self.title = doc["t"]
        seats = self.game.ids if self.game else ()
        self.langs = {p: lang for p, lang in zip(seats, doc["pl"], strict=True) if lang}
        self.note = doc["no"]
        self.updates = _undeltas(doc["u"])
        self.clock = doc.get("c", CLOCK_DEFAULT)
        self.reminded = doc.get("rm")
        self.later_lang = doc.get("ll")
        self.previous = doc.get("pv", 0)
        self.last = dict(doc.get("lp", []))
        self.looking = {p: float(at) for p, at in doc.get("lk", [])}
        self.outbox = [outbox.decode(p) for p in doc.get("ob", ())]
        self.drawn = doc.get("dh")

    def not_back(self) -> tuple[str, ...]:
        """The names of the people of the last game not seated in this lobby (none after it)."""
        game = self.game
        if game is None or game.phase is not Phase.LOBBY:
            return ()
        return tuple(name for p, name in self.last.items() if p not in game.ids)

    def owing(self) -> list[Parcel]:
        """The parcels not yet known to be sent: owed, or still with the write that took them."""
        return [p for p in self.outbox if not self.marks.get(p.stamp)]

    def unmarked(self) -> list[int]:
        """The stamps marked whose parcels this record no longer carries: the write drops them."""
        carried = {p.stamp for p in self.outbox}
        return sorted(s for s in self.marks if s not in carried)

    def written(self, *, new_game: bool = False) -> None:
        """The record as its write left it in the store: the next version, no redraw pending,
        marks only for the parcels it carries, and a new game's messages forgotten."""
        self.version += 1
        self.redrawn = None
        carried = {p.stamp for p in self.outbox}
        self.marks = {s: v for s, v in self.marks.items() if s in carried}
        if new_game:
            self.forget_messages()

    def forget_messages(self) -> None:
        """A new game's write forgets the last game's messages: its table, final play, hands,
        and whom it could not reach."""
        self.table_msg = self.final_msg = None
        self.hand_msgs = {}
        self.unreachable = set()

    def lang_of(self, player: int) -> str:
        """The language of a player's private messages."""
        return self.langs.get(player, self.lang)

    @property
    def place(self) -> Place:
        """Where the buttons of the record's game lead."""
        return Place(self.chat, self.game_id, self.topic)


def _deltas(values: list[int]) -> list[int]:
    """[a, b, c] as [a, b - a, c - b]: ids and times close together take a few digits each."""
    return [n - p for p, n in zip([0, *values], values, strict=False)]


def _undeltas(deltas: list[int]) -> list[int]:
    total, values = 0, []
    for d in deltas:
        total += d
        values.append(total)
    return values


@dataclass
class Counts:
    """DynamoDB requests made, for the benchmarks' requests-per-action figures."""

    reads: int = 0
    writes: int = 0


class Store(Protocol):
    counts: Counts

    def load(self, chat: int, topic: int | None = None) -> Record:
        """The record of the chat (or of its forum topic), read consistently; a new, unsaved
        one if there is none. The chat's flood budget is read with it, in the same request."""
        ...

    def save(self, record: Record, *, new_game: bool = False) -> Record:
        """Write `record` if nobody wrote since it was read (else `Conflict`); returns it with
        its new version. `new_game` forgets the message ids of the previous game."""
        ...

    def remember(
        self,
        chat: int,
        game_id: int,
        *,
        topic: int | None = None,
        table: int | None = None,
        final: int | None = None,
        hands: dict[int, int] | None = None,
        unreachable: set[int] | None = None,
        reachable: set[int] | None = None,
    ) -> None:
        """Keep what sending taught: the ids of messages just sent (unless the chat has moved on
        to another game) and which players' private chats refuse or accept the bot."""
        ...

    def spend(
        self, chat: int, times: list[float], *, recent: list[float] | None = None, read: int = 0
    ) -> None:
        """New group messages sent into `chat` at `times`, added to its flood budget (never
        lost to a concurrent writer). With `recent` (the times read still in the minute), the
        older ones are dropped too, unless someone added any since the `read` ones."""
        ...

    def hold(self, chat: int, until: float) -> None:
        """Telegram said to wait: nothing new goes into `chat` before `until` (the latest kept)."""
        ...

    def mark(self, chat: int, topic: int | None, marks: dict[int, bool]) -> None:
        """After sending: which parcels of the outbox went out (True) or were given up (False).
        Outside the version, like `remember`; nothing for an item that is gone."""
        ...

    def owe(self, chat: int, at: float, topic: int | None = None, *, hands: bool = False) -> None:
        """The chat's screens are to be drawn again at `at` (a flood limit outlasted the
        handler): marked outside the versioned document, the latest mark kept, and `due` moved
        earlier if need be so that the sweep finds it; the private hands too if `hands` (kept
        until a redraw settles the mark)."""
        ...

    def overdue(self, now: float, limit: int = 100) -> list[tuple[int, int | None]]:
        """Chats (and topics) whose timer is due at `now`: the safety-net sweep's reading."""
        ...

    def add_topic(self, chat: int, topic: int, expires: int | None) -> None:
        """A game was opened in a forum topic of `chat`: kept, so that whatever ends every game
        of the chat (the bot removed from it) finds that one."""
        ...

    def topics(self, chat: int) -> list[int]:
        """The forum topics of `chat` in which games were opened."""
        ...

    def move(self, old_chat: int, new_chat: int) -> None:
        """A group became a supergroup: its game now lives under the new chat id. Idempotent;
        while a move is under way the old record reads `moving` and refuses writes."""
        ...
