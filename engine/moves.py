"""What players (and the table's clock) can do: commands, as small frozen records.

Players are named by an int id (the bot uses Telegram user ids; computer players get ids of
their own). Moves that answer a button carry the play number the button was drawn for, so a
button from an earlier turn is recognised and refused.
"""

from __future__ import annotations

from engine.cards import Mask
from engine.records import record


@record
class Join:
    """Take a seat in the lobby under `name` (1 to 64 characters). A negative `player` id is a
    computer player's (the bot's convention): a game does not start with computer players
    alone."""

    player: int
    name: str


@record
class Leave:
    """Leave the lobby; once the game runs, leaving is a `Forfeit`."""

    player: int


@record
class Start:
    """Seats are shuffled and the deck dealt from `seed` (R1, R3): same seed, same game."""

    player: int
    seed: int


@record
class Play:
    """R6. `turn`, when given, is the play number the button was drawn at."""

    player: int
    cards: Mask
    turn: int | None = None


@record
class Shout:
    """Liar! (R10) at play number `play`: only the most recent play can be targeted."""

    player: int
    play: int


@record
class LetItStand:
    """R14, by the next player after the final play number `play`."""

    player: int
    play: int


@record
class Timeout:
    """R14: 45 seconds passed after final play number `play`; the table lets it stand."""

    play: int


@record
class Stop:
    """R18. `admin` is the caller's word that `player` administers the group chat."""

    player: int
    admin: bool = False


@record
class Expire:
    """R18: nobody acted for `idle_seconds`; the game ends without a winner."""

    idle_seconds: float


@record
class Forfeit:
    """R19."""

    player: int


Move = Join | Leave | Start | Play | Shout | LetItStand | Timeout | Stop | Expire | Forfeit
