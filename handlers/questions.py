"""What the bot asks Telegram, as opposed to what it sends (`handlers.telegram_io`): where a
user stands in a group, whether the bot may write to them in private, and the bot's own
username. None ever raises.

`Questions` keeps each answer about a person for a while (`KEPT`), in the container that asked:
twenty presses of Join by one person cost one question, not twenty, and a player's moves are
checked against their membership of the group without a request each (whether someone is an
administrator is asked each time it matters: their powers follow Telegram at once). Kept in
memory rather than in the chat's item: membership is Telegram's fact, not the game's, and
keeping it there would cost bytes of the 1 KB item on every write and a write on presses that
change nothing.
A container that never asked asks once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from enum import StrEnum
from typing import TypeVar

import telegram
from telegram.error import BadRequest, Forbidden, TelegramError

from handlers import metrics

_LOGGER = logging.getLogger(__name__)
K = TypeVar("K")
V = TypeVar("V")


class Standing(StrEnum):
    """Where a user stands in a group chat, as one getChatMember tells it."""

    ADMIN = "admin"  # the creator or an administrator
    MEMBER = "member"  # a member, restricted or not
    OUTSIDER = "outsider"  # left, banned ("kicked"), or unknown to the chat
    UNKNOWN = "unknown"  # Telegram did not answer (a timeout, a flood limit, a 5xx)


async def standing(bot: telegram.Bot, chat_id: int, user_id: int) -> Standing:
    """Where the user stands in the chat: one getChatMember, never raising."""
    try:
        member = await bot.get_chat_member(chat_id, user_id)
    except (BadRequest, Forbidden):
        # "chat not found", "user not found", the bot no longer in the chat: not one of them.
        return Standing.OUTSIDER
    except TelegramError:
        return Standing.UNKNOWN
    except (TypeError, KeyError, ValueError):
        # A member Telegram described with fields python-telegram-bot does not expect.
        _LOGGER.warning("unreadable getChatMember answer", exc_info=True)
        return Standing.UNKNOWN
    if member.status in ("creator", "administrator"):
        return Standing.ADMIN
    if member.status == "member" or (
        member.status == "restricted" and getattr(member, "is_member", False)
    ):
        return Standing.MEMBER
    return Standing.OUTSIDER


async def is_admin(bot: telegram.Bot, chat_id: int, user_id: int) -> bool:
    """Whether the user administers the chat; False when Telegram cannot tell."""
    return await standing(bot, chat_id, user_id) is Standing.ADMIN


async def reachable(bot: telegram.Bot, user_id: int) -> bool:
    """Whether the bot may write to the user in private: they started it once and have not
    blocked it. Asked by showing "typing" in that chat (nothing is sent, nothing stays), which
    Telegram refuses with a 403 otherwise; False too when Telegram does not answer. That 403
    is the usual answer for a newcomer, so the metrics count it apart (`PrivateChatClosed`)."""
    with metrics.asking():
        try:
            return bool(await bot.send_chat_action(user_id, "typing"))
        except TelegramError:
            return False


# By base URL (server and token): a bot's name never changes while it runs, and a Lambda
# container or the runner may build more than one Bot for the same token.
_USERNAMES: dict[str, str] = {}


async def username(bot: telegram.Bot) -> str:
    """The bot's @username without the @, for t.me deep links: one getMe per process."""
    name = _USERNAMES.get(bot.base_url)
    if name is None:
        me = await bot.get_me()
        name = _USERNAMES[bot.base_url] = me.username or ""
    return name


# How long an answer about a person is kept: a banned player's presses are refused at the
# latest this long after the ban (an administrator's /kick puts them out at once), and a person
# pressing all the while is asked once.
KEPT = 300.0
# Answers kept at most, the oldest forgotten first: a container meets a few hundred people.
_AT_MOST = 4096


class Questions:
    """What the bot asks Telegram about people, each answer kept `KEPT` seconds by the
    `clock`: one bot's, one container's (`handlers.service.Service` holds it)."""

    def __init__(self, bot: telegram.Bot, clock: Callable[[], float]) -> None:
        self.bot = bot
        self.clock = clock
        self._standing: dict[tuple[int, int], tuple[float, Standing]] = {}
        self._reachable: dict[int, tuple[float, bool]] = {}

    async def standing(self, chat: int, user: int, *, fresh: bool = False) -> Standing:
        """Where the user stands in the chat, as kept unless `fresh`; an answer Telegram did not
        give is not kept."""
        kept = self._standing.get((chat, user))
        if not fresh and kept is not None and self.clock() - kept[0] < KEPT:
            return kept[1]
        where = await standing(self.bot, chat, user)
        if where is not Standing.UNKNOWN:
            _keep(self._standing, (chat, user), (self.clock(), where))
        return where

    async def is_admin(self, chat: int, user: int) -> bool:
        """Asked each time: an administrator's powers follow Telegram's word at once, whoever
        was just made one or no longer is."""
        return await self.standing(chat, user, fresh=True) is Standing.ADMIN

    async def member(self, chat: int, user: int) -> bool:
        """Whether the user is in the chat (an administrator or not)."""
        return await self.standing(chat, user) in (Standing.ADMIN, Standing.MEMBER)

    async def reachable(self, user: int) -> bool:
        kept = self._reachable.get(user)
        if kept is not None and self.clock() - kept[0] < KEPT:
            return kept[1]
        answer = await reachable(self.bot, user)
        _keep(self._reachable, user, (self.clock(), answer))
        return answer

    async def username(self) -> str:
        return await username(self.bot)

    def wrote(self, user: int) -> None:
        """The user wrote to the bot in private: they may have just started it (or blocked it
        since), so whether it may write to them is asked afresh."""
        self._reachable.pop(user, None)


def _keep(kept: dict[K, V], key: K, value: V) -> None:
    kept.pop(key, None)  # the newest last: the oldest go first when there are too many
    kept[key] = value
    while len(kept) > _AT_MOST:
        del kept[next(iter(kept))]
