"""The store on DynamoDB: one item per chat (per forum topic), read with one consistent GetItem
(a BatchGetItem with the chat's own item, for a forum topic's game: the flood budget lives
there) and written with one UpdateItem per change (see `handlers.store`, `handlers.item`).

The item's key is `chat#<chat>` (`chat#<chat>#<topic>` for a forum topic's game); the timers'
sparse index keys on `due`.
"""

from __future__ import annotations

import contextlib
from typing import Any

from handlers import item
from handlers.item import DUE_SHARD
from handlers.store import Change, Conflict, Counts, Record


class DynamoStore:
    """The DynamoDB adapter. `client` is a boto3 DynamoDB client, built once per container."""

    def __init__(self, client: Any, table: str) -> None:
        self.client = client
        self.table = table
        self.counts = Counts()
        errors = client.exceptions
        self._conditional_failed = errors.ConditionalCheckFailedException

    def load(self, chat: int, topic: int | None = None) -> Record:
        self.counts.reads += 1
        key, own = item.key(chat, topic), item.key(chat)
        if topic is None:
            got = self.client.get_item(
                TableName=self.table, Key={"pk": {"S": key}}, ConsistentRead=True
            )
            found = got.get("Item")
            return item.record_of(chat, topic, found, found)
        keys = [{"pk": {"S": key}}, {"pk": {"S": own}}]
        answer = self.client.batch_get_item(
            RequestItems={self.table: {"Keys": keys, "ConsistentRead": True}}
        )
        items = {i["pk"]["S"]: i for i in answer.get("Responses", {}).get(self.table, [])}
        # Keys left unread (throttled): read one by one, as the rare case they are.
        for left in answer.get("UnprocessedKeys", {}).get(self.table, {}).get("Keys", []):
            self.counts.reads += 1
            got = self.client.get_item(TableName=self.table, Key=left, ConsistentRead=True)
            if "Item" in got:
                items[left["pk"]["S"]] = got["Item"]
        return item.record_of(chat, topic, items.get(key), items.get(own))

    def apply(self, change: Change) -> None:
        update, condition, names, values = change.expression()
        request: dict[str, Any] = {
            "TableName": self.table,
            "Key": {"pk": {"S": change.key}},
            "UpdateExpression": update,
        }
        if condition is not None:
            request["ConditionExpression"] = condition
        if names:
            request["ExpressionAttributeNames"] = names
        if values:
            request["ExpressionAttributeValues"] = values
        self.counts.writes += 1
        try:
            self.client.update_item(**request)
        except self._conditional_failed as e:
            raise Conflict(change.key) from e

    def overdue(self, now: float, limit: int = 100) -> list[tuple[int, int | None]]:
        self.counts.reads += 1
        found = self.client.query(
            TableName=self.table,
            IndexName="DueIndex",
            KeyConditionExpression="#shard = :shard AND due <= :now",
            ExpressionAttributeNames={"#shard": "shard"},  # a reserved word in DynamoDB
            ExpressionAttributeValues={
                ":shard": {"S": DUE_SHARD},
                ":now": {"N": str(round(now * 1000))},
            },
            Limit=limit,
        )
        return [item.place_of(i["pk"]["S"]) for i in found.get("Items", [])]

    def topics(self, chat: int) -> list[int]:
        self.counts.reads += 1
        found = self.client.get_item(
            TableName=self.table, Key={"pk": {"S": item.topics_key(chat)}}, ConsistentRead=True
        ).get("Item", {})
        return sorted(int(n) for n in found.get("ts", {}).get("NS", []))

    def move(self, old_chat: int, new_chat: int) -> None:
        # No transactions (dynalite has none), so: mark the old item as moving first, which
        # refuses every later write to it (a move still made on the old chat id, by a hand's
        # button, is refused and retried on the new one); then copy it, then delete it. Each
        # step may be repeated: a retry finishes a move left half-done.
        old_key, new_key = {"pk": {"S": item.key(old_chat)}}, {"pk": {"S": item.key(new_chat)}}
        not_elsewhere = "(attribute_not_exists(mv) OR mv = :new)"
        self.counts.writes += 1
        try:
            self.client.update_item(
                TableName=self.table,
                Key=old_key,
                UpdateExpression="SET mv = :new",
                ConditionExpression=f"attribute_exists(ver) AND {not_elsewhere}",
                ExpressionAttributeValues={":new": {"N": str(new_chat)}},
            )
        except self._conditional_failed:
            return  # nothing left under the old id: moved already
        self.counts.reads += 1
        found = self.client.get_item(TableName=self.table, Key=old_key, ConsistentRead=True).get(
            "Item"
        )
        if found is None:
            return  # another delivery of the migration finished it meanwhile
        del found["mv"]
        found.update(new_key)
        self.counts.writes += 2
        # Refused when the new chat holds this version or a later one: a retried move.
        with contextlib.suppress(self._conditional_failed):
            self.client.put_item(
                TableName=self.table,
                Item=found,
                ConditionExpression="attribute_not_exists(ver) OR ver < :ver",
                ExpressionAttributeValues={":ver": found["ver"]},
            )
        self.client.delete_item(TableName=self.table, Key=old_key)
