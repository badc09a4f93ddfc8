"""The bot's settings, read once per process from the environment (and SSM in Lambda).

The same variable names serve locally and in Lambda. In Lambda the two secrets come from SSM
SecureString parameters named by the ``*_PARAMETER`` variables, because a plain environment
variable shows in the console; locally they are plain variables.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["ConfigError", "Settings", "SsmClient", "secret_matches"]


MAX_SECONDS = 365 * 24 * 3600  # the longest duration a setting may give


class ConfigError(ValueError):
    """A setting is missing or malformed."""


class SsmClient(Protocol):
    """The one call of boto3's SSM client used here."""

    def get_parameter(self, *, Name: str, WithDecryption: bool) -> Mapping[str, Any]: ...


@dataclass(frozen=True, kw_only=True)
class Settings:
    table_name: str = "menteur-games"
    # Kept out of repr(): settings get logged, and tracebacks show locals.
    bot_token: str = field(repr=False)
    #: Empty when unset: then no webhook request is accepted (see secret_matches).
    webhook_secret: str = field(default="", repr=False)
    #: Another Bot API server, e.g. "http://127.0.0.1:8081/bot"; None for Telegram's own.
    api_base_url: str | None = None
    timer_queue_url: str | None = None
    idle_expiry_seconds: float = 86400.0
    log_level: str = "INFO"
    #: The CloudWatch namespace of the metrics each outcome line carries; None: plain lines.
    metrics_namespace: str | None = None
    #: Every figure as a metric (METRICS=detailed), not only the basic set (handlers.metrics).
    metrics_detailed: bool = False

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] = os.environ, ssm: SsmClient | None = None
    ) -> Settings:
        """Read the settings; `ssm` is made (lazily) only if a ``*_PARAMETER`` names a secret."""
        secrets = _Secrets(environ, ssm)
        token = secrets.get("TELEGRAM_BOT_TOKEN")
        if not token:
            raise ConfigError(
                "no bot token: set TELEGRAM_BOT_TOKEN, or TELEGRAM_BOT_TOKEN_PARAMETER to the "
                "name of an SSM SecureString parameter holding it"
            )
        return cls(
            table_name=environ.get("TABLE_NAME") or "menteur-games",
            bot_token=token,
            webhook_secret=secrets.get("TELEGRAM_WEBHOOK_SECRET"),
            api_base_url=environ.get("TELEGRAM_API_BASE_URL") or None,
            timer_queue_url=environ.get("TIMER_QUEUE_URL") or None,
            idle_expiry_seconds=_seconds(environ, "IDLE_EXPIRY_SECONDS", 86400.0),
            log_level=(environ.get("LOG_LEVEL") or "INFO").upper(),
            metrics_namespace=environ.get("METRICS_NAMESPACE") or None,
            metrics_detailed=environ.get("METRICS") == "detailed",
        )


@dataclass
class _Secrets:
    """Secrets from `NAME`, else from the SSM parameter that `NAME_PARAMETER` names."""

    environ: Mapping[str, str]
    ssm: SsmClient | None

    def get(self, name: str) -> str:
        value = self.environ.get(name)
        if value:
            return value
        parameter = self.environ.get(f"{name}_PARAMETER")
        if not parameter:
            return ""
        if self.ssm is None:
            import boto3  # noqa: PLC0415 (only here: the local runner needs no AWS at all)

            self.ssm = boto3.client("ssm")
        try:
            answer = self.ssm.get_parameter(Name=parameter, WithDecryption=True)
            return str(answer["Parameter"]["Value"])
        except Exception as error:  # botocore's errors are generated classes
            raise ConfigError(
                f"cannot read {name} from the SSM parameter {parameter!r} "
                f"(named by {name}_PARAMETER): {error}"
            ) from error


def _seconds(environ: Mapping[str, str], name: str, default: float) -> float:
    text = environ.get(name)
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"{name} must be a number of seconds, not {text!r}") from None
    # `inf` and `1e309` read as a float but no deadline can be computed from them, and a time
    # past the store's number range cannot be written: a year is more than any idle game needs.
    if not 0 < value <= MAX_SECONDS:
        raise ConfigError(
            f"{name} must be a number of seconds above 0 and at most {MAX_SECONDS} (a year), "
            f"not {text!r}"
        )
    return value


def secret_matches(expected: str, header: str | None) -> bool:
    """Whether the webhook's secret header is the configured secret, in constant time.

    Nothing matches an unset secret: a webhook without one would accept forged updates.
    """
    if not expected or not header:
        return False
    # Bytes: compare_digest refuses non-ASCII str, and a forged header may hold anything.
    return hmac.compare_digest(expected.encode(), header.encode())
