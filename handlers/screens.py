"""What the bot shows and sends, as plain values: screens, buttons, and requests to Telegram.

The renderer builds these from engine views; the Telegram adapter turns them into Bot API
calls. Neither side needs to know the other: tests compare these values directly.
"""

from __future__ import annotations

from engine.records import record


@record
class Button:
    """An inline button: it sends `data` back (callback_data, <= 64 bytes) or opens `url`."""

    text: str
    data: str | None = None
    url: str | None = None


Keyboard = tuple[tuple[Button, ...], ...]


@record
class Screen:
    """A message as shown: plain text (no parse mode: names need no escaping) and buttons."""

    text: str
    buttons: Keyboard = ()


@record
class Send:
    """A new message. `remember` names it ("table", "final", "hand:<user>") when its id must
    be kept to edit it later; `thread` is the forum topic it goes to (None: the chat itself, or
    a forum's General topic)."""

    chat_id: int
    screen: Screen
    remember: str | None = None
    thread: int | None = None


@record
class Edit:
    """Replace a message's text and buttons. If the message is gone (deleted by a user), a new
    one is sent instead (into the forum topic `thread`) and remembered under `remember`."""

    chat_id: int
    message_id: int
    screen: Screen
    remember: str | None = None
    thread: int | None = None


@record
class EditButtons:
    """Replace only a message's buttons (a card toggle; a settled message losing its buttons).

    `after` names a message sent in the same batch (its `remember` key) that replaces this one:
    the buttons go only once the replacement is delivered, so players are never left without
    them (a new table whose send met a flood limit leaves the old table as it was).
    """

    chat_id: int
    message_id: int
    buttons: Keyboard
    after: str | None = None


@record
class Answer:
    """The answer to a button press: a short notice (<= 200 characters) or a URL to open."""

    callback_query_id: str
    text: str | None = None
    url: str | None = None


Request = Send | Edit | EditButtons | Answer
