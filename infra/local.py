"""Run Menteur on this machine: for now, a demo game between computer players in the terminal.

    python3 infra/dev.py play [--players 4] [--seed N] [--fast]

Every move goes through the engine exactly as the bot's will: the computer players choose from
their own views, and the narration shows what the table sees (never a hand).
"""

from __future__ import annotations

import argparse
import random
import secrets
import time

from engine import (
    RANKS,
    Join,
    Phase,
    Start,
    apply,
    card_name,
    cards_in,
    open_table,
    settle,
    strategy,
    view,
)
from engine import events as ev

NAMES = ("Ann", "Bob", "Chloé", "Driss", "Emma", "Farid", "Gus", "Hana")


def narrate(event: ev.Event, names: dict[int, str]) -> str | None:
    match event:
        case ev.Started(order):
            return "Seats, in turn order: " + ", ".join(names[p] for p in order)
        case ev.Called(player, n, rank, _, final):
            tail = "  — a final play!" if final else ""
            return f"{names[player]}: Called: {n} × {RANKS[rank]}{tail}"
        case ev.Challenged(accuser, player, _, _, cards, lie, loser, picked, _, _):
            shown = " ".join(card_name(c) for c in cards_in(cards))
            verdict = "A lie." if lie else "Not a lie."
            return (
                f"{names[accuser]}: Liar! → {names[player]}'s play turned over: {shown}\n"
                f"  {verdict} {names[loser]} picks up {picked} cards."
            )
        case ev.LetStand(player, by):
            who = "The table" if by is None else names[by]
            return f"{who} lets {names[player]}'s final play stand."
        case ev.Won(winner, ranking):
            lines = [f"{names[winner]} wins. Final ranking:"]
            lines += [f"  {i}. {names[p]}" for i, p in enumerate(ranking, start=1)]
            return "\n".join(lines)
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description="A demo game of Menteur between computers.")
    parser.add_argument("--players", type=int, default=4, choices=range(2, 9))
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--fast", action="store_true", help="no pauses between moves")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else secrets.randbits(32)
    rng = random.Random(seed)
    names = {i + 1: NAMES[i] for i in range(args.players)}
    now = 0.0
    game = open_table(1, now, names[1])
    for player in range(2, args.players + 1):
        game, _ = apply(game, Join(player, names[player]), now)
    game, events = apply(game, Start(1, seed), now)
    print(f"Menteur · {args.players} players · seed {seed}")
    while True:
        for event in events:
            line = narrate(event, names)
            if line:
                print(line, flush=True)
        if game.phase is Phase.OVER:
            return
        if not args.fast:
            time.sleep(0.4)
        now += 2.0
        for player in rng.sample(game.ids, len(game.ids)):
            move = strategy.choose(view(game, player, now), rng)
            if move is not None:
                game, events = apply(game, move, now)
                break
        else:
            game, events = settle(game, now + 45)


if __name__ == "__main__":
    main()
