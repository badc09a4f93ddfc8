"""The data behind every button: a compact, strictly checked format within Telegram's 64 bytes.

    kind.chat[_topic].game.number[.cards[.hand.rank[xplay]]]    all numbers in base 36, chat signed

`chat` is the group the game is played in (private hand buttons need it), `topic` its forum topic
when it is played in one (a `message_thread_id`: a message id, below 2**31, so 6 digits at most,
and 7 bytes with its separator), `game` the game's id (a button from another game is refused;
see `GAME_IDS`), `number` what the button was drawn for: the game's turn for Play and a card
toggle (`View.turns`), the play targeted for Liar! and Let it stand (R10); a button from an
earlier turn is refused. A card toggle carries what is
needed to redraw the hand without reading the game: the selection, the hand, the rank to call
("-" when it is not the player's turn) and, when the hand shows Liar!, "x" and the play it
targets. Nothing here is trusted for authority: every move is checked again by the engine
against the stored game.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

MAX_BYTES = 64
NO_RANK = -1
# A game's id, in its buttons and its join link: drawn at random (`secrets`) from these, always
# 9 base-36 digits, about 46.5 bits. Nobody can guess the id of a game they cannot see, and an
# old button or link never acts on a later game, even after the chat's record expired. (Stored
# games from before had ids counting from 1: their buttons still read.)
GAME_IDS = range(36**8, 36**9)


class Kind(StrEnum):
    JOIN = "j"
    LEAVE = "l"
    START = "s"
    SHOUT = "x"  # Liar!
    STAND = "k"  # Let it stand
    TOGGLE = "t"  # select or unselect a card in one's private hand
    PLAY = "p"
    LANGUAGE = "g"  # `number` indexes the supported languages
    REMOVE = "r"  # take a computer player off the lobby's table: `number` is minus its id
    VOTE = "v"  # End game: a vote to end the game, which lasts until the end (`number` is 0)
    CLOCK = "c"  # the chat's turn clock (R20): `number` is the seconds, 0 for none
    AGAIN = "a"  # Play again, on the end message: the next game, in the same chat


class BadCallback(ValueError):
    """The data is not one this bot wrote: tampered, truncated or from another bot."""


@dataclass(frozen=True, slots=True)
class Press:
    kind: Kind
    chat: int
    game: int
    number: int = 0
    cards: int = 0
    hand: int = 0
    rank: int = NO_RANK
    shout: bool = False  # a toggle redraws the hand's Liar! button too...
    topic: int | None = None  # the forum topic of the game, if it is played in one
    play: int = 0  # ...which targets this play (`number` is the turn, for Play)


@dataclass(frozen=True, slots=True)
class Place:
    """Where a game's buttons lead: its group chat, its forum topic (if it is played in one),
    and the game's id. Every button a screen draws for the game names all three."""

    chat: int
    game: int
    topic: int | None = None

    def press(
        self,
        kind: Kind,
        number: int = 0,
        *,
        cards: int = 0,
        hand: int = 0,
        rank: int = NO_RANK,
        shout: bool = False,
        play: int = 0,
    ) -> Press:
        return Press(kind, self.chat, self.game, number, cards, hand, rank, shout, self.topic, play)

    def data(self, kind: Kind, number: int = 0) -> str:
        """The callback data of a plain button (no cards) of this game."""
        return encode(self.press(kind, number))


_B36 = "0123456789abcdefghijklmnopqrstuvwxyz"
_PATTERN = re.compile(
    r"(?P<kind>[a-z])\.(?P<chat>-?[0-9a-z]{1,12})(?:_(?P<topic>[0-9a-z]{1,6}))?"
    r"\.(?P<game>[0-9a-z]{1,9})\.(?P<number>[0-9a-z]{1,6})"
    r"(?:\.(?P<cards>[0-9a-z]{1,11})(?:\.(?P<hand>[0-9a-z]{1,11})\.(?P<rank>-|[0-9a-c])(?:x(?P<play>[0-9a-z]{1,6}))?)?)?"
)
_CARD_KINDS = {Kind.TOGGLE, Kind.PLAY}
_FULL = (1 << 52) - 1


