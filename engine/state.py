"""The state of a game as the engine keeps it (`Game`), and the numbers the rules fix.

A `Game` is what is stored between moves: `engine.game` builds each next one, `engine.codec`
writes it down in `FIELDS` order, and `engine.view` shows it to one player at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from enum import IntEnum
from typing import Any, NamedTuple

from engine.cards import Mask, count

MIN_PLAYERS = 2
MAX_PLAYERS = 8
BULLETS = 3
MAX_PLAY = 4
DECISION_SECONDS = 45.0
MAX_NAME = 64
CLOCK_CHOICES = (0, 30, 60, 90, 180)  # R20: seconds a person has to play; 0: no clock
CLOCK_DEFAULT = 90
# R18: with the clock off, how long the person awaited to play counts for the vote to end.
UNTIMED_TURN = 90


class Phase(IntEnum):
    """I4: what is awaited. PLAY: a play by `turn`; DECIDE: `turn`'s decision on a final play."""

    LOBBY = 0
    PLAY = 1
    DECIDE = 2
    OVER = 3


RUNNING = (Phase.PLAY, Phase.DECIDE)  # the phases of a game under way


class LastPlay(NamedTuple):
    """The most recent play while it can still be challenged (R10). A tuple: made per play."""

    play: int
    seat: int
    cards: Mask
    rank: int


@dataclass(slots=True)
class Game:
    """One table. Seats are indices into `ids`; after `Start` seat order is turn order.

    Treat it as immutable: `apply` returns a new one. Only this module mutates, on copies.
    The fields in their order are `FIELDS`, which `copy` and the stored form (`engine.codec`)
    follow: adding, removing or moving one is a new codec version.
    """

    opener: int
    updated: float
    phase: Phase = Phase.LOBBY
    ids: tuple[int, ...] = ()
    names: tuple[str, ...] = ()
    hands: list[Mask] = field(default_factory=list)
    bullets: list[int] = field(default_factory=list)
    out: list[int] = field(default_factory=list)  # forfeited seats, earliest first (R19)
    pile: Mask = 0
    aside: Mask = 0  # forfeited hands, out of play for good (R19)
    rank: int = 0  # the expected rank (R7)
    turn: int | None = None  # the seat awaited, in PLAY and DECIDE only (I4)
    plays: int = 0  # plays made so far; the most recent play is number `plays`
    last: LastPlay | None = None
    # Who shouted at play `plays`, so a later shout can be told who was first (R10).
    shouted: int | None = None
    # When the awaited player's time is up: R14's decision in DECIDE; in PLAY, when the awaited
    # player is a person, R20's clock, or with the clock off the moment their vote stops being
    # needed (R18, `UNTIMED_TURN`). None otherwise, and once that moment has passed.
    deadline: float | None = None
    winner: int | None = None  # None until the game is over, and after it when stopped
    # Turns begun so far (RULES.md): a new one whenever the awaited player, the expected rank or
    # the phase changes. Not `turn`, the seat awaited.
    turns: int = 0
    clock: int = 0  # R20: seconds a person has to play, 0 for none (`open_table` gives 90)
    ran_out: int = 0  # R20: the seats whose clock ran out on their latest turn, as bits
    votes: int = 0  # the seats that voted to end the game, as bits
    # The reveal's counters (`tally`), one character each, counter by counter and seat by seat
    # within it: "" while all are 0; None for a game begun before they were kept.
    tally: str | None = ""
    boldest: int = 0  # the boldest bluff that stood so far, packed (`boldest_bluff`); 0: none
    # R18: when a player (person or computer) last made a move, for the idle end. `updated` is
    # when the game last changed, the table's play included: that is nobody acting.
    acted: float = 0.0
    # What the table saw of the cards (`engine.memory`): the cards each seat put on the current
    # pile, seat by seat ([] in a game read from before they were kept, until its next pick-up);
    # and, card by card, whom it was last seen going to and who saw it ("" until a pick-up).
    put: list[Mask] = field(default_factory=list)
    seen: str = ""

    def copy(self) -> Game:
        """A copy with lists of its own, for `apply` to change in place.

        Every move pays for one: built from `values_of`, it is cheaper than `dataclasses.replace`.
        """
        new = Game(*values_of(self))
        new.hands = self.hands.copy()
        new.bullets = self.bullets.copy()
        new.out = self.out.copy()
        new.put = self.put.copy()
        return new

    # --- questions every caller may ask ---------------------------------------------------

    def seat_of(self, player: int) -> int | None:
        """The seat of `player`, or None when they are not at the table."""
        try:
            return self.ids.index(player)
        except ValueError:
            return None

    def in_game(self, seat: int) -> bool:
        """Whether `seat` has not forfeited (R19)."""
        return seat not in self.out

    def active_seats(self) -> list[int]:
        """The seats still in the game, in seat order."""
        return [s for s in range(len(self.ids)) if s not in self.out]

    def next_seat(self, seat: int) -> int:
        """R9: the next seat still in the game after `seat` (which may itself be out)."""
        n = len(self.ids)
        for step in range(1, n + 1):
            candidate = (seat + step) % n
            if candidate not in self.out:
                return candidate
        return seat

    @property
    def awaited(self) -> int | None:
        """I4: the player whose play or decision is awaited, if any."""
        return None if self.turn is None else self.ids[self.turn]

    @property
    def stopped(self) -> bool:
        """Over without a winner (R18)."""
        return self.phase is Phase.OVER and self.winner is None

    def voters(self) -> int:
        """The seats whose votes end the game, as bits (R18): every person still in it, but the
        one awaited to play once their time is over (with the clock off: `UNTIMED_TURN`; with
        it on, the table plays for them instead). 0 when the game is not running."""
        if self.phase not in RUNNING:
            return 0
        waited_out = self.turn if self.phase is Phase.PLAY and self.deadline is None else None
        bits = 0
        for seat, player in enumerate(self.ids):
            if player > 0 and seat != waited_out and seat not in self.out:
                bits |= 1 << seat
        return bits

    def ranking(self) -> tuple[int, ...]:
        """R15 and R19: winner, then by cards held and seat; forfeits last, latest first."""
        winner = self.winner
        if winner is None:
            return ()
        rest = [s for s in self.active_seats() if s != winner]
        rest.sort(key=lambda s: (count(self.hands[s]), s))
        seats = [winner, *rest, *reversed(self.out)]
        return tuple(self.ids[s] for s in seats)


FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Game))

# The values of a game's fields in `FIELDS` order, as `Game(*values)` takes them. Compiled from
# FIELDS once: reads written out are faster than `operator.attrgetter`'s, and `copy` and the
# codec use this on every move (`benchmarks/engine.py`).
values_of: Callable[[Game], tuple[Any, ...]] = eval(
    "lambda game: (" + "".join(f"game.{name}, " for name in FIELDS) + ")"
)
