"""One or more tests per rule of RULES.md, named after its number."""

from __future__ import annotations

import dataclasses

import pytest

from engine import (
    BULLETS,
    CLOCK_DEFAULT,
    DECISION_SECONDS,
    Code,
    Expire,
    Forfeit,
    Game,
    IllegalMove,
    InvalidMove,
    Join,
    Leave,
    LetItStand,
    Phase,
    Play,
    Shout,
    Start,
    Stop,
    StopReason,
    apply,
    can,
    card_name,
    cards_in,
    count,
    open_table,
    parse_card,
    settle,
    verify,
    view,
)
from engine import events as ev
from engine.cards import FULL_DECK, RANKS, SUITS, is_lie
from infra.harness import T0
from tests.support.games import cards, refused, table


def lobby(players: int, now: float = T0, clock: int = CLOCK_DEFAULT) -> Game:
    game = open_table(1, now, "P1", clock)
    for p in range(2, players + 1):
        game, _ = apply(game, Join(p, f"P{p}"), now)
    return game


def started(players: int, seed: int = 7, clock: int = CLOCK_DEFAULT) -> Game:
    return apply(lobby(players, clock=clock), Start(1, seed), T0)[0]


# --- Table and cards -------------------------------------------------------------------------


def test_r1_a_game_starts_with_two_to_eight_players() -> None:
    assert refused(lobby(1), Start(1, 0)).code is Code.NOT_ENOUGH_PLAYERS
    assert apply(lobby(2), Start(1, 0), T0)[0].phase is Phase.PLAY
    eight = lobby(8)
    assert apply(eight, Start(1, 0), T0)[0].phase is Phase.PLAY
    assert refused(eight, Join(9, "P9")).code is Code.TABLE_FULL


def test_a_game_of_computer_players_alone_does_not_start() -> None:
    """Negative ids are computer players (moves.Join): at least one person must be seated."""
    robots = open_table(1, T0)  # the opener stays standing
    for robot in (-1, -2, -3):
        robots, _ = apply(robots, Join(robot, f"Robot {-robot}"), T0)
    assert refused(robots, Start(1, 0)).code is Code.NO_PERSON_SEATED
    with_one, _ = apply(robots, Join(5, "Ann"), T0)
    assert apply(with_one, Start(1, 0), T0)[0].phase is Phase.PLAY
    assert refused(lobby(1), Start(1, 0)).code is Code.NOT_ENOUGH_PLAYERS, "counted first"


def test_r1_seats_are_shuffled_once_at_start_and_the_same_seed_seats_the_same() -> None:
    orders = {started(6, seed).ids for seed in range(20)}
    assert len(orders) > 1, "the seat order must depend on the shuffle"
    assert started(6, 3).ids == started(6, 3).ids
    assert sorted(started(6, 3).ids) == [1, 2, 3, 4, 5, 6]


def test_r1_seat_order_is_the_turn_order() -> None:
    game = started(4, seed=11)
    seen = []
    for _ in range(8):
        player = game.awaited
        assert player is not None and game.turn is not None
        seen.append(player)
        one_card = next(cards_in(game.hands[game.turn]))
        game, _ = apply(game, Play(player, 1 << one_card), T0)
    assert seen == list(game.ids) * 2


def test_r2_one_deck_of_52_cards_in_13_ranks_and_4_suits() -> None:
    assert RANKS == ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "V", "D", "R")
    assert len(SUITS) == 4
    game = started(3)
    dealt = 0
    for hand in game.hands:
        assert not dealt & hand
        dealt |= hand
    assert dealt == FULL_DECK
    names = {card_name(c) for c in range(52)}
    assert len(names) == 52 and "10♠" in names and "R♣" in names
    assert all(parse_card(card_name(c)) == c for c in range(52))


@pytest.mark.parametrize("players", range(2, 9))
def test_r3_the_whole_deck_is_dealt_one_at_a_time_from_the_first_seat(players: int) -> None:
    sizes = [count(h) for h in started(players).hands]
    assert sum(sizes) == 52
    base, extra = divmod(52, players)
    assert sizes == [base + 1] * extra + [base] * (players - extra)


def test_r3_the_deal_depends_on_the_seed_only() -> None:
    assert started(5, 42).hands == started(5, 42).hands
    assert started(5, 42).hands != started(5, 43).hands


