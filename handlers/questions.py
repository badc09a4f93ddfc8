"""What the bot asks Telegram, as opposed to what it sends (`handlers.telegram_io`): where a
user stands in a group, whether the bot may write to them in private, and the bot's own
username. None ever raises.
"""

from __future__ import annotations

import logging
from enum import StrEnum

import telegram
from telegram.error import BadRequest, Forbidden, TelegramError

from handlers import metrics

_LOGGER = logging.getLogger(__name__)


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
