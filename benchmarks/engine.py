"""How fast and how small the engine is, next to the cost of parsing one Telegram update.

    .venv/bin/python benchmarks/engine.py [--games 10000] [--seed 1] [--item-games 20]
        [--level normal]

Plays whole games between computer players of one level (2-8 seats, seeded) and prints games
per second, the median and p99 time to apply one move and to make one player's view, the
encoded size of 8-player games, the size of the whole stored item of 8-player games (on moto, as
handlers/store.py writes it: the record's document, its keys and the message ids beside it, in
a group of each language), and one move plus one encode/decode round trip next to
python-telegram-bot's `Update.de_json` of a button press, measured in the same run (goal: under
10 % of it).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
import timeit
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path, where `engine` is this very file:
# put the project's root there instead.
sys.path[0] = str(Path(__file__).resolve().parent.parent)

from telegram import Bot, Update  # noqa: E402

from engine import (  # noqa: E402
    Game,
    Join,
    Move,
    Phase,
    Start,
    apply,
    decode,
    encode,
    open_table,
    settle,
    strategy,
    view,
)
from handlers.text import SUPPORTED  # noqa: E402
from infra.fake_telegram import StoredMessage  # noqa: E402
from infra.harness import GROUP, T0, Person  # noqa: E402
from infra.harness.items import dynamodb, game_items, item_size  # noqa: E402
from infra.harness.updates import Updates  # noqa: E402

# A press of Liar! on a table message, as Telegram delivers it.
CALLBACK_UPDATE = Updates(first=912345678).press(
    Person(123456789, "Ann"),
    GROUP,
    42,
    "s:12",
    query_id="4382174819283746",
    shown=StoredMessage(
        GROUP,
        42,
        int(T0),
        text="Menteur · 4 players",
        reply_markup={"inline_keyboard": [[{"text": "Liar!", "callback_data": "s:12"}]]},
    ),
)


def play_game(
    players: int, seed: int, samples: list[tuple[Game, Move, float]], choose: strategy.Level
) -> list[int]:
    """One whole game; returns the time of each applied move (ns) and keeps a few samples."""
    rng = random.Random(seed)
    now = 1_764_400_000.0
    game = open_table(1_000_000_001, now, "Player number 01")
    for p in range(2, players + 1):
        game, _ = apply(game, Join(1_000_000_000 + p, f"Player number {p:02}"), now)
    game, _ = apply(game, Start(1_000_000_001, seed), now)
    timings = []
    while game.phase is not Phase.OVER:
        now += 2.0
        for player in rng.sample(game.ids, len(game.ids)):
            move = choose(view(game, player, now), rng)
            if move is not None:
                break
        else:
            now += 45.0
            game, _ = settle(game, now)
            continue
        if len(samples) < 2000 and rng.random() < 0.05:
            samples.append((game, move, now))
        t0 = time.perf_counter_ns()
        game, _ = apply(game, move, now)
        timings.append(time.perf_counter_ns() - t0)
    return timings


def eight_player_sizes(seed: int, games: int, choose: strategy.Level) -> list[int]:
    """Encoded size (JSON, UTF-8) after every move of some 8-player games, 16-letter names."""
    sizes = []
    rng = random.Random(seed)
    for g in range(games):
        now = 1_764_400_000.0
        game = open_table(1_000_000_001, now, "Abcdefghijklmnop")
        for p in range(2, 9):
            game, _ = apply(game, Join(7_000_000_000 + p, "Abcdefghijklmnop"), now)
        game, _ = apply(game, Start(1_000_000_001, seed + g), now)
        while game.phase is not Phase.OVER:
            now += 1.5
            order = rng.sample(game.ids, len(game.ids))
            moves = [choose(view(game, p, now), rng) for p in order]
            move = next((m for m in moves if m is not None), None)
            game, _ = apply(game, move, now) if move else settle(game, now + 45)
            text = json.dumps(encode(game), separators=(",", ":"), ensure_ascii=False)
            sizes.append(len(text.encode()))
    return sizes


def eight_player_items(seed: int, games: int, lang: str, level: str) -> tuple[list[int], list[int]]:
    """The whole stored item's size (DynamoDB's measure) after every move of some 8-player
    games with 16-letter names in a group speaking `lang`, and at the end of each."""
    every, ends = [], []
    with dynamodb() as client:
        for g in range(games):
            sizes = [item_size(item) for _, item in game_items(client, seed + g, lang, level=level)]
            every += sizes
            ends.append(sizes[-1])
    return every, ends


def per_call_us(fn: object, repeat: int = 7, number: int = 2000) -> float:
    best = min(timeit.repeat(fn, repeat=repeat, number=number))  # type: ignore[arg-type]
    return best / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--item-games", type=int, default=20, help="8-player games on moto")
    parser.add_argument("--level", choices=sorted(strategy.LEVELS), default="normal")
    args = parser.parse_args()
    choose = strategy.LEVELS[args.level]

    samples: list[tuple[Game, Move, float]] = []
    timings: list[int] = []
    t0 = time.perf_counter()
    for i in range(args.games):
        timings += play_game(2 + i % 7, args.seed + i, samples, choose)
    elapsed = time.perf_counter() - t0
    timings.sort()
    print(f"games: {args.games} (2-8 seats, every seat {args.level}), moves: {len(timings)}")
    print(
        f"games per second (computer players choosing, views included): {args.games / elapsed:.0f}"
    )
    median_us = timings[len(timings) // 2] / 1000
    p99_us = timings[int(len(timings) * 0.99)] / 1000
    print(f"apply one move: median {median_us:.2f} us, p99 {p99_us:.2f} us")
    views = []
    for game, _, now in samples:
        for player in game.ids:
            t0 = time.perf_counter_ns()
            view(game, player, now)
            views.append(time.perf_counter_ns() - t0)
    views.sort()
    print(
        f"one player's view: median {views[len(views) // 2] / 1000:.2f} us, "
        f"p99 {views[int(len(views) * 0.99)] / 1000:.2f} us"
    )

    sizes = eight_player_sizes(args.seed, 50, choose)
    print(
        f"encoded size, 8 players, 16-letter names: median {statistics.median(sizes):.0f} B, "
        f"max {max(sizes)} B (goal <= 1024 B)"
    )
    for lang in SUPPORTED:
        every, ends = eight_player_items(args.seed, args.item_games, lang, args.level)
        over = sum(size > 1024 for size in every)
        print(
            f"stored item, 8 players, 16-letter names, {lang} group, {args.item_games} games: "
            f"after each of {len(every)} moves median {statistics.median(every):.0f} B, "
            f"max {max(every)} B, {over} over 1024 B; at the end median "
            f"{statistics.median(ends):.0f} B, max {max(ends)} B"
        )

    def move_and_round_trip() -> None:
        for game, move, now in samples[:100]:
            after, _ = apply(game, move, now)
            decode(encode(after))

    def move_and_json_round_trip() -> None:
        for game, move, now in samples[:100]:
            after, _ = apply(game, move, now)
            decode(json.loads(json.dumps(encode(after))))

    bot = Bot("123456:ABCDEF")
    engine_us = per_call_us(move_and_round_trip, number=20) / 100
    engine_json_us = per_call_us(move_and_json_round_trip, number=20) / 100
    parse_us = per_call_us(lambda: Update.de_json(CALLBACK_UPDATE, bot))
    print(f"Update.de_json of a button press:           {parse_us:7.2f} us")
    print(
        f"apply + encode/decode:                      {engine_us:7.2f} us "
        f"= {100 * engine_us / parse_us:.1f} % of it (goal < 10 %)"
    )
    print(
        f"apply + encode/decode through JSON text:    {engine_json_us:7.2f} us "
        f"= {100 * engine_json_us / parse_us:.1f} %"
    )


if __name__ == "__main__":
    main()
