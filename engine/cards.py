"""Cards, ranks and sets of cards (R2).

A card is an int 0..51: `rank_index * 4 + suit_index`. A set of cards is a 52-bit int mask,
so a hand, the pile or a play is one number: cheap to copy, compare and store.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

# The rank letters are shown as they are in every language ("Called: 2 × R").
RANKS: tuple[str, ...] = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "V", "D", "R")
SUITS: tuple[str, ...] = ("♠", "♥", "♦", "♣")
DECK_SIZE = 52
FULL_DECK = (1 << DECK_SIZE) - 1
RANK_COUNT = len(RANKS)

Mask = int


def card(rank_index: int, suit_index: int) -> int:
    """The card of a rank and a suit, as indices into `RANKS` and `SUITS`."""
    return rank_index * 4 + suit_index


def rank_of(card_index: int) -> int:
    """The card's rank, an index into `RANKS`."""
    return card_index >> 2


def suit_of(card_index: int) -> int:
    """The card's suit, an index into `SUITS`."""
    return card_index & 3


def card_name(card_index: int) -> str:
    """'7♦', '10♠', 'R♣'."""
    return RANKS[rank_of(card_index)] + SUITS[suit_of(card_index)]


def parse_card(text: str) -> int:
    """The inverse of `card_name`; raises ValueError on anything else."""
    for suit_index, suit in enumerate(SUITS):
        if text.endswith(suit) and text[: -len(suit)] in RANKS:
            return card(RANKS.index(text[: -len(suit)]), suit_index)
    raise ValueError(f"not a card: {text!r}")


def mask_of(cards: Iterable[int]) -> Mask:
    """The set of these cards, as a mask."""
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


def cards_in(mask: Mask) -> Iterator[int]:
    """The cards of a mask in deck order, which is also rank order."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def count(mask: Mask) -> int:
    """How many cards a mask holds."""
    return mask.bit_count()


RANK_MASKS: tuple[Mask, ...] = tuple(0b1111 << (4 * r) for r in range(RANK_COUNT))


def count_of_rank(mask: Mask, rank_index: int) -> int:
    """How many cards of the rank a mask holds."""
    return (mask & RANK_MASKS[rank_index]).bit_count()


def is_lie(played: Mask, rank_index: int) -> bool:
    """R8: a play is a lie when at least one of its cards is not of the called rank."""
    return bool(played & ~RANK_MASKS[rank_index])
