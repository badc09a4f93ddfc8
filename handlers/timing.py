"""When the timer must look at a game next, and what computer players do when it does.

A game needs the timer for these: the 45-second mark of a final play (R14), a person's turn
clock and its reminder when a third of it is left (R20), a computer player's move a few
seconds into its turn, and the end of a game nobody touched for a long while (R18); and its
screens, for a redraw Telegram's flood limit made wait. `next_look` is the earliest of them; it
is written with each move, and the timer
(an SQS delay message, the scheduled sweep as a safety net) fires at it.
"""

from __future__ import annotations

import math
import random
from typing import Protocol

from engine import Game, Move, Phase, Shout, view
from handlers import robots
from handlers.store import Record


class Timers(Protocol):
    """The timer: SQS's delayed messages in Lambda (`handlers.runtime.SqsTimers`)."""

    def schedule(self, chat: int, at: float, now: float, topic: int | None = None) -> None:
        """Have the timer look at `chat` (its forum `topic`) at `at` seconds, give or take one."""
        ...


COMPUTER_DELAY = (3.0, 5.0)  # seconds before a computer player acts: people shout first
FINISHED_KEPT = 7 * 24 * 3600  # a finished game's record stays this long, then expires
IDLE_GRANULARITY = 3600.0  # an idle game ends on the hour after its expiry
REMINDER_PART = 3  # R20: a person is reminded when a third of their clock is left


def computer_rng(record: Record, game: Game) -> random.Random:
    """Computer players decide from the state alone, so the decision foreseen when the timer
    is set is the one taken when it fires (and a replay takes it again)."""
    return random.Random(f"{record.chat}/{record.game_id}/{game.plays}/{game.updated}")


def computer_move(record: Record, game: Game, now: float) -> Move | None:
    """What the computer players do now, each at its level from its own view: a Liar! by the
    first of them, in turn order from the one awaited, that wants to shout (R10: any of them
    may, the next player too), or else the awaited one's play or decision."""
    rng = computer_rng(record, game)
    seats = len(game.ids)
    start = game.turn or 0
    turn = None
    for seat in sorted(range(seats), key=lambda s: (s - start) % seats):
        player = game.ids[seat]
        if player < 0 and game.in_game(seat):
            move = robots.choose(player, view(game, player, now), rng)
            if isinstance(move, Shout):
                return move
            turn = turn or move
    return turn


def next_look(record: Record, idle_expiry: float) -> float | None:
    """When the timer must look at the record next: the game's next moment, or a redraw owed
    after a flood limit; None once the game is over and nothing is owed."""
    due = game_next_look(record, idle_expiry)
    if record.owed is None:
        return due
    return record.owed if due is None else min(due, record.owed)


def game_next_look(record: Record, idle_expiry: float) -> float | None:
    """When the record's game needs the timer next, or None once it is over: a function of the
    stored game (and of the reminder already sent) alone, so that a write that leaves the game
    as it was (a reply's bookkeeping) leaves its timer too."""
    return game_due(record, idle_expiry)[0]


def game_due(record: Record, idle_expiry: float) -> tuple[float | None, Move | None]:
    """`game_next_look`, and the computer player's move then, if one wants to act: decided
    once, from the stored game alone, for the timer to set and to make."""
    game = record.game
    if game is None or game.phase is Phase.OVER:
        return None, None
    # The idle end is due within the hour after the expiry, on the hour: `due` is the key of
    # the timers' index, and a key that moved with every move would cost two more index
    # writes per move (a delete and a put) for a deadline nobody needs to the second.
    due = math.ceil((game.acted + idle_expiry) / IDLE_GRANULARITY) * IDLE_GRANULARITY
    # R14's 45 seconds, R20's clock; with the clock off, R18's vote: its deadline changes
    # something only once somebody voted (a vote made later settles it first).
    if game.deadline is not None and (game.clock or game.votes or game.phase is Phase.DECIDE):
        due = min(due, game.deadline)
    # R20's reminder comes first: with a clock, `due` moves with every person's turn after all
    # (two index writes a play, the price of a timer at each turn's mark).
    remind = reminder_at(record)
    if remind is not None:
        due = min(due, remind)
    computers = game.phase is not Phase.LOBBY and any(p < 0 for p in game.ids)
    # A computer player acts a few seconds after the game last changed (its turn began), the
    # table's play for an absent person included: people see that play, and may shout at it.
    move = computer_move(record, game, game.updated) if computers else None
    if move is not None:
        delay = computer_rng(record, game).uniform(*COMPUTER_DELAY)
        due = min(due, game.updated + delay)
    return round(due * 1000) / 1000, move  # to the millisecond, as stored: the timer is set for it


def reminder_at(record: Record) -> float | None:
    """R20: when the person awaited to play is reminded, a third of their clock before it runs
    out; None when nobody's clock runs, or once this turn's reminder is sent."""
    game = record.game
    if game is None or game.phase is not Phase.PLAY or game.deadline is None or not game.clock:
        return None
    if record.reminded == game.turns:
        return None
    return game.deadline - game.clock / REMINDER_PART


def expiry(record: Record, now: float, idle_expiry: float) -> int:
    """When DynamoDB may delete the record: a while after the game ends or would expire."""
    game = record.game
    if game is None or game.phase is Phase.OVER:
        return int(now + FINISHED_KEPT)
    return int(game.acted + idle_expiry + FINISHED_KEPT)