def test_r4_each_player_starts_with_three_bullets() -> None:
    assert started(5).bullets == [BULLETS] * 5 == [3] * 5


def test_r5_the_first_seat_plays_first_on_ace_with_an_empty_pile() -> None:
    game = started(4)
    assert game.awaited == game.ids[0]
    assert RANKS[game.rank] == "A"
    assert game.pile == 0
    assert view(game, None, T0).pile == 0


# --- A turn ----------------------------------------------------------------------------------


def test_r6_a_play_is_one_to_four_cards_from_the_players_own_hand() -> None:
    game = table("A♠ A♥ A♦ A♣ 2♠", "3♠")
    assert refused(game, Play(1, 0)).code is Code.BAD_CARDS
    assert refused(game, Play(1, cards("A♠ A♥ A♦ A♣ 2♠"))).code is Code.CARD_COUNT
    assert refused(game, Play(1, cards("3♠"))).code is Code.CARDS_NOT_IN_HAND
    assert refused(game, Play(1, 1 << 60)).code is Code.BAD_CARDS
    for n, played in enumerate(["A♠", "A♠ A♥", "A♠ A♥ A♦", "A♠ A♥ A♦ A♣"], start=1):
        after, events = apply(game, Play(1, cards(played)), T0)
        assert events[0] == ev.Called(1, n, 0, 1, False)
        assert count(after.hands[0]) == 5 - n


def test_r6_only_the_player_whose_turn_it_is_plays_and_nobody_else_sees_the_cards() -> None:
    game = table("A♠ 2♠", "3♠ 4♠", "5♠")
    error = refused(game, Play(2, cards("3♠")))
    assert error.code is Code.NOT_YOUR_TURN and error.player == 1
    game, events = apply(game, Play(1, cards("2♠")), T0)
    called = events[0]
    assert isinstance(called, ev.Called) and not hasattr(called, "cards")
    for viewer in (2, 3, None):
        seen = view(game, viewer, T0)
        assert seen.last is not None and seen.last.count == 1 and RANKS[seen.last.rank] == "A"
        assert not seen.hand & cards("2♠")


def test_r6_there_is_no_pass_a_player_must_play() -> None:
    # The only moves that move the turn on are a play or a forfeit: no pass exists.
    game = table("A♠ 2♠", "3♠")
    assert view(game, 1, T0).can_play
    assert refused(game, Shout(1, 0)).code is Code.NOTHING_TO_CHALLENGE


def test_r7_the_expected_rank_cycles_from_ace_to_king_and_back() -> None:
    game = started(2, seed=5)
    seen = []
    for _ in range(14):
        seen.append(RANKS[game.rank])
        assert game.turn is not None
        one = next(cards_in(game.hands[game.turn]))
        game, _ = apply(game, Play(game.ids[game.turn], 1 << one), T0)
    assert seen == [*RANKS, "A"]


def test_r7_after_a_challenge_the_expected_rank_does_not_move() -> None:
    game = table("A♠ 2♠", "3♠ 4♠", "5♠", rank="6")
    game, _ = apply(game, Play(1, cards("2♠")), T0)
    assert RANKS[game.rank] == "7"
    game, _ = apply(game, Shout(3, 1), T0)
    assert RANKS[game.rank] == "6"


def test_r8_one_card_off_rank_makes_a_lie() -> None:
    king = RANKS.index("R")
    assert is_lie(cards("R♠ R♥ R♦ D♣"), king)  # three kings and a queen under 4 × R
    assert not is_lie(cards("R♠ R♥ R♦ R♣"), king)
    assert not is_lie(cards("R♠"), king)
    assert is_lie(cards("A♠"), king)


def test_r8_a_lie_is_punished_only_if_challenged() -> None:
    game = table("2♠ 3♠", "4♠ 5♠", "6♠")
    game, _ = apply(game, Play(1, cards("2♠")), T0)  # a lie: called A
    game, _ = apply(game, Play(2, cards("4♠")), T0)  # the lie is now safe
    assert count(game.hands[0]) == 1 and count(game.pile) == 2
    assert refused(game, Shout(3, 1)).code is Code.NEXT_PLAYER_PLAYED


