"""Games set up by hand for rule tests: hands written as cards ('7♦ 7♣'), all 52 accounted for;
and `refused`, which checks that a refused move changed nothing."""

from __future__ import annotations

import pytest

from engine import Game, MenteurError, Phase, apply, encode, mask_of, parse_card
from engine.cards import FULL_DECK, RANKS
from infra.harness import NAMES, T0


def cards(text: str) -> int:
    return mask_of(parse_card(c) for c in text.split())


def table(*hands: str, rank: str = "A", turn: int = 0, rest_to: int = -1) -> Game:
    """A running game, players 1..n seated in order; cards not named go to seat `rest_to`."""
    masks = [cards(h) for h in hands]
    taken = 0
    for m in masks:
        assert not m & taken, "a card is in two hands"
        taken |= m
    masks[rest_to] |= FULL_DECK & ~taken
    n = len(hands)
    return Game(
        opener=1,
        updated=T0,
        acted=T0,
        phase=Phase.PLAY,
        ids=tuple(range(1, n + 1)),
        names=NAMES[:n],
        hands=masks,
        bullets=[3] * n,
        rank=RANKS.index(rank),
        turn=turn,
    )


def refused(game: Game, move: object, now: float = T0) -> MenteurError:
    """Apply a move that must be refused; check that the game did not change."""
    before = encode(game)
    with pytest.raises(MenteurError) as caught:
        apply(game, move, now)  # type: ignore[arg-type]
    assert encode(game) == before
    return caught.value
