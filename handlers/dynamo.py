"""The store on DynamoDB: one item per chat (per forum topic), read with one consistent GetItem
and written with one UpdateItem conditional on the version read (see `handlers.store`).

The item's key is `chat#<chat>` (`chat#<chat>#<topic>` for a forum topic's game); the game and
the bot's bookkeeping are its `doc`, compressed; the timers' sparse index keys on `due`.
"""

from __future__ import annotations

import contextlib
import zlib
from typing import Any

from handlers.store import Conflict, Counts, Record

DUE_SHARD = "due"  # the sparse index's only partition: few games have a timer at once
SHARD_NAME = {"#shard": "shard"}  # a reserved word in DynamoDB


def _pack(document: str) -> dict[str, bytes]:
    """The document as stored: deflated, without zlib's header and checksum (DynamoDB keeps the
    bytes as they were given). An 8-player game's document takes about half its size so, which
    keeps the whole item within one write unit (1 KB) at every move, for some 15 µs a write."""
    deflate = zlib.compressobj(6, zlib.DEFLATED, -15)
    return {"B": deflate.compress(document.encode()) + deflate.flush()}


def unpack(value: dict[str, Any]) -> str:
    """The document of an item's `doc` attribute, as `Record.read_document` reads it."""
    if "S" in value:  # written before documents were compressed
        return str(value["S"])
    return zlib.decompress(value["B"], -15).decode()


def _pk(chat: int, topic: int | None = None) -> str:
    return f"chat#{chat}" if topic is None else f"chat#{chat}#{topic}"


def _place_of(pk: str) -> tuple[int, int | None]:
    chat, _, topic = pk.removeprefix("chat#").partition("#")
    return int(chat), int(topic) if topic else None


def _topics_pk(chat: int) -> str:
    return f"topics#{chat}"


def _flood_pk(chat: int) -> str:
    return f"flood#{chat}"


