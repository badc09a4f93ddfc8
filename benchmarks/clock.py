"""R20's turn clock, on a simulated clock: when the table plays, and how late the timers are.

    .venv/bin/python benchmarks/clock.py [--games 200] [--seed 0]

First, one silent person through the whole bot (webhook and timer functions, moto, a fake Bot
API), with the timers as SQS messages whose `DelaySeconds` are recorded: the reminder, the
table's play at 90.0 s and not at 89.9 s, the forfeit after the second run-out; and the 45 s
mark of a final play, measured the same way (the delay each SQS message is set for, and the
time from the mark to the move in simulated time).

Then `--games` whole games through the webhook in which people stop answering at random
(`infra.harness.stalling`: SQS's delays modelled as up to a second late, the sweep once a
minute): how each ended, and how long anyone awaited was waited for past their clock.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

# Run as a script, this folder comes first on sys.path: put the project's root there instead.
sys.path[0] = str(Path(__file__).resolve().parent.parent)

from engine import Phase  # noqa: E402
from handlers.runtime import SqsTimers  # noqa: E402
from infra.harness import by_id, people  # noqa: E402
from infra.harness.bot import Table, open_and_start, running_bot  # noqa: E402
from infra.harness.stalling import CLOCK, play_stalling_games  # noqa: E402


class Delays:
    """In place of the SQS client: the `DelaySeconds` of each timer message, by its mark."""

    def __init__(self) -> None:
        self.sent: list[tuple[float, int]] = []

    def send_message(self, *, QueueUrl: str, MessageBody: str, DelaySeconds: int) -> None:
        self.sent.append((float(json.loads(MessageBody)["at"]), DelaySeconds))


def fire(table: Table, at: float) -> None:
    table.fire(at)


def one_silent_person() -> None:
    players = people(3)
    delays = Delays()
    with running_bot(seed=3, timers=SqsTimers(delays, "https://sqs.example/timers")) as table:
        open_and_start(table, players)
        game = table.game()
        silent = by_id(players, game.awaited)
        start = table.clock.now
        assert game.deadline is not None
        deadline = game.deadline
        print(f"turn clock {game.clock} s; {silent.name} is awaited from t = 0 and never plays")
        mark, delay = delays.sent[-1]
        print(f"  SQS message set at t = 0: {delay} s, for the reminder at t = {mark - start:.1f}")
        texts = len(table.tg.calls("sendMessage", chat_id=silent.id))
        table.clock.now = mark
        for _ in range(3):  # the message, a retry of it, and the sweep
            fire(table, mark)
            table.sweep()
        reminders = len(table.tg.calls("sendMessage", chat_id=silent.id)) - texts
        mark, delay = delays.sent[-1]
        print(
            f"  reminder at t = {table.clock.now - start:.1f}, fired 3 times: {reminders} sent; "
            f"SQS message set then: {delay} s, for t = {mark - start:.1f}"
        )
        for at in (deadline - 0.1, deadline - 0.001, deadline):
            table.clock.now = at
            fire(table, deadline)
            played = table.game().turns != game.turns
            print(f"  timer at t = {at - start:.3f}: {'the table played' if played else 'nothing'}")
        after = table.game()
        print(f"  the table's play stamped at t = {after.updated - start:.3f} (the mark: 90.000)")
        # Everyone else plays at once, until the silent person's turn comes again.
        while table.game().awaited != silent.id:
            person = by_id(players, table.game().awaited)
            table.play(person, {min(table.hand(person))})
        second = table.game()
        assert second.deadline is not None
        table.clock.now = second.deadline
        fire(table, second.deadline)
        out = second.seat_of(silent.id) in table.game().out
        private = table.tg.calls("sendMessage", chat_id=silent.id)[-1].params["text"]
        print(
            f"  second run-out in a row, at its mark: {'forfeited' if out else 'not forfeited'}; "
            f"told in private: {private.replace(chr(0x2068), '').replace(chr(0x2069), '')!r}"
        )


def the_45_second_mark() -> None:
    players = people(2)
    delays = Delays()
    with running_bot(seed=3, timers=SqsTimers(delays, "https://sqs.example/timers")) as table:
        open_and_start(table, players, "/newgame off")
        for _ in range(100):
            game = table.game()
            if game.phase is Phase.DECIDE:
                break
            person = by_id(players, game.awaited)
            table.play(person, set(sorted(table.hand(person))[:4]))
        game = table.game()
        assert game.phase is Phase.DECIDE and game.deadline is not None
        made = table.clock.now
        mark, delay = delays.sent[-1]
        table.clock.now = game.deadline
        fire(table, mark)
        ended = table.game()
        print(
            f"the 45 s mark of a final play: SQS message set for {delay} s; the table let it "
            f"stand at t = {ended.updated - made:.3f} ({ended.phase.name.lower()})"
        )


def stalling(games: int, seed: int) -> None:
    started = time.process_time()
    ending = play_stalling_games(list(range(seed, seed + games)))
    cpu = time.process_time() - started
    waits = ending.waits
    late = sorted(waits.after_deadline)
    print(
        f"{ending.games} games through the webhook, turn clock {CLOCK} s, people stopping at "
        f"random ({dict(sorted(ending.players.items()))} players a table): {cpu:.1f} s of CPU"
    )
    print(
        f"  ended: {ending.won} with a winner, {ending.no_person} stopped for want of people, "
        f"{ending.other_stops} otherwise"
    )
    print(
        f"  the table played {ending.table_plays} times for someone silent; "
        f"{ending.clock_forfeits} forfeits after a second run-out; {ending.refused} presses "
        "refused (the clock first)"
    )
    print(
        f"  people to play waited for: {len(waits.beyond_clock)} turns; the longest past the "
        f"clock: {max(waits.beyond_clock):.2f} s (goal <= 2)"
    )
    if late:
        print(
            f"  the table's move after the deadline (SQS up to 1 s late, set whole seconds): "
            f"median {statistics.median(late):.2f} s, p99 {_p(late, 0.99):.2f} s, "
            f"max {late[-1]:.2f} s"
        )
    if waits.decisions:
        print(f"  deciders waited for at most {max(waits.decisions):.2f} s (R14: 45 s)")


def _p(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))]


def main(argv: Any = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    one_silent_person()
    the_45_second_mark()
    stalling(args.games, args.seed)


if __name__ == "__main__":
    main()
