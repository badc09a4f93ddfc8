"""Performing the bot's requests on Telegram: sending (what it asks, `handlers.questions`).

`deliver` turns the plain request values of `handlers.screens` into Bot API calls, runs them
as fast as Telegram allows, and absorbs Telegram's failures: the game is already committed when
this runs, so a failed call is recorded in the returned `Delivery` and never raised. Every
screen is re-rendered from state on the next update, which heals whatever was lost here.
"""

from __future__ import annotations

import asyncio
import datetime as dtm
import logging
import warnings
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import telegram
from telegram import LinkPreviewOptions, MessageEntity
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    NetworkError,
    RetryAfter,
    TelegramError,
)
from telegram.request import HTTPXRequest
from telegram.warnings import PTBDeprecationWarning, PTBUserWarning

from handlers import logs, metrics
from handlers.screens import (
    Answer,
    Button,
    Edit,
    EditButtons,
    Keyboard,
    Request,
    Screen,
    Send,
    Slot,
)

__all__ = [
    "Delivery",
    "close_bot",
    "deliver",
    "make_bot",
    "perform_reply",
    "webhook_reply",
]

_LOGGER = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.telegram.org/bot"
_NO_PREVIEW = LinkPreviewOptions(is_disabled=True)
_OWN_METHOD = r"Please use 'Bot\."  # python-telegram-bot's warning on `do_api_request`

# PTB drops Telegram's "Bad Request: " prefix and capitalizes the rest, so match in lower case.
_NOT_MODIFIED = "message is not modified"
_MESSAGE_GONE = (
    "message to edit not found",
    "message can't be edited",
    "message to delete not found",
)
# A forum topic closed, or deleted (Telegram has answered both ways for a deleted one).
_TOPIC_GONE = ("topic_closed", "topic_deleted", "message thread not found")

Sleep = Callable[[float], Awaitable[None]]

# After a server error or a timeout given up, the screens are drawn again this much later.
TRANSIENT_REDRAW = 5.0


# ---------------------------------------------------------------------------------------------
# The bot.


def make_bot(
    token: str, base_url: str | None = None, *, read_timeout: float = 10.0
) -> telegram.Bot:
    """A bare `telegram.Bot`: no Application and no getMe, so a cold start costs no request.

    Its httpx client belongs to the event loop that first uses it: keep one loop per process.
    """
    request = CountingRequest(
        # deliver() sends into every player's chat at once.
        connection_pool_size=16,
        connect_timeout=5.0,
        read_timeout=read_timeout,
        write_timeout=5.0,
        pool_timeout=5.0,
    )
    # The same client serves getUpdates for the local runner: PTB adds the long-poll timeout to
    # the read timeout of each getUpdates call, so a poll never times out while it waits, and
    # close_bot() has a single client to close.
    return telegram.Bot(
        token,
        base_url=base_url or DEFAULT_BASE_URL,
        request=request,
        get_updates_request=request,
    )


class CountingRequest(HTTPXRequest):
    """The HTTP client that counts each of Telegram's answers by status (`handlers.metrics`):
    every request the bot makes passes here, a question as well as a send."""

    async def do_request(self, *args: Any, **kwargs: Any) -> tuple[int, bytes]:
        try:
            status, payload = await super().do_request(*args, **kwargs)
        except NetworkError:  # timed out, or no answer at all (an error status is returned)
            metrics.telegram(None)
            raise
        metrics.telegram(status)
        return status, payload


async def close_bot(bot: telegram.Bot) -> None:
    """Close the bot's connections (the local runner at exit; tests before closing their loop).

    `Bot.shutdown()` only undoes `Bot.initialize()`, which a bare bot never calls.
    """
    await bot.request.shutdown()


# ---------------------------------------------------------------------------------------------
# Delivering requests.


