"""Check and repair the bot's registration with Telegram by hand.

    python -m infra.telegram_setup info     [--stack NAME] [--region R]
    python -m infra.telegram_setup register [--stack NAME] [--region R] [--drop-pending-updates]
    python -m infra.telegram_setup commands [--stack NAME] [--region R]
    python -m infra.telegram_setup remove   [--stack NAME] [--region R] [--drop-pending-updates]
    python -m infra.telegram_setup generate-secret

`sam deploy` registers the bot itself (the stack's custom resource, `handlers.custom_resource`)
and `sam delete` removes the webhook; this script is for looking and for repairs. `info` prints
getWebhookInfo next to the stack's URL, the two parameters' versions and the stack's alarms in
ALARM, one line each; it exits 0 when all is well, 2 when something needs a look (its last line
says what), 1 when it could not look. `register` does what the deployment does: it reads the
stack's `WebhookUrl` output (CloudFormation), the bot token and the webhook secret (the SSM
SecureString parameters that the stack's `BotTokenParameterName` and
`WebhookSecretParameterName` parameters name, or `--token-parameter`/`--secret-parameter`),
then calls setWebhook with the secret and the update types the bot handles, and sets the
command menu in every catalogue language for group chats and private chats (all defined once,
in `handlers.registration`). `commands` sets only the menus, `remove` deletes the webhook.
`generate-secret` prints a new value for the secret parameter.

Neither the token nor the secret is ever printed: every message this script writes goes through
`_Redactor`, the libraries' own debug logging (which shows request URLs and parameters) is
held at WARNING while the script runs, and every log record is redacted as it is made
(`handlers.logs`, as in the functions). `TELEGRAM_API_BASE_URL` points the bot at another Bot
API server, as everywhere else in the project (the tests use the fake one).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dtm
import logging
import os
import re
import secrets
import string
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

import telegram
from telegram.error import TelegramError

from handlers import logs, registration, telegram_io
from handlers.registration import MAX_CONNECTIONS, RegistrationError, read_secure_parameter

DEFAULT_STACK = "menteur"
# The template's defaults, used when the stack cannot tell (and no flag does).
DEFAULT_TOKEN_PARAMETER = "/menteur/telegram-bot-token"
DEFAULT_SECRET_PARAMETER = "/menteur/telegram-webhook-secret"
TOKEN_PARAMETER_KEY = "BotTokenParameterName"
SECRET_PARAMETER_KEY = "WebhookSecretParameterName"
WEBHOOK_URL_OUTPUT = "WebhookUrl"
# `info`'s exit codes: 0 all well, 1 it could not look (the message says why), 2 it looked and
# something needs a look (its last line says what).
NEEDS_A_LOOK = 2
RECENT_ERROR = 3600.0  # seconds: a delivery error older than this is history, not news


class SetupError(RegistrationError):
    """Something the operator has to fix; the message says what (and never holds a secret)."""


# ---------------------------------------------------------------------------------------------
# AWS: the stack and the two parameters.


@dataclass(frozen=True)
class AwsClients:
    """boto3 clients for CloudFormation, SSM and CloudWatch (injected in tests)."""

    cloudformation: Any
    ssm: Any
    cloudwatch: Any = None  # `info` alone asks it

    @classmethod
    def create(cls, region: str | None) -> AwsClients:
        import boto3  # noqa: PLC0415 (generate-secret needs no AWS at all)

        session = boto3.session.Session(region_name=region)
        if region is None:
            check_region(session.region_name, os.environ.get("AWS_REGION"))
        return cls(
            session.client("cloudformation"),
            session.client("ssm"),
            session.client("cloudwatch"),
        )


def check_region(found: str | None, cli: str | None) -> None:
    """The region is the one sam reads: AWS_DEFAULT_REGION, or the profile's (boto3's chain,
    which this script's clients follow too). The AWS CLI prefers AWS_REGION: set alone, or to
    another region, it sends the CLI's commands (the parameters written) one way and sam's
    deployment another. So each such case is refused in one line."""
    if found is None:
        raise SetupError(
            "no AWS region: export AWS_DEFAULT_REGION=<the stack's region> (the AWS CLI, sam "
            "and this script all read it), or pass --region"
            + (f"; AWS_REGION={cli} is read by the AWS CLI, not by sam" if cli else "")
        )
    if cli and cli != found:
        raise SetupError(
            f"AWS_REGION is {cli} but AWS_DEFAULT_REGION (or the profile) says {found}: the AWS "
            "CLI reads the first, sam the second. Unset AWS_REGION, or pass --region"
        )


@dataclass(frozen=True)
class Stack:
    name: str
    outputs: dict[str, str] = field(default_factory=dict)
    parameters: dict[str, str] = field(default_factory=dict)

    @property
    def webhook_url(self) -> str:
        url = self.outputs.get(WEBHOOK_URL_OUTPUT, "")
        if not url:
            raise SetupError(
                f"stack {self.name!r} has no {WEBHOOK_URL_OUTPUT} output: is it this project's "
                "stack, and did its deployment finish?"
            )
        return registration.check_url(url)


def read_stack(cloudformation: Any, name: str) -> Stack:
    try:
        answer = cloudformation.describe_stacks(StackName=name)
    except Exception as error:  # botocore's errors are generated classes
        if "does not exist" in str(error):
            raise SetupError(
                f"no stack named {name!r} in this account and region: pass --stack and "
                "--region as given to `sam deploy`"
            ) from None
        raise SetupError(f"cannot read stack {name!r}: {error}") from None
    stacks = answer.get("Stacks") or []
    if not stacks:
        raise SetupError(f"no stack named {name!r}")
    found = stacks[0]
    outputs = {o["OutputKey"]: o.get("OutputValue", "") for o in found.get("Outputs") or []}
    parameters = {
        p["ParameterKey"]: p.get("ResolvedValue") or p.get("ParameterValue", "")
        for p in found.get("Parameters") or []
    }
    return Stack(name, outputs, parameters)


# ---------------------------------------------------------------------------------------------
# The webhook secret.


# Telegram's alphabet for a webhook's secret_token; a secret's first character is one of
# `SECRET_FIRST`: a value starting with "-" is read by the AWS CLI (and most tools) as an option.
SECRET_ALPHABET = string.ascii_letters + string.digits + "_-"
SECRET_FIRST = string.ascii_letters + string.digits
SECRET_LENGTH = 64


def generate_secret(choice: Callable[[str], str] = secrets.choice) -> str:
    """A new webhook secret: 64 characters of A-Z a-z 0-9 _ - (over 383 random bits), the
    first a letter or a digit. `choice` draws one character of the string it is given."""
    first = choice(SECRET_FIRST)
    return first + "".join(choice(SECRET_ALPHABET) for _ in range(SECRET_LENGTH - 1))


# ---------------------------------------------------------------------------------------------
# The commands.


@dataclass
class Options:
    action: str
    stack: str
    region: str | None
    drop_pending_updates: bool
    token_parameter: str | None
    secret_parameter: str | None
    max_connections: int


class _Redactor:
    """Writes lines with every known secret value replaced by "***"."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out, self.err = out, err
        self.hidden: list[str] = []

    def hide(self, value: str) -> None:
        if value:
            self.hidden.append(value)

    def clean(self, message: str) -> str:
        # Case-insensitively: python-telegram-bot changes the case of Telegram's error texts.
        for value in self.hidden:
            message = re.sub(re.escape(value), "***", message, flags=re.IGNORECASE)
        return message

    def say(self, message: str = "") -> None:
        print(self.clean(message), file=self.out, flush=True)

    def fail(self, message: str) -> None:
        print(f"error: {self.clean(message)}", file=self.err, flush=True)


