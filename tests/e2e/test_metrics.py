"""A whole game through the webhook and the timer, read back from its metrics: each outcome
line's Embedded Metric Format figures add up to what happened (the moves made, the games, what
the fake Bot API answered, 429s and a 403 included, One-tap Join's questions apart), and no
dimension names a person or a group; with the default, basic set, the lines write only the
few metrics of that set (tests/unit/test_alarms.py counts them against the free tier)."""

from __future__ import annotations

import contextlib
import json
import logging
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from engine import Phase
from engine.events import StopReason
from handlers.metrics import METRICS, OUTCOME_LOGGERS, dimensions
from handlers.outcomes import Result
from handlers.store import Change, Conflict
from infra.fake_telegram import blocked_by_user, too_many_requests
from infra.harness import GROUP, GROUP_TITLE, Person, by_id, people
from infra.harness.bot import Table, Watcher, open_and_start, play_to_a_final_play, running_bot
from infra.harness.stack import listening

NAMESPACE = "Menteur/test"
STATUS = {200: "TelegramOk", 429: "Telegram429", 403: "Telegram403", 400: "Telegram400"}
DIMENSIONS = {
    "Function": {"webhook", "timer"},
    "Outcome": {r.value for r in Result} | {"stale", "forged", "busy", "error"},
    "Ending": {"won", "removed", "stopped_by_opener", "stopped_by_admin"}
    | {r.value for r in StopReason if r is not StopReason.STOP},
}


@pytest.fixture(autouse=True)
def timedelta_periods(monkeypatch: pytest.MonkeyPatch) -> None:
    """As deployed (template.yaml): a 429's retry_after as a timedelta, without a warning."""
    monkeypatch.setenv("PTB_TIMEDELTA", "true")


