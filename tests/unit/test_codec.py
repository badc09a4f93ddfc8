"""The stored form: versioned, exact, small."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from engine import CodecError, Join, Phase, Play, Start, apply, decode, encode, open_table
from engine.cards import cards_in
from engine.codec import VERSION
from engine.state import FIELDS, Game, LastPlay
from engine.tally import COUNTERS, counter, counters

SIXTEEN = "Abcdefghijklmnop"


def eight_player_game_mid_play(name: str = SIXTEEN) -> Game:
    now = 1_764_400_000.123
    game = open_table(1_000_000_001, now, name)
    for p in range(2, 9):
        game, _ = apply(game, Join(7_000_000_000 + p, name), now)
    game, _ = apply(game, Start(1_000_000_001, 12345), now)
    for _ in range(11):
        seat = game.turn
        assert seat is not None
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
    assert isinstance(stored, list) and stored[0] == VERSION == 5


# A table awaiting Bob's decision on Ann's final play, and the same table once Bob let it stand.
DECIDING = Game(
    opener=1,
    updated=1_000_000.0,
    phase=Phase.DECIDE,
    ids=(1, 2),
    names=("Ann", "Bob"),
    hands=[0, 4503599627304959],
    bullets=[3, 3],
    pile=65536,
    rank=1,
    turn=1,
    plays=1,
    last=LastPlay(play=1, seat=0, cards=65536, rank=0),
    deadline=1_000_045.0,
    acted=1_000_000.0,
)
WON = Game(
    opener=1,
    updated=1_000_005.0,
    phase=Phase.OVER,
    ids=(1, 2),
    names=("Ann", "Bob"),
    hands=[0, 4503599627304959],
    bullets=[3, 3],
    pile=65536,
    rank=1,
    plays=1,
    winner=0,
    acted=1_000_005.0,
)


def test_the_stored_order_is_pinned_so_a_change_to_the_fields_is_a_new_version() -> None:
    # Game's fields in their declared order; null where no seat is meant. Then the turns,
    # the clock, the seats whose clock ran out and the votes (bits by seat), the counters and
    # the boldest bluff; when a player last acted; the cards each seat put on the pile and
    # what the table saw.
    assert encode(DECIDING) == [
        5, 1, 1000000.0, 2, [1, 2], ["Ann", "Bob"], [0, 4503599627304959], [3, 3], [],
        65536, 0, 1, 1, 1, [1, 0, 65536, 0], None, 1000045.0, None, 0, 0, 0, 0, "", 0,
        1000000.0, [], "",
    ]  # fmt: skip


# Written by version 4, as tables deployed before version 5 hold them.
V4_DECIDING = [
    4, 1, 1000000.0, 2, [1, 2], ["Ann", "Bob"], [0, 4503599627304959], [3, 3], [],
    65536, 0, 1, 1, 1, [1, 0, 65536, 0], None, 1000045.0, None, 0, 0, 0, 0, "", 0,
    1000000.0,
]  # fmt: skip


def test_a_version_4_game_decodes_remembering_nothing_of_the_cards() -> None:
    assert decode(V4_DECIDING) == DECIDING
    assert DECIDING.put == [] and DECIDING.seen == ""
    assert decode(json.loads(json.dumps(encode(decode(V4_DECIDING))))) == DECIDING


# Written by version 3, as tables deployed before version 4 hold them.
V3_DECIDING = [
    3, 1, 1000000.0, 2, [1, 2], ["Ann", "Bob"], [0, 4503599627304959], [3, 3], [],
    65536, 0, 1, 1, 1, [1, 0, 65536, 0], None, 1000045.0, None, 0, 0, 0, 0, "", 0,
]  # fmt: skip


def test_r18_a_version_3_game_decodes_with_its_last_change_as_its_last_act() -> None:
    assert decode(V3_DECIDING) == DECIDING
    assert decode(json.loads(json.dumps(encode(decode(V3_DECIDING))))) == DECIDING


# Written by version 1 (-1 for no seat), as tables deployed before version 2 hold them.
V1_LOBBY = [1, 11, 1764400000.5, 0, [11], ["Ann"], [], [], [], 0, 0, 0, -1, 0, None, -1, None, -1]
V1_DECIDING = [
    1, 1, 1000000.0, 2, [1, 2], ["Ann", "Bob"], [0, 4503599627304959], [3, 3], [],
    65536, 0, 1, 1, 1, [1, 0, 65536, 0], -1, 1000045.0, -1,
]  # fmt: skip
V1_WON = [
    1, 1, 1000005.0, 3, [1, 2], ["Ann", "Bob"], [0, 4503599627304959], [3, 3], [],
    65536, 0, 1, -1, 1, None, -1, None, 0,
]  # fmt: skip
V1_SHOUTED = [
    1, 11, 1764400002.5, 1, [22, 11], ["Bob", "Ann"], [3897285060638888, 606314566731607],
    [3, 2], [], 0, 0, 0, 0, 1, None, 1, None, -1,
]  # fmt: skip


def test_a_version_1_game_decodes_with_none_for_no_seat() -> None:
    lobby = Game(opener=11, updated=1764400000.5, ids=(11,), names=("Ann",), acted=1764400000.5)
    assert lobby.turn is lobby.shouted is lobby.winner is None
    assert decode(V1_LOBBY) == lobby
    # No clock before version 3; a game begun counts turns from its play number and has
    # no counters for the reveal.
    assert decode(V1_DECIDING) == replace(DECIDING, turns=1, tally=None)
    assert decode(V1_WON) == replace(WON, turns=1, tally=None)
    shouted = decode(V1_SHOUTED)
    assert (shouted.turn, shouted.shouted, shouted.winner) == (0, 1, None)
    assert shouted.phase is Phase.PLAY and shouted.last is None and shouted.bullets == [3, 2]


def test_a_version_1_game_is_written_back_in_the_current_form() -> None:
    for old in (V1_LOBBY, V1_DECIDING, V1_WON, V1_SHOUTED):
        game = decode(old)
        assert encode(game)[0] == VERSION
        assert decode(json.loads(json.dumps(encode(game)))) == game


GOOD = encode(eight_player_game_mid_play())


TALLY, ACTED, PUT, SEEN = (1 + FIELDS.index(name) for name in ("tally", "acted", "put", "seen"))


def test_counters_of_any_size_round_trip() -> None:
    game = eight_player_game_mid_play()
    for tally in ("", "0aZ9", "Z\u0100\ud7ff" + "1" * 37):
        game.tally = tally
        assert decode(encode(game)).tally == tally


def test_all_seats_counters_read_as_each_seats() -> None:
    game = eight_player_game_mid_play()
    for tally in (None, "", "0aZ9", "Z\u0100\ud7ff" + "1" * 37, "0" * 8 + "a" * 5):
        game.tally = tally
        every = counters(game)
        assert len(every) == COUNTERS
        for which in range(COUNTERS):
            assert every[which] == [counter(game, which, s) for s in range(8)], tally


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
        [6, *GOOD[1:]],  # no such version
        [True, *GOOD[1:]],
        [1, *GOOD[1:]][:-1],  # a version 1 list one field short
        [*V1_LOBBY, 0],
        V3_DECIDING[:-1],  # a version 3 list one field short
        V4_DECIDING[:-1],  # a version 4 list one field short
        altered(PUT, [1] * 7),  # the cards put on the pile: one mask a seat
        altered(PUT, [-1] * 8),
        altered(PUT, [1 << 52] * 8),
        altered(SEEN, "0" * 51),  # what the table saw: one character a card
        altered(SEEN, "0" * 51 + "!"),
        altered(SEEN, "0" * 51 + "\u0200"),  # no such code
        altered(SEEN, 0),
        altered(ACTED, "1000000.0"),  # when a player last acted: a number
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
        altered(TALLY, "0a!"),  # counters are letters and digits, or wide characters
        altered(TALLY, "0 1"),
        altered(TALLY, "\u00ff"),
        altered(TALLY, "\ue000"),
        altered(TALLY, "1" * 41),  # more than five counters a seat
        altered(TALLY, 5),
    ],
)
def test_anything_else_is_refused_with_a_codec_error(value: object) -> None:
    with pytest.raises(CodecError):
        decode(value)
