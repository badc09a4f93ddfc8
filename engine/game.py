"""The rules of RULES.md as a state machine: a state, and `apply(state, move, now)`.

`apply` never changes the state it is given: it first lets the clock decide what it has decided
by `now` (`settle`), verifies the move against that (raising a `MenteurError` and changing
nothing when the move is refused) and only then builds the next state and the events. Time comes
in as `now` (seconds) and randomness as the seed of `Start`, so the same moves at the same times
replay the same game.
"""

from __future__ import annotations

import random

from engine import events as ev
from engine import memory, tally
from engine.cards import DECK_SIZE, RANK_COUNT, RANK_MASKS, Mask, cards_in, count, is_lie, rank_of
from engine.errors import Code, InvalidMove
from engine.events import StopReason
from engine.legal import allowed, due, turn_seat, verify
from engine.moves import (
    Expire,
    Forfeit,
    Join,
    Leave,
    LetItStand,
    Move,
    Play,
    SetClock,
    Shout,
    Start,
    Stop,
    VoteEnd,
)
from engine.state import (
    BULLETS,
    CLOCK_CHOICES,
    CLOCK_DEFAULT,
    DECISION_SECONDS,
    RUNNING,
    UNTIMED_TURN,
    Game,
    LastPlay,
    Phase,
)


def open_table(
    opener: int, now: float, name: str | None = None, clock: int = CLOCK_DEFAULT
) -> Game:
    """R17: a new lobby; its opener is seated when their `name` is given. `clock`: R20's seconds
    (one of `CLOCK_CHOICES`), which `SetClock` may change until the start."""
    if clock not in CLOCK_CHOICES:
        raise InvalidMove(Code.BAD_CLOCK)
    game = Game(opener=opener, updated=now, clock=clock, acted=now)
    return game if name is None else apply(game, Join(opener, name), now)[0]


# --- application: on a verified move, build the next state ------------------------------------


def apply(game: Game, move: Move, now: float) -> tuple[Game, list[ev.Event]]:
    """The state after `move` at time `now`, and what happened. Raises if refused.

    Equal to `settle(game, now)` and then the move, its events after the clock's: a move is
    judged against the table as the clock left it, whoever forgot to settle.
    """
    if _unsettled(game, now):
        game, out = settle(game, now)
    else:
        out = []  # the usual case, spared a call: every move pays for this function
    verify(game, move, now)
    g = game.copy()
    g.updated = g.acted = now  # a player's move (R18's idle time); settling is nobody's
    match move:
        case Join(player, name):
            g.ids += (player,)
            g.names += (name,)
            out.append(ev.Joined(player, name))
        case Leave(player):
            seat = g.ids.index(player)
            g.ids = g.ids[:seat] + g.ids[seat + 1 :]
            g.names = g.names[:seat] + g.names[seat + 1 :]
            out.append(ev.Left(player))
        case Start(_, seed):
            _start(g, random.Random(seed))
            out.append(ev.Started(g.ids))
        case Play(player, cards, _):
            seat = g.ids.index(player)
            g.ran_out &= ~(1 << seat)  # R20: a play of their own ends a run of run-outs
            _play(g, seat, cards, now, out)
        case Shout(player, _):
            _challenge(g, g.ids.index(player), out)
        case LetItStand(player, _):
            out.append(ev.LetStand(g.ids[_last(g).seat], player))
            _win(g, _last(g).seat, out)
        case Stop(player, _):
            _stop(g, out, player, StopReason.STOP)
        case Expire():
            _stop(g, out, None, StopReason.IDLE)
        case Forfeit(player, by_admin):
            _forfeit(g, g.ids.index(player), now, out, by_admin=by_admin)
        case SetClock(_, seconds):
            g.clock = seconds
            out.append(ev.ClockSet(seconds))
        case VoteEnd(player):
            g.votes |= 1 << g.ids.index(player)
            voters = g.voters()
            out.append(ev.Voted(player, (g.votes & voters).bit_count(), voters.bit_count()))
    _follow(g, game, now, out)
    return g, out


def settle(game: Game, now: float) -> tuple[Game, list[ev.Event]]:
    """Apply what the clock has decided by `now`: every deadline passed, one after the other,
    each at its own time (R20), however late it is noticed. R14's let-it-stand once the 45
    seconds of a final play are over; R20's run-out, the table's play or, the second time in a
    row, the forfeit; R18's vote, once the awaited person's time is over with the clock off;
    and the end of a game no person is left in.

    `apply` starts with it; the timer calls it alone. Once settled, nothing more is due at
    `now`: settling again changes nothing, and settling at any earlier times first changes
    nothing either.
    """
    out: list[ev.Event] = []
    while game.deadline is not None and now >= game.deadline:  # each deadline is later
        game = _decide(game, game.deadline, out)
    if not out and _abandoned(game):
        g = game.copy()
        g.updated = now
        _stop(g, out, None, StopReason.NO_PERSON)
        _follow(g, game, now, out)
        return g, out
    return game, out


