"""A fake Telegram Bot API server, for tests and for playing the bot offline.

Point python-telegram-bot at it with ``telegram.Bot(token, base_url=tg.base_url)``: the fake
answers the handful of methods the bot uses the way Telegram does (same JSON envelope, same
error codes and descriptions), records every call, and fails on demand, deterministically.

    with FakeTelegram() as tg:
        tg.fail_next("sendMessage", chat_id=-100, error=too_many_requests(3))
        ...  # run the code under test against tg.base_url
        assert tg.messages_to(-100) == ["..."]

Like Telegram, it finds the commands, mentions, hashtags, cashtags, links and e-mail addresses
of every text sent or edited without entities of its own (`infra.entities`) and returns them as
the message's `entities`.

It speaks HTTP/1.1 with keep-alive on purpose: python-telegram-bot's httpx client reuses its
connections, and bugs such as an httpx client outliving its event loop only show up when a
connection is actually reused. Standard library only, so the offline runner needs nothing else.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import json
import math
import re
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qsl, urlsplit

from infra.entities import find_entities

__all__ = [
    "BLOCKED_BY_USER",
    "BOT_ID",
    "BOT_USERNAME",
    "CANT_INITIATE",
    "CHANNEL_BOT",
    "ENTITY_TYPES",
    "GENERAL_TOPIC",
    "GROUP_ANONYMOUS_BOT",
    "MESSAGE_NOT_MODIFIED",
    "MESSAGE_TO_EDIT_NOT_FOUND",
    "THREAD_NOT_FOUND",
    "TOPIC_CLOSED",
    "Call",
    "FakeTelegram",
    "Fault",
    "StoredMessage",
    "api_error",
    "bad_gateway",
    "bad_request",
    "blocked_by_user",
    "callback_update",
    "cant_initiate",
    "chat_json",
    "chat_migrated",
    "covered",
    "delay",
    "message_update",
    "my_chat_member_update",
    "server_error",
    "together",
    "too_many_requests",
    "topic_closed_update",
    "user_json",
]

BOT_ID = 999000
# The users Telegram writes as when a message is sent as a chat.
GROUP_ANONYMOUS_BOT: dict[str, Any] = {
    "id": 1087968824,
    "is_bot": True,
    "first_name": "Group",
    "username": "GroupAnonymousBot",
}
CHANNEL_BOT: dict[str, Any] = {
    "id": 136817688,
    "is_bot": True,
    "first_name": "Channel",
    "username": "Channel_Bot",
}
BOT_USERNAME = "menteur_test_bot"
BOT_FIRST_NAME = "Menteur Test"

# Telegram's own wording: handlers match on these strings, so they must be exact.
MESSAGE_NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup "
    "are exactly the same as a current content and reply markup of the message"
)
MESSAGE_TO_EDIT_NOT_FOUND = "Bad Request: message to edit not found"
# Forum topics: a closed one refuses messages, a deleted one (or the General topic named by id,
# or any id that is not a topic) is not found.
TOPIC_CLOSED = "Bad Request: TOPIC_CLOSED"
THREAD_NOT_FOUND = "Bad Request: message thread not found"
GENERAL_TOPIC = 1
BLOCKED_BY_USER = "Forbidden: bot was blocked by the user"
CANT_INITIATE = "Forbidden: bot can't initiate conversation with a user"
WEBHOOK_CONFLICT = (
    "Conflict: can't use getUpdates method while webhook is active; "
    "use deleteWebhook to delete the webhook first"
)

_BOT_USER: dict[str, Any] = {
    "id": BOT_ID,
    "is_bot": True,
    "first_name": BOT_FIRST_NAME,
    "username": BOT_USERNAME,
}
_GET_ME: dict[str, Any] = {
    **_BOT_USER,
    "can_join_groups": True,
    "can_read_all_group_messages": False,
    "supports_inline_queries": False,
}
_ADMIN_RIGHTS: dict[str, bool] = {
    "can_be_edited": False,
    "is_anonymous": False,
    "can_manage_chat": True,
    "can_delete_messages": True,
    "can_manage_video_chats": True,
    "can_restrict_members": True,
    "can_promote_members": False,
    "can_change_info": True,
    "can_invite_users": True,
    "can_post_stories": False,
    "can_edit_stories": False,
    "can_delete_stories": False,
    "can_pin_messages": True,
}

# The permissions Telegram lists for a restricted member.
_RESTRICTED_RIGHTS = (
    "can_send_messages",
    "can_send_audios",
    "can_send_documents",
    "can_send_photos",
    "can_send_videos",
    "can_send_video_notes",
    "can_send_voice_notes",
    "can_send_polls",
    "can_send_other_messages",
    "can_add_web_page_previews",
    "can_change_info",
    "can_invite_users",
    "can_pin_messages",
    "can_manage_topics",
    "can_edit_tag",
    "can_react_to_messages",
)
# What Telegram says of a restricted member: every permission, here all withheld but reading.
_RESTRICTIONS: dict[str, Any] = {**dict.fromkeys(_RESTRICTED_RIGHTS, False), "until_date": 0}

# Form bodies carry every value as a string (python-telegram-bot JSON-encodes everything but
# strings). Telegram types each field by its declared type; the fake types everything that
# parses as JSON except these string fields of the methods it answers, which may look like
# numbers.
_STRING_KEYS = frozenset(
    {
        "text",
        "parse_mode",
        "inline_message_id",
        "business_connection_id",
        "message_effect_id",
        "callback_query_id",
        "url",
        "secret_token",
        "ip_address",
        "language_code",
    }
)


# ---------------------------------------------------------------------------------------------
# Faults: how a call fails (or is slowed down) instead of being answered normally.


@dataclass(frozen=True)
class Fault:
    """A canned answer that replaces the normal one; ``status is None`` means answer normally.

    ``delay`` seconds pass before the answer is written. The call has already taken effect by
    then (a delayed sendMessage is stored), as with a real Telegram timeout: the message may
    well have been delivered although the client gave up waiting. With a ``gate`` (see
    `together`), the answer waits until the gate's other calls have arrived too.
    """

    status: int | None = None
    body: bytes = b""
    content_type: str = "application/json"
    delay: float = 0.0
    gate: threading.Barrier | None = field(default=None, compare=False)

    def after(self, seconds: float) -> Fault:
        """The same fault, answered only after ``seconds``."""
        return replace(self, delay=seconds)


def api_error(code: int, description: str, parameters: dict[str, Any] | None = None) -> Fault:
    """Any error in Telegram's JSON envelope."""
    payload: dict[str, Any] = {"ok": False, "error_code": code, "description": description}
    if parameters:
        payload["parameters"] = parameters
    return Fault(status=code, body=json.dumps(payload).encode())


