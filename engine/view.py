"""Per-player views: the only way hidden cards leave the engine.

A view shows what its viewer may see: their own hand, everyone's card counts and bullets, the
pile's size, the most recent call (count and rank, never its cards), and what the viewer may
remember of the cards (`engine.memory`: the cards turned over and who picked them up, the cards
they put on the pile and who picked those up). The group's view is the
view of nobody (`player=None`): no hand at all. Once the game is over it also shows what each
player did (`stats`, `boldest`), which would tell hidden lies before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from engine import memory
from engine.cards import Mask
from engine.game import as_judged
from engine.state import BULLETS, RUNNING, Game, Phase
from engine.tally import boldest_bluff, counters


class SeatView(NamedTuple):
    """One seat as the whole table sees it (who, how many cards, bullets left, forfeited),
    and what the viewer remembers of its cards (`known`). A tuple: every view makes one per
    seat."""

    player: int
    name: str
    cards: int
    bullets: int
    out: bool  # forfeited (R19)
    ran_out: bool  # R20: their clock ran out on their latest turn; once more and they are out
    voted: bool  # voted to end the game
    # What is remembered of this seat (`engine.memory`): the cards the whole table saw go to
    # it, and those with the ones only the viewer saw go to it (its own cards, through a pile
    # this seat picked up): in its hand still or, when it has called since, perhaps on the
    # pile; and how many cards it put on the current pile (the sum of its calls there).
    shown: Mask
    known: Mask
    put: int


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


class View(NamedTuple):
    """A table as one viewer may see it (see `view`): made afresh for every screen, a tuple
    for that (cheaper to make than a frozen dataclass of this many fields).

    The `can_*` flags answer for the viewer, `shout_open` for anyone at the table; a screen
    shows a button only when its move would be accepted now.
    """

    phase: Phase
    viewer: int | None  # the player this view is for, if seated; None for the group
    hand: Mask  # the viewer's own hand; 0 for the group
    seats: tuple[SeatView, ...]  # turn order once started (R1)
    pile: int  # a count only (glossary: Pile)
    put: Mask  # the cards the viewer put on the current pile, which they alone know
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


_tuple_new = tuple.__new__


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
        call = CallView(game.ids[last.seat], last.cards.bit_count(), last.rank, last.play, final)
    voters = game.voters()
    # R14's 45 seconds and R20's clock are shown; with the clock off, the moment the awaited
    # person's vote stops being needed (R18) is not a time anyone has to keep.
    timed = game.phase is Phase.DECIDE or game.clock
    ran_out = bool(game.clock) and game.deadline is not None and now >= game.deadline
    ids, hands, bullets, out, put = game.ids, game.hands, game.bullets, game.out, game.put
    shown, own = memory.known(game, seat)
    # Read column by column, then zipped seat by seat, each seat's values made a `SeatView`
    # by `tuple.__new__` itself, not by the named tuple's own `__new__`, a Python function in
    # between: every screen makes a view, and every decision of a computer player.
    no = (0,) * len(ids)
    names, running_out, votes = game.names, game.ran_out, game.votes
    seats = tuple(
        [  # a list first: cheaper than a generator for a tuple of known items
            _tuple_new(
                SeatView,
                (
                    player_at,
                    name,
                    held.bit_count(),
                    left,
                    s in out,
                    bool(running_out >> s & 1),
                    bool(votes >> s & 1),
                    table,
                    table | alone,
                    on_pile.bit_count(),
                ),
            )
            for s, (player_at, name, held, left, table, alone, on_pile) in enumerate(
                zip(ids, names, hands or no, bullets or no, shown, own, put or no, strict=True)
            )
        ]
    )
    can_shout = can_let_stand = can_vote = shout_open = False
    # `can`'s answers for Shout(_, game.plays), LetItStand(_, game.plays) and VoteEnd, read
    # from the game as `can` judges it (settled once, not once per move) without building the
    # moves: `verify`'s conditions for them, written out. The tests hold them to `can`.
    judged = as_judged(game, now)
    running = judged.phase in RUNNING
    mine = seat is not None and running and seat not in judged.out
    if running and not (
        judged.phase is Phase.DECIDE and judged.deadline is not None and now >= judged.deadline
    ):
        current = judged.plays == game.plays
        shot = judged.last
        if current and shot is not None:
            if mine and seat is not None:
                can_shout = bool(judged.bullets[seat]) and shot.seat != seat
            if last is not None:
                shout_open = any(
                    judged.bullets[s] and s not in judged.out
                    for s in range(len(ids))
                    if s not in (last.seat, shot.seat)
                )
        can_let_stand = mine and current and judged.phase is Phase.DECIDE and judged.turn == seat
    if mine and player is not None and seat is not None:
        can_vote = player >= 0 and not judged.votes >> seat & 1
    return View(
        phase=game.phase,
        viewer=player if seat is not None else None,
        hand=hands[seat] if seat is not None and hands else 0,
        seats=seats,
        pile=game.pile.bit_count(),
        put=put[seat] if seat is not None and put else 0,
        rank=game.rank,
        plays=game.plays,
        last=call,
        awaited=game.awaited,
        deadline=game.deadline if timed else None,
        winner=None if game.winner is None else ids[game.winner],
        ranking=game.ranking(),
        can_play=(  # `can` without the cards: the table plays at R20's deadline
            seat is not None and game.phase is Phase.PLAY and game.turn == seat and not ran_out
        ),
        can_shout=can_shout,
        can_let_stand=can_let_stand,
        shout_open=shout_open,
        turns=game.turns,
        clock=game.clock,
        votes=(game.votes & voters).bit_count(),
        votes_needed=voters.bit_count(),
        can_vote=can_vote,
        stats=_stats(game),
        boldest=_boldest(game),
    )


def _stats(game: Game) -> tuple[SeatStats, ...]:
    if game.phase is not Phase.OVER or game.tally is None or not game.hands:
        return ()
    plays, lies, caught, right, picked_up = counters(game)
    return tuple(
        SeatStats(
            player,
            plays[s],
            lies[s],
            caught[s],
            right[s] + BULLETS - game.bullets[s],
            right[s],
            picked_up[s],
        )
        for s, player in enumerate(game.ids)
    )


def _boldest(game: Game) -> Bluff | None:
    if game.phase is not Phase.OVER or game.tally is None:
        return None
    bold = boldest_bluff(game)
    if bold is None:
        return None
    seat, cards, rank = bold
    return Bluff(game.ids[seat], cards, rank)