def _unsettled(game: Game, now: float) -> bool:
    """Whether `settle` has work at `now`: a deadline passed, or a game running with no person
    left. An act settles the game once; `apply` and the views after it find nothing to do."""
    return due(game, now) or _abandoned(game)


def _abandoned(game: Game) -> bool:
    # Only a game stored before R20 can be: every move since checks it at once.
    return bool(game.out) and game.phase in RUNNING and not _people_left(game)


def as_judged(game: Game, now: float) -> Game:
    """The game as `can` judges a move at `now`: settled when the clock or a forfeit may have
    left something due (settling a settled game changes nothing). For a caller asking about
    several moves at one moment: settle once, then `engine.legal.allowed` each."""
    if _unsettled(game, now):
        return settle(game, now)[0]
    return game


def can(game: Game, move: Move, now: float) -> bool:
    """Whether `move` would be accepted now: for screens to show only buttons that work.

    Judged as `apply` judges it, on the game as the clock leaves it at `now`: a stored game
    the clock has overtaken offers nothing that would then be refused.
    """
    return allowed(as_judged(game, now), move, now)


def _decide(game: Game, at: float, out: list[ev.Event]) -> Game:
    """What the deadline `at` decides, decided at `at`: the next turn starts there."""
    g = game.copy()
    g.deadline = None  # decided: what follows sets the next one
    told = len(out)
    if g.phase is Phase.DECIDE:  # R14
        out.append(ev.LetStand(g.ids[_last(g).seat], None))
        _win(g, _last(g).seat, out)
    elif g.clock:  # R20
        _run_out(g, at, out)
    # Else R18: the awaited person's vote is no longer needed (`Game.voters`), nothing more.
    _follow(g, game, at, out)
    if len(out) > told:
        g.updated = at
    return g


def _follow(g: Game, before: Game, now: float, out: list[ev.Event]) -> None:
    """What any change brings: a new turn with the awaited person's clock (R20), and the end
    a vote was waiting for (R18), judged with whoever is awaited now."""
    moved = g.turn != before.turn or g.rank != before.rank or g.phase is not before.phase
    if moved:
        g.turns += 1
        if g.phase is Phase.PLAY:  # DECIDE has R14's deadline, set with it
            person = g.ids[turn_seat(g)] > 0  # negative ids are computer players: no clock
            g.deadline = now + (g.clock or UNTIMED_TURN) if person else None
    if g.votes:
        voters = g.voters()
        if voters and not voters & ~g.votes:
            _stop(g, out, None, StopReason.VOTE)
            if not moved:  # the end is a new turn too
                g.turns += 1


def _people_left(g: Game) -> bool:
    return any(p > 0 for s, p in enumerate(g.ids) if s not in g.out)


def _run_out(g: Game, now: float, out: list[ev.Event]) -> None:
    """R20: the awaited person's clock ran out. The table plays for them from their own hand,
    or, when it had already run out on their previous turn, they forfeit."""
    seat = turn_seat(g)
    if g.ran_out >> seat & 1:
        _forfeit(g, seat, now, out, clock=True)
        return
    g.ran_out |= 1 << seat
    player = g.ids[seat]
    cards = _table_play(g.hands[seat], g.rank)
    out.append(ev.TablePlayed(player, g.clock, count(cards), g.rank))
    _play(g, seat, cards, now, out)


def _table_play(hand: Mask, rank: int) -> Mask:
    """R20: what the table plays for a person whose clock ran out, from their own hand: every
    card of the expected rank it holds, or else the one card whose rank comes up last in the
    cycle (R7), needed least. The play is the truth where the hand allows it, and a bluffed
    final play only when a single card is all it holds. No chance in it: the same hand and
    rank, the same play. It plays for a person, not against them."""
    truth = hand & RANK_MASKS[rank]
    if truth:
        return truth
    last = max(cards_in(hand), key=lambda c: (rank_of(c) - rank) % RANK_COUNT)
    return 1 << last


def _last(g: Game) -> LastPlay:
    assert g.last is not None, "verified moves only reach here with a play to act on"
    return g.last


def _start(g: Game, rng: random.Random) -> None:
    order = list(range(len(g.ids)))
    rng.shuffle(order)  # R1: seat order fixed once, at random, when the game starts
    g.ids = tuple(g.ids[i] for i in order)
    g.names = tuple(g.names[i] for i in order)
    players = len(g.ids)
    deck = list(range(DECK_SIZE))
    rng.shuffle(deck)
    hands = [0] * players
    for i, card_index in enumerate(deck):  # R3: one at a time, from the first seat
        hands[i % players] |= 1 << card_index
    g.hands = hands
    g.bullets = [BULLETS] * players  # R4
    g.phase = Phase.PLAY  # R5
    g.turn = 0
    g.rank = 0
    g.tally = ""
    g.put = [0] * players


