"""A DynamoDB client that refuses what DynamoDB refuses and its local stand-ins let through.

moto and dynalite accept an expression of any length, an item of any size and an update whose
actions touch the same attribute twice; DynamoDB answers each with a ValidationException. Every
store the tests build goes through `Limited`, so a write the bot could not make on AWS fails the
tests too (`tests/integration/test_limits.py` holds it to each limit).

    client = Limited(boto3.client("dynamodb"))
"""

from __future__ import annotations

import re
from typing import Any

from botocore.exceptions import ClientError

MAX_EXPRESSION = 4096  # bytes, each expression of a request
MAX_PLACEHOLDER = 255  # bytes, each name in ExpressionAttributeNames and ExpressionAttributeValues
MAX_ITEM = 400 * 1024  # bytes, as DynamoDB measures an item (`item_size`)
EXPRESSIONS = (
    "UpdateExpression",
    "ConditionExpression",
    "KeyConditionExpression",
    "FilterExpression",
    "ProjectionExpression",
)
_CLAUSE = re.compile(r"\b(SET|REMOVE|ADD|DELETE)\b", re.IGNORECASE)


def item_size(value: dict[str, Any]) -> int:
    """DynamoDB's own measure of an item: names plus values, numbers by their digits."""

    def size(v: dict[str, Any]) -> int:
        ((kind, inner),) = v.items()
        if kind == "S":
            return len(inner.encode())
        if kind == "B":
            return len(inner)
        if kind == "N":
            return (len(inner.strip("-").lstrip("0").replace(".", "")) + 1) // 2 + 1
        if kind == "BOOL":
            return 1
        if kind in ("NS", "L"):
            return 3 + sum(size(x if kind == "L" else {"N": x}) + 1 for x in inner)
        if kind == "M":
            return 3 + sum(len(k.encode()) + size(x) + 1 for k, x in inner.items())
        raise AssertionError(kind)

    return sum(len(name.encode()) + size(v) for name, v in value.items())


def refused(operation: str, message: str) -> ClientError:
    """DynamoDB's answer to a request it will not take."""
    return ClientError({"Error": {"Code": "ValidationException", "Message": message}}, operation)


class Limited:
    """A boto3 DynamoDB client, with DynamoDB's limits on expressions and items enforced; every
    other attribute is the client's.

    An item's size is not asked for at every write (moto serialising every item back costs as
    much as the write): each item read or written through here keeps a bound of its size (its
    size as read, plus at most what each update since can add), and only an update that could
    take it past 400 KB reads it first, and again after, to put it back and refuse."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self._bounds: dict[str, int] = {}  # the pk -> at most this many bytes

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    def update_item(self, **kwargs: Any) -> Any:
        check_update(kwargs)
        where = {"TableName": kwargs["TableName"], "Key": kwargs["Key"]}
        key = _pk(kwargs["Key"])
        bound = self._bounds.get(key)
        if bound is None:
            bound = self._read(where)
        growth = _growth(kwargs)
        if bound + growth <= MAX_ITEM:
            try:
                answer = self.client.update_item(**kwargs)
            except ClientError:
                # Refused, as a conflict is: another client wrote it, by an unknown size.
                self._bounds.pop(key, None)
                raise
            self._bounds[key] = bound + growth
            return answer
        # It might outgrow DynamoDB's limit: kept, to be put back if it does.
        old = self.client.get_item(**where, ConsistentRead=True).get("Item")
        answer = self.client.update_item(**kwargs)
        size = self._read(where)
        if size > MAX_ITEM:
            if old is not None:
                self.client.put_item(TableName=kwargs["TableName"], Item=old)
            self._bounds.pop(key, None)
            raise too_big("UpdateItem", size)
        return answer

    def put_item(self, **kwargs: Any) -> Any:
        _check_expressions("PutItem", kwargs)
        size = item_size(kwargs["Item"])
        if size > MAX_ITEM:
            raise too_big("PutItem", size)
        answer = self.client.put_item(**kwargs)
        self._bounds[_pk(kwargs["Item"])] = size
        return answer

    def get_item(self, **kwargs: Any) -> Any:
        _check_expressions("GetItem", kwargs)
        answer = self.client.get_item(**kwargs)
        self._bounds[_pk(kwargs["Key"])] = item_size(answer.get("Item", {}))
        return answer

    def batch_get_item(self, **kwargs: Any) -> Any:
        answer = self.client.batch_get_item(**kwargs)
        for items in answer.get("Responses", {}).values():
            for found in items:
                self._bounds[_pk(found)] = item_size(found)
        return answer

    def query(self, **kwargs: Any) -> Any:
        _check_expressions("Query", kwargs)
        return self.client.query(**kwargs)

    def scan(self, **kwargs: Any) -> Any:
        _check_expressions("Scan", kwargs)
        return self.client.scan(**kwargs)

    def delete_item(self, **kwargs: Any) -> Any:
        _check_expressions("DeleteItem", kwargs)
        self._bounds.pop(_pk(kwargs["Key"]), None)
        return self.client.delete_item(**kwargs)

    def _read(self, where: dict[str, Any]) -> int:
        """The item's size now, read (0: no item)."""
        self.get_item(**where, ConsistentRead=True)
        return self._bounds[_pk(where["Key"])]


