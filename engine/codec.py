"""The stored form of a game: a compact, versioned, JSON-compatible dict that round-trips.

Short keys and cards as 52-bit masks keep an 8-player game well under 1 KB, which is one
DynamoDB write unit. Bump `VERSION` and keep a reader for the old one when the form changes.
"""

from __future__ import annotations

from typing import Any

from engine.cards import FULL_DECK
from engine.game import MAX_PLAYERS, Game, LastPlay, Phase

VERSION = 1


class CodecError(ValueError):
    """The stored value is not a game this version can read."""


def encode(game: Game) -> dict[str, Any]:
    value: dict[str, Any] = {
        "v": VERSION,
        "o": game.opener,
        "u": game.updated,
        "ph": int(game.phase),
        "id": list(game.ids),
        "nm": list(game.names),
    }
    # Fields of a dealt game stay out until the deal (a lobby may also end undealt, R18).
    if game.hands:
        value |= {
            "h": game.hands,
            "b": game.bullets,
            "p": game.pile,
            "r": game.rank,
            "t": game.turn,
            "n": game.plays,
        }
        if game.out:
            value["out"] = game.out
        if game.aside:
            value["a"] = game.aside
        if game.last is not None:
            last = game.last
            value["l"] = [last.play, last.seat, last.cards, last.rank]
        if game.shouted >= 0:
            value["s"] = game.shouted
        if game.deadline is not None:
            value["d"] = game.deadline
        if game.winner >= 0:
            value["w"] = game.winner
    return value


def decode(value: Any) -> Game:
    try:
        return _decode(value)
    except CodecError:
        raise
    except (KeyError, TypeError, ValueError, IndexError) as e:
        raise CodecError(f"malformed game: {e!r}") from e


def _ints(value: Any) -> list[int]:
    if not isinstance(value, list) or not all(isinstance(x, int) for x in value):
        raise CodecError("expected a list of ints")
    return list(value)


def _decode(value: Any) -> Game:
    if not isinstance(value, dict) or value.get("v") != VERSION:
        raise CodecError("unknown codec version")
    ids = tuple(_ints(value["id"]))
    names = tuple(str(n) for n in value["nm"])
    if len(ids) != len(names) or len(ids) > MAX_PLAYERS:
        raise CodecError("seats do not match")
    game = Game(opener=int(value["o"]), updated=float(value["u"]), phase=Phase(value["ph"]))
    game.ids = ids
    game.names = names
    if "h" not in value:
        return game
    game.hands = _ints(value["h"])
    game.bullets = _ints(value["b"])
    if len(game.hands) != len(ids) or len(game.bullets) != len(ids):
        raise CodecError("seats do not match")
    if any(h < 0 or h & ~FULL_DECK for h in game.hands):
        raise CodecError("not a hand")
    game.pile = int(value["p"])
    game.rank = int(value["r"])
    game.turn = int(value["t"])
    game.plays = int(value["n"])
    game.out = _ints(value.get("out", []))
    game.aside = int(value.get("a", 0))
    if "l" in value:
        play, seat, cards, rank = _ints(value["l"])
        game.last = LastPlay(play, seat, cards, rank)
    game.shouted = int(value.get("s", -1))
    game.deadline = float(value["d"]) if "d" in value else None
    game.winner = int(value.get("w", -1))
    return game
