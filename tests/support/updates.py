"""Updates of every kind Telegram sends, generated from python-telegram-bot's own classes: each
field a type the Bot API gives it, each object built from its constructor's annotations.

`updates(kind)` draws updates of one of `Update.ALL_TYPES` (`KINDS`), from people at no table
(`STRANGERS`), in the game's group, another group, their private chats or a channel. Required
fields are always there; a few optional ones are drawn at each level (fewer the deeper), so that
a few hundred updates reach every kind and most of the fields the bot reads.
"""

from __future__ import annotations

import datetime as dtm
import enum
import functools
import inspect
import itertools
import types
import typing
import warnings
from collections.abc import Sequence
from typing import Any

import telegram
import telegram._utils.types
from hypothesis import strategies as st

from infra.harness import GROUP, OTHER_GROUP

STRANGERS = (555, 556, 557)  # nobody at the table: what they send is noise to a game
CHANNEL = -1002000000001
CHATS = (GROUP, OTHER_GROUP, CHANNEL, *STRANGERS)
# Service messages only Telegram sends, for the group's own events (tests of their own drive
# them): generated in the game's group they would end or move its game, which is no noise.
TELEGRAMS_OWN = frozenset({"migrate_to_chat_id", "forum_topic_closed"})
TEXTS = st.sampled_from(
    [
        f"/start j{GROUP}_1",  # a seat link (game 1: from before the ids were drawn)
        f"/start h{GROUP}_0",
        "/newgame",
        "/newgame 60",
        "/stop",
        "/kick",
        "/kick Ann",
        "/forfeit",
        "/leave",
        "/join",
        "/addbot",
        "/hand",
        "/table",
        "/settings off",
        "/language",
        "/rules",
        "/help@menteur_test_bot",
        "/start",
        "/start h-1_99999999999999",
    ]
) | st.text(max_size=20)
# Names as the Bot API allows them: empty, blank, like a command, like a mention.
NAMES = st.sampled_from(["", "\u3164", "Eve", "/stop", "@admin", "Ѕаm"]) | st.text(max_size=8)
DEPTH = 3  # below it, only what the constructor requires
# The optional fields the bot reads, each there one time in two: a command needs a text and a
# sender, a press its data and message.
FAVOURED = frozenset(
    {
        "from_user",
        "text",
        "data",
        "message",
        "reply_to_message",
        "message_thread_id",
        "is_topic_message",
        "sender_chat",
        "language_code",
        "last_name",
    }
)


_NAMES = {**vars(telegram._utils.types), **vars(telegram)}


@functools.cache
def _fields(cls: type) -> tuple[tuple[str, Any, bool], ...]:
    """(name, annotation, required) of each field of `cls`'s constructor."""
    # Some annotations name classes a module imports only for type checkers: the package's.
    init = vars(cls).get("__init__") or cls.__init__  # type: ignore[misc]
    hints = typing.get_type_hints(init, localns=_NAMES)
    found = []
    for name, parameter in inspect.signature(init).parameters.items():
        if name in ("self", "api_kwargs") or parameter.kind is parameter.VAR_KEYWORD:
            continue
        found.append((name, hints[name], parameter.default is inspect.Parameter.empty))
    return tuple(found)


def _kinds(cls: type) -> list[type]:
    """`cls` and every class deriving from it (a ChatMember is one of six)."""
    found, todo = [cls], list[type](cls.__subclasses__())
    while todo:
        sub = todo.pop()
        if sub.__module__.startswith("telegram") and sub not in found:
            found.append(sub)
            todo.extend(sub.__subclasses__())
    return found


def _integer(owner: type, name: str) -> st.SearchStrategy[int]:
    if name == "id" and issubclass(owner, telegram.User):
        return st.sampled_from(STRANGERS)
    if name in ("id", "chat_id") and issubclass(owner, telegram._chat._ChatBase):
        return st.sampled_from(CHATS)
    if name in ("chat_id", "user_id"):
        return st.sampled_from(CHATS)
    return st.integers(-3, 10**6) | st.sampled_from([0, 1, 2**31 - 1])