def test_r9_the_turn_passes_to_the_next_seat_still_in_the_game() -> None:
    game = table("A♠ 2♠", "3♠ 4♠", "5♠ 6♠", "7♠")
    game, _ = apply(game, Play(1, cards("A♠")), T0)
    assert game.awaited == 2
    game, _ = apply(game, Forfeit(3), T0)
    game, _ = apply(game, Play(2, cards("3♠")), T0)
    assert game.awaited == 4
    game, _ = apply(game, Play(4, cards("7♠")), T0)
    assert game.awaited == 1


# --- Liar! -------------------------------------------------------------------------------------


def test_r10_any_other_player_may_shout_even_out_of_turn_and_it_costs_a_bullet() -> None:
    game = table("A♠ 2♠", "3♠ 4♠", "5♠ 6♠")
    game, _ = apply(game, Play(1, cards("A♠")), T0)  # true
    after, events = apply(game, Shout(3, 1), T0)  # not player 3's turn
    assert isinstance(events[0], ev.Challenged) and events[0].accuser == 3
    assert after.bullets == [3, 3, 2]


def test_r10_a_player_cannot_shout_at_their_own_play() -> None:
    game, _ = apply(table("A♠ 2♠", "3♠"), Play(1, cards("A♠")), T0)
    assert refused(game, Shout(1, 1)).code is Code.OWN_PLAY


def test_r10_a_player_without_bullets_cannot_shout() -> None:
    game, _ = apply(table("A♠ 2♠", "3♠"), Play(1, cards("2♠")), T0)
    game = dataclasses.replace(game, bullets=[3, 0])
    assert refused(game, Shout(2, 1)).code is Code.NO_BULLETS
    assert not view(game, 2, T0).can_shout


def test_r10_no_shout_once_the_next_player_has_played() -> None:
    game = table("A♠ 2♠", "3♠ 4♠", "5♠")
    game, _ = apply(game, Play(1, cards("2♠")), T0)
    game, _ = apply(game, Play(2, cards("3♠")), T0)
    assert refused(game, Shout(3, 1)).code is Code.NEXT_PLAYER_PLAYED
    # Only the most recent play can be targeted: play 2 is open.
    assert apply(game, Shout(3, 2), T0)[1]


def test_r10_only_the_first_shout_counts_and_a_later_one_costs_nothing() -> None:
    game = table("A♠ 2♠", "3♠ 4♠", "5♠ 6♠", "7♠")
    game, _ = apply(game, Play(1, cards("2♠")), T0)
    game, _ = apply(game, Shout(3, 1), T0)
    error = refused(game, Shout(4, 1))
    assert error.code is Code.ALREADY_CHALLENGED and error.player == 3
    assert game.bullets[3] == 3


def test_r11_a_lie_exposed_the_liar_picks_up_and_the_accuser_gets_the_bullet_back() -> None:
    game = table("A♠ 2♠ 9♠", "3♠ 4♠ 9♥", "5♠ 6♠", "7♠", rank="8")
    game, _ = apply(game, Play(1, cards("9♠")), T0)  # true 8? no: a lie
    game, _ = apply(game, Play(2, cards("9♥ 3♠")), T0)  # a lie on 9? 9♥ yes, 3♠ no
    game, events = apply(game, Shout(4, 2), T0)
    challenge = events[0]
    assert isinstance(challenge, ev.Challenged)
    assert challenge.lie and challenge.loser == 2 and challenge.picked_up == 3
    assert challenge.cards == cards("9♥ 3♠"), "only the most recent play is turned over"
    assert challenge.next_player == 4
    assert game.bullets[3] == 3, "the accuser's bullet is given back"
    assert game.hands[1] == cards("9♠ 9♥ 3♠ 4♠")
    assert game.pile == 0 and game.awaited == 4 and RANKS[game.rank] == "9"


