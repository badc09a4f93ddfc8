"""The games table and the timer queue, built from `template.yaml` wherever they are needed.

Tests (moto), the local runner (dynalite) and the deployed stack all use the one definition in
the SAM template, so the schema the code is tested against can never drift from what is deployed.
Standard library, PyYAML and boto3 only.
"""

from __future__ import annotations

import copy
import functools
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# PyYAML ships no types, and the project does not install types-PyYAML (yet).
import yaml  # type: ignore[import-untyped, unused-ignore]

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "template.yaml"
TABLE_RESOURCE = "GamesTable"
QUEUE_RESOURCE = "TimerQueue"

# The CloudFormation table properties that CreateTable takes as they are. The rest
# (PointInTimeRecoverySpecification, SSESpecification, TimeToLiveSpecification, ...) are either
# set by other calls or mean nothing to a local server.
_CREATE_TABLE_KEYS = (
    "AttributeDefinitions",
    "KeySchema",
    "BillingMode",
    "GlobalSecondaryIndexes",
    "LocalSecondaryIndexes",
    "ProvisionedThroughput",
)

# CloudFormation queue properties that are SQS attributes of the same name.
_QUEUE_ATTRIBUTE_KEYS = (
    "DelaySeconds",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "ReceiveMessageWaitTimeSeconds",
    "VisibilityTimeout",
    "SqsManagedSseEnabled",
)


class _TemplateLoader(yaml.SafeLoader):  # type: ignore[misc, unused-ignore]
    """A safe loader that reads CloudFormation's short-form tags (!Ref, !Sub, !GetAtt, ...)."""


