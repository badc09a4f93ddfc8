"""The stored form of a game: a compact, versioned, JSON-compatible list that round-trips.

A flat list, the version first, then the values of `Game`'s fields in their declared order
(`engine.state.FIELDS`): no key is stored, cards are 52-bit masks, so an 8-player game stays
around half a kilobyte (one DynamoDB write unit is 1 KB), and decoding is one pass, cheap
enough to run on every game action. When the fields change, bump `VERSION` and keep a reader
for the old form, as for versions 1 to 4 below.
"""

from __future__ import annotations

from typing import Any

from engine import memory
from engine.cards import DECK_SIZE, FULL_DECK, RANK_COUNT
from engine.state import (
    CLOCK_CHOICES,
    FIELDS,
    MAX_PLAY,
    MAX_PLAYERS,
    Game,
    LastPlay,
    Phase,
    values_of,
)
from engine.tally import COUNTERS

VERSION = 5

# Version 1 had version 2's fields in the same order, with -1 for "no seat" where version 2 has
# None (null). Version 3 added R20's clock, the turn count, the vote and the reveal's counters
# after them; version 4 when a player last acted (R18), after those; version 5 what the table saw
# (`engine.memory`), after that. Spelled out here because they must not follow `FIELDS` when that
# changes.
V1_FIELDS = V2_FIELDS = (
    "opener", "updated", "phase", "ids", "names", "hands", "bullets", "out", "pile", "aside",
    "rank", "turn", "plays", "last", "shouted", "deadline", "winner",
)  # fmt: skip
V3_FIELDS = (
    *V2_FIELDS, "turns", "clock", "ran_out", "votes", "tally", "boldest",
)  # fmt: skip
V4_FIELDS = (*V3_FIELDS, "acted")
_V1_SEATS = ("turn", "shouted", "winner")

_INT = frozenset({int})  # exact types: bool is an int subclass and has no place here
_STR = frozenset({str})
_NUMBER = frozenset({int, float})
_PHASES = tuple(Phase)
_BOLDEST = MAX_PLAYERS * MAX_PLAY * RANK_COUNT  # the packed bluff's greatest value

# The positions in `FIELDS` of the fields that are not stored as they are, or are checked.
_AT = {name: i for i, name in enumerate(FIELDS)}
_UPDATED, _PHASE, _IDS, _NAMES, _HANDS, _BULLETS, _OUT, _LAST, _DEADLINE = (
    _AT[name]
    for name in ("updated", "phase", "ids", "names", "hands", "bullets", "out", "last", "deadline")
)
_TURNS, _CLOCK, _RAN_OUT, _VOTES, _TALLY_AT, _BOLDEST_AT, _ACTED, _PUT, _SEEN = (
    _AT[name]
    for name in ("turns", "clock", "ran_out", "votes", "tally", "boldest", "acted", "put", "seen")
)


class CodecError(ValueError):
    """The stored value is not a game this version can read."""


def encode(game: Game) -> list[Any]:
    """The stored form of `game`: a new list, led by `VERSION`, sharing nothing mutable with it.

    Only ints, floats, strings, None and lists: `json.dumps` takes it as it is.
    """
    value = list(values_of(game))
    value[_PHASE] = int(game.phase)
    value[_IDS] = list(game.ids)
    value[_NAMES] = list(game.names)
    value[_HANDS] = game.hands.copy()
    value[_BULLETS] = game.bullets.copy()
    value[_OUT] = game.out.copy()
    value[_PUT] = game.put.copy()
    if game.last is not None:
        value[_LAST] = list(game.last)
    value.insert(0, VERSION)
    return value


def decode(value: Any) -> Game:
    """The game `encode` stored as `value`, in this version's form or an older one.

    Raises `CodecError` for anything else, whatever its shape.
    """
    try:
        return _decode(value)
    except CodecError:
        raise
    except (TypeError, ValueError, IndexError, KeyError) as e:
        raise CodecError(f"malformed game: {e!r}") from e


