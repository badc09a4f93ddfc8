"""A chat's item in the games table: how a `Record` is read from it, and what each write changes
in it, said once for both stores (DynamoDB's adapter and the tests' in-memory fake).

A write is a `handlers.store.Change`: one UpdateItem of one item. `handlers.dynamo` sends it
as an update expression; `infra.harness.memory` performs it on a dictionary. The writes:

- `commit`: the conditional write of an action, on the version read (`Conflict` otherwise): the
  document, the timer's `due`, the marks of the moments it stops carrying, and, in the chat's
  own item, the group messages its plan sends counted in the chat's flood budget;
- `receipt`: what sending taught, kept by one write on the game that sent (none once a new game
  replaced it): the new messages' ids, who cannot be reached, the sent marks, Telegram's wait,
  a redraw owed;
- the flood budget alone, after either, for a forum topic's game (the budget is the chat's, in
  the chat's own item) or a chat with no game yet;
- `topic`: a forum topic a game was opened in, for whatever ends every game of the chat.

The item's attributes: `ver` (the version), `doc` (the versioned document, deflated), `gn` (the
game id, which the receipt is conditioned on), `due` and `shard` (the timers' sparse index),
`expires`, `w` (the writer's token), `mv` (a move under way to a supergroup), `tm`, `fm`, `hm`
(the table's, the final play's and the hands' message ids), `un` (players the bot cannot reach),
`d<stamp>` (a moment's sent mark), `ow` and `oh` (a redraw owed, and whether of the hands too);
in a chat's own item also its flood budget, `gs` (the times of group messages) and `hd` (until
when Telegram said to wait).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import replace
from decimal import Decimal
from types import MappingProxyType
from typing import NamedTuple

from handlers.store import Change, Record, Store, Test, Value

DUE_SHARD = "due"  # the sparse index's only partition: few games have a timer at once
BUDGET_KEPT = 3600  # seconds an item holding only a chat's flood budget outlives its last send
SEND_WINDOW = 60.0  # seconds: the flood budget counts the group messages of the last minute


# --- keys ------------------------------------------------------------------------------------


def key(chat: int, topic: int | None = None) -> str:
    """A game's item: the chat's own (`chat#<chat>`), or a forum topic's."""
    return f"chat#{chat}" if topic is None else f"chat#{chat}#{topic}"


def place_of(pk: str) -> tuple[int, int | None]:
    chat, _, topic = pk.removeprefix("chat#").partition("#")
    return int(chat), int(topic) if topic else None


def topics_key(chat: int) -> str:
    return f"topics#{chat}"


# --- values ------------------------------------------------------------------------------------


def number(n: float) -> Value:
    return {"N": str(n)}


def millis(seconds: float) -> Value:
    """A moment as stored: whole milliseconds."""
    return {"N": str(round(seconds * 1000))}


def times(values: Sequence[float]) -> Value:
    return {"L": [{"N": f"{t:.1f}"} for t in values]}


def numbers(values: Sequence[int] | set[int] | frozenset[int]) -> Value:
    return {"NS": [str(n) for n in sorted(values)]}


def pack(document: str) -> Value:
    """The document as stored: deflated, without zlib's header and checksum (DynamoDB keeps the
    bytes as they were given). An 8-player game's document takes about half its size so, which
    keeps the whole item within one write unit (1 KB) at every move, for some 15 µs a write."""
    deflate = zlib.compressobj(6, zlib.DEFLATED, -15)
    return {"B": deflate.compress(document.encode()) + deflate.flush()}


def unpack(value: Value) -> str:
    """The document of an item's `doc` attribute, as `Record.read_document` reads it."""
    if "S" in value:  # written before documents were compressed
        return str(value["S"])
    return zlib.decompress(value["B"], -15).decode()


def equal(a: Value, b: Value) -> bool:
    """Two typed values equal as DynamoDB compares them (numbers by value)."""
    if "N" in a and "N" in b:
        return Decimal(a["N"]) == Decimal(b["N"])
    return a == b


# --- reading ------------------------------------------------------------------------------------


def record_of(
    chat: int,
    topic: int | None,
    item: Mapping[str, Value] | None,
    chat_item: Mapping[str, Value] | None,
) -> Record:
    """The record of a game's item (None: never written) and the chat's flood budget, from the
    chat's own item (the same one when the game is the chat's own)."""
    record = Record(chat, topic)
    budget = chat_item or {}
    record.sends = [float(t["N"]) for t in budget.get("gs", {}).get("L", [])]
    record.hold = float(budget["hd"]["N"]) / 1000 if "hd" in budget else None
    if item is None or "ver" not in item:
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


# --- writing ------------------------------------------------------------------------------------


