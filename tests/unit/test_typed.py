"""What a line typed at the offline table means (`infra/typed.py`): a card by what it is or by
its position, a word as a word, and a line with anything else in it changes nothing."""

from __future__ import annotations

import pytest

from infra.terminal import button_labels
from infra.typed import (
    Card,
    Meaningless,
    NotInHand,
    Position,
    Word,
    card_of,
    choose,
    parse,
)

HAND = ["A♠", "7♥", "7♣", "10♦", "V♠", "R♥"]


@pytest.mark.parametrize(
    ("typed", "name"),
    [
        ("10", "10"),
        ("7", "7"),
        ("7h", "7♥"),
        ("7H", "7♥"),
        ("7♥", "7♥"),
        ("R♥", "R♥"),
        ("k♥", "R♥"),
        ("Kh", "R♥"),
        ("q", "D"),
        ("j♠", "V♠"),
        ("as", "A♠"),
        ("10d", "10♦"),
        ("١٠", "10"),
        ("d", "D"),
    ],
)
def test_a_card_is_read_by_what_it_is(typed: str, name: str) -> None:
    card = card_of(typed)
    assert card is not None and card.name == name


@pytest.mark.parametrize("typed", ["1", "11", "0", "7x", "play7", "♥", "#", "10♥♥", "x"])
def test_what_is_no_card_is_not_read_as_one(typed: str) -> None:
    assert card_of(typed) is None


def test_words_are_words_and_their_short_forms_the_same_words() -> None:
    assert parse("play") == [Word("play")]
    assert parse("P") == [Word("play")]
    assert parse("liar") == parse("l") == parse("Liar!") == parse("liar !") == [Word("liar")]
    assert parse("stand") == parse("s") == [Word("stand")]
    assert parse("end") == parse("e") == [Word("end")]
    assert parse("quit") == parse("q") == parse("exit") == [Word("quit")]
    assert parse("b2") == [Word("b2")]


def test_a_line_is_read_in_order_cards_positions_and_words() -> None:
    assert parse("7h, #3  play") == [Card(7 - 1, 1, "7h"), Position(3), Word("play")]
    assert parse("   ") == []


@pytest.mark.parametrize(
    ("line", "word"),
    [("12p", "12p"), ("play xyz", "xyz"), ("10 O", "O"), ("pl4y", "pl4y"), ("1", "1")],
)
def test_a_line_with_a_word_that_means_nothing_is_refused_whole(line: str, word: str) -> None:
    with pytest.raises(Meaningless) as refused:
        parse(line)
    assert refused.value.word == word, "named, for the answer in the table's language"


def test_a_card_is_chosen_in_the_hand_by_what_it_is() -> None:
    assert choose(parse("10"), HAND) == [3]
    assert choose(parse("7c"), HAND) == [2]
    assert choose(parse("K"), HAND) == [5]
    # A rank alone takes a card not yet taken: two sevens for "7 7".
    assert choose(parse("7 7 play"), HAND) == [1, 2, None]
    # One not selected before one that is.
    assert choose(parse("7"), ["A♠", "✓7♥", "7♣"]) == [2]
    # Selected already and the only one: typed again, it is the one (its toggle unselects it).
    assert choose(parse("10"), ["✓10♦"]) == [0]


def test_a_card_is_chosen_by_its_position_as_the_screen_shows_the_hand() -> None:
    assert choose(parse("#1 #6"), HAND) == [0, 5]


@pytest.mark.parametrize(
    ("line", "token"),
    [
        ("9", Card(8, None, "9")),
        ("7s", Card(6, 0, "7s")),
        ("7 7 7", Card(6, None, "7")),
        ("#7", Position(7)),
        ("#0", Position(0)),
        ("#2 #2", Position(2)),
    ],
)
def test_a_card_not_in_the_hand_refuses_the_line(line: str, token: Card | Position) -> None:
    with pytest.raises(NotInHand) as refused:
        choose(parse(line), HAND)
    assert (refused.value.token, refused.value.held) == (token, len(HAND))


def test_a_buttons_name_in_any_language_the_bot_speaks_is_its_word() -> None:
    names = button_labels()
    assert parse("كاذب!", names) == parse("Liar!", names) == [Word("liar")]
    assert parse("ترك الأمر", names) == parse("let it stand", names) == [Word("stand")]
    assert parse("وضع البطاقات", names) == parse("Play", names) == [Word("play")]
    assert parse("إنهاء المباراة", names) == parse("End game", names) == [Word("end")]
    assert parse("٧h ٧♠ وضع البطاقات", names) == [
        Card(6, 1, "٧h"),
        Card(6, 0, "٧♠"),
        Word("play"),
    ]
    # A name's words apart from it mean nothing: "let" alone is no button.
    with pytest.raises(Meaningless):
        parse("let", names)


@pytest.mark.parametrize(
    ("line", "word"),
    [
        ("Menteur !", "liar"),  # a keyboard's space where the button has a no-break one
        ("Menteur\u00a0!", "liar"),  # pasted as shown
        ("menteur\u202f!", "liar"),  # French's narrow no-break space
        ("MENTEUR", "liar"),
        ("Laisser   passer", "stand"),
        ("laisser\u00a0passer", "stand"),
        ("Jouer 2 × 4", "play"),  # the whole label, pasted
        ("Jouer 2×4", "play"),
        ("Play 1 × A", "play"),
        ("وضع البطاقات: 2 × 4", "play"),
        ("وضع البطاقات 2 × 4", "play"),
        ("Finir la partie 1/2", "end"),
        ("End game 1/3", "end"),
        ("إنهاء المباراة (1 من 2)", "end"),
        ("Let it stand!", "stand"),
    ],
)
def test_a_buttons_label_as_shown_works_typed_or_pasted_whatever_its_spaces(
    line: str, word: str
) -> None:
    assert parse(line, button_labels()) == [Word(word)]


def test_a_label_pasted_among_cards_keeps_the_cards_around_it() -> None:
    assert parse("7h Jouer 1 × 4", button_labels()) == [Card(6, 1, "7h"), Word("play")]
    assert parse("? ", button_labels()) == [Word("help")], "a mark of its own is a word"
