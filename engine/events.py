"""What happened: the records a move returns, for screens to show.

They carry player ids, counts and ranks, never a hand. The one exception is `Challenged.cards`:
the turned-over cards of the challenged play, which the whole table sees (R11).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from engine.cards import Mask


@dataclass(frozen=True, slots=True)
class Joined:
    """`player` took a seat in the lobby under `name` (R17)."""

    player: int
    name: str


@dataclass(frozen=True, slots=True)
class Left:
    """`player` left the lobby."""

    player: int


@dataclass(frozen=True, slots=True)
class Started:
    """The game started: seats shuffled (R1), cards dealt (R3), the first seat plays."""

    order: tuple[int, ...]  # player ids in seat order, which is the turn order (R1)


@dataclass(frozen=True, slots=True)
class Called:
    """'Called: 2 × R' (R6). `play` numbers the plays of the game from 1."""

    player: int
    count: int
    rank: int
    play: int
    final: bool


@dataclass(frozen=True, slots=True)
class FinalPlay:
    """R13: `decider` challenges or lets it stand before `deadline`."""

    player: int
    decider: int
    deadline: float
    play: int


@dataclass(frozen=True, slots=True)
class Challenged:
    """R11. `loser` picked up `picked_up` cards, or set them aside if they had forfeited."""

    accuser: int
    player: int
    play: int
    rank: int
    cards: Mask
    lie: bool
    loser: int
    picked_up: int
    set_aside: bool
    next_player: int | None  # None when the challenge ended the game


@dataclass(frozen=True, slots=True)
class LetStand:
    """R14. `by` is the next player, or None when the table let it stand after the deadline."""

    player: int
    by: int | None


@dataclass(frozen=True, slots=True)
class Forfeited:
    """`player` left a running game: their hand is set aside for good (R19). `clock`: R20 put
    them out, their clock having run out twice in a row; `by_admin`: a group administrator did
    (neither is a forfeit of their own)."""

    player: int
    clock: bool = False
    by_admin: bool = False


@dataclass(frozen=True, slots=True)
class TablePlayed:
    """R20: `player`'s clock of `seconds` ran out and the table played `count` cards for them,
    called as `rank`: an ordinary play, whose `Called` (and `FinalPlay`) follow."""

    player: int
    seconds: int
    count: int
    rank: int


@dataclass(frozen=True, slots=True)
class ClockSet:
    """R20, in the lobby: a person awaited to play will have `seconds` (0: no clock)."""

    seconds: int


@dataclass(frozen=True, slots=True)
class Voted:
    """`player` voted to end the game: `votes` of the `needed` are in (it has not ended yet)."""

    player: int
    votes: int
    needed: int


@dataclass(frozen=True, slots=True)
class TurnPassed:
    """R19: the player to play forfeited or their winning play was theirs; `player` plays."""

    player: int


@dataclass(frozen=True, slots=True)
class DecisionPassed:
    """R19: the decider forfeited; `decider` now decides, with a fresh deadline."""

    decider: int
    deadline: float


@dataclass(frozen=True, slots=True)
class Won:
    """The end with a winner (R14, R19) and the final ranking (R15), winner first."""

    winner: int
    ranking: tuple[int, ...]


class StopReason(StrEnum):
    """Why a game ended without a winner. The value is what catalogues may key on."""

    STOP = "stop"  # R18: /stop by the player who opened it or an administrator (`by`)
    IDLE = "idle"  # R18: nobody acted for a long while
    NO_PERSON = "no_person"  # R20: no person is left in the game, computer players alone
    VOTE = "vote"  # R18, the engine's decision: the seated people voted to end it


@dataclass(frozen=True, slots=True)
class Stopped:
    """R18: no winner. `by` is who stopped it (`StopReason.STOP`), else None."""

    by: int | None
    reason: StopReason = StopReason.STOP


Event = (
    Joined
    | Left
    | Started
    | Called
    | FinalPlay
    | Challenged
    | LetStand
    | Forfeited
    | TurnPassed
    | DecisionPassed
    | Won
    | Stopped
    | TablePlayed
    | ClockSet
    | Voted
)