# Every number from 0 to 36**2 - 1 in two base-36 digits: a number is spelled two digits at a
# time (card masks of up to 11 digits are spelled for every card toggle of a hand drawn).
_PAIRS = tuple(a + b for a in _B36 for b in _B36)


def _b36(n: int) -> str:
    if n < 0:
        return "-" + _b36(-n)
    if n < 36:
        return _B36[n]
    pairs = []
    while n:
        n, r = divmod(n, 1296)
        pairs.append(_PAIRS[r])
    return "".join(reversed(pairs)).lstrip("0")  # a leading pair may start with 0


def encode(press: Press) -> str:
    head, tail = _around_cards(press)
    data = head + (_b36(press.cards) if press.kind in _CARD_KINDS else "") + tail
    if len(data.encode()) > MAX_BYTES:
        raise ValueError(f"callback data over {MAX_BYTES} bytes: {data}")
    return data


def toggles(press: Press) -> Callable[[int], str]:
    """The data of `press`'s toggles, by the selection each sets: the rest is spelled once
    (a hand of up to 51 cards is redrawn on every move)."""
    head, tail = _around_cards(press)
    if len((head + _b36(_FULL) + tail).encode()) > MAX_BYTES:
        raise ValueError("callback data over 64 bytes")
    return lambda cards: head + _b36(cards) + tail


def _around_cards(press: Press) -> tuple[str, str]:
    """The spelling of `press` before and after its cards field."""
    topic = "" if press.topic is None else f"_{_b36(press.topic)}"
    head = f"{press.kind.value}.{_b36(press.chat)}{topic}.{_b36(press.game)}.{_b36(press.number)}"
    if press.kind not in _CARD_KINDS:
        return head, ""
    if press.kind is not Kind.TOGGLE:
        return head + ".", ""
    rank = "-" if press.rank == NO_RANK else _b36(press.rank)
    return head + ".", f".{_b36(press.hand)}.{rank}{'x' + _b36(press.play) if press.shout else ''}"


def decode(data: str | None) -> Press:
    """The press behind `data`, or BadCallback for anything this module would not write."""
    if data is None or len(data.encode()) > MAX_BYTES:
        raise BadCallback("missing or too long")
    match = _PATTERN.fullmatch(data)
    if match is None:
        raise BadCallback("malformed")
    try:
        kind = Kind(match["kind"])
    except ValueError:
        raise BadCallback("unknown kind") from None
    has_cards = match["cards"] is not None
    has_hand = match["hand"] is not None
    if has_cards != (kind in _CARD_KINDS) or has_hand != (kind is Kind.TOGGLE):
        raise BadCallback("fields do not fit the kind")
    press = Press(
        kind=kind,
        chat=int(match["chat"], 36),
        game=int(match["game"], 36),
        number=int(match["number"], 36),
        cards=int(match["cards"], 36) if has_cards else 0,
        hand=int(match["hand"], 36) if has_hand else 0,
        rank=NO_RANK if not has_hand or match["rank"] == "-" else int(match["rank"], 36),
        shout=match["play"] is not None,
        topic=None if match["topic"] is None else int(match["topic"], 36),
        play=0 if match["play"] is None else int(match["play"], 36),
    )
    if press.cards > _FULL or press.hand > _FULL or press.rank >= 13:
        raise BadCallback("not a card or a rank")
    # One spelling per press, the one `encode` writes: the pattern leaves only leading zeros
    # (and "-0") to refuse. test_callbacks holds this to `encode`.
    if any(
        len(digits) > 1 and digits.lstrip("-")[0] == "0"
        for digits in match.group("chat", "topic", "game", "number", "cards", "hand", "play")
        if digits is not None
    ):
        raise BadCallback("not in canonical form")
    return press
