"""What one game action costs the bot: store requests, Telegram requests, time — and flood.

    .venv/bin/python benchmarks/bot.py [--games 5] [--players 4] [--no-metrics]

Plays whole games through the webhook handler, with people pressing the buttons Telegram would
show them (plays, Liar!, Let it stand, card toggles), on a real DynamoDB-compatible server
(dynalite) and a local fake Bot API. Prints, per kind of action: DynamoDB reads and writes
(goal: 1 + 1, and 0 for a card toggle), Telegram requests (goal <= 3; the answer to a button
rides on the webhook response and costs none), the most group messages in any minute of the
fastest possible game (goal <= 20), and the handler's own time per update next to the floor it
cannot beat — parsing the update plus one read and one write on the same store (goal <= 1.5x).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# Run as a script, this folder comes first on sys.path: put the project's root there instead.
sys.path[0] = str(Path(__file__).resolve().parent.parent)

from telegram import Update  # noqa: E402

from engine import LetItStand, Phase, Play, Shout, strategy, view  # noqa: E402
from handlers import item, telegram_io, webhook  # noqa: E402
from handlers.callbacks import Kind  # noqa: E402
from handlers.dynamo import DynamoStore  # noqa: E402
from handlers.screens import Request  # noqa: E402
from handlers.store import Record  # noqa: E402
from infra.dynalite import Dynalite  # noqa: E402
from infra.harness import GROUP, Person, people  # noqa: E402
from infra.harness.bot import Table, running_bot  # noqa: E402
from infra.harness.screens import card_buttons  # noqa: E402

SECONDS_PER_ACTION = 1.0  # the fastest table: someone acts every second, no one hesitates


class Meter:
    """Counts what each action costs, by kind of action."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.costs: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
        self.handler_ms: list[float] = []
        self.kind_ms: dict[str, list[float]] = defaultdict(list)
        self.kind_floor: dict[str, list[float]] = defaultdict(list)
        self.floor_ms: list[float] = []
        self.sending_ms: list[float] = []
        self.updates: list[dict[str, Any]] = []

    def act(self, kind: str, action: Callable[..., object], *args: Any) -> None:
        store, tg = self.table.rt.store, self.table.tg
        reads, writes = store.counts.reads, store.counts.writes
        calls = len([c for c in tg.calls() if c.method != "answerCallbackQuery"])
        timed = len(self.handler_ms)
        action(*args)
        self.kind_ms[kind] += self.handler_ms[timed:]
        self.kind_floor[kind] += self.floor_ms[timed:]
        after = len([c for c in tg.calls() if c.method != "answerCallbackQuery"])
        self.costs[kind].append(
            (store.counts.reads - reads, store.counts.writes - writes, after - calls)
        )


def instrument(table: Table, meter: Meter) -> None:
    """Time the webhook handler, less the part of it spent waiting on Telegram; and, right
    after each update, the floor on the same update under the same conditions."""
    handle = webhook.handle
    deliver = telegram_io.deliver
    # Its own adapter on the same table and connection, so the bot's counts stay the bot's.
    bots = table.c.store.inner
    assert isinstance(bots, DynamoStore)
    store = DynamoStore(bots.client, bots.table)
    scratch: list[Record] = []

    def timed_handle(event: dict[str, Any], rt: Any) -> dict[str, Any]:
        update = json.loads(event["body"])
        meter.updates.append(update)
        sent = len(meter.sending_ms)
        started = time.perf_counter()
        result = handle(event, rt)
        total = (time.perf_counter() - started) * 1000
        meter.handler_ms.append(total - sum(meter.sending_ms[sent:]))
        if not scratch:
            record = store.load(GROUP)
            record.chat, record.version = -1, 0  # an item of the same size, out of the way
            scratch.append(item.save(store, record))
        # The floor: what any handler must do for this update — parse it, one consistent
        # read and one conditional write of the game's item — at the same point of the run.
        started = time.perf_counter()
        Update.de_json(json.loads(event["body"]), table.rt.bot)
        item.save(store, store.load(-1))
        meter.floor_ms.append((time.perf_counter() - started) * 1000)
        return result

    async def timed_deliver(bot: Any, requests: Sequence[Request], **kw: Any) -> Any:
        started = time.perf_counter()
        try:
            return await deliver(bot, requests, **kw)
        finally:
            meter.sending_ms.append((time.perf_counter() - started) * 1000)

    # The handler and the bot look these up on their modules at each call.
    setattr(webhook, "handle", timed_handle)  # noqa: B010
    setattr(telegram_io, "deliver", timed_deliver)  # noqa: B010