def bad_request(description: str) -> Fault:
    """400; ``description`` gets Telegram's "Bad Request: " prefix unless it has it."""
    if not description.startswith("Bad Request"):
        description = f"Bad Request: {description}"
    return api_error(400, description)


def blocked_by_user() -> Fault:
    """403 for a user who blocked the bot."""
    return api_error(403, BLOCKED_BY_USER)


def cant_initiate() -> Fault:
    """403 for a user who never opened a private chat with the bot."""
    return api_error(403, CANT_INITIATE)


def too_many_requests(retry_after: int = 3) -> Fault:
    """429 flood control, with ``parameters.retry_after`` as Telegram sends it."""
    return api_error(
        429,
        f"Too Many Requests: retry after {retry_after}",
        {"retry_after": retry_after},
    )


def chat_migrated(new_chat_id: int) -> Fault:
    """400 for a group that became a supergroup; python-telegram-bot raises ChatMigrated."""
    return api_error(
        400,
        "Bad Request: group chat was upgraded to a supergroup chat",
        {"migrate_to_chat_id": new_chat_id},
    )


def server_error(status: int = 500) -> Fault:
    """A 5xx whose body is a proxy's HTML page, not JSON, as Telegram's front end sends."""
    phrase = HTTPStatus(status).phrase
    body = (
        f"<html>\r\n<head><title>{status} {phrase}</title></head>\r\n<body>\r\n"
        f"<center><h1>{status} {phrase}</h1></center>\r\n<hr><center>nginx</center>\r\n"
        "</body>\r\n</html>\r\n"
    ).encode()
    return Fault(status=status, body=body, content_type="text/html")


def bad_gateway() -> Fault:
    """502 with an HTML body."""
    return server_error(502)


def delay(seconds: float) -> Fault:
    """Answer normally, but only after ``seconds`` (to make the client time out)."""
    return Fault(delay=seconds)


GATE_SECONDS = 10.0  # how long a gate waits for its other calls before it breaks


def together(calls: int) -> Fault:
    """Answer normally, but only once ``calls`` requests given this same fault are all in
    flight: it proves a client sends them concurrently, without timing anything. Requests
    sent one after another never meet; the gate breaks and each is answered 500."""
    return Fault(gate=threading.Barrier(calls, timeout=GATE_SECONDS))


# ---------------------------------------------------------------------------------------------
# Records.


@dataclass(frozen=True)
class Call:
    """One request the fake received: ``at`` is from the fake's clock, on arrival."""

    method: str
    params: dict[str, Any]
    at: float
    token: str = ""
    status: int = 200

    @property
    def chat_id(self) -> int | str | None:
        return _chat_key(self.params.get("chat_id"))

    @property
    def ok(self) -> bool:
        return self.status == 200


@dataclass
class StoredMessage:
    """A message the bot sent, as it currently reads in its chat."""

    chat_id: int
    message_id: int
    date: int
    text: str | None = None
    reply_markup: dict[str, Any] | None = None
    edit_date: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    thread: int | None = None  # the forum topic it was sent to
    own_entities: list[dict[str, Any]] = field(default_factory=list)  # the sender's, as given


class _ApiError(Exception):
    def __init__(self, code: int, description: str) -> None:
        super().__init__(description)
        self.code = code
        self.description = description


@dataclass
class _Rule:
    method: str | None
    chat_id: int | str | None
    fault: Fault
    once: bool


def _chat_key(value: Any) -> int | str | None:
    """Chat ids arrive as ints (JSON) or strings (forms); "@name" stays a string."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    text = str(value)
    with contextlib.suppress(ValueError):
        return int(text)
    return text


def chat_json(chat_id: int, name: str | None = None) -> dict[str, Any]:
    """A chat as Telegram describes it. Telegram's convention: users' private chats have
    positive ids (and the user's name), groups negative ones (and a title)."""
    if chat_id > 0:
        return {"id": chat_id, "type": "private", "first_name": name or f"User {chat_id}"}
    return {"id": chat_id, "type": "supergroup", "title": name or f"Group {chat_id}"}


def user_json(
    user_id: int, first_name: str | None = None, language_code: str | None = None
) -> dict[str, Any]:
    """A user as Telegram describes one; `language_code` is their Telegram app's language."""
    if user_id == BOT_ID:
        return dict(_BOT_USER)
    user: dict[str, Any] = {
        "id": user_id,
        "is_bot": False,
        "first_name": first_name or f"User {user_id}",
    }
    if language_code is not None:
        user["language_code"] = language_code
    return user


# ---------------------------------------------------------------------------------------------
# Update builders: what Telegram would deliver to the bot (webhook body or getUpdates item).
# The one place that spells an update: the tests, the benchmarks and the offline table use them.


def _in_topic(message: dict[str, Any], thread: int | None) -> dict[str, Any]:
    """A message in a forum topic carries the topic's id and says it is a topic message; one in
    the General topic carries neither (its chat still says it is a forum)."""
    if thread is not None:
        message["chat"]["is_forum"] = True
        message["message_thread_id"] = thread
        message["is_topic_message"] = True
    return message


def message_update(
    chat_id: int,
    user_id: int,
    text: str,
    *,
    update_id: int | None = None,
    message_id: int = 1,
    first_name: str | None = None,
    language_code: str | None = None,
    chat_title: str | None = None,
    date: float | None = None,
    sender_chat: int | None = None,
    thread: int | None = None,
) -> dict[str, Any]:
    """A text message from a user; "/cmd ..." gets the bot_command entity CommandHandler needs.

    A private chat bears its user's name; a group, `chat_title`. ``date`` is a Unix time
    (the wall clock when not given). `thread`: sent in that forum topic.

    With `sender_chat`, the message is written as that chat, and `from` is the user Telegram
    puts there: the group itself for an anonymous administrator (GroupAnonymousBot), or a
    channel (Channel_Bot); `user_id` is then unused.
    """
    message: dict[str, Any] = {
        "message_id": message_id,
        "date": int(time.time() if date is None else date),
        "chat": chat_json(chat_id, first_name if chat_id == user_id else chat_title),
        "from": user_json(user_id, first_name, language_code),
        "text": text,
    }
    if sender_chat is not None:
        anonymous = sender_chat == chat_id
        message["sender_chat"] = (
            chat_json(sender_chat, chat_title)
            if anonymous
            else {"id": sender_chat, "type": "channel", "title": f"Channel {sender_chat}"}
        )
        message["from"] = dict(GROUP_ANONYMOUS_BOT if anonymous else CHANNEL_BOT)
    if text.startswith("/"):
        command = text.split(maxsplit=1)[0]
        message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(command)}]
    _in_topic(message, thread)
    update: dict[str, Any] = {"message": message}
    if update_id is not None:
        update["update_id"] = update_id
    return update


