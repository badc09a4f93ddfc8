"""A whole bot in a test: the webhook handler, a table built from template.yaml (moto, or a
DynamoDB-compatible server), a fake Telegram, an injected clock — and people who press buttons
the way Telegram delivers them.

    with running_bot(seed=3) as table:
        open_and_start(table, people())
        ...
"""

from __future__ import annotations

import contextlib
import functools
import json
import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3
import httpx
from moto import mock_aws

from engine import Game, Phase, card_name
from handlers import timer, webhook
from handlers.callbacks import Kind
from handlers.config import Settings
from handlers.dynamo import DynamoStore
from handlers.runtime import Runtime
from handlers.store import Record
from infra.fake_telegram import FakeTelegram, StoredMessage
from infra.table import create_table
from tests.support import GROUP, SECRET, TOKEN, Clock, Person, RecordingTimers, by_id
from tests.support.screens import button, button_texts, card_buttons, cards_in_text, shown_cards
from tests.support.updates import Updates, event


class Table:
    """Drives one bot: deliver updates as Telegram would and look at what each chat shows."""

    def __init__(self, tg: FakeTelegram, rt: Runtime, clock: Clock, timers: RecordingTimers):
        self.tg = tg
        self.rt = rt
        self.clock = clock
        self.timers = timers
        self.updates = Updates(clock=clock)
        self.http = httpx.Client(base_url=tg.url)

    # --- delivering updates --------------------------------------------------------------------

    def deliver(self, ev: dict[str, Any]) -> dict[str, Any]:
        """The webhook handler on a Lambda event; its webhook reply performed as Telegram does."""
        response = webhook.handle(ev, self.rt)
        body = response.get("body")
        if response["statusCode"] == 200 and body:
            reply = json.loads(body)
            method = reply.pop("method")
            self.http.post(f"/bot{TOKEN}/{method}", json=reply).raise_for_status()
        return response

    def post(self, update: dict[str, Any], secret: str | None = SECRET) -> dict[str, Any]:
        """POST an update to the webhook handler, as Telegram does."""
        return self.deliver(event(update, secret=secret, now=self.clock.now))

    def say(self, person: Person, text: str, chat: int = GROUP) -> dict[str, Any]:
        return self.post(self.updates.message(person, text, chat))

    def press(self, person: Person, chat: int, message_id: int, data: str) -> dict[str, Any]:
        return self.post(self.updates.press(person, chat, message_id, data))

    def tick(self) -> None:
        """The scheduled sweep, as the timer Lambda runs it."""
        timer.handle({"source": "aws.events"}, self.rt)

    # --- what chats show ------------------------------------------------------------------------

    def latest(self, chat: int) -> StoredMessage:
        return self.tg.chat_messages(chat)[-1]

    def press_button(self, person: Person, message: StoredMessage, kind: Kind) -> dict[str, Any]:
        data = button(message, kind)
        assert data is not None, f"no {kind.name} button in {button_texts(message)}"
        return self.press(person, message.chat_id, message.message_id, data)

    def group_message_with(self, kind: Kind) -> StoredMessage:
        for message in reversed(self.tg.chat_messages(GROUP)):
            if button(message, kind):
                return message
        raise AssertionError(f"no group message with a {kind.name} button")

    def hand_message(self, person: Person) -> StoredMessage:
        """The message the bot keeps editing as the person's hand."""
        message_id = self.record().hand_msgs.get(person.id)
        assert message_id is not None, f"{person.name} has no hand message"
        message = self.tg.message(person.id, message_id)
        assert message is not None
        return message

    def shown_hand(self, person: Person) -> set[int]:
        return shown_cards(self.hand_message(person))

    def select(self, person: Person, cards: set[int]) -> StoredMessage:
        """Toggle `cards` in the person's hand message, one press each, as a person would."""
        for card in sorted(cards):
            message = self.hand_message(person)
            self.press(person, person.id, message.message_id, card_buttons(message)[card])
        return self.hand_message(person)

    def play(self, person: Person, cards: set[int]) -> dict[str, Any]:
        return self.press_button(person, self.select(person, cards), Kind.PLAY)

    def join(self, person: Person) -> None:
        """Join as a person does: the button, then, unless it seated them at once (the bot may
        write to them already), Start in the private chat it opens."""
        self.press_button(person, self.group_message_with(Kind.JOIN), Kind.JOIN)
        self.start_from_link(person)

    def start_from_link(self, person: Person) -> None:
        """Start in the private chat, when the latest button's answer opened one."""
        url = self.tg.calls("answerCallbackQuery")[-1].params.get("url")
        if url is not None:
            self.say(person, "/start " + url.split("?start=")[1], chat=person.id)

    # --- the store, white-box, for assertions -------------------------------------------------

    def record(self) -> Record:
        return self.rt.store.load(GROUP)

    def game(self) -> Game:
        game = self.record().game
        assert game is not None
        return game

    def hand(self, person: Person) -> set[int]:
        game = self.game()
        mask = game.hands[game.ids.index(person.id)]
        return {c for c in range(52) if mask >> c & 1}


@functools.cache
def _sessions() -> boto3.Session:
    """One boto3 session for every moto client of the run. moto drops boto3's default session
    each time a mock starts, and a new session reads botocore's endpoint and service files
    again; moto's state is its own, so each test still gets an empty DynamoDB."""
    return boto3.Session()


@contextmanager
def running_bot(
    seed: int = 7, dynamodb: Any = None, log_level: str = "INFO", flood_limit: int | None = None
) -> Iterator[Table]:
    """A bot on a fake Telegram, with the table built from template.yaml: on moto, or on the
    DynamoDB-compatible server `dynamodb` (a boto3 client) when one is given. `flood_limit`:
    the fake answers 429 beyond that many messages a minute into one chat, as Telegram does."""
    with contextlib.ExitStack() as stack:
        clock = Clock()
        tg = stack.enter_context(FakeTelegram(clock=clock, flood_limit=flood_limit))
        if dynamodb is None:
            stack.enter_context(mock_aws())
            dynamodb = _sessions().client("dynamodb", region_name="us-east-1")
        create_table(dynamodb, "menteur-test")
        settings = Settings(
            table_name="menteur-test",
            bot_token=TOKEN,
            webhook_secret=SECRET,
            api_base_url=tg.base_url,
            log_level=log_level,
        )
        timers = RecordingTimers()
        rt = Runtime(settings, store=DynamoStore(dynamodb, "menteur-test"), clock=clock)
        rt.app.timers = timers
        rt.app.rng = random.Random(seed)
        rt.app.game_ids = random.Random(seed)
        table = Table(tg, rt, clock, timers)
        try:
            yield table
        finally:
            table.http.close()
            rt.close()


# --- a game through the bot, watched -------------------------------------------------------------


def open_and_start(table: Table, players: list[Person], command: str = "/newgame") -> None:
    """/newgame (or `command`: "/newgame off" for a game without R20's clock), everyone joins,
    the opener presses Start."""
    table.say(players[0], command)
    for person in players:
        table.join(person)
    assert table.game().ids == tuple(p.id for p in players)
    table.press_button(players[0], table.group_message_with(Kind.START), Kind.START)
    assert table.game().phase is Phase.PLAY


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
