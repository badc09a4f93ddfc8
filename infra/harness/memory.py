"""The store's fake for tests: `handlers.store.Store` in memory, with DynamoDB's conditional
semantics (tests/integration/test_store.py runs the same cases on both), atomic under threads."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from handlers.store import Conflict, Counts, Record


@dataclass
class _Stored:
    version: int
    document: str
    game_id: int
    next_look: float | None
    expires: int | None
    writer: str | None = None
    owed: float | None = None
    owed_hands: bool = False
    table: int | None = None
    final: int | None = None
    hands: dict[int, int] = field(default_factory=dict)
    unreachable: set[int] = field(default_factory=set)
    marks: dict[int, bool] = field(default_factory=dict)


class MemoryStore:
    """The in-memory fake: the same conditional semantics, atomic under threads."""

    def __init__(self) -> None:
        self.items: dict[tuple[int, int | None], _Stored] = {}
        self.forum_topics: dict[int, set[int]] = {}
        self.floods: dict[int, tuple[list[float], float | None]] = {}  # chat -> (sends, hold)
        self.counts = Counts()
        self._lock = threading.Lock()

    def load(self, chat: int, topic: int | None = None) -> Record:
        with self._lock:
            self.counts.reads += 1
            stored = self.items.get((chat, topic))
            record = Record(chat, topic)
            sends, record.hold = self.floods.get(chat, ([], None))
            record.sends = list(sends)
            record.sends_read = len(sends)
            if stored is None:
                return record
            record.version = stored.version
            record.read_document(stored.document)
            record.next_look, record.expires = stored.next_look, stored.expires
            record.writer, record.owed = stored.writer, stored.owed
            record.owed_hands = stored.owed_hands
            record.table_msg, record.final_msg = stored.table, stored.final
            record.hand_msgs = dict(stored.hands)
            record.unreachable = set(stored.unreachable)
            record.marks = dict(stored.marks)
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
            owed_hands = stored.owed_hands if stored else False
            if record.redrawn is not None and owed_hands and not record.owed_hands:
                raise Conflict(record.chat)
            kept = _Stored(
                record.version + 1,
                record.document(),
                record.game_id,
                record.next_look,
                record.expires,
                record.writer,
            )
            if record.redrawn is None:
                kept.owed, kept.owed_hands = owed, owed_hands
            if stored is not None and not new_game:
                kept.unreachable = stored.unreachable
                dropped = record.unmarked()
                kept.marks = {s: v for s, v in stored.marks.items() if s not in dropped}
                kept.table, kept.final, kept.hands = stored.table, stored.final, stored.hands
            self.items[place] = kept
        record.written(new_game=new_game)
        return record

    def spend(
        self, chat: int, times: list[float], *, recent: list[float] | None = None, read: int = 0
    ) -> None:
        with self._lock:
            self.counts.writes += 1
            sends, hold = self.floods.get(chat, ([], None))
            if recent is not None and len(sends) == read:
                sends = list(recent)
            self.floods[chat] = ([*sends, *(round(t, 1) for t in times)], hold)

    def hold(self, chat: int, until: float) -> None:
        with self._lock:
            self.counts.writes += 1
            sends, hold = self.floods.get(chat, ([], None))
            until = round(until * 1000) / 1000
            if hold is None or hold < until:
                self.floods[chat] = (sends, until)

    def mark(self, chat: int, topic: int | None, marks: dict[int, bool]) -> None:
        if not marks:
            return
        with self._lock:
            self.counts.writes += 1
            stored = self.items.get((chat, topic))
            if stored is not None:
                stored.marks.update(marks)

    def owe(self, chat: int, at: float, topic: int | None = None, *, hands: bool = False) -> None:
        at = round(at * 1000) / 1000  # stored to the millisecond, as in DynamoDB
        with self._lock:
            self.counts.writes += 1
            stored = self.items.get((chat, topic))
            if stored is None:
                return
            stored.owed_hands = stored.owed_hands or hands
            if stored.owed is not None and stored.owed >= at:
                return
            stored.owed = at
            if stored.next_look is None or stored.next_look > at:
                stored.next_look = at

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

    def overdue(self, now: float, limit: int = 100) -> list[tuple[int, int | None]]:
        with self._lock:
            self.counts.reads += 1
            ready = [
                (s.next_look, (c, t))
                for (c, t), s in self.items.items()
                if s.next_look is not None and s.next_look <= now
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
