"""What the bot shows and sends, as plain values: screens, buttons, and requests to Telegram.

The renderer builds these from engine views; the Telegram adapter turns them into Bot API
calls. Neither side needs to know the other: tests compare these values directly.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Button:
    """An inline button: it sends `data` back (callback_data, <= 64 bytes) or opens `url`."""

    text: str
    data: str | None = None
    url: str | None = None


Keyboard = tuple[tuple[Button, ...], ...]


@dataclass(frozen=True, slots=True)
class TimeSpan:
    """A moment shown in a text: `length` UTF-16 code units from `offset` (as Telegram counts)
    read `unix` (seconds) in UTC. Telegram shows it in each reader's own time zone (a date_time
    entity); the text is what apps without date_time entities show."""

    offset: int
    length: int
    unix: int


@dataclass(frozen=True, slots=True)
class Screen:
    """A message as shown: plain text (no parse mode: names need no escaping), buttons, and the
    moments in the text that each reader's app shows in their own time (`timed`)."""

    text: str
    buttons: Keyboard = ()
    times: tuple[TimeSpan, ...] = ()


# A moment put into a text while a screen is built: its Unix time and its UTC text between
# these controls, which no name or title can hold (they are cleaned out when stored).
_OPEN, _SEP, _CLOSE = "\x1d", "\x1e", "\x1f"
_MARKED = re.compile(f"{_OPEN}(\\d+){_SEP}([^{_CLOSE}]*){_CLOSE}")


def time_of_day(at: float) -> str:
    """A time of day for a text built into a screen (`timed`): "21:04:30 UTC", the second
    `at` falls in, marked so that `timed` finds it whatever surrounds it."""
    unix = int(at)
    return f"{_OPEN}{unix}{_SEP}{time.strftime('%H:%M:%S UTC', time.gmtime(unix))}{_CLOSE}"


def timed(text: str, buttons: Keyboard = ()) -> Screen:
    """The screen of a text built with `time_of_day`: their marks removed, their places kept as
    UTF-16 offsets (what Telegram's entities count: an emoji or another character beyond the
    Basic Multilingual Plane is two)."""
    times: list[TimeSpan] = []
    parts: list[str] = []
    units = 0
    end = 0
    for found in _MARKED.finditer(text):
        before = text[end : found.start()]
        parts += [before, found[2]]
        units += _utf16(before)
        times.append(TimeSpan(units, _utf16(found[2]), int(found[1])))
        units += _utf16(found[2])
        end = found.end()
    parts.append(text[end:])
    return Screen("".join(parts), buttons, tuple(times))


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@dataclass(frozen=True, slots=True)
class TableSlot:
    """The group's table message."""


@dataclass(frozen=True, slots=True)
class HandSlot:
    """A player's hand message, in their private chat."""

    player: int


@dataclass(frozen=True, slots=True)
class MomentSlot:
    """A moment of the outbox (`handlers.outbox`), by its stamp: sent, it is marked so."""

    stamp: int


# Which of the game's messages a request sends, when what becomes of it is kept.
Slot = TableSlot | HandSlot | MomentSlot


@dataclass(frozen=True, slots=True)
class Send:
    """A new message. `remember` says which of the game's messages it is (`Slot`) when its id,
    or its delivery, must be kept; `thread` is the forum topic it goes to (None: the chat
    itself, or a forum's General topic)."""

    chat_id: int
    screen: Screen
    remember: Slot | None = None
    thread: int | None = None


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace a message's text and buttons. If the message is gone (deleted by a user), a new
    one is sent instead (into the forum topic `thread`) and remembered under `remember`."""

    chat_id: int
    message_id: int
    screen: Screen
    remember: Slot | None = None
    thread: int | None = None


@dataclass(frozen=True, slots=True)
class EditButtons:
    """Replace only a message's buttons (a card toggle; a settled message losing its buttons).

    `after` names a message sent in the same batch (its `remember` slot) that replaces this one:
    the buttons go only once the replacement is delivered, so players are never left without
    them (a new table whose send met a flood limit leaves the old table as it was).
    """

    chat_id: int
    message_id: int
    buttons: Keyboard
    after: Slot | None = None


@dataclass(frozen=True, slots=True)
class Answer:
    """The answer to a button press: a short notice (<= 200 characters) or a URL to open."""

    callback_query_id: str
    text: str | None = None
    url: str | None = None


Request = Send | Edit | EditButtons | Answer
