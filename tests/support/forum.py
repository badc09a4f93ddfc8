"""People in a forum supergroup: they write and press in its topics, each topic with its game."""

from __future__ import annotations

from typing import Any

from engine import Phase, cards_in
from handlers import callbacks
from handlers.callbacks import Kind
from handlers.store import Record
from infra.fake_telegram import StoredMessage
from infra.harness import GROUP, Person
from infra.harness.bot import Table
from infra.harness.screens import button, button_texts, buttons
from infra.harness.updates import Reply

ANN, BOB, CHLOE = Person(101, "Ann"), Person(102, "Bob"), Person(103, "Chloé")


class Forum:
    """People in a forum supergroup, writing in its topics (None: the General topic)."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.tg = table.tg

    def post(self, update: dict[str, Any]) -> Reply:
        return self.table.post(update)

    def say(self, person: Person, text: str, topic: int | None) -> Reply:
        update = self.table.updates.message(person, text, GROUP, thread=topic)
        update["message"]["chat"]["is_forum"] = True  # the General topic's messages too
        return self.post(update)

    def press(self, person: Person, message: StoredMessage, data: str) -> Reply:
        update = self.table.updates.press(
            person, message.chat_id, message.message_id, data, shown=message, thread=message.thread
        )
        if message.chat_id < 0:
            update["callback_query"]["message"]["chat"]["is_forum"] = True
        return self.post(update)

    def press_kind(self, person: Person, message: StoredMessage, kind: Kind) -> Reply:
        data = button(message, kind)
        assert data is not None, f"no {kind.name} in {button_texts(message)}"
        return self.press(person, message, data)

    def record(self, topic: int | None) -> Record:
        return self.table.rt.store.load(GROUP, topic)

    def table_message(self, topic: int | None) -> StoredMessage:
        record = self.record(topic)
        assert record.table_msg is not None
        message = self.tg.message(GROUP, record.table_msg)
        assert message is not None
        return message

    def join(self, person: Person, topic: int | None) -> None:
        self.press_kind(person, self.table_message(topic), Kind.JOIN)
        self.table.start_from_link(person)  # unless the bot could write to them already

    def open(self, topic: int | None, people: list[Person]) -> None:
        self.say(people[0], "/newgame", topic)
        for person in people:
            self.join(person, topic)
        self.press_kind(people[0], self.table_message(topic), Kind.START)
        game = self.record(topic).game
        assert game is not None and game.phase is Phase.PLAY

    def hand(self, person: Person, topic: int | None) -> StoredMessage:
        message_id = self.record(topic).hand_msgs[person.id]
        message = self.tg.message(person.id, message_id)
        assert message is not None
        return message

    def play_one(self, topic: int | None) -> Person:
        """The awaited player plays their lowest card from their private hand."""
        game = self.record(topic).game
        assert game is not None and game.awaited is not None
        person = next(p for p in (ANN, BOB, CHLOE) if p.id == game.awaited)
        card = min(cards_in(game.hands[game.ids.index(person.id)]))
        hand = self.hand(person, topic)
        toggle = next(
            b["callback_data"]
            for b in buttons(hand)
            if b.get("callback_data") and callbacks.decode(b["callback_data"]).cards == 1 << card
        )
        self.press(person, hand, toggle)
        self.press_kind(person, self.hand(person, topic), Kind.PLAY)
        return person

    def group_sends(self) -> list[dict[str, Any]]:
        return [c.params for c in self.tg.calls("sendMessage", chat_id=GROUP)]
