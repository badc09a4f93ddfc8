"""What a bot's chats show and what people do there, whichever bot their updates reach: one
(`infra.harness.bot.Table`) or a stack of Lambda containers (`infra.harness.stack.Stack`).

`Chats` reads what the chats show, as people read them, and the store white-box for
assertions; `Driver` is what people do (press, join, seat, start, select, play), each gesture
done once here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine import Game, cards_in
from handlers import timer
from handlers.callbacks import Kind
from handlers.runtime import Runtime
from handlers.store import Record
from infra.fake_telegram import FakeTelegram, StoredMessage
from infra.harness import GROUP, Person
from infra.harness.screens import button, button_texts, card_buttons, selected, shown_cards
from infra.harness.updates import Reply, Updates, timer_event
from infra.runner import scheduled_event

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

    def answer_to(self, update: dict[str, Any]) -> dict[str, Any]:
        """The answer Telegram received to a button press (`update`), as its parameters."""
        query = update["callback_query"]["id"]
        (call,) = [
            c
            for c in self.tg.calls("answerCallbackQuery")
            if c.params.get("callback_query_id") == query
        ]
        return dict(call.params)


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
        write to them already), Start in the private chat its answer opens (the answer as
        Telegram received it, webhook reply or request)."""
        message = self.chats.group_message_with(Kind.JOIN, chat)
        data = button(message, Kind.JOIN)
        assert data is not None, f"no JOIN button in {button_texts(message)}"
        update = self.press_update(person, message, data)
        self.post(update)
        self.start_from(person, self.chats.answer_to(update).get("url"))

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

    def play_update(self, person: Person, cards: set[int], chat: int = GROUP) -> dict[str, Any]:
        """The update of the person's Play press once `cards` are selected (not delivered)."""
        message = self.select(person, cards, chat)
        data = button(message, Kind.PLAY)
        assert data is not None, f"no PLAY button in {button_texts(message)}"
        return self.press_update(person, message, data)

    def play(self, person: Person, cards: set[int], chat: int = GROUP) -> Reply:
        """Select `cards` and press Play, as a person does."""
        return self.post(self.play_update(person, cards, chat))


def sweep(rt: Runtime, now: float) -> None:
    """The scheduled rule fires: the timer function sweeps the chats that are due."""
    timer.handle(scheduled_event(now), rt)


def fire(rt: Runtime, *messages: str | dict[str, Any]) -> dict[str, Any]:
    """SQS delivers timer messages (`timer_event`) to the timer function."""
    return timer.handle(timer_event(*messages), rt)