class Write(NamedTuple):
    """An action's conditional write: the record as the write leaves it (its `version` the
    next one: the write is conditioned on the one before), and what else its item changes."""

    record: Record
    now: float
    new_game: bool = False  # the last game's message ids and unreachable players are forgotten
    dropped: tuple[int, ...] = ()  # moments no longer carried, by stamp: their marks go
    given_up: tuple[int, ...] = ()  # moments the minute has no room for: marked owed at once
    spent: tuple[float, ...] = ()  # the group messages its plan sends, counted in the budget
    owe: float | None = None  # the screens to draw again then (a first table with no room)
    settles: float | None = None  # the redraw mark it settles (only if still the one read)
    with_hands: bool = False  # and whether that redraw drew the hands too


class Kept(NamedTuple):
    """What sending taught that the store keeps (`handlers.learn` computes it), by one write on
    the game that sent."""

    table: int | None = None  # a new table message's id
    final: int | None = None  # a final play's message, whose buttons go once it is settled
    hands: Mapping[int, int] = MappingProxyType({})  # player → a new hand message's id
    unreachable: frozenset[int] = frozenset()  # players whose private chat refuses the bot now
    reachable: frozenset[int] = frozenset()  # and players whose private chat works again
    marks: Mapping[int, bool] = MappingProxyType({})  # stamp → the moment was sent
    hold: float | None = None  # Telegram said the group must wait until then
    owed: float | None = None  # the screens to draw again then (Telegram made them wait)
    owed_hands: bool = False  # the private hands among them
    spent: tuple[float, ...] = ()  # group messages sent after the write (the notices)

    def __bool__(self) -> bool:
        return any(
            (
                self.table is not None,
                self.final is not None,
                self.hands,
                self.unreachable,
                self.reachable,
                self.marks,
                self.hold is not None,
                self.owed is not None,
                self.spent,
            )
        )


def commit(write: Write) -> list[Change]:
    """The conditional write of `write.record` (first; `Conflict` if it fails), and for a forum
    topic's game the chat's flood budget after it (its failure costs at worst a 429)."""
    record = write.record
    read = record.version - 1
    sets: dict[str, Value] = {
        "ver": number(record.version),
        "doc": pack(record.document()),
        "gn": number(record.game_id),
    }
    fill: dict[str, Value] = {}
    removes: list[str] = []
    if record.next_look is None:
        removes += ["due", "shard"]
    else:
        sets["due"], sets["shard"] = millis(record.next_look), {"S": DUE_SHARD}
    if record.expires is None:
        removes.append("expires")
    else:
        sets["expires"] = number(record.expires)
    if record.writer is not None:
        sets["w"] = {"S": record.writer}
    if write.new_game:
        # A new game forgets the last game's messages, and whom it could not reach.
        sets["hm"] = {"M": {}}
        removes += ["tm", "fm", "un"]
    else:
        fill["hm"] = {"M": {}}
    # The marks of the moments it stops carrying go (a mark landing later for one of them names
    # a stamp no write gives again); those it cannot send now are owed to anyone at once.
    removes += [f"d{stamp}" for stamp in write.dropped]
    sets |= {f"d{stamp}": {"BOOL": False} for stamp in write.given_up}
    when: list[Test] = []
    if read == 0:
        when.append(Test("ver", "absent"))
    else:
        # An item marked as moving to its supergroup takes no more writes (see `move`).
        when += [Test("ver", "=", number(read)), Test("mv", "absent")]
    if write.settles is not None:
        # The redraw this write makes settles the mark it read, and no later one.
        when.append(Test("ow", "=", millis(write.settles)))
        if not write.with_hands:  # hands owed since the read are not settled by this write
            when.append(Test("oh", "absent"))
        if write.owe is None:
            removes += ["ow", "oh"]
    if write.owe is not None:
        sets["ow"] = millis(write.owe)
    change = Change(key(record.chat, record.topic), sets, fill, remove=tuple(removes))
    if record.topic is None:
        return [_merged(change, budget(record, write.now, write.spent, alone=False), when)]
    spent = budget(record, write.now, write.spent)
    return [_merged(change, Change(change.key), when), spent]


