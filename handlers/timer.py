"""The timer Lambda: delayed SQS messages for the exact moments, a scheduled sweep for the rest.

An SQS message names a chat (and its forum topic, for a game played in one) whose game needs a
look at a given second (the 45-second mark of a final play, a computer player's move). The
scheduled rule, every minute, looks at every chat whose next look (`Record.next_look`, stored
as `due`) has passed: timers lost or late, and games idle too long (R18). Whatever fires, the
engine judges against the stored game, so a stale or repeated timer changes nothing.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from handlers import logs, metrics
from handlers.runtime import Runtime, bootstrap, in_lambda

LOGGER = logging.getLogger("menteur.timer")
OUTCOMES = logging.getLogger("menteur.timer.outcome")  # one line per tick: see handlers.metrics


# In Lambda, build at import: the init phase is not billed as the first tick's latency.
if in_lambda():
    bootstrap()


def lambda_handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    return handle(event, bootstrap())


def handle(event: dict[str, Any], rt: Runtime) -> dict[str, Any]:
    records = event.get("Records")
    if records is None:  # the scheduled rule
        for chat, topic in rt.store.overdue(rt.app.service.clock()):
            _tick(rt, chat, topic=topic)
        return {}
    failures = []
    for record in records:
        try:
            body = json.loads(record["body"])
            chat, at = int(body["chat"]), float(body["at"])
            topic = body.get("topic")
            if topic is not None and type(topic) is not int:
                raise TypeError("topic")
        except (KeyError, TypeError, ValueError):
            LOGGER.warning("dropping a malformed timer message")
            continue
        if not _tick(rt, chat, at, topic):
            failures.append({"itemIdentifier": record["messageId"]})
    return {"batchItemFailures": failures}


def _tick(rt: Runtime, chat: int, at: float | None = None, topic: int | None = None) -> bool:
    started = time.perf_counter()
    with metrics.collect() as figures:
        try:
            outcome = rt.run(rt.app.tick(chat, at, topic))
        except Exception:
            LOGGER.exception("timer for chat %s failed", logs.chat(chat))
            fields: dict[str, Any] = {
                "chat": logs.chat(chat),
                "action": "timer",
                "outcome": "error",
            }
        else:
            fields = outcome.log(None, started)
        handler_ms = round((time.perf_counter() - started) * 1000, 1)
        fields["latency_ms"] = handler_ms
        line = metrics.document(
            rt.settings.metrics_namespace,
            fields,
            function="timer",
            outcome=metrics.outcome_of(fields["outcome"]),
            figures=figures,
            handler_ms=handler_ms,
            now=rt.app.service.clock(),
            detailed=rt.settings.metrics_detailed,
        )
    failed = fields["outcome"] == "error"
    OUTCOMES.log(logging.WARNING if failed else logging.INFO, json.dumps(line))
    return not failed
