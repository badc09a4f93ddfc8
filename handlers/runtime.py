"""What a process builds once: the event loop, the Telegram bot, the store, the timers.

`bootstrap()` is the one composition of a Lambda container, whichever game function (the
webhook, the timer) imports it: its entry points call it at import in Lambda, so it runs in the
init phase and an invocation pays for none of it. The local runner and the tests build a
`Runtime` of their own, giving it what they replace (the store, the bot, the timers, the clock,
the random generators, the sleep): everything is given at build time, nothing is changed in a
built runtime. One event loop for the container's life: an httpx client cannot outlive its loop
(`asyncio.run` per call breaks on the second call).

The registration function (`handlers.custom_resource`) builds none of this: it reads its two
parameters from the stack's properties and only calls the Bot API.
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import os
import random
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import boto3
import telegram

from handlers import logs, metrics, telegram_io
from handlers.app import MenteurBot
from handlers.config import Settings
from handlers.dynamo import DynamoStore
from handlers.store import Store
from handlers.timing import Timers

T = TypeVar("T")
MAX_SQS_DELAY = 900  # seconds: SQS's limit; later timers are left to the scheduled sweep
SLACK = 0.001  # seconds a timer's delay may fall short of its mark (see SqsTimers.schedule)


class SqsTimers:
    """Timers as delayed SQS messages: delivered within about a second of their second.

    Without a `client`, one is made for the first timer: most updates set none, and a client
    made at start-up would lengthen every cold start.
    """

    def __init__(self, client: Any, queue_url: str) -> None:
        self.client = client
        self.queue_url = queue_url

    def schedule(self, chat: int, at: float, now: float, topic: int | None = None) -> None:
        # Whole seconds, never early; but `at` is kept to the millisecond and `now + 45` in
        # floating point may come out a hair over 45: neither is worth a second more.
        delay = math.ceil(at - now - SLACK)
        if delay > MAX_SQS_DELAY:
            return
        if self.client is None:
            self.client = boto3.client("sqs")
        body: dict[str, float | int] = {"chat": chat, "at": at}
        if topic is not None:
            body["topic"] = topic
        self.client.send_message(
            QueueUrl=self.queue_url,
            MessageBody=json.dumps(body),
            DelaySeconds=max(0, delay),
        )


class Runtime:
    """A container's bot, built whole: in Lambda from `settings` alone; elsewhere with what the
    local runner or a test gives in place of AWS's and the machine's (a store, a bot, the
    timers, the clock, the game's random generator and the game ids', the sleep)."""

    def __init__(
        self,
        settings: Settings,
        *,
        store: Store | None = None,
        bot: telegram.Bot | None = None,
        timers: Timers | None = None,
        clock: Callable[[], float] = time.time,
        rng: random.Random | None = None,
        game_ids: random.Random | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        webhook_replies: bool = True,
    ) -> None:
        logs.configure(settings.log_level, (settings.bot_token, settings.webhook_secret))
        self.settings = settings
        self.loop = asyncio.new_event_loop()
        self.bot = bot or telegram_io.make_bot(settings.bot_token, settings.api_base_url)
        self.store = store or DynamoStore(boto3.client("dynamodb"), settings.table_name)
        if timers is None and settings.timer_queue_url:
            timers = SqsTimers(None, settings.timer_queue_url)
        self.app = MenteurBot(
            self.store,
            self.bot,
            clock=clock,
            rng=rng,
            game_ids=game_ids,
            timers=timers,
            idle_expiry=settings.idle_expiry_seconds,
            sleep=sleep,
            webhook_replies=webhook_replies,
        )

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(work)

    def close(self) -> None:
        self.run(telegram_io.close_bot(self.bot))
        self.loop.close()


def in_lambda() -> bool:
    """Whether this process is a Lambda container (its entry points then build at import)."""
    return "AWS_LAMBDA_FUNCTION_NAME" in os.environ


@functools.cache
def bootstrap() -> Runtime:
    """The container's runtime, built once: settings from the environment (and SSM), the store,
    the Telegram bot, the timers, and the outcome lines (with their metrics) on standard output."""
    metrics.to_stdout()
    return Runtime(Settings.from_env())
