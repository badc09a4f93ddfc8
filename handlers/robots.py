"""Computer players as the bot seats them: a negative id that also says the player's level.

The engine takes any negative id for a computer player. The bot gives "Robot N" (N = 1 to 9) the
id -N at the normal level, -(10 + N) at the easy one and -(20 + N) at the hard one, so the level
goes wherever the id goes: stored with the game, seated again by Play again, and read back the
same way (a table stored before there were levels has normal players only).
"""

from __future__ import annotations

import random

from engine import Move, View, strategy

LEVELS = ("normal", "easy", "hard")  # in id order: -N, -(10 + N), -(20 + N)
DEFAULT = "normal"
_STEP = 10


def robot(number: int, level: str) -> int:
    """The id of Robot `number` (1 to 9) at `level`."""
    return -(LEVELS.index(level) * _STEP + number)


def number_of(player: int) -> int:
    """N of the computer player "Robot N"."""
    return -player % _STEP


def level_of(player: int) -> str:
    """The level of a computer player (a negative id); normal for an id the bot does not give."""
    index = -player // _STEP
    return LEVELS[index] if index < len(LEVELS) else DEFAULT


def choose(player: int, v: View, rng: random.Random) -> Move | None:
    """What computer player `player` does now, at its level, from its own view."""
    return strategy.LEVELS[level_of(player)](v, rng)
