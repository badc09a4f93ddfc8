"""R20 (the turn clock, no person left) and the engine's decisions beside it (RULES.md): turns
(R6), moves judged after the clock (R14), the vote to end (R18), the reveal (R16). Named after
their rule, like test_rules.py."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import engine.game
from engine import (
    CLOCK_CHOICES,
    CLOCK_DEFAULT,
    DECISION_SECONDS,
    UNTIMED_TURN,
    Bluff,
    Code,
    Expire,
    Forfeit,
    Game,
    InvalidMove,
    Join,
    LetItStand,
    MenteurError,
    Move,
    Phase,
    Play,
    SeatStats,
    SetClock,
    Shout,
    Start,
    Stop,
    StopReason,
    VoteEnd,
    apply,
    can,
    count,
    open_table,
    settle,
    view,
)
from engine import events as ev
from engine.cards import RANKS, is_lie
from engine.tally import boldest_bluff
from infra.harness import T0
from tests.support.games import cards, refused, table


def clocked(*hands: str, clock: int = 90, robots: tuple[int, ...] = (), **kw: Any) -> Game:
    """A table (`tables.table`) with R20's clock, its first awaited player's turn begun at T0;
    the seats in `robots` are computer players (their ids negated: -1, -2, ...). With the clock
    off, the awaited person's vote is needed for R18's 90 seconds."""
    game = table(*hands, **kw)
    ids = tuple(-p if seat in robots else p for seat, p in enumerate(game.ids))
    assert game.turn is not None
    person = ids[game.turn] > 0
    deadline = T0 + (clock or UNTIMED_TURN) if person else None
    return dataclasses.replace(game, ids=ids, clock=clock, deadline=deadline)


def lobby(players: int, clock: int = CLOCK_DEFAULT) -> Game:
    game = open_table(1, T0, "P1", clock)
    for p in range(2, players + 1):
        game, _ = apply(game, Join(p, f"P{p}"), T0)
    return game


# --- R6: a play names its turn ---------------------------------------------------------------


def test_r6_a_play_drawn_before_a_challenge_is_stale_after_it() -> None:
    game = table("A♠ 2♠", "3♠ 4♠ 2♥", "5♠ 6♠")
    game, _ = apply(game, Play(1, cards("2♠")), T0)  # Ann lies under A
    drawn = view(game, 2, T0)  # Bob's hand offers "Play 1 × 2"
    assert drawn.can_play and RANKS[drawn.rank] == "2"
    game, _ = apply(game, Shout(2, 1), T0)  # Bob catches her: he plays next, on A again
    assert game.awaited == 2 and RANKS[game.rank] == "A"
    assert refused(game, Play(2, cards("2♥"), drawn.turns)).code is Code.STALE
    now = view(game, 2, T0).turns
    assert apply(game, Play(2, cards("2♥"), now), T0)[1] == [ev.Called(2, 1, 0, 2, False)]


def test_r6_a_new_turn_begins_with_the_awaited_player_the_rank_or_the_phase_only() -> None:
    game = lobby(4)
    assert game.turns == 0
    game, _ = apply(game, Start(1, 3), T0)
    assert game.turns == 1, "the start"
    first, second, third, _ = game.ids
    assert game.turn is not None
    one = next(c for c in range(52) if game.hands[0] >> c & 1)
    game, _ = apply(game, Play(first, 1 << one, 1), T0)
    assert game.turns == 2, "a play"
    for same in (VoteEnd(third), Forfeit(third)):  # neither changes who plays or what
        game, _ = apply(game, same, T0)
        assert game.turns == 2
    game, _ = apply(game, Forfeit(second), T0)  # the turn passes on: a new turn
    assert game.turns == 3 and view(game, None, T0).turns == 3
    # A play without a turn count (a command) is judged as the game stands.
    assert game.awaited is not None and game.turn is not None
    one = next(c for c in range(52) if game.hands[game.turn] >> c & 1)
    assert apply(game, Play(game.awaited, 1 << one), T0)[0].turns == 4


def test_r6_a_final_players_forfeit_turns_the_decision_into_a_new_moment() -> None:
    game = table("5♠ 5♥", "3♠ 4♠", "6♠", rank="5")
    game, _ = apply(game, Play(1, cards("5♠ 5♥")), T0)
    decide = game.turns
    game, _ = apply(game, Forfeit(1), T0)  # Bob keeps the turn and the rank, now to play
    assert game.phase is Phase.PLAY and game.turns == decide + 1


# --- R14: a move is judged after what the clock decided --------------------------------------


def final_play(clock: int = 0) -> Game:
    """Ann (1) empties her hand under 5 at T0; Bob (2) decides; Chloé (3) watches."""
    return apply(
        clocked("5♠ 9♥", "3♠ 4♠", "6♠", rank="5", clock=clock), Play(1, cards("5♠ 9♥")), T0
    )[0]


def test_r14_a_forfeit_after_the_45_seconds_cannot_reopen_the_decision() -> None:
    game = final_play()
    deadline = T0 + DECISION_SECONDS
    _, events = apply(game, Forfeit(2), deadline - 0.001)  # in time: the decision passes
    assert events[-1] == ev.DecisionPassed(3, deadline - 0.001 + DECISION_SECONDS)
    # At the deadline the table has let Ann's play stand: she won, and nothing reopens it.
    assert refused(game, Forfeit(2), deadline).code is Code.GAME_OVER
    assert refused(game, Stop(1), deadline + 5).code is Code.GAME_OVER
    assert settle(game, deadline)[0].winner == 0


# --- R20: the turn clock -------------------------------------------------------------------------


def test_r20_a_table_has_a_90_second_clock_the_opener_or_an_admin_sets_in_the_lobby() -> None:
    game = lobby(3)
    assert game.clock == CLOCK_DEFAULT == 90 and view(game, None, T0).clock == 90
    assert CLOCK_CHOICES == (0, 30, 60, 90, 180)
    assert refused(game, SetClock(2, 30)).code is Code.NOT_ALLOWED
    by_admin, events = apply(game, SetClock(2, 30, admin=True), T0)
    assert events == [ev.ClockSet(30)] and by_admin.clock == 30
    assert apply(game, SetClock(1, 0), T0)[0].clock == 0
    error = refused(game, SetClock(1, 45))
    assert isinstance(error, InvalidMove) and error.code is Code.BAD_CLOCK
    with pytest.raises(InvalidMove):
        open_table(1, T0, "Ann", clock=45)
    running, _ = apply(by_admin, Start(1, 7), T0)
    assert running.deadline == T0 + 30
    assert refused(running, SetClock(1, 60)).code is Code.ALREADY_STARTED


def test_r20_the_table_plays_for_a_person_at_90_0_seconds_not_at_89_9() -> None:
    game = apply(lobby(3), Start(1, 7), T0)[0]
    ann = game.ids[0]
    assert game.deadline == T0 + 90.0 and view(game, None, T0).deadline == T0 + 90.0
    assert settle(game, T0 + 89.9) == (game, [])
    assert view(game, ann, T0 + 89.9).can_play and not view(game, ann, T0 + 90.0).can_play
    after, events = settle(game, T0 + 90.0)
    played = events[0]
    assert isinstance(played, ev.TablePlayed) and (played.player, played.seconds) == (ann, 90)
    assert events[1] == ev.Called(ann, played.count, 0, 1, False)
    assert count(game.hands[0] & ~after.hands[0]) == played.count
    assert after.awaited == game.ids[1] and after.deadline == T0 + 180.0
    seats = view(after, None, T0 + 90).seats
    assert seats[0].ran_out and not seats[1].ran_out


def test_r20_the_table_plays_every_card_of_the_rank_the_hand_holds_open_to_liar() -> None:
    game = clocked("A♠ A♥ 7♦ R♣", "3♠", "5♠")
    after, events = settle(game, T0 + 90)
    assert events == [ev.TablePlayed(1, 90, 2, 0), ev.Called(1, 2, 0, 1, False)]
    assert after.hands[0] == cards("7♦ R♣")
    challenge = apply(after, Shout(3, 1), T0 + 91)[1][0]
    assert isinstance(challenge, ev.Challenged) and not challenge.lie


def test_r20_without_the_rank_the_table_plays_the_one_card_needed_last() -> None:
    game = clocked("3♠ 9♦ R♣", "2♠", "5♠")  # under A, a king comes up last
    after, events = settle(game, T0 + 90)
    assert events[0] == ev.TablePlayed(1, 90, 1, 0)
    assert after.hands[0] == cards("3♠ 9♦")
    challenge = apply(after, Shout(2, 1), T0 + 95)[1][0]
    assert isinstance(challenge, ev.Challenged) and challenge.lie
    assert challenge.cards == cards("R♣") and challenge.loser == 1


def test_r20_the_table_never_bluffs_a_final_play_unless_one_card_is_all_there_is() -> None:
    two = settle(clocked("2♠ 3♠", "4♠", "5♠"), T0 + 90)[0]
    assert two.phase is Phase.PLAY and two.hands[0] == cards("2♠")
    true, events = settle(clocked("A♠ A♥", "4♠", "5♠"), T0 + 90)
    assert true.phase is Phase.DECIDE and isinstance(events[-1], ev.FinalPlay)
    assert true.last is not None and not is_lie(true.last.cards, true.last.rank)
    forced, events = settle(clocked("2♠", "4♠", "5♠"), T0 + 90)
    assert forced.phase is Phase.DECIDE and forced.last is not None
    assert is_lie(forced.last.cards, forced.last.rank), "a play is due, and no pass exists (R6)"


def test_r20_the_second_run_out_in_a_row_forfeits_and_says_why() -> None:
    game = clocked("2♠ 3♠ 4♠", "5♠ 6♠", "7♠ 8♠", rank="8")
    game, _ = settle(game, T0 + 90)  # Ann's first: the table plays
    game, _ = apply(game, Play(2, cards("5♠")), T0 + 95)
    game, _ = apply(game, Play(3, cards("7♠")), T0 + 100)
    assert game.awaited == 1 and game.deadline == T0 + 190
    assert settle(game, T0 + 189.999) == (game, [])
    out, events = settle(game, T0 + 190)
    assert events == [ev.Forfeited(1, clock=True), ev.TurnPassed(2)]
    assert ev.Forfeited(1, clock=True) != ev.Forfeited(1), "told apart from a /forfeit"
    assert out.awaited == 2 and RANKS[out.rank] == "V" and out.deadline == T0 + 280


def test_r20_a_play_of_their_own_ends_the_run_of_run_outs() -> None:
    game = clocked("2♠ 3♠ 4♠", "5♠ 6♠ 9♥", "7♠ 8♠", rank="8")
    game, _ = settle(game, T0 + 90)  # Ann's first run-out
    game, _ = apply(game, Play(2, cards("5♠")), T0 + 91)
    game, _ = apply(game, Play(3, cards("7♠")), T0 + 92)
    game, _ = apply(game, Play(1, cards("3♠")), T0 + 93)  # Ann plays herself
    assert not view(game, None, T0 + 93).seats[0].ran_out
    game, _ = apply(game, Play(2, cards("6♠")), T0 + 94)
    game, _ = apply(game, Play(3, cards("8♠")), T0 + 95)
    after, events = settle(game, T0 + 185)  # runs out again, but not twice in a row
    assert isinstance(events[0], ev.TablePlayed) and after.in_game(0)


def test_r20_computer_players_have_no_clock() -> None:
    game = clocked("A♠ 2♠", "3♠ 4♠", robots=(0,))  # Robot -1 plays first, then Bob
    assert game.awaited == -1 and game.deadline is None
    assert settle(game, T0 + 10**6) == (game, [])
    after, _ = apply(game, Play(-1, cards("A♠")), T0 + 4)
    assert after.awaited == 2 and after.deadline == T0 + 94


def test_r20_with_the_clock_off_a_person_has_all_the_time_there_is() -> None:
    game = apply(lobby(3, clock=0), Start(1, 7), T0)[0]
    assert game.clock == 0 and view(game, None, T0).deadline is None, "no time is shown"
    later, events = settle(game, T0 + 10**6)
    assert events == [] and later.awaited == game.awaited and later.hands == game.hands
    assert later.updated == game.updated and view(later, game.awaited, T0 + 10**6).can_play


def test_r20_a_play_in_the_last_millisecond_and_the_tables_play_cannot_both_happen() -> None:
    game = clocked("A♠ 2♠", "3♠ 4♠", "5♠")
    turns = view(game, 1, T0).turns
    early, events = apply(game, Play(1, cards("2♠"), turns), T0 + 89.999)
    assert events == [ev.Called(1, 1, 0, 1, False)]
    assert settle(early, T0 + 90) == (early, []), "Bob's own 90 seconds began with his turn"
    # At 90.0 the table has played first: the same press is stale, a command not her turn.
    assert refused(game, Play(1, cards("2♠"), turns), T0 + 90).code is Code.STALE
    assert refused(game, Play(1, cards("2♠")), T0 + 90).code is Code.NOT_YOUR_TURN
    table_played, events = settle(game, T0 + 90)
    assert events[0] == ev.TablePlayed(1, 90, 1, 0) and table_played.plays == 1


def test_r20_the_clock_starts_at_each_new_turn_and_runs_on_through_other_moves() -> None:
    game = clocked("A♠ 2♠", "3♠ 4♠", "5♠ 6♠", "7♠")
    game, _ = apply(game, Play(1, cards("2♠")), T0 + 10)  # Ann lies; Bob's clock starts
    assert game.deadline == T0 + 100
    game, _ = apply(game, VoteEnd(3), T0 + 20)
    game, _ = apply(game, Forfeit(4), T0 + 30)
    assert game.deadline == T0 + 100, "another player's vote or forfeit leaves it running"
    game, _ = apply(game, Shout(2, 1), T0 + 40)  # Bob catches her and plays again, on A
    assert game.awaited == 2 and game.deadline == T0 + 130


def test_r20_the_45_second_decision_is_unchanged_whatever_the_clock() -> None:
    for clock in CLOCK_CHOICES:
        game = final_play(clock)
        assert game.phase is Phase.DECIDE and game.deadline == T0 + DECISION_SECONDS
        over, events = settle(game, T0 + DECISION_SECONDS)
        assert events[0] == ev.LetStand(1, None) and over.winner == 0


def test_r20_once_an_act_settled_the_game_neither_its_move_nor_the_views_settle_it_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    game = lobby(4)
    game, _ = apply(game, Start(1, 3), T0)
    game, _ = apply(game, Forfeit(game.ids[2]), T0)  # a seat out: settling looks at it
    settled: list[float] = []
    real = engine.game.settle

    def counted(g: Game, now: float) -> tuple[Game, list[ev.Event]]:
        settled.append(now)
        return real(g, now)

    monkeypatch.setattr(engine.game, "settle", counted)
    game, _ = engine.game.settle(game, T0 + 1)  # what an act does first
    assert game.awaited is not None and game.turn is not None
    one = next(c for c in range(52) if game.hands[game.turn] >> c & 1)
    game, _ = apply(game, Play(game.awaited, 1 << one, game.turns), T0 + 1)
    for player in (None, *game.ids):
        view(game, player, T0 + 1)
    assert settled == [T0 + 1]


def test_r20_a_game_with_no_person_left_stops_at_once() -> None:
    game = clocked("A♠ 2♠", "3♠", "5♠", robots=(1, 2))  # Ann and two computer players
    over, events = apply(game, Forfeit(1), T0 + 1)
    assert events == [ev.Forfeited(1), ev.Stopped(None, StopReason.NO_PERSON)]
    assert over.stopped and over.ranking() == () and over.awaited is None


def test_r20_when_one_computer_player_is_left_r19_makes_it_the_winner() -> None:
    game = clocked("A♠ 2♠", "3♠", robots=(1,))
    _, events = apply(game, Forfeit(1), T0)
    assert events == [ev.Forfeited(1), ev.Won(-2, (-2, 1))]


def test_r20_the_clock_forfeits_the_last_person_and_the_game_stops() -> None:
    game = clocked("2♠ 3♠ 4♠", "5♠ 6♠", "7♠ 8♠", robots=(1, 2), rank="8")
    game, _ = settle(game, T0 + 90)
    game, _ = apply(game, Play(-2, cards("5♠")), T0 + 94)
    game, _ = apply(game, Play(-3, cards("7♠")), T0 + 98)
    _, events = settle(game, T0 + 188)
    assert events == [ev.Forfeited(1, clock=True), ev.Stopped(None, StopReason.NO_PERSON)]


def test_r20_settling_stops_a_stored_game_left_to_computer_players() -> None:
    # A game stored before R20, in which the person forfeited and the computers played on.
    game = table("", "3♠ 4♠", "5♠ 6♠", turn=1, rest_to=1)
    game = dataclasses.replace(game, ids=(1, -2, -3), out=[0])
    over, events = settle(game, T0)
    assert events == [ev.Stopped(None, StopReason.NO_PERSON)] and over.stopped
    assert refused(game, Play(-2, cards("3♠")), T0).code is Code.GAME_OVER


def test_r20_a_late_settle_starts_the_next_clock_at_the_deadline_not_when_noticed() -> None:
    game = clocked("A♠ 2♠ 3♠", "4♠ 5♠ 6♠", clock=30)  # two people, nobody plays
    late, events = settle(game, T0 + 50)
    assert late.awaited == 2 and late.deadline == T0 + 60, "Bob's clock started at T0 + 30"
    assert late.updated == T0 + 30 and events[0] == ev.TablePlayed(1, 30, 1, 0)
    step, _ = settle(game, T0 + 30)
    assert settle(step, T0 + 50) == (step, []) and late == step


def test_r20_deadlines_passed_meanwhile_are_decided_one_after_the_other_in_one_call() -> None:
    game = clocked("A♠ 2♠ 3♠", "4♠", "5♠ 6♠", clock=30)  # Bob's table play will be final
    stepwise: list[ev.Event] = []
    step = game
    for at in (30, 60, 60 + DECISION_SECONDS):
        step, events = settle(step, T0 + at)
        stepwise += events
    late, events = settle(game, T0 + 10**4)  # the timer was down all along
    assert (late, events) == (step, stepwise)
    # Ann's run-out at 30; Bob's at 60, his last card: Chloé's 45 seconds start at 60.
    assert ev.FinalPlay(2, 3, T0 + 60 + DECISION_SECONDS, 2) in events
    assert events[-2:] == [ev.LetStand(2, None), ev.Won(2, (2, 1, 3))]
    assert late.updated == T0 + 60 + DECISION_SECONDS


def test_r20_can_agrees_with_apply_on_a_game_the_clock_has_overtaken() -> None:
    game = clocked("A♠ 2♠", "3♠ 4♠", "5♠ 6♠", clock=30)  # stored; its 30 s are over
    now = T0 + 31  # the table played for Ann at 30: Bob is awaited, Chloé may shout
    moves: list[Move] = [Play(2, cards("3♠")), Play(1, cards("A♠")), Shout(3, 1), Shout(2, 1)]
    moves.append(VoteEnd(2))
    for move in moves:
        try:
            apply(game, move, now)
            accepted = True
        except MenteurError:
            accepted = False
        assert can(game, move, now) is accepted, move
    assert can(game, Play(2, cards("3♠")), now) and can(game, Shout(3, 1), now)
    stale = view(game, 1, now)  # drawn from the stored game: it offers nothing refused
    assert not stale.can_play and not stale.can_shout and not stale.shout_open
    seen = view(settle(game, now)[0], 2, now)
    assert seen.can_play and seen.shout_open and seen.plays == 1 and seen.awaited == 2


def test_r18_the_tables_play_for_an_absent_person_is_nobody_acting() -> None:
    day = 24 * 3600.0
    game = clocked("A♠ 2♠ 3♠", "4♠ 5♠ 6♠", robots=(1,), clock=30)  # Ann's turn began at T0
    played, _ = settle(game, T0 + 30)  # Ann is absent: the table plays for her
    assert played.updated == T0 + 30 and played.acted == T0
    assert refused(played, Expire(day), T0 + day - 1).code is Code.NOT_YET_DUE
    _, events = apply(played, Expire(day), T0 + day)
    assert events[-1] == ev.Stopped(None, StopReason.IDLE)
    moved, _ = apply(played, Play(-2, cards("4♠")), T0 + 34)  # a computer player acts
    assert moved.acted == T0 + 34


def test_r20_a_game_of_computer_players_alone_does_not_start() -> None:
    robots = open_table(1, T0)
    for robot in (-1, -2):
        robots, _ = apply(robots, Join(robot, f"Robot {-robot}"), T0)
    assert refused(robots, Start(1, 0)).code is Code.NO_PERSON_SEATED


# --- R18: the people vote to end ------------------------------------------------------------------


def test_r18_a_game_ends_once_every_person_still_in_it_votes_the_awaited_one_included() -> None:
    game = clocked("A♠ 2♠", "3♠ 4♠", "5♠ 6♠", "7♠", robots=(3,))  # Driss: a computer player
    seen = view(game, 2, T0)
    assert (seen.votes, seen.votes_needed, seen.can_vote) == (0, 3, True)
    game, events = apply(game, VoteEnd(2), T0)
    assert events == [ev.Voted(2, 1, 3)]
    seen = view(game, 2, T0)
    assert (seen.votes, seen.votes_needed) == (1, 3) and not seen.can_vote
    seat = seen.seat(2)
    assert seat is not None and seat.voted
    assert refused(game, VoteEnd(2)).code is Code.ALREADY_VOTED
    game, events = apply(game, VoteEnd(3), T0)
    assert events == [ev.Voted(3, 2, 3)] and game.phase is Phase.PLAY, "Ann, awaited, counts"
    over, events = apply(game, VoteEnd(1), T0 + 1)
    assert events == [ev.Voted(1, 3, 3), ev.Stopped(None, StopReason.VOTE)]
    assert over.stopped and over.ranking() == ()


def test_r18_in_a_two_person_game_nobody_ends_it_alone_while_the_other_is_playing() -> None:
    for clock in CLOCK_CHOICES:
        game = clocked("A♠ 2♠", "3♠ 4♠", clock=clock)  # Ann is awaited, Bob about to win
        for voter in (1, 2):
            alone, events = apply(game, VoteEnd(voter), T0 + 5)
            assert events == [ev.Voted(voter, 1, 2)] and alone.phase is Phase.PLAY


def test_r18_with_a_clock_the_table_plays_at_the_deadline_and_the_awaited_person_counts() -> None:
    game, _ = apply(clocked("A♠ 2♠", "3♠ 4♠", "5♠", clock=30), VoteEnd(2), T0 + 1)
    game, _ = apply(game, VoteEnd(3), T0 + 2)
    game, events = settle(game, T0 + 30)  # the table plays for Ann: Bob is awaited
    assert isinstance(events[0], ev.TablePlayed) and game.phase is Phase.PLAY
    assert (view(game, 1, T0 + 30).votes, view(game, 1, T0 + 30).votes_needed) == (2, 3)


def test_r18_with_the_clock_off_the_awaited_persons_vote_is_needed_for_90_seconds() -> None:
    pair, _ = apply(clocked("A♠ 2♠", "3♠ 4♠", clock=0), VoteEnd(2), T0 + 10)
    assert settle(pair, T0 + UNTIMED_TURN - 0.001) == (pair, [])
    over, events = settle(pair, T0 + UNTIMED_TURN)  # decided by the timer, at that instant
    assert events == [ev.Stopped(None, StopReason.VOTE)] and over.updated == T0 + UNTIMED_TURN
    assert settle(pair, T0 + 10**5) == (over, events), "however late it is noticed"
    # Not everyone else has voted: the game goes on, and the vote needs one fewer.
    trio, _ = apply(clocked("A♠ 2♠", "3♠ 4♠", "5♠", clock=0), VoteEnd(2), T0 + 10)
    assert (view(trio, 3, T0 + 89).votes, view(trio, 3, T0 + 89).votes_needed) == (1, 3)
    waited = settle(trio, T0 + 90)[0]
    assert (view(waited, 3, T0 + 90).votes, view(waited, 3, T0 + 90).votes_needed) == (1, 2)
    _, events = apply(trio, VoteEnd(3), T0 + 95)
    assert events == [ev.Voted(3, 2, 2), ev.Stopped(None, StopReason.VOTE)]


def test_r18_only_the_people_still_in_a_running_game_vote() -> None:
    game = clocked("A♠ 2♠", "3♠ 4♠", "5♠ 6♠", "7♠", robots=(3,))
    assert refused(lobby(3), VoteEnd(2)).code is Code.GAME_NOT_RUNNING
    assert refused(game, VoteEnd(-4)).code is Code.NOT_ALLOWED
    assert not view(game, -4, T0).can_vote
    assert refused(game, VoteEnd(99)).code is Code.NOT_A_PLAYER
    gone, _ = apply(game, Forfeit(3), T0)
    assert refused(gone, VoteEnd(3)).code is Code.NOT_A_PLAYER
    over, _ = apply(game, Stop(1), T0)
    assert refused(over, VoteEnd(2)).code is Code.GAME_OVER


def test_r18_a_forfeit_can_complete_the_votes_and_a_new_awaited_person_counts_again() -> None:
    game = clocked("A♠ 2♠", "3♠ 4♠", "5♠ 6♠", "7♠")
    for voter in (1, 2, 3):
        game, _ = apply(game, VoteEnd(voter), T0)
    _, events = apply(game, Forfeit(4), T0)
    assert events == [ev.Forfeited(4), ev.Stopped(None, StopReason.VOTE)]
    # Bob voted; Ann's 90 seconds passed without a play (the clock is off): her vote is no
    # longer needed, but once she plays, Chloé is awaited and counts, as Ann does again.
    trio, _ = apply(clocked("A♠ 2♠", "3♠ 4♠", "5♠", clock=0), VoteEnd(2), T0)
    _, events = apply(trio, Play(1, cards("A♠")), T0 + 100)
    assert events == [ev.Called(1, 1, 0, 1, False)]


def test_r18_a_person_alone_with_computer_players_ends_the_game_by_voting() -> None:
    game = clocked("A♠ 2♠", "3♠", robots=(1,))  # Ann alone with a computer player
    assert view(game, 1, T0).votes_needed == 1
    over, events = apply(game, VoteEnd(1), T0)
    assert events == [ev.Voted(1, 1, 1), ev.Stopped(None, StopReason.VOTE)]
    # The end is a new turn (R6, R10): a button drawn before it names an older one.
    assert over.turns == game.turns + 1


# --- R16: the reveal at the end ---------------------------------------------------------------


def test_r16_the_reveal_tells_what_each_player_did_once_the_game_is_over() -> None:
    game = table("A♠ 2♠ 9♣", "3♠ 4♠ 9♥", "5♠ 6♠", "7♠", rank="8")
    game, _ = apply(game, Play(1, cards("9♣")), T0)  # Ann lies under 8: nobody shouts
    game, _ = apply(game, Play(2, cards("9♥ 3♠")), T0)  # Bob lies under 9...
    game, _ = apply(game, Shout(4, 2), T0)  # ...Driss is right: Bob picks up 3
    game, _ = apply(game, Play(4, cards("9♠ 9♦")), T0)  # Driss tells the truth under 9...
    game, _ = apply(game, Shout(1, 3), T0)  # ...Ann is wrong: she picks up 2, bullet spent
    assert view(game, None, T0).stats == () and view(game, 1, T0).boldest is None, "hidden"
    over, _ = apply(game, Stop(1), T0)
    assert view(over, None, T0).stats == (
        SeatStats(1, plays=1, lies=1, caught=0, shouts=1, right=0, picked_up=2),
        SeatStats(2, plays=1, lies=1, caught=1, shouts=0, right=0, picked_up=3),
        SeatStats(3, plays=0, lies=0, caught=0, shouts=0, right=0, picked_up=0),
        SeatStats(4, plays=1, lies=0, caught=0, shouts=1, right=1, picked_up=0),
    )
    assert view(over, 2, T0).boldest == Bluff(1, 1, RANKS.index("8"))


def test_r16_the_boldest_bluff_is_the_biggest_lie_that_stood_the_earliest_on_a_tie() -> None:
    game = table("2♠ 3♠ 4♠ 5♠", "7♠ 8♠ 9♠ 10♠", "V♠ D♠ R♠", rest_to=1)
    game, _ = apply(game, Play(1, cards("2♠ 3♠")), T0)  # 2 cards under A: a lie
    assert boldest_bluff(game) is None, "it may still be challenged"
    game, _ = apply(game, Play(2, cards("7♠ 8♠")), T0)  # Ann's stood; Bob lies with 2 under 2
    assert boldest_bluff(game) == (0, 2, 0)
    game, _ = apply(game, Play(3, cards("V♠ D♠ R♠")), T0)  # Chloé's final play: 3 under 3
    assert boldest_bluff(game) == (0, 2, 0), "Bob's ties with Ann's: the earliest stays"
    won, _ = apply(game, LetItStand(1, 3), T0)  # her bluff stands, and wins
    assert view(won, None, T0).boldest == Bluff(3, 3, RANKS.index("3"))


def test_r16_a_forfeiters_pick_up_set_aside_is_not_counted_as_picked_up() -> None:
    game = table("A♠ 2♠", "3♠ 4♠", "5♠ 6♠")
    game, _ = apply(game, Play(1, cards("2♠")), T0)  # a lie
    game, _ = apply(game, Forfeit(1), T0)
    game, _ = apply(game, Shout(3, 1), T0)  # caught: the pile is set aside with her hand
    over, _ = apply(game, Stop(1), T0)
    ann = view(over, None, T0).stats[0]
    assert (ann.caught, ann.picked_up) == (1, 0)