async def _register(bot: telegram.Bot, url: str, secret: str, opts: Options, io: _Redactor) -> None:
    await registration.set_webhook(
        bot,
        url,
        secret,
        max_connections=opts.max_connections,
        drop_pending_updates=opts.drop_pending_updates,
    )
    io.say(f"Webhook set: {url}")
    io.say(
        f"  updates: {', '.join(registration.ALLOWED_UPDATES)}; at most "
        f"{opts.max_connections} connections; "
        f"pending updates {'dropped' if opts.drop_pending_updates else 'kept'}"
    )


async def _set_commands(bot: telegram.Bot, io: _Redactor) -> None:
    done = await registration.set_menus(bot)
    io.say("Command menus set: " + ", ".join(map(str, done)))


async def _remove(bot: telegram.Bot, opts: Options, io: _Redactor) -> None:
    await registration.delete_webhook(bot, drop_pending_updates=opts.drop_pending_updates)
    dropped = " (pending updates dropped)" if opts.drop_pending_updates else ""
    io.say(f"Webhook deleted{dropped}: Telegram now keeps updates for getUpdates.")


async def _info(bot: telegram.Bot, stack_url: str | None, io: _Redactor, now: float) -> list[str]:
    """Telegram's view of the webhook, one line each; returns what needs a look."""
    problems = []
    info = await bot.get_webhook_info()
    io.say(f"url: {info.url or '(none: no webhook set)'}")
    if not info.url:
        problems.append("no webhook is set")
    if stack_url is not None:
        same = info.url == stack_url
        io.say(f"  same as the stack's {WEBHOOK_URL_OUTPUT}: {'yes' if same else 'NO'}")
        if info.url and not same:
            problems.append("the webhook is not this stack's")
    io.say(f"pending updates: {info.pending_update_count}")
    if info.max_connections is not None:
        io.say(f"max connections: {info.max_connections}")
    if info.allowed_updates is not None:
        io.say(f"allowed updates: {', '.join(info.allowed_updates) or '(all but a few)'}")
    if info.ip_address:
        io.say(f"ip address: {info.ip_address}")
    io.say(f"last error: {_when_what(info.last_error_date, info.last_error_message)}")
    error = info.last_error_date
    if error is not None and now - error.timestamp() < RECENT_ERROR:
        minutes = max(0, round((now - error.timestamp()) / 60))
        problems.append(f"Telegram failed to deliver an update {minutes} min ago")
    if info.last_synchronization_error_date is not None:
        io.say(f"last synchronization error: {_when(info.last_synchronization_error_date)}")
    return problems


