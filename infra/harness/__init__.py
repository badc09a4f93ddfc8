"""The bot on this machine, driven as people use Telegram: what the tests and the benchmarks
build the same way (the bot's settings, people, clocks) and the one driver both use.

    infra.harness            the token, the secret, the group, the start of time; Person and
                             people(); Clock; RecordingTimers
    infra.harness.updates    Telegram updates (Updates), the Lambda events around them (event,
                             timer_event) and the webhook's reply, decoded (Reply)
    infra.harness.screens    what the bot drew: buttons, card toggles, cards named in a text
    infra.harness.bot        what a bot's chats show (Chats), what people do (Driver), and one
                             bot on moto or dynalite driven that way (Table)
    infra.harness.stack      dynalite and many Lambda containers, for races, scale and load
    infra.harness.stalling   games in which people stop answering, on a simulated clock (R20)
    infra.harness.memory     the store's fake: DynamoDB's conditional semantics in memory
    infra.harness.items      a chat's stored item, kept as the bot keeps it, and its size

What only the tests use is in `tests.support` (hostile inputs, forum topics, games dealt by
hand). The update JSON itself is spelled once, by the fake Bot API (`infra.fake_telegram`),
which the offline table uses too; the Lambda events once, by the local runner (`infra.runner`);
the secret header's name once, by the webhook handler. Fixtures are in `tests/conftest.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

TOKEN = "123456:TEST-TOKEN"
SECRET = "s3cret-webhook-token"
GROUP = -1001234567890  # a supergroup's id
GROUP_TITLE = "Friday cards"
OTHER_GROUP = -1009876543210
T0 = 1_764_400_000.0  # when every test's clock starts: 2025-11-29 07:06:40 UTC

NAMES = ("Ann", "Bob", "Chloé", "Driss", "Emma", "Farid", "Gus", "Hana")
# One name stays in Latin letters at an Arabic table: both scripts on one line is what the
# screens' direction marks are for.
ARABIC_NAMES = ("أمل", "Bob", "خالد", "دنيا", "إيمان", "فريد", "غسان", "هناء")


@dataclass(frozen=True)
class Person:
    """Someone on Telegram: a user id (also their private chat's), a name, their app's language."""

    id: int
    name: str
    lang: str = "en"


def people(n: int = 3, lang: str = "en", first_id: int = 101) -> list[Person]:
    """`n` people (at most 8 names, then they repeat) with ids from `first_id`."""
    names = ARABIC_NAMES if lang == "ar" else NAMES
    return [Person(first_id + i, names[i % len(names)], lang) for i in range(n)]


def by_id(players: list[Person], player: int | None) -> Person:
    return next(p for p in players if p.id == player)


class Clock:
    """The time the code under test sees: it moves only when a test moves it."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class RecordingTimers:
    """In place of the SQS timers: records each (chat, moment) the bot asks to be woken at."""

    scheduled: list[tuple[int, float]] = field(default_factory=list)
    topics: list[int | None] = field(default_factory=list)  # the topic of each, in order

    def schedule(self, chat: int, at: float, now: float, topic: int | None = None) -> None:
        self.scheduled.append((chat, at))
        self.topics.append(topic)


Run = Callable[[Coroutine[Any, Any, Any]], Any]  # the `run` fixture: a coroutine, run to its end
