"""Where a chat's game lives: one item per group chat (per forum topic in a group with topics),
read once and written once per action.

`Record` is what the bot keeps about one chat (or forum topic), as read. The game and the bot's
bookkeeping travel as one compact JSON document (`Record.document`), written by the action's
conditional write; what sending taught (message ids, sent marks, who cannot be reached) lives
beside it, kept by a write conditioned on the game rather than the version, so it never
collides with a move written meanwhile.

`Store` is the port: `load` a record (with the chat's flood budget, in the same request),
`apply` one change of one item (`handlers.item` says what each write changes, for both stores),
and the few reads and moves around them. `handlers.dynamo.DynamoStore` is the adapter,
`infra.harness.memory.MemoryStore` the tests' fake with the same semantics.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal, NamedTuple, Protocol

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
    # bot needs no ping when their turn comes (`plan.turn_ping`); and who was pinged in the last
    # minute, and when (pinged again only once they act, or the minute is over).
    looking: dict[int, float] = field(default_factory=dict)
    pinged: dict[int, float] = field(default_factory=dict)
    # When each person opened the chat's latest games (/newgame), in the last minute.
    opened: dict[int, list[float]] = field(default_factory=dict)
    title: str = ""
    langs: dict[int, str] = field(default_factory=dict)  # player → language of their hand
    previous: int = 0  # the id of the game before the current one (its Play again seats)
    # The people of that game, id → seat name, while the current one is a lobby: its table
    # says who has not come back yet.
    previous_seats: dict[int, str] = field(default_factory=dict)
    note: str | None = None  # the table's line about the latest events, kept for re-renders
    updates: list[int] = field(default_factory=list)  # update ids already applied
    # The seats whose hands the write of the latest update drew (a mask; None: not known): a
    # retry of it draws those again, and no other (a hand drawn again unticks its cards).
    retry_hands: int | None = None
    # The chat's flood budget, kept once for the whole chat in its own item (every forum topic's
    # game and every reply share it): the times of new group messages as read, and until when
    # Telegram said to wait after a 429.
    sends: list[float] = field(default_factory=list)
    hold: float | None = None
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
    # Parcel stamp -> sent (True) or owed to anyone (False), marked after sending; a write drops
    # the marks of the parcels it no longer carries.
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
        if self.previous_seats and self.game is not None and self.game.phase is Phase.LOBBY:
            doc["lp"] = [[p, name] for p, name in self.previous_seats.items()]
        if self.looking:
            doc["lk"] = [[p, round(at)] for p, at in self.looking.items()]
        if self.pinged:
            doc["pg"] = [[p, round(at)] for p, at in self.pinged.items()]
        if self.opened:
            doc["op"] = [[p, *(round(at) for at in ats)] for p, ats in self.opened.items()]
        if self.outbox:
            doc["ox"] = outbox.encode(self.outbox, self.game.ids if self.game else ())
        if self.retry_hands is not None:
            doc["dh"] = self.retry_hands
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
        self.previous_seats = dict(doc.get("lp", []))
        self.looking = {p: float(at) for p, at in doc.get("lk", [])}
        self.pinged = {p: float(at) for p, at in doc.get("pg", [])}
        self.opened = {p: [float(at) for at in ats] for p, *ats in doc.get("op", [])}
        if "ox" in doc:
            self.outbox = outbox.decode(doc["ox"], seats)
        else:  # written before the outbox stored seats
            self.outbox = [outbox.decode_ids(p) for p in doc.get("ob", ())]
        self.retry_hands = doc.get("dh")

    def not_back(self) -> tuple[str, ...]:
        """The names of the people of the last game not seated in this lobby (none after it)."""
        game = self.game
        if game is None or game.phase is not Phase.LOBBY:
            return ()
        return tuple(name for p, name in self.previous_seats.items() if p not in game.ids)

    def undelivered(self) -> list[Parcel]:
        """The parcels not yet known to be sent: owed, or still with the write that took them."""
        return [p for p in self.outbox if not self.marks.get(p.stamp)]

    def forgotten(self) -> Record:
        """The record as a new game's write leaves it: the last game's messages (its table,
        final play and hands) and whom it could not reach forgotten (`handlers.item.commit`
        removes the same from the item)."""
        return replace(self, table_msg=None, final_msg=None, hand_msgs={}, unreachable=set())

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


Value = dict[str, Any]  # an attribute's value as DynamoDB types it: {"N": "3"}, {"S": "x"}
NOTHING: Mapping[str, Value] = MappingProxyType({})


class Test(NamedTuple):
    """One condition on an attribute: equal to a value, absent, present, or of a given size."""

    path: str
    op: Literal["=", "absent", "present", "size"]
    value: Value | None = None


class Change(NamedTuple):
    """One UpdateItem of the item `key` (`handlers.item` builds them): what it sets, appends,
    adds and takes out, removes, on what conditions. A path is an attribute's name, or
    `map.entry` for an entry of a map attribute."""

    key: str
    set: Mapping[str, Value] = NOTHING
    fill: Mapping[str, Value] = NOTHING  # set only where absent
    append: Mapping[str, Value] = NOTHING  # lists: values added at the end
    add: Mapping[str, Value] = NOTHING  # number sets: values added
    delete: Mapping[str, Value] = NOTHING  # number sets: values taken out
    remove: tuple[str, ...] = ()
    when: tuple[Test, ...] = ()  # each must hold, or nothing changes (`Conflict`)
    otherwise: Change | None = None  # written instead when a condition fails, if any

    def __bool__(self) -> bool:
        return bool(self.set or self.fill or self.append or self.add or self.delete or self.remove)

    def expression(self) -> tuple[str, str | None, dict[str, str], dict[str, Value]]:
        """The update expression, the condition expression (None: none), and the names and
        values they refer to, as DynamoDB's UpdateItem takes them."""
        names: dict[str, str] = {}
        values: dict[str, Value] = {}

        def name(path: str) -> str:
            parts = []
            for part in path.split("."):
                placeholder = f"#{part}" if part.isalnum() and part.isascii() else None
                placeholder = placeholder or f"#n{len(names)}"
                names[placeholder] = part
                parts.append(placeholder)
            return ".".join(parts)

        def value(v: Value) -> str:
            key = f":{len(values)}"
            values[key] = v
            return key

        sets = [f"{name(p)} = {value(v)}" for p, v in self.set.items()]
        sets += [f"{name(p)} = if_not_exists({name(p)}, {value(v)})" for p, v in self.fill.items()]
        if self.append:
            empty = value({"L": []})
            sets += [
                f"{name(p)} = list_append(if_not_exists({name(p)}, {empty}), {value(v)})"
                for p, v in self.append.items()
            ]
        actions = [("SET", sets), ("REMOVE", [name(p) for p in self.remove])]
        actions.append(("ADD", [f"{name(p)} {value(v)}" for p, v in self.add.items()]))
        actions.append(("DELETE", [f"{name(p)} {value(v)}" for p, v in self.delete.items()]))
        update = " ".join(f"{verb} {', '.join(parts)}" for verb, parts in actions if parts)
        tests = []
        for test in self.when:
            target = name(test.path)
            match test.op:
                case "absent":
                    tests.append(f"attribute_not_exists({target})")
                case "present":
                    tests.append(f"attribute_exists({target})")
                case "=":
                    assert test.value is not None
                    tests.append(f"{target} = {value(test.value)}")
                case "size":
                    assert test.value is not None
                    tests.append(f"size({target}) = {value(test.value)}")
        return update, " AND ".join(tests) or None, names, values


class Store(Protocol):
    counts: Counts

    def load(self, chat: int, topic: int | None = None) -> Record:
        """The record of the chat (or of its forum topic), read consistently; a new, unsaved
        one if there is none. The chat's flood budget is read with it, in the same request."""
        ...

    def apply(self, change: Change) -> None:
        """One write of one item, as `change` says: `Conflict` when one of its conditions does
        not hold (and nothing changes)."""
        ...

    def overdue(self, now: float, limit: int = 100) -> list[tuple[int, int | None]]:
        """Chats (and topics) whose timer is due at `now`: the safety-net sweep's reading."""
        ...

    def topics(self, chat: int) -> list[int]:
        """The forum topics of `chat` in which games were opened (`handlers.item.topic`)."""
        ...

    def move(self, old_chat: int, new_chat: int) -> None:
        """A group became a supergroup: its game now lives under the new chat id. Idempotent;
        while a move is under way the old record reads `moving` and refuses writes."""
        ...