def callback_update(
    chat_id: int,
    user_id: int,
    message_id: int,
    data: str,
    *,
    update_id: int | None = None,
    callback_id: str | None = None,
    first_name: str | None = None,
    language_code: str | None = None,
    chat_title: str | None = None,
    date: float | None = None,
    shown: StoredMessage | None = None,
    thread: int | None = None,
) -> dict[str, Any]:
    """A press on an inline button of the bot's message ``message_id`` in ``chat_id`` (in the
    forum topic ``thread``, if given).

    The query carries that message as Telegram does: as it reads now when ``shown`` is given
    (its text and buttons), else with an empty text, dated ``date``.
    """
    chat_name = first_name if chat_id == user_id else chat_title
    if shown is None:
        shown = StoredMessage(
            chat_id, message_id, int(time.time() if date is None else date), text=""
        )
    update: dict[str, Any] = {
        "callback_query": {
            "id": callback_id or f"cb-{chat_id}-{message_id}-{user_id}-{time.monotonic_ns()}",
            "from": user_json(user_id, first_name, language_code),
            "chat_instance": str(chat_id),
            "data": data,
            "message": _in_topic(_message_json(shown, chat_name), thread),
        }
    }
    if update_id is not None:
        update["update_id"] = update_id
    return update


def topic_closed_update(
    chat_id: int,
    user_id: int,
    thread: int,
    *,
    update_id: int | None = None,
    message_id: int = 1,
    date: float | None = None,
) -> dict[str, Any]:
    """The service message Telegram posts in a forum topic that was just closed."""
    message = {
        "message_id": message_id,
        "date": int(time.time() if date is None else date),
        "chat": chat_json(chat_id),
        "from": user_json(user_id),
        "forum_topic_closed": {},
    }
    update: dict[str, Any] = {"message": _in_topic(message, thread)}
    if update_id is not None:
        update["update_id"] = update_id
    return update


def my_chat_member_update(
    chat_id: int,
    status: str,
    *,
    by: int = 1,
    old_status: str = "member",
    update_id: int | None = None,
    rights: dict[str, bool] | None = None,
) -> dict[str, Any]:
    """The bot's own membership changed in a chat: ``status`` is "member", "administrator",
    "restricted" (with ``rights`` such as ``can_send_messages=False, is_member=True``), "left"
    (removed, or the group deleted) or "kicked" (banned); in a private chat, "kicked" means the
    user blocked the bot."""

    def member(state: str) -> dict[str, Any]:
        found: dict[str, Any] = {"status": state, "user": dict(_BOT_USER)}
        if state == "restricted":
            found.update({"is_member": True, "until_date": 0})
            found.update(dict.fromkeys(_RESTRICTED_RIGHTS, True))
            found.update(rights or {})
        if state == "administrator":
            found.update(_ADMIN_RIGHTS)
        if state == "kicked":
            found["until_date"] = 0
        return found

    update: dict[str, Any] = {
        "my_chat_member": {
            "chat": chat_json(chat_id),
            "from": user_json(by),
            "date": int(time.time()),
            "old_chat_member": member(old_status),
            "new_chat_member": member(status),
        }
    }
    if update_id is not None:
        update["update_id"] = update_id
    return update


# ---------------------------------------------------------------------------------------------
# Request decoding.


def _typed(key: str, value: str) -> Any:
    if key in _STRING_KEYS:
        return value
    try:
        decoded = json.loads(value)
    except ValueError:
        return value
    if isinstance(decoded, float) and not math.isfinite(decoded):
        return value  # "NaN" and "Infinity" are names, not numbers
    if isinstance(decoded, dict | list | bool | int | float):
        return decoded
    return value  # a JSON string literal: python-telegram-bot sends strings unquoted


def _decode_params(content_type: str, body: bytes, query: str) -> dict[str, Any]:
    raw: dict[str, Any] = dict(parse_qsl(query, keep_blank_values=True))
    mime = content_type.split(";", 1)[0].strip().lower()
    if mime == "application/json" and body:
        data = json.loads(body)
        if not isinstance(data, dict):
            raise ValueError("the JSON body is not an object")
        raw.update(data)
    elif mime == "application/x-www-form-urlencoded":
        raw.update(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
    return {k: _typed(k, v) if isinstance(v, str) else v for k, v in raw.items()}


# ---------------------------------------------------------------------------------------------
# HTTP plumbing.


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 keeps the connection open between requests, as api.telegram.org does.
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; with Nagle's algorithm on, the client's
    # delayed ACK would hold the body back about 40 ms on every call.
    disable_nagle_algorithm = True
    server: _Server

    def do_POST(self) -> None:
        self._dispatch()

    def do_GET(self) -> None:
        self._dispatch()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the call record is the log; stderr noise would drown pytest output

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    # Trailers end with an empty line.
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _dispatch(self) -> None:
        body = self._read_body()
        url = urlsplit(self.path)
        status, payload, content_type, wait = self.server.fake.serve(
            url.path, url.query, self.headers.get("Content-Type", ""), body
        )
        if wait > 0 and self.server.fake._stopping.wait(wait):
            self.close_connection = True
            return
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver's listen backlog is 5: several bot containers opening connections at once
    # (the load benchmark) would see connections reset.
    request_queue_size = 1024

    def __init__(self, address: tuple[str, int], fake: FakeTelegram) -> None:
        self.fake = fake
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        # Own thread bookkeeping: ThreadingMixIn does not track daemon threads, and stop()
        # must be able to close idle keep-alive connections and join their threads.
        thread = threading.Thread(
            target=self._serve_connection,
            args=(request, client_address),
            name="fake-telegram-connection",
            daemon=True,
        )
        self.fake._connection_opened(request, thread)
        thread.start()

    def _serve_connection(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)
            self.fake._connection_closed(request, threading.current_thread())

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up (timeouts, stop()) is normal here, not worth a traceback.
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)