class Lines(logging.Handler):
    """The outcome lines, parsed, as CloudWatch Logs would receive them."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.docs: list[dict[str, Any]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.docs.append(json.loads(record.getMessage()))

    def total(self, metric: str, **dimensions: str) -> float:
        return sum(
            float(doc.get(metric, 0))
            for doc in self.docs
            if all(doc.get(k) == v for k, v in dimensions.items()) and metric in emitted(doc)
        )


def emitted(doc: dict[str, Any]) -> set[str]:
    if "_aws" not in doc:
        return set()
    return {m["Name"] for d in doc["_aws"]["CloudWatchMetrics"] for m in d["Metrics"]}


@contextlib.contextmanager
def captured() -> Iterator[Lines]:
    lines = Lines()
    with listening(lines, OUTCOME_LOGGERS):
        yield lines


def metered(seed: int, *, detailed: bool = True) -> contextlib.AbstractContextManager[Table]:
    """A bot whose outcome lines carry their metrics (`detailed`: every figure, else the basic
    ones). Every button's answer is a request of the bot's own, counted with the others (a
    webhook reply would be performed by Telegram)."""
    return running_bot(
        seed=seed, metrics_namespace=NAMESPACE, metrics_detailed=detailed, webhook_replies=False
    )


def a_game_with_refusals(table: Table, players: list[Person]) -> Person:
    """A whole game with a 403 and two 429s; returns who won it."""
    open_and_start(table, players, "/newgame off")
    # A 403: a player's private chat refuses the bot (their /help goes unanswered).
    table.tg.fail_next("sendMessage", players[2].id, error=blocked_by_user())
    table.say(players[2], "/help", chat=players[2].id)
    # A 429 waited out within the update (1 s is under the wait allowed), and one too
    # long to wait: the screens are owed, and the timer draws them again.
    table.tg.fail_next(None, GROUP, error=too_many_requests(1))
    first = by_id(players, table.game().awaited)
    table.play(first, set(sorted(table.hand(first))[:1]))
    table.tg.fail_next(None, GROUP, error=too_many_requests(10))
    second = by_id(players, table.game().awaited)
    table.play(second, set(sorted(table.hand(second))[:1]))
    owed = table.record().owed
    assert owed is not None, "a redraw is owed"
    table.clock.advance(owed - table.clock.now + 1.5)
    table.sweep()
    assert table.record().owed is None, "and paid"

    finisher = play_to_a_final_play(table, players, Watcher(table, players))
    deadline = table.game().deadline
    assert deadline is not None
    table.clock.advance(deadline - table.clock.now + 2.0)
    table.sweep()  # nobody challenged in time: the final play stands and wins
    return finisher


def test_a_whole_game_through_the_webhook_and_the_timer_adds_up_in_its_metrics() -> None:
    players = people(3)
    with metered(3) as table, captured() as lines:
        finisher = a_game_with_refusals(table, players)
        game = table.game()
        assert game.phase is Phase.OVER and game.winner is not None
        assert game.ids[game.winner] == finisher.id

        docs = lines.docs
        webhook = [d for d in docs if d["Function"] == "webhook"]
        timer = [d for d in docs if d["Function"] == "timer"]
        assert [d["Outcome"] for d in timer] == ["resent", "applied"]  # the redraw, the win
        # One line per update, each counted once, with its handler time.
        assert lines.total("Updates", Function="webhook") == len(webhook)
        assert all(d["HandlerTime"] == d["latency_ms"] for d in docs)
        # Counts equal to the moves made: every play applied is one of the game's plays.
        plays = lines.total("Updates", Function="webhook", Outcome="applied", action="Play")
        assert plays == game.plays
        assert lines.total("GamesOpened") == 1 and lines.total("GamesStarted") == 1
        (ended,) = [d for d in docs if "GamesEnded" in emitted(d)]
        assert ended["Function"] == "timer" and ended["Ending"] == "won"
        assert ended["PlaysPerGame"] == game.plays
        # Telegram's answers, as the fake Bot API gave them: every request is the bot's.
        calls = table.tg.calls()
        # One-tap Join asks whether each joiner's private chat takes the bot (sendChatAction):
        # nobody here had started it, so each question is answered 403, which is counted
        # apart, and Telegram403 is the one real 403 (the blocked /help above).
        probe = [c.method == "sendChatAction" and c.status == 403 for c in calls]
        assert sum(probe) == len(players)
        answered = Counter(
            "PrivateChatClosed" if asked else STATUS[call.status]
            for call, asked in zip(calls, probe, strict=True)
        )
        assert answered["Telegram429"] == 2 and answered["Telegram403"] == 1
        assert answered["PrivateChatClosed"] == len(players)
        assert {name: lines.total(name) for name in answered} == answered
        assert lines.total("TelegramWait") == 1.0
        assert lines.total("RedrawsOwed") == 1 and lines.total("RedrawsPaid") == 1
        # The timer's lateness: from the moment each tick was set for to its decision.
        assert [d["TimerLateness"] for d in timer] == [1.5, 2.0]

        # No dimension names a person or the group, whatever the line's other fields hold.
        private = {str(GROUP), GROUP_TITLE} | {str(p.id) for p in players}
        private |= {p.name for p in players}
        for doc in docs:
            for directive in doc["_aws"]["CloudWatchMetrics"]:
                assert directive["Namespace"] == NAMESPACE
                for dimension in {name for s in directive["Dimensions"] for name in s}:
                    assert doc[dimension] in DIMENSIONS[dimension]
                    assert doc[dimension] not in private
                for metric in directive["Metrics"]:
                    assert metric["Name"] in METRICS
                    assert type(doc[metric["Name"]]) in (int, float)


def test_by_default_the_lines_write_only_the_basic_metrics() -> None:
    """The default deployment's lines: metrics only on the lines that count something of the
    basic set, each with the basic set's dimensions, so that the stack's custom metrics are
    the few that tests/unit/test_alarms.py counts."""
    players = people(3)
    with metered(3, detailed=False) as table, captured() as lines:
        a_game_with_refusals(table, players)
    written: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    for doc in lines.docs:
        for directive in doc.get("_aws", {}).get("CloudWatchMetrics", []):
            for metric in directive["Metrics"]:
                sets = dimensions(metric["Name"], detailed=False)
                assert [tuple(s) for s in directive["Dimensions"]] == list(sets)
                for keys in sets:
                    written.add((metric["Name"], tuple((k, doc[k]) for k in keys)))
    basic = {name for name, metric in METRICS.items() if metric.basic}
    assert {name for name, _ in written} == basic - {"Telegram401"}  # the token was fine
    assert ("GamesEnded", (("Function", "timer"),)) in written  # ended by the clock
    assert len(written) <= 10
    assert any("_aws" not in doc for doc in lines.docs), "an ordinary update: a plain line"


def test_without_a_namespace_the_outcome_lines_carry_no_metrics() -> None:
    players = people(2)
    with running_bot(seed=3) as table, captured() as lines:
        open_and_start(table, players)
        assert lines.docs and all("_aws" not in doc for doc in lines.docs)
        assert all("Updates" not in doc for doc in lines.docs)


def test_forged_requests_and_failed_updates_are_counted_with_their_update_ids() -> None:
    players = people(2)
    with metered(3) as table, captured() as lines:
        update = table.updates.message(players[0], "/newgame", GROUP)
        assert table.post(update, secret="not-the-secret").status == 401
        (forged,) = lines.docs
        assert forged["outcome"] == "refused:secret" and forged["Outcome"] == "forged"
        assert forged["Updates"] == 1 and "chat" not in forged  # nothing of it was read

        def failing(record: object) -> None:
            raise RuntimeError("the store is down")

        table.c.store.after_load = failing
        assert table.post(update).status == 500
        failed = lines.docs[-1]
        assert failed["update"] == update["update_id"]
        assert failed["outcome"] == "error" and failed["Outcome"] == "error"
        assert lines.total("Updates", Function="webhook", Outcome="error") == 1


def test_a_write_refused_by_the_version_check_is_counted_once_where_it_happened() -> None:
    """The transaction counts its conflicts itself, so that one nested in another (a game
    ended for a removed bot, a moved group) is counted too."""
    players = people(2)
    with metered(3) as table, captured() as lines:
        refused: list[str] = []

        def refused_once(change: Change) -> None:
            if not refused:  # the action's conditional write, the first time
                refused.append(change.key)
                raise Conflict(change.key)

        table.c.store.before_save = refused_once
        assert table.say(players[0], "/newgame").status == 200
        assert refused and table.game() is not None, "written on the second attempt"
        assert lines.docs[-1]["conflicts"] == 1
        assert lines.total("WriteConflicts", Function="webhook") == 1
