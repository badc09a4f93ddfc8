"""The stored form: versioned, exact, small."""

from __future__ import annotations

import json

import pytest

from engine import CodecError, Join, Play, Start, apply, decode, encode, open_table
from engine.cards import cards_in
from engine.game import Game

SIXTEEN = "Abcdefghijklmnop"


def eight_player_game_mid_play(name: str = SIXTEEN) -> Game:
    now = 1_764_400_000.123
    game = open_table(1_000_000_001, now, name)
    for p in range(2, 9):
        game, _ = apply(game, Join(7_000_000_000 + p, name), now)
    game, _ = apply(game, Start(1_000_000_001, 12345), now)
    for _ in range(11):
        seat = game.turn
        two = sum(1 << c for c in list(cards_in(game.hands[seat]))[:2])
        game, _ = apply(game, Play(game.ids[seat], two), now)
        now += 3.25
    return game


def stored_size(game: Game) -> int:
    return len(json.dumps(encode(game), separators=(",", ":"), ensure_ascii=False).encode())


def test_an_eight_player_game_with_16_character_names_fits_one_write_unit() -> None:
    game = eight_player_game_mid_play()
    assert game.pile and game.last is not None
    assert stored_size(game) <= 1024


def test_even_names_of_arabic_letters_stay_under_4_kb() -> None:
    # Two bytes a letter in UTF-8: the size goal's ceiling, not its target.
    assert stored_size(eight_player_game_mid_play("ب" * 64)) <= 4096


def test_encode_then_decode_gives_back_the_same_game() -> None:
    game = eight_player_game_mid_play()
    assert decode(json.loads(json.dumps(encode(game)))) == game


def test_the_stored_form_is_a_flat_list_led_by_its_version() -> None:
    stored = encode(eight_player_game_mid_play())
    assert isinstance(stored, list) and stored[0] == 1


GOOD = encode(eight_player_game_mid_play())


def altered(index: int, value: object) -> list[object]:
    copy = list(GOOD)
    copy[index] = value
    return copy


@pytest.mark.parametrize(
    "value",
    [
        None,
        [],
        {},
        [2, *GOOD[1:]],
        GOOD[:-1],
        [*GOOD, 0],
        altered(3, 9),  # no such phase
        altered(3, True),
        altered(4, [1, 2]),  # seats and names differ
        altered(4, ["1"] * 8),
        altered(5, [1] * 8),
        altered(6, [-1] * 8),  # not a hand
        altered(6, [1 << 52] * 8),
        altered(7, [3] * 7),
        altered(14, [1, 2]),  # a last play of two fields
    ],
)
def test_anything_else_is_refused_with_a_codec_error(value: object) -> None:
    with pytest.raises(CodecError):
        decode(value)