# ---------------------------------------------------------------------------------------------
# The fake itself.

_PATH = re.compile(r"^/bot(?P<token>[^/]*)/(?P<method>[A-Za-z_]+)/?$")


class FakeTelegram:
    """A Bot API server on 127.0.0.1; start/stop it with ``with FakeTelegram() as tg:``.

    ``clock`` stamps each Call's ``at`` (inject one to test flood limits without waiting).
    ``long_poll_cap`` bounds how long getUpdates waits, whatever timeout the client asks for.
    ``flood_limit``, if set, answers 429 to the send that would exceed that many messages into
    one chat within a rolling minute, as Telegram does for groups (about 20). ``bot_rate``, if
    set, answers 429 to any request beyond that many in a rolling second, all chats together,
    as Telegram does for one bot (about 30).

    Forum topics: ``open_topic`` makes a supergroup a forum and opens a topic in it; messages
    sent with its ``message_thread_id`` land there, until ``close_topic`` (TOPIC_CLOSED) or
    ``delete_topic`` (its messages go; "message thread not found").
    """

    def __init__(
        self,
        *,
        port: int = 0,
        clock: Callable[[], float] = time.monotonic,
        long_poll_cap: float = 0.5,
        flood_limit: int | None = None,
        bot_rate: int | None = None,
    ) -> None:
        self._requested_port = port
        self._clock = clock
        self._long_poll_cap = long_poll_cap
        self._flood_limit = flood_limit
        self._bot_rate = bot_rate
        # Times of the messages sent into each chat, and of the bot's requests, in the windows
        # the limits look at (the clock never goes back).
        self._sent_at: dict[int, collections.deque[float]] = {}
        self._requested_at: collections.deque[float] = collections.deque()
        #: 429s answered for the limits above (not for fail_next/fail_always rules).
        self.limited = 0
        # chat -> topic -> "open" | "closed" | "deleted"
        self._topics: dict[int, dict[int, str]] = {}
        self._gone: set[tuple[int, int]] = set()  # messages of deleted topics
        self._lock = threading.RLock()
        # One condition for everything: new calls (wait_for) and new updates (getUpdates).
        self._changed = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._calls: list[Call] = []
        self._calls_of: dict[str, list[Call]] = {}  # by method, in lower case: `calls(method)`
        self._rules: dict[int, _Rule] = {}
        self._next_rule = 1
        self._blocks: dict[int | str, int] = {}
        self._chats: dict[int, dict[int, StoredMessage]] = {}
        self._next_message_id: dict[int, int] = {}
        self._updates: list[dict[str, Any]] = []
        self._next_update_id = 1
        self._webhook: dict[str, Any] = {"url": ""}
        #: What getWebhookInfo reports as the last failed delivery: (unix time, Telegram's text).
        self.webhook_error: tuple[int, str] | None = None
        self._connections: dict[Any, threading.Thread] = {}
        self._accepted = 0
        self._server: _Server | None = None
        self._serve_thread: threading.Thread | None = None
        #: (chat_id, user_id) pairs answered as "administrator" by getChatMember.
        self.admins: set[tuple[int, int]] = set()
        #: (chat_id, user_id) pairs answered as "creator".
        self.owners: set[tuple[int, int]] = set()
        #: (chat_id, user_id) -> (status, is_member) for everyone else (see `set_status`);
        #: anyone not named is a "member".
        self.statuses: dict[tuple[int, int], tuple[str, bool]] = {}

    def set_status(
        self, chat_id: int, user_id: int, status: str, *, is_member: bool = False
    ) -> None:
        """What getChatMember says of a user who is neither owner nor admin: "member",
        "restricted" (still a member of the chat if `is_member`), "left" or "kicked"."""
        if status not in ("member", "restricted", "left", "kicked"):
            raise ValueError(f"not a status for set_status: {status}")
        with self._lock:
            self.statuses[(chat_id, user_id)] = (status, is_member or status == "member")

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> Self:
        if self._server is not None:
            raise RuntimeError("FakeTelegram is already running")
        if self._stopping.is_set():
            raise RuntimeError("a stopped FakeTelegram cannot be restarted; make a new one")
        self._server = _Server(("127.0.0.1", self._requested_port), self)
        self._serve_thread = threading.Thread(
            target=self._server.serve_forever,
            # The default 0.5 s poll would make every stop() take up to half a second.
            kwargs={"poll_interval": 0.02},
            name="fake-telegram",
            daemon=True,
        )
        self._serve_thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, close every socket and join every thread; safe to call twice."""
        self._stopping.set()
        with self._changed:
            self._changed.notify_all()  # release long polls
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        with self._lock:
            connections = dict(self._connections)
        for sock in connections:
            # Idle keep-alive connections sit in a blocking read until the socket is shut.
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for thread in connections.values():
            thread.join(timeout=2.0)
        if self._serve_thread is not None:
            self._serve_thread.join(timeout=2.0)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeTelegram is not running")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """For ``telegram.Bot(token, base_url=...)``, which appends the token, then /method."""
        return f"{self.url}/bot"

    @property
    def connections_accepted(self) -> int:
        """TCP connections accepted so far: 1 for many calls means keep-alive works."""
        with self._lock:
            return self._accepted

    def _connection_opened(self, sock: Any, thread: threading.Thread) -> None:
        with self._lock:
            self._accepted += 1
            self._connections[sock] = thread

    def _connection_closed(self, sock: Any, thread: threading.Thread) -> None:
        with self._lock:
            if self._connections.get(sock) is thread:
                del self._connections[sock]

    # -- inspecting calls --------------------------------------------------------------------

    def calls(self, method: str | None = None, chat_id: int | str | None = None) -> list[Call]:
        """Recorded calls, oldest first; ``method`` matches case-insensitively."""
        with self._lock:
            found = self._calls if method is None else self._calls_of.get(method.lower(), [])
            return [c for c in found if _matches(c, None, _chat_key(chat_id))]

    def clear(self) -> None:
        """Forget the recorded calls (messages, rules and updates stay)."""
        with self._lock:
            self._calls.clear()
            self._calls_of.clear()

    def messages_to(self, chat_id: int) -> list[str]:
        """Texts of the successful sendMessage and editMessageText calls into a chat, in order."""
        with self._lock:
            return [
                str(c.params.get("text", ""))
                for c in self._calls
                if c.ok
                and c.method.lower() in ("sendmessage", "editmessagetext")
                and c.chat_id == chat_id
            ]

    def message(self, chat_id: int, message_id: int) -> StoredMessage | None:
        """A copy of a bot message as it now reads (None if never sent or deleted)."""
        with self._lock:
            stored = self._chats.get(chat_id, {}).get(message_id)
            return None if stored is None else replace(stored)

    def chat_messages(self, chat_id: int) -> list[StoredMessage]:
        """Copies of the bot's messages still in a chat, oldest first."""
        with self._lock:
            chat = self._chats.get(chat_id, {})
            return [replace(chat[i]) for i in sorted(chat)]

    def wait_for(self, predicate: Callable[[list[Call]], bool], timeout: float = 2.0) -> list[Call]:
        """Block until ``predicate(all calls)`` holds; return the calls, or raise TimeoutError."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not predicate(list(self._calls)):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    seen = ", ".join(f"{c.method}({c.chat_id})" for c in self._calls[-10:])
                    raise TimeoutError(f"condition not met after {timeout} s; last calls: {seen}")
                self._changed.wait(remaining)
            return list(self._calls)

    def wait_for_calls(
        self,
        count: int,
        method: str | None = None,
        chat_id: int | str | None = None,
        timeout: float = 2.0,
    ) -> list[Call]:
        """Block until at least ``count`` matching calls arrived; return the matching ones."""
        key = _chat_key(chat_id)
        self.wait_for(lambda cs: sum(_matches(c, method, key) for c in cs) >= count, timeout)
        return self.calls(method, chat_id)

    def max_messages_per_minute(self, chat_id: int, window: float = 60.0) -> int:
        """The most messages delivered into a chat within any ``window`` seconds."""
        with self._lock:
            times = sorted(
                c.at for c in self._calls if _is_send(c.method) and c.ok and c.chat_id == chat_id
            )
        best, start = 0, 0
        for end, at in enumerate(times):
            while at - times[start] >= window:
                start += 1
            best = max(best, end - start + 1)
        return best

    # -- failures ----------------------------------------------------------------------------

    def fail_next(
        self, method: str | None, chat_id: int | str | None = None, *, error: Fault
    ) -> None:
        """Answer the next matching call with ``error``, once. Queued faults apply in order.

        ``method`` None matches any method; ``chat_id`` None matches any chat (or none).
        """
        self._add_rule(_Rule(method, _chat_key(chat_id), error, once=True))

    def fail_always(
        self, method: str | None = None, chat_id: int | str | None = None, *, error: Fault
    ) -> int:
        """Answer every matching call with ``error`` until ``remove_rule(handle)``."""
        return self._add_rule(_Rule(method, _chat_key(chat_id), error, once=False))

    def remove_rule(self, handle: int) -> None:
        with self._lock:
            self._rules.pop(handle, None)

    def block(self, chat_id: int) -> None:
        """The user of this private chat blocks the bot: every call into it answers 403."""
        with self._lock:
            if chat_id not in self._blocks:
                self._blocks[chat_id] = self.fail_always(None, chat_id, error=blocked_by_user())

    def unblock(self, chat_id: int) -> None:
        with self._lock:
            handle = self._blocks.pop(chat_id, None)
            if handle is not None:
                self.remove_rule(handle)

    # -- forum topics ------------------------------------------------------------------------

    def open_topic(self, chat_id: int) -> int:
        """Open a topic in the forum supergroup ``chat_id``; its id (``message_thread_id``) is
        that of the service message that created it, as in Telegram."""
        with self._lock:
            # Id 1 is the General topic's (itself never named by an id).
            thread = max(GENERAL_TOPIC + 1, self._next_message_id.get(chat_id, 1))
            self._next_message_id[chat_id] = thread + 1
            self._topics.setdefault(chat_id, {})[thread] = "open"
            return thread

    def close_topic(self, chat_id: int, thread: int) -> None:
        with self._lock:
            self._topics[chat_id][thread] = "closed"

    def reopen_topic(self, chat_id: int, thread: int) -> None:
        with self._lock:
            self._topics[chat_id][thread] = "open"

    def delete_topic(self, chat_id: int, thread: int) -> None:
        """The topic and every message in it go."""
        with self._lock:
            self._topics[chat_id][thread] = "deleted"
            chat = self._chats.get(chat_id, {})
            for message_id in [i for i, m in chat.items() if m.thread == thread]:
                del chat[message_id]
                self._gone.add((chat_id, message_id))

    def topic_messages(self, chat_id: int, thread: int | None) -> list[StoredMessage]:
        """Copies of the bot's messages in one topic (None: outside any topic), oldest first."""
        return [m for m in self.chat_messages(chat_id) if m.thread == thread]

    def _add_rule(self, rule: _Rule) -> int:
        with self._lock:
            handle = self._next_rule
            self._next_rule += 1
            self._rules[handle] = rule
            return handle

    def _take_fault(self, method: str, chat_id: int | str | None) -> Fault | None:
        for handle, rule in sorted(self._rules.items()):
            if rule.method is not None and rule.method.lower() != method.lower():
                continue
            if rule.chat_id is not None and rule.chat_id != chat_id:
                continue
            if rule.once:
                del self._rules[handle]
            return rule.fault
        return None

    # -- updates -----------------------------------------------------------------------------

    def push_update(self, update: dict[str, Any]) -> int:
        """Queue an update for getUpdates; an ``update_id`` is assigned if missing. Returns it."""
        with self._changed:
            update = dict(update)
            if "update_id" not in update:
                update["update_id"] = self._next_update_id
            self._next_update_id = max(self._next_update_id, int(update["update_id"]) + 1)
            self._updates.append(update)
            self._changed.notify_all()
            return int(update["update_id"])

    @property
    def webhook_url(self) -> str:
        with self._lock:
            return str(self._webhook.get("url", ""))

    # -- serving -----------------------------------------------------------------------------

    def serve(
        self, path: str, query: str, content_type: str, body: bytes
    ) -> tuple[int, bytes, str, float]:
        """Answer one HTTP request: (status, body, content type, seconds to wait first).

        The HTTP server calls it for each request it reads; a test may call it directly, to
        answer a client in its own process without a socket.
        """
        return self._serve(path, lambda: _decode_params(content_type, body, query))

    def serve_form(self, path: str, fields: Mapping[str, str]) -> tuple[int, bytes, str, float]:
        """`serve` for a form-encoded POST whose fields are given already decoded: what a
        client in this process would otherwise encode, and `serve` parse again."""
        return self._serve(path, lambda: {k: _typed(k, v) for k, v in fields.items()})

    def _serve(
        self, path: str, decode: Callable[[], dict[str, Any]]
    ) -> tuple[int, bytes, str, float]:
        at = self._clock()
        match = _PATH.match(path)
        if match is None:
            return (*_error_body(404, "Not Found"), "application/json", 0.0)
        token, method = match["token"], match["method"]
        fault: Fault | None = None
        with self._changed:
            try:
                params = decode()
            except (ValueError, UnicodeDecodeError) as exc:
                params = {}
                status, payload = _error_body(400, f"Bad Request: can't parse request: {exc}")
            else:
                fault = self._take_fault(method, _chat_key(params.get("chat_id")))
                if fault is not None and fault.status is not None:
                    status, payload = fault.status, fault.body
                elif (wait := self._over_bot_rate(method, at)) is not None:
                    self.limited += 1
                    status, payload = 429, too_many_requests(wait).body
                else:
                    status, payload = self._answer(method, params, at)
                    if status == 200 and self._bot_rate is not None:
                        self._requested_at.append(at)
            # Recorded in the same critical section as the state change, so that whoever
            # wait_for()s a call also sees its effect.
            call = Call(method, params, at, token=token, status=status)
            self._calls.append(call)
            self._calls_of.setdefault(method.lower(), []).append(call)
            self._changed.notify_all()
        if fault is not None and fault.gate is not None:
            try:
                fault.gate.wait()
            except threading.BrokenBarrierError:
                return (
                    *_error_body(500, "Internal Server Error: the gate broke"),
                    "application/json",
                    0.0,
                )
        content_type_out = fault.content_type if fault and fault.status else "application/json"
        return status, payload, content_type_out, fault.delay if fault else 0.0

    def _answer(self, method: str, params: dict[str, Any], at: float) -> tuple[int, bytes]:
        handler = self._handlers.get(method.lower())
        try:
            if handler is None:
                raise _ApiError(404, "Not Found")
            result = handler(params, at)
        except _ApiError as exc:
            return _error_body(exc.code, exc.description)
        except _FloodError as exc:
            self.limited += 1
            return 429, too_many_requests(exc.retry_after).body
        return 200, json.dumps({"ok": True, "result": result}).encode()

    @functools.cached_property  # made once: the fake answers thousands of calls a game
    def _handlers(self) -> dict[str, Callable[[dict[str, Any], float], Any]]:
        return {
            "getme": lambda p, at: dict(_GET_ME),
            # The call record is what tests look at.
            "answercallbackquery": lambda p, at: True,
            "sendmessage": self._send_message,
            "editmessagetext": self._edit_text,
            "editmessagereplymarkup": self._edit_markup,
            "getchatmember": self._get_chat_member,
            "sendchataction": self._send_chat_action,
            "getupdates": self._get_updates,
            "setwebhook": self._set_webhook,
            "deletewebhook": self._delete_webhook,
            "getwebhookinfo": self._get_webhook_info,
            "setmycommands": self._set_my_commands,
        }

    # Each handler runs with the lock held and returns the "result" value.

    def _chat_id(self, params: dict[str, Any]) -> int:
        chat_id = _chat_key(params.get("chat_id"))
        if chat_id is None:
            raise _ApiError(400, "Bad Request: chat_id is empty")
        if not isinstance(chat_id, int):
            raise _ApiError(400, "Bad Request: chat not found")
        return chat_id

    def _over_bot_rate(self, method: str, at: float) -> int | None:
        """Seconds to wait when the bot is over its requests per second, else None."""
        if self._bot_rate is None or method.lower() == "getupdates":
            return None
        recent = self._requested_at
        while recent and at - recent[0] >= 1.0:
            recent.popleft()
        if len(recent) < self._bot_rate:
            return None
        return max(1, math.ceil(recent[0] + 1.0 - at))

    def _check_flood(self, chat_id: int, at: float) -> None:
        if self._flood_limit is None:
            return
        recent = self._sent_at.setdefault(chat_id, collections.deque())
        while recent and at - recent[0] >= 60.0:
            recent.popleft()
        if len(recent) >= self._flood_limit:
            raise _FloodError(max(1, math.ceil(recent[0] + 60.0 - at)))

    def _check_thread(self, chat_id: int, params: dict[str, Any]) -> int | None:
        thread = params.get("message_thread_id")
        if thread is None:
            return None
        state = self._topics.get(chat_id, {}).get(thread) if isinstance(thread, int) else None
        if state == "closed":
            raise _ApiError(400, TOPIC_CLOSED)
        if state != "open":  # deleted, the General topic, or no topic at all
            raise _ApiError(400, THREAD_NOT_FOUND)
        return int(thread)

    def _store_new(self, chat_id: int, at: float, **content: Any) -> StoredMessage:
        self._check_flood(chat_id, at)
        if self._flood_limit is not None:
            self._sent_at[chat_id].append(at)
        message_id = self._next_message_id.get(chat_id, 1)
        self._next_message_id[chat_id] = message_id + 1
        stored = StoredMessage(
            chat_id=chat_id, message_id=message_id, date=int(time.time()), **content
        )
        self._chats.setdefault(chat_id, {})[message_id] = stored
        return stored

    def _send_chat_action(self, params: dict[str, Any], at: float) -> bool:
        """ "typing" and the like. A private chat the bot never wrote to answers 403 as for a
        user who never started the bot: the fake sends there whatever it is asked to, so
        having written there is what it knows of a Start."""
        chat_id = self._chat_id(params)
        if chat_id > 0 and not self._chats.get(chat_id):
            raise _ApiError(403, CANT_INITIATE)
        return True

    def _send_message(self, params: dict[str, Any], at: float) -> dict[str, Any]:
        chat_id = self._chat_id(params)
        text = _checked_text(params)
        _own_entities(text, params.get("entities"))  # refused before anything is sent
        thread = self._check_thread(chat_id, params)
        stored = self._store_new(
            chat_id, at, text=text, reply_markup=_inline_markup(params), thread=thread
        )
        _set_entities(stored, text, params)
        return _message_json(stored)

    def _target(self, params: dict[str, Any]) -> StoredMessage | None:
        """The stored message an edit aims at; None for inline messages."""
        if params.get("inline_message_id"):
            return None
        chat_id = self._chat_id(params)
        message_id = params.get("message_id")
        if not isinstance(message_id, int):
            raise _ApiError(400, "Bad Request: message identifier is not specified")
        chat = self._chats.setdefault(chat_id, {})
        if (chat_id, message_id) in self._gone:
            raise _ApiError(400, MESSAGE_TO_EDIT_NOT_FOUND)
        if message_id not in chat:
            # Adopt messages the fake never saw (sent before it started, or set up directly
            # in a test's stored state); fail_next(..., MESSAGE_TO_EDIT_NOT_FOUND) tests the rest.
            chat[message_id] = StoredMessage(chat_id, message_id, date=int(time.time()))
            self._next_message_id[chat_id] = max(
                self._next_message_id.get(chat_id, 1), message_id + 1
            )
        return chat[message_id]

    def _edit_text(self, params: dict[str, Any], at: float) -> dict[str, Any] | bool:
        text = _checked_text(params)
        own = _own_entities(text, params.get("entities"))
        stored = self._target(params)
        if stored is None:
            return True
        # Telegram drops the inline keyboard when an edit does not repeat it.
        markup = _inline_markup(params)
        unchanged = stored.text == text and stored.reply_markup == markup
        if unchanged and stored.own_entities == own:
            raise _ApiError(400, MESSAGE_NOT_MODIFIED)
        stored.text, stored.reply_markup, stored.edit_date = text, markup, int(time.time())
        _set_entities(stored, text, params)
        return _message_json(stored)

    def _edit_markup(self, params: dict[str, Any], at: float) -> dict[str, Any] | bool:
        stored = self._target(params)
        if stored is None:
            return True
        markup = _inline_markup(params)
        if stored.reply_markup == markup:
            raise _ApiError(400, MESSAGE_NOT_MODIFIED)
        stored.reply_markup, stored.edit_date = markup, int(time.time())
        return _message_json(stored)

    def _member_json(self, chat_id: int, user_id: int) -> dict[str, Any]:
        user = user_json(user_id)
        if (chat_id, user_id) in self.owners:
            return {"status": "creator", "user": user, "is_anonymous": False}
        if (chat_id, user_id) in self.admins:
            return {"status": "administrator", "user": user, **_ADMIN_RIGHTS}
        status, is_member = self.statuses.get((chat_id, user_id), ("member", True))
        if status == "restricted":
            return {"status": status, "user": user, "is_member": is_member, **_RESTRICTIONS}
        if status == "kicked":
            return {"status": status, "user": user, "until_date": 0}
        return {"status": status, "user": user}

    def _get_chat_member(self, params: dict[str, Any], at: float) -> dict[str, Any]:
        chat_id = self._chat_id(params)
        user_id = params.get("user_id")
        if not isinstance(user_id, int):
            raise _ApiError(400, "Bad Request: invalid user_id specified")
        return self._member_json(chat_id, user_id)

    def _get_updates(self, params: dict[str, Any], at: float) -> list[dict[str, Any]]:
        if self._webhook.get("url"):
            raise _ApiError(409, WEBHOOK_CONFLICT)
        offset = params.get("offset")
        limit = params.get("limit")
        limit = limit if isinstance(limit, int) else 100
        timeout = params.get("timeout")
        timeout = timeout if isinstance(timeout, int | float) else 0
        if isinstance(offset, int) and offset > 0:
            # A positive offset confirms every earlier update: Telegram forgets them.
            self._updates = [u for u in self._updates if u["update_id"] >= offset]
        deadline = time.monotonic() + min(float(timeout), self._long_poll_cap)
        while not self._updates and not self._stopping.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            self._changed.wait(remaining)  # releases the lock while waiting
        pending = self._updates
        if isinstance(offset, int) and offset < 0:
            pending = pending[offset:]
        return [dict(u) for u in pending[: max(1, min(limit, 100))]]

    def _set_webhook(self, params: dict[str, Any], at: float) -> bool:
        self._webhook = dict(params)
        return True

    def _delete_webhook(self, params: dict[str, Any], at: float) -> bool:
        self._webhook = {"url": ""}
        if params.get("drop_pending_updates") is True:
            self._updates.clear()
        return True

    def _get_webhook_info(self, params: dict[str, Any], at: float) -> dict[str, Any]:
        info: dict[str, Any] = {
            "url": self._webhook.get("url", ""),
            "has_custom_certificate": False,
            "pending_update_count": len(self._updates),
        }
        if isinstance(self._webhook.get("allowed_updates"), list):
            info["allowed_updates"] = self._webhook["allowed_updates"]
        if isinstance(self._webhook.get("max_connections"), int):
            info["max_connections"] = self._webhook["max_connections"]
        if self.webhook_error is not None:
            info["last_error_date"], info["last_error_message"] = self.webhook_error
        return info

    def _set_my_commands(self, params: dict[str, Any], at: float) -> bool:
        commands = params.get("commands")
        if not isinstance(commands, list):
            raise _ApiError(400, "Bad Request: can't parse commands JSON object")
        return True


