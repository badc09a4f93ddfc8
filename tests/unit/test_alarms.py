"""The template's alarms and dashboard watch metrics the code emits, with the dimensions it
emits them with (an alarm on a metric nobody writes would stay quiet forever), and the default
deployment's monitoring fits CloudWatch's always-free tier: at most 10 custom metrics, alarms
on at most 10 metrics, and a dashboard of at most 50 metrics (docs/deploying.md prices the
rest with the figures counted here)."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from engine.events import StopReason
from handlers.metrics import METRICS, dimensions
from handlers.outcomes import Result
from infra.table import load_template

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = load_template()
RESOURCES: dict[str, Any] = TEMPLATE["Resources"]
OURS = {"Fn::Sub": "Menteur/${AWS::StackName}"}
ALARMS = {k: v for k, v in RESOURCES.items() if v["Type"] == "AWS::CloudWatch::Alarm"}
# The dimension values the code writes (handlers/webhook.py, handlers/timer.py, metrics.py).
VALUES = {
    "Function": {"webhook", "timer"},
    "Outcome": {r.value for r in Result} | {"stale", "forged", "busy", "error"},
    "Ending": {"won", "removed", "stopped_by_opener", "stopped_by_admin"}
    | {r.value for r in StopReason if r is not StopReason.STOP},
}
# AWS's own metrics, by namespace: the dimension each alarm names, and the resource types it
# may point at.
AWS_DIMENSIONS = {
    "AWS/Lambda": ("FunctionName", "AWS::Serverless::Function"),
    "AWS/SQS": ("QueueName", "AWS::SQS::Queue"),
    "AWS/DynamoDB": ("TableName", "AWS::DynamoDB::Table"),
    "AWS/ApiGateway": ("ApiId", "AWS::Serverless::HttpApi"),
}
# CloudWatch's always-free tier, every month: custom metrics, alarm metrics (standard
# resolution), and dashboards of up to 50 metrics (3 of them).
FREE_METRICS, FREE_ALARM_METRICS, FREE_DASHBOARD_METRICS = 10, 10, 50
DEFAULTS = {name: p.get("Default", "") for name, p in TEMPLATE["Parameters"].items()}


def holds(condition: str, parameters: dict[str, str]) -> bool:
    """Whether one of the template's conditions holds for these parameter values."""

    def value(node: Any) -> Any:
        if isinstance(node, dict):
            ((function, argument),) = node.items()
            match function:
                case "Ref":
                    return parameters[argument]
                case "Fn::Equals":
                    return value(argument[0]) == value(argument[1])
                case "Fn::Not":
                    return not value(argument[0])
                case "Condition":
                    return holds(argument, parameters)
            raise AssertionError(f"a condition the test cannot evaluate: {function}")
        return node

    return bool(value(TEMPLATE["Conditions"][condition]))


def deployed(parameters: dict[str, str]) -> dict[str, Any]:
    """The resources a stack with these parameters has."""
    return {
        name: resource
        for name, resource in RESOURCES.items()
        if "Condition" not in resource or holds(resource["Condition"], parameters)
    }


def watched(alarm: dict[str, Any]) -> list[dict[str, Any]]:
    """The metrics an alarm reads: its one metric, or each MetricStat of its metric math."""
    properties = alarm["Properties"]
    if "MetricName" in properties:
        return [properties]
    return [m["MetricStat"]["Metric"] for m in properties["Metrics"] if "MetricStat" in m]


def check_ours(name: str, pairs: dict[str, str], where: str, *, detailed: bool) -> None:
    assert name in METRICS, f"{where}: no code emits {name}"
    sets = dimensions(name, detailed=detailed)
    assert tuple(pairs) in sets, f"{where}: {name} is emitted with {sets}, not {pairs}"
    for key, value in pairs.items():
        assert value in VALUES[key], f"{where}: the code never writes {key}={value}"


def dashboard(parameters: dict[str, str]) -> list[dict[str, Any]]:
    """The dashboard's widgets for these parameters: its body with the detailed widgets in, or
    out, as `Fn::Sub` and `Fn::If` put them."""
    body, variables = RESOURCES["Dashboard"]["Properties"]["DashboardBody"]["Fn::Sub"]
    condition, inserted, left_out = variables["Detailed"]["Fn::If"]
    detailed = inserted["Fn::Sub"] if holds(condition, parameters) else left_out
    text = body.replace("${Detailed}", detailed).replace("${AWS::StackName}", "STACK")
    names = set(re.findall(r"\$\{([^}]+)\}", text))
    for name in names - {"AWS::Region"}:
        assert name.split(".")[0] in RESOURCES, name
    widgets: list[dict[str, Any]] = json.loads(text)["widgets"]
    return widgets


