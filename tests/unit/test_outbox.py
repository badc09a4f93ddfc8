"""The outbox: a moment's parcel round-trips through the stored document, carries the events
its message names, and is taken by exactly the sender whose turn it is."""

from __future__ import annotations

import json

from engine import Phase, open_table
from engine import events as ev
from handlers import outbox
from handlers.outbox import GRACE, Parcel
from handlers.store import Record

CALLED = ev.Called(101, 2, 5, 7, True)
FINAL = ev.FinalPlay(101, 102, 1045.5, 7)
CHALLENGED = ev.Challenged(102, 101, 7, 5, 0b1011, True, 101, 3, False, 102)
CHALLENGED_REST = [7, 5, 0b1011, True, 1, 3, False, 0]  # after its accuser and player
STAND = ev.LetStand(101, None)
WON = ev.Won(101, (101, -1, 102))
STOPPED = ev.Stopped(None, ev.StopReason.VOTE)
PASSED = ev.DecisionPassed(103, 1090.0)


def test_every_moment_round_trips_through_the_stored_document() -> None:
    events = (CALLED, FINAL, CHALLENGED, STAND, ev.Forfeited(103, True), WON, STOPPED, PASSED)
    parcels = [Parcel(33, 912, 1000, events), Parcel(70, None, 1003, (CHALLENGED,))]
    # Seated players are stored as seats; an id no seat has (here -1, or all with no game) as
    # itself.
    for seats in ((), (102, 101, 103)):
        stored = json.loads(json.dumps(outbox.encode(parcels, seats)))
        assert outbox.decode(stored, seats) == parcels
    assert outbox.encode(parcels, (102, 101, 103))[1] == [
        37,
        None,
        3,
        [[0, 0, 1, *CHALLENGED_REST]],
    ]
    record = Record(-100, game=open_table(101, 1000.0, "Ann"), outbox=parcels)
    again = Record(-100)
    again.read_document(record.document())
    assert again.outbox == parcels


def test_an_outbox_stored_with_ids_still_reads() -> None:
    # As items written before the outbox stored seats hold it.
    stored = [
        [
            33,
            912,
            1000,
            [[0, 102, 101, 7, 5, 11, True, 101, 3, False, 102], [3, 101, [101, -1, 102]]],
        ]
    ]
    assert outbox.decode_ids(stored[0]) == Parcel(33, 912, 1000, (CHALLENGED, WON))
    record = Record(-100)
    document = json.loads(record.document())
    record.read_document(json.dumps({**document, "ob": stored}))
    assert record.outbox == [Parcel(33, 912, 1000, (CHALLENGED, WON))]


def test_a_parcel_carries_what_its_message_names_and_nothing_else() -> None:
    started = ev.Started((101, 102))
    found = outbox.parcels([started, CALLED, FINAL])
    assert found == [(CALLED, FINAL)], "a final play names its call"
    found = outbox.parcels([CHALLENGED, ev.TurnPassed(102)])
    assert found == [(CHALLENGED,)]
    # The end names how it was won: the challenge before it is a moment of its own too.
    found = outbox.parcels([CHALLENGED, WON])
    assert found == [(CHALLENGED,), (CHALLENGED, WON)]
    assert outbox.parcels([STAND, WON]) == [(STAND, WON)]
    assert outbox.parcels([ev.Voted(101, 1, 2), ev.Joined(5, "x")]) == []


def test_who_takes_a_parcel() -> None:
    unmarked = Parcel(16, 912, 1000, (CHALLENGED,))
    # Given up after the write (a flood limit): anyone, at once; sent: nobody.
    assert outbox.ours_to_send(unmarked, {16: False}, None, 1000)
    assert not outbox.ours_to_send(unmarked, {16: True}, 912, 1000 + GRACE)
    # Not marked yet: its writer may still be sending. The same update delivered again (its
    # first delivery died) takes it; anyone else once the writer must be gone.
    assert outbox.ours_to_send(unmarked, {}, 912, 1001)
    assert not outbox.ours_to_send(unmarked, {}, 913, 1001)
    assert not outbox.ours_to_send(unmarked, {}, None, 1000 + GRACE - 1)
    assert outbox.ours_to_send(unmarked, {}, None, 1000 + GRACE)


def test_a_decision_already_taken_is_not_asked_for_late() -> None:
    game = open_table(101, 1000.0, "Ann")
    final = Parcel(16, 912, 1000, (CALLED, FINAL))
    assert game.phase is not Phase.DECIDE
    assert outbox.stale(final, game), "the final play was settled: its buttons would be refused"
    assert not outbox.stale(Parcel(17, 912, 1000, (CHALLENGED,)), game), "a challenge stays"
    packed = outbox.pack([final], {}, game, [], 1000.0, version=0, room=18)
    assert (packed.outbox, packed.taken) == ((), ())
