"""Where a chat's game lives: one item per group chat (per forum topic in a group with topics),
read once and written once per action.

`Store` is the port; `DynamoStore` the adapter (one consistent GetItem, one UpdateItem
conditional on the version) and `MemoryStore` the fake with the same semantics. The game and
the bot's bookkeeping travel as one compact JSON document; the ids of messages sent after a
write live in attributes of their own, set by a second, unconditional-on-version update, so they
never collide with a move written meanwhile.
"""

from __future__ import annotations

import contextlib
import json
import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

from engine import CLOCK_DEFAULT, Game, decode, encode
from handlers.callbacks import Place
from handlers.names import TITLE_LENGTH

RECENT_UPDATES = 12  # a retried update comes back within a minute, after a few others
DUE_SHARD = "due"  # the sparse index's only partition: few games have a timer at once
SHARD_NAME = {"#shard": "shard"}  # a reserved word in DynamoDB


class Conflict(Exception):
    """Someone else wrote the chat's item since it was read: reload and apply again."""


@dataclass
class Record:
    """Everything the bot keeps about one group chat, or one forum topic of it."""

    chat: int
    topic: int | None = None  # the forum topic (`message_thread_id`); None: the chat itself
    version: int = 0  # 0: never written
    game: Game | None = None
    game_id: int = 0  # the current game's, in its buttons (callbacks.GAME_IDS); 0: none yet
    lang: str = "en"
    # R20: the seconds a person has to play in the chat's games (0: no clock), the setting new
    # games open with; and the moment whose reminder was sent (at most one a turn).
    clock: int = CLOCK_DEFAULT
    reminded: int | None = None
    title: str = ""
    langs: dict[int, str] = field(default_factory=dict)  # player → language of their hand
    note: str | None = None  # the table's line about the latest events, kept for re-renders
    updates: list[int] = field(default_factory=list)  # update ids already applied
    sends: list[float] = field(default_factory=list)  # times of recent new group messages
    due: float | None = None  # when the timer must look at this game next
    expires: int | None = None  # epoch seconds after which DynamoDB may delete the item
    writer: str | None = None  # a token of the last write's attempt, written with it
    # Set after sending, outside the versioned document:
    moving: int | None = None  # the supergroup this item is moving to: writes here are refused
    owed: float | None = None  # when the screens are to be drawn again (Telegram said wait)
    redrawn: float | None = None  # the `owed` mark this write settles (cleared only if unchanged)
    table_msg: int | None = None
    final_msg: int | None = None
    hand_msgs: dict[int, int] = field(default_factory=dict)
    unreachable: set[int] = field(default_factory=set)  # players whose private chat said 403

    def document(self) -> str:
        """The versioned part, compact: the whole item must stay under one 1 KB write unit."""
        doc = {
            "g": None if self.game is None else encode(self.game),
            "n": self.game_id,
            "l": self.lang,
            "t": self.title[:TITLE_LENGTH],
            # Aligned with the seats, which carry the ids: no id is stored twice.
            "pl": [self.langs.get(p, "") for p in self.game.ids] if self.game else [],
            "no": self.note,
            # In the order applied: updates may arrive out of order, and the latest must stay.
            "u": _deltas(self.updates[-RECENT_UPDATES:]),
            "gs": _deltas([round(s) for s in self.sends]),
        }
        # Written only when they differ from what an item without them reads as.
        if self.clock != CLOCK_DEFAULT:
            doc["c"] = self.clock
        if self.reminded is not None:
            doc["rm"] = self.reminded
        return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)

    def read_document(self, text: str) -> None:
        doc = json.loads(text)
        self.game = None if doc["g"] is None else decode(doc["g"])
        self.game_id = doc["n"]
        self.lang = doc["l"]
        self.title = doc["t"]
        seats = self.game.ids if self.game else ()
        self.langs = {p: lang for p, lang in zip(seats, doc["pl"], strict=True) if lang}
        self.note = doc["no"]
        self.updates = _undeltas(doc["u"])
        self.sends = [float(s) for s in _undeltas(doc["gs"])]
        self.clock = doc.get("c", CLOCK_DEFAULT)
        self.reminded = doc.get("rm")

    def lang_of(self, player: int) -> str:
        """The language of a player's private messages."""
        return self.langs.get(player, self.lang)

    @property
    def place(self) -> Place:
        """Where the buttons of the record's game lead."""
        return Place(self.chat, self.game_id, self.topic)


def _deltas(values: list[int]) -> list[int]:
    """[a, b, c] as [a, b - a, c - b]: ids and times close together take a few digits each."""
    return [n - p for p, n in zip([0, *values], values, strict=False)]


