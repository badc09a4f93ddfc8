"""Computer players as the bot seats and moves them: the level in the id, and every one of them
offered its Liar! before the next one plays."""

from __future__ import annotations

from dataclasses import replace

from engine import Play, Shout, apply, view
from handlers import robots, timing
from handlers.store import Record
from infra.harness import T0
from tests.support.games import cards, table


def test_a_computer_players_id_says_its_level_and_ids_from_before_levels_read_as_normal() -> None:
    for level in robots.LEVELS:
        for n in (1, 9):
            player = robots.robot(n, level)
            assert player < 0 and robots.level_of(player) == level
            assert robots.number_of(player) == n
    assert robots.robot(3, "normal") == -3, "the ids stored before levels: normal players"


def test_r10_every_computer_player_may_shout_before_the_next_computer_player_plays() -> None:
    """Robot 1, holding most of the deck, calls 2 × A with no ace; Robot 2 plays next, and would
    (the call is likely true to it); Robot 3 holds three aces and knows it is a lie: its Liar!
    comes first, though it is not the next to play."""
    game = table("2♠ 3♠", "5♠ 6♠", "A♠ A♥ A♦", "7♠", rest_to=0)
    game = replace(game, ids=(-1, -2, -3, 7), put=[0] * 4)
    game, _ = apply(game, Play(-1, cards("2♠ 3♠")), T0)
    record = Record(-100, game=game, game_id=1)
    assert game.awaited == -2 and view(game, -2, T0).can_play
    assert timing.computer_move(record, game, T0 + 4) == Shout(-3, game.plays)
