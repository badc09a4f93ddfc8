"""One bot in a test: a `Stack` (the fake Telegram, a table built from template.yaml on moto or
a DynamoDB-compatible server, an injected clock) with one container, driven as people use
Telegram: `Table`, whose updates reach the webhook handler as Telegram delivers them.

    with running_bot(seed=3) as table:
        open_and_start(table, people())
        ...
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from engine import Phase, card_name
from handlers.callbacks import Kind
from handlers.store import Record
from handlers.timing import Timers
from infra.fake_telegram import StoredMessage
from infra.harness import GROUP, SECRET, Clock, Person, RecordingTimers, by_id
from infra.harness.driver import Chats
from infra.harness.screens import cards_in_text
from infra.harness.stack import Backend, Container, Stack
from infra.harness.updates import Reply

__all__ = ["Table", "Watcher", "open_and_start", "play_to_a_final_play", "running_bot"]


class Table(Chats):
    """One bot, a stack's one container: deliver updates as Telegram would and look at what
    each chat shows."""

    def __init__(self, stack: Stack, c: Container, timers: RecordingTimers) -> None:
        self.stack = stack
        self.c = c
        self.tg = stack.tg
        self.rt = c.rt
        self.clock = c.clock
        self.timers = timers
        self.updates = stack.updates
        self.people = stack.people(c)
        # The tests read the store white-box after nearly every step, often the same record
        # many times between two writes (each player's hand, each screen): a read is kept until
        # the next call to DynamoDB that is not a read, whoever makes it through this client.
        # A store without a DynamoDB client is read each time: nothing would say it changed.
        self._read: dict[int, Record] | None = None
        client = getattr(c.store.inner, "client", None)
        if client is not None:
            self._read = {}
            client.meta.events.register("before-call.dynamodb", self._forget_on_write)

    def _forget_on_write(self, model: Any, **_: Any) -> None:
        if model.name not in _READS and self._read is not None:
            self._read.clear()

    # --- delivering updates --------------------------------------------------------------------

    def deliver(self, ev: dict[str, Any]) -> dict[str, Any]:
        """The webhook handler on a Lambda event; its webhook reply performed as Telegram does."""
        return self.c.deliver(ev)

    def post(self, update: dict[str, Any], secret: str | None = SECRET) -> Reply:
        """POST an update to the webhook handler, as Telegram does."""
        return self.c.post(update, secret)

    def say(self, person: Person, text: str, chat: int = GROUP) -> Reply:
        return self.post(self.updates.message(person, text, chat))

    def press(self, person: Person, chat: int, message_id: int, data: str) -> Reply:
        return self.post(self.updates.press(person, chat, message_id, data))

    def sweep(self) -> None:
        """The scheduled sweep, as the timer Lambda runs it."""
        self.c.sweep()

    def fire(self, at: float, chat: int = GROUP) -> dict[str, Any]:
        """The timer function on the SQS message set for `at`, delivered at the table's clock."""
        return self.c.fire({"chat": chat, "at": at})

    # --- what people do ----------------------------------------------------------------------

    def press_button(self, person: Person, message: StoredMessage, kind: Kind) -> Reply:
        return self.people.press_button(person, message, kind)

    def select(self, person: Person, cards: set[int]) -> StoredMessage:
        return self.people.select(person, cards)

    def play(self, person: Person, cards: set[int]) -> Reply:
        return self.people.play(person, cards)

    def join(self, person: Person) -> None:
        self.people.join(person)

    def start_from_link(self, person: Person) -> None:
        """Start in the private chat, when the latest button's answer opened one."""
        url = self.tg.calls("answerCallbackQuery")[-1].params.get("url")
        self.people.start_from(person, None if url is None else str(url))

    # --- the store, white-box, for assertions -------------------------------------------------

    def record(self, chat: int = GROUP) -> Record:
        """The chat's record as stored: a copy, so that a test may change what it is given."""
        if self._read is None:
            return self.rt.store.load(chat)
        if chat not in self._read:
            self._read[chat] = self.rt.store.load(chat)
        return copy.deepcopy(self._read[chat])


# DynamoDB's operations that change nothing.
_READS = frozenset({"GetItem", "BatchGetItem", "Query", "Scan", "DescribeTable", "ListTables"})


@contextmanager
def running_bot(
    seed: int = 7,
    dynamodb: Any = None,
    log_level: str = "INFO",
    flood_limit: int | None = None,
    *,
    timers: Timers | None = None,
    sleep: Callable[[float], Awaitable[None]] | None = None,
    **container: Any,
) -> Iterator[Table]:
    """One bot on a stack of its own: on moto, or on the DynamoDB-compatible server `dynamodb`
    (a boto3 client) when one is given. `flood_limit`: the fake answers 429 beyond that many
    messages a minute into one chat, as Telegram does. `timers` in place of the recording
    ones (`Table.timers`); `sleep` in place of asyncio's (the waits between conflicting
    writes); `container`: the rest of `Stack.container`'s options (its settings too)."""
    clock = Clock()
    backend: Backend = "moto" if dynamodb is None else "dynalite"
    stack = Stack(
        store=backend, dynamodb=dynamodb, clock=clock, flood_limit=flood_limit, log_level=log_level
    )
    with stack:
        recording = RecordingTimers()
        options: dict[str, Any] = container if sleep is None else {**container, "sleep": sleep}
        c = stack.container(clock, seed, timers=recording if timers is None else timers, **options)
        yield Table(stack, c, recording)


# --- a game through the bot, watched -------------------------------------------------------------


def open_and_start(table: Table, players: list[Person], command: str = "/newgame") -> None:
    """/newgame (or `command`: "/newgame off" for a game without R20's clock), everyone joins,
    the opener presses Start."""
    table.people.seat(players, command=command)
    assert table.game().ids == tuple(p.id for p in players)
    assert table.people.start(players[0]).phase is Phase.PLAY


class Watcher:
    """Checks after every step that each chat shows what it may, and nothing more."""

    def __init__(self, table: Table, players: list[Person]) -> None:
        self.table = table
        self.players = players
        self.revealed: set[str] = set()  # cards turned over by challenges: public from then on

    def check(self) -> None:
        game = self.table.game()
        if game.phase in (Phase.PLAY, Phase.DECIDE):
            for person in self.players:
                # A private chat shows its owner's hand, exactly.
                assert self.table.shown_hand(person) == self.table.hand(person), person.name
        for call in self.table.tg.calls(chat_id=GROUP):
            text = str(call.params.get("text", ""))
            assert cards_in_text(text) <= self.revealed, f"a hand leaked: {text}"

    def reveal(self, cards: set[int]) -> None:
        self.revealed |= {card_name(c) for c in cards}


def play_to_a_final_play(table: Table, players: list[Person], watcher: Watcher) -> Person:
    """Play four cards at a time (nobody shouts) until somebody empties their hand."""
    for _ in range(60):
        game = table.game()
        if game.phase is Phase.DECIDE:
            return by_id(players, game.ids[game.last.seat])  # type: ignore[union-attr]
        person = by_id(players, game.awaited)
        hand = table.hand(person)
        table.play(person, set(sorted(hand)[:4]))
        watcher.check()
    raise AssertionError("no final play")