def _pk(item: dict[str, Any]) -> str:
    return str(item["pk"]["S"])


def check_update(kwargs: dict[str, Any]) -> None:
    """What DynamoDB checks of an UpdateItem before performing it (the in-memory store asks the
    same of the changes it performs)."""
    _check_expressions("UpdateItem", kwargs)
    _check_paths(kwargs)


def too_big(operation: str, size: int) -> ClientError:
    return refused(operation, f"Item size has exceeded the maximum allowed size: {size} bytes")


def _growth(kwargs: dict[str, Any]) -> int:
    """At most how much an update can grow its item: each value as often as the expression
    names it, and the expression's own names."""
    expression: str = kwargs["UpdateExpression"]
    values = kwargs.get("ExpressionAttributeValues", {})
    grown = sum(item_size({"v": v}) * expression.count(k) for k, v in values.items())
    return grown + len(expression.encode())


def _check_expressions(operation: str, kwargs: dict[str, Any]) -> None:
    for name in EXPRESSIONS:
        expression = kwargs.get(name)
        if expression is not None and len(expression.encode()) > MAX_EXPRESSION:
            raise refused(
                operation,
                f"Invalid {name}: Expression size has exceeded the maximum allowed size; "
                f"expression size: {len(expression.encode())}",
            )
    for field in ("ExpressionAttributeNames", "ExpressionAttributeValues"):
        for placeholder in kwargs.get(field, {}):
            if len(placeholder.encode()) > MAX_PLACEHOLDER:
                raise refused(
                    operation, f"{field} contains invalid key: too long: {placeholder[:20]}…"
                )


def _check_paths(kwargs: dict[str, Any]) -> None:
    """DynamoDB refuses an update whose actions name one attribute (or one inside another)
    twice: "Two document paths overlap with each other"."""
    names = kwargs.get("ExpressionAttributeNames", {})
    expression = kwargs["UpdateExpression"]
    paths: list[tuple[str, ...]] = []
    parts = _CLAUSE.split(expression)
    for action, body in zip(parts[1::2], parts[2::2], strict=True):
        for clause in _top_level(body):
            target = clause.split("=", 1)[0] if action.upper() == "SET" else clause.split()[0]
            path = tuple(names.get(p, p) for p in re.split(r"\.|\[", target.strip()) if p)
            paths.append(path)
    for i, one in enumerate(paths):
        for two in paths[i + 1 :]:
            shorter = min(len(one), len(two))
            if one[:shorter] == two[:shorter]:
                raise refused(
                    "UpdateItem",
                    "Invalid UpdateExpression: Two document paths overlap with each other; "
                    f"must remove or rewrite one of these paths; path one: {list(one)}, "
                    f"path two: {list(two)}",
                )


def _top_level(body: str) -> list[str]:
    """The comma-separated clauses of one action, commas inside a function's parentheses kept."""
    clauses: list[str] = []
    depth = start = 0
    for i, char in enumerate(body):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            clauses.append(body[start:i])
            start = i + 1
    clauses.append(body[start:])
    return [c.strip() for c in clauses if c.strip()]
