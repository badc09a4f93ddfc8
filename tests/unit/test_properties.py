"""Property-based tests: random legal and illegal moves for 2-8 players, invariants after each."""

from __future__ import annotations

import json
import random

from hypothesis import event, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from engine import (
    Expire,
    Forfeit,
    Game,
    Join,
    Leave,
    LetItStand,
    MenteurError,
    Move,
    Phase,
    Play,
    Shout,
    Start,
    Stop,
    Timeout,
    apply,
    count,
    decode,
    encode,
    open_table,
    settle,
    strategy,
    view,
)
from engine import events as ev
from engine.cards import FULL_DECK

OUTSIDER = 99


def check_invariants(game: Game) -> None:
    if game.hands:  # dealt (a table stopped in its lobby never was)
        # I1: each of the 52 cards in exactly one place.
        places = [*game.hands, game.pile, game.aside]
        assert sum(count(p) for p in places) == 52
        union = 0
        for p in places:
            union |= p
        assert union == FULL_DECK
        # I2
        assert all(0 <= b <= 3 for b in game.bullets)
        # Forfeited hands are empty; only a final player awaiting a decision holds nothing.
        for seat, hand in enumerate(game.hands):
            if seat in game.out:
                assert hand == 0
            elif hand == 0:
                assert game.phase in (Phase.DECIDE, Phase.OVER)
    # I3: a finished game has one winner, or none when stopped.
    if game.phase is Phase.OVER:
        assert game.awaited is None
        assert game.winner is not None or game.stopped
        if game.winner is not None:
            assert game.winner not in game.out or len(game.active_seats()) == 0
            ranking = game.ranking()
            assert ranking[0] == game.ids[game.winner] and sorted(ranking) == sorted(game.ids)
    # I4: exactly one thing awaited.
    if game.phase in (Phase.PLAY, Phase.DECIDE):
        assert game.turn is not None and game.in_game(game.turn)
        assert game.awaited == game.ids[game.turn]
        assert (game.deadline is not None) == (game.phase is Phase.DECIDE)
    else:
        assert game.turn is None and game.awaited is None and game.deadline is None
    # R10: a shout is possible only at the most recent play, still open.
    if game.last is not None:
        assert game.last.play == game.plays and game.phase is not Phase.OVER
    # The stored form round-trips exactly, through JSON as it is stored.
    assert decode(json.loads(json.dumps(encode(game)))) == game