def test_r11_a_true_play_challenged_the_accuser_picks_up_and_the_bullet_stays_spent() -> None:
    game = table("A♠ 2♠", "3♠ 4♠", "5♠ 6♠", rank="3")
    game, _ = apply(game, Play(1, cards("2♠")), T0)  # a lie on 3, unchallenged
    game, _ = apply(game, Play(2, cards("4♠")), T0)  # true on 4
    game, events = apply(game, Shout(3, 2), T0)
    challenge = events[0]
    assert isinstance(challenge, ev.Challenged)
    assert not challenge.lie and challenge.loser == 3 and challenge.picked_up == 2
    assert challenge.next_player == 2, "the winner plays next"
    assert game.bullets[2] == 2
    assert game.hands[2] & cards("2♠ 4♠") == cards("2♠ 4♠")
    assert game.pile == 0 and game.awaited == 2 and RANKS[game.rank] == "4"


def test_r12_picking_up_takes_the_whole_pile_and_is_the_only_way_to_get_cards() -> None:
    game = table("A♠ 2♠ 3♠", "4♠ 5♠", "6♠ 7♠", rank="A")
    sizes = [count(h) for h in game.hands]
    game, _ = apply(game, Play(1, cards("A♠")), T0)
    game, _ = apply(game, Play(2, cards("4♠")), T0)
    game, _ = apply(game, Play(3, cards("6♠")), T0)
    assert [count(h) for h in game.hands] == [s - 1 for s in sizes], "plays never add cards"
    pile = game.pile
    game, _ = apply(game, Shout(1, 3), T0)  # 6♠ under 3: a lie, player 3 picks up all three
    assert game.hands[2] & pile == pile and game.pile == 0
    assert count(game.hands[2]) == sizes[2] + 2


# --- The end ------------------------------------------------------------------------------------


def final_play(decider_bullets: int = 3, rank: str = "5", truth: bool = True) -> Game:
    """Ann (1) empties her hand under 5; Bob (2) decides; Chloé (3) and Driss (4) watch."""
    ann = "5♠ 5♥" if truth else "5♠ 9♥"
    game = table(ann, "3♠ 4♠", "6♠ 7♠", "8♠", rank=rank)
    game = dataclasses.replace(game, bullets=[3, decider_bullets, 3, 3])
    return apply(game, Play(1, cards(ann)), T0)[0]


def test_r13_a_final_play_does_not_win_the_next_player_can_no_longer_play() -> None:
    game = final_play()
    assert game.phase is Phase.DECIDE and game.winner is None
    assert game.awaited == 2 and game.deadline == T0 + DECISION_SECONDS
    assert refused(game, Play(2, cards("3♠"))).code is Code.FINAL_PLAY_PENDING
    seen = view(game, 2, T0)
    assert seen.can_shout and seen.can_let_stand and not seen.can_play


def test_r13_another_player_shouts_first_at_a_lie_and_the_game_goes_on() -> None:
    game = final_play(truth=False)
    game, events = apply(game, Shout(3, 1), T0 + 10)
    assert isinstance(events[0], ev.Challenged) and events[0].lie
    assert not any(isinstance(e, ev.Won) for e in events)
    assert game.phase is Phase.PLAY and game.awaited == 3, "the accuser plays next"
    assert RANKS[game.rank] == "5", "on the same rank"
    assert game.hands[0] == cards("5♠ 9♥"), "the liar picked up"
    assert refused(game, LetItStand(2, 1)).code is Code.NO_DECISION_PENDING


def test_r13_the_decider_without_bullets_can_only_let_it_stand_while_others_may_shout() -> None:
    game = final_play(decider_bullets=0)
    assert refused(game, Shout(2, 1)).code is Code.NO_BULLETS
    seen = view(game, 2, T0)
    assert seen.can_let_stand and not seen.can_shout
    assert view(game, 3, T0).can_shout
    assert apply(game, LetItStand(2, 1), T0)[0].winner == 0


def test_r14_the_next_player_lets_it_stand_and_the_final_player_wins() -> None:
    game = final_play(truth=False)  # even a lie wins when nobody challenges it
    game, events = apply(game, LetItStand(2, 1), T0 + 5)
    assert events[0] == ev.LetStand(1, 2)
    assert isinstance(events[1], ev.Won) and events[1].winner == 1
    assert game.phase is Phase.OVER


def test_r14_only_the_next_player_can_let_it_stand() -> None:
    game = final_play()
    error = refused(game, LetItStand(3, 1))
    assert error.code is Code.NOT_DECIDER and error.player == 2
    assert refused(game, LetItStand(1, 1)).code is Code.NOT_DECIDER


