"""The reveal's counters (R16: shown once the game is over, kept nowhere after it): what each
seat did, counted in the game's state as the game goes, and the boldest bluff that stood."""

from __future__ import annotations

from engine.cards import count, is_lie
from engine.state import MAX_PLAY, MAX_PLAYERS, Game

# Which counter, for `counter`. Liar! shouted is not kept: it is RIGHT plus the bullets spent,
# since a right shout's bullet comes back and a wrong one's never does (R11).
PLAYS, LIES, CAUGHT, RIGHT, PICKED_UP = range(5)
COUNTERS = 5
# A counter is one character of `Game.tally`: 0-61 are these, one byte in UTF-8; 62 and more
# are chr(value + _WIDE) from U+0100, two bytes up to 1853, three beyond (a counter stops below
# the surrogates, at `TALLY_MAX`, far beyond any game).
DIGITS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_VALUES = {c: i for i, c in enumerate(DIGITS)}
_WIDE = 0x100 - len(DIGITS)
TALLY_MAX = 0xD7FF - _WIDE


def digit(number: int) -> str:
    """A number as one character: one of `DIGITS`, or from U+0100 on (also `engine.memory`'s)."""
    return DIGITS[number] if number < len(DIGITS) else chr(min(number, TALLY_MAX) + _WIDE)


def value(char: str) -> int:
    """The number `digit` wrote as `char`."""
    number = _VALUES.get(char)
    return ord(char) - _WIDE if number is None else number


def counter(game: Game, which: int, seat: int) -> int:
    """The reveal's counter `which` (`PLAYS`, `LIES`, ...) of `seat`; 0 when not kept."""
    tally = game.tally or ""
    i = which * len(game.ids) + seat
    return value(tally[i]) if i < len(tally) else 0


def counters(game: Game) -> list[list[int]]:
    """Every counter of every seat, counter by counter in `PLAYS`, `LIES`, ... order and seat
    by seat within each (`counter` for each): the tally read once, as the reveal shows them
    all."""
    n = len(game.ids)
    values = _VALUES
    read = [values[c] if c in values else ord(c) - _WIDE for c in game.tally or ""]
    read += [0] * (COUNTERS * n - len(read))
    return [read[which * n : which * n + n] for which in range(COUNTERS)]


def boldest_bluff(game: Game) -> tuple[int, int, int] | None:
    """The boldest bluff that stood so far: (seat, cards played, rank called), or None."""
    if not game.boldest:
        return None
    rest, seat = divmod(game.boldest - 1, MAX_PLAYERS)
    rank, cards = divmod(rest, MAX_PLAY)
    return seat, cards + 1, rank


def add(g: Game, which: int, seat: int, by: int = 1) -> None:
    """Count `by` more of counter `which` for `seat` (nothing for a game begun without them)."""
    tally = g.tally
    if tally is None:
        return
    i = which * len(g.ids) + seat
    if i >= len(tally):
        tally += "0" * (i + 1 - len(tally))
    char = tally[i]
    value = _VALUES.get(char)
    # `value` and `digit` written out: a play counts twice, and every move pays for it.
    value = (ord(char) - _WIDE if value is None else value) + by
    digit = DIGITS[value] if value < len(DIGITS) else chr(min(value, TALLY_MAX) + _WIDE)
    g.tally = tally[:i] + digit + tally[i + 1 :]


def stood(g: Game) -> None:
    """The most recent play can no longer be challenged: a lie in it stood."""
    last = g.last
    if last is None or not is_lie(last.cards, last.rank):
        return
    cards = count(last.cards)
    bold = boldest_bluff(g)
    if bold is None or cards > bold[1]:  # the earliest stays on a tie
        g.boldest = 1 + last.seat + MAX_PLAYERS * (cards - 1 + MAX_PLAY * last.rank)
