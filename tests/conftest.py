"""Fixtures any test may ask for by name (what they build comes from `tests.support`), and how
the tests are shared out among pytest-xdist's workers."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from xdist.scheduler import LoadScopeScheduling

from infra.fake_telegram import FakeTelegram
from infra.harness import Clock, Run

# Property tests draw their examples from a fixed seed: the same cases on every run, so a run
# fails only on a change, never on a draw (`--hypothesis-seed` or a profile of one's own
# explores further).
settings.register_profile("menteur", derandomize=True, database=None)
settings.load_profile("menteur")

# Files whose tests are handed out one by one, to whichever worker is free: the scale tests'
# shares. Every other file runs whole on one worker, in order, so a file's fixtures are built
# once (test_races' dynalite and prepared games, test_build's artifact). A scheduler of our own
# rather than --dist loadgroup: under pytest 9.2 xdist_group marks are silently ignored
# (pytest-xdist issue #1386).
SPREAD = frozenset({"tests/integration/test_scale.py"})


class _ByFile(LoadScopeScheduling):  # type: ignore[misc]  # xdist has no type information
    """A file is a unit of work, except in SPREAD, where each test is. The units with the most
    tests go first (xdist's order), so the last to run are single shares, and no worker waits
    long for the other at the end."""

    def _split_scope(self, nodeid: str) -> str:
        path = nodeid.split("::", 1)[0]
        return nodeid if path in SPREAD else path


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "load":  # another --dist given on the command line
        return None
    return _ByFile(config, log)


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
