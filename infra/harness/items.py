"""A chat's stored item as DynamoDB holds it, and its size as DynamoDB measures it: for the tests
of its size and the engine benchmark, which build it the same way.

    with dynamodb() as client:
        sizes = [item_size(item) for _, item in game_items(client, seed=1)]
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3
from moto import mock_aws

from engine import Game, Join, Phase, Start, apply, open_table, settle, strategy, view
from handlers import item, names, plan
from handlers.callbacks import GAME_IDS
from handlers.dynamo import DynamoStore
from handlers.item import Kept
from handlers.outcomes import Decision
from handlers.plan import written
from handlers.store import Record
from handlers.text import SUPPORTED
from infra.harness.limits import Limited, item_size
from infra.table import create_table

__all__ = ["dynamodb", "game_items", "item_size"]

SIXTEEN = "Abcdefghijklmnop"
CHAT = -1001234567890  # a supergroup's id: the longest kind there is
TABLE = "games"
TITLE = "A group with a long title indeed"  # cut to the 24 characters stored
IDLE_EXPIRY = 86400.0
# Message ids as a busy supergroup has them (7 digits), and a private chat of some years (5).
TABLE_MESSAGE, FINAL_MESSAGE, HAND_MESSAGE = 1_234_567, 1_234_599, 54_321


@contextmanager
def dynamodb() -> Iterator[Any]:
    """A moto DynamoDB client with the games table, built from template.yaml, refusing what
    DynamoDB refuses (`Limited`)."""
    with mock_aws():
        client = Limited(boto3.client("dynamodb", region_name="us-east-1"))
        create_table(client, TABLE)
        yield client


def game_items(
    client: Any,
    seed: int,
    lang: str,
    name: str = SIXTEEN,
    players: int = 8,
    *,
    level: str = "normal",
) -> Iterator[tuple[Game, dict[str, Any]]]:
    """One whole game of `players` people all named `name` (told apart by superscripts, which
    makes every name longer) in a group speaking `lang`, their moves chosen by a computer
    player's `level` (seeded): after each move (the start included), the game and its chat's
    item as stored. Each move writes the record as the transaction does (`plan.written`,
    `item.commit`: the table's note, the outbox, the times of the minute's group messages, the
    latest update ids, the timer and the expiry, a writer's token), then its receipt (the
    moments marked sent); the first write's receipt has every message id the bot remembers: the
    table, a final play, every player's hand, a player it cannot reach. Every player's hand
    speaks a language (half of them the other one)."""
    rng = random.Random(seed)
    choose = strategy.LEVELS[level]
    store = DynamoStore(client, TABLE)
    chat = CHAT - seed  # an item of its own, with an id as long
    now = 1_764_400_000.0
    ids = [7_000_000_000 + p for p in range(1, players + 1)]
    game = open_table(ids[0], now, name)
    for player in ids[1:]:
        game, _ = apply(game, Join(player, name), now)
    record = Record(chat, game=game, game_id=GAME_IDS.stop - 1, lang=lang)
    record.title = names.title(TITLE)
    record.langs = {p: SUPPORTED[i % len(SUPPORTED)] for i, p in enumerate(ids)}
    update = 912_345_678
    before = game
    game, events = apply(game, Start(ids[0], seed), now)
    while True:
        record.game = game
        decision = Decision(write=True, events=events, new_game=record.version == 0)
        # The item as written: the moments' parcels in it, not yet marked sent.
        planned = plan.of(before, record, decision, now, update_id=update)
        update += rng.randint(1, 3)
        writer = f"{rng.getrandbits(40):010x}.{record.version:x}"
        write = written(record, decision, planned, now, update, writer, IDLE_EXPIRY)
        for change in item.commit(write):
            store.apply(change)
        first, record = record.version == 0, write.record
        if first:
            hands = dict.fromkeys(ids, HAND_MESSAGE)
            kept = Kept(TABLE_MESSAGE, FINAL_MESSAGE, hands, unreachable=frozenset({ids[1]}))
            for change in item.receipt(record, kept, now):
                store.apply(change)
            # What the next read would find beside the document.
            record.table_msg, record.final_msg, record.hand_msgs = (
                TABLE_MESSAGE,
                FINAL_MESSAGE,
                hands,
            )
            record.unreachable = {ids[1]}
        # Sent: marked so beside the document, as the next read finds them (and drops them).
        marks = {p.stamp: True for p in planned.packed.taken}
        for change in item.receipt(record, Kept(marks=marks), now):
            store.apply(change)
        record.marks = {**record.marks, **marks}
        key = {"pk": {"S": f"chat#{chat}"}}
        stored = client.get_item(TableName=TABLE, Key=key)["Item"]
        record.sends = [float(t["N"]) for t in stored.get("gs", {}).get("L", [])]
        yield game, stored
        if game.phase is Phase.OVER:
            return
        before = game
        now += 1.5
        order = rng.sample(game.ids, len(game.ids))
        move = next((m for m in (choose(view(game, p, now), rng) for p in order) if m), None)
        if move is None:
            now += 45
            game, events = settle(game, now)
        else:
            game, events = apply(game, move, now)