class _FloodError(Exception):
    def __init__(self, retry_after: int) -> None:
        super().__init__(retry_after)
        self.retry_after = retry_after


def _matches(call: Call, method: str | None, chat_id: int | str | None) -> bool:
    if method is not None and call.method.lower() != method.lower():
        return False
    return chat_id is None or call.chat_id == chat_id


def _is_send(method: str) -> bool:
    return method.lower() == "sendmessage"


def _checked_text(params: dict[str, Any]) -> str:
    text = params.get("text")
    if not isinstance(text, str) or not text.strip():
        raise _ApiError(400, "Bad Request: message text is empty")
    if len(text) > 4096:
        raise _ApiError(400, "Bad Request: message is too long")
    return text


# The entity types a sender may give (the Bot API's MessageEntity), and a date_time entity's
# formats: relative, or a weekday, a short or long date and a short or long time, each optional
# (an empty format shows the text as it is).
ENTITY_TYPES = frozenset(
    {
        "mention", "hashtag", "cashtag", "bot_command", "url", "email", "phone_number", "bold",
        "italic", "underline", "strikethrough", "spoiler", "blockquote", "expandable_blockquote",
        "code", "pre", "text_link", "text_mention", "custom_emoji", "date_time",
    }
)  # fmt: skip
_DATE_TIME_FORMAT = re.compile(r"r|w?[dD]?[tT]?")
_DATE_AHEAD = 1098 * 86400  # a date_time entity's time: from 0 to 1098 days from now