def _undeltas(deltas: list[int]) -> list[int]:
    total, values = 0, []
    for d in deltas:
        total += d
        values.append(total)
    return values


@dataclass
class Counts:
    """DynamoDB requests made, for the benchmarks' requests-per-action figures."""

    reads: int = 0
    writes: int = 0


class Store(Protocol):
    counts: Counts

    def load(self, chat: int, topic: int | None = None) -> Record:
        """The record of the chat (or of its forum topic), read consistently; a new, unsaved
        one if there is none."""
        ...

    def save(self, record: Record, *, new_game: bool = False) -> Record:
        """Write `record` if nobody wrote since it was read (else `Conflict`); returns it with
        its new version. `new_game` forgets the message ids of the previous game."""
        ...

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
        """Keep what sending taught: the ids of messages just sent (unless the chat has moved on
        to another game) and which players' private chats refuse or accept the bot."""
        ...

    def owe(self, chat: int, at: float, topic: int | None = None) -> None:
        """The chat's screens are to be drawn again at `at` (a flood limit outlasted the
        handler): marked outside the versioned document, the latest mark kept, and `due` moved
        earlier if need be so that the sweep finds it."""
        ...

    def due(self, now: float, limit: int = 100) -> list[tuple[int, int | None]]:
        """Chats (and topics) whose timer is due at `now`: the safety-net sweep's reading."""
        ...

    def add_topic(self, chat: int, topic: int, expires: int | None) -> None:
        """A game was opened in a forum topic of `chat`: kept, so that whatever ends every game
        of the chat (the bot removed from it) finds that one."""
        ...

    def topics(self, chat: int) -> list[int]:
        """The forum topics of `chat` in which games were opened."""
        ...

    def move(self, old_chat: int, new_chat: int) -> None:
        """A group became a supergroup: its game now lives under the new chat id. Idempotent;
        while a move is under way the old record reads `moving` and refuses writes."""
        ...


def _pk(chat: int, topic: int | None = None) -> str:
    return f"chat#{chat}" if topic is None else f"chat#{chat}#{topic}"


def _place_of(pk: str) -> tuple[int, int | None]:
    chat, _, topic = pk.removeprefix("chat#").partition("#")
    return int(chat), int(topic) if topic else None


def _topics_pk(chat: int) -> str:
    return f"topics#{chat}"


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
        item = self.client.get_item(
            TableName=self.table, Key={"pk": {"S": _pk(chat, topic)}}, ConsistentRead=True
        ).get("Item")
        record = Record(chat, topic)
        if item is None:
            return record
        record.version = int(item["ver"]["N"])
        record.read_document(item["doc"]["S"])
        record.due = float(item["due"]["N"]) / 1000 if "due" in item else None
        record.expires = int(item["expires"]["N"]) if "expires" in item else None
        record.writer = item["w"]["S"] if "w" in item else None
        record.owed = float(item["ow"]["N"]) / 1000 if "ow" in item else None
        record.moving = int(item["mv"]["N"]) if "mv" in item else None
        record.table_msg = int(item["tm"]["N"]) if "tm" in item else None
        record.final_msg = int(item["fm"]["N"]) if "fm" in item else None
        record.hand_msgs = {int(k): int(v["N"]) for k, v in item.get("hm", {}).get("M", {}).items()}
        record.unreachable = {int(n) for n in item.get("un", {}).get("NS", [])}
        return record

    def save(self, record: Record, *, new_game: bool = False) -> Record:
        sets = ["ver = :new", "doc = :doc", "gn = :gn", "hm = if_not_exists(hm, :empty)"]
        removes = []
        values: dict[str, Any] = {
            ":new": {"N": str(record.version + 1)},
            ":doc": {"S": record.document()},
            ":gn": {"N": str(record.game_id)},
            ":empty": {"M": {}},
        }
        if record.due is None:
            removes += ["due", "#shard"]
        else:
            sets += ["due = :due", "#shard = :shard"]
            values[":due"] = {"N": str(round(record.due * 1000))}
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
            removes += ["tm", "fm"]
        if record.version == 0:
            condition = "attribute_not_exists(pk)"
        else:
            # An item marked as moving to its supergroup takes no more writes (see `move`).
            condition = "ver = :old AND attribute_not_exists(mv)"
            values[":old"] = {"N": str(record.version)}
        if record.redrawn is not None:
            removes.append("ow")
            condition += " AND ow = :ow"
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
        record.version += 1
        record.redrawn = None
        if new_game:
            record.table_msg = record.final_msg = None
            record.hand_msgs = {}
        return record

    def owe(self, chat: int, at: float, topic: int | None = None) -> None:
        key = {"pk": {"S": _pk(chat, topic)}}
        at_ms = {"N": str(round(at * 1000))}
        later = "attribute_exists(ver) AND (attribute_not_exists(ow) OR ow < :at)"
        # The mark, and `due` if it was later (or unset); else the mark alone; else a later mark
        # stands already, and the redraw it brings covers this one.
        for expression, condition, values in (
            (
                "SET ow = :at, due = :at, #shard = :shard",
                f"{later} AND (attribute_not_exists(due) OR due > :at)",
                {":at": at_ms, ":shard": {"S": DUE_SHARD}},
            ),
            ("SET ow = :at", later, {":at": at_ms}),
        ):
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

    def due(self, now: float, limit: int = 100) -> list[tuple[int, int | None]]:
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