def _play(g: Game, seat: int, cards: Mask, now: float, out: list[ev.Event]) -> None:
    tally.stood(g)  # the previous play was not challenged, and now cannot be (R10)
    g.hands[seat] &= ~cards
    g.pile |= cards
    memory.played(g, seat, cards)
    g.plays += 1
    g.last = LastPlay(g.plays, seat, cards, g.rank)
    g.shouted = None
    final = g.hands[seat] == 0
    out.append(ev.Called(g.ids[seat], count(cards), g.rank, g.plays, final))
    tally.add(g, tally.PLAYS, seat)
    if is_lie(cards, g.rank):
        tally.add(g, tally.LIES, seat)
    g.rank = (g.rank + 1) % RANK_COUNT  # R7
    g.turn = g.next_seat(seat)  # R9
    if final:  # R13
        g.phase = Phase.DECIDE
        g.deadline = now + DECISION_SECONDS
        out.append(ev.FinalPlay(g.ids[seat], g.ids[g.turn], g.deadline, g.plays))


def _challenge(g: Game, accuser: int, out: list[ev.Event]) -> None:
    last = _last(g)
    lie = is_lie(last.cards, last.rank)  # R8
    loser, winner = (last.seat, accuser) if lie else (accuser, last.seat)
    if lie:
        tally.add(g, tally.CAUGHT, last.seat)
        tally.add(g, tally.RIGHT, accuser)
    else:
        g.bullets[accuser] -= 1  # R10/R11: spent, and kept spent when the accuser was wrong
    picked_up = count(g.pile)
    set_aside = not g.in_game(loser)
    if set_aside:  # R19: a forfeiter's pick-up is set aside with their hand
        g.aside |= g.pile
    else:  # R12
        g.hands[loser] |= g.pile
        tally.add(g, tally.PICKED_UP, loser, picked_up)
    memory.picked_up(g, loser, last.cards)
    g.pile = 0
    g.last = None
    g.shouted = accuser
    g.rank = last.rank  # R7, R11: the same rank again
    g.deadline = None
    final_stands = g.phase is Phase.DECIDE and not lie
    next_player: int | None = None
    if not final_stands:
        g.phase = Phase.PLAY
        g.turn = winner if g.in_game(winner) else g.next_seat(winner)
        next_player = g.ids[g.turn]
    out.append(
        ev.Challenged(
            accuser=g.ids[accuser],
            player=g.ids[last.seat],
            play=last.play,
            rank=last.rank,
            cards=last.cards,
            lie=lie,
            loser=g.ids[loser],
            picked_up=picked_up,
            set_aside=set_aside,
            next_player=next_player,
        )
    )
    if final_stands:  # R14: a challenge showed the final play was true
        _win(g, last.seat, out)


def _win(g: Game, seat: int, out: list[ev.Event]) -> None:
    tally.stood(g)  # a final play let stand, or a play left open by the last forfeit
    g.phase = Phase.OVER
    g.winner = seat
    g.turn = None
    g.deadline = None
    g.last = None
    out.append(ev.Won(g.ids[seat], g.ranking()))


def _stop(g: Game, out: list[ev.Event], by: int | None, reason: StopReason) -> None:
    tally.stood(g)
    g.phase = Phase.OVER
    g.winner = None
    g.turn = None
    g.deadline = None
    g.last = None
    out.append(ev.Stopped(by, reason))


def _forfeit(
    g: Game,
    seat: int,
    now: float,
    out: list[ev.Event],
    *,
    clock: bool = False,
    by_admin: bool = False,
) -> None:
    g.aside |= g.hands[seat]
    g.hands[seat] = 0
    g.out.append(seat)
    out.append(ev.Forfeited(g.ids[seat], clock, by_admin))
    active = g.active_seats()
    if len(active) == 1:
        _win(g, active[0], out)
    elif all(g.ids[s] < 0 for s in active):  # R20: computer players alone never play on
        _stop(g, out, None, StopReason.NO_PERSON)
    elif g.turn == seat:
        g.turn = g.next_seat(seat)
        if g.phase is Phase.DECIDE:  # the decision passes on, with a fresh 45 seconds
            g.deadline = now + DECISION_SECONDS
            out.append(ev.DecisionPassed(g.ids[g.turn], g.deadline))
        else:  # the turn passes on; the expected rank is unchanged
            out.append(ev.TurnPassed(g.ids[g.turn]))
    elif g.phase is Phase.DECIDE and _last(g).seat == seat:
        # The one who made the final play left: nobody can win by it any more, so the decider
        # plays next. The play itself stays open to a challenge until then (R10, R19).
        g.phase = Phase.PLAY
        g.deadline = None
        out.append(ev.TurnPassed(g.ids[turn_seat(g)]))
