"""What a write owes the group: its moments (a challenge, a final play, a decision passed on, the
end), kept in the same conditional write as the move, until they are delivered.

A write commits before anything is sent: the container may die before sending (Telegram then
delivers the update again), or the group's minute may be spent. So each moment is a parcel in the
record's document: the few events its message is rendered from, never its text. After sending,
a mark beside the document (outside the version) says per parcel whether it went out or was given
up; the next write drops the delivered ones. Whoever finds a parcel owed sends it, and takes it
in its own conditional write (a new stamp), so that one sender only ever holds it:

- given up (a flood limit, a server error): anyone, at once (the timer is set for it);
- not marked yet: the update that wrote it when Telegram delivers it again (its first delivery
  died), or anyone once its writer must have finished (`GRACE`), which a living writer has.
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from engine import Game, Phase
from engine import events as ev
from handlers import announcements
from handlers.callbacks import Place
from handlers.screens import Screen

if TYPE_CHECKING:
    from handlers.store import Record

# Longer than any handler may run (the timer function's timeout): a parcel whose writer left
# no mark by then was never sent.
GRACE = 30.0
PER_WRITE = 16  # stamps: the new version times this, plus the parcel's place in the write

# The events a moment's message is drawn from, and the ones before it that its message names.
_MOMENTS = (ev.Challenged, ev.FinalPlay, ev.DecisionPassed, ev.Won, ev.Stopped)
_CONTEXT = {ev.FinalPlay: (ev.Called,), ev.Won: (ev.LetStand, ev.Challenged, ev.Forfeited)}
_KINDS: tuple[type, ...] = (*_MOMENTS, ev.Called, ev.LetStand, ev.Forfeited)


@dataclass(frozen=True, slots=True)
class Parcel:
    """One moment owed the group. `stamp` names it in the sent marks; `update` is the update
    that wrote it (None: the timer), `at` when it was taken (whole seconds)."""

    stamp: int
    update: int | None
    at: int
    events: tuple[ev.Event, ...]


def parcels(events: Sequence[ev.Event]) -> list[tuple[ev.Event, ...]]:
    """Each moment among `events` with the earlier events its message names."""
    found: list[tuple[ev.Event, ...]] = []
    for i, event in enumerate(events):
        if not isinstance(event, _MOMENTS):
            continue
        wanted = _CONTEXT.get(type(event), ())
        context = next((e for e in reversed(events[:i]) if isinstance(e, wanted)), None)
        found.append((event,) if context is None else (context, event))
    return found


def pack(
    record: Record,
    events: Sequence[ev.Event],
    now: float,
    *,
    silent: bool = False,
    update_id: int | None = None,
    mine: Set[int] = frozenset(),
    new_game: bool = False,
) -> tuple[list[Parcel], list[Parcel]]:
    """The record's outbox after the write, and the parcels the write takes to send: the owed
    ones that are this sender's (`mine`: the stamps its update wrote, as first read), then the
    write's own moments. The outbox holds the parcels someone else still holds, and these,
    stamped anew. The record is left as it is."""
    if silent or record.game is None or new_game:
        # Nobody can be told any more; or a new game replaced the one the moments were drawn
        # from (its names and counters are gone with it).
        return [], []
    taken: list[tuple[ev.Event, ...]] = []
    held: list[Parcel] = []
    for parcel in record.outbox:
        if record.marks.get(parcel.stamp) or stale(parcel, record.game):
            continue  # delivered, or a decision already taken: this write drops it
        ours = update_id if parcel.stamp in mine else None
        if ours_to_send(parcel, record.marks, ours, now):
            taken.append(parcel.events)
        else:
            held.append(parcel)
    retaken = len(taken)
    taken += parcels(events)
    first = (record.version + 1) * PER_WRITE
    fresh = [
        # Taken again, a parcel is no update's own: one delivery of it holds it at a time.
        Parcel(first + i, None if i < retaken else update_id, int(now), e)
        for i, e in enumerate(taken)
    ]
    return held + fresh, fresh


def stale(parcel: Parcel, game: Game) -> bool:
    """Whether the parcel asks for a decision (Liar! or Let it stand) no longer awaited: sent
    late, its buttons would only be refused."""
    match parcel.events[-1]:
        case ev.FinalPlay(play=play):
            return game.phase is not Phase.DECIDE or game.plays != play
        case ev.DecisionPassed(decider=decider):
            return game.phase is not Phase.DECIDE or game.awaited != decider
    return False


def screen(parcel: Parcel, game: Game, place: Place, lang: str, now: float) -> Screen:
    """The parcel's message, drawn from its events and the game as it is now."""
    return announcements.messages(parcel.events, game, place, lang, now)[-1]


def ours_to_send(parcel: Parcel, marks: dict[int, bool], update_id: int | None, now: float) -> bool:
    """Whether the parcel is owed and is this sender's to take (see the module's docstring)."""
    if parcel.stamp in marks:
        return not marks[parcel.stamp]
    return (update_id is not None and parcel.update == update_id) or now - parcel.at >= GRACE


# --- the stored form: [stamp, update, at, [[kind, *values], ...]] ---------------------------


def encode(parcel: Parcel) -> list[Any]:
    return [parcel.stamp, parcel.update, parcel.at, [_encode_event(e) for e in parcel.events]]


def decode(value: list[Any]) -> Parcel:
    stamp, update, at, events = value
    return Parcel(stamp, update, at, tuple(_decode_event(e) for e in events))


def _encode_event(event: ev.Event) -> list[Any]:
    values = [getattr(event, f.name) for f in fields(event)]
    values = [list(v) if isinstance(v, tuple) else v for v in values]
    return [_KINDS.index(type(event)), *values]


def _decode_event(value: list[Any]) -> ev.Event:
    kind: Any = _KINDS[value[0]]
    values = [tuple(v) if isinstance(v, list) else v for v in value[1:]]
    if kind is ev.Stopped:
        values[1] = ev.StopReason(str(values[1]))
    event: ev.Event = kind(*values)
    return event
