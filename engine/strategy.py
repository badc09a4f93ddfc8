"""Computer players at three levels: from one player's view, a play, a shout, or nothing.

`LEVELS` maps "easy", "normal" and "hard" to a function `(view, rng) -> Move | None`: the same
view and seed, the same decision. A level sees only its seat's view, so it plays by what a
person at that seat could know: their hand, the calls, and what the table saw of the cards
(`View.put`, `SeatView.known`: the cards turned over and who picked them up, the cards they put
on the pile and who picked those up). The levels differ in how much of that they remember and
how carefully they weigh it, not in what they are shown.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from enum import IntEnum
from functools import lru_cache, partial
from math import comb
from typing import NamedTuple

from engine.cards import DECK_SIZE, RANK_COUNT, RANK_MASKS, Mask, cards_in, count, rank_of
from engine.moves import LetItStand, Move, Play, Shout
from engine.state import BULLETS, MAX_PLAY
from engine.view import View

LONG_GAME = 150  # plays: past it, attention wears (`_shouts`)
PROOF = 1e-9  # a chance this small that a call is true is none: the call is a lie


class Memory(IntEnum):
    """What a level remembers, beyond its hand and the calls (each remembers what those below
    it do)."""

    HAND = 0  # its hand, and every seat's cards and calls
    TABLE = 1  # what the whole table saw: the cards turned over and who picked them up
    OWN = 2  # what it alone saw: the cards it put on the pile, and who picked those up


class Style(NamedTuple):
    """What makes a level: how much it remembers and how it weighs what it knows."""

    memory: Memory  # what it remembers: to prove a call a lie, and to play by
    odds: Memory  # what its odds count (no more than `memory`: what it remembers proves lies)
    truthful: float  # how often it believes a caller tells the truth when the hand allows it
    caution: float  # what a wrong Liar! costs it beyond the pile, in cards (a bullet)
    finals: float  # the chance it shouts at a final play it cannot rule out
    temper: float  # how loosely it picks among plays worth about the same (0: the best)
    grab: int = 0  # heads-up, a pile it takes on purpose when a bullet can be spared (0: none)


def decide(style: Style, v: View, rng: random.Random) -> Move | None:
    """The viewer's move now, or None when it has nothing it wants to do."""
    me = v.viewer
    if me is None:
        return None
    if v.can_shout and _shouts(style, v, rng):
        return Shout(me, v.plays)
    if v.can_let_stand:
        return LetItStand(me, v.plays)
    if v.can_play:
        return Play(me, _play(style, v, rng), v.turns)
    return None


# --- what the viewer knows of a seat's hand ----------------------------------------------


@lru_cache(maxsize=8192)
def _spread(pool: int, good: int, draws: int) -> tuple[float, ...]:
    """Hypergeometric: the chance of drawing j of `good` cards (j = 0..good) in `draws` cards
    from `pool`."""
    pool = max(0, pool)
    good = max(0, min(good, pool))
    draws = max(0, min(draws, pool))
    total = comb(pool, draws)
    return tuple(
        comb(good, j) * comb(pool - good, draws - j) / total if j <= draws else 0.0
        for j in range(good + 1)
    )


def _held(
    v: View, seen: list[Mask], at: int, rank: int, extra: int, *, memory: Memory
) -> tuple[float, ...]:
    """The chance that the seat `at` holds j cards of `rank` (j = 0..4), counting `extra` more
    cards than it holds now (the ones it just played), from what the viewer remembers: its own
    hand, and the cards seen going to each seat (`seen`, from `_remembered`), which a seat may
    have put on the pile since: the cards it called there earlier, a count the whole table
    knows, are taken as any of the ones it held."""
    seat = v.seats[at]
    mask = RANK_MASKS[rank]
    accounted = v.hand | (v.put if memory is Memory.OWN else 0)
    theirs = 0
    earlier = 0
    if memory:
        for other, cards in enumerate(seen):
            if other != at:
                accounted |= cards
        theirs = seen[at] & ~accounted
        earlier = max(0, seat.put - extra)
    hand = seat.cards + extra
    sure = (theirs & mask).bit_count()
    unseen = 4 - (accounted & mask).bit_count() - sure
    pool = DECK_SIZE - accounted.bit_count() - theirs.bit_count()
    return _chances(pool, unseen, theirs.bit_count(), sure, hand, earlier)


