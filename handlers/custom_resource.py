"""The stack's custom resource: `sam deploy` registers the bot with Telegram, deleting the stack
removes the webhook.

CloudFormation invokes this function with a Create, Update or Delete request and waits for the
answer PUT to the request's pre-signed `ResponseURL`: Status SUCCESS or FAILED, a Reason, and the
request's ids copied back (the custom resource request and response reference in the
CloudFormation User Guide). The resource's properties, set by the template:

    WebhookUrl                  the HTTP API's /webhook URL
    BotTokenParameterName       the SSM SecureString parameter holding the bot token
    WebhookSecretParameterName  the one holding the webhook secret
    TakeOverWebhook             "yes": a Create may take the bot from another webhook
    SecretsRevision             changed by the operator after putting new values in SSM
    CodeVersion                 this function's published version: changes with the code

CloudFormation sends an Update whenever one of them changes, so a new URL, new secrets or new
code (menus, update types) is registered on the next deploy.

It trusts nothing else a request says: anyone allowed to invoke it could send one. The webhook
URL it registers, with the secret, is the one the template put in its environment
(`WEBHOOK_URL`); a request naming another is refused. It answers only an https `ResponseURL` on
one of S3's hosts, where CloudFormation's pre-signed URLs point (and the parameters it may
read are the two its role allows).

- Create, Update: read the token and the secret, call setWebhook (the URL, the secret, the
  update types the bot reads) and set every command menu (`handlers.registration`). A Create
  first asks Telegram where the webhook points: somewhere else (another stack, another
  deployment), it fails and says so, unless `TakeOverWebhook` is "yes". Any failure answers
  FAILED, with a reason that says what to fix.
- Delete: delete the webhook if it still points at this stack's URL (another stack may have
  taken the bot since). Always SUCCESS: a stack must stay deletable when Telegram fails, the
  token was revoked or the parameters are gone; what was left undone is in the reason and the
  log.

Every request is answered before the function's own timeout: the work runs in a thread given
the time left minus what answering needs, and a request not done by then is answered as failed
(Delete: as done, webhook left). The token and the secret never reach the answer or a log line:
`handlers.logs` hides them as soon as they are read.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeGuard, TypeVar

import telegram
from telegram.error import InvalidToken, TelegramError

from handlers import logs, registration, telegram_io
from handlers.registration import RegistrationError

__all__ = ["FAILED", "SUCCESS", "handle", "is_response_url", "lambda_handler"]

LOGGER = logging.getLogger("menteur.registration")
T = TypeVar("T")

SUCCESS, FAILED = "SUCCESS", "FAILED"
# Seconds kept back from the function's time for the answer: ANSWER_ATTEMPTS PUTs of at most
# ANSWER_TIMEOUT seconds each, with a pause after each failed one.
ANSWER_ATTEMPTS = 3
ANSWER_TIMEOUT = 3.0
ANSWER_PAUSE = 0.5
ANSWER_RESERVE = ANSWER_ATTEMPTS * (ANSWER_TIMEOUT + ANSWER_PAUSE) + 1.0
# A whole answer must fit in 4096 bytes; the ids take a few hundred.
MAX_REASON = 1500
# When the context cannot tell (a test, a manual invocation): the template's Timeout.
DEFAULT_SECONDS = 60.0
# The hosts of CloudFormation's pre-signed ResponseURLs: S3's, in every partition, by bucket
# ("<bucket>.s3.<region>.amazonaws.com", "<bucket>.s3-<region>…") or by path ("s3.amazonaws.com").
S3_HOST = re.compile(r"(?:[a-z0-9][a-z0-9.-]*\.)?s3[.-](?:[a-z0-9-]+\.)*amazonaws\.com(?:\.cn)?")


class Opener(Protocol):
    """How the answer is PUT: `urllib.request.urlopen`, or the tests' stand-in for S3."""

    def __call__(self, request: urllib.request.Request, *, timeout: float) -> Any: ...


@dataclass(frozen=True)
class Answer:
    status: str
    reason: str


class AnswerError(RuntimeError):
    """CloudFormation's ResponseURL could not be reached: Lambda retries the invocation."""


def lambda_handler(event: dict[str, Any], context: Any) -> None:
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    seconds = remaining() / 1000 if callable(remaining) else DEFAULT_SECONDS
    handle(event, seconds=seconds)