@dataclass
class _Stored:
    version: int
    document: str
    game_id: int
    due: float | None
    expires: int | None
    writer: str | None = None
    owed: float | None = None
    table: int | None = None
    final: int | None = None
    hands: dict[int, int] = field(default_factory=dict)
    unreachable: set[int] = field(default_factory=set)


class MemoryStore:
    """The in-memory fake: the same conditional semantics, atomic under threads."""

    def __init__(self) -> None:
        self.items: dict[tuple[int, int | None], _Stored] = {}
        self.forum_topics: dict[int, set[int]] = {}
        self.counts = Counts()
        self._lock = threading.Lock()

    def load(self, chat: int, topic: int | None = None) -> Record:
        with self._lock:
            self.counts.reads += 1
            stored = self.items.get((chat, topic))
            record = Record(chat, topic)
            if stored is None:
                return record
            record.version = stored.version
            record.read_document(stored.document)
            record.due, record.expires = stored.due, stored.expires
            record.writer, record.owed = stored.writer, stored.owed
            record.table_msg, record.final_msg = stored.table, stored.final
            record.hand_msgs = dict(stored.hands)
            record.unreachable = set(stored.unreachable)
            return record

    def save(self, record: Record, *, new_game: bool = False) -> Record:
        with self._lock:
            self.counts.writes += 1
            place = (record.chat, record.topic)
            stored = self.items.get(place)
            if (stored.version if stored else 0) != record.version:
                raise Conflict(record.chat)
            owed = stored.owed if stored else None
            if record.redrawn is not None and owed != record.redrawn:
                raise Conflict(record.chat)
            kept = _Stored(
                record.version + 1,
                record.document(),
                record.game_id,
                record.due,
                record.expires,
                record.writer,
            )
            if record.redrawn is None:
                kept.owed = owed
            if stored is not None:
                kept.unreachable = stored.unreachable
                if not new_game:
                    kept.table, kept.final, kept.hands = stored.table, stored.final, stored.hands
            self.items[place] = kept
        record.version += 1
        record.redrawn = None
        if new_game:
            record.table_msg = record.final_msg = None
            record.hand_msgs = {}
        return record

    def owe(self, chat: int, at: float, topic: int | None = None) -> None:
        at = round(at * 1000) / 1000  # stored to the millisecond, as in DynamoDB
        with self._lock:
            self.counts.writes += 1
            stored = self.items.get((chat, topic))
            if stored is None or (stored.owed is not None and stored.owed >= at):
                return
            stored.owed = at
            if stored.due is None or stored.due > at:
                stored.due = at

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
        if table is None and final is None and not hands and not unreachable and not reachable:
            return
        with self._lock:
            self.counts.writes += 1
            stored = self.items.get((chat, topic))
            if stored is None or stored.game_id != game_id:
                return
            if table is not None:
                stored.table = table
            if final is not None:
                stored.final = final
            stored.hands.update(hands or {})
            stored.unreachable |= unreachable or set()
            stored.unreachable -= reachable or set()

    def due(self, now: float, limit: int = 100) -> list[tuple[int, int | None]]:
        with self._lock:
            self.counts.reads += 1
            ready = [
                (s.due, (c, t))
                for (c, t), s in self.items.items()
                if s.due is not None and s.due <= now
            ]
            return [place for _, place in sorted(ready, key=lambda r: r[0])[:limit]]

    def add_topic(self, chat: int, topic: int, expires: int | None) -> None:
        with self._lock:
            self.counts.writes += 1
            self.forum_topics.setdefault(chat, set()).add(topic)

    def topics(self, chat: int) -> list[int]:
        with self._lock:
            self.counts.reads += 1
            return sorted(self.forum_topics.get(chat, ()))

    def move(self, old_chat: int, new_chat: int) -> None:
        old, new = (old_chat, None), (new_chat, None)  # a basic group has no topics
        with self._lock:
            if old not in self.items:
                return
            copy = self.items.get(new)
            if copy is None or copy.version < self.items[old].version:
                self.items[new] = self.items[old]
            del self.items[old]
