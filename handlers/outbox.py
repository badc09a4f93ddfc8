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

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, fields
from typing import Any, NamedTuple

from engine import Game, Phase
from engine import events as ev
from handlers import announcements
from handlers.callbacks import Place
from handlers.screens import Screen

# Longer than any handler may run (the timer function's timeout): a parcel whose writer left
# no mark by then was never sent.
GRACE = 30.0
# Stamps: the new version times this, plus the parcel's place in the write. A write stamps at
# most this many (what it takes to send, within a minute's room, and its own new moments), so
# no two writes ever give the same stamp, and no mark left by one can name another's parcel.
PER_WRITE = 32
# The most parcels an outbox holds: beyond them the oldest challenges are dropped (the table's
# note tells the latest; a game's end is never dropped). What the item holds beside a game of 8
# and a spent minute's budget, within one write unit: computer players that challenge every
# other move fill the outbox as fast as the minute empties it.
MOST_HELD = 2

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


class Packed(NamedTuple):
    """What a write does with the outbox: what it stores, what it sends now, and the marks it
    changes."""

    outbox: tuple[Parcel, ...]  # the outbox as written
    taken: tuple[Parcel, ...]  # the parcels it sends now, stamped anew (in `outbox`)
    given_up: tuple[int, ...]  # stamps of its own moments it cannot send now: owed to anyone
    dropped: tuple[int, ...]  # the marks it no longer carries a parcel for, by stamp: they go


EMPTY = Packed((), (), (), ())


def pack(
    outbox: Sequence[Parcel],
    marks: Mapping[int, bool],
    game: Game | None,
    events: Sequence[ev.Event],
    now: float,
    *,
    version: int,
    room: int,
    update_id: int | None = None,
    mine: Set[int] = frozenset(),
) -> Packed:
    """The outbox of a write on `version` that sends at most `room` moments: the owed parcels
    that are this sender's (`mine`: the stamps its update wrote, as first read), then the
    write's own moments, are taken up to `room`, stamped anew; its own moments beyond it are
    stored owed to anyone (the timer sends them once the minute has room), others' parcels kept
    as they are. Nothing taken or kept with no game (gone, or a new one whose names and counters
    the moments no longer match)."""
    if game is None:
        return EMPTY._replace(dropped=tuple(sorted(marks)))
    held: list[Parcel] = []
    owed: list[Parcel] = []
    for parcel in outbox:
        if marks.get(parcel.stamp) or stale(parcel, game):
            continue  # delivered, or a decision already taken: this write drops it
        ours = update_id if parcel.stamp in mine else None
        (owed if ours_to_send(parcel, marks, ours, now) else held).append(parcel)
    new = parcels(events)
    taken = owed[:room]
    fresh_new = new[max(0, room - len(taken)) :]  # its own moments with no room now
    told = [p.events for p in taken] + new[: max(0, room - len(taken))]
    first = (version + 1) * PER_WRITE
    assert len(told) + len(fresh_new) <= PER_WRITE, "a write sends at most a minute's room"
    # Taken again, a parcel is no update's own: one delivery of it holds it at a time.
    stamped = [
        Parcel(first + i, None if i < len(taken) else update_id, int(now), e)
        for i, e in enumerate(told)
    ]
    waiting = [
        Parcel(first + len(told) + i, update_id, int(now), e) for i, e in enumerate(fresh_new)
    ]
    kept = _fold([*held, *owed[room:], *stamped, *waiting])
    carried = {p.stamp for p in kept}
    # The marks of parcels no longer carried go (a mark that lands later names a stamp no write
    # gives again, and goes with the next write).
    dropped = sorted(set(marks) - carried)
    given_up = tuple(p.stamp for p in waiting if p.stamp in carried)
    taken_kept = tuple(p for p in stamped if p.stamp in carried)
    return Packed(tuple(kept), taken_kept, given_up, tuple(dropped))


def _fold(outbox: list[Parcel]) -> list[Parcel]:
    """At most `MOST_HELD` parcels: the oldest challenges go first; a game's end stays."""
    excess = len(outbox) - MOST_HELD
    if excess <= 0:
        return outbox
    challenges = [i for i, p in enumerate(outbox) if isinstance(p.events[-1], ev.Challenged)]
    gone = set(challenges[:excess])
    return [p for i, p in enumerate(outbox) if i not in gone]


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


def ours_to_send(
    parcel: Parcel, marks: Mapping[int, bool], update_id: int | None, now: float
) -> bool:
    """Whether the parcel is owed and is this sender's to take (see the module's docstring)."""
    if parcel.stamp in marks:
        return not marks[parcel.stamp]
    return (update_id is not None and parcel.update == update_id) or now - parcel.at >= GRACE


# --- the stored form ------------------------------------------------------------------------
# [stamp, update, at, [[kind, *values], ...]] a parcel. Held for a minute the group has no room
# in, a dozen of them fill most of the item: so a player is stored as their seat (an index into
# the game's ids; an id no seat has, such as an administrator's, as a string), and after the
# first parcel the stamp and the time as differences from the parcel before.

_WHO = frozenset({"accuser", "player", "loser", "next_player", "decider", "winner", "by"})


def encode(parcels: Sequence[Parcel], seats: Sequence[int]) -> list[Any]:
    """The outbox as the document stores it, for a game seating `seats`."""
    index = {p: i for i, p in enumerate(seats)}
    stored: list[Any] = []
    stamp = at = 0
    for parcel in parcels:
        events = [_encode_event(e, index) for e in parcel.events]
        stored.append([parcel.stamp - stamp, parcel.update, parcel.at - at, events])
        stamp, at = parcel.stamp, parcel.at
    return stored


def decode(stored: Sequence[list[Any]], seats: Sequence[int]) -> list[Parcel]:
    parcels: list[Parcel] = []
    stamp = at = 0
    for dstamp, update, dat, events in stored:
        stamp, at = stamp + dstamp, at + dat
        parcels.append(Parcel(stamp, update, at, tuple(_decode_event(e, seats) for e in events)))
    return parcels


def decode_ids(value: list[Any]) -> Parcel:
    """A parcel as items written before seats were stored hold it (ids, absolute numbers)."""
    stamp, update, at, events = value
    return Parcel(stamp, update, at, tuple(_decode_event(e, None) for e in events))


def _who(value: int | None, index: Mapping[int, int]) -> int | str | None:
    return value if value is None else index.get(value, str(value))


def _encode_event(event: ev.Event, index: Mapping[int, int]) -> list[Any]:
    values: list[Any] = []
    for f in fields(event):
        value = getattr(event, f.name)
        if f.name in _WHO:
            values.append(_who(value, index))
        elif f.name == "ranking":
            values.append([_who(p, index) for p in value])
        else:
            values.append(value)
    return [_KINDS.index(type(event)), *values]


def _decode_event(value: list[Any], seats: Sequence[int] | None) -> ev.Event:
    kind: Any = _KINDS[value[0]]
    values: list[Any] = []
    for f, stored in zip(fields(kind), value[1:], strict=True):
        if f.name in _WHO:
            values.append(_seated(stored, seats))
        elif f.name == "ranking":
            values.append(tuple(_seated(p, seats) for p in stored))
        else:
            values.append(stored)
    if kind is ev.Stopped:
        values[1] = ev.StopReason(str(values[1]))
    event: ev.Event = kind(*values)
    return event


def _seated(value: int | str | None, seats: Sequence[int] | None) -> int | None:
    """A player as stored: a seat, or an id (a string; with no seats, as ids were stored)."""
    if value is None or seats is None:
        return None if value is None else int(value)
    return int(value) if isinstance(value, str) else seats[value]
