"""Settings from the environment and from SSM SecureString parameters (moto), and the
webhook secret check."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from handlers import config
from handlers.config import ConfigError, Settings, secret_matches

TOKEN = "123456:AAH-very-secret-token"
SECRET = "webhook-s3cret-value"
TOKEN_PARAMETER = "/menteur/telegram-bot-token"
SECRET_PARAMETER = "/menteur/telegram-webhook-secret"


@pytest.fixture
def ssm(aws_env: None) -> Iterator[Any]:
    """A moto SSM holding both secrets as SecureStrings."""
    with mock_aws():
        client = boto3.client("ssm")
        client.put_parameter(Name=TOKEN_PARAMETER, Value=TOKEN, Type="SecureString")
        client.put_parameter(Name=SECRET_PARAMETER, Value=SECRET, Type="SecureString")
        yield client


@pytest.fixture
def no_boto3_client(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any attempt to create a boto3 client: plain variables must not need AWS."""

    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("a boto3 client was created")

    monkeypatch.setattr(boto3, "client", refuse)


def test_plain_environment_values(no_boto3_client: None) -> None:
    settings = Settings.from_env(
        {
            "TABLE_NAME": "games-dev",
            "TELEGRAM_BOT_TOKEN": TOKEN,
            "TELEGRAM_WEBHOOK_SECRET": SECRET,
            "TELEGRAM_API_BASE_URL": "http://127.0.0.1:8081/bot",
            "TIMER_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/timers",
            "IDLE_EXPIRY_SECONDS": "3600",
            "LOG_LEVEL": "debug",
        }
    )
    assert settings == Settings(
        table_name="games-dev",
        bot_token=TOKEN,
        webhook_secret=SECRET,
        api_base_url="http://127.0.0.1:8081/bot",
        timer_queue_url="https://sqs.us-east-1.amazonaws.com/123456789012/timers",
        idle_expiry_seconds=3600.0,
        log_level="DEBUG",
    )


def test_defaults_need_only_the_token(no_boto3_client: None) -> None:
    settings = Settings.from_env({"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_API_BASE_URL": ""})
    assert settings.table_name == "menteur-games"
    assert settings.webhook_secret == ""
    assert settings.api_base_url is None
    assert settings.timer_queue_url is None
    assert settings.idle_expiry_seconds == 86400.0
    assert settings.log_level == "INFO"


def test_secrets_come_from_ssm_securestrings(ssm: Any) -> None:
    environ = {
        "TELEGRAM_BOT_TOKEN_PARAMETER": TOKEN_PARAMETER,
        "TELEGRAM_WEBHOOK_SECRET_PARAMETER": SECRET_PARAMETER,
    }
    # The client is made lazily inside from_env, or passed in.
    for settings in (Settings.from_env(environ), Settings.from_env(environ, ssm=ssm)):
        assert (settings.bot_token, settings.webhook_secret) == (TOKEN, SECRET)


def test_a_plain_variable_wins_over_its_parameter(ssm: Any) -> None:
    settings = Settings.from_env(
        {
            "TELEGRAM_BOT_TOKEN": "999:local",
            "TELEGRAM_BOT_TOKEN_PARAMETER": TOKEN_PARAMETER,
            "TELEGRAM_WEBHOOK_SECRET_PARAMETER": SECRET_PARAMETER,
        }
    )
    assert (settings.bot_token, settings.webhook_secret) == ("999:local", SECRET)


def test_a_missing_parameter_is_a_clear_error(ssm: Any) -> None:
    with pytest.raises(ConfigError, match="TELEGRAM_BOT_TOKEN_PARAMETER") as caught:
        Settings.from_env({"TELEGRAM_BOT_TOKEN_PARAMETER": "/menteur/nope"})
    assert "/menteur/nope" in str(caught.value)


def test_a_missing_token_names_both_variables(no_boto3_client: None) -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({"TELEGRAM_WEBHOOK_SECRET": SECRET})
    message = str(caught.value)
    assert "TELEGRAM_BOT_TOKEN" in message
    assert "TELEGRAM_BOT_TOKEN_PARAMETER" in message