def shown(widgets: list[dict[str, Any]], *, detailed: bool) -> tuple[set[str], int]:
    """The bot's metrics a dashboard shows (each checked against the code), and how many
    metrics it shows in all (each line of a metric widget, and each alarm's metrics)."""
    ours, count = set(), 0
    for widget in widgets:
        if widget["type"] == "alarm":
            arns = {
                a.removeprefix("${").removesuffix(".Arn}") for a in widget["properties"]["alarms"]
            }
            assert arns == set(ALARMS)
            count += sum(len(watched(ALARMS[a])) for a in arns)
            continue
        for line in widget["properties"]["metrics"]:
            row = [item for item in line if not isinstance(item, dict)]
            if not row:
                continue  # an expression over the lines
            count += 1
            namespace, name, *pairs = row
            named = dict(zip(pairs[::2], pairs[1::2], strict=True))
            if namespace == "Menteur/STACK":
                check_ours(name, named, widget["properties"]["title"], detailed=detailed)
                ours.add(name)
            else:
                assert namespace in AWS_DIMENSIONS
                assert list(named) == [AWS_DIMENSIONS[namespace][0]]
    return ours, count


def custom_metrics(*, detailed: bool) -> set[tuple[str, tuple[tuple[str, str], ...]]]:
    """Every custom metric the code may write: each name with each set of dimension values."""
    found = set()
    for name in METRICS:
        for keys in dimensions(name, detailed=detailed):
            for values in itertools.product(*(sorted(VALUES[k]) for k in keys)):
                found.add((name, tuple(zip(keys, values, strict=True))))
    return found


def test_the_functions_emit_into_the_namespace_the_alarms_read() -> None:
    variables = TEMPLATE["Globals"]["Function"]["Environment"]["Variables"]
    # Unless the deployer turned them off: then none (an empty variable is no namespace).
    assert variables["METRICS_NAMESPACE"] == {"Fn::If": ["MetricsOn", OURS, ""]}
    assert variables["METRICS"] == {"Ref": "Metrics"}
    assert DEFAULTS["Metrics"] == "basic"
    assert TEMPLATE["Parameters"]["Metrics"]["AllowedValues"] == ["basic", "detailed", "off"]
    assert holds("MetricsOn", {"Metrics": "basic"}) and holds("MetricsOn", {"Metrics": "detailed"})
    assert not holds("MetricsOn", {"Metrics": "off"})
    assert holds("MetricsDetailed", {"Metrics": "detailed"})
    assert not holds("MetricsDetailed", {"Metrics": "basic"})


def test_the_basic_metrics_are_emitted_the_same_way_in_the_detailed_set() -> None:
    """So that the alarms, which read the basic set, read the same metrics in both."""
    for name, metric in METRICS.items():
        assert set(metric.basic) <= set(metric.detailed), name


@pytest.mark.parametrize("alarm", sorted(ALARMS))
def test_each_alarm_watches_a_metric_the_code_or_aws_emits(alarm: str) -> None:
    metrics = watched(ALARMS[alarm])
    assert metrics
    for metric in metrics:
        namespace = metric["Namespace"]
        pairs = {d["Name"]: d["Value"] for d in metric.get("Dimensions", [])}
        if namespace == OURS:
            # Emitted with the default set, so the default's alarms can fire.
            check_ours(metric["MetricName"], pairs, alarm, detailed=False)
            assert ALARMS[alarm].get("Condition") == "MetricsOn", "no alarm without its metric"
            continue
        dimension, resource_type = AWS_DIMENSIONS[namespace]
        (value,) = pairs.values()
        assert list(pairs) == [dimension]
        # A Ref (a function's or a table's name) or a GetAtt (a queue's name) of this stack's.
        target = value["Ref"] if "Ref" in value else value["Fn::GetAtt"][0]
        assert RESOURCES[target]["Type"] == resource_type


@pytest.mark.parametrize("alarm", sorted(ALARMS))
def test_each_alarm_says_what_to_look_at_first_and_stays_quiet_on_an_idle_bot(
    alarm: str,
) -> None:
    properties = ALARMS[alarm]["Properties"]
    assert "Look first at" in properties["AlarmDescription"]
    assert properties["AlarmName"] == {"Fn::Sub": properties["AlarmName"]["Fn::Sub"]}
    assert properties["AlarmName"]["Fn::Sub"].startswith("${AWS::StackName}-")
    if properties["ComparisonOperator"].startswith("Greater"):
        # No traffic writes no data point, and no data point is no trouble.
        assert properties["TreatMissingData"] == "notBreaching"
    else:
        # Only the timer's invocations may alarm when they stop: the sweep runs each minute
        # whatever the traffic, so an idle bot still writes them.
        assert alarm == "TimerStoppedAlarm"
        sweep = RESOURCES["TimerFunction"]["Properties"]["Events"]["Sweep"]["Properties"]
        assert sweep["Schedule"] == "rate(1 minute)"
        assert properties["Period"] >= 60 * properties["Threshold"]


