"""A whole bot in a test: the webhook handler, a moto table built from template.yaml, a fake
Telegram, an injected clock — and people who press buttons the way Telegram delivers them."""

from __future__ import annotations

import contextlib
import itertools
import json
import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import boto3
import httpx
from moto import mock_aws

from engine import Game, card_name, parse_card
from handlers import callbacks, timer, webhook
from handlers.callbacks import Kind
from handlers.config import Settings
from handlers.runtime import Runtime
from handlers.store import DynamoStore, Record
from infra.fake_telegram import FakeTelegram, StoredMessage
from infra.table import create_table

TOKEN = "123456:TEST-TOKEN"
SECRET = "s3cret-webhook-token"
GROUP = -1001234567890
T0 = 1_764_400_000.0


class Clock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Person:
    id: int
    name: str
    lang: str = "en"


@dataclass
class RecordingTimers:
    scheduled: list[tuple[int, float]] = field(default_factory=list)
    topics: list[int | None] = field(default_factory=list)  # the topic of each, in order

    def schedule(self, chat: int, at: float, now: float, topic: int | None = None) -> None:
        self.scheduled.append((chat, at))
        self.topics.append(topic)


class Table:
    """Drives one bot: deliver updates as Telegram would and look at what each chat shows."""

    def __init__(self, tg: FakeTelegram, rt: Runtime, clock: Clock, timers: RecordingTimers):
        self.tg = tg
        self.rt = rt
        self.clock = clock
        self.timers = timers
        self.update_ids = itertools.count(1000)
        self.message_ids = itertools.count(1)
        self.http = httpx.Client(base_url=tg.url)

    # --- delivering updates --------------------------------------------------------------------

    def post(self, update: dict[str, Any], secret: str | None = SECRET) -> dict[str, Any]:
        """POST an update to the webhook handler; perform its webhook reply as Telegram does."""
        headers = {} if secret is None else {"X-Telegram-Bot-Api-Secret-Token": secret}
        event = {"headers": headers, "body": json.dumps(update), "isBase64Encoded": False}
        response = webhook.handle(event, self.rt)
        body = response.get("body")
        if response["statusCode"] == 200 and body:
            reply = json.loads(body)
            method = reply.pop("method")
            self.http.post(f"/bot{TOKEN}/{method}", json=reply).raise_for_status()
        return response

    def update(self, body: dict[str, Any], update_id: int | None = None) -> dict[str, Any]:
        return {"update_id": next(self.update_ids) if update_id is None else update_id, **body}

    def say(self, person: Person, text: str, chat: int = GROUP) -> dict[str, Any]:
        return self.post(self.update({"message": self.message(person, text, chat)}))

    def message(self, person: Person, text: str, chat: int) -> dict[str, Any]:
        message: dict[str, Any] = {
            "message_id": next(self.message_ids),
            "date": int(self.clock.now),
            "chat": (
                {"id": chat, "type": "private", "first_name": person.name}
                if chat > 0
                else {"id": chat, "type": "supergroup", "title": "Friday cards"}
            ),
            "from": self.user(person),
            "text": text,
        }
        if text.startswith("/"):
            length = len(text.split(maxsplit=1)[0])
            message["entities"] = [{"type": "bot_command", "offset": 0, "length": length}]
        return message

    @staticmethod
    def user(person: Person) -> dict[str, Any]:
        return {
            "id": person.id,
            "is_bot": False,
            "first_name": person.name,
            "language_code": person.lang,
        }

    def press(self, person: Person, chat: int, message_id: int, data: str) -> dict[str, Any]:
        query = {
            "id": f"q{next(self.update_ids)}",
            "from": self.user(person),
            "chat_instance": str(chat),
            "data": data,
            "message": {
                "message_id": message_id,
                "date": int(self.clock.now),
                "chat": {"id": chat, "type": "private" if chat > 0 else "supergroup"},
                "from": {"id": 999000, "is_bot": True, "first_name": "Menteur"},
                "text": "",
            },
        }
        return self.post(self.update({"callback_query": query}))

    def tick(self) -> None:
        """The scheduled sweep, as the timer Lambda runs it."""
        timer.handle({"source": "aws.events"}, self.rt)

    # --- what chats show ------------------------------------------------------------------------

    def latest(self, chat: int) -> StoredMessage:
        return self.tg.chat_messages(chat)[-1]

    @staticmethod
    def buttons(message: StoredMessage) -> list[dict[str, Any]]:
        rows = (message.reply_markup or {}).get("inline_keyboard", [])
        return [button for row in rows for button in row]

    def button_texts(self, message: StoredMessage) -> str:
        return " | ".join(b["text"] for b in self.buttons(message))

    def button(self, message: StoredMessage, kind: Kind) -> str | None:
        """The data of the message's button of that kind, if it shows one."""
        for b in self.buttons(message):
            data = b.get("callback_data")
            if data and callbacks.decode(data).kind is kind:
                return str(data)
        return None

    def press_button(self, person: Person, message: StoredMessage, kind: Kind) -> dict[str, Any]:
        data = self.button(message, kind)
        assert data is not None, f"no {kind.name} button in {self.button_texts(message)}"
        return self.press(person, message.chat_id, message.message_id, data)

    def group_message_with(self, kind: Kind) -> StoredMessage:
        for message in reversed(self.tg.chat_messages(GROUP)):
            if self.button(message, kind):
                return message
        raise AssertionError(f"no group message with a {kind.name} button")

    def hand_message(self, person: Person) -> StoredMessage:
        """The message the bot keeps editing as the person's hand."""
        message_id = self.record().hand_msgs.get(person.id)
        assert message_id is not None, f"{person.name} has no hand message"
        message = self.tg.message(person.id, message_id)
        assert message is not None
        return message

    def card_buttons(self, message: StoredMessage) -> dict[int, dict[str, Any]]:
        """The card buttons of a hand message, by card."""
        found = {}
        for b in self.buttons(message):
            label = b["text"].removeprefix("✓")
            try:
                found[parse_card(label)] = b
            except ValueError:
                continue
        return found

    def shown_hand(self, person: Person) -> set[int]:
        return set(self.card_buttons(self.hand_message(person)))

    def select(self, person: Person, cards: set[int]) -> StoredMessage:
        """Toggle `cards` in the person's hand message, one press each, as a person would."""
        for card in sorted(cards):
            message = self.hand_message(person)
            data = self.card_buttons(message)[card]["callback_data"]
            self.press(person, person.id, message.message_id, data)
        return self.hand_message(person)

    def play(self, person: Person, cards: set[int]) -> dict[str, Any]:
        return self.press_button(person, self.select(person, cards), Kind.PLAY)

    def join(self, person: Person) -> None:
        """Join as a person does: the button, then Start in the private chat it opens."""
        self.press_button(person, self.group_message_with(Kind.JOIN), Kind.JOIN)
        url = self.tg.calls("answerCallbackQuery")[-1].params["url"]
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


def card_names(cards: set[int]) -> set[str]:
    return {card_name(c) for c in cards}


@contextmanager
def running_bot(seed: int = 7, dynamodb: Any = None, log_level: str = "INFO") -> Iterator[Table]:
    """A bot on a fake Telegram, with the table built from template.yaml: on moto, or on the
    DynamoDB-compatible server `dynamodb` (a boto3 client) when one is given."""
    with contextlib.ExitStack() as stack:
        clock = Clock()
        tg = stack.enter_context(FakeTelegram(clock=clock))
        if dynamodb is None:
            stack.enter_context(mock_aws())
            dynamodb = boto3.client("dynamodb", region_name="us-east-1")
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
        try:
            yield Table(tg, rt, clock, timers)
        finally:
            rt.close()