class MenteurMachine(RuleBasedStateMachine):
    """Drives a table with any move at any time: half sensible, half nonsense."""

    def __init__(self) -> None:
        super().__init__()
        self.game = open_table(1, 0.0, "P1")
        self.now = 0.0
        self.rng = random.Random(0)

    @initialize(players=st.integers(2, 8), seed=st.integers(0, 2**32), start=st.booleans())
    def seat(self, players: int, seed: int, start: bool) -> None:
        self.rng = random.Random(seed)
        for p in range(2, players + 1):
            self.game, _ = apply(self.game, Join(p, f"Player {p}"), self.now)
        if start:
            self.game, _ = apply(self.game, Start(1, seed), self.now)

    def attempt(self, move: Move) -> None:
        before = encode(self.game)
        original = self.game
        try:
            after, events = apply(self.game, move, self.now)
        except MenteurError as refused:
            event(f"refused: {refused.code}")  # --hypothesis-show-statistics shows the reach
            assert encode(self.game) == before, "a refused move changed nothing"
            return

        assert encode(original) == before, "apply never mutates its input"
        for happened in events:
            event(type(happened).__name__)
        if after.phase is Phase.OVER and original.phase is not Phase.OVER:
            assert isinstance(events[-1], ev.Won | ev.Stopped)
        self.game = after

    @rule(wait=st.floats(0, 60))
    def time_passes(self, wait: float) -> None:
        self.now += wait

    @rule()
    def the_clock_settles(self) -> None:
        self.game, _ = settle(self.game, self.now)

    @rule(data=st.data())
    def a_computer_player_acts(self, data: st.DataObject) -> None:
        player = data.draw(st.sampled_from(self.game.ids or (OUTSIDER,)))
        move = strategy.choose(view(self.game, player, self.now), self.rng)
        if move is not None:
            self.attempt(move)

    @rule(moves=st.integers(1, 40))
    def computer_players_play_a_while(self, moves: int) -> None:
        # Reaches final plays and the end within a bounded number of steps.
        for _ in range(moves):
            self.now += 1
            for player in self.rng.sample(self.game.ids, len(self.game.ids)):
                move = strategy.choose(view(self.game, player, self.now), self.rng)
                if move is not None:
                    self.attempt(move)
                    break
            check_invariants(self.game)

    @rule(data=st.data())
    def anyone_tries_anything(self, data: st.DataObject) -> None:
        players = st.sampled_from((*self.game.ids, OUTSIDER))
        plays = st.integers(max(0, self.game.plays - 1), self.game.plays + 1)
        turn = self.game.turn
        hand = 0 if turn is None else self.game.hands[turn]
        own_cards = st.sets(st.sampled_from(range(52)), max_size=5).map(
            lambda cs: sum(1 << c for c in cs) & (hand if data.draw(st.booleans()) else FULL_DECK)
        )
        move = data.draw(
            st.one_of(
                st.builds(Play, players, own_cards, st.none() | plays),
                st.builds(Shout, players, plays),
                st.builds(LetItStand, players, plays),
                st.builds(Timeout, plays),
                st.builds(Forfeit, players),
                # Rarely a stopper: a stopped table has nothing left to test.
                st.builds(
                    Stop, players.filter(lambda p: p != 1), st.integers(0, 9).map(lambda x: x == 0)
                ),
                st.builds(Expire, st.floats(0, 100)),
                st.builds(Join, players, st.text(max_size=3)),
                st.builds(Leave, players),
                st.builds(Start, players, st.integers(0, 100)),
            )
        )
        self.attempt(move)

    @invariant()
    def invariants_hold(self) -> None:
        check_invariants(self.game)


TestMenteurMachine = MenteurMachine.TestCase
TestMenteurMachine.settings = settings(max_examples=150, stateful_step_count=60, deadline=None)


def play_out(players: int, seed: int) -> tuple[Game, list[ev.Event]]:
    """A whole game between computer players, invariants checked after every move."""
    rng = random.Random(seed)
    now = 0.0
    game = open_table(1, now, "P1")
    for p in range(2, players + 1):
        game, _ = apply(game, Join(p, f"P{p}"), now)
    game, history = apply(game, Start(1, seed), now)
    for _ in range(10_000):
        if game.phase is Phase.OVER:
            return game, history
        now += 1
        for player in rng.sample(game.ids, len(game.ids)):
            move = strategy.choose(view(game, player, now), rng)
            if move is not None:
                game, events = apply(game, move, now)
                break
        else:
            now += 45
            game, events = settle(game, now)
        history += events
        check_invariants(game)
    raise AssertionError("the game did not end")


@given(players=st.integers(2, 8), seed=st.integers(0, 2**32))
@settings(max_examples=60, deadline=None)
def test_computer_players_finish_every_game_with_one_winner(players: int, seed: int) -> None:
    game, history = play_out(players, seed)
    won = [e for e in history if isinstance(e, ev.Won)]
    assert game.winner is not None
    assert len(won) == 1 and won[0].winner == game.ids[game.winner]
    assert won[0].ranking == game.ranking()


@given(players=st.integers(2, 8), seed=st.integers(0, 2**16))
@settings(max_examples=20, deadline=None)
def test_the_same_seed_and_moves_replay_the_same_game(players: int, seed: int) -> None:
    assert play_out(players, seed) == play_out(players, seed)
