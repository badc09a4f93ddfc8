"""What the functions log, and the secrets and personal data no log line may hold.

A private chat's id is its user's Telegram id, personal data: log lines name a chat through
`chat()`, which writes a private chat as "private" and a group (a negative id) as it is.

Two guards, because a secret reaches a log record by more than one path:

- Third-party loggers are held at WARNING whatever `LOG_LEVEL` says. python-telegram-bot's HTTP
  client (httpx) logs every request's URL at INFO, and that URL holds the bot token; botocore
  logs request parameters at DEBUG.
- Every record made in the process is redacted as it is made: its message with its arguments,
  its exception text and its stack. A token that reaches a record by another path (a library's
  warning, an exception's text, a URL in a traceback) is replaced before any handler sees it,
  the Lambda runtime's and any other added later.
"""

from __future__ import annotations

import logging
import re
import threading
import traceback
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["PRIVATE", "QUIET_LOGGERS", "REDACTED", "chat", "configure", "protect", "redact"]

REDACTED = "[redacted]"
PRIVATE = "private"
QUIET_LOGGERS = (
    "httpx",
    "httpcore",
    "hpack",
    "telegram",
    "botocore",
    "boto3",
    "s3transfer",
    "urllib3",
    "asyncio",
)


class _Redactor:
    """The hidden values, and the process's record factory that replaces them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._secrets: set[str] = set()
        self.pattern: re.Pattern[str] | None = None
        self._installed = False

    def hide(self, values: set[str]) -> None:
        with self._lock:
            if values <= self._secrets:
                return
            self._secrets |= values
            # Longest first, so a token is replaced whole before its key alone could be.
            # Without regard to case: python-telegram-bot recapitalises the error texts it
            # passes on.
            alternatives = sorted(self._secrets, key=len, reverse=True)
            self.pattern = re.compile("|".join(map(re.escape, alternatives)), re.IGNORECASE)

    def install(self) -> None:
        """Wrap the record factory, once per process: every record is redacted as it is made."""
        with self._lock:
            if self._installed:
                return
            self._installed = True
        make: Callable[..., logging.LogRecord] = logging.getLogRecordFactory()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = make(*args, **kwargs)
            self.record(record)
            return record

        logging.setLogRecordFactory(factory)

    def record(self, record: logging.LogRecord) -> None:
        pattern = self.pattern
        if pattern is None:
            return
        try:
            message = record.getMessage()
        except Exception:  # a malformed call: the handler will report it; keep the template
            message = str(record.msg)
        if pattern.search(message) or pattern.search(str(record.msg)):
            record.msg, record.args = pattern.sub(REDACTED, message), None
        if record.exc_info and record.exc_info[0] is not None:
            text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
            if pattern.search(text):
                # Formatters print `exc_text` when it is set and `exc_info` is gone.
                record.exc_text, record.exc_info = pattern.sub(REDACTED, text), None
        if record.exc_text and pattern.search(record.exc_text):
            record.exc_text = pattern.sub(REDACTED, record.exc_text)
        if record.stack_info and pattern.search(record.stack_info):
            record.stack_info = pattern.sub(REDACTED, record.stack_info)


_REDACTOR = _Redactor()


def protect(*values: str | None) -> None:
    """Never let these values (a token, a secret) appear in a log record from now on.

    A bot token `<id>:<key>` is hidden whole and by its key alone: the key is the secret part.
    """
    found: set[str] = set()
    for value in values:
        if not value:
            continue
        found.add(value)
        _, colon, key = value.partition(":")
        if colon and len(key) >= 8:
            found.add(key)
    _REDACTOR.install()
    _REDACTOR.hide(found)


def redact(text: str) -> str:
    """`text` with every hidden value replaced."""
    pattern = _REDACTOR.pattern
    return text if pattern is None else pattern.sub(REDACTED, text)


def configure(level: str | int, secrets: Iterable[str | None] = ()) -> None:
    """The process's logging: the root logger at `level`, the libraries at WARNING or above,
    `secrets` hidden from every record. Idempotent; call it once the secrets are known."""
    protect(*secrets)
    root = logging.getLogger()
    root.setLevel(level)
    # A library's logger passes its records to the root's handlers whatever the root's own
    # level: so it is set to the root's level when that is stricter than WARNING.
    quiet = max(logging.WARNING, root.level)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(quiet)


def chat(chat_id: int | None) -> int | str | None:
    """A chat as a log line may name it: a group (its id is negative) by its id, a private chat
    (its id is the user's) as "private"."""
    return PRIVATE if chat_id is not None and chat_id > 0 else chat_id