def play_game(table: Table, meter: Meter, players: list[Person], rng: random.Random) -> None:
    opener = players[0]
    meter.act("/newgame", table.say, opener, "/newgame")
    for person in players:
        meter.act("join", table.join, person)
    start = table.group_message_with(Kind.START)
    meter.act("start", table.press_button, opener, start, Kind.START)
    by_id = {p.id: p for p in players}
    for _ in range(3000):
        game = table.game()
        if game.phase is Phase.OVER:
            return
        table.clock.advance(SECONDS_PER_ACTION)
        now = table.clock.now
        for player in rng.sample(game.ids, len(game.ids)):
            move = strategy.choose(view(game, player, now), rng)
            if move is not None:
                break
        else:
            continue
        person = by_id[player]
        match move:
            case Play(cards=cards):
                hand = table.hand_message(person)
                toggles = card_buttons(hand)
                for card in sorted(c for c in range(52) if cards >> c & 1):
                    data = toggles[card]
                    meter.act("toggle", table.press, person, person.id, hand.message_id, data)
                    hand = table.hand_message(person)
                    toggles = card_buttons(hand)
                meter.act("play", table.press_button, person, hand, Kind.PLAY)
            case Shout():
                message = table.group_message_with(Kind.SHOUT)
                meter.act("Liar!", table.press_button, person, message, Kind.SHOUT)
            case LetItStand():
                message = table.group_message_with(Kind.STAND)
                meter.act("let it stand", table.press_button, person, message, Kind.STAND)
    raise AssertionError("the game did not end")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=5)
    parser.add_argument("--players", type=int, default=4, choices=range(2, 9))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--no-metrics",
        action="store_true",
        help="outcome lines without their CloudWatch metrics (else with every one: detailed)",
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)
    players = people(args.players)
    namespace = None if args.no_metrics else "Menteur/benchmark"
    with (
        Dynalite() as server,
        running_bot(
            seed=args.seed,
            dynamodb=server.client(),
            metrics_namespace=namespace,
            metrics_detailed=True,
        ) as table,
    ):
        meter = Meter(table)
        instrument(table, meter)
        for _ in range(args.games):
            play_game(table, meter, players, rng)
            table.clock.advance(60)
        worst_minute = table.tg.max_messages_per_minute(GROUP)

    metrics = "without" if args.no_metrics else "with"
    print(
        f"{args.games} games of {args.players} players, {len(meter.updates)} updates, "
        f"outcome lines {metrics} their metrics"
    )
    print(f"{'action':<14}{'count':>7}{'reads':>8}{'writes':>8}{'telegram':>10}  (mean, max)")
    for kind, costs in sorted(meter.costs.items()):
        columns = []
        for i in range(3):
            values = [c[i] for c in costs]
            columns.append(f"{statistics.mean(values):.2f}/{max(values)}")
        print(f"{kind:<14}{len(costs):>7}{columns[0]:>8}{columns[1]:>8}{columns[2]:>10}")
    print(f"group messages in the busiest minute, one action a second: {worst_minute} (goal <= 20)")
    kinds = ("play", "Liar!", "let it stand")
    moves = [ms for kind in kinds for ms in meter.kind_ms[kind]]
    floor = [ms for kind in kinds for ms in meter.kind_floor[kind]]
    handler = statistics.median(moves)
    sending = statistics.median(meter.sending_ms)
    base = statistics.median(floor)
    print("handler's own time per game move (play, Liar!, let it stand; Telegram waits excluded):")
    print(f"  median {handler:.2f} ms, p90 {statistics.quantiles(moves, n=10)[-1]:.2f} ms")
    print(f"  card toggle (no store): median {statistics.median(meter.kind_ms['toggle']):.2f} ms")
    print(f"waiting on the local Bot API per update, median: {sending:.2f} ms")
    print(f"floor (parse + 1 read + 1 write on dynalite, after each), median: {base:.2f} ms")
    print(f"handler / floor: {handler / base:.2f}x (goal <= 1.5x)")


if __name__ == "__main__":
    main()