@functools.cache
def _value(hint: Any, owner: type, name: str, depth: int) -> st.SearchStrategy[Any]:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        kept = [a for a in args if a is not type(None)]
        return st.one_of([_value(a, owner, name, depth) for a in kept])
    if origin is typing.Literal:
        return st.sampled_from(args)
    if origin in (tuple, list, Sequence) or (
        isinstance(origin, type) and issubclass(origin, Sequence) and origin is not str
    ):
        inner = _value(args[0], owner, name, depth + 1) if args else st.none()
        return st.lists(inner, max_size=2 if depth < DEPTH else 1).map(tuple)
    if hint is bool:
        return st.booleans()
    if hint is int:
        return _integer(owner, name)
    if hint is float:
        return st.floats(0, 1e6)
    if hint is str:
        if name == "text":
            return TEXTS
        if name in ("first_name", "last_name"):
            return NAMES
        if name == "type" and issubclass(owner, telegram._chat._ChatBase):
            return st.sampled_from(["private", "group", "supergroup", "channel"])
        return st.text(max_size=12)
    if hint is dtm.datetime:
        return st.integers(1_700_000_000, 1_800_000_000).map(
            lambda s: dtm.datetime.fromtimestamp(s, dtm.UTC)
        )
    if hint is dtm.timedelta:
        return st.integers(0, 3600).map(lambda s: dtm.timedelta(seconds=s))
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return st.sampled_from(list(hint))
    if isinstance(hint, type) and issubclass(hint, telegram.TelegramObject):
        return st.one_of([built(kind, depth) for kind in _kinds(hint)])
    return st.none()


@st.composite
def _built(draw: st.DrawFn, cls: type, depth: int) -> Any:
    fields = [f for f in _fields(cls) if f[0] not in TELEGRAMS_OWN]
    optional = [name for name, _, required in fields if not required]
    most = max(0, 3 - depth)
    chosen = draw(st.sets(st.sampled_from(optional), max_size=most)) if optional and most else set()
    chosen |= {name for name in optional if name in FAVOURED and draw(st.booleans())}
    kwargs = {
        name: draw(_value(hint, cls, name, depth + 1))
        for name, hint, required in fields
        if required or name in chosen
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a field the library deprecates is still sent
        try:
            return cls(**kwargs)
        except (TypeError, ValueError):
            # A field the Bot API made required after the library gave it a default (a poll's
            # option ids): every field, then.
            rest = {n: draw(_value(h, cls, n, DEPTH)) for n, h, _ in fields if n not in kwargs}
            return cls(**kwargs, **rest)


@functools.cache
def built(cls: type, depth: int = 0) -> st.SearchStrategy[Any]:
    """A `cls` (a python-telegram-bot class), its fields drawn from their annotations."""
    return st.deferred(lambda: _built(cls, depth))


_IDS = itertools.count(900_000)  # ids no real update of a test has: no retry of one


KINDS = tuple(str(kind) for kind in telegram.Update.ALL_TYPES)


@functools.cache
def updates(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    """Updates of one kind (one of `KINDS`) that Telegram may send, from strangers, as JSON."""
    hint = {name: hint for name, hint, _ in _fields(telegram.Update)}[kind]
    return _value(hint, telegram.Update, kind, 0).map(
        lambda value: telegram.Update(next(_IDS), **{kind: value}).to_dict()
    )


def commands() -> st.SearchStrategy[dict[str, Any]]:
    """Commands as strangers send them: a text, a sender and a chat together (drawn alone, as
    `updates("message")` does, the three rarely meet)."""

    def message(chat: int, user: int, first: str, last: str, text: str) -> dict[str, Any]:
        kind = "private" if chat > 0 else "supergroup"
        sender = telegram.User(user, first, is_bot=False, last_name=last or None)
        sent = telegram.Message(
            1,
            dtm.datetime.fromtimestamp(1_764_400_000, dtm.UTC),
            telegram.Chat(chat, kind),
            from_user=sender,
            text=text,
        )
        return telegram.Update(next(_IDS), message=sent).to_dict()

    return st.builds(
        message,
        st.sampled_from(CHATS[:2] + STRANGERS),
        st.sampled_from(STRANGERS),
        NAMES,
        NAMES,
        TEXTS,
    )


def writers(update: dict[str, Any]) -> set[int]:
    """The chats and people an update comes from: its object's chat, sender, user, and those of
    the message a button was pressed on."""
    found: set[int] = set()

    def collect(value: Any, depth: int) -> None:
        if not isinstance(value, dict) or depth > 2:
            return
        for key in ("chat", "from", "user", "sender_chat"):
            inner = value.get(key)
            if isinstance(inner, dict) and isinstance(inner.get("id"), int):
                found.add(inner["id"])
        collect(value.get("message"), depth + 1)

    for key, value in update.items():
        if key != "update_id":
            collect(value, 0)
    return found