@dataclass
class Delivery:
    """What became of a batch of requests."""

    #: Send/Edit `remember` slot -> id of a message newly sent for it.
    remembered: dict[Slot, int] = field(default_factory=dict)
    #: Private chats that answered 403: the player blocked the bot or never started it.
    unreachable: set[int] = field(default_factory=set)
    #: Group chats that answered 403: the bot was removed.
    kicked: set[int] = field(default_factory=set)
    #: Old chat id -> new supergroup id.
    migrated: dict[int, int] = field(default_factory=dict)
    #: (group, forum topic) whose topic was closed or deleted: nothing more can be sent there.
    topics_gone: set[tuple[int, int]] = field(default_factory=set)
    #: Short descriptions of the requests given up.
    failed: list[str] = field(default_factory=list)
    #: Seconds after which the screens given up on a flood limit (the longest `retry_after`) or
    #: a transient failure may be drawn again; None when nothing is owed.
    owed: float | None = None
    #: Whether a private chat's screen (a hand) was among those given up.
    owed_hands: bool = False
    #: Group chat -> seconds Telegram said to wait (a 429 given up): nothing new goes in before.
    held: dict[int, float] = field(default_factory=dict)
    #: HTTP requests made to Telegram, retries included.
    requests: int = 0


async def deliver(
    bot: telegram.Bot,
    requests: Sequence[Request],
    *,
    max_wait: float = 3.0,
    sleep: Sleep = asyncio.sleep,
) -> Delivery:
    """Perform `requests`: in order within a chat, chats concurrently, answers first.

    Never raises for a Telegram error (see `Delivery`). `max_wait` bounds how long a flood
    limit (429) is waited out before the request is given up; `sleep` is injected for tests.
    """
    # `_raw` calls the library's generic method where it has its own, which it warns against
    # each time: set here, not around the concurrent calls (a `catch_warnings` held across an
    # await is undone out of order), and not at import (pytest drops what collection set).
    warnings.filterwarnings("ignore", _OWN_METHOD, PTBUserWarning)
    delivery = Delivery()
    courier = _Courier(bot, delivery, max_wait, sleep)
    answers = [r for r in requests if isinstance(r, Answer)]
    lanes: dict[int, list[Send | Edit | EditButtons]] = {}
    for request in requests:
        if not isinstance(request, Answer):
            lanes.setdefault(request.chat_id, []).append(request)
    # The answer stops the presser's spinner: it is started first, but waits for nothing.
    await asyncio.gather(
        *(courier.perform(answer) for answer in answers),
        *(courier.lane(chat, queue) for chat, queue in lanes.items()),
    )
    return delivery


