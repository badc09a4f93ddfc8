"""A whole bot in a test: the webhook handler, a table built from template.yaml (moto, or a
DynamoDB-compatible server), a fake Telegram, an injected clock — and people who press buttons
the way Telegram delivers them.

`Chats` reads what a bot's chats show and what its store holds; `Driver` is what people do
(press, join, seat, start, select), whichever webhook handler their updates reach: `Table` here
(one bot) and `stack.Stack` (many containers) are both driven by it.

    with running_bot(seed=3) as table:
        open_and_start(table, people())
        ...
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import random
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import boto3
import httpx

from engine import Game, Phase, card_name, cards_in
from handlers import timer, webhook
from handlers.callbacks import Kind
from handlers.config import Settings
from handlers.dynamo import DynamoStore
from handlers.runtime import Runtime
from handlers.service import Timers
from handlers.store import Record
from infra.fake_telegram import FakeTelegram, StoredMessage
from infra.harness import GROUP, SECRET, TOKEN, Clock, Person, RecordingTimers, by_id
from infra.harness.limits import Limited
from infra.harness.screens import (
    button,
    button_texts,
    card_buttons,
    cards_in_text,
    selected,
    shown_cards,
)
from infra.harness.updates import Reply, Updates, event, timer_event
from infra.runner import scheduled_event
from infra.table import create_table

Post = Callable[[dict[str, Any]], Reply]  # an update to a webhook handler, its reply decoded


class Chats:
    """What one bot's chats show, read as people read them, and its store read white-box, for
    assertions. Subclasses say where a chat's stored record is read (`record`)."""

    tg: FakeTelegram

    def record(self, chat: int = GROUP) -> Record:
        raise NotImplementedError

    def game(self, chat: int = GROUP) -> Game:
        game = self.record(chat).game
        assert game is not None
        return game

    def hand(self, person: Person, chat: int = GROUP) -> set[int]:
        """The cards the person holds, as stored."""
        game = self.game(chat)
        return set(cards_in(game.hands[game.ids.index(person.id)]))

    def latest(self, chat: int) -> StoredMessage:
        return self.tg.chat_messages(chat)[-1]

    def table_message(self, chat: int = GROUP) -> StoredMessage:
        message_id = self.record(chat).table_msg
        assert message_id is not None, "no table message"
        message = self.tg.message(chat, message_id)
        assert message is not None
        return message

    def hand_message(self, person: Person, chat: int = GROUP) -> StoredMessage:
        """The message the bot keeps editing as the person's hand."""
        message_id = self.record(chat).hand_msgs.get(person.id)
        assert message_id is not None, f"{person.name} has no hand message"
        message = self.tg.message(person.id, message_id)
        assert message is not None
        return message

    def shown_hand(self, person: Person, chat: int = GROUP) -> set[int]:
        return shown_cards(self.hand_message(person, chat))

    def group_message_with(self, kind: Kind, chat: int = GROUP) -> StoredMessage:
        for message in reversed(self.tg.chat_messages(chat)):
            if button(message, kind):
                return message
        raise AssertionError(f"no group message with a {kind.name} button")


