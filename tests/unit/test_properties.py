"""Property-based tests: random legal and illegal moves for 2-8 players (people and computer
players, any clock), at random times, invariants after each; and `apply` equal to `settle` then
the move, whatever the state, the move and the time."""

from __future__ import annotations

import json
import random

from hypothesis import event, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from engine import (
    CLOCK_CHOICES,
    Code,
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
    SetClock,
    Shout,
    Start,
    Stop,
    View,
    VoteEnd,
    apply,
    can,
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
from engine.tally import counters

OUTSIDER = 99


def check_invariants(game: Game) -> None:
    seen: list[View] = []

    def group_view() -> View:  # the group's view, made once, when a check asks for it
        if not seen:
            seen.append(view(game, None, game.updated))
        return seen[0]

    if game.hands:  # dealt (a table stopped in its lobby never was)
        # I1: each of the 52 cards in exactly one place.
        cards = union = 0
        for p in [*game.hands, game.pile, game.aside]:
            cards += count(p)
            union |= p
        assert cards == 52
        assert union == FULL_DECK
        # I2
        assert min(game.bullets) >= 0 and max(game.bullets) <= 3
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
    # I4: exactly one thing awaited, and timed when it must be: R14's decision always, R20's
    # play when a person is awaited at a table with a clock; with the clock off, a person's
    # vote is needed until a deadline (R18), which passes.
    running = game.phase in (Phase.PLAY, Phase.DECIDE)
    if running:
        assert game.turn is not None and game.in_game(game.turn)
        assert game.awaited == game.ids[game.turn]
        person = game.ids[game.turn] > 0
        if game.phase is Phase.DECIDE or (person and game.clock > 0):
            assert game.deadline is not None
        elif not person:
            assert game.deadline is None
        else:
            assert group_view().deadline is None, "no time to show"
    else:
        assert game.turn is None and game.awaited is None and game.deadline is None
    # R20: a running game has a person in it; the vote has not ended it yet.
    if running:
        assert any(p > 0 for s, p in enumerate(game.ids) if s not in game.out)
        voters = game.voters()
        assert not voters or voters & ~game.votes
    seats = (1 << len(game.ids)) - 1
    assert not game.ran_out & ~seats and not game.votes & ~seats
    if game.votes:
        assert all(game.ids[s] > 0 for s in range(len(game.ids)) if game.votes >> s & 1)
    # The reveal's counters agree with each other and with the game.
    if game.hands and game.tally is not None:
        plays, lies, caught, right, picked_up = counters(game)
        assert sum(plays) == game.plays
        assert sum(caught) == sum(right)
        assert all(c <= lied <= p for c, lied, p in zip(caught, lies, plays, strict=True))
        assert max(picked_up) <= 52 * game.plays
        group = group_view()
        if game.phase is Phase.OVER:
            assert [st.player for st in group.stats] == list(game.ids)
            assert all(st.shouts >= st.right for st in group.stats)
        else:
            assert group.stats == () and group.boldest is None, "hidden lies stay hidden"
    # R10: a shout is possible only at the most recent play, still open.
    if game.last is not None:
        assert game.last.play == game.plays and game.phase is not Phase.OVER
    # The stored form round-trips exactly, through JSON as it is stored.
    assert decode(json.loads(json.dumps(encode(game)))) == game


def outcome(game: Game, move: Move, now: float) -> tuple[Game, list[ev.Event]] | Code:
    try:
        return apply(game, move, now)
    except MenteurError as refused:
        return refused.code


def check_apply_is_settle_then_move(game: Game, move: Move, now: float) -> None:
    """`apply(g, m, t)` is `apply(settle(g, t)[0], m, t)`, the clock's events first."""
    settled, clock_events = settle(game, now)
    assert settle(settled, now) == (settled, []), "once settled, nothing more is due"
    direct = outcome(game, move, now)
    after = outcome(settled, move, now)
    if isinstance(after, Code):
        assert direct == after
    else:
        assert direct == (after[0], clock_events + after[1])


class MenteurMachine(RuleBasedStateMachine):
    """Drives a table with any move at any time: half sensible, half nonsense."""

    def __init__(self) -> None:
        super().__init__()
        self.game = open_table(1, 0.0, "P1")
        self.now = 0.0
        self.rng = random.Random(0)

    @initialize(
        players=st.integers(2, 8),
        robots=st.integers(0, 7),
        clock=st.sampled_from(CLOCK_CHOICES),
        seed=st.integers(0, 2**32),
        start=st.booleans(),
    )
    def seat(self, players: int, robots: int, clock: int, seed: int, start: bool) -> None:
        self.rng = random.Random(seed)
        self.game = open_table(1, 0.0, "P1", clock)
        # The last seats go to computer players (negative ids), the opener stays a person.
        people = max(1, players - robots)
        for p in range(2, players + 1):
            player = p if p <= people else -p
            self.game, _ = apply(self.game, Join(player, f"Player {p}"), self.now)
        if start:
            self.game, _ = apply(self.game, Start(1, seed), self.now)

    def attempt(self, move: Move) -> None:
        before = encode(self.game)
        original = self.game
        check_apply_is_settle_then_move(original, move, self.now)
        try:
            after, events = apply(self.game, move, self.now)
        except MenteurError as refused:
            event(f"refused: {refused.code}")  # --hypothesis-show-statistics shows the reach
            assert encode(self.game) == before, "a refused move changed nothing"
            return

        assert encode(original) == before, "apply never mutates its input"
        for happened in events:
            event(type(happened).__name__)
            if isinstance(happened, ev.Stopped):
                event(f"Stopped: {happened.reason}")
            if isinstance(happened, ev.Forfeited) and happened.clock:
                event("Forfeited by the clock")
        if after.phase is Phase.OVER and original.phase is not Phase.OVER:
            assert isinstance(events[-1], ev.Won | ev.Stopped)
        moved = (after.turn, after.rank, after.phase) != (
            original.turn,
            original.rank,
            original.phase,
        )
        assert after.turns > original.turns if moved else after.turns >= original.turns
        self.game = after

    @rule(wait=st.floats(0, 60) | st.floats(0, 400))
    def time_passes(self, wait: float) -> None:
        self.now += wait

    @rule()
    def time_reaches_the_deadline(self) -> None:
        # Exactly, or a hair before: what is due is due at the deadline, not a moment sooner.
        if self.game.deadline is not None:
            self.now = max(self.now, self.game.deadline - self.rng.choice((0.0, 0.001)))

    @rule()
    def the_clock_settles(self) -> None:
        self.game, _ = settle(self.game, self.now)

    @rule(data=st.data(), later=st.floats(0, 60) | st.floats(0, 1000))
    def settling_once_at_t_equals_settling_at_every_deadline_up_to_t(
        self, data: st.DataObject, later: float
    ) -> None:
        # R20: however late the timer comes, each deadline decides at its own time.
        t = self.now + later
        once = settle(self.game, t)
        game, events = self.game, []
        while game.deadline is not None and game.deadline <= t:
            game, more = settle(game, game.deadline)
            events += more
        assert settle(game, t) == (game, []) and (game, events) == once
        # Any times in between, too: the timer firing late, early, twice.
        offsets = data.draw(st.lists(st.floats(0, later), max_size=4))
        game, events = self.game, []
        for offset in [*sorted(offsets), later]:
            game, more = settle(game, self.now + offset)
            events += more
        assert (game, events) == once
        for happened in events:
            event(f"caught up: {type(happened).__name__}")

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
                if not may_move(self.game, player, self.now):
                    continue
                move = strategy.choose(view(self.game, player, self.now), self.rng)
                if move is not None:
                    self.attempt(move)
                    break
            check_invariants(self.game)

    @rule(data=st.data())
    def anyone_tries_anything(self, data: st.DataObject) -> None:
        players = st.sampled_from((*self.game.ids, OUTSIDER))
        plays = st.integers(max(0, self.game.plays - 1), self.game.plays + 1)
        turns = st.integers(max(0, self.game.turns - 1), self.game.turns + 1)
        turn = self.game.turn
        hand = 0 if turn is None else self.game.hands[turn]
        own_cards = st.sets(st.sampled_from(range(52)), max_size=5).map(
            lambda cs: sum(1 << c for c in cs) & (hand if data.draw(st.booleans()) else FULL_DECK)
        )
        move = data.draw(
            st.one_of(
                st.builds(Play, players, own_cards, st.none() | turns),
                st.builds(Shout, players, plays),
                st.builds(LetItStand, players, plays),
                st.builds(Forfeit, players),
                # Rarely a stopper: a stopped table has nothing left to test.
                st.builds(
                    Stop, players.filter(lambda p: p != 1), st.integers(0, 9).map(lambda x: x == 0)
                ),
                st.builds(Expire, st.floats(0, 100)),
                st.builds(Join, players, st.text(max_size=3)),
                st.builds(Leave, players),
                st.builds(Start, players, st.integers(0, 100)),
                st.builds(VoteEnd, players),
                st.builds(SetClock, players, st.sampled_from((*CLOCK_CHOICES, 45)), st.booleans()),
            )
        )
        self.attempt(move)

    @rule(steps=st.integers(1, 30))
    def the_people_are_away(self, steps: int) -> None:
        # Only computer players act: the people's clocks run out (R20), the table plays for
        # them, then forfeits them, until no person is left (or the clock is off).
        for _ in range(steps):
            if self.game.phase not in (Phase.PLAY, Phase.DECIDE):
                return
            self.now += 1
            for robot in (p for p in self.game.ids if p < 0):
                move = strategy.choose(view(self.game, robot, self.now), self.rng)
                if move is not None:
                    self.attempt(move)
                    break
            else:
                if self.game.deadline is None:
                    return
                self.now = max(self.now, self.game.deadline)
                self.game, happened = settle(self.game, self.now)
                for e in happened:
                    event(f"away: {type(e).__name__}")
                    if isinstance(e, ev.Stopped):
                        event(f"away: Stopped: {e.reason}")
            check_invariants(self.game)

    @invariant()
    def invariants_hold(self) -> None:
        check_invariants(self.game)


TestMenteurMachine = MenteurMachine.TestCase
TestMenteurMachine.settings = settings(max_examples=150, stateful_step_count=60, deadline=None)


def may_move(game: Game, player: int, now: float) -> bool:
    """Whether the computer player may move for `player` now: on its turn, or when `can` lets
    it shout or let a final play stand (its view's can_play, can_shout and can_let_stand).
    Otherwise `strategy.choose` passes without drawing from its random generator, so asking
    only these players plays the very same games without drawing views that end in a pass."""
    return (
        (game.turn is not None and game.ids[game.turn] == player)
        or can(game, Shout(player, game.plays), now)
        or can(game, LetItStand(player, game.plays), now)
    )


def play_out(players: int, seed: int) -> tuple[Game, list[ev.Event]]:
    """A whole game between computer players, invariants checked after every move. The levels
    take the seats in turn, from one the seed picks: a table of three or more has all three,
    as groups mix them with /addbot."""
    rng = random.Random(seed)
    now = 0.0
    game = open_table(1, now, "P1")
    for p in range(2, players + 1):
        game, _ = apply(game, Join(p, f"P{p}"), now)
    game, history = apply(game, Start(1, seed), now)
    names = sorted(strategy.LEVELS)
    level = {p: strategy.LEVELS[names[(seed + p) % len(names)]] for p in game.ids}
    for _ in range(10_000):
        if game.phase is Phase.OVER:
            return game, history
        now += 1
        for player in rng.sample(game.ids, len(game.ids)):
            if not may_move(game, player, now):
                continue  # its view would say so, and the computer player would pass
            move = level[player](view(game, player, now), rng)
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
