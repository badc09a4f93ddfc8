"""Records: what a frozen dataclass with slots gives, which moves, events and views rely on."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from engine import Join, Play, Stop
from engine import events as ev
from engine.records import record, replace


@record
class Sample:
    """A record of our own, defaults included."""

    player: int
    name: str
    turn: int | None = None
    admin: bool = False

    def shouted(self) -> str:
        return self.name.upper()


def test_fields_by_position_or_by_name_with_defaults() -> None:
    assert Sample(1, "Ann") == Sample(player=1, name="Ann", turn=None, admin=False)
    assert Sample(1, "Ann", 4).turn == 4 and Sample(1, "Ann", admin=True).admin
    assert Sample(1, "Ann").shouted() == "ANN", "methods of the class are kept"
    assert Sample.__doc__ == "A record of our own, defaults included."
    with pytest.raises(TypeError):
        Sample(1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Sample(1, "Ann", nickname="A")  # type: ignore[call-arg]


def test_frozen_and_slotted() -> None:
    join = Join(1, "Ann")
    with pytest.raises(dataclasses.FrozenInstanceError):
        join.name = "Bob"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del join.name
    with pytest.raises(dataclasses.FrozenInstanceError):
        join.nickname = "A"  # type: ignore[attr-defined]
    assert not hasattr(join, "__dict__")
    assert Join.__slots__ == Join.__match_args__ == ("player", "name")  # type: ignore[attr-defined]


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


def test_copied_pickled_and_replaced_through_init() -> None:
    won = ev.Won(3, (3, 1, 2))
    assert copy.copy(won) == copy.deepcopy(won) == pickle.loads(pickle.dumps(won)) == won
    assert replace(won, ranking=(3, 2, 1)) == ev.Won(3, (3, 2, 1))
    with pytest.raises(TypeError):
        replace(won, nobody=1)


def test_a_field_without_a_default_cannot_follow_one_with() -> None:
    with pytest.raises(TypeError, match="no default after"):

        @record
        class Wrong:
            turn: int = 0
            player: int  # type: ignore[misc]
