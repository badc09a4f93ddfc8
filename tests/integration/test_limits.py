"""The stores the tests build refuse what DynamoDB refuses and its stand-ins let through: an
expression over 4 KB, an item over 400 KB, an update naming one attribute twice. moto and the
in-memory fake both (`infra.harness.limits`); the bot's own writes stay within them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from handlers.dynamo import DynamoStore
from handlers.store import Change, Store
from infra.harness.limits import MAX_EXPRESSION, MAX_ITEM, Limited
from infra.harness.memory import MemoryStore
from infra.table import create_table

KEY = "chat#-100"


@pytest.fixture(params=["moto", "memory"])
def store(request: pytest.FixtureRequest, aws_env: None) -> Iterator[Store]:
    if request.param == "memory":
        yield MemoryStore()
        return
    with mock_aws():
        client = Limited(boto3.client("dynamodb"))
        create_table(client, "games")
        yield DynamoStore(client, "games")


def refused(store: Store, change: Change) -> str:
    with pytest.raises(ClientError) as refusal:
        store.apply(change)
    assert refusal.value.response["Error"]["Code"] == "ValidationException"
    return str(refusal.value)


def marks(n: int) -> dict[str, dict[str, Any]]:
    return {f"d{1_000_000 + i}": {"BOOL": True} for i in range(n)}


def test_an_update_expression_over_4_kb_is_refused(store: Store) -> None:
    fits = Change(KEY, marks(100))
    assert len(fits.expression()[0].encode()) < MAX_EXPRESSION
    store.apply(fits)
    too_long = Change(KEY, marks(400))
    assert len(too_long.expression()[0].encode()) > MAX_EXPRESSION
    assert "Expression size" in refused(store, too_long)
    assert 1_000_399 not in store.load(-100).marks, "nothing of it written"


def test_an_item_over_400_kb_is_refused_and_left_as_it_was(store: Store) -> None:
    store.apply(Change(KEY, {"ver": {"N": "0"}, "big": {"B": b"x" * 300_000}}))
    assert "size" in refused(store, Change(KEY, {"more": {"B": b"y" * 120_000}}))
    store.apply(Change(KEY, {"more": {"B": b"y" * 90_000}}))  # 390 KB in all: taken
    assert MAX_ITEM > 390_000


def test_an_update_naming_one_attribute_twice_is_refused(store: Store) -> None:
    both = Change(KEY, add={"un": {"NS": ["1"]}}, delete={"un": {"NS": ["2"]}})
    assert "overlap" in refused(store, both)
    within = Change(KEY, {"hm": {"M": {}}}, remove=("hm",))
    assert "overlap" in refused(store, within)