def test_r14_a_challenge_that_shows_the_final_play_true_ends_the_game() -> None:
    game = final_play(truth=True)
    game, events = apply(game, Shout(4, 1), T0 + 3)
    challenge, won = events
    assert isinstance(challenge, ev.Challenged) and not challenge.lie
    assert challenge.loser == 4 and challenge.next_player is None
    assert isinstance(won, ev.Won) and won.winner == 1
    assert game.phase is Phase.OVER and game.bullets[3] == 2


def test_r14_after_45_seconds_the_table_lets_it_stand() -> None:
    game = final_play()
    deadline = T0 + DECISION_SECONDS
    assert settle(game, deadline - 0.001) == (game, []), "not yet due: nothing changes"
    over, events = settle(game, deadline)
    assert events[0] == ev.LetStand(1, None)
    assert isinstance(events[1], ev.Won) and events[1].winner == 1
    assert over.phase is Phase.OVER
    # However late the timer notices, the table let it stand at the deadline.
    assert settle(game, deadline + 30) == (over, events)
    assert settle(over, deadline + 31) == (over, []), "a second timer changes nothing"


def test_r14_a_shout_just_before_the_deadline_counts_and_just_after_is_refused() -> None:
    game = final_play(truth=False)
    deadline = T0 + DECISION_SECONDS
    assert apply(game, Shout(3, 1), deadline - 0.001)[0].phase is Phase.PLAY
    # At the deadline the table lets it stand before any move is judged: the game is over,
    # whether or not the caller settled it first.
    assert refused(game, Shout(3, 1), deadline).code is Code.GAME_OVER
    assert refused(game, LetItStand(2, 1), deadline).code is Code.GAME_OVER
    # The unsettled table, as a screen asks about it, already says the time is up.
    for move in (Shout(3, 1), LetItStand(2, 1)):
        with pytest.raises(IllegalMove) as late:
            verify(game, move, deadline)
        assert late.value.code is Code.DEADLINE_PASSED and not can(game, move, deadline)
    over, _ = settle(game, deadline + 1)
    assert refused(over, Shout(3, 1), deadline + 1).code is Code.GAME_OVER


def test_r14_a_timer_for_an_earlier_final_play_changes_nothing() -> None:
    game = final_play(truth=False)
    game, _ = apply(game, Shout(3, 1), T0 + 1)  # the lie is exposed, the game goes on
    later, events = settle(game, T0 + DECISION_SECONDS)  # when the final play's time was up
    assert not any(isinstance(e, ev.LetStand | ev.Won) for e in events)
    assert later.phase is Phase.PLAY and later.winner is None


def test_r15_the_final_ranking_is_winner_then_fewest_cards_then_seat_order() -> None:
    game = table("5♠", "3♠ 4♠", "6♠ 7♠", "8♠", rank="5", rest_to=1)
    # Pile the rest of the deck into Bob's hand, then even Chloé and Driss out.
    game = dataclasses.replace(game, hands=[cards("5♠"), game.hands[1], cards("6♠"), cards("8♠")])
    game = dataclasses.replace(
        game, aside=FULL_DECK & ~(game.hands[0] | game.hands[1] | cards("6♠ 8♠"))
    )
    game, _ = apply(game, Play(1, cards("5♠")), T0)
    game, events = apply(game, LetItStand(2, 1), T0)
    won = events[-1]
    assert isinstance(won, ev.Won)
    # Chloé (seat 3) and Driss (seat 4) hold one card each: the earlier seat ranks ahead.
    assert won.ranking == (1, 3, 4, 2)
    assert view(game, None, T0).ranking == won.ranking


def test_r16_a_game_earns_nothing_beyond_the_ranking() -> None:
    game = final_play()
    _, events = apply(game, LetItStand(2, 1), T0)
    won = events[-1]
    assert isinstance(won, ev.Won)
    assert won.__match_args__ == ("winner", "ranking")  # a record's fields, all of them
    kept = {f.name for f in dataclasses.fields(Game)}
    assert not kept & {"xp", "experience", "pearls", "score", "points", "leaderboard"}


# --- Outside the glossary ------------------------------------------------------------------------


def test_r17_a_table_opens_empty_or_with_its_opener_seated() -> None:
    empty = open_table(1, T0)
    assert empty.phase is Phase.LOBBY and empty.ids == () and empty.opener == 1
    assert open_table(1, T0, "Ann").ids == (1,)


