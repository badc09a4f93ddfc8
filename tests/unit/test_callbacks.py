"""Button data: compact, within Telegram's 64 bytes, one spelling per press, nothing else."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from handlers import acts
from handlers.callbacks import (
    GAME_IDS,
    MAX_BYTES,
    NO_RANK,
    BadCallback,
    Kind,
    Place,
    Press,
    decode,
    encode,
    toggles,
)

CHATS = st.integers(-(10**13), 10**13)
CARDS = st.integers(0, (1 << 52) - 1)
# A forum topic is named by a message id (Telegram's are 32-bit); None outside forums.
TOPICS = st.none() | st.integers(1, 2**31 - 1)


@st.composite
def presses(draw: st.DrawFn) -> Press:
    kind = draw(st.sampled_from(Kind))
    cards = draw(CARDS) if kind in (Kind.TOGGLE, Kind.PLAY) else 0
    toggle = kind is Kind.TOGGLE
    shout = draw(st.booleans()) if toggle else False
    return Press(
        kind=kind,
        chat=draw(CHATS),
        game=draw(st.integers(0, 36**3) | st.sampled_from(GAME_IDS)),
        number=draw(st.integers(0, 36**3)),
        cards=cards,
        hand=draw(CARDS) if toggle else 0,
        rank=draw(st.integers(-1, 12)) if toggle else NO_RANK,
        shout=shout,
        topic=draw(TOPICS),
        play=draw(st.integers(0, 36**3)) if shout else 0,
    )


@given(presses())
def test_every_press_round_trips_within_64_bytes(press: Press) -> None:
    data = encode(press)
    assert len(data.encode()) <= MAX_BYTES
    assert decode(data) == press


@given(presses(), st.data())
def test_a_number_given_a_leading_zero_is_refused_wherever_it_stands(
    press: Press, data: st.DataObject
) -> None:
    """Each press has one spelling: a zero put before any of its numbers (or its chat's minus
    sign) makes data that is refused."""
    spelled = encode(press)
    starts = [i + 1 for i, c in enumerate(spelled) if c in "._" or (c == "-" and i == 2)]
    if press.shout:  # the play Liar! targets: after the last ".", the rank and "x"
        starts.append(spelled.rindex(".") + 3)
    at = data.draw(st.sampled_from(starts))
    with pytest.raises(BadCallback):
        decode(spelled[:at] + "0" + spelled[at:])


def test_the_longest_button_in_a_forum_topic_fits_64_bytes() -> None:
    """The worst case: a card toggle (the longest kind) in the largest supergroup id, the
    largest topic id, a late game and play, every card selected and held, Liar! shown."""
    full = (1 << 52) - 1
    press = Press(
        Kind.TOGGLE,
        chat=-(10**13 - 1),
        game=36**3,
        number=36**3,
        cards=full,
        hand=full,
        rank=12,
        shout=True,
        topic=2**31 - 1,
    )
    data = encode(press)
    outside = encode(Press(Kind.TOGGLE, press.chat, 36**3, 36**3, full, full, 12, True))
    assert len(data.encode()) - len(outside.encode()) == 7, "the topic costs 7 bytes at most"
    assert len(data.encode()) <= MAX_BYTES
    assert decode(data) == press


@given(st.text(max_size=80))
def test_anything_else_is_refused_or_is_a_press_in_its_one_spelling(data: str) -> None:
    try:
        press = decode(data)
    except BadCallback:
        return
    assert encode(press) == data


@pytest.mark.parametrize(
    "data",
    [
        None,
        "",
        "x",
        "x.1.1",  # too few fields
        "x.1.1.1.1",  # cards on a shout
        "p.1.1.1",  # a play without cards
        "t.1.1.1.1.1",  # a toggle without its rank
        "t.1.1.1.1.1.d",  # no rank d
        "q.1.1.1",  # unknown kind
        "x.01.1.1",  # not canonical
        "x.-0.1.1",
        "X.1.1.1",
        "p.1.1.1.zzzzzzzzzzz",  # more than 52 cards' worth of bits
        "x.1.1.1" + "1" * 60,  # too long
        "x.1.1.1\n",
        "x.1_.1.1",  # an empty topic
        "x.1_01.1.1",  # a topic not in canonical form
        "x.1_1_1.1.1",  # two topics
        "x.1_1234567.1.1",  # a topic beyond Telegram's message ids
    ],
)
def test_tampered_or_truncated_data_is_refused(data: str | None) -> None:
    with pytest.raises(BadCallback):
        decode(data)


# The longest data: a card toggle in a 51-card hand, its selection all but one card, the
# turn's rank and Liar!, in a supergroup of the longest "-100…" id, for the highest game id and
# a moment and a play number beyond any game (46,655 plays). A forum topic's id (up to 7 more
# bytes) is still to come.
SUPERGROUP = -1009999999999
BUDGET = MAX_BYTES - 8


def test_a_game_id_has_about_46_bits_and_always_nine_digits() -> None:
    assert len(GAME_IDS).bit_length() >= 46
    assert {
        len(encode(Press(Kind.SHOUT, 1, game)).split(".")[2]) for game in GAME_IDS[:: 7**15]
    } == {9}


def test_the_longest_button_data_leaves_room_for_a_topic_id() -> None:
    hand = (1 << 52) - 1 - 1  # every card but the ace of spades
    worst = Press(
        Kind.TOGGLE,
        SUPERGROUP,
        GAME_IDS[-1],
        36**4 - 1,  # the moment, for Play
        cards=hand,
        hand=hand,
        rank=12,
        shout=True,
        play=36**3 - 1,  # the play Liar! targets: never more than the moments
    )
    data = encode(worst)
    assert len(data.encode()) == 56 <= BUDGET, data
    assert len(toggles(worst)(hand).encode()) == 56
    for kind in Kind:
        cards = hand if kind in (Kind.TOGGLE, Kind.PLAY) else 0
        toggle = kind is Kind.TOGGLE
        press = Press(
            kind,
            SUPERGROUP,
            GAME_IDS[-1],
            36**4 - 1,
            cards,
            hand if toggle else 0,
            12 if toggle else NO_RANK,
            toggle,
        )
        assert len(encode(press).encode()) <= BUDGET, kind


@pytest.mark.parametrize("what", [acts.SEAT, acts.HAND])
@pytest.mark.parametrize("topic", [None, 2**31 - 1])
def test_a_deep_link_holds_a_short_payload_telegram_accepts(what: str, topic: int | None) -> None:
    place = Place(SUPERGROUP, GAME_IDS[-1], topic)
    link = acts.deep_link("menteur_test_bot", what, place)
    payload = link.split("?start=", 1)[1]
    assert len(payload) <= 64 and payload.replace("-", "").replace("_", "").isalnum()
    assert payload.isascii()
    found = acts.START_PAYLOAD.fullmatch(payload)
    assert found is not None
    assert found[1] == what
    assert (int(found[2]), int(found[3])) == (SUPERGROUP, GAME_IDS[-1])
    assert (int(found[4]) if found[4] else None) == topic
