"""Fixtures any test may ask for by name. What they build comes from `tests.support`."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from infra.fake_telegram import FakeTelegram
from tests.support import Clock, Run


@pytest.fixture
def tg() -> Iterator[FakeTelegram]:
    """A fake Bot API server of the test's own."""
    with FakeTelegram() as fake:
        yield fake


@pytest.fixture
def run() -> Iterator[Run]:
    """Runs a coroutine to its end on an event loop of the test's own: one loop for the whole
    test, as a Lambda container has (a bot's connections belong to its loop)."""
    loop = asyncio.new_event_loop()
    yield loop.run_until_complete
    loop.close()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def ptb_timedelta(monkeypatch: pytest.MonkeyPatch) -> None:
    """As deployed (template.yaml sets PTB_TIMEDELTA): python-telegram-bot 22 gives periods,
    such as a 429's retry_after, as timedeltas; without it, it warns whenever it builds one."""
    monkeypatch.setenv("PTB_TIMEDELTA", "true")


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Dummy credentials and no profile, config or custom endpoint: nothing can reach AWS."""
    for name in (
        "AWS_PROFILE",
        "AWS_DEFAULT_PROFILE",
        "AWS_REGION",
        "AWS_ENDPOINT_URL",
        "AWS_ENDPOINT_URL_DYNAMODB",
        "AWS_ENDPOINT_URL_SQS",
        "AWS_ENDPOINT_URL_SSM",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
