"""The template's alarms and dashboard watch metrics the code emits, with the dimensions it
emits them with: an alarm on a metric nobody writes would stay quiet forever."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from engine.events import StopReason
from handlers.metrics import METRICS
from handlers.outcomes import Result
from infra.table import load_template

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
}


def watched(alarm: dict[str, Any]) -> list[dict[str, Any]]:
    """The metrics an alarm reads: its one metric, or each MetricStat of its metric math."""
    properties = alarm["Properties"]
    if "MetricName" in properties:
        return [properties]
    return [m["MetricStat"]["Metric"] for m in properties["Metrics"] if "MetricStat" in m]


def check_ours(name: str, dimensions: dict[str, str], where: str) -> None:
    assert name in METRICS, f"{where}: no code emits {name}"
    _, sets = METRICS[name]
    assert tuple(dimensions) in sets, f"{where}: {name} is emitted with {sets}, not {dimensions}"
    for key, value in dimensions.items():
        assert value in VALUES[key], f"{where}: the code never writes {key}={value}"


def test_the_functions_emit_into_the_namespace_the_alarms_read() -> None:
    variables = TEMPLATE["Globals"]["Function"]["Environment"]["Variables"]
    # Unless the deployer turned them off: then none (an empty variable is no namespace).
    assert variables["METRICS_NAMESPACE"] == {"Fn::If": ["MetricsOn", OURS, ""]}
    assert TEMPLATE["Conditions"]["MetricsOn"] == {"Fn::Equals": [{"Ref": "Metrics"}, "on"]}


@pytest.mark.parametrize("alarm", sorted(ALARMS))
def test_each_alarm_watches_a_metric_the_code_or_aws_emits(alarm: str) -> None:
    metrics = watched(ALARMS[alarm])
    assert metrics
    for metric in metrics:
        namespace = metric["Namespace"]
        dimensions = {d["Name"]: d["Value"] for d in metric.get("Dimensions", [])}
        if namespace == OURS:
            check_ours(metric["MetricName"], dimensions, alarm)
            continue
        dimension, resource_type = AWS_DIMENSIONS[namespace]
        (value,) = dimensions.values()
        assert list(dimensions) == [dimension]
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
    assert TEMPLATE["Parameters"]["AlarmEmail"]["Default"] == ""
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


def test_the_dashboard_shows_only_metrics_that_exist_and_every_alarm() -> None:
    assert RESOURCES["Dashboard"]["Condition"] == "MetricsOn"  # it shows mostly those
    body = RESOURCES["Dashboard"]["Properties"]["DashboardBody"]["Fn::Sub"]
    names = set(re.findall(r"\$\{([^}]+)\}", body))
    for name in names - {"AWS::Region", "AWS::StackName"}:
        assert name.removesuffix(".Arn") in RESOURCES, name
    widgets = json.loads(re.sub(r"\$\{AWS::StackName\}", "STACK", body))["widgets"]
    shown = set()
    for widget in widgets:
        if widget["type"] == "alarm":
            arns = {
                a.removeprefix("${").removesuffix(".Arn}") for a in widget["properties"]["alarms"]
            }
            assert arns == set(ALARMS)
            continue
        for line in widget["properties"]["metrics"]:
            row = [item for item in line if not isinstance(item, dict)]
            if not row:
                continue  # an expression
            namespace, name, *pairs = row
            dimensions = dict(zip(pairs[::2], pairs[1::2], strict=True))
            if namespace == "Menteur/STACK":
                check_ours(name, dimensions, widget["properties"]["title"])
                shown.add(name)
            else:
                assert namespace in AWS_DIMENSIONS and list(dimensions) == [
                    AWS_DIMENSIONS[namespace][0]
                ]
    assert shown == set(METRICS), "every metric is on the dashboard"


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
