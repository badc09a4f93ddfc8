"""The bot's figures as CloudWatch metrics, in Embedded Metric Format (EMF).

Each update and each timer tick already ends in one JSON line with its outcome; that line also
carries the update's figures and an `_aws` block naming them, and CloudWatch Logs turns them
into metrics as it ingests the line: no API call, nothing waited for. Counts are gathered
while the update runs (`collect`), by small hooks where they are known: the HTTP layer for
Telegram's answers, the transaction for conflicts and games, the timer for its lateness.

Dimensions are low-cardinality words only (which function, what outcome, how a game ended):
never a user's id or name, a chat's id or title. Those stay in the line's other fields, for
the Logs Insights queries, and never become a metric.

Two sets (the template's `Metrics` parameter). The default, basic, is what only the bot knows
and fits CloudWatch's free tier of 10 custom metrics (each name with each set of dimension
values is one): Telegram's refusals (401, 403, 429), screens owed after a refusal, timers'
lateness, games started, and games ended by a move or by the clock. AWS measures the rest for
free (the functions' errors and duration, the API's 5xx, the queues, the table). Detailed adds
every other figure, by function and outcome, priced in docs/deploying.md.

In Lambda the outcome loggers write the bare JSON line to standard output (`to_stdout`):
CloudWatch reads EMF only from a log event that is one JSON object, and the runtime's log
handler would put its level, time and request id in front of it.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import IO, Any, NamedTuple

from engine import Event, Game, StopReason
from engine import events as ev

__all__ = [
    "METRICS",
    "OUTCOME_LOGGERS",
    "Figures",
    "Metric",
    "add",
    "asking",
    "collect",
    "dimensions",
    "document",
    "game_events",
    "outcome_of",
    "put",
    "telegram",
    "to_stdout",
]

#: Where the outcome lines are logged (children of the entry points' loggers).
OUTCOME_LOGGERS = ("menteur.webhook.outcome", "menteur.timer.outcome")

COUNT, MILLISECONDS, SECONDS = "Count", "Milliseconds", "Seconds"
Dimensions = tuple[tuple[str, ...], ...]
ALONE: Dimensions = ((),)  # one metric, with no dimension
BY_FUNCTION: Dimensions = (("Function",),)


class Metric(NamedTuple):
    """A figure's unit, and its dimension sets in each set of metrics (() for none: not
    emitted in that set)."""

    unit: str
    detailed: Dimensions
    basic: Dimensions = ()


#: Every metric the bot may emit. The template's alarms and dashboards name only these, with
#: these dimensions (a test holds them to it, and counts the basic set against the free tier).
METRICS: dict[str, Metric] = {
    # Per update or tick, always present.
    "Updates": Metric(COUNT, (("Function", "Outcome"),)),
    "HandlerTime": Metric(MILLISECONDS, BY_FUNCTION),
    # Telegram's answers to the bot's HTTP requests, retries included.
    "TelegramOk": Metric(COUNT, BY_FUNCTION),
    "Telegram429": Metric(COUNT, ALONE, ALONE),
    "Telegram403": Metric(COUNT, ALONE, ALONE),
    "Telegram401": Metric(COUNT, ALONE, ALONE),
    "Telegram400": Metric(COUNT, BY_FUNCTION),  # and any other 4xx
    "Telegram5xx": Metric(COUNT, BY_FUNCTION),
    "TelegramTimeout": Metric(COUNT, BY_FUNCTION),  # timed out, or no answer at all
    "TelegramWait": Metric(SECONDS, BY_FUNCTION),  # waited out for 429s within the update
    # One-tap Join's question "may the bot write to this person in private?" answered no (a 403
    # counted apart from Telegram403: a newcomer who never started the bot, not a failure).
    "PrivateChatClosed": Metric(COUNT, BY_FUNCTION),
    # The transaction: screens given up for a while (late moments), drawn again by the timer.
    "RedrawsOwed": Metric(COUNT, ALONE, ALONE),
    "RedrawsPaid": Metric(COUNT, BY_FUNCTION),
    "WriteConflicts": Metric(COUNT, BY_FUNCTION),
    "LostAnswersLanded": Metric(COUNT, BY_FUNCTION),  # a write committed, its answer lost
    # Games. Ended by the webhook: by a move; by the timer: by the clock (a deadline, idleness).
    "GamesOpened": Metric(COUNT, BY_FUNCTION),
    "GamesStarted": Metric(COUNT, ALONE, ALONE),
    "GamesEnded": Metric(COUNT, (("Function",), ("Function", "Ending")), BY_FUNCTION),
    "PlaysPerGame": Metric(COUNT, BY_FUNCTION),
    # The timer: seconds from the moment it was set for to the decision.
    "TimerLateness": Metric(SECONDS, ALONE, ALONE),
}
#: Figures every update or tick has, counted even when nothing else is.
_ALWAYS = ("Updates", "HandlerTime")

#: Telegram's HTTP status -> metric; any other 4xx is a 400, any 5xx a 5xx.
_STATUS = {200: "TelegramOk", 429: "Telegram429", 403: "Telegram403", 401: "Telegram401"}
#: Outcomes that are their own Outcome dimension, apart from their result.
_OUTCOMES = {
    "refused:old_game": "stale",
    "refused:bad_button": "forged",
    "refused:secret": "forged",
}


@dataclass
class Figures:
    """What one update or tick counted."""

    values: dict[str, float] = field(default_factory=dict)
    ending: str | None = None

    def add(self, name: str, value: float = 1.0) -> None:
        self.values[name] = self.values.get(name, 0.0) + value


_CURRENT: ContextVar[Figures | None] = ContextVar("menteur_figures", default=None)
_ASKING: ContextVar[bool] = ContextVar("menteur_asking", default=False)


@contextlib.contextmanager
def collect() -> Iterator[Figures]:
    """Count into a new `Figures` while the update runs (its tasks share the object)."""
    figures = Figures()
    token = _CURRENT.set(figures)
    try:
        yield figures
    finally:
        _CURRENT.reset(token)


@contextlib.contextmanager
def asking() -> Iterator[None]:
    """While the bot asks Telegram a question whose 403 is an answer ("no"), not a failure:
    that 403 counts as `PrivateChatClosed`, so `Telegram403` and its alarm keep meaning a
    blocked bot or a removed group."""
    token = _ASKING.set(True)
    try:
        yield
    finally:
        _ASKING.reset(token)


def add(name: str, value: float = 1.0) -> None:
    """Add to the current update's figure (nothing outside `collect`)."""
    figures = _CURRENT.get()
    if figures is not None:
        figures.add(name, value)