def test_r17_players_join_and_leave_the_lobby_until_it_starts() -> None:
    game = open_table(1, T0, "Ann")
    assert game.phase is Phase.LOBBY and game.ids == (1,)
    game, events = apply(game, Join(2, "Bob"), T0)
    assert events == [ev.Joined(2, "Bob")]
    assert refused(game, Join(2, "Bob")).code is Code.ALREADY_JOINED
    game, _ = apply(game, Join(3, "Chloé"), T0)
    game, _ = apply(game, Leave(2), T0)
    assert game.ids == (1, 3) and game.names == ("Ann", "Chloé")
    assert refused(game, Leave(2)).code is Code.NOT_A_PLAYER
    assert refused(game, Start(4, 1)).code is Code.NOT_A_PLAYER
    game, _ = apply(game, Start(3, 1), T0)
    assert refused(game, Join(4, "Driss")).code is Code.ALREADY_STARTED
    assert refused(game, Leave(1)).code is Code.ALREADY_STARTED
    assert refused(game, Start(1, 2)).code is Code.ALREADY_STARTED


def test_r17_names_must_be_given_and_short() -> None:
    game = open_table(1, T0, "Ann")
    assert isinstance(refused(game, Join(2, "")), InvalidMove)
    assert isinstance(refused(game, Join(2, "x" * 65)), InvalidMove)


def test_r18_the_opener_or_an_admin_can_stop_and_then_there_is_no_winner() -> None:
    game = started(3)
    assert refused(game, Stop(2)).code is Code.NOT_ALLOWED
    for stopper in (Stop(1), Stop(2, admin=True)):
        over, events = apply(game, stopper, T0)
        assert events == [ev.Stopped(stopper.player)]
        assert over.stopped and over.winner is None and over.ranking() == ()
        assert refused(over, Shout(3, 0)).code is Code.GAME_OVER
    assert apply(lobby(2), Stop(1), T0)[0].stopped


def test_r18_an_idle_game_ends_without_a_winner() -> None:
    game = started(3, clock=0)  # with R20's clock a game of people is never idle that long
    day = 24 * 3600.0
    assert refused(game, Expire(day), T0 + day - 1).code is Code.NOT_YET_DUE
    over, events = apply(game, Expire(day), T0 + day)
    assert events == [ev.Stopped(None, StopReason.IDLE)] and over.stopped


def test_r19_a_forfeit_sets_the_hand_aside_and_passes_the_turn_on_the_same_rank() -> None:
    game = table("A♠ 2♠", "3♠ 4♠", "5♠", rank="7")
    hand = game.hands[0]
    game, events = apply(game, Forfeit(1), T0)
    assert events == [ev.Forfeited(1), ev.TurnPassed(2)]
    assert game.hands[0] == 0 and game.aside == hand
    assert game.awaited == 2 and RANKS[game.rank] == "7"
    assert refused(game, Play(1, cards("A♠"))).code is Code.NOT_A_PLAYER
    assert refused(game, Forfeit(1)).code is Code.NOT_A_PLAYER


def test_r19_an_admin_puts_a_player_out_as_by_their_own_forfeit_told_as_theirs() -> None:
    game = table("A♠ 2♠", "3♠ 4♠", "5♠", rank="7")
    own, own_events = apply(game, Forfeit(1), T0)
    put_out, events = apply(game, Forfeit(1, by_admin=True), T0)
    assert put_out == own, "the same forfeit in every respect"
    assert events == [ev.Forfeited(1, by_admin=True), *own_events[1:]]
    # Anyone still in the game, not only the awaited player; not one already out.
    out, _ = apply(put_out, Forfeit(3, by_admin=True), T0)
    assert out.winner is not None and out.ids[out.winner] == 2 and out.phase is Phase.OVER
    assert refused(put_out, Forfeit(1, by_admin=True)).code is Code.NOT_A_PLAYER


