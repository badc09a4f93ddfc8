"""The metrics' Embedded Metric Format lines, against CloudWatch's specification.

The specification (CloudWatch's "Specification: Embedded metric format"): the root holds an
`_aws` object with `Timestamp` (milliseconds since the epoch) and `CloudWatchMetrics`, a list of
directives; each directive names a `Namespace`, `Dimensions` (a list of dimension sets, each a
list of at most 30 names) and `Metrics` (a list of `{Name, Unit}`, at most 100); every name a
directive refers to is a member of the root, a dimension's value a string, a metric's value a
number or an array of at most 100 numbers.
"""

from __future__ import annotations

import io
import json
import logging
from typing import Any

import pytest

from engine import Game
from engine.events import Event, Started, Stopped, StopReason, Won
from handlers import metrics
from handlers.metrics import METRICS, Figures
from handlers.outcomes import Result, Why

UNITS = {
    "Seconds",
    "Microseconds",
    "Milliseconds",
    "Bytes",
    "Kilobytes",
    "Megabytes",
    "Gigabytes",
    "Terabytes",
    "Bits",
    "Kilobits",
    "Megabits",
    "Gigabits",
    "Terabits",
    "Percent",
    "Count",
    "Bytes/Second",
    "Kilobytes/Second",
    "Megabytes/Second",
    "Gigabytes/Second",
    "Terabytes/Second",
    "Bits/Second",
    "Kilobits/Second",
    "Megabits/Second",
    "Gigabits/Second",
    "Terabits/Second",
    "Count/Second",
    "None",
}
NOW = 1_767_225_600.25  # 2026-01-01, a quarter of a second past
# An outcome line's own fields, as the webhook logs them: a chat id and an update id, which
# are properties of the line, never a dimension or a metric.
FIELDS = {"update": 5001, "chat": -100987654321, "kind": "press", "action": "Play"}
# The words a dimension may hold: results, and the few the metrics add.
OUTCOMES = {r.value for r in Result} | {"stale", "forged", "busy", "error"}
ENDINGS = {"won", "removed", "stopped_by_opener", "stopped_by_admin"} | {
    r.value for r in StopReason if r is not StopReason.STOP
}


def everything() -> Figures:
    """Figures with every metric counted, as no single update would."""
    figures = Figures()
    for name in METRICS:
        figures.add(name, 2.5 if METRICS[name].unit != "Count" else 3)
    figures.ending = "won"
    return figures


def line(
    figures: Figures,
    outcome: str = "applied",
    fields: dict[str, object] = FIELDS,
    *,
    detailed: bool = True,
) -> dict[str, Any]:
    doc = metrics.document(
        "Menteur/test",
        dict(fields, outcome=outcome),
        function="webhook",
        outcome=outcome,
        figures=figures,
        handler_ms=12.5,
        now=NOW,
        detailed=detailed,
    )
    # What CloudWatch reads: one JSON object, alone on its line.
    text = json.dumps(doc)
    assert "\n" not in text
    parsed: dict[str, Any] = json.loads(text)
    return parsed


def check_against_the_specification(doc: dict[str, Any]) -> None:
    meta = doc["_aws"]
    assert set(meta) <= {"Timestamp", "CloudWatchMetrics", "LogGroupName"}
    assert isinstance(meta["Timestamp"], int)
    assert meta["Timestamp"] == int(NOW * 1000)  # milliseconds, not seconds
    directives = meta["CloudWatchMetrics"]
    assert isinstance(directives, list) and directives
    for directive in directives:
        assert set(directive) == {"Namespace", "Dimensions", "Metrics"}
        assert isinstance(directive["Namespace"], str) and 1 <= len(directive["Namespace"]) <= 255
        assert isinstance(directive["Dimensions"], list)
        for dimension_set in directive["Dimensions"]:
            assert isinstance(dimension_set, list) and len(dimension_set) <= 30
            for name in dimension_set:
                assert isinstance(doc[name], str) and 1 <= len(doc[name]) <= 1024
        assert 1 <= len(directive["Metrics"]) <= 100
        for metric in directive["Metrics"]:
            assert set(metric) <= {"Name", "Unit", "StorageResolution"}
            assert metric["Unit"] in UNITS
            value = doc[metric["Name"]]
            values = value if isinstance(value, list) else [value]
            assert len(values) <= 100
            assert all(type(v) in (int, float) for v in values)