@dataclass
class _Courier:
    bot: telegram.Bot
    delivery: Delivery
    max_wait: float
    sleep: Sleep

    async def lane(self, chat: int, queue: list[Send | Edit | EditButtons]) -> None:
        """One chat's requests, one after the other: a later edit must not overtake a send."""
        for request in queue:
            # A migration seen earlier in the batch redirects the rest of the chat's requests.
            chat = self.delivery.migrated.get(chat, chat)
            gone = any(c == chat for c, _ in self.delivery.topics_gone)
            if chat in self.delivery.unreachable or chat in self.delivery.kicked or gone:
                self._give_up(request, "chat unreachable")  # no point asking again
                continue
            if _waits_in_vain(request, self.delivery):
                continue  # its replacement never arrived: the old message keeps its buttons
            await self.perform(
                request if chat == request.chat_id else replace(request, chat_id=chat)
            )

    async def perform(self, request: Request) -> None:
        """One request, retried at most once, and only when a retry is known to be safe."""
        retry = await self._attempt(request, may_retry=True)
        if retry is not None:
            await self._attempt(retry, may_retry=False)

    async def _attempt(self, request: Request, *, may_retry: bool) -> Request | None:
        """One HTTP call; returns the request to try again, if any."""
        self.delivery.requests += 1
        try:
            await self._call(request)
        except TelegramError as error:
            return await self._recover(request, error, may_retry=may_retry)
        return None

    async def _call(self, request: Request) -> None:
        bot = self.bot
        match request:
            case Send(chat_id, screen, remember, thread):
                sent = await _raw(
                    bot,
                    "sendMessage",
                    chat_id=chat_id,
                    text=screen.text,
                    entities=_entities(screen),
                    link_preview_options=_NO_PREVIEW,
                    message_thread_id=thread,
                    reply_markup=_markup(screen.buttons),
                )
                if remember is not None:
                    self.delivery.remembered[remember] = int(sent["message_id"])
            case Edit(chat_id, message_id, screen, _, _):
                # Without reply_markup Telegram removes the keyboard: what a screen with no
                # buttons means.
                await _raw(
                    bot,
                    "editMessageText",
                    chat_id=chat_id,
                    message_id=message_id,
                    text=screen.text,
                    entities=_entities(screen),
                    link_preview_options=_NO_PREVIEW,
                    reply_markup=_markup(screen.buttons),
                )
            case EditButtons(chat_id, message_id, buttons, _):
                await _raw(
                    bot,
                    "editMessageReplyMarkup",
                    chat_id=chat_id,
                    message_id=message_id,
                    reply_markup=_markup(buttons),
                )
            case Answer(callback_query_id, text, url):
                await bot.answer_callback_query(callback_query_id, text=text, url=url)

    async def _recover(
        self, request: Request, error: TelegramError, *, may_retry: bool
    ) -> Request | None:
        """After a failed call: the request to try again, or None when it is settled."""
        description = error.message.lower()
        chat = None if isinstance(request, Answer) else request.chat_id
        retry: Request | None = None
        match error:
            case BadRequest() if _NOT_MODIFIED in description:
                return None  # the message already reads this way
            case BadRequest() if (
                isinstance(request, Send)
                and request.thread is not None
                and any(gone in description for gone in _TOPIC_GONE)
            ):
                self.delivery.topics_gone.add((request.chat_id, request.thread))
            case BadRequest() if isinstance(request, Edit | EditButtons) and any(
                gone in description for gone in _MESSAGE_GONE
            ):
                # Someone deleted the message: a remembered screen (the table, a hand) is sent
                # anew, so the game stays playable; anything else is not worth a new message.
                if isinstance(request, Edit) and request.remember is not None:
                    anew = Send(request.chat_id, request.screen, request.remember, request.thread)
                    await self.perform(anew)
                    return None
            case Forbidden() if chat is not None:
                (self.delivery.unreachable if chat > 0 else self.delivery.kicked).add(chat)
            case RetryAfter():
                seconds = _seconds(error)
                if may_retry and seconds <= self.max_wait:
                    metrics.add("TelegramWait", seconds)
                    await self.sleep(seconds)
                    retry = request
                else:
                    self._owe(request, seconds)
                    if chat is not None and chat < 0:
                        self.delivery.held[chat] = max(self.delivery.held.get(chat, 0.0), seconds)
            case ChatMigrated() if not isinstance(request, Answer):
                self.delivery.migrated[request.chat_id] = error.new_chat_id
                retry = replace(request, chat_id=error.new_chat_id)
            case BadRequest():
                pass  # a 400 is a NetworkError to PTB, but asking again changes nothing
            case NetworkError() if not isinstance(request, Send):
                # Timeouts and 5xx: edits and answers are idempotent, so ask again. A send may
                # have been delivered anyway, and a duplicate group message is worse than a
                # missing one (the table is drawn again).
                retry = request
                if not may_retry:
                    self._owe(request, TRANSIENT_REDRAW)
            case NetworkError():
                self._owe(request, TRANSIENT_REDRAW)
        if retry is not None and may_retry:
            return retry
        self._give_up(request, error.message)
        return None

    def _owe(self, request: Request, seconds: float) -> None:
        """A screen was given up for a while: the caller draws the screens again after it."""
        if not isinstance(request, Answer):
            self.delivery.owed = max(self.delivery.owed or 0.0, seconds)
            self.delivery.owed_hands |= getattr(request, "chat_id", 0) > 0

    def _give_up(self, request: Request, why: str) -> None:
        what = f"{_method(request)} {logs.chat(getattr(request, 'chat_id', None)) or ''}".rstrip()
        self.delivery.failed.append(f"{what}: {why}")
        _LOGGER.warning("Telegram request given up: %s: %s", what, why)


