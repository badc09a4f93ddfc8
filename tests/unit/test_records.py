"""Records: the moves, events, views and the handlers' small values are frozen dataclasses with
slots, one system everywhere; what the engine and the bot rely on of them is checked here."""

from __future__ import annotations

import copy
import dataclasses
import importlib
import inspect
import pickle
from dataclasses import replace

import pytest

from engine import Join, Play, Stop
from engine import events as ev

# Every module that declares records of the engine or of the bot.
MODULES = (
    "engine.moves",
    "engine.events",
    "engine.view",
    "handlers.acts",
    "handlers.callbacks",
    "handlers.lobby",
    "handlers.outbox",
    "handlers.screens",
    "handlers.text",
)


def _records() -> list[type]:
    found = []
    for name in MODULES:
        module = importlib.import_module(name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == name and dataclasses.is_dataclass(cls):
                found.append(cls)
    return found


def test_every_record_is_a_frozen_slotted_dataclass() -> None:
    records = _records()
    assert len(records) >= 55, "the records of these modules are all found"
    for cls in records:
        params = cls.__dataclass_params__  # type: ignore[attr-defined]
        names = tuple(f.name for f in dataclasses.fields(cls))
        assert params.frozen and params.eq, cls
        assert cls.__slots__ == cls.__match_args__ == names, cls  # type: ignore[attr-defined]
        assert cls.__dict__.get("__hash__") is not None, cls  # hashed by value


def test_frozen_and_slotted() -> None:
    join = Join(1, "Ann")
    with pytest.raises(dataclasses.FrozenInstanceError):
        join.name = "Bob"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del join.name
    with pytest.raises((dataclasses.FrozenInstanceError, AttributeError, TypeError)):
        join.nickname = "A"  # type: ignore[attr-defined]
    assert not hasattr(join, "__dict__")
    assert Join.__slots__ == Join.__match_args__ == ("player", "name")


def test_fields_by_position_or_by_name_with_defaults() -> None:
    assert Stop(7) == Stop(player=7, admin=False) and Stop(7, True).admin
    assert Play(1, 2).turns is None and Play(1, 2, turns=3).turns == 3
    with pytest.raises(TypeError):
        Join(1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Join(1, "Ann", nickname="A")  # type: ignore[call-arg]


def test_equal_and_hashed_by_type_and_values() -> None:
    assert Join(1, "Ann") == Join(1, "Ann") and hash(Join(1, "Ann")) == hash(Join(1, "Ann"))
    assert Join(1, "Ann") != Join(1, "Bob")
    # Same values, different records: never equal (a tuple would be).
    forfeited: object = ev.Forfeited(1)
    assert forfeited != ev.TurnPassed(1) and forfeited != (1,) and forfeited == ev.Forfeited(1)
    assert len({Play(1, 2), Play(1, 2), Play(1, 2, 0)}) == 2


def test_repr_as_a_dataclass_writes_it() -> None:
    assert repr(Join(1, "Ann")) == "Join(player=1, name='Ann')"
    assert repr(Stop(7)) == "Stop(player=7, admin=False)"


def test_match_by_position() -> None:
    match ev.Called(5, 2, 12, 9, False):
        case ev.Called(player, count, rank, play, final):
            assert (player, count, rank, play, final) == (5, 2, 12, 9, False)
        case _:
            pytest.fail("no match")


def test_copied_pickled_and_replaced() -> None:
    won = ev.Won(3, (3, 1, 2))
    assert copy.copy(won) == copy.deepcopy(won) == pickle.loads(pickle.dumps(won)) == won
    assert replace(won, ranking=(3, 2, 1)) == ev.Won(3, (3, 2, 1))
    with pytest.raises(TypeError):
        replace(won, nobody=1)  # type: ignore[call-arg]
