"""The webhook Lambda: Telegram POSTs an update, the bot applies it, Telegram gets a status.

401 when the secret header does not match (nothing is read or touched); 200 for anything
applied, refused, repeated or not understood (so Telegram does not retry it forever); 500 only
when nothing was committed and trying again can help (the store was busy or failing).
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import time
from typing import Any

from handlers import metrics
from handlers.config import secret_matches
from handlers.outcomes import Why, ignored
from handlers.runtime import Runtime, bootstrap, in_lambda
from handlers.service import Busy

LOGGER = logging.getLogger("menteur.webhook")
OUTCOMES = logging.getLogger("menteur.webhook.outcome")  # one line per update: see handlers.metrics
# The header Telegram sends the webhook's secret in, spelled as Lambda's HTTP events spell every
# header (in lower case). The one spelling of its name: the local runner and the tests use it.
SECRET_HEADER = "x-telegram-bot-api-secret-token"
MAX_BODY = 1 << 20  # Telegram's updates are a few kilobytes: anything huge is not one


# In Lambda, build at import: the init phase is not billed as the first request's latency.
if in_lambda():
    bootstrap()


def lambda_handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    return handle(event, bootstrap())


def handle(event: dict[str, Any], rt: Runtime) -> dict[str, Any]:
    started = time.perf_counter()
    with metrics.collect() as figures:
        response, line = _handle(event, rt)
        level = logging.INFO if response["statusCode"] == 200 else logging.WARNING
        fields = {**line, "latency_ms": round((time.perf_counter() - started) * 1000, 1)}
        OUTCOMES.log(level, json.dumps(_document(rt, fields, figures)))
    return response


def _document(rt: Runtime, fields: dict[str, Any], figures: metrics.Figures) -> dict[str, Any]:
    return metrics.document(
        rt.settings.metrics_namespace,
        fields,
        function="webhook",
        outcome=metrics.outcome_of(str(fields["outcome"])),
        figures=figures,
        handler_ms=float(fields["latency_ms"]),
        now=rt.app.service.clock(),
        detailed=rt.settings.metrics_detailed,
    )


def _handle(event: dict[str, Any], rt: Runtime) -> tuple[dict[str, Any], dict[str, Any]]:
    """The HTTP response, and the update's outcome line (without its time)."""
    headers = {str(k).lower(): v for k, v in (event.get("headers") or {}).items()}
    if not secret_matches(rt.settings.webhook_secret, headers.get(SECRET_HEADER)):
        return {"statusCode": 401, "body": ""}, {"outcome": "refused:secret"}
    data = _body(event)
    update_id = data.get("update_id") if isinstance(data, dict) else None
    update_id = update_id if type(update_id) is int else None
    if data is None:
        outcome = ignored(Why.MALFORMED)
    else:
        try:
            outcome = rt.run(rt.app.handle(data))
        except Busy as e:
            return {"statusCode": 500, "body": ""}, {
                "update": update_id,
                "outcome": "busy",
                "why": str(e),
            }
        except Exception:
            # The store failed before a commit (a commit is never followed by an exception:
            # sending absorbs its own errors). Telegram will send the update again.
            LOGGER.exception("update %s failed", update_id)
            return {"statusCode": 500, "body": ""}, {"update": update_id, "outcome": "error"}
    line = outcome.log(update_id, time.perf_counter())  # its latency_ms: set by handle()
    if outcome.webhook_reply is None:
        return {"statusCode": 200, "body": ""}, line
    return {
        "statusCode": 200,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps(outcome.webhook_reply, ensure_ascii=False),
    }, line


def _body(event: dict[str, Any]) -> Any:
    body = event.get("body")
    if not isinstance(body, str) or len(body) > MAX_BODY:
        return None
    try:
        if event.get("isBase64Encoded"):
            body = base64.b64decode(body, validate=True).decode()
        return json.loads(body)
    except (ValueError, binascii.Error, RecursionError):
        return None