def _utf16(text: str) -> bytes:
    return text.encode("utf-16-le", "surrogatepass")


def covered(text: str, entity: dict[str, Any]) -> str:
    """The part of `text` an entity covers: its offset and length count UTF-16 code units."""
    units = _utf16(text)
    start, end = 2 * entity["offset"], 2 * (entity["offset"] + entity["length"])
    return units[start:end].decode("utf-16-le", "surrogatepass")


def _own_entities(text: str, given: Any) -> list[dict[str, Any]]:
    """The sender's entities, checked as the Bot API server and tdlib check them (a wrong field
    type, an unknown type, a date_time entity's time or format, an entity outside the text or
    cutting a character in two are refused with their descriptions); empty ones are dropped."""
    if given is None:
        return []
    if not isinstance(given, list):
        raise _ApiError(400, "Bad Request: can't parse entities: expected an Array")
    units = len(_utf16(text)) // 2
    own = []
    for entity in given:
        if not isinstance(entity, dict):
            raise _ApiError(400, "Bad Request: can't parse MessageEntity: expected an Object")
        for key in ("offset", "length"):
            if type(entity.get(key)) is not int:
                raise _entity_error(f'Field "{key}" must be of type Number')
        kind = entity.get("type")
        if not isinstance(kind, str) or kind not in ENTITY_TYPES:
            raise _entity_error("Unsupported type specified")
        if kind == "date_time":
            unix, shown = entity.get("unix_time"), entity.get("date_time_format", "")
            if type(unix) is not int:
                raise _entity_error('Field "unix_time" must be of type Number')
            if not 0 <= unix <= time.time() + _DATE_AHEAD:
                raise _entity_error("Invalid date specified")
            if not isinstance(shown, str) or not _DATE_TIME_FORMAT.fullmatch(shown):
                raise _entity_error("Unsupported date time format specified")
        offset, length = entity["offset"], entity["length"]
        if not 0 <= offset <= 1_000_000:
            raise _ApiError(400, f"Bad Request: receive an entity with incorrect offset {offset}")
        if not 0 <= length <= 1_000_000:
            raise _ApiError(400, f"Bad Request: receive an entity with incorrect length {length}")
        if length == 0:
            continue
        end = offset + length
        if offset > units:
            raise _ApiError(
                400,
                f"Bad Request: entity begins after the end of the text at UTF-16 offset {offset}",
            )
        if end > units:
            raise _ApiError(
                400,
                f"Bad Request: entity beginning at UTF-16 offset {offset} ends after the end of "
                f"the text at UTF-16 offset {end}",
            )
        if _splits_a_pair(text, offset) or _splits_a_pair(text, end):
            raise _ApiError(400, "Bad Request: entity boundary is in the middle of a UTF-16 symbol")
        own.append(entity)
    return own