@dataclass
class Driver:
    """People using a bot, each gesture done once here: whichever webhook handler (`post`) an
    update reaches, and whatever the chats (`chats`) show."""

    chats: Chats
    post: Post
    updates: Updates
    clock: Callable[[], float]

    def press(self, person: Person, message: StoredMessage, data: str) -> Reply:
        return self.post(self.press_update(person, message, data))

    def press_update(self, person: Person, message: StoredMessage, data: str) -> dict[str, Any]:
        return self.updates.press(
            person, message.chat_id, message.message_id, data, now=self.clock()
        )

    def press_button(self, person: Person, message: StoredMessage, kind: Kind) -> Reply:
        data = button(message, kind)
        assert data is not None, f"no {kind.name} button in {button_texts(message)}"
        return self.press(person, message, data)

    def start_from(self, person: Person, url: str | None) -> None:
        """Start in the private chat a Join's answer opened (none: it seated them at once)."""
        if url is not None:
            start = "/start " + url.split("?start=")[1]
            self.post(self.updates.message(person, start, person.id, now=self.clock()))

    def join(self, person: Person, chat: int = GROUP) -> None:
        """Join as a person does: the button, then, unless it seated them at once (the bot may
        write to them already), Start in the private chat its answer opens. The answer is the
        webhook's reply, or, when the bot answered with a request of its own, that request."""
        message = self.chats.group_message_with(Kind.JOIN, chat)
        data = button(message, Kind.JOIN)
        assert data is not None, f"no JOIN button in {button_texts(message)}"
        update = self.press_update(person, message, data)
        reply = self.post(update)
        if reply.answer is not None:
            url = reply.url
        else:
            query = update["callback_query"]["id"]
            (call,) = [
                c
                for c in self.chats.tg.calls("answerCallbackQuery")
                if c.params.get("callback_query_id") == query
            ]
            url = None if call.params.get("url") is None else str(call.params["url"])
        self.start_from(person, url)

    def seat(self, players: list[Person], chat: int = GROUP, command: str = "/newgame") -> None:
        """`command` (/newgame; "/newgame off" for a game without R20's clock), then everyone
        joins."""
        reply = self.post(self.updates.message(players[0], command, chat, now=self.clock()))
        assert reply.status == 200, reply
        for person in players:
            self.join(person, chat)

    def start(self, opener: Person, chat: int = GROUP) -> Game:
        """The opener presses Start."""
        self.press_button(opener, self.chats.group_message_with(Kind.START, chat), Kind.START)
        return self.chats.game(chat)

    def open(
        self,
        players: list[Person],
        chat: int = GROUP,
        *,
        command: str = "/newgame",
        robots: int = 0,
    ) -> Game:
        """Everyone seated (`seat`), `robots` times /addbot, the opener presses Start."""
        self.seat(players, chat, command)
        for _ in range(robots):
            self.post(self.updates.message(players[0], "/addbot", chat, now=self.clock()))
        return self.start(players[0], chat)

    def select(self, person: Person, cards: set[int], chat: int = GROUP) -> StoredMessage:
        """Toggle cards in the person's hand message, one press each, until exactly `cards` are
        selected; returns the hand message then."""
        message = self.chats.hand_message(person, chat)
        for card in sorted(selected(message) ^ cards):
            reply = self.press(person, message, card_buttons(message)[card])
            assert reply.status == 200, reply
            message = self.chats.hand_message(person, chat)
        return message


def sweep(rt: Runtime, now: float) -> None:
    """The scheduled rule fires: the timer function sweeps the chats that are due."""
    timer.handle(scheduled_event(now), rt)


def fire(rt: Runtime, *messages: str | dict[str, Any]) -> dict[str, Any]:
    """SQS delivers timer messages (`timer_event`) to the timer function."""
    return timer.handle(timer_event(*messages), rt)


