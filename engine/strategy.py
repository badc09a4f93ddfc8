"""A computer player: from one player's view, choose a play or whether to shout.

It tells the truth when it can, lies when it must (shedding the cards it will need last), and
shouts when counting cards makes a lie certain or likely. It sees only its own view, so it
plays by the same information as a person.
"""

from __future__ import annotations

import random
from math import comb

from engine.cards import RANK_COUNT, RANK_MASKS, Mask, cards_in, count, count_of_rank, rank_of
from engine.moves import LetItStand, Move, Play, Shout
from engine.state import Phase
from engine.view import View


def lie_probability(v: View) -> float:
    """How likely the most recent call is a lie, from the viewer's hand alone.

    The caller held their hand plus the played cards; whatever the viewer does not hold is
    spread over the other hands and the pile. The call is true when the caller held at least
    `count` cards of the rank among the ones the viewer cannot see (hypergeometric).
    """
    last = v.last
    if last is None:
        return 0.0
    caller = v.seat(last.player)
    held = count_of_rank(v.hand, last.rank)
    unseen_of_rank = 4 - held
    if last.count > unseen_of_rank:
        return 1.0  # e.g. a call of 3 × R while the viewer holds two kings
    unseen = 52 - count(v.hand)
    caller_hand = (caller.cards if caller else 0) + last.count
    if caller_hand > unseen:
        return 0.0
    total = comb(unseen, caller_hand)
    true = sum(
        comb(unseen_of_rank, j) * comb(unseen - unseen_of_rank, caller_hand - j)
        for j in range(last.count, min(unseen_of_rank, caller_hand) + 1)
    )
    return 1.0 - true / total


def choose(v: View, rng: random.Random) -> Move | None:
    """The viewer's move now, or None when it has nothing it wants to do."""
    me = v.viewer
    if me is None:
        return None
    if v.can_shout and _wants_to_shout(v, rng):
        return Shout(me, v.plays)
    if v.can_let_stand:
        return LetItStand(me, v.plays)
    if v.can_play:
        return Play(me, _cards_to_play(v, rng), v.turns)
    return None


def _wants_to_shout(v: View, rng: random.Random) -> bool:
    p_lie = lie_probability(v)
    assert v.last is not None, "a shout is only possible at a play"
    if p_lie >= 1.0:
        # Certain, and yet let through now and then: with two players the deck ends up split
        # rank by rank between the hands, every lie is then certain, and a perfect counter
        # would catch every one forever. People miss some; so does this player.
        return v.phase is Phase.DECIDE or rng.random() < 0.85
    caller = v.seat(v.last.player)
    me = v.seat(v.viewer) if v.viewer is not None else None
    if v.phase is Phase.DECIDE:
        threshold = 0.35  # letting a final play stand loses the game: doubt it readily
    elif v.pile <= v.last.count:
        # The first play on an empty pile: catching it gains little, and the winner of a
        # challenge must call the same awkward rank again, which loops with a doubtful shout.
        return False
    else:
        # A lie matters the more the closer its teller is to an empty hand; far from it,
        # doubting risks the pile for little.
        threshold = 0.5 + 0.02 * (caller.cards if caller else 0)
    if me is not None and me.bullets == 1:
        threshold += 0.1
    if p_lie < threshold:
        return False
    # Above the threshold, shout more often the surer we are, but never always: two players
    # left with one card each on a rank neither holds would otherwise catch each other forever.
    return rng.random() < min(0.9, 0.5 + (p_lie - threshold) / (1 - threshold))


def _cards_to_play(v: View, rng: random.Random) -> Mask:
    truth = v.hand & RANK_MASKS[v.rank]
    if truth:
        return truth  # never more than four: one rank has four cards
    hand_size = count(v.hand)
    if hand_size <= 2 and rng.random() < 0.5:
        return v.hand  # a bluffed final play
    return _shed(v, 2 if hand_size > 6 and rng.random() < 0.3 else 1)


def _shed(v: View, n: int) -> Mask:
    """The `n` cards whose rank comes up last in the cycle (R7): they are needed least."""
    by_need = sorted(cards_in(v.hand), key=lambda c: -((rank_of(c) - v.rank) % RANK_COUNT))
    mask = 0
    for c in by_need[:n]:
        mask |= 1 << c
    return mask