def _construct_intrinsic(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    """Turn `!Tag value` into the long form `{"Fn::Tag": value}` (`{"Ref": value}` for !Ref)."""
    value: Any
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    elif isinstance(node, yaml.MappingNode):
        value = loader.construct_mapping(node, deep=True)
    else:  # pragma: no cover - PyYAML has no other node kinds
        raise yaml.constructor.ConstructorError(None, None, f"unexpected node {node!r}")
    if suffix == "Ref":
        return {"Ref": value}
    if suffix == "GetAtt" and isinstance(value, str):
        resource, _, attribute = value.partition(".")
        value = [resource, attribute]
    return {f"Fn::{suffix}": value}


_TemplateLoader.add_multi_constructor("!", _construct_intrinsic)


def load_template(template_path: Path | str = TEMPLATE) -> dict[str, Any]:
    """The template as plain data, short-form tags turned into their long form."""
    path = Path(template_path).resolve()
    stat = path.stat()
    document = _parsed(path, stat.st_mtime_ns, stat.st_size)
    if not isinstance(document, dict):
        raise ValueError(f"{template_path} is not a CloudFormation template")
    return copy.deepcopy(document)  # the caller's own: the parsed one is kept


@functools.lru_cache(maxsize=8)
def _parsed(path: Path, mtime_ns: int, size: int) -> Any:
    """The file parsed, once per version of it: every test that builds a table reads the
    template (twice), and PyYAML's pure-Python loader is slow."""
    with path.open(encoding="utf-8") as stream:
        return yaml.load(stream, Loader=_TemplateLoader)


def resource_properties(
    resource: str, template_path: Path | str = TEMPLATE, *, expected_type: str | None = None
) -> dict[str, Any]:
    """The `Properties` of one resource of the template."""
    resources = load_template(template_path).get("Resources", {})
    if resource not in resources:
        raise KeyError(f"{template_path} has no resource {resource!r}")
    found = resources[resource]
    if expected_type is not None and found.get("Type") != expected_type:
        raise ValueError(f"{resource} is a {found.get('Type')}, not a {expected_type}")
    properties: dict[str, Any] = found.get("Properties", {})
    return properties


def _literal(value: Any, where: str) -> Any:
    """The value itself, refusing anything that only CloudFormation could resolve."""
    if isinstance(value, Mapping):
        for key in value:
            if key == "Ref" or str(key).startswith("Fn::"):
                raise ValueError(f"{where} uses {key}, which only CloudFormation can resolve")
        return {key: _literal(item, f"{where}.{key}") for key, item in value.items()}
    if isinstance(value, list):
        return [_literal(item, f"{where}[{index}]") for index, item in enumerate(value)]
    return value


def table_spec(
    template_path: Path | str = TEMPLATE, resource: str = TABLE_RESOURCE
) -> dict[str, Any]:
    """The keyword arguments of boto3's `create_table` for the template's table, but TableName.

    The table's TTL attribute is not among them: see `ttl_attribute`.
    """
    properties = resource_properties(resource, template_path, expected_type="AWS::DynamoDB::Table")
    return {
        key: _literal(properties[key], f"{resource}.{key}")
        for key in _CREATE_TABLE_KEYS
        if key in properties
    }


def ttl_attribute(
    template_path: Path | str = TEMPLATE, resource: str = TABLE_RESOURCE
) -> str | None:
    """The attribute whose epoch-seconds value lets DynamoDB delete an item, if TTL is on."""
    properties = resource_properties(resource, template_path, expected_type="AWS::DynamoDB::Table")
    spec = _literal(properties.get("TimeToLiveSpecification", {}), f"{resource}.TTL")
    if not spec.get("Enabled", False):
        return None
    name: str = spec["AttributeName"]
    return name


def _error_code(error: Exception) -> str | None:
    response = getattr(error, "response", None)
    if not isinstance(response, Mapping):
        return None
    code = response.get("Error", {}).get("Code")
    return code if isinstance(code, str) else None


def wait_until_active(
    client: Any, name: str, *, timeout: float = 30.0, interval: float = 0.05
) -> dict[str, Any]:
    """Poll until the table and all its indexes are ACTIVE; return its description.

    boto3's `table_exists` waiter sleeps 20 s between polls: far too slow for tests against a
    local server, where a table is ready in milliseconds.
    """
    deadline = time.monotonic() + timeout
    while True:
        description: dict[str, Any] = client.describe_table(TableName=name)["Table"]
        indexes = description.get("GlobalSecondaryIndexes", [])
        if description.get("TableStatus") == "ACTIVE" and all(
            index.get("IndexStatus", "ACTIVE") == "ACTIVE" for index in indexes
        ):
            return description
        if time.monotonic() >= deadline:
            raise TimeoutError(f"table {name} is still {description.get('TableStatus')}")
        time.sleep(interval)


def enable_ttl(client: Any, name: str, attribute: str) -> bool:
    """Turn TTL on for `attribute`; False where the server has no UpdateTimeToLive (dynalite).

    Idempotent: DynamoDB refuses to enable TTL twice, so the current setting is read first.
    """
    try:
        current = client.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
    except Exception as error:
        if _error_code(error) != "UnknownOperationException":
            raise
        current = {}
    if current.get("TimeToLiveStatus") in {"ENABLED", "ENABLING"}:
        if current.get("AttributeName") != attribute:
            raise ValueError(
                f"table {name} already expires items on {current.get('AttributeName')!r}"
            )
        return True
    try:
        client.update_time_to_live(
            TableName=name,
            TimeToLiveSpecification={"Enabled": True, "AttributeName": attribute},
        )
    except Exception as error:
        # dynalite answers UnknownOperationException: it never expires items, which only
        # matters to a long-lived local store, not to correctness.
        if _error_code(error) == "UnknownOperationException":
            return False
        raise
    return True


def create_table(
    client: Any, name: str, template_path: Path | str = TEMPLATE, *, timeout: float = 30.0
) -> dict[str, Any]:
    """Create the games table (or accept it as it is), wait until ACTIVE, enable TTL.

    `client` is a boto3 DynamoDB client (moto, dynalite or AWS). Returns the table description.
    """
    try:
        client.create_table(TableName=name, **table_spec(template_path))
    except Exception as error:
        if _error_code(error) != "ResourceInUseException":
            raise
    description = wait_until_active(client, name, timeout=timeout)
    attribute = ttl_attribute(template_path)
    if attribute is not None:
        enable_ttl(client, name, attribute)
    return description


def queue_spec(
    template_path: Path | str = TEMPLATE, resource: str = QUEUE_RESOURCE
) -> dict[str, str]:
    """The SQS attributes (as `create_queue` wants them: strings) of the template's queue.

    The RedrivePolicy names another resource of the template, so it is left to `create_queue`.
    """
    properties = resource_properties(resource, template_path, expected_type="AWS::SQS::Queue")
    attributes: dict[str, str] = {}
    for key in _QUEUE_ATTRIBUTE_KEYS:
        if key in properties:
            value = _literal(properties[key], f"{resource}.{key}")
            attributes[key] = str(value).lower() if isinstance(value, bool) else str(value)
    return attributes


def _redrive(template_path: Path | str, resource: str) -> tuple[str, int] | None:
    """The template's dead-letter queue resource and maxReceiveCount for `resource`."""
    properties = resource_properties(resource, template_path, expected_type="AWS::SQS::Queue")
    policy = properties.get("RedrivePolicy")
    if policy is None:
        return None
    target = policy["deadLetterTargetArn"]
    if not (isinstance(target, Mapping) and "Fn::GetAtt" in target):
        raise ValueError(f"{resource}'s deadLetterTargetArn must be !GetAtt <Queue>.Arn")
    dead_letter_resource = str(target["Fn::GetAtt"][0])
    return dead_letter_resource, int(policy["maxReceiveCount"])


def create_queue(client: Any, name: str, template_path: Path | str = TEMPLATE) -> str:
    """Create the timer queue (and its dead-letter queue `<name>-dlq`); return the queue URL.

    `client` is a boto3 SQS client (moto in tests). Idempotent, as SQS's CreateQueue is when the
    attributes are unchanged.
    """
    attributes = queue_spec(template_path)
    redrive = _redrive(template_path, QUEUE_RESOURCE)
    if redrive is not None:
        dead_letter_resource, max_receive_count = redrive
        dead_letter_url = client.create_queue(
            QueueName=f"{name}-dlq", Attributes=queue_spec(template_path, dead_letter_resource)
        )["QueueUrl"]
        dead_letter_arn = client.get_queue_attributes(
            QueueUrl=dead_letter_url, AttributeNames=["QueueArn"]
        )["Attributes"]["QueueArn"]
        attributes["RedrivePolicy"] = json.dumps(
            {"deadLetterTargetArn": dead_letter_arn, "maxReceiveCount": max_receive_count}
        )
    url: str = client.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    return url