def _parameters(ssm: Any, names: dict[str, str], io: _Redactor) -> list[str]:
    """The SSM parameters' versions and when each last changed (never their values)."""
    problems = []
    for what, name in names.items():
        found = (
            ssm.describe_parameters(
                ParameterFilters=[{"Key": "Name", "Option": "Equals", "Values": [name]}]
            ).get("Parameters")
            or []
        )
        if not found:
            io.say(f"{what} parameter {name}: MISSING")
            problems.append(f"the {what} parameter {name} is missing")
            continue
        changed = found[0].get("LastModifiedDate")
        since = f", changed {_when(changed)}" if changed is not None else ""
        io.say(f"{what} parameter {name}: version {found[0].get('Version')}{since}")
    return problems


def _alarms(cloudwatch: Any, stack: str, io: _Redactor) -> list[str]:
    """The stack's alarms in ALARM (their names start with the stack's), one line each."""
    answer = cloudwatch.describe_alarms(AlarmNamePrefix=f"{stack}-", StateValue="ALARM")
    firing = [*answer.get("MetricAlarms", []), *answer.get("CompositeAlarms", [])]
    if not firing:
        io.say("alarms in ALARM: none")
    for alarm in firing:
        since = alarm.get("StateUpdatedTimestamp")
        when = f" since {_when(since)}" if since is not None else ""
        io.say(f"alarm in ALARM: {alarm['AlarmName']}{when}")
    return [f"{len(firing)} alarm(s) in ALARM"] if firing else []


def _when(date: dtm.datetime) -> str:
    return date.astimezone(dtm.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _when_what(date: dtm.datetime | None, message: str | None) -> str:
    if date is None:
        return "none"
    return f"{_when(date)}: {message or '(no message)'}"


async def _talk(
    opts: Options, token: str, secret: str, url: str | None, io: _Redactor, *, now: float
) -> list[str]:
    """Every Bot API call of one run, on one event loop (the bot's connections belong to it).
    Returns what `info` found needs a look."""
    bot = telegram_io.make_bot(token, os.environ.get("TELEGRAM_API_BASE_URL") or None)
    try:
        if opts.action == "register":
            assert url is not None
            await _register(bot, url, secret, opts, io)
            await _set_commands(bot, io)
            await _info(bot, url, io, now)
        elif opts.action == "commands":
            await _set_commands(bot, io)
        elif opts.action == "remove":
            await _remove(bot, opts, io)
        else:
            return await _info(bot, url, io, now)
    finally:
        await telegram_io.close_bot(bot)
    return []


def run(opts: Options, aws: AwsClients | None, io: _Redactor, now: float | None = None) -> int:
    """Do the action; the exit code: 0, or for `info` 2 when something needs a look."""
    if aws is None:
        aws = AwsClients.create(opts.region)
    stack: Stack | None = None
    if opts.action == "register" or opts.token_parameter is None:
        stack = read_stack(aws.cloudformation, opts.stack)
    parameters = stack.parameters if stack is not None else {}
    token_parameter = (
        opts.token_parameter or parameters.get(TOKEN_PARAMETER_KEY) or DEFAULT_TOKEN_PARAMETER
    )
    token = read_secure_parameter(aws.ssm, token_parameter, "the bot token")
    io.hide(token)
    logs.protect(token)
    secret = ""
    url: str | None = None
    if opts.action == "register":
        assert stack is not None
        url = stack.webhook_url
        secret_parameter = (
            opts.secret_parameter
            or parameters.get(SECRET_PARAMETER_KEY)
            or DEFAULT_SECRET_PARAMETER
        )
        secret = read_secure_parameter(aws.ssm, secret_parameter, "the webhook secret")
        io.hide(secret)
        logs.protect(secret)
        registration.check_secret(secret, secret_parameter)
    elif stack is not None:
        url = stack.outputs.get(WEBHOOK_URL_OUTPUT) or None
    now = time.time() if now is None else now
    problems = asyncio.run(_talk(opts, token, secret, url, io, now=now))
    if opts.action != "info":
        return 0
    secret_parameter = parameters.get(SECRET_PARAMETER_KEY) or DEFAULT_SECRET_PARAMETER
    names = {"bot token": token_parameter, "webhook secret": secret_parameter}
    problems += _parameters(aws.ssm, names, io)
    if aws.cloudwatch is not None:
        problems += _alarms(aws.cloudwatch, opts.stack, io)
    if problems:
        io.say(f"status: needs a look: {'; '.join(problems)}")
        return NEEDS_A_LOOK
    io.say("status: ok")
    return 0


@contextlib.contextmanager
def _quiet_libraries() -> Iterator[None]:
    """Hold the libraries' loggers at WARNING: at DEBUG/INFO they log request URLs (which hold
    the token) and request parameters (which hold the secret)."""
    saved = {name: logging.getLogger(name).level for name in logs.QUIET_LOGGERS}
    for name in saved:
        logging.getLogger(name).setLevel(logging.WARNING)
    try:
        yield
    finally:
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)


