"""The computer player's levels (`engine.strategy.LEVELS`) keep one contract: a decision from the
seat's own view alone, the same for the same view and seed, and always a move the rules allow."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from engine import (
    Game,
    Join,
    LetItStand,
    Move,
    Phase,
    Play,
    Shout,
    Start,
    View,
    apply,
    cards_in,
    open_table,
    strategy,
    view,
)
from engine.memory import NOBODY
from engine.tally import value
from infra.harness import T0

LEVELS = sorted(strategy.LEVELS)


def games(players: int, seed: int, level: str) -> Iterator[tuple[Game, int]]:
    """A whole game of `level` at every seat (`players` people, ids 1..n, no turn clock): the
    game and the player to ask, at every offer of a move (each player in a random order). Every
    move a level returns is applied: one the rules refuse would raise."""
    rng = random.Random(seed)
    choose = strategy.LEVELS[level]
    game = open_table(1, T0, "P1", clock=0)
    for p in range(2, players + 1):
        game, _ = apply(game, Join(p, f"P{p}"), T0)
    game, _ = apply(game, Start(1, seed), T0)
    while game.phase is not Phase.OVER:
        for player in rng.sample(game.ids, players):
            yield game, player
            move = choose(view(game, player, T0), rng)
            if move is not None:
                game, _ = apply(game, move, T0)  # allowed, or this raises
                break


def test_there_are_three_levels_by_name() -> None:
    assert LEVELS == ["easy", "hard", "normal"]
    assert strategy.LEVELS["normal"] is strategy.choose, "what /addbot seats by default"


def swapped(game: Game, viewer: int) -> Game | None:
    """The same game but for two hidden cards: one card each of two other hands, which nobody
    saw go anywhere and nobody put on the pile, swapped. None when there are no such cards."""
    seat = game.ids.index(viewer)
    untracked = [value(c) == NOBODY for c in game.seen] if game.seen else [True] * 52
    others = [s for s in range(len(game.ids)) if s != seat and s not in game.out]
    for a in others:
        for b in others:
            if a >= b:
                continue
            pick = [
                next((c for c in cards_in(game.hands[s]) if untracked[c]), None) for s in (a, b)
            ]
            if None in pick:
                continue
            ca, cb = pick
            assert ca is not None and cb is not None
            copy = game.copy()
            copy.hands[a] = copy.hands[a] & ~(1 << ca) | 1 << cb
            copy.hands[b] = copy.hands[b] & ~(1 << cb) | 1 << ca
            return copy
    return None


@pytest.mark.parametrize("level", LEVELS)
def test_a_level_decides_from_its_own_view_alone_the_same_each_time(level: str) -> None:
    """Every move it returns is allowed (`games` applies them); the same view and seed give the
    same decision; and two games that differ only in hidden cards give the same view, so the
    same decision: the view shows nothing of the cards swapped."""
    choose = strategy.LEVELS[level]
    checked = 0
    for i, (game, player) in enumerate(games(4, 31, level)):
        v = view(game, player, T0)
        assert choose(v, random.Random(i)) == choose(v, random.Random(i))
        other = swapped(game, player)
        if other is None or i % 3:
            continue
        assert view(other, player, T0) == v
        assert choose(view(other, player, T0), random.Random(i)) == choose(v, random.Random(i))
        checked += 1
    assert checked > 20


def test_the_hard_level_beats_uniformly_random_play_heads_up() -> None:
    hard, wins = strategy.LEVELS["hard"], 0
    for seed in range(6):
        rng = random.Random(seed)
        game = open_table(1, T0, "P1", clock=0)
        game, _ = apply(game, Join(2, "P2"), T0)
        game, _ = apply(game, Start(1, seed), T0)
        while game.phase is not Phase.OVER:
            for player in rng.sample(game.ids, 2):
                v = view(game, player, T0)
                move = hard(v, rng) if player == 1 else random_move(v, rng)
                if move is not None:
                    game, _ = apply(game, move, T0)
                    break
        wins += game.winner is not None and game.ids[game.winner] == 1
    assert wins >= 5


def random_move(v: View, rng: random.Random) -> Move | None:
    """Uniformly random play: a shout half the time it may, else 1 to 4 cards at random."""
    assert v.viewer is not None
    if v.can_shout and rng.random() < 0.5:
        return Shout(v.viewer, v.plays)
    if v.can_let_stand:
        return LetItStand(v.viewer, v.plays)
    if v.can_play:
        hand = list(cards_in(v.hand))
        chosen = rng.sample(hand, min(len(hand), rng.randint(1, 4)))
        return Play(v.viewer, sum(1 << c for c in chosen), v.turns)
    return None