def handle(
    event: Mapping[str, Any],
    *,
    seconds: float,
    ssm: Any = None,
    environ: Mapping[str, str] = os.environ,
    opener: Opener | None = None,
) -> dict[str, Any] | None:
    """Act on one request and answer it; returns the answer sent, or None for a request that
    CloudFormation did not send (no ResponseURL of its own): nothing done, nothing answered.
    `seconds`: the time left."""
    logs.configure(environ.get("LOG_LEVEL") or "INFO")
    url = event.get("ResponseURL")
    if not is_response_url(url):
        # Never the URL itself in the log: a real one lets anyone answer for the stack.
        LOGGER.error("the request has no https ResponseURL on S3: refused, nothing done")
        return None
    kind = str(event.get("RequestType", ""))
    properties = event.get("ResourceProperties")
    if not isinstance(properties, Mapping):
        properties = {}
    deleting = kind == "Delete"
    budget = seconds - ANSWER_RESERVE

    def work() -> str:
        client = ssm if ssm is not None else _ssm_client()
        if deleting:
            return _unregister(properties, client, environ)
        if kind in ("Create", "Update"):
            return _register(properties, client, environ, create=kind == "Create")
        raise RegistrationError(f"unknown request type {kind!r}")

    answer = _settle(kind, work, budget)
    response = {
        "Status": answer.status,
        "Reason": _clip(logs.redact(answer.reason)),
        # Kept across updates: a new id would make CloudFormation delete the "old" resource
        # after the update, and with it the webhook just set.
        "PhysicalResourceId": event.get("PhysicalResourceId") or _new_id(event),
        "StackId": event.get("StackId", ""),
        "RequestId": event.get("RequestId", ""),
        "LogicalResourceId": event.get("LogicalResourceId", ""),
    }
    level = logging.INFO if answer.status == SUCCESS else logging.ERROR
    LOGGER.log(level, json.dumps({"request": kind, **_without_ids(response)}))
    _answer(url, response, opener or _urlopen)
    return response


def is_response_url(url: object) -> TypeGuard[str]:
    """Whether `url` can be CloudFormation's pre-signed ResponseURL: https, on one of S3's
    hosts, with no user name, password or port of its own."""
    if not isinstance(url, str):
        return False
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        return False
    return (
        parts.scheme == "https"
        and parts.hostname is not None
        and S3_HOST.fullmatch(parts.hostname) is not None
        and port in (None, 443)
        and parts.username is None
        and parts.password is None
    )


def _settle(kind: str, work: Callable[[], str], budget: float) -> Answer:
    """Run `work` for at most `budget` seconds; whatever happens, an answer."""
    done: list[str] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            done.append(work())
        except BaseException as error:  # reported below, whatever it is
            failed.append(error)

    thread = threading.Thread(target=run, name=f"custom-resource-{kind}", daemon=True)
    thread.start()
    thread.join(max(budget, 0.0))
    if done:
        return Answer(SUCCESS, done[0])
    if failed:
        why = _explain(failed[0])
    else:
        why = f"SSM or Telegram did not answer within {max(budget, 0.0):.0f} s"
    if kind == "Delete":
        LOGGER.warning("the webhook could not be removed: %s", why)
        return Answer(SUCCESS, f"stack deletable, but the webhook was left as it was: {why}")
    return Answer(FAILED, why)


def _explain(error: BaseException) -> str:
    if isinstance(error, RegistrationError):
        return str(error)
    LOGGER.error("registration failed", exc_info=error)
    return f"unexpected {type(error).__name__}: {error}"


async def _step(name: str, call: Awaitable[T]) -> T:
    """A Bot API call whose failure says which call it was, in words for the operator."""
    try:
        return await call
    except InvalidToken:
        raise RegistrationError(
            f"{name}: Telegram refused the bot token (revoked, or mistyped in the parameter): "
            "put the current one from @BotFather"
        ) from None
    except TelegramError as error:
        raise RegistrationError(f"{name} failed: {error.message}") from None


# ---------------------------------------------------------------------------------------------
# The work.


def _register(
    properties: Mapping[str, Any], ssm: Any, environ: Mapping[str, str], *, create: bool
) -> str:
    url = _webhook_url(environ)
    named = properties.get("WebhookUrl")
    if named != url:
        raise RegistrationError(
            f"the request names the webhook URL {named!r}, not this stack's {url}: refused"
        )
    take_over = properties.get("TakeOverWebhook") == "yes"
    token_parameter = _property(properties, "BotTokenParameterName")
    secret_parameter = _property(properties, "WebhookSecretParameterName")
    token = registration.read_secure_parameter(ssm, token_parameter, "the bot token")
    logs.protect(token)
    secret = registration.read_secure_parameter(ssm, secret_parameter, "the webhook secret")
    logs.protect(secret)
    registration.check_secret(secret, secret_parameter)

    async def talk(bot: telegram.Bot) -> list[registration.Menu]:
        if create and not take_over:
            current = (await _step("getWebhookInfo", bot.get_webhook_info())).url
            if current and current != url:
                raise RegistrationError(
                    f"the bot's webhook points at {current}, not at this stack: another stack "
                    "or deployment runs this bot. Deploy with TakeOverWebhook=yes to take it "
                    "over, or remove that webhook first (telegram_setup remove)"
                )
        await _step("setWebhook", registration.set_webhook(bot, url, secret))
        return await _step("setMyCommands", registration.set_menus(bot))

    menus = _with_bot(token, environ, talk)
    return (
        f"webhook set to {url} for {', '.join(registration.ALLOWED_UPDATES)}; "
        f"command menus set: {', '.join(map(str, menus))}"
    )