@lru_cache(maxsize=8192)
def _chances(  # noqa: PLR0917 - positional: a cache's key is cheaper made without names
    pool: int, unseen: int, known: int, sure: int, hand: int, earlier: int
) -> tuple[float, ...]:
    """`_held`'s sums, from its counts: the `known` cards seen going to the seat, `sure` of them
    of the rank; the rest of its `hand` and `earlier` calls drawn from the `pool` of cards the
    viewer cannot place, `unseen` of them of the rank. Cached: a few small numbers, asked for
    every seat at every turn."""
    total = hand + earlier  # its hand and its earlier calls on this pile
    together = [0.0] * 5
    for j, p in enumerate(_spread(pool, unseen, total - known)):
        together[min(4, sure + j)] += p
    if not earlier:
        return tuple(together)
    held = [0.0] * 5
    for t, p in enumerate(together):
        if p:
            for j, q in enumerate(_spread(total, t, hand)):
                held[j] += p * q
    return tuple(held)


# Lies by size as the levels expect them from others: mostly one or two cards.
LIE_SIZES = (0.65, 0.2, 0.1, 0.05)


def _remembered(v: View, memory: Memory) -> list[Mask]:
    """The cards a level remembers seeing go to each seat, in seat order: read once a decision,
    for every seat's `_held`."""
    if memory is Memory.OWN:
        return [s.known for s in v.seats]
    return [s.shown for s in v.seats] if memory else [0] * len(v.seats)


def _odds(held: Sequence[float], k: int, truthful: float) -> float:
    """How likely a call of `k` is a lie, from the chances `held` that its caller held j cards
    of the rank, for a caller who tells the truth when it can, mostly (`truthful`)."""
    possible = sum(held[k:])
    if possible <= PROOF:
        return 1.0  # e.g. a call of 3 × R while the viewer holds two kings
    truth = truthful * (held[k] + 0.25 * (possible - held[k]))
    lie = (held[0] + (1 - truthful) * (1 - held[0])) * LIE_SIZES[k - 1]
    return lie / (lie + truth)


def lie_odds(v: View, style: Style) -> float:
    """How likely the most recent call is a lie: 1 when what the viewer remembers proves it,
    else the odds of what it counts (`Style.odds`)."""
    last = v.last
    at = None if last is None else _seat_index(v, last.player)
    if last is None or at is None:
        return 0.0
    memory = style.memory
    held = _held(v, _remembered(v, memory), at, last.rank, last.count, memory=memory)
    if style.odds is not memory and sum(held[last.count :]) > PROOF:
        held = _held(v, _remembered(v, style.odds), at, last.rank, last.count, memory=style.odds)
    return _odds(held, last.count, style.truthful)


def _seat_index(v: View, player: int) -> int | None:
    return next((i for i, s in enumerate(v.seats) if s.player == player), None)


# --- Liar! -------------------------------------------------------------------------------


def _shouts(style: Style, v: View, rng: random.Random) -> bool:
    last = v.last
    me = v.seat(v.viewer) if v.viewer is not None else None
    assert last is not None and me is not None, "a shout is only possible at a play"
    if v.plays > LONG_GAME and rng.random() < min(0.5, (v.plays - LONG_GAME) / (2 * LONG_GAME)):
        return False  # a long game wears attention: people let a lie through now and then
    p = lie_odds(v, style)
    if p >= 1.0:
        return True  # a certain lie, always
    if last.final:
        # Letting a final play stand loses the game, and so does a wrong shout at it.
        return p > 0.0 and rng.random() < style.finals
    if style.grab and me.bullets > 1 and v.pile >= style.grab and _players(v) == 2:
        # Heads-up, a big pile is worth taking even when the call is likely true: the ranks
        # just called come with it, and the next calls of them are then lies it can prove.
        return True
    return _doubts(p, v.pile, me.bullets, _weight(v, last.player), style.caution)


def _doubts(p: float, pile: int, bullets: int, weight: float, caution: float) -> bool:
    """Whether a call a lie with chance `p` is worth a shout: the caller picks up the pile when
    right, the shouter the pile and a bullet's worth when wrong; the last bullet is kept for a
    final play."""
    if bullets <= 1:
        return False
    return p * pile * weight > (1 - p) * (pile + caution * (BULLETS + 1 - bullets))


def _players(v: View) -> int:
    return sum(1 for s in v.seats if not s.out)


def _weight(v: View, player: int) -> float:
    """What the viewer gains when `player` picks up the pile, next to picking it up itself: all
    of it heads-up; at a larger table, more when `player` is the nearest to winning."""
    others = [s for s in v.seats if not s.out and s.player != v.viewer]
    if len(others) <= 1:
        return 1.0
    caller = v.seat(player)
    nearest = min(s.cards for s in others)
    return 1.0 if caller is not None and caller.cards <= nearest else 0.6


# --- what to play -------------------------------------------------------------------------