def put(name: str, value: float) -> None:
    """Set the current update's figure: for what an act decides, which a conflict repeats."""
    figures = _CURRENT.get()
    if figures is not None:
        figures.values[name] = value


def telegram(status: int | None) -> None:
    """Count one answer of Telegram's: its HTTP status, or None when none came in time."""
    if status is None:
        add("TelegramTimeout")
    elif status == 403 and _ASKING.get():
        add("PrivateChatClosed")
    elif status in _STATUS:
        add(_STATUS[status])
    else:
        add("Telegram5xx" if status >= 500 else "Telegram400" if status >= 400 else "TelegramOk")


def outcome_of(label: str) -> str:
    """The Outcome dimension of an outcome as logged ("refused:old_game"): its result, but a
    press of a stale game's button is "stale" and a forged one "forged"."""
    return _OUTCOMES.get(label) or label.partition(":")[0]


def game_events(
    game: Game | None, events: Sequence[Event], *, new_game: bool, removed: bool
) -> None:
    """Count the games a committed decision opened, started or ended (and how)."""
    if new_game:
        add("GamesOpened")
    for event in events:
        match event:
            case ev.Started():
                add("GamesStarted")
            case ev.Won():
                _ended("won", game)
            case ev.Stopped(by=by, reason=reason):
                if removed:
                    how = "removed"  # the group no longer takes the bot's messages
                elif reason is StopReason.STOP:
                    opener = game is not None and by == game.opener
                    how = "stopped_by_opener" if opener else "stopped_by_admin"
                else:
                    how = reason.value
                _ended(how, game)


def _ended(how: str, game: Game | None) -> None:
    figures = _CURRENT.get()
    if figures is not None:
        figures.add("GamesEnded")
        figures.ending = how
        figures.values["PlaysPerGame"] = game.plays if game is not None else 0


def dimensions(name: str, *, detailed: bool) -> Dimensions:
    """The dimension sets `name` is emitted with in the basic or the detailed set."""
    metric = METRICS[name]
    return metric.detailed if detailed else metric.basic


def document(
    namespace: str | None,
    fields: dict[str, Any],
    *,
    function: str,
    outcome: str,
    figures: Figures,
    handler_ms: float,
    now: float,
    detailed: bool = False,
) -> dict[str, Any]:
    """The outcome line `fields`, with its figures as EMF when a `namespace` is set: the basic
    set, or every figure when `detailed`. A line with no figure of its set is left plain."""
    if namespace is None:
        return fields
    values = {"Updates": 1.0, "HandlerTime": handler_ms, **figures.values}
    if figures.ending is None:
        values.pop("GamesEnded", None)
        values.pop("PlaysPerGame", None)
    # Zeros are left out (a count of nothing costs bytes and says nothing), but each update
    # counts once and has a time.
    named = [
        n for n, v in values.items() if (v or n in _ALWAYS) and dimensions(n, detailed=detailed)
    ]
    if not named:
        return fields
    groups: dict[Dimensions, list[dict[str, str]]] = {}
    for name in named:
        sets = dimensions(name, detailed=detailed)
        groups.setdefault(sets, []).append({"Name": name, "Unit": METRICS[name].unit})
    directives = [
        {"Namespace": namespace, "Dimensions": [list(s) for s in sets], "Metrics": metrics}
        for sets, metrics in groups.items()
    ]
    words = {"Function": function, "Outcome": outcome}
    if figures.ending is not None:
        words["Ending"] = figures.ending
    return {
        "_aws": {"Timestamp": int(now * 1000), "CloudWatchMetrics": directives},
        **fields,
        **words,
        **{name: _number(values[name]) for name in sorted(named)},
    }


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else round(value, 3)


def to_stdout(stream: IO[str] | None = None) -> None:
    """Outcome lines as bare JSON on standard output (Lambda), whatever LOG_LEVEL says: the
    metrics ride on them."""
    formatter = logging.Formatter("%(message)s")
    for name in OUTCOME_LOGGERS:
        logger = logging.getLogger(name)
        if any(getattr(h, "menteur_metrics", False) for h in logger.handlers):
            continue
        handler = logging.StreamHandler(stream or sys.stdout)
        handler.setFormatter(formatter)
        handler.menteur_metrics = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False