def test_idle_expiry_must_be_a_positive_number(no_boto3_client: None) -> None:
    for bad in ("a day", "0", "-5"):
        with pytest.raises(ConfigError, match="IDLE_EXPIRY_SECONDS"):
            Settings.from_env({"TELEGRAM_BOT_TOKEN": TOKEN, "IDLE_EXPIRY_SECONDS": bad})


@pytest.mark.parametrize("bad", ["inf", "1e309", "-inf", "nan", "Infinity", "31536001", "1e300"])
def test_idle_expiry_out_of_range_is_refused_at_start_up_in_one_line(
    no_boto3_client: None, bad: str
) -> None:
    """`inf` and `1e309` read as floats, and then the timer's first look at a game raised
    OverflowError: the setting is refused where the others are, in one line that says why."""
    with pytest.raises(ConfigError, match="IDLE_EXPIRY_SECONDS") as caught:
        Settings.from_env({"TELEGRAM_BOT_TOKEN": TOKEN, "IDLE_EXPIRY_SECONDS": bad})
    message = str(caught.value)
    assert "\n" not in message and repr(bad) in message
    assert str(config.MAX_SECONDS) in message


def test_idle_expiry_up_to_a_year_is_accepted(no_boto3_client: None) -> None:
    for good, seconds in (("31536000", 31536000.0), ("1e3", 1000.0), ("0.5", 0.5)):
        settings = Settings.from_env({"TELEGRAM_BOT_TOKEN": TOKEN, "IDLE_EXPIRY_SECONDS": good})
        assert settings.idle_expiry_seconds == seconds


def test_repr_never_shows_the_token_or_the_secret(no_boto3_client: None) -> None:
    settings = Settings.from_env({"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_WEBHOOK_SECRET": SECRET})
    for text in (repr(settings), str(settings), f"{settings}", f"{settings!r}"):
        assert TOKEN not in text
        assert "very-secret" not in text
        assert SECRET not in text
    assert "menteur-games" in repr(settings)


def test_the_module_does_not_import_boto3_eagerly() -> None:
    assert "boto3" not in vars(config)


def test_secret_matches() -> None:
    assert secret_matches(SECRET, SECRET)
    assert not secret_matches(SECRET, SECRET + "x")
    assert not secret_matches(SECRET, SECRET[:-1])
    assert not secret_matches(SECRET, "")
    assert not secret_matches(SECRET, None)
    assert not secret_matches("", "")  # an unset secret matches nothing
    assert not secret_matches("", None)
    assert not secret_matches(SECRET, "sécret")  # non-ASCII is a mismatch, not a TypeError


def test_the_metrics_namespace_is_the_variable_and_empty_means_none(
    no_boto3_client: None,
) -> None:
    """template.yaml sets METRICS_NAMESPACE to "" when the deployer turns metrics off."""
    base = {"TELEGRAM_BOT_TOKEN": TOKEN}
    assert Settings.from_env(base).metrics_namespace is None
    assert Settings.from_env({**base, "METRICS_NAMESPACE": ""}).metrics_namespace is None
    named = Settings.from_env({**base, "METRICS_NAMESPACE": "Menteur/prod"})
    assert named.metrics_namespace == "Menteur/prod"


def test_every_figure_is_a_metric_only_when_the_deployer_asks_for_detailed(
    no_boto3_client: None,
) -> None:
    """template.yaml sets METRICS to its Metrics parameter: basic (the default), detailed, off."""
    base = {"TELEGRAM_BOT_TOKEN": TOKEN, "METRICS_NAMESPACE": "Menteur/prod"}
    assert not Settings.from_env(base).metrics_detailed
    assert not Settings.from_env({**base, "METRICS": "basic"}).metrics_detailed
    assert Settings.from_env({**base, "METRICS": "detailed"}).metrics_detailed