def _waits_in_vain(request: Request, delivery: Delivery) -> bool:
    """Whether `request` hands its buttons over to a message that was not delivered."""
    return (
        isinstance(request, EditButtons)
        and request.after is not None
        and request.after not in delivery.remembered
    )


def _method(request: Request) -> str:
    match request:
        case Send():
            return "sendMessage"
        case Edit():
            return "editMessageText"
        case EditButtons():
            return "editMessageReplyMarkup"
        case Answer():
            return "answerCallbackQuery"


def _seconds(error: RetryAfter) -> float:
    # An int in PTB 22 unless PTB_TIMEDELTA opts in to v23's timedelta; the int form warns.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value = error.retry_after
    return value.total_seconds() if isinstance(value, dtm.timedelta) else float(value)


# A time of day with seconds ("22:45:00"), in the reader's own time zone and way of writing it.
TIME_FORMAT = "T"


def _entities(screen: Screen) -> list[MessageEntity] | None:
    """The screen's moments as date_time entities: each reader's app shows them in their own
    time zone; an app that knows none shows the text, which says UTC. None when there are
    none: the text stays plain, with no parse mode."""
    if not screen.times:
        return None
    return [
        MessageEntity(
            MessageEntity.DATE_TIME,
            span.offset,
            span.length,
            unix_time=dtm.datetime.fromtimestamp(span.unix, dtm.UTC),
            date_time_format=TIME_FORMAT,
        )
        for span in screen.times
    ]


def _markup(buttons: Keyboard) -> dict[str, Any] | None:
    """The keyboard as the `reply_markup` parameter, in the JSON form Telegram reads; None for
    no keyboard.

    The same JSON as an `InlineKeyboardMarkup` of `InlineKeyboardButton`s, without building
    those objects for python-telegram-bot to turn back into dictionaries: a hand of up to 51
    buttons is redrawn on every move."""
    if not buttons:
        return None
    return {"inline_keyboard": [[_button(b) for b in row] for row in buttons]}


async def _raw(bot: telegram.Bot, method: str, **params: Any) -> Any:
    """A Bot API call whose answer is kept as Telegram's JSON, not made into python-telegram-bot's
    objects: a sent message is read for its id alone, an edit's answer not at all, and parsing
    a message with a hand's buttons costs more than the rest of sending it. Telegram's errors
    are raised as for the library's own methods."""
    given = {key: value for key, value in params.items() if value is not None}
    return await bot.do_api_request(method, given)


def _button(button: Button) -> dict[str, str]:
    if button.url is not None:
        return {"text": button.text, "url": button.url}
    if button.data is not None:
        return {"text": button.text, "callback_data": button.data}
    return {"text": button.text}


# ---------------------------------------------------------------------------------------------
# The webhook reply: one method performed by Telegram itself, without a request of ours.


def webhook_reply(answer: Answer) -> dict[str, object]:
    """The body that answers a button press as the webhook's HTTP response."""
    body: dict[str, object] = {
        "method": "answerCallbackQuery",
        "callback_query_id": answer.callback_query_id,
    }
    if answer.text is not None:
        body["text"] = answer.text
    if answer.url is not None:
        body["url"] = answer.url
    return body


async def perform_reply(bot: telegram.Bot, body: dict[str, object]) -> None:
    """Perform a webhook reply (the answerCallbackQuery of `webhook_reply`, the only one the
    bot makes) through the bot: the long-polling runner has no webhook response to carry it.

    Like `deliver`, it logs a Telegram error instead of raising it (a stale button press
    answers "query is too old", which changes nothing).
    """
    params: dict[str, Any] = {key: value for key, value in body.items() if key != "method"}
    if body.get("method") != "answerCallbackQuery":
        raise ValueError(f"not a webhook reply of this bot: {body.get('method')!r}")
    try:
        await bot.answer_callback_query(**params)
    except TelegramError as error:
        _LOGGER.warning("Telegram reply answerCallbackQuery failed: %s", error.message)