def _decode(value: Any) -> Game:
    if type(value) is not list or not value or type(value[0]) is not int:
        raise CodecError("unknown codec version")
    if value[0] == 1:
        value = _from_v1(value)
    if value[0] == 2:
        value = _from_v2(value)
    if value[0] == 3:
        value = _from_v3(value)
    if value[0] == 4:
        value = _from_v4(value)
    elif value[0] != VERSION:
        raise CodecError("unknown codec version")
    stored = value[1:]  # converted in place: the caller's value is left as it was
    if len(stored) != len(FIELDS):
        raise CodecError("malformed game")
    phase, ids, names, hands = stored[_PHASE], stored[_IDS], stored[_NAMES], stored[_HANDS]
    bullets, out, put = stored[_BULLETS], stored[_OUT], stored[_PUT]
    turns, ran_out, votes = stored[_TURNS], stored[_RAN_OUT], stored[_VOTES]
    tally, boldest, seen = stored[_TALLY_AT], stored[_BOLDEST_AT], stored[_SEEN]
    if not (
        set(map(type, [*ids, *hands, *bullets, *out, *put, turns, ran_out, votes, boldest])) <= _INT
        and set(map(type, names)) <= _STR
        and {type(stored[_UPDATED]), type(stored[_ACTED])} <= _NUMBER
        and type(phase) is int
        and 0 <= phase < len(_PHASES)
        and type(stored[_CLOCK]) is int
        and stored[_CLOCK] in CLOCK_CHOICES
        and turns >= 0
        and 0 <= boldest <= _BOLDEST
    ):
        raise CodecError("malformed game")
    seats = len(ids)
    if len(names) != seats or seats > MAX_PLAYERS or len(hands) not in (0, seats):
        raise CodecError("seats do not match")
    if not (0 <= ran_out < 1 << seats and 0 <= votes < 1 << seats):  # bits by seat
        raise CodecError("seats do not match")
    if tally is not None and (
        type(tally) is not str or len(tally) > COUNTERS * seats or not _is_tally(tally)
    ):
        raise CodecError("malformed counters")
    if hands and (len(bullets) != seats or min(hands) < 0 or max(hands) > FULL_DECK):
        raise CodecError("not a dealt table")
    if len(put) not in (0, len(hands)) or (put and (min(put) < 0 or max(put) > FULL_DECK)):
        raise CodecError("not a dealt table")
    if type(seen) is not str or len(seen) not in (0, DECK_SIZE) or not memory.readable(seen, seats):
        raise CodecError("malformed memory")
    stored[_PHASE] = _PHASES[phase]
    stored[_IDS] = tuple(ids)
    stored[_NAMES] = tuple(names)
    stored[_HANDS] = hands.copy()
    stored[_BULLETS] = bullets.copy()
    stored[_OUT] = out.copy()
    stored[_PUT] = put.copy()
    stored[_UPDATED] = float(stored[_UPDATED])
    stored[_ACTED] = float(stored[_ACTED])
    if stored[_DEADLINE] is not None:
        stored[_DEADLINE] = float(stored[_DEADLINE])
    if stored[_LAST] is not None:
        stored[_LAST] = LastPlay(*stored[_LAST])
    return Game(*stored)


def _is_tally(text: str) -> bool:
    """Counters only: ASCII letters and digits (`DIGITS` exactly), or U+0100 to U+D7FF. Not a
    regular expression, which every cold start would compile."""
    if text.isascii():
        return not text or text.isalnum()
    # The characters below U+0100, one byte each in Latin-1 (the wide ones dropped), must be
    # ASCII letters and digits: what `bytes.isalnum` accepts. Not a loop: every read asks.
    narrow = text.encode("latin-1", "ignore")
    return max(text) <= "\ud7ff" and (not narrow or narrow.isalnum())


def _from_v1(value: list[Any]) -> list[Any]:
    """A version 1 list in version 2's form."""
    if len(value) != 1 + len(V1_FIELDS):
        raise CodecError("malformed game")
    old = dict(zip(V1_FIELDS, value[1:], strict=True))
    for name in _V1_SEATS:
        if old[name] == -1:
            old[name] = None
    return [2, *(old[name] for name in V2_FIELDS)]


def _from_v2(value: list[Any]) -> list[Any]:
    """A version 2 list in this version's form: no clock (nobody chose one, nor was told of
    one); a game already begun counts its turns from its play number (which its buttons
    named) and has no counters for the reveal (they would tell only what happened after this
    reading)."""
    if len(value) != 1 + len(V2_FIELDS):
        raise CodecError("malformed game")
    old = dict(zip(V2_FIELDS, value[1:], strict=True))
    lobby = old["phase"] == Phase.LOBBY
    old.update(
        turns=0 if lobby else old["plays"],
        clock=0,
        ran_out=0,
        votes=0,
        tally="" if lobby else None,
        boldest=0,
    )
    return [3, *(old[name] for name in V3_FIELDS)]


def _from_v3(value: list[Any]) -> list[Any]:
    """A version 3 list in this version's form: the last change is the last act it knew of.
    With the clock off, its awaited person had no time for the vote (R18): as before, their
    vote is not needed until the next turn."""
    if len(value) != 1 + len(V3_FIELDS):
        raise CodecError("malformed game")
    old = dict(zip(V3_FIELDS, value[1:], strict=True))
    old["acted"] = old["updated"]
    return [4, *(old[name] for name in V4_FIELDS)]


def _from_v4(value: list[Any]) -> list[Any]:
    """A version 4 list in this version's form: nothing seen yet; the cards each seat put on
    the pile kept from the next empty pile on (none kept while the pile read holds any: whose
    they are was not written)."""
    if len(value) != 1 + len(V4_FIELDS):
        raise CodecError("malformed game")
    old = dict(zip(V4_FIELDS, value[1:], strict=True))
    hands = old["hands"]
    old.update(put=[0] * len(hands) if hands and not old["pile"] else [], seen="")
    return [VERSION, *(old[name] for name in FIELDS)]