class Table(Chats):
    """Drives one bot: deliver updates as Telegram would and look at what each chat shows."""

    def __init__(self, tg: FakeTelegram, rt: Runtime, clock: Clock, timers: RecordingTimers):
        self.tg = tg
        self.rt = rt
        self.clock = clock
        self.timers = timers
        self.updates = Updates(clock=clock)
        self.http = httpx.Client(base_url=tg.url)
        self.people = Driver(self, self.post, self.updates, clock)
        # The tests read the store white-box after nearly every step, often the same record
        # many times between two writes (each player's hand, each screen): a read is kept until
        # the next call to DynamoDB that is not a read, whoever makes it through this client.
        # A store without a DynamoDB client is read each time: nothing would say it changed.
        self._read: dict[int, Record] | None = None
        client = getattr(rt.store, "client", None)
        if client is not None:
            self._read = {}
            client.meta.events.register("before-call.dynamodb", self._forget_on_write)

    def _forget_on_write(self, model: Any, **_: Any) -> None:
        if model.name not in _READS and self._read is not None:
            self._read.clear()

    # --- delivering updates --------------------------------------------------------------------

    def deliver(self, ev: dict[str, Any]) -> dict[str, Any]:
        """The webhook handler on a Lambda event; its webhook reply performed as Telegram does."""
        response = webhook.handle(ev, self.rt)
        reply = Reply.of(response)
        if reply.status == 200 and reply.answer is not None:
            params = dict(reply.answer)
            method = params.pop("method")
            self.http.post(f"/bot{TOKEN}/{method}", json=params).raise_for_status()
        return response

    def post(self, update: dict[str, Any], secret: str | None = SECRET) -> Reply:
        """POST an update to the webhook handler, as Telegram does."""
        return Reply.of(self.deliver(event(update, secret=secret, now=self.clock.now)))

    def say(self, person: Person, text: str, chat: int = GROUP) -> Reply:
        return self.post(self.updates.message(person, text, chat))

    def press(self, person: Person, chat: int, message_id: int, data: str) -> Reply:
        return self.post(self.updates.press(person, chat, message_id, data))

    def tick(self) -> None:
        """The scheduled sweep, as the timer Lambda runs it."""
        sweep(self.rt, self.clock.now)

    def fire(self, at: float, chat: int = GROUP) -> dict[str, Any]:
        """The timer function on the SQS message set for `at`, delivered at the table's clock."""
        return fire(self.rt, {"chat": chat, "at": at})

    # --- what people do ----------------------------------------------------------------------

    def press_button(self, person: Person, message: StoredMessage, kind: Kind) -> Reply:
        return self.people.press_button(person, message, kind)

    def select(self, person: Person, cards: set[int]) -> StoredMessage:
        """Toggle cards in the person's hand message, one press each, as a person would, until
        exactly `cards` are selected."""
        return self.people.select(person, cards)

    def play(self, person: Person, cards: set[int]) -> Reply:
        return self.press_button(person, self.select(person, cards), Kind.PLAY)

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


@functools.cache
def _sessions() -> boto3.Session:
    """One boto3 session for every moto client of the run. moto drops boto3's default session
    each time a mock starts, and a new session reads botocore's endpoint and service files
    again; moto's state is its own, so each test still gets an empty DynamoDB."""
    return boto3.Session()


@contextmanager
def running_bot(
    seed: int = 7,
    dynamodb: Any = None,
    log_level: str = "INFO",
    flood_limit: int | None = None,
    *,
    timers: Timers | None = None,
    sleep: Callable[[float], Awaitable[None]] | None = None,
) -> Iterator[Table]:
    """A bot on a fake Telegram, with the table built from template.yaml: on moto, or on the
    DynamoDB-compatible server `dynamodb` (a boto3 client) when one is given, either refusing
    what DynamoDB refuses (`Limited`). `flood_limit`: the fake answers 429 beyond that many
    messages a minute into one chat, as Telegram does. `timers` in place of the recording ones;
    `sleep` in place of asyncio's (for the waits between conflicting writes)."""
    with contextlib.ExitStack() as stack:
        clock = Clock()
        tg = stack.enter_context(FakeTelegram(clock=clock, flood_limit=flood_limit))
        if dynamodb is None:
            from moto import mock_aws  # noqa: PLC0415 - what drives a bot on dynalite needs none

            stack.enter_context(mock_aws())
            dynamodb = _sessions().client("dynamodb", region_name="us-east-1")
        dynamodb = Limited(dynamodb)
        create_table(dynamodb, "menteur-test")
        settings = Settings(
            table_name="menteur-test",
            bot_token=TOKEN,
            webhook_secret=SECRET,
            api_base_url=tg.base_url,
            log_level=log_level,
        )
        recording = RecordingTimers()
        rt = Runtime(
            settings,
            store=DynamoStore(dynamodb, "menteur-test"),
            clock=clock,
            timers=recording if timers is None else timers,
            rng=random.Random(seed),
            game_ids=random.Random(seed),
            sleep=asyncio.sleep if sleep is None else sleep,
        )
        table = Table(tg, rt, clock, recording)
        try:
            yield table
        finally:
            table.http.close()
            rt.close()


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
