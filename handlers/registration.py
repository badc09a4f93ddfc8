"""What the bot tells Telegram about itself: where updates go, which ones, and the command menus.

The one definition for every path that registers the bot: the stack's custom resource
(`handlers.custom_resource`, run by `sam deploy`), `infra/telegram_setup.py` (checks and manual
repairs) and the local runner's getUpdates (`infra/runner.py`). It is in handlers/ because the
Lambda artifact holds handlers/ and not infra/.

Neither the token nor the secret is ever part of an error raised here: errors name the SSM
parameter, never its value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import telegram
from telegram import BotCommand, BotCommandScopeAllGroupChats, BotCommandScopeAllPrivateChats

from handlers import text

__all__ = [
    "ALLOWED_UPDATES",
    "GROUP_COMMANDS",
    "MAX_CONNECTIONS",
    "PRIVATE_COMMANDS",
    "Menu",
    "RegistrationError",
    "check_secret",
    "check_url",
    "delete_webhook",
    "menus",
    "read_secure_parameter",
    "set_menus",
    "set_webhook",
]

# The update types the bot reads: messages (commands, and the service message of a group
# migrating to a supergroup), callback queries (buttons), and my_chat_member (the bot's own
# membership of a chat changed: it was removed from a group, or added). A list given to Telegram
# replaces its default set, so each type wanted must be named; anything else would only cost an
# invocation to be ignored. A tuple, so that no caller can change it.
ALLOWED_UPDATES = ("message", "callback_query", "my_chat_member")
# Telegram's default. Updates for one chat come one at a time anyway; this bounds how many chats
# are served at once. The HTTP API throttles at 25 requests/s (burst 50) in front of it.
MAX_CONNECTIONS = 40

# The menus, in menu order. Descriptions come from the catalogues (handlers.text.commands).
GROUP_COMMANDS = text.COMMANDS
PRIVATE_COMMANDS = ("start", "help", "rules")
# /start without a payload answers in private exactly what /help does (handlers.app), so the
# catalogues have no separate description for it; "cmd_start" would be used if one is added.
_SAME_AS = {"start": "help"}

# setWebhook's secret_token: 1-256 characters of A-Z, a-z, 0-9, _ and -.
SECRET_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,256}")
# setMyCommands: a command is 1-32 of a-z, 0-9, _; a description 1-256 characters.
_COMMAND_PATTERN = re.compile(r"[a-z0-9_]{1,32}")
_MAX_DESCRIPTION = 256


class RegistrationError(Exception):
    """Something the operator has to fix; the message says what (and never holds a secret)."""


# ---------------------------------------------------------------------------------------------
# The two SSM parameters.


def read_secure_parameter(ssm: Any, name: str, what: str) -> str:
    """The decrypted value of an SSM parameter; errors name the parameter, never the value."""
    try:
        answer = ssm.get_parameter(Name=name, WithDecryption=True)
    except Exception as error:  # botocore's errors are generated classes
        if "ParameterNotFound" in type(error).__name__ or "ParameterNotFound" in str(error):
            raise RegistrationError(
                f"the SSM parameter {name!r} ({what}) does not exist: create it with "
                f"`aws ssm put-parameter --type SecureString --name {name} --value ...` "
                "(see the README's Deploy to AWS)"
            ) from None
        raise RegistrationError(
            f"cannot read the SSM parameter {name!r} ({what}): {error}"
        ) from None
    value = str(answer["Parameter"]["Value"])
    if not value or value != value.strip():
        raise RegistrationError(
            f"the SSM parameter {name!r} ({what}) is empty or has spaces or a line break "
            "around it: put it again without them"
        )
    return value


def check_secret(secret: str, parameter: str) -> None:
    if not SECRET_PATTERN.fullmatch(secret):
        raise RegistrationError(
            f"the webhook secret in {parameter!r} is not a valid secret token (1-256 "
            "characters of A-Z a-z 0-9 _ -): make one with "
            "`python -m infra.telegram_setup generate-secret` and put it again"
        )


def check_url(url: str) -> str:
    """Telegram delivers updates only to an https URL."""
    if not url.startswith("https://"):
        raise RegistrationError(f"the webhook URL is not an https URL: {url!r}")
    return url


# ---------------------------------------------------------------------------------------------
# The menus.


@dataclass(frozen=True)
class Menu:
    """One setMyCommands call."""

    scope: str  # "group" or "private"
    language: str | None  # None: the default menu (English)
    commands: tuple[tuple[str, str], ...]

    def __str__(self) -> str:
        return f"{self.scope}/{self.language or 'default'} ({len(self.commands)})"


def menus() -> list[Menu]:
    """Every menu to set: group and private chats, the default (English) and each language.

    Every catalogue is checked against English first: a bad file stops the registration (a
    deploy), as the bot itself reads a language's file only when the language is first used.
    """
    text.catalogues()
    result = []
    for lang in text.SUPPORTED:
        language = None if lang == text.DEFAULT else lang
        described = dict(text.commands(lang))
        for scope, names in (("group", GROUP_COMMANDS), ("private", PRIVATE_COMMANDS)):
            commands = tuple((name, _description(described, name)) for name in names)
            result.append(Menu(scope, language, commands))
    return result


def _description(described: dict[str, str], name: str) -> str:
    description = described.get(name) or described.get(_SAME_AS.get(name, ""), "")
    if not _COMMAND_PATTERN.fullmatch(name) or not 1 <= len(description) <= _MAX_DESCRIPTION:
        raise RegistrationError(f"/{name} has no usable menu description in the catalogues")
    return description


def _scope(name: str) -> telegram.BotCommandScope:
    return BotCommandScopeAllGroupChats() if name == "group" else BotCommandScopeAllPrivateChats()


# ---------------------------------------------------------------------------------------------
# The Bot API calls.


async def set_webhook(
    bot: telegram.Bot,
    url: str,
    secret: str,
    *,
    max_connections: int = MAX_CONNECTIONS,
    drop_pending_updates: bool = False,
) -> None:
    """Point Telegram at `url`: every update of ALLOWED_UPDATES, with the secret header."""
    await bot.set_webhook(
        check_url(url),
        secret_token=secret,
        allowed_updates=list(ALLOWED_UPDATES),
        max_connections=max_connections,
        drop_pending_updates=drop_pending_updates or None,
    )


async def set_menus(bot: telegram.Bot) -> list[Menu]:
    """Set every command menu; returns the menus set."""
    done = menus()
    for menu in done:
        await bot.set_my_commands(
            [BotCommand(name, description) for name, description in menu.commands],
            scope=_scope(menu.scope),
            language_code=menu.language,
        )
    return done


async def delete_webhook(bot: telegram.Bot, *, drop_pending_updates: bool = False) -> None:
    """Stop the webhook: Telegram keeps the updates for getUpdates (for 24 hours)."""
    await bot.delete_webhook(drop_pending_updates=drop_pending_updates or None)
