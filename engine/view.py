"""Per-player views: the only way hidden cards leave the engine.

A view shows what its viewer may see: their own hand, everyone's card counts and bullets, the
pile's size, the most recent call (count and rank, never its cards). The group's view is the
view of nobody (`player=None`): no hand at all. Once the game is over it also shows what each
player did (`stats`, `boldest`), which would tell hidden lies before.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.cards import Mask, count
from engine.legal import can
from engine.moves import LetItStand, Shout, VoteEnd
from engine.state import BULLETS, Game, Phase
from engine.tally import CAUGHT, LIES, PICKED_UP, PLAYS, RIGHT, boldest_bluff, counter


@dataclass(frozen=True, slots=True)
class SeatView:
    """One seat as the whole table sees it: who, how many cards, bullets left, forfeited."""

    player: int
    name: str
    cards: int
    bullets: int
    out: bool  # forfeited (R19)
    ran_out: bool  # R20: their clock ran out on their latest turn; once more and they are out
    voted: bool  # voted to end the game


@dataclass(frozen=True, slots=True)
class CallView:
    """The most recent play, while it can still be challenged: 'Called: count × rank'."""

    player: int
    count: int
    rank: int
    play: int
    final: bool


@dataclass(frozen=True, slots=True)
class SeatStats:
    """What one player did in the game, for the reveal at its end (R16: nothing more is kept).
    `plays` counts the table's plays for them (R20); `picked_up` the cards taken into the hand
    (R12), not a pick-up set aside (R19)."""

    player: int
    plays: int
    lies: int  # plays that were lies (R8), caught or not
    caught: int  # their lies exposed by another player's Liar!
    shouts: int  # Liar! shouted
    right: int  # shouts that exposed a lie
    picked_up: int


@dataclass(frozen=True, slots=True)
class Bluff:
    """The boldest bluff that stood: `count` cards called as `rank` by `player`, a lie never
    challenged (the earliest of the boldest)."""

    player: int
    count: int
    rank: int


@dataclass(frozen=True, slots=True)
class View:
    """A table as one viewer may see it (see `view`): made afresh for every screen.

    The `can_*` flags answer for the viewer, `shout_open` for anyone at the table; a screen
    shows a button only when its move would be accepted now.
    """

    phase: Phase
    viewer: int | None  # the player this view is for, if seated; None for the group
    hand: Mask  # the viewer's own hand; 0 for the group
    seats: tuple[SeatView, ...]  # turn order once started (R1)
    pile: int  # a count only (glossary: Pile)
    rank: int  # the expected rank (R7)
    plays: int
    last: CallView | None
    awaited: int | None  # who must play or decide (I4)
    # When the awaited player's time is up: R14's 45 seconds in DECIDE, R20's clock in PLAY
    # (a person, on a table with a clock); None when nothing is timed.
    deadline: float | None
    winner: int | None
    ranking: tuple[int, ...]
    can_play: bool
    can_shout: bool
    can_let_stand: bool
    shout_open: bool  # somebody at the table may shout now: the group shows Liar!
    turns: int  # what a Play button names (`Play.turns`); a Liar! names `plays`
    clock: int  # R20: the seconds a person has to play, 0 for none; a reminder is the bot's
    votes: int  # votes to end the game that count now (the awaited player's does not)...
    votes_needed: int  # ...of these: it ends when they are equal; 0 when no vote can end it
    can_vote: bool
    stats: tuple[SeatStats, ...]  # once the game is over, in seat order; () before or untold
    boldest: Bluff | None  # once the game is over, if a bluff stood

    def seat(self, player: int) -> SeatView | None:
        """The seat of `player`, or None when they are not at the table."""
        return next((s for s in self.seats if s.player == player), None)


def view(game: Game, player: int | None, now: float) -> View:
    """What `player` may see of `game` at `now`, and which moves are open to them.

    `player=None`, or a player not seated at the table, gets the group's view: no hand, no
    move of their own. It shows `game` as given (callers settle it first), and its moves as
    the clock leaves them at `now` (`can`): a screen drawn from a stored game the clock has
    overtaken offers no move that `apply` would then refuse.
    """
    seat = game.seat_of(player) if player is not None else None
    last = game.last
    call = None
    if last is not None:
        final = game.phase is Phase.DECIDE
        call = CallView(game.ids[last.seat], count(last.cards), last.rank, last.play, final)
    shooters = [] if last is None else [p for p in game.ids if p != game.ids[last.seat]]
    voters = game.voters()
    # R14's 45 seconds and R20's clock are shown; with the clock off, the moment the awaited
    # person's vote stops being needed (R18) is not a time anyone has to keep.
    timed = game.phase is Phase.DECIDE or game.clock
    ran_out = bool(game.clock) and game.deadline is not None and now >= game.deadline
    return View(
        phase=game.phase,
        viewer=player if seat is not None else None,
        hand=game.hands[seat] if seat is not None and game.hands else 0,
        seats=tuple(
            SeatView(
                game.ids[s],
                game.names[s],
                count(game.hands[s]) if game.hands else 0,
                game.bullets[s] if game.bullets else 0,
                s in game.out,
                bool(game.ran_out >> s & 1),
                bool(game.votes >> s & 1),
            )
            for s in range(len(game.ids))
        ),
        pile=count(game.pile),
        rank=game.rank,
        plays=game.plays,
        last=call,
        awaited=game.awaited,
        deadline=game.deadline if timed else None,
        winner=None if game.winner is None else game.ids[game.winner],
        ranking=game.ranking(),
        can_play=(  # `can` without the cards: the table plays at R20's deadline
            seat is not None and game.phase is Phase.PLAY and game.turn == seat and not ran_out
        ),
        can_shout=player is not None and can(game, Shout(player, game.plays), now),
        can_let_stand=player is not None and can(game, LetItStand(player, game.plays), now),
        shout_open=any(can(game, Shout(p, game.plays), now) for p in shooters),
        turns=game.turns,
        clock=game.clock,
        votes=(game.votes & voters).bit_count(),
        votes_needed=voters.bit_count(),
        can_vote=player is not None and can(game, VoteEnd(player), now),
        stats=_stats(game),
        boldest=_boldest(game),
    )


def _stats(game: Game) -> tuple[SeatStats, ...]:
    if game.phase is not Phase.OVER or game.tally is None or not game.hands:
        return ()
    return tuple(
        SeatStats(
            player,
            counter(game, PLAYS, s),
            counter(game, LIES, s),
            counter(game, CAUGHT, s),
            counter(game, RIGHT, s) + BULLETS - game.bullets[s],
            counter(game, RIGHT, s),
            counter(game, PICKED_UP, s),
        )
        for s, player in enumerate(game.ids)
    )


def _boldest(game: Game) -> Bluff | None:
    bold = boldest_bluff(game)
    if game.phase is not Phase.OVER or game.tally is None or bold is None:
        return None
    seat, cards, rank = bold
    return Bluff(game.ids[seat], cards, rank)