def _unregister(properties: Mapping[str, Any], ssm: Any, environ: Mapping[str, str]) -> str:
    url = _webhook_url(environ)
    token = registration.read_secure_parameter(
        ssm, _property(properties, "BotTokenParameterName"), "the bot token"
    )
    logs.protect(token)

    async def talk(bot: telegram.Bot) -> str:
        current = (await _step("getWebhookInfo", bot.get_webhook_info())).url
        if not current:
            return "no webhook was set"
        if current != url:
            return f"the webhook points elsewhere ({current}): left as it is"
        await _step("deleteWebhook", registration.delete_webhook(bot))
        return f"webhook {url} deleted: Telegram keeps updates for getUpdates"

    return _with_bot(token, environ, talk)


def _webhook_url(environ: Mapping[str, str]) -> str:
    """The webhook's URL as the template computed it: never one a request names."""
    url = environ.get("WEBHOOK_URL")
    if not url:
        raise RegistrationError(
            "the function has no WEBHOOK_URL in its environment: deploy it with the project's "
            "template.yaml"
        )
    return registration.check_url(url)


def _property(properties: Mapping[str, Any], name: str) -> str:
    value = properties.get(name)
    if not isinstance(value, str) or not value:
        raise RegistrationError(f"the custom resource has no {name} property")
    return value


def _with_bot(
    token: str, environ: Mapping[str, str], work: Callable[[telegram.Bot], Awaitable[T]]
) -> T:
    """`work` on a bot of its own, on an event loop of its own (this runs in a thread)."""

    async def run() -> T:
        bot = telegram_io.make_bot(token, environ.get("TELEGRAM_API_BASE_URL") or None)
        try:
            return await work(bot)
        finally:
            await telegram_io.close_bot(bot)

    return asyncio.run(run())


def _ssm_client() -> Any:
    import boto3  # noqa: PLC0415 (the tests pass a client of their own)
    from botocore.config import Config  # noqa: PLC0415

    # Short timeouts: the whole request must be answered within the function's minute.
    config = Config(connect_timeout=5, read_timeout=10, retries={"max_attempts": 3})
    return boto3.client("ssm", config=config)


# ---------------------------------------------------------------------------------------------
# The answer.


def _answer(url: str, response: dict[str, Any], opener: Opener) -> None:
    """PUT the answer to the pre-signed URL, a few times if need be.

    The Content-Type is empty, as in AWS's own cfn-response module: the URL is signed without
    one. The URL itself is never logged: anyone holding it could answer for this stack.
    """
    body = json.dumps(response).encode()
    for attempt in range(1, ANSWER_ATTEMPTS + 1):
        request = urllib.request.Request(url, data=body, method="PUT", headers={"Content-Type": ""})
        try:
            with opener(request, timeout=ANSWER_TIMEOUT) as reply:
                reply.read()
            return
        except (urllib.error.URLError, OSError) as error:  # HTTPError is a URLError
            reason = error.reason if isinstance(error, urllib.error.URLError) else error
            LOGGER.warning("answering CloudFormation failed (attempt %d): %s", attempt, reason)
            if attempt < ANSWER_ATTEMPTS:
                time.sleep(ANSWER_PAUSE)
    raise AnswerError(f"CloudFormation could not be answered after {ANSWER_ATTEMPTS} attempts")


def _urlopen(request: urllib.request.Request, *, timeout: float) -> Any:
    return urllib.request.urlopen(request, timeout=timeout)


def _new_id(event: Mapping[str, Any]) -> str:
    # StackId: arn:aws:cloudformation:<region>:<account>:stack/<name>/<uuid>
    stack = str(event.get("StackId", "")).split("/")
    name = stack[1] if len(stack) > 2 else "stack"
    return f"{name}-{event.get('LogicalResourceId') or 'TelegramRegistration'}"


def _clip(reason: str) -> str:
    return reason if len(reason) <= MAX_REASON else reason[: MAX_REASON - 1] + "…"


def _without_ids(response: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in response.items() if k in ("Status", "Reason", "PhysicalResourceId")}