def _entity_error(why: str) -> _ApiError:
    return _ApiError(400, f"Bad Request: can't parse MessageEntity: {why}")


def _splits_a_pair(text: str, offset: int) -> bool:
    """Whether UTF-16 `offset` falls between the two halves of a character beyond the BMP."""
    units = _utf16(text)
    if not 0 < offset < len(units) // 2:
        return False
    low = int.from_bytes(units[2 * offset : 2 * offset + 2], "little")
    return 0xDC00 <= low <= 0xDFFF


def _set_entities(stored: StoredMessage, text: str, params: dict[str, Any]) -> None:
    """The message's entities, as Telegram makes them: the sender's own (none without a parse
    mode or `entities`), and what Telegram finds in the text where they leave room."""
    own = _own_entities(text, params.get("entities"))

    def free(found: dict[str, Any]) -> bool:
        start, end = found["offset"], found["offset"] + found["length"]
        return all(end <= e["offset"] or e["offset"] + e["length"] <= start for e in own)

    stored.own_entities = own
    found = [dict(e) for e in _found_in(text)]
    entities = sorted([*own, *filter(free, found)], key=lambda e: (e["offset"], -e["length"]))
    if entities:
        stored.extra["entities"] = entities
    else:
        stored.extra.pop("entities", None)