def test_r19_the_forfeiters_last_play_can_still_be_challenged_and_their_loss_is_set_aside() -> None:
    game = table("A♠ 2♠", "3♠ 4♠", "5♠ 6♠")
    game, _ = apply(game, Play(1, cards("2♠")), T0)  # a lie
    game, _ = apply(game, Forfeit(1), T0)
    game, events = apply(game, Shout(3, 1), T0)
    challenge = events[0]
    assert isinstance(challenge, ev.Challenged) and challenge.set_aside and challenge.lie
    assert game.aside == cards("A♠ 2♠") and game.pile == 0
    assert game.awaited == 3


def test_r19_a_forfeiters_true_play_challenged_goes_to_the_accuser_and_the_next_seat_plays() -> (
    None
):
    game = table("A♠ 2♠", "3♠ 4♠", "5♠ 6♠")
    game, _ = apply(game, Play(1, cards("A♠")), T0)  # true
    game, _ = apply(game, Forfeit(1), T0)
    game, events = apply(game, Shout(3, 1), T0)
    challenge = events[0]
    assert isinstance(challenge, ev.Challenged) and challenge.loser == 3
    assert challenge.next_player == 2 and game.awaited == 2


def test_r19_a_deciders_forfeit_passes_the_decision_with_a_fresh_45_seconds() -> None:
    game = final_play()
    game, events = apply(game, Forfeit(2), T0 + 40)
    assert events == [ev.Forfeited(2), ev.DecisionPassed(3, T0 + 40 + DECISION_SECONDS)]
    assert game.awaited == 3 and game.deadline == T0 + 40 + DECISION_SECONDS
    # The first decider's 45 seconds are over, the new decider's are not: nothing is due.
    assert settle(game, T0 + 50) == (game, [])


def test_r19_the_final_player_forfeits_and_the_decider_plays_next() -> None:
    game = final_play(truth=False)
    game, events = apply(game, Forfeit(1), T0 + 2)
    assert events == [ev.Forfeited(1), ev.TurnPassed(2)]
    assert game.phase is Phase.PLAY and game.awaited == 2 and view(game, 2, T0 + 2).deadline is None
    game, events = apply(game, Shout(3, 1), T0 + 3)  # still open to a challenge
    assert isinstance(events[0], ev.Challenged) and events[0].set_aside


def test_r19_the_last_player_left_wins_and_forfeits_rank_last_latest_first() -> None:
    game = table("A♠", "3♠", "5♠", "7♠")
    game, _ = apply(game, Forfeit(2), T0)
    game, _ = apply(game, Forfeit(4), T0)
    game, events = apply(game, Forfeit(1), T0)
    won = events[-1]
    assert isinstance(won, ev.Won) and won.winner == 3
    assert won.ranking == (3, 1, 4, 2)


def test_r19_cards_are_conserved_through_forfeits() -> None:
    game = started(4)
    for player in game.ids[:3]:
        game, _ = apply(game, Forfeit(player), T0)
        held = 0
        for hand in game.hands:
            held |= hand
        assert held | game.pile | game.aside == FULL_DECK


# --- Invariants, by hand (the property tests drive them at random) -----------------------------


def test_i3_a_finished_game_keeps_its_winner_whatever_comes_next() -> None:
    game, _ = apply(final_play(), LetItStand(2, 1), T0)
    for move in (Shout(3, 1), LetItStand(2, 1), Play(2, cards("3♠")), Forfeit(1), Stop(1)):
        assert refused(game, move).code is Code.GAME_OVER
    assert refused(game, Expire(0), T0 + 10**6).code is Code.GAME_OVER


def test_i4_exactly_one_thing_is_awaited() -> None:
    assert lobby(3).awaited is None
    game = started(3)
    assert game.awaited == game.ids[0]
    decided = final_play()
    assert decided.phase is Phase.DECIDE and decided.awaited == 2
    assert apply(decided, LetItStand(2, 1), T0)[0].awaited is None


def test_moves_arriving_with_a_stale_turn_or_play_number_are_refused() -> None:
    game = table("A♠ 2♠", "3♠ 4♠")
    game, _ = apply(game, Play(1, cards("A♠"), turns=0), T0)
    game, _ = apply(game, Play(2, cards("3♠"), turns=1), T0)
    assert refused(game, Play(1, cards("2♠"), turns=0)).code is Code.STALE
    assert refused(game, Shout(1, 3)).code is Code.STALE
    assert isinstance(refused(game, Play(1, cards("2♠"), turns=0)), IllegalMove)
