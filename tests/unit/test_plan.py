"""Planning is pure: a plan of a move says what to send and what to store, and leaves the record
and the decision it was planned from as they were."""

from __future__ import annotations

import copy

from engine import Join, Start, apply, open_table
from handlers import item, plan
from handlers.outcomes import Decision
from handlers.plan import written
from handlers.screens import Screen, Send
from handlers.store import Record

T0 = 1_764_400_000.0
GROUP = -100


def a_started_game() -> tuple[Record, Decision]:
    """A record as an act leaves it: the game started by its write, with a reply besides."""
    game = open_table(101, T0, "Ann")
    game, _ = apply(game, Join(102, "Bob"), T0)
    before = game
    game, events = apply(game, Start(101, 7), T0 + 1)
    record = Record(GROUP, version=3, game=before, game_id=5, table_msg=40, note="old")
    record.sends = [T0 - 100, T0 - 10]
    record.game = game
    extra = [Send(GROUP, Screen("a reply"))]
    return record, Decision(write=True, events=list(events), extra=list(extra))


def test_a_plan_changes_neither_the_record_nor_the_decision() -> None:
    record, decision = a_started_game()
    before = open_table(101, T0, "Ann")
    record_then, decision_then = copy.deepcopy(record), copy.deepcopy(decision)
    planned = plan.of(before, record, decision, T0 + 1, update_id=912)
    assert record == record_then and decision == decision_then
    assert planned.write and planned.changes
    # What the write stores, the plan holds: the sends of the minute, the hands it drew.
    assert planned.spent == (T0 + 1,), "the reply counts in the group's budget"
    assert planned.retry_hands == 0b11, "both hands are drawn: a retry draws them again"
    write = written(record, decision, planned, T0 + 1, 912, "w.1", 86400.0)
    kept = write.record
    assert (kept.note, kept.retry_hands, kept.outbox) == (
        planned.note,
        0b11,
        list(planned.packed.outbox),
    )
    assert record == record_then, "the record as written is a new value"
    (change,) = item.commit(write)
    assert change.set["gs"] == item.times([T0 - 10, T0 + 1]), "the times out of the minute go"
    # The requests: the reply, the table edited in place, a hand for each player.
    kinds = [(type(r).__name__, getattr(r, "chat_id", None)) for r in planned.requests]
    assert kinds[0] == ("Send", GROUP) and ("Edit", GROUP) in kinds
    assert {chat for kind, chat in kinds if kind == "Send" and chat != GROUP} == {101, 102}


def test_an_act_without_a_record_plans_its_requests_and_nothing_to_store() -> None:
    reply = Send(7, Screen("help"))
    planned = plan.without_record(Decision(extra=[reply]), None)
    assert planned.requests == (reply,) and planned.webhook_reply is None
    assert not planned.write and planned.spent == () and planned.packed.taken == ()