@pytest.mark.parametrize("detailed", [False, True], ids=["basic", "detailed"])
def test_every_metric_of_the_set_is_emitted_to_the_specification(detailed: bool) -> None:
    doc = line(everything(), detailed=detailed)
    check_against_the_specification(doc)
    emitted = {m["Name"] for d in doc["_aws"]["CloudWatchMetrics"] for m in d["Metrics"]}
    assert emitted == {n for n in METRICS if metrics.dimensions(n, detailed=detailed)}
    assert detailed or emitted == {
        "Telegram401",
        "Telegram403",
        "Telegram429",
        "RedrawsOwed",
        "TimerLateness",
        "GamesStarted",
        "GamesEnded",
    }
    for directive in doc["_aws"]["CloudWatchMetrics"]:
        for metric in directive["Metrics"]:
            assert metric["Unit"] == METRICS[metric["Name"]].unit
            sets = metrics.dimensions(metric["Name"], detailed=detailed)
            assert [tuple(s) for s in directive["Dimensions"]] == list(sets)


def test_with_the_basic_set_an_ordinary_update_is_a_plain_line() -> None:
    """Its count, time and Telegram's 200s are AWS's to measure (the API's requests, the
    function's duration): only what the bot alone knows is a metric by default."""
    figures = Figures()
    figures.add("TelegramOk", 2)
    assert line(figures, detailed=False) == dict(FIELDS, outcome="applied")
    figures.add("Telegram429")
    doc = line(figures, detailed=False)
    check_against_the_specification(doc)
    (directive,) = doc["_aws"]["CloudWatchMetrics"]
    assert directive["Dimensions"] == [[]]  # one metric, with no dimension
    assert directive["Metrics"] == [{"Name": "Telegram429", "Unit": "Count"}]
    assert doc["Telegram429"] == 1 and "TelegramOk" not in doc and "Updates" not in doc


def test_an_ordinary_update_carries_its_count_and_time_and_no_zeros() -> None:
    figures = Figures()
    figures.add("TelegramOk", 2)
    figures.add("TelegramWait", 0.0)
    doc = line(figures)
    check_against_the_specification(doc)
    assert doc["Updates"] == 1 and doc["HandlerTime"] == 12.5 and doc["TelegramOk"] == 2
    assert "TelegramWait" not in doc and "GamesEnded" not in doc and "Ending" not in doc
    assert doc["Function"] == "webhook" and doc["Outcome"] == "applied"
    # The line's own fields are kept beside the metrics, for the Logs Insights queries.
    assert doc["chat"] == FIELDS["chat"] and doc["update"] == FIELDS["update"]


def test_without_a_namespace_the_line_is_the_outcome_alone() -> None:
    fields = dict(FIELDS, outcome="applied")
    doc = metrics.document(
        None,
        fields,
        function="timer",
        outcome="applied",
        figures=everything(),
        handler_ms=1.0,
        now=NOW,
    )
    assert doc == fields


def test_no_dimension_or_metric_carries_a_user_or_a_chat() -> None:
    """Dimensions are a few known words; the ids, names and titles of a line are never one."""
    person = {"chat": 987654321, "user": 987654321, "name": "Alice", "title": "Friday poker"}
    figures = everything()
    figures.ending = "stopped_by_admin"
    doc = line(figures, "refused", {**FIELDS, **person})
    check_against_the_specification(doc)
    directives = doc["_aws"]["CloudWatchMetrics"]
    dimensions = {name for d in directives for s in d["Dimensions"] for name in s}
    assert dimensions <= {"Function", "Outcome", "Ending"}
    assert doc["Function"] in {"webhook", "timer"}
    assert doc["Outcome"] in OUTCOMES
    assert doc["Ending"] in ENDINGS
    named = {m["Name"] for d in directives for m in d["Metrics"]} | dimensions
    assert named.isdisjoint(person) and named.isdisjoint(FIELDS)
    for name in named:
        assert str(doc[name]) not in {str(v) for v in person.values()}