def parse(argv: Sequence[str] | None) -> Options:
    parser = argparse.ArgumentParser(
        prog="python -m infra.telegram_setup",
        description="Point Telegram at a deployed Menteur stack (see the README's Deploy to AWS).",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--stack", default=DEFAULT_STACK, help="the stack name given to sam")
    common.add_argument(
        "--region", help="the stack's region (default: AWS_DEFAULT_REGION, or the profile's)"
    )
    common.add_argument(
        "--token-parameter",
        help=f"SSM parameter of the bot token (default: the stack's {TOKEN_PARAMETER_KEY})",
    )
    drop = argparse.ArgumentParser(add_help=False)
    drop.add_argument(
        "--drop-pending-updates",
        action="store_true",
        help="have Telegram forget the updates it holds for the bot",
    )
    register = actions.add_parser(
        "register",
        parents=[common, drop],
        help="set the webhook to the stack's URL with the secret, and the command menus",
    )
    register.add_argument(
        "--secret-parameter",
        help=f"SSM parameter of the webhook secret (default: the stack's {SECRET_PARAMETER_KEY})",
    )
    register.add_argument(
        "--max-connections",
        type=int,
        default=MAX_CONNECTIONS,
        choices=range(1, 101),
        metavar="1-100",
        help=f"simultaneous webhook connections Telegram may open (default {MAX_CONNECTIONS})",
    )
    actions.add_parser("commands", parents=[common], help="set only the command menus")
    actions.add_parser("remove", parents=[common, drop], help="delete the webhook")
    actions.add_parser("info", parents=[common], help="print Telegram's view of the webhook")
    actions.add_parser("generate-secret", help="print a new random webhook secret")
    args = parser.parse_args(argv)
    return Options(
        action=args.action,
        stack=getattr(args, "stack", DEFAULT_STACK),
        region=getattr(args, "region", None),
        drop_pending_updates=getattr(args, "drop_pending_updates", False),
        token_parameter=getattr(args, "token_parameter", None),
        secret_parameter=getattr(args, "secret_parameter", None),
        max_connections=getattr(args, "max_connections", MAX_CONNECTIONS),
    )


def main(
    argv: Sequence[str] | None = None,
    *,
    aws: AwsClients | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    now: float | None = None,
) -> int:
    opts = parse(argv)
    io = _Redactor(out or sys.stdout, err or sys.stderr)
    if opts.action == "generate-secret":
        io.say(generate_secret())
        return 0
    # PTB 22 warns when it builds a RetryAfter unless opted in to v23's timedelta periods.
    os.environ.setdefault("PTB_TIMEDELTA", "true")
    try:
        with _quiet_libraries():
            return run(opts, aws, io, now)
    except RegistrationError as error:
        io.fail(str(error))
        return 1
    except TelegramError as error:
        io.fail(f"the Bot API call failed: {error.message}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