FLOOD_KEPT = 3600  # seconds a chat's flood budget outlives its latest message (then expires)


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
        key, flood_key = _pk(chat, topic), _flood_pk(chat)
        keys = [{"pk": {"S": key}}, {"pk": {"S": flood_key}}]
        found = self.client.batch_get_item(
            RequestItems={self.table: {"Keys": keys, "ConsistentRead": True}}
        )
        items = {i["pk"]["S"]: i for i in found.get("Responses", {}).get(self.table, [])}
        # Keys left unread (throttled): read one by one, as the rare case they are.
        for left in found.get("UnprocessedKeys", {}).get(self.table, {}).get("Keys", []):
            self.counts.reads += 1
            got = self.client.get_item(TableName=self.table, Key=left, ConsistentRead=True)
            if "Item" in got:
                items[left["pk"]["S"]] = got["Item"]
        record = Record(chat, topic)
        flood = items.get(flood_key, {})
        record.sends = [float(t["N"]) for t in flood.get("gs", {}).get("L", [])]
        record.sends_read = len(record.sends)
        record.hold = float(flood["hd"]["N"]) / 1000 if "hd" in flood else None
        item = items.get(key)
        if item is None:
            return record
        record.version = int(item["ver"]["N"])
        record.read_document(unpack(item["doc"]))
        record.next_look = float(item["due"]["N"]) / 1000 if "due" in item else None
        record.expires = int(item["expires"]["N"]) if "expires" in item else None
        record.writer = item["w"]["S"] if "w" in item else None
        record.owed = float(item["ow"]["N"]) / 1000 if "ow" in item else None
        record.owed_hands = "oh" in item
        record.moving = int(item["mv"]["N"]) if "mv" in item else None
        record.table_msg = int(item["tm"]["N"]) if "tm" in item else None
        record.final_msg = int(item["fm"]["N"]) if "fm" in item else None
        record.hand_msgs = {int(k): int(v["N"]) for k, v in item.get("hm", {}).get("M", {}).items()}
        record.unreachable = {int(n) for n in item.get("un", {}).get("NS", [])}
        record.marks = {
            int(k[1:]): v["BOOL"] for k, v in item.items() if k[:1] == "d" and k[1:].isdigit()
        }
        return record

    def save(self, record: Record, *, new_game: bool = False) -> Record:
        sets = ["ver = :new", "doc = :doc", "gn = :gn", "hm = if_not_exists(hm, :empty)"]
        removes = []
        values: dict[str, Any] = {
            ":new": {"N": str(record.version + 1)},
            ":doc": _pack(record.document()),
            ":gn": {"N": str(record.game_id)},
            ":empty": {"M": {}},
        }
        if record.next_look is None:
            removes += ["due", "#shard"]
        else:
            sets += ["due = :due", "#shard = :shard"]
            values[":due"] = {"N": str(round(record.next_look * 1000))}
            values[":shard"] = {"S": DUE_SHARD}
        if record.expires is None:
            removes.append("expires")
        else:
            sets.append("expires = :exp")
            values[":exp"] = {"N": str(record.expires)}
        if record.writer is not None:
            sets.append("w = :w")
            values[":w"] = {"S": record.writer}
        if new_game:
            sets[3] = "hm = :empty"
            # Who could not be reached was a fact of the last game's players: not kept for ever.
            removes += ["tm", "fm", "un"]
        removes += [f"d{stamp}" for stamp in record.unmarked()]
        if record.version == 0:
            condition = "attribute_not_exists(pk)"
        else:
            # An item marked as moving to its supergroup takes no more writes (see `move`).
            condition = "ver = :old AND attribute_not_exists(mv)"
            values[":old"] = {"N": str(record.version)}
        if record.redrawn is not None:
            removes += ["ow", "oh"]
            condition += " AND ow = :ow"
            if not record.owed_hands:  # hands owed since the read are not settled by this write
                condition += " AND attribute_not_exists(oh)"
            values[":ow"] = {"N": str(round(record.redrawn * 1000))}
        expression = "SET " + ", ".join(sets) + (" REMOVE " + ", ".join(removes) if removes else "")
        self.counts.writes += 1
        try:
            self.client.update_item(
                TableName=self.table,
                Key={"pk": {"S": _pk(record.chat, record.topic)}},
                UpdateExpression=expression,
                ConditionExpression=condition,
                ExpressionAttributeNames={"#shard": "shard"},  # a reserved word in DynamoDB
                ExpressionAttributeValues=values,
            )
        except self._conditional_failed as e:
            raise Conflict(record.chat) from e
        record.written(new_game=new_game)
        return record

    def spend(
        self, chat: int, times: list[float], *, recent: list[float] | None = None, read: int = 0
    ) -> None:
        key = {"pk": {"S": _flood_pk(chat)}}
        added = {"L": [{"N": f"{t:.1f}"} for t in times]}
        expires = {"N": str(round(max(times, default=0)) + FLOOD_KEPT)}
        self.counts.writes += 1
        if recent is not None:
            kept = {"L": [{"N": f"{t:.1f}"} for t in recent] + added["L"]}
            try:
                self.client.update_item(
                    TableName=self.table,
                    Key=key,
                    UpdateExpression="SET gs = :kept, expires = :exp",
                    ConditionExpression="size(gs) = :n",
                    ExpressionAttributeValues={
                        ":kept": kept,
                        ":exp": expires,
                        ":n": {"N": str(read)},
                    },
                )
                return
            except self._conditional_failed:
                self.counts.writes += 1  # someone added meanwhile: add ours to theirs
        self.client.update_item(
            TableName=self.table,
            Key=key,
            UpdateExpression=(
                "SET gs = list_append(if_not_exists(gs, :none), :added), expires = :exp"
            ),
            ExpressionAttributeValues={":none": {"L": []}, ":added": added, ":exp": expires},
        )

    def hold(self, chat: int, until: float) -> None:
        self.counts.writes += 1
        at = {"N": str(round(until * 1000))}
        with contextlib.suppress(self._conditional_failed):
            self.client.update_item(
                TableName=self.table,
                Key={"pk": {"S": _flood_pk(chat)}},
                UpdateExpression="SET hd = :at, expires = :exp",
                ConditionExpression="attribute_not_exists(hd) OR hd < :at",
                ExpressionAttributeValues={
                    ":at": at,
                    ":exp": {"N": str(round(until) + FLOOD_KEPT)},
                },
            )

    def mark(self, chat: int, topic: int | None, marks: dict[int, bool]) -> None:
        if not marks:
            return
        self.counts.writes += 1
        # Each parcel's mark is an attribute of its own (`d<stamp>`): a write that drops one
        # parcel's mark never touches another's, set meanwhile.
        sets = ", ".join(f"d{stamp} = :d{stamp}" for stamp in marks)
        values = {f":d{stamp}": {"BOOL": sent} for stamp, sent in marks.items()}
        with contextlib.suppress(self._conditional_failed):
            self.client.update_item(
                TableName=self.table,
                Key={"pk": {"S": _pk(chat, topic)}},
                UpdateExpression=f"SET {sets}",
                ConditionExpression="attribute_exists(ver)",
                ExpressionAttributeValues=values,
            )

    def owe(self, chat: int, at: float, topic: int | None = None, *, hands: bool = False) -> None:
        key = {"pk": {"S": _pk(chat, topic)}}
        at_ms = {"N": str(round(at * 1000))}
        later = "attribute_exists(ver) AND (attribute_not_exists(ow) OR ow < :at)"
        oh = ", oh = :t" if hands else ""
        t = {":t": {"BOOL": True}} if hands else {}
        # The mark, and `due` if it was later (or unset); else the mark alone; else a later mark
        # stands already, and the redraw it brings covers this one (its hands too, if owed).
        attempts: list[tuple[str, str, dict[str, Any]]] = [
            (
                f"SET ow = :at, due = :at, #shard = :shard{oh}",
                f"{later} AND (attribute_not_exists(due) OR due > :at)",
                {":at": at_ms, ":shard": {"S": DUE_SHARD}, **t},
            ),
            (f"SET ow = :at{oh}", later, {":at": at_ms, **t}),
        ]
        if hands:
            attempts.append(("SET oh = :t", "attribute_exists(ow)", t))
        for expression, condition, values in attempts:
            self.counts.writes += 1
            try:
                self.client.update_item(
                    TableName=self.table,
                    Key=key,
                    UpdateExpression=expression,
                    ConditionExpression=condition,
                    ExpressionAttributeValues=values,
                    **({"ExpressionAttributeNames": SHARD_NAME} if "#" in expression else {}),
                )
                return
            except self._conditional_failed:
                continue

    def remember(
        self,
        chat: int,
        game_id: int,
        *,
        topic: int | None = None,
        table: int | None = None,
        final: int | None = None,
        hands: dict[int, int] | None = None,
        unreachable: set[int] | None = None,
        reachable: set[int] | None = None,
    ) -> None:
        sets: list[str] = []
        values: dict[str, Any] = {":gn": {"N": str(game_id)}}
        names: dict[str, str] = {}
        if table is not None:
            sets.append("tm = :tm")
            values[":tm"] = {"N": str(table)}
        if final is not None:
            sets.append("fm = :fm")
            values[":fm"] = {"N": str(final)}
        for i, (player, message) in enumerate((hands or {}).items()):
            sets.append(f"hm.#p{i} = :m{i}")
            names[f"#p{i}"] = str(player)
            values[f":m{i}"] = {"N": str(message)}
        expression = "SET " + ", ".join(sets) if sets else ""
        if unreachable:
            expression += " ADD un :un"
            values[":un"] = {"NS": [str(p) for p in unreachable]}
        if reachable:
            expression += " DELETE un :re"
            values[":re"] = {"NS": [str(p) for p in reachable]}
        if not expression:
            return
        self.counts.writes += 1
        # A failed condition means a newer game replaced this one: these messages are no
        # longer ours to edit, and nothing needs remembering.
        with contextlib.suppress(self._conditional_failed):
            self.client.update_item(
                TableName=self.table,
                Key={"pk": {"S": _pk(chat, topic)}},
                UpdateExpression=expression.strip(),
                ConditionExpression="gn = :gn",
                ExpressionAttributeValues=values,
                **({"ExpressionAttributeNames": names} if names else {}),
            )

    def overdue(self, now: float, limit: int = 100) -> list[tuple[int, int | None]]:
        self.counts.reads += 1
        found = self.client.query(
            TableName=self.table,
            IndexName="DueIndex",
            KeyConditionExpression="#shard = :shard AND due <= :now",
            ExpressionAttributeNames={"#shard": "shard"},
            ExpressionAttributeValues={
                ":shard": {"S": DUE_SHARD},
                ":now": {"N": str(round(now * 1000))},
            },
            Limit=limit,
        )
        return [_place_of(item["pk"]["S"]) for item in found.get("Items", [])]

    def add_topic(self, chat: int, topic: int, expires: int | None) -> None:
        self.counts.writes += 1
        values: dict[str, Any] = {":t": {"NS": [str(topic)]}}
        sets = ""
        if expires is not None:
            sets, values[":exp"] = "SET expires = :exp ", {"N": str(expires)}
        self.client.update_item(
            TableName=self.table,
            Key={"pk": {"S": _topics_pk(chat)}},
            UpdateExpression=f"{sets}ADD ts :t",
            ExpressionAttributeValues=values,
        )

    def topics(self, chat: int) -> list[int]:
        self.counts.reads += 1
        item = self.client.get_item(
            TableName=self.table, Key={"pk": {"S": _topics_pk(chat)}}, ConsistentRead=True
        ).get("Item", {})
        return sorted(int(n) for n in item.get("ts", {}).get("NS", []))

    def move(self, old_chat: int, new_chat: int) -> None:
        # No transactions (dynalite has none), so: mark the old item as moving first, which
        # refuses every later write to it (a move still made on the old chat id, by a hand's
        # button, is refused and retried on the new one); then copy it, then delete it. Each
        # step may be repeated: a retry finishes a move left half-done.
        old_key, new_key = {"pk": {"S": _pk(old_chat)}}, {"pk": {"S": _pk(new_chat)}}
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
        item = self.client.get_item(TableName=self.table, Key=old_key, ConsistentRead=True).get(
            "Item"
        )
        if item is None:
            return  # another delivery of the migration finished it meanwhile
        del item["mv"]
        item.update(new_key)
        self.counts.writes += 2
        # Refused when the new chat holds this version or a later one: a retried move.
        with contextlib.suppress(self._conditional_failed):
            self.client.put_item(
                TableName=self.table,
                Item=item,
                ConditionExpression="attribute_not_exists(pk) OR ver < :ver",
                ExpressionAttributeValues={":ver": item["ver"]},
            )
        self.client.delete_item(TableName=self.table, Key=old_key)
