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
from handlers import names, plan, timing
from handlers.callbacks import GAME_IDS
from handlers.dynamo import DynamoStore
from handlers.outcomes import Decision
from handlers.store import Record
from handlers.text import SUPPORTED
from infra.table import create_table

SIXTEEN = "Abcdefghijklmnop"
CHAT = -1001234567890  # a supergroup's id: the longest kind there is
TABLE = "games"
TITLE = "A group with a long title indeed"  # cut to the 24 characters stored
IDLE_EXPIRY = 86400.0
# Message ids as a busy supergroup has them (7 digits), and a private chat of some years (5).
TABLE_MESSAGE, FINAL_MESSAGE, HAND_MESSAGE = 1_234_567, 1_234_599, 54_321


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
        if kind == "NS":
            return sum(size({"N": n}) for n in inner)
        if kind == "M":
            return 3 + sum(len(k.encode()) + size(x) + 1 for k, x in inner.items())
        raise AssertionError(kind)

    return sum(len(name.encode()) + size(v) for name, v in value.items())


@contextmanager
def dynamodb() -> Iterator[Any]:
    """A moto DynamoDB client with the games table, built from template.yaml."""
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        create_table(client, TABLE)
        yield client


def game_items(
    client: Any, seed: int, lang: str, name: str = SIXTEEN, players: int = 8
) -> Iterator[tuple[Game, dict[str, Any]]]:
    """One whole game of `players` people all named `name` (told apart by superscripts, which
    makes every name longer) in a group speaking `lang`, their moves chosen by the computer
    player's strategy (seeded): after each move (the start included), the game and its chat's
    item as stored. Each move writes the record as the transaction does: the table's note
    and the times of the minute's group messages (`plan.plan`), the latest update
    ids, the timer and the expiry, a writer's token; the first write is followed by every
    message id the bot remembers: the table, a final play, every player's hand, a player it
    cannot reach. Every player's hand speaks a language (half of them the other one)."""
    rng = random.Random(seed)
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
        decision = Decision(write=True, events=events)
        # The item as written: the moments' parcels in it, not yet marked sent.
        planned = plan.plan(before, record, decision, now, update_id=update)
        planned.keep(record)
        record.sends = list(planned.sends)
        parcels = planned.parcels
        update += rng.randint(1, 3)
        record.updates = [*record.updates, update]
        record.writer = f"{rng.getrandbits(40):010x}.{record.version:x}"
        record.next_look = timing.next_look(record, IDLE_EXPIRY)
        record.expires = timing.expiry(record, now, IDLE_EXPIRY)
        first = record.version == 0
        store.save(record, new_game=first)
        if first:
            hands = dict.fromkeys(ids, HAND_MESSAGE)
            store.remember(
                chat, record.game_id, table=TABLE_MESSAGE, final=FINAL_MESSAGE, hands=hands
            )
            store.remember(chat, record.game_id, unreachable={ids[1]})
            # What the next read would find beside the document.
            record.table_msg, record.final_msg, record.hand_msgs = (
                TABLE_MESSAGE,
                FINAL_MESSAGE,
                hands,
            )
            record.unreachable = {ids[1]}
        # Sent: marked so beside the document, as the next read finds them (and drops them).
        record.marks = {p.stamp: True for p in parcels}
        store.mark(chat, None, record.marks)
        key = {"pk": {"S": f"chat#{chat}"}}
        yield game, client.get_item(TableName=TABLE, Key=key)["Item"]
        if game.phase is Phase.OVER:
            return
        before = game
        now += 1.5
        order = rng.sample(game.ids, len(game.ids))
        move = next(
            (m for m in (strategy.choose(view(game, p, now), rng) for p in order) if m), None
        )
        if move is None:
            now += 45
            game, events = settle(game, now)
        else:
            game, events = apply(game, move, now)