@functools.lru_cache(maxsize=1024)  # a bot sends the same texts again and again
def _found_in(text: str) -> tuple[dict[str, Any], ...]:
    """`find_entities`, each entity copied by the caller (the message keeps its own)."""
    return tuple(find_entities(text))


def _inline_markup(params: dict[str, Any]) -> dict[str, Any] | None:
    # Only inline keyboards belong to a message; reply keyboards are not echoed back.
    markup = params.get("reply_markup")
    if not (isinstance(markup, dict) and "inline_keyboard" in markup):
        return None
    for row in markup["inline_keyboard"]:
        for button in row:
            data = button.get("callback_data")
            # Telegram counts bytes, not characters, and python-telegram-bot checks neither.
            if isinstance(data, str) and not 1 <= len(data.encode()) <= 64:
                raise _ApiError(400, "Bad Request: BUTTON_DATA_INVALID")
    return markup


def _message_json(stored: StoredMessage, chat_name: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {
        "message_id": stored.message_id,
        "date": stored.date,
        "chat": chat_json(stored.chat_id, chat_name),
        "from": dict(_BOT_USER),
    }
    if stored.text is not None:
        message["text"] = stored.text
    if stored.reply_markup is not None:
        message["reply_markup"] = stored.reply_markup
    if stored.edit_date is not None:
        message["edit_date"] = stored.edit_date
    if stored.thread is not None:
        message["chat"]["is_forum"] = True
        message["message_thread_id"] = stored.thread
        message["is_topic_message"] = True
    message.update(stored.extra)
    return message


def _error_body(code: int, description: str) -> tuple[int, bytes]:
    return code, json.dumps({"ok": False, "error_code": code, "description": description}).encode()