def receipt(record: Record, kept: Kept, now: float) -> list[Change]:
    """What sending taught, kept by one write on the game that sent (none if a new game replaced
    it: those messages are no longer the chat's), the budget's part in the same write for the
    chat's own game; a forum topic's, or a chat with no game, writes the budget on its own."""
    sets: dict[str, Value] = {}
    add: dict[str, Value] = {}
    delete: dict[str, Value] = {}
    if kept.table is not None:
        sets["tm"] = number(kept.table)
    if kept.final is not None:
        sets["fm"] = number(kept.final)
    sets |= {f"hm.{player}": number(message) for player, message in kept.hands.items()}
    sets |= {f"d{stamp}": {"BOOL": sent} for stamp, sent in kept.marks.items()}
    unreachable = kept.unreachable - kept.reachable
    if unreachable and kept.reachable:
        # One attribute takes one action in a write: the set as it now stands (the rare delivery
        # that both reached a player again and met another's refusal).
        sets["un"] = numbers((record.unreachable - kept.reachable) | unreachable)
    elif unreachable:
        add["un"] = numbers(unreachable)
    elif kept.reachable:
        delete["un"] = numbers(kept.reachable)
    if kept.owed is not None and (record.owed is None or kept.owed > record.owed):
        # The latest mark is kept: the redraw it brings covers an earlier one.
        sets["ow"] = millis(kept.owed)
        if record.next_look is None or record.next_look > kept.owed:
            # Earlier than the timer's next look: the sweep finds it then too.
            sets["due"], sets["shard"] = millis(kept.owed), {"S": DUE_SHARD}
    if kept.owed is not None and kept.owed_hands:
        sets["oh"] = {"BOOL": True}
    hold = kept.hold if kept.hold is not None and kept.hold > (record.hold or 0) else None
    if record.version == 0:
        return [c for c in (budget(record, now, kept.spent, hold),) if c]
    change = Change(key(record.chat, record.topic), sets, add=add, delete=delete)
    when = [Test("gn", "=", number(record.game_id))]
    if record.topic is None:
        # Never pruned here: a condition that failed would lose the marks with it.
        spent = budget(record, now, kept.spent, hold, alone=False, prune=False)
        return [c for c in (_merged(change, spent, when),) if c]
    changes = (_merged(change, Change(change.key), when), budget(record, now, kept.spent, hold))
    return [c for c in changes if c]


def budget(
    record: Record,
    now: float,
    spent: Sequence[float],
    hold: float | None = None,
    *,
    alone: bool = True,
    prune: bool = True,
) -> Change:
    """The chat's flood budget: `spent` added to it (every topic's game adds to it, so never in
    place of what another added), and Telegram's wait kept. Times out of the minute go, in the
    same write, on condition that nobody added any since the read (`otherwise`: only added, for
    a write on its own; the action's own write is conditional anyway, and read again)."""
    sets: dict[str, Value] = {}
    fill: dict[str, Value] = {}
    if hold is not None:
        sets["hd"] = millis(hold)
    if alone:
        # Written on its own, to an item that may hold nothing but the budget: it expires then.
        fill["expires"] = number(round(max([now, *spent])) + BUDGET_KEPT)
    chat = key(record.chat)
    if not spent:
        return Change(chat, sets, fill) if hold is not None else Change(chat)
    added = Change(chat, sets, fill, {"gs": times(spent)})
    recent = [s for s in record.sends if now - s < SEND_WINDOW]
    if len(recent) == len(record.sends) or not prune:
        return added
    kept = {"gs": times([*recent, *spent])}
    when = (Test("gs", "size", number(len(record.sends))),)
    return Change(chat, sets | kept, fill, when=when, otherwise=added if alone else None)


def _merged(change: Change, budget: Change, when: Sequence[Test]) -> Change:
    """`change` and the budget's, in the chat's own item: one write."""
    return Change(
        change.key,
        {**change.set, **budget.set},
        {**change.fill, **budget.fill},
        {**change.append, **budget.append},
        change.add,
        change.delete,
        change.remove,
        (*when, *budget.when),
    )


def topic(chat: int, topic: int, expires: int | None) -> Change:
    """A game was opened in forum topic `topic` of `chat`: kept, so that whatever ends every game
    of the chat (the bot removed from it) finds that one."""
    return Change(
        topics_key(chat),
        {} if expires is None else {"expires": number(expires)},
        add={"ts": numbers({topic})},
    )


def save(store: Store, record: Record, *, new_game: bool = False) -> Record:
    """`record` written as it stands, on the version it was read at (`Conflict` otherwise), and
    returned as written: for the local runner's resumed game, and tests that set a game up by
    hand. An action's write is `commit`'s, with what its plan stores."""
    written = replace(record, version=record.version + 1, redrawn=None)
    if new_game:
        written = written.forgotten()
    carried = {p.stamp for p in record.outbox}
    dropped = tuple(s for s in record.marks if s not in carried)
    write = Write(
        written,
        0.0,
        new_game=new_game,
        dropped=dropped,
        settles=record.redrawn,
        with_hands=record.owed_hands,
    )
    for change in commit(write):
        store.apply(change)
    return written
