"""What players (and the table's clock) can do: commands, as small frozen records.

Players are named by an int id: the bot uses Telegram user ids for people, and negative ids for
computer players (a game needs a person: see `Join`, R20). Moves that answer a button carry what
the button was drawn for, so a button from an earlier turn is recognised and refused: a `Play`
the turn it was drawn at (`View.turns`), a shout or a decision the play it targets (R10).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.cards import Mask


@dataclass(frozen=True, slots=True)
class Join:
    """Take a seat in the lobby under `name` (1 to 64 characters). A negative `player` id is a
    computer player's (the bot's convention): a game does not start with computer players
    alone."""

    player: int
    name: str


@dataclass(frozen=True, slots=True)
class Leave:
    """Leave the lobby; once the game runs, leaving is a `Forfeit`."""

    player: int


@dataclass(frozen=True, slots=True)
class Start:
    """Seats are shuffled and the deck dealt from `seed` (R1, R3): same seed, same game."""

    player: int
    seed: int


@dataclass(frozen=True, slots=True)
class Play:
    """R6. `turns`, when given, is the game's turn count the button was drawn at (`View.turns`):
    a play drawn for any other turn is refused as stale, however little else changed."""

    player: int
    cards: Mask
    turns: int | None = None


@dataclass(frozen=True, slots=True)
class Shout:
    """Liar! (R10) at play number `play`: only the most recent play can be targeted."""

    player: int
    play: int


@dataclass(frozen=True, slots=True)
class LetItStand:
    """R14, by the next player after the final play number `play`."""

    player: int
    play: int


@dataclass(frozen=True, slots=True)
class Stop:
    """R18. `admin` is the caller's word that `player` administers the group chat."""

    player: int
    admin: bool = False


@dataclass(frozen=True, slots=True)
class Expire:
    """R18: nobody acted for `idle_seconds`; the game ends without a winner."""

    idle_seconds: float


@dataclass(frozen=True, slots=True)
class Forfeit:
    """R19. `by_admin`: a group administrator puts `player` out, a forfeit in every respect but
    its telling (the caller's word, as `Stop`'s `admin`)."""

    player: int
    by_admin: bool = False


@dataclass(frozen=True, slots=True)
class SetClock:
    """R20, in the lobby: a person awaited to play has `seconds` (one of `CLOCK_CHOICES`; 0 for
    no clock). By the player who opened the table or, `admin` being the caller's word, a group
    administrator."""

    player: int
    seconds: int
    admin: bool = False


@dataclass(frozen=True, slots=True)
class VoteEnd:
    """A person still in the game votes to end it; it stops without a winner once every person
    still in it but the awaited one has voted (RULES.md, the engine's decisions, R18)."""

    player: int


Move = (
    Join | Leave | Start | Play | Shout | LetItStand | Stop | Expire | Forfeit | SetClock | VoteEnd
)
