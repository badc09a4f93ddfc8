"""The store's fake for tests: `handlers.store.Store` in memory. It keeps each item as DynamoDB
holds it, reads it with the same mapping (`handlers.item.record_of`) and performs each
`Change` with DynamoDB's semantics and limits, atomically under threads
(tests/integration/test_store.py runs the same cases on both)."""

from __future__ import annotations

import threading
from decimal import Decimal
from typing import Any

from handlers import item
from handlers.store import Change, Conflict, Counts, Record, Test, Value
from infra.harness.limits import MAX_ITEM, check_update, item_size, refused, too_big

Item = dict[str, Value]


class MemoryStore:
    """The in-memory fake: the same items, conditions and limits, atomic under threads."""

    def __init__(self) -> None:
        self.items: dict[str, Item] = {}
        self.counts = Counts()
        self._lock = threading.Lock()
        self._peeked: dict[tuple[int, int | None], tuple[Item | None, Item | None, Record]] = {}

    def load(self, chat: int, topic: int | None = None) -> Record:
        with self._lock:
            self.counts.reads += 1
            found = self.items.get(item.key(chat, topic))
            return item.record_of(chat, topic, found, self.items.get(item.key(chat)))

    def peek(self, chat: int, topic: int | None = None) -> Record:
        """The record as stored, for a test's assertions (not counted as a read): read again
        only when its item (or the chat's) was written since, as a test looks after every step.
        The same object until then: for reading, never to change."""
        with self._lock:
            found = self.items.get(item.key(chat, topic))
            budget = self.items.get(item.key(chat))
            seen = self._peeked.get((chat, topic))
            if seen is not None and seen[0] is found and seen[1] is budget:
                return seen[2]
            record = item.record_of(chat, topic, found, budget)
            self._peeked[chat, topic] = (found, budget, record)
            return record

    def apply(self, change: Change) -> None:
        update, condition, names, values = change.expression()
        request: dict[str, Any] = {"UpdateExpression": update, "ExpressionAttributeNames": names}
        request |= {"ExpressionAttributeValues": values, "ConditionExpression": condition or ""}
        check_update(request)
        with self._lock:
            self.counts.writes += 1
            stored = dict(self.items.get(change.key, {}))
            if not all(_holds(stored, test) for test in change.when):
                raise Conflict(change.key)
            for path, value in change.set.items():
                _put(stored, path, value)
            for path, value in change.fill.items():
                stored.setdefault(path, value)
            for path, value in change.append.items():
                stored[path] = {"L": [*stored.get(path, {"L": []})["L"], *value["L"]]}
            for path, value in change.add.items():
                stored[path] = {"NS": sorted({*stored.get(path, {"NS": []})["NS"], *value["NS"]})}
            for path, value in change.delete.items():
                left = set(stored.get(path, {"NS": []})["NS"]) - set(value["NS"])
                stored.pop(path, None)
                if left:
                    stored[path] = {"NS": sorted(left)}
            for path in change.remove:
                stored.pop(path, None)
            stored["pk"] = {"S": change.key}
            size = item_size(stored)
            if size > MAX_ITEM:
                raise too_big("UpdateItem", size)
            self.items[change.key] = stored

    def overdue(self, now: float, limit: int = 100) -> list[tuple[int, int | None]]:
        with self._lock:
            self.counts.reads += 1
            ready = sorted(
                (int(i["due"]["N"]), pk)
                for pk, i in self.items.items()
                if "due" in i and int(i["due"]["N"]) <= round(now * 1000)
            )
            return [item.place_of(pk) for _, pk in ready[:limit]]

    def topics(self, chat: int) -> list[int]:
        with self._lock:
            self.counts.reads += 1
            found = self.items.get(item.topics_key(chat), {})
            return sorted(int(n) for n in found.get("ts", {}).get("NS", []))

    def move(self, old_chat: int, new_chat: int) -> None:
        old, new = item.key(old_chat), item.key(new_chat)  # a basic group has no topics
        with self._lock:
            moving = self.items.get(old)
            if moving is None or "ver" not in moving:
                return
            copy = self.items.get(new, {})
            if "ver" not in copy or int(copy["ver"]["N"]) < int(moving["ver"]["N"]):
                self.items[new] = {**moving, "pk": {"S": new}}
            del self.items[old]


def _holds(stored: Item, test: Test) -> bool:
    found = stored.get(test.path)
    match test.op:
        case "absent":
            return found is None
        case "present":
            return found is not None
        case "=":
            assert test.value is not None
            return found is not None and item.equal(found, test.value)
        case "size":
            assert test.value is not None
            if found is None:
                return False
            ((_, inner),) = found.items()
            return Decimal(len(inner)) == Decimal(test.value["N"])


def _put(stored: Item, path: str, value: Value) -> None:
    """Set an attribute, or an entry of a map attribute (`map.entry`), which must exist (as
    DynamoDB refuses a path into nothing)."""
    name, _, entry = path.partition(".")
    if not entry:
        stored[name] = value
        return
    parent = stored.get(name)
    if parent is None or "M" not in parent:
        raise refused(
            "UpdateItem", "The document path provided in the update expression is invalid"
        )
    stored[name] = {"M": {**parent["M"], entry: value}}
