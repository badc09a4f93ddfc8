"""The stored form of a game: a compact, versioned, JSON-compatible list that round-trips.

A flat list, version first, fields in a fixed order: no key is stored, cards are 52-bit masks,
so an 8-player game stays around half a kilobyte (one DynamoDB write unit is 1 KB), and
decoding is one unpacking, cheap enough to run on every game action. Bump `VERSION` and keep a
reader for the old form when the fields change.
"""

from __future__ import annotations

from typing import Any

from engine.cards import FULL_DECK
from engine.game import MAX_PLAYERS, Game, LastPlay, Phase

VERSION = 1

_INT = frozenset({int})  # exact types: bool is an int subclass and has no place here
_STR = frozenset({str})
_PHASES = tuple(Phase)


class CodecError(ValueError):
    """The stored value is not a game this version can read."""


def encode(game: Game) -> list[Any]:
    last = game.last
    return [
        VERSION,
        game.opener,
        game.updated,
        int(game.phase),
        list(game.ids),
        list(game.names),
        game.hands.copy(),
        game.bullets.copy(),
        game.out.copy(),
        game.pile,
        game.aside,
        game.rank,
        game.turn,
        game.plays,
        None if last is None else [last.play, last.seat, last.cards, last.rank],
        game.shouted,
        game.deadline,
        game.winner,
    ]


def decode(value: Any) -> Game:
    try:
        return _decode(value)
    except CodecError:
        raise
    except (TypeError, ValueError, IndexError) as e:
        raise CodecError(f"malformed game: {e!r}") from e


def _decode(value: Any) -> Game:
    if type(value) is not list or not value or value[0] != VERSION:
        raise CodecError("unknown codec version")
    (
        _,
        opener,
        updated,
        phase,
        ids,
        names,
        hands,
        bullets,
        out,
        pile,
        aside,
        rank,
        turn,
        plays,
        last,
        shouted,
        deadline,
        winner,
    ) = value
    if not (
        set(map(type, ids)) <= _INT
        and set(map(type, names)) <= _STR
        and set(map(type, hands)) <= _INT
        and set(map(type, bullets)) <= _INT
        and set(map(type, out)) <= _INT
        and type(phase) is int
        and 0 <= phase < len(_PHASES)
    ):
        raise CodecError("malformed game")
    seats = len(ids)
    if len(names) != seats or seats > MAX_PLAYERS or len(hands) not in (0, seats):
        raise CodecError("seats do not match")
    if hands and (len(bullets) != seats or min(hands) < 0 or max(hands) > FULL_DECK):
        raise CodecError("not a dealt table")
    if last is not None:
        last = LastPlay(*last)
    return Game(
        opener,
        float(updated),
        _PHASES[phase],
        tuple(ids),
        tuple(names),
        hands.copy(),
        bullets.copy(),
        out.copy(),
        pile,
        aside,
        rank,
        turn,
        plays,
        last,
        shouted,
        None if deadline is None else float(deadline),
        winner,
    )
