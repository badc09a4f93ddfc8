"""What the table saw of the cards (`engine.memory`): kept in the game, shown in each seat's view,
and to each seat only what it may know."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest

from engine import (
    Game,
    Join,
    LetItStand,
    Phase,
    Play,
    Shout,
    Start,
    apply,
    decode,
    encode,
    open_table,
    strategy,
    view,
)
from engine.state import MAX_PLAYERS
from infra.harness import T0
from tests.support.games import cards, table


def running(*hands: str) -> Game:
    """A game set up by hand (`table`), keeping the memory from its first move."""
    game = table(*hands)
    return replace(game, put=[0] * len(hands))


def known(game: Game, viewer: int | None, holder: int) -> int:
    seat = view(game, viewer, T0).seat(holder)
    assert seat is not None
    return seat.known


def test_r11_the_cards_turned_over_are_seen_by_the_whole_table_going_to_the_loser() -> None:
    game = running("A♠ 2♠", "A♥ 3♠", "4♠")
    game, _ = apply(game, Play(1, cards("2♠")), T0)  # a lie, called as A
    game, _ = apply(game, Shout(2, game.plays), T0)
    for viewer in (None, 1, 2, 3):
        assert known(game, viewer, 1) == cards("2♠"), viewer


def test_r12_a_player_sees_the_cards_it_put_on_the_pile_go_to_whoever_picks_it_up() -> None:
    game = running("A♠ 5♠", "3♠ 6♠", "7♠")
    game, _ = apply(game, Play(1, cards("A♠")), T0)  # true, called as A
    game, _ = apply(game, Play(2, cards("3♠")), T0)  # a lie, called as 2
    assert view(game, 1, T0).put == cards("A♠"), "its own cards on the pile, it alone"
    assert view(game, 3, T0).put == 0
    assert [s.put for s in view(game, 3, T0).seats] == [1, 1, 0], "how many, the table"
    game, _ = apply(game, Shout(3, game.plays), T0)  # Bob picks up A♠ 3♠
    assert known(game, 1, 2) == cards("A♠ 3♠"), "Ann saw her ace go, and the lie turned over"
    bob = view(game, 1, T0).seat(2)
    assert bob is not None and bob.shown == cards("3♠"), "of which the whole table saw the lie"
    assert known(game, 3, 2) == known(game, None, 2) == cards("3♠"), "the others, the lie only"
    assert view(game, 1, T0).put == 0, "the pile is gone"


def test_a_card_that_may_have_gone_on_to_another_seat_is_forgotten_but_by_it() -> None:
    game = running("A♠ 5♠ 9♠", "3♠ 6♠ 10♠", "7♠ 8♠")
    game, _ = apply(game, Play(1, cards("A♠")), T0)
    game, _ = apply(game, Play(2, cards("3♠")), T0)
    game, _ = apply(game, Shout(3, game.plays), T0)  # Bob picks up A♠ 3♠; Cleo plays on 2
    game, _ = apply(game, Play(3, cards("7♠")), T0)  # a lie, called as 2
    game, _ = apply(game, Play(1, cards("5♠")), T0)  # a lie, called as 3
    game, _ = apply(game, Play(2, cards("A♠")), T0)  # Bob plays the ace on, called as 4
    game, _ = apply(game, Shout(3, game.plays), T0)  # and picks up the pile again
    assert known(game, 1, 2) & cards("A♠"), "it went back to Bob: Ann still knows"
    game = running("A♠ 5♠ 9♠", "3♠ 4♥ 10♠", "7♠ 8♠")
    game, _ = apply(game, Play(1, cards("A♠")), T0)
    game, _ = apply(game, Play(2, cards("3♠")), T0)
    game, _ = apply(game, Shout(3, game.plays), T0)
    game, _ = apply(game, Play(3, cards("7♠")), T0)  # a lie, called as 2
    game, _ = apply(game, Play(1, cards("5♠")), T0)  # a lie, called as 3
    game, _ = apply(game, Play(2, cards("4♥")), T0)  # true, called as 4: Bob played on this pile
    game, _ = apply(game, Shout(1, game.plays), T0)  # Ann is wrong: she picks it up
    assert not known(game, 3, 2) & cards("3♠"), "the 3♠ may have gone to Ann: Cleo forgets it"
    assert known(game, 1, 2) == cards("A♠ 3♠"), "Ann holds neither: they are still Bob's"


def test_what_the_table_saw_round_trips_through_the_stored_form() -> None:
    game = running("A♠ 5♠", "3♠ 6♠", "7♠")
    game, _ = apply(game, Play(1, cards("A♠")), T0)
    game, _ = apply(game, Play(2, cards("3♠")), T0)
    game, _ = apply(game, Shout(3, game.plays), T0)
    game, _ = apply(game, Play(3, cards("7♠")), T0)
    assert game.seen and any(game.put)
    assert decode(json.loads(json.dumps(encode(game)))) == game


def play_out(players: int, seed: int) -> list[Game]:
    """A whole game between normal computer players: the game after every move."""
    rng = random.Random(seed)
    game = open_table(1, T0, "P1", clock=0)
    for p in range(2, players + 1):
        game, _ = apply(game, Join(p, f"P{p}"), T0)
    game, _ = apply(game, Start(1, seed), T0)
    games = [game]
    while game.phase is not Phase.OVER:
        move = next(
            m
            for p in rng.sample(game.ids, players)
            if (m := strategy.choose(view(game, p, T0), rng))
        )
        game, _ = apply(game, move, T0)
        games.append(game)
    return games


@pytest.mark.parametrize(("players", "seed"), [(2, 1), (3, 2), (MAX_PLAYERS, 3)])
def test_what_a_seat_remembers_is_true_a_card_it_saw_go_is_there_or_on_the_pile(
    players: int, seed: int
) -> None:
    for i, game in enumerate(play_out(players, seed)):
        for viewer in ((None, *game.ids)[i % (players + 1)], game.awaited):  # in turn
            v = view(game, viewer, T0)
            assert not v.put & ~game.pile
            for seat in v.seats:
                held = game.hands[game.ids.index(seat.player)]
                assert not seat.known & ~(held | game.pile), (viewer, seat.player)


def test_a_game_is_over_with_a_final_play_let_stand_and_the_memory_kept() -> None:
    game = running("A♠", "3♠ 6♠", "7♠")
    game, _ = apply(game, Play(1, cards("A♠")), T0)
    game, _ = apply(game, LetItStand(2, game.plays), T0)
    assert game.phase is Phase.OVER and view(game, 1, T0).put == cards("A♠")