def _play(style: Style, v: View, rng: random.Random) -> Mask:
    """The truth when the hand holds the rank, all of it; else a lie, of the cards it will need
    last, as many as their worth against the risk of being caught with them (a final play's
    worth being the game)."""
    rank = v.rank
    truth = v.hand & RANK_MASKS[rank]
    if truth:
        return truth  # all of one rank when it is the whole hand: a true final play
    size = count(v.hand)
    me = v.seat(v.viewer) if v.viewer is not None else None
    shown = count(me.shown & RANK_MASKS[rank]) if me is not None and style.memory else 0
    need = _need(v)
    spare = sorted(cards_in(v.hand), key=lambda c: -need[c])
    hand = me.cards if me else 0  # the caller's hand before the call
    # Heads-up with memory, nearly all a shooter cannot see is the caller's hand and call.
    close = hand + count(v.put) if _players(v) == 2 and style.memory is Memory.OWN else None
    seen = _remembered(v, style.memory)
    shooters = [
        Shooter(
            s.bullets,
            DECK_SIZE - s.cards - count(s.shown) if close is None else close,
            _held(v, seen, at, rank, 0, memory=style.memory),
        )
        for at, s in enumerate(v.seats)
        if not s.out and s.bullets and s.player != v.viewer
    ]
    options: list[tuple[float, Mask]] = []
    for k in range(1, min(MAX_PLAY, size) + 1):
        final = k == size  # a bluffed final play: the game, unless caught
        risk = _risk(style, v.pile, shooters, k, shown, hand=hand, final=final)
        gain = 3.0 * size + 3 if final else k
        options.append(((1 - risk) * gain - risk * v.pile, _mask(spare[:k])))
    best = max(w for w, _ in options)
    return rng.choice([cards for w, cards in options if w >= best - style.temper])


class Shooter(NamedTuple):
    """Another seat that could shout at the viewer's play, as the viewer sees it."""

    bullets: int
    pool: int  # the cards it cannot see: the caller's hand and call among them
    held: tuple[float, ...]  # the chance that it holds j cards of the rank (`_held`)


def _risk(
    style: Style, pile: int, shooters: list[Shooter], k: int, shown: int, *, hand: int, final: bool
) -> float:
    """The chance a lie of `k` cards called now, from a `hand` of that many cards before the
    call, is caught by one of the `shooters`: by one who can prove it (holding more of the rank
    than the call leaves, with the `shown` ones the table saw go to the caller), or whom the
    odds as it sees them make doubt it."""
    safe = 1.0
    for bullets, pool, held in shooters:
        odds = _their_odds(pool, hand, shown, k, style.truthful)
        caught = 0.0
        for j, p in enumerate(held):
            if p and (
                j > 4 - k - shown  # it can prove the lie
                or (final and odds[j] > 0)
                or _doubts(odds[j], pile + k, bullets, 1.0, style.caution)
            ):
                caught += p
        safe *= 1 - caught
    return 1 - safe


@lru_cache(maxsize=8192)
def _their_odds(pool: int, hand: int, shown: int, k: int, truthful: float) -> tuple[float, ...]:
    """How likely a shooter holding j cards of the rank (j = 0..4) finds a call of `k` a lie:
    the rest of the rank among the `pool` of cards it cannot see, the caller's `hand` among
    them, `shown` of the rank seen going to the caller. Cached: the levels ask it for every
    shooter and size of a lie, at every turn."""
    odds = []
    for j in range(5):
        held = [0.0] * 5  # the caller's, as the shooter sees it
        for i, p in enumerate(_spread(pool, 4 - j - shown, hand)):
            held[min(4, shown + i)] += p
        odds.append(_odds(held, k, truthful))
    return tuple(odds)


def _need(v: View) -> dict[int, int]:
    """For each card of the viewer's, how many of its later turns go by before its rank is
    called for, if it keeps the card now: its turns come every `players` ranks, so a rank comes
    up after (rank - next) / players turns (mod 13, where every number of players up to 8 has an
    inverse, 13 being prime). The rank called for now is the one it waits longest for."""
    players = _players(v)
    step = pow(players, -1, RANK_COUNT)
    after = v.rank + players
    return {c: (rank_of(c) - after) * step % RANK_COUNT for c in cards_in(v.hand)}


def _mask(cards: list[int]) -> Mask:
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


Level = Callable[[View, random.Random], Move | None]

EASY = Style(Memory.HAND, Memory.HAND, truthful=0.95, caution=6.0, finals=0.5, temper=3.0)
NORMAL = Style(Memory.TABLE, Memory.HAND, truthful=0.85, caution=4.0, finals=1.0, temper=2.5)
HARD = Style(Memory.OWN, Memory.OWN, truthful=0.95, caution=2.0, finals=1.0, temper=0.0, grab=16)


def choose(v: View, rng: random.Random) -> Move | None:
    """The normal level: the computer player `/addbot` seats when no level is named."""
    return decide(NORMAL, v, rng)


LEVELS: dict[str, Level] = {
    "easy": partial(decide, EASY),
    "normal": choose,
    "hard": partial(decide, HARD),
}
