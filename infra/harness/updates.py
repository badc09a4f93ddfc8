"""Telegram updates as people's taps and messages make them, the Lambda events around them
(the webhook's, and SQS's for the timer), and the webhook's reply, decoded.

The JSON is the fake Bot API's (`message_update`, `callback_update`), the webhook event the
local runner's (`webhook_event`): tests, benchmarks and the offline table send the same updates.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from handlers.webhook import SECRET_HEADER
from infra.fake_telegram import StoredMessage, callback_update, message_update
from infra.harness import GROUP, GROUP_TITLE, SECRET, T0, Person
from infra.runner import webhook_event


class Updates:
    """Updates from people, each with a fresh id (thread-safe: itertools.count is atomic).

    A message's id is its update's id, so neither ever repeats. Updates are dated `now`, or by
    `clock` when given one, or at T0.
    """

    def __init__(self, first: int = 1000, clock: Callable[[], float] | None = None) -> None:
        self._ids = itertools.count(first)
        self.clock = clock

    def next_id(self) -> int:
        return next(self._ids)

    def _date(self, now: float | None) -> float:
        if now is not None:
            return now
        return self.clock() if self.clock is not None else T0

    def message(
        self,
        person: Person,
        text: str,
        chat: int = GROUP,
        *,
        now: float | None = None,
        update_id: int | None = None,
        thread: int | None = None,
    ) -> dict[str, Any]:
        """`person` says `text` in `chat` (a group, or their private chat with the bot), in the
        forum topic `thread` when given."""
        update_id = self.next_id() if update_id is None else update_id
        return message_update(
            chat,
            person.id,
            text,
            update_id=update_id,
            message_id=update_id,
            first_name=person.name,
            language_code=person.lang,
            chat_title=GROUP_TITLE,
            date=self._date(now),
            thread=thread,
        )

    def press(
        self,
        person: Person,
        chat: int,
        message_id: int,
        data: str,
        *,
        now: float | None = None,
        update_id: int | None = None,
        query_id: str | None = None,
        shown: StoredMessage | None = None,
        thread: int | None = None,
    ) -> dict[str, Any]:
        """`person` taps the button carrying `data` on message `message_id` of `chat` (in the
        forum topic `thread`, when given)."""
        update_id = self.next_id() if update_id is None else update_id
        return callback_update(
            chat,
            person.id,
            message_id,
            data,
            update_id=update_id,
            callback_id=query_id or f"q{update_id}",
            first_name=person.name,
            language_code=person.lang,
            chat_title=GROUP_TITLE,
            date=self._date(now),
            shown=shown,
            thread=thread,
        )


def event(
    body: Any,
    *,
    secret: str | None = SECRET,
    header: str = SECRET_HEADER,
    raw: bool = False,
    b64: Any = False,
    now: float = T0,
) -> dict[str, Any]:
    """Telegram's POST of `body` as the webhook function receives it: the runner's event, with
    the secret in `header` (no secret header when `secret` is None). `body` is an update, sent
    as JSON, or with `raw` the body exactly as given; `b64` is the event's base64 flag."""
    ev = webhook_event({} if raw else body, "", now)
    headers: dict[str, str] = ev["headers"]
    del headers[SECRET_HEADER]
    if secret is not None:
        headers[header] = secret
    if raw:
        ev["body"] = body
        if isinstance(body, str):
            headers["content-length"] = str(len(body.encode()))
    ev["isBase64Encoded"] = b64
    return ev


def timer_event(*messages: str | Mapping[str, Any]) -> dict[str, Any]:
    """What SQS hands the timer function: a batch of timer messages, each the JSON text the bot
    queued (`SqsTimers`) or what it says ({"chat": ..., "at": ...}), sent as JSON here. The
    messages' ids are m1, m2, ... in order."""
    return {
        "Records": [
            {"messageId": f"m{n}", "body": m if isinstance(m, str) else json.dumps(m)}
            for n, m in enumerate(messages, 1)
        ]
    }


@dataclass(frozen=True)
class Reply:
    """The webhook handler's HTTP response, decoded: its status and the webhook reply it carries,
    if any (the answerCallbackQuery of a button press, `method` included)."""

    status: int
    answer: dict[str, Any] | None = None

    @classmethod
    def of(cls, response: Mapping[str, Any]) -> Reply:
        body = response.get("body")
        return cls(response["statusCode"], json.loads(body) if body else None)

    @property
    def text(self) -> str | None:
        """The answer's text: None for a press that was applied, the reason for a refusal."""
        if self.answer is None:
            return None
        assert self.answer["method"] == "answerCallbackQuery", self.answer
        text = self.answer.get("text")
        return None if text is None else str(text)

    @property
    def url(self) -> str | None:
        """The link the answer opens (a Join's, to the private chat), if it opens one."""
        url = None if self.answer is None else self.answer.get("url")
        return None if url is None else str(url)