def test_outcome_dimension_is_the_result_with_stale_and_forged_apart() -> None:
    assert metrics.outcome_of("applied") == "applied"
    assert metrics.outcome_of(f"refused:{Why.OLD_GAME}") == "stale"
    assert metrics.outcome_of(f"refused:{Why.BAD_BUTTON}") == "forged"
    assert metrics.outcome_of("refused:secret") == "forged"
    assert metrics.outcome_of("refused:no_bullets") == "refused"
    assert metrics.outcome_of(f"ignored:{Why.KIND}") == "ignored"
    for result in Result:
        assert metrics.outcome_of(result.value) in OUTCOMES


def test_telegram_statuses_are_counted_by_kind() -> None:
    with metrics.collect() as figures:
        for status in (200, 200, 429, 403, 401, 400, 404, 409, 500, 502, None):
            metrics.telegram(status)
    assert figures.values == {
        "TelegramOk": 2,
        "Telegram429": 1,
        "Telegram403": 1,
        "Telegram401": 1,
        "Telegram400": 3,
        "Telegram5xx": 2,
        "TelegramTimeout": 1,
    }
    metrics.telegram(200)  # outside an update: counted nowhere, and no error
    assert figures.values["TelegramOk"] == 2


def test_a_403_answering_the_join_question_is_counted_apart_from_blocked_bots() -> None:
    with metrics.collect() as figures:
        with metrics.asking():
            for status in (403, 403, 200, 429, None):
                metrics.telegram(status)
        metrics.telegram(403)  # a send refused after the question: a blocked bot again
    assert figures.values == {
        "PrivateChatClosed": 2,
        "TelegramOk": 1,
        "Telegram429": 1,
        "TelegramTimeout": 1,
        "Telegram403": 1,
    }


def test_games_are_counted_with_how_they_ended() -> None:
    game = Game(opener=1, updated=NOW, ids=(1, 2, 3), plays=17)
    cases: list[tuple[list[Event], bool, str]] = [
        ([Won(winner=2, ranking=(2, 1, 3))], False, "won"),
        ([Stopped(by=1)], False, "stopped_by_opener"),
        ([Stopped(by=3)], False, "stopped_by_admin"),
        ([Stopped(by=None, reason=StopReason.IDLE)], False, "idle"),
        ([Stopped(by=None, reason=StopReason.VOTE)], False, "vote"),
        ([Stopped(by=1)], True, "removed"),
    ]
    for events, removed, ending in cases:
        with metrics.collect() as figures:
            metrics.game_events(game, events, new_game=False, removed=removed)
        assert figures.ending == ending
        assert figures.values == {"GamesEnded": 1, "PlaysPerGame": 17}
    with metrics.collect() as figures:
        metrics.game_events(None, [], new_game=True, removed=False)
        metrics.game_events(game, [Started(order=(1, 2, 3))], new_game=False, removed=False)
    assert figures.values == {"GamesOpened": 1, "GamesStarted": 1}
    assert figures.ending is None


def test_in_lambda_the_lines_go_bare_to_standard_output_whatever_the_log_level() -> None:
    """CloudWatch reads EMF only from a log event that is one JSON object: no level, time or
    request id in front of it, as the Lambda runtime's handler would write them."""
    loggers = [logging.getLogger(name) for name in metrics.OUTCOME_LOGGERS]
    saved = [(x.level, x.propagate, list(x.handlers)) for x in loggers]
    root = logging.getLogger()
    root_level = root.level
    stream = io.StringIO()
    try:
        root.setLevel(logging.ERROR)  # LOG_LEVEL=ERROR: the metrics must not go with it
        metrics.to_stdout(stream)
        metrics.to_stdout(stream)  # once per container, however often the runtime is built
        doc = line(everything())
        logging.getLogger("menteur.webhook.outcome").info(json.dumps(doc))
        logging.getLogger("menteur.timer.outcome").warning(json.dumps(doc))
        written = stream.getvalue().splitlines()
        assert [json.loads(x) for x in written] == [doc, doc]
        assert all(not x.propagate for x in loggers)
    finally:
        root.setLevel(root_level)
        for logger, (level, propagate, handlers) in zip(loggers, saved, strict=True):
            logger.setLevel(level)
            logger.propagate = propagate
            logger.handlers[:] = handlers
