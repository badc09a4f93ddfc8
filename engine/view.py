"""Per-player views: the only way hidden cards leave the engine.

A view shows what its viewer may see: their own hand, everyone's card counts and bullets, the
pile's size, the most recent call (count and rank, never its cards). The group's view is the
view of nobody (`player=None`): no hand at all.
"""

from __future__ import annotations

from engine.cards import Mask, count
from engine.game import Game, Phase, can
from engine.moves import LetItStand, Shout
from engine.records import record


@record
class SeatView:
    """One seat as the whole table sees it: who, how many cards, bullets left, forfeited."""

    player: int
    name: str
    cards: int
    bullets: int
    out: bool  # forfeited (R19)


@record
class CallView:
    """The most recent play, while it can still be challenged: 'Called: count × rank'."""

    player: int
    count: int
    rank: int
    play: int
    final: bool


@record
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
    deadline: float | None
    winner: int | None
    ranking: tuple[int, ...]
    can_play: bool
    can_shout: bool
    can_let_stand: bool
    shout_open: bool  # somebody at the table may shout now: the group shows Liar!

    def seat(self, player: int) -> SeatView | None:
        """The seat of `player`, or None when they are not at the table."""
        return next((s for s in self.seats if s.player == player), None)


def view(game: Game, player: int | None, now: float) -> View:
    """What `player` may see of `game` at `now`, and which moves are open to them.

    `player=None`, or a player not seated at the table, gets the group's view: no hand, no
    move of their own. `now` matters for the moves: past a final play's deadline, none is open.
    """
    seat = game.seat_of(player) if player is not None else None
    last = game.last
    call = None
    if last is not None:
        final = game.phase is Phase.DECIDE
        call = CallView(game.ids[last.seat], count(last.cards), last.rank, last.play, final)
    shooters = [] if last is None else [p for p in game.ids if p != game.ids[last.seat]]
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
            )
            for s in range(len(game.ids))
        ),
        pile=count(game.pile),
        rank=game.rank,
        plays=game.plays,
        last=call,
        awaited=game.awaited,
        deadline=game.deadline,
        winner=None if game.winner is None else game.ids[game.winner],
        ranking=game.ranking(),
        can_play=seat is not None and game.phase is Phase.PLAY and game.turn == seat,
        can_shout=player is not None and can(game, Shout(player, game.plays), now),
        can_let_stand=player is not None and can(game, LetItStand(player, game.plays), now),
        shout_open=any(can(game, Shout(p, game.plays), now) for p in shooters),
    )
