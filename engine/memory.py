"""What each seat may remember of the cards: kept in the game, shown in each seat's view, and all
a computer player remembers (it decides from its view alone).

A person at the table can remember the cards turned over in a challenge (R11) and who picked
them up (R12), the cards they themselves put on the pile and who picked those up, and how many
cards each player called. `Game.put` holds the cards each seat put on the current pile (each
seat knows its own; the table, how many: the sum of its calls). `Game.seen` holds, for each
card, whom it was last seen going to and who saw it go: the whole table (a card turned over),
or one seat (a card it put on a pile that another picked up). Where it went, it stays: in that
hand, or, if that seat has played since, perhaps on the pile. When that pile goes to yet another
seat, the card may have gone with it, so it is forgotten, except by the one who picked the pile
up, who can tell from their own hand. Everything here changes at public moments only (a call,
a pick-up), so what one seat is shown depends on nothing hidden from it.
"""

from __future__ import annotations

from functools import lru_cache

from engine.cards import DECK_SIZE, Mask, cards_in
from engine.state import MAX_PLAYERS, Game
from engine.tally import digit, value

# `Game.seen`: one character per card (`tally.digit`), "" until a first pick-up.
NOBODY = 0  # not seen, or forgotten
_BY_TABLE = 1  # + holder: the whole table saw it go to the holder
_BY_SEAT = _BY_TABLE + MAX_PLAYERS  # + MAX_PLAYERS * watcher + holder: only the watcher saw it
_CODES = _BY_SEAT + MAX_PLAYERS * MAX_PLAYERS
_NOBODY = digit(NOBODY)


def seen_by_table(holder: int) -> int:
    """The code of a card the whole table saw go to `holder`."""
    return _BY_TABLE + holder


def seen_by(watcher: int, holder: int) -> int:
    """The code of a card only `watcher` saw go to `holder`."""
    return _BY_SEAT + MAX_PLAYERS * watcher + holder


def holder_of(code: int) -> int:
    """The seat a card was seen going to (`code` not `NOBODY`)."""
    return (code - _BY_TABLE) % MAX_PLAYERS


def watcher_of(code: int) -> int | None:
    """Who saw a card go (`code` not `NOBODY`): a seat, or None for the whole table."""
    return None if code < _BY_SEAT else (code - _BY_SEAT) // MAX_PLAYERS


@lru_cache(maxsize=16)
def readable(seen: str, seats: int) -> bool:
    """Whether `seen` is a `Game.seen` of a table of `seats`: the codes of seats at it. Cached:
    every read of a game asks, and `seen` changes at pick-ups only."""
    for char in set(seen):
        code = value(char) if (char.isascii() and char.isalnum()) or char >= "\u0100" else _CODES
        if code >= _CODES:
            return False
        if code != NOBODY and (holder_of(code) >= seats or (watcher_of(code) or 0) >= seats):
            return False
    return True


# What each code's character says, (`watcher_of`, `holder_of`): read for every card at every
# pick-up, and for every seat's view of a new `Game.seen` (`_known`).
_MEANING = {digit(code): (watcher_of(code), holder_of(code)) for code in range(1, _CODES)}
_FORGOTTEN = _NOBODY * DECK_SIZE  # nothing seen: stored as ""


def played(g: Game, seat: int, cards: Mask) -> None:
    """R6: `seat` put `cards` on the pile; it alone knows which."""
    if g.put:  # a game read from before the memory was kept has none until its next pick-up
        g.put[seat] |= cards


def picked_up(g: Game, loser: int, turned: Mask) -> None:
    """R11, R12: `loser` picked up the pile (or set it aside with their hand, R19) after a
    challenge turned `turned` over. Called once the pile is in the loser's hand."""
    put = g.put
    callers = {s for s, cards in enumerate(put) if cards}  # who played on it: the table saw
    hand = g.hands[loser]
    chars = list(g.seen or _FORGOTTEN)
    for card, char in enumerate(chars):
        if char == _NOBODY:
            continue
        watcher, holder = _MEANING[char]
        if holder in callers and holder != loser:
            # It may have gone on this pile and to the loser: only the loser can tell.
            in_hand = hand >> card & 1
            if watcher is None or watcher == loser:
                chars[card] = _NOBODY if in_hand else digit(seen_by(loser, holder))
            else:
                chars[card] = _NOBODY
    for seat in callers - {loser}:  # their own cards, back in their hand, they know
        char = digit(seen_by(seat, loser))
        for card in cards_in(put[seat]):
            chars[card] = char
    char = digit(seen_by_table(loser))
    for card in cards_in(turned):
        chars[card] = char
    seen = "".join(chars)
    g.seen = "" if seen == _FORGOTTEN else seen
    g.put = [0] * len(g.ids)  # kept from now on, in a game read from before too


def known(g: Game, seat: int | None) -> tuple[tuple[Mask, ...], tuple[Mask, ...]]:
    """For each seat, the cards the whole table saw go to it, and those `seat` alone saw go to
    it (none for None, the group): in that seat's hand still, or on the pile if it has called
    since."""
    table, own = _known(g.seen, len(g.ids))
    return table, (0,) * len(g.ids) if seat is None else own[seat]


@lru_cache(maxsize=16)
def _known(seen: str, n: int) -> tuple[tuple[Mask, ...], tuple[tuple[Mask, ...], ...]]:
    # Cached, for every seat at once: `seen` changes at pick-ups only, so the views made between
    # two of them (every seat's, at every move) read the same string.
    table, own = [0] * n, [[0] * n for _ in range(n)]
    for card, char in enumerate(seen):
        if char == _NOBODY:
            continue
        watcher, holder = _MEANING[char]
        if watcher is None:
            table[holder] |= 1 << card
        else:
            own[watcher][holder] |= 1 << card
    return tuple(table), tuple(tuple(masks) for masks in own)