def test_alarms_reach_the_email_only_when_one_is_given() -> None:
    assert DEFAULTS["AlarmEmail"] == ""
    assert TEMPLATE["Conditions"]["HasAlarmEmail"] == {
        "Fn::Not": [{"Fn::Equals": [{"Ref": "AlarmEmail"}, ""]}]
    }
    topic = RESOURCES["AlarmTopic"]
    assert topic["Condition"] == "HasAlarmEmail"
    assert topic["Properties"]["Subscription"] == [
        {"Protocol": "email", "Endpoint": {"Ref": "AlarmEmail"}}
    ]
    only_then = {"Fn::If": ["HasAlarmEmail", [{"Ref": "AlarmTopic"}], {"Ref": "AWS::NoValue"}]}
    for alarm in ALARMS.values():
        assert alarm["Properties"]["AlarmActions"] == only_then
        assert alarm["Properties"]["OKActions"] == only_then


@pytest.mark.parametrize("metrics", ["basic", "detailed"])
def test_the_dashboard_shows_every_metric_of_its_set_and_every_alarm(metrics: str) -> None:
    assert RESOURCES["Dashboard"]["Condition"] == "MetricsOn"
    detailed = metrics == "detailed"
    ours, _ = shown(dashboard({**DEFAULTS, "Metrics": metrics}), detailed=detailed)
    assert ours == {name for name in METRICS if dimensions(name, detailed=detailed)}


def test_the_default_deployments_monitoring_fits_cloudwatchs_free_tier() -> None:
    """The default stack (Metrics=basic, no AlarmEmail): at most 10 custom metrics, alarms on
    at most 10 metrics, one dashboard of at most 50 metrics. The figures are the ones the
    template's Metrics parameter and docs/deploying.md state."""
    stack = deployed(DEFAULTS)
    metrics = custom_metrics(detailed=False)
    alarms = [r for r in stack.values() if r["Type"] == "AWS::CloudWatch::Alarm"]
    alarm_metrics = sum(len(watched(alarm)) for alarm in alarms)
    dashboards = [r for r in stack.values() if r["Type"] == "AWS::CloudWatch::Dashboard"]
    _, on_dashboard = shown(dashboard(DEFAULTS), detailed=False)
    assert len(metrics) <= FREE_METRICS, sorted(metrics)
    assert len(alarms) <= alarm_metrics <= FREE_ALARM_METRICS
    assert len(dashboards) == 1 and on_dashboard <= FREE_DASHBOARD_METRICS

    # What the deployer is told, from these counts.
    detailed = custom_metrics(detailed=True)
    _, on_detailed = shown(dashboard({**DEFAULTS, "Metrics": "detailed"}), detailed=True)
    assert on_detailed > FREE_DASHBOARD_METRICS, "or the docs need not price it"
    described = TEMPLATE["Parameters"]["Metrics"]["Description"]
    docs = (ROOT / "docs" / "deploying.md").read_text(encoding="utf-8")
    for figure in (
        f"{len(metrics)} custom metrics",
        f"{len(alarms)} alarms",
        f"up to {len(detailed)} custom metrics",
    ):
        assert figure in described, figure
        assert figure in " ".join(docs.split()), figure
    for figure in (
        f"{alarm_metrics} metrics",
        f"{on_dashboard} metrics",
        f"{on_detailed} metrics",
        f"({len(detailed)} − 10) × $0.30",
    ):
        assert figure in " ".join(docs.split()), figure


def test_without_metrics_no_alarm_waits_on_one() -> None:
    stack = deployed({**DEFAULTS, "Metrics": "off"})
    assert "Dashboard" not in stack
    for name, resource in stack.items():
        if resource["Type"] == "AWS::CloudWatch::Alarm":
            assert all(m["Namespace"] != OURS for m in watched(resource)), name


def test_the_saved_queries_read_both_functions_logs() -> None:
    queries = {k: v for k, v in RESOURCES.items() if v["Type"] == "AWS::Logs::QueryDefinition"}
    assert set(queries) == {"OneChatQuery", "SlowestUpdatesQuery", "ErrorsQuery"}
    for query in queries.values():
        groups = query["Properties"]["LogGroupNames"]
        assert groups == [{"Ref": "WebhookLogGroup"}, {"Ref": "TimerLogGroup"}]
    # The fields they name are the outcome line's (handlers/outcomes.py, handlers/metrics.py).
    assert "filter chat = " in queries["OneChatQuery"]["Properties"]["QueryString"]
    assert "sort latency_ms desc" in queries["SlowestUpdatesQuery"]["Properties"]["QueryString"]
    assert '"error", "busy"' in queries["ErrorsQuery"]["Properties"]["QueryString"]
