"""The values that travel between the bot's layers: what an act decided, what an update did.

An act (`handlers.acts`) reads a chat's record and returns a `Decision`; the transaction
(`handlers.service`) writes and sends what it says and returns an `Outcome`, which the entry
points log as one JSON line. Results and reasons are enums, so callers branch on values, not on
text.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

from engine import Code, Event
from handlers import logs
from handlers.screens import Request
from handlers.store import Record

if TYPE_CHECKING:
    from handlers.questions import Questions


class Result(StrEnum):
    """What became of an update or a timer."""

    APPLIED = "applied"  # a move or a setting was written
    REFUSED = "refused"  # answered with a reason; nothing written
    DUPLICATE = "duplicate"  # Telegram sent an update already applied: screens redrawn only
    RESENT = "resent"  # a screen sent again (/table, /hand, a redraw), nothing written
    UNCHANGED = "unchanged"  # asked for what already is (the current language again)
    NOTHING_DUE = "nothing_due"  # a timer with nothing to do (stale, early, or no game)
    REMINDED = "reminded"  # a timer sent a player's reminder (R20): the game is unchanged
    IGNORED = "ignored"  # not for this bot, or not an update it reads


class Why(StrEnum):
    """The bot's own reasons, beside the engine's `Code`s, for a refusal or an ignored update."""

    NO_GAME = "no_game"
    OLD_GAME = "old_game"
    GAME_RUNNING = "game_running"
    TOO_OFTEN = "too_often"  # /newgame again and again
    BAD_LEVEL = "bad_level"  # /addbot names no level a computer player has
    NOT_PLAYING = "not_playing"
    NOT_MEMBER = "not_member"  # seating asked by someone who is not in the group
    ON_BEHALF_OF_CHAT = "on_behalf_of_chat"  # a command sent as a channel
    MEMBER_UNKNOWN = "member_unknown"  # Telegram could not say whether they are
    BAD_BUTTON = "bad_button"
    MALFORMED = "malformed"
    KIND = "kind"
    NOT_A_COMMAND = "not_a_command"
    OTHER_BOT = "other_bot"
    UNKNOWN_COMMAND = "unknown_command"


Reason = Code | Why


class Via(StrEnum):
    """How the work came: a button, a command, the timer, a chat migration, or not at all."""

    PRESS = "press"
    COMMAND = "command"
    TIMER = "timer"
    MIGRATION = "migration"
    CLOSED = "closed"  # the group, or the game's topic, no longer takes the bot's messages
    IGNORED = "ignored"


@dataclass
class Decision:
    """What one attempt at an action decided, before anything is written or sent."""

    write: bool = False
    new_game: bool = False
    events: list[Event] = field(default_factory=list)
    refusal: str | None = None  # the answer to a refused button, in the presser's language
    answer: str | None = None  # the answer to a button that did what it says, if it has one
    link: str | None = None  # a t.me link the button's answer opens (Join, Play again)
    result: Result = Result.APPLIED
    reason: Reason | None = None
    extra: list[Request] = field(default_factory=list)  # sent along with the screens
    reachable: set[int] = field(default_factory=set)  # players whose private chat works again
    table_again: bool = False  # /table: a new table message at the bottom
    all_hands: bool = False  # every hand drawn again, changed or not
    owed: bool = False  # a redraw Telegram made wait: what it may have left stale is drawn again
    hands: set[int] | None = None  # a retried update: the hands to draw again (None: all)
    chat_closed: bool = False  # the group (or its topic) no longer takes the bot's messages
    redraw: bool = True  # False: a write of the bot's own (a reminder sent) that no screen shows


class Act(Protocol):
    """What a command or button means: given the chat's record, as read, and the time."""

    def decide(self, record: Record, now: float) -> Decision: ...


class Recordless:
    """The mark of an act that needs no record (a card toggle, a button's answer, a fixed
    reply): the transaction reads and writes nothing for it, and decides it on a blank one."""

    __slots__ = ()


class Asking:
    """The mark of an act that may need Telegram's word before it decides (where the presser
    stands in the group, whether the bot may write to them in private): the transaction calls
    `ask` on each record it reads, then decides the act `ask` returned. An act asks only what
    the record as read leaves open, so a press the record alone refuses costs no request."""

    __slots__ = ()

    async def ask(self, record: Record, now: float, questions: Questions) -> Act:
        raise NotImplementedError


@dataclass
class Outcome:
    """What one update did: the structured log line, and an optional webhook reply."""

    via: Via
    result: Result = Result.IGNORED
    reason: Reason | None = None
    chat: int | None = None
    action: str = ""
    topic: int | None = None
    conflicts: int = 0
    telegram_requests: int = 0
    webhook_reply: dict[str, Any] | None = None  # the button's answer, on the HTTP response
    next_look: float | None = None  # when the chat's timer looks next, after this update

    @property
    def label(self) -> str:
        """The outcome as logged: "applied", "refused:no_bullets", "ignored:kind"."""
        return self.result.value if self.reason is None else f"{self.result}:{self.reason}"

    def log(self, update_id: int | None, started: float) -> dict[str, Any]:
        return {
            "update": update_id,
            "chat": logs.chat(self.chat),
            **({} if self.topic is None else {"topic": self.topic}),
            "kind": self.via.value,
            "action": self.action,
            "outcome": self.label,
            "conflicts": self.conflicts,
            "telegram_requests": self.telegram_requests,
            "latency_ms": round((time.perf_counter() - started) * 1000, 1),
        }


def ignored(why: Why, chat: int | None = None) -> Outcome:
    return Outcome(Via.IGNORED, Result.IGNORED, why, chat=chat)
