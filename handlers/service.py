"""The transaction: read a chat's record once, decide, plan, write once on the version read, send
the plan, keep what sending taught by one write more; then run what it leaves to follow.

On a conflict (someone wrote since the read) the act is decided again on a fresh read, so two
racing presses are settled by the conditional write, never by luck. An update already applied
(Telegram retries until it gets a 200) changes nothing and only redraws. Nothing raises once a
write has committed: a failed send, timer or bookkeeping write is logged, and the next update
heals what it left stale.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

import telegram
from telegram import CallbackQuery

from handlers import item, metrics, plan, telegram_io, timing
from handlers.acts import Abandon, Redraw
from handlers.item import Write
from handlers.learn import Learned, learned
from handlers.outbox import GRACE
from handlers.outcomes import Act, Decision, Outcome, Recordless, Result, Via
from handlers.plan import Plan
from handlers.screens import Answer, Request
from handlers.store import RECENT_UPDATES, Change, Conflict, Record, Store

LOGGER = logging.getLogger("menteur")

MAX_ATTEMPTS = 6  # conditional-write conflicts tolerated before asking Telegram to retry


class Busy(Exception):
    """The chat's item kept changing under us, or the store failed: nothing was committed."""


class Timers(Protocol):
    def schedule(self, chat: int, at: float, now: float, topic: int | None = None) -> None:
        """Have the timer look at `chat` (its forum `topic`) at `at` seconds, give or take one."""
        ...


@dataclass(frozen=True, slots=True)
class Work:
    """One transaction to run: `act` on the record of `chat` (its forum `topic`). `update_id`
    (None for the timer and what follows an update) makes a repeated update a duplicate;
    `query` is the button press to answer; `timer` the moment a timer's look was set for;
    `moved_from`: the chat whose game the store moves here first (a group that became a
    supergroup)."""

    chat: int
    act: Act
    update_id: int | None = None
    topic: int | None = None
    query: CallbackQuery | None = None
    action: str = ""
    via: Via | None = None
    timer: float | None = None
    moved_from: int | None = None


@dataclass(frozen=True, slots=True)
class _Attempt:
    """A decision planned and written (or refused, to tell later whether it landed anyway)."""

    record: Record  # as written: its version and its writer's token
    decision: Decision
    plan: Plan
    looked: float | None  # the timer's next look as read

    def landed(self, stored: Record) -> bool:
        """Whether `stored` is this attempt's write: its version, and its writer's token (the
        same update handled at once by two containers may write the very same document)."""
        return (stored.version, stored.writer) == (self.record.version, self.record.writer)


def written(  # noqa: PLR0917 - the transaction's one call, and the item benchmark's
    record: Record,
    decision: Decision,
    planned: Plan,
    now: float,
    update_id: int | None,
    writer: str,
    idle_expiry: float,
) -> Write:
    """The write of `decision` on `record` (as the act left it) by `writer`, with what its plan
    stores: the record as the write leaves it, said in this one place. `update_id`: the update
    it applies (None: the timer's, or a retried update's, which adds none)."""
    packed = planned.packed
    carried = {p.stamp for p in packed.outbox}
    updates = record.updates if update_id is None else [*record.updates, update_id]
    owed, owed_hands = record.owed, record.owed_hands and record.redrawn is None
    if planned.owe is not None:
        owed = max(owed or planned.owe, planned.owe)
    after = replace(
        record.forgotten() if decision.new_game else record,
        version=record.version + 1,
        note=planned.note,
        outbox=list(packed.outbox),
        marks={s: v for s, v in record.marks.items() if s in carried}
        | dict.fromkeys(packed.given_up, False),
        drawn=planned.drawn,
        looking=dict(planned.looking),
        pinged=dict(planned.pinged),
        updates=updates[-RECENT_UPDATES:],
        writer=writer,
        owed=owed,
        owed_hands=owed_hands,
        redrawn=None,
    )
    look = timing.next_look(after, idle_expiry)
    if planned.room is not None:
        look = planned.room if look is None else min(look, planned.room)
    expires = timing.expiry(after, now, idle_expiry)
    return Write(
        replace(after, next_look=look, expires=expires),
        now,
        new_game=decision.new_game,
        dropped=packed.dropped,
        given_up=packed.given_up,
        spent=planned.spent,
        owe=planned.owe,
        settles=record.redrawn,
        with_hands=record.owed_hands,
    )


class Service:
    """What every action needs (the store, the bot, the clock, the timers) and the transaction
    that uses them. `clock`, `sleep`, `rng` and `game_ids` are injected so that tests replay
    exactly."""

    def __init__(
        self,
        store: Store,
        bot: telegram.Bot,
        *,
        clock: Callable[[], float] = time.time,
        rng: random.Random | None = None,
        game_ids: random.Random | None = None,
        timers: Timers | None = None,
        idle_expiry: float = 86400.0,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        webhook_replies: bool = True,
    ) -> None:
        self.store = store
        self.bot = bot
        self.clock = clock
        self.rng = rng or random.Random()
        # A new game's id must be unguessable: drawn from the operating system's generator.
        self.game_ids = game_ids or secrets.SystemRandom()
        self.timers = timers
        self.idle_expiry = idle_expiry
        self.sleep = sleep
        # Through a webhook, a button's answer rides on the HTTP response: no extra request.
        self.webhook_replies = webhook_replies
        # Each write carries a token of its own, unique across containers (not game randomness:
        # `rng` may be seeded alike in two of them), to recognise it after a lost answer.
        self._writer = secrets.token_hex(5)
        self._writes = itertools.count()

    async def transact(
        self,
        chat: int,
        update_id: int | None,
        act: Act,
        *,
        topic: int | None = None,
        query: CallbackQuery | None = None,
        action: str = "",
        via: Via | None = None,
        timer: float | None = None,
    ) -> Outcome:
        """Decide `act` on the record of the chat (of its forum `topic`, for a game played in
        one), write it, send what it owes, keep what sending taught (see the module's
        docstring); then what that leaves to follow. An act that needs no record
        (`Recordless`) is decided and sent, with nothing read or written. Returns the act's
        outcome."""
        work = Work(chat, act, update_id, topic, query, action, via, timer)
        return await self.run(work)

    async def abandon(self, chat: int, topic: int | None, update_id: int | None = None) -> Outcome:
        """End the game of a chat (or topic) that no longer takes the bot's messages."""
        work = Work(chat, Abandon(), update_id, topic, action="abandon", via=Via.CLOSED)
        return await self.run(work)

    async def migrate(self, old: int, new: int) -> Outcome:
        """The group became a supergroup: its game moves to the new chat id, drawn anew there."""
        return await self.run(
            Work(new, Redraw(), action="migration", via=Via.MIGRATION, moved_from=old)
        )

    async def run(self, work: Work) -> Outcome:
        """`work`, then what each transaction leaves to follow, one after the other (none
        inside another's sends). A follow-up that fails is logged: the first one committed."""
        outcome, queue = await self._transact(work)
        while queue:
            follow = queue.pop(0)
            try:
                queue += (await self._transact(follow))[1]
            except Exception:
                LOGGER.warning("could not %s chat %s", follow.action, follow.chat, exc_info=True)
        return outcome

    async def _transact(self, work: Work) -> tuple[Outcome, list[Work]]:
        if work.moved_from is not None:
            self.store.move(work.moved_from, work.chat)
        via = work.via
        if via is None:
            via = (
                Via.PRESS if work.query else (Via.TIMER if work.update_id is None else Via.COMMAND)
            )
        outcome = Outcome(via, chat=work.chat, action=work.action, topic=work.topic)
        if isinstance(work.act, Recordless):
            record = Record(work.chat, work.topic)
            decision = work.act.decide(record, self.clock())
            attempt = _Attempt(record, decision, plan.without_record(decision, work.query), None)
        else:
            attempt = await self._commit(outcome, work)
            if outcome.conflicts:
                metrics.add("WriteConflicts", outcome.conflicts)
        record, decision, planned = attempt.record, attempt.decision, attempt.plan
        outcome.result, outcome.reason = decision.result, decision.reason
        outcome.next_look = record.next_look
        if planned.changes:
            metrics.game_events(
                record.game,
                decision.events,
                new_game=decision.new_game,
                removed=decision.chat_closed,
            )
        requests = list(planned.requests)
        if planned.answer is not None:
            outcome.reply = self.reply_or_request(planned.answer, requests)
        delivery = await telegram_io.deliver(self.bot, requests)
        outcome.telegram_requests = delivery.requests
        now = self.clock()
        taught = learned(record, decision, planned, delivery, now)
        for change in item.receipt(record, taught.kept, now):
            self._apply(change, "could not keep what sending taught")
        if taught.notices:
            await telegram_io.deliver(self.bot, taught.notices)
        if taught.kept.owed is not None:
            metrics.add("RedrawsOwed")
        self._wake(work, attempt, taught, outcome)
        return outcome, self._following(record, taught)

    async def _commit(self, outcome: Outcome, work: Work) -> _Attempt:
        """Load the record, decide, plan, and write it on the version read: again on a fresh
        read after a conflict. Returns the attempt that committed (or that wrote nothing)."""
        chat, topic, update_id = work.chat, work.topic, work.update_id
        refused: _Attempt | None = None  # the last attempt, when its write was refused
        mine: set[int] = set()
        for attempt in range(MAX_ATTEMPTS):
            now = self.clock()
            record = self.store.load(chat, topic)
            if refused is not None and refused.landed(record):
                # The write did land: its answer was lost, and the store client's own retry met
                # the version check. That attempt committed, and sends its plan.
                outcome.conflicts -= 1
                metrics.add("LostAnswersLanded")
                self._opened(refused)
                return refused
            if record.moving is not None:
                # The group became a supergroup while this update was on its way: finish the
                # move (it may be half-done) and act on the game where it now lives.
                self.store.move(chat, record.moving)
                chat = outcome.chat = record.moving
                continue
            before = record.game
            if attempt == 0 and update_id is not None:
                # Parcels this update wrote: its own to send again if its first delivery died.
                # Any stamped later were taken by another delivery of it, racing this one.
                mine = {p.stamp for p in record.outbox if p.update == update_id}
            duplicate = update_id is not None and update_id in record.updates
            if duplicate:
                # Redrawn as the act would, so a group that refuses the bot gets nothing more.
                closed = isinstance(work.act, Abandon)
                hands = plan.retried_hands(record, update_id)
                decision = Decision(result=Result.DUPLICATE, chat_closed=closed, hands=hands)
            else:
                decision = work.act.decide(record, now)
            looked = record.next_look
            planned = plan.of(
                before,
                record,
                decision,
                now,
                update_id=update_id,
                mine=mine,
                duplicate=duplicate,
                query=work.query,
            )
            if not planned.write:
                # A reply in a chat the bot never played in: only its time, in the budget.
                self._apply(item.budget(record, now, planned.spent), "could not count a reply")
                return _Attempt(record, decision, planned, looked)
            update = None if duplicate else update_id
            writer = f"{self._writer}.{next(self._writes):x}"
            write = written(record, decision, planned, now, update, writer, self.idle_expiry)
            committed = _Attempt(write.record, decision, planned, looked)
            first, *after = item.commit(write)
            try:
                self.store.apply(first)
            except Conflict:
                refused = committed
                outcome.conflicts += 1
                # Jitter, so that racing writers do not collide again in step.
                await self.sleep(self.rng.uniform(0.005, 0.02) * (attempt + 1))
                continue
            for change in after:
                self._apply(change, "could not count the group's messages")
            self._opened(committed)
            return committed
        raise Busy(f"chat {chat}: {MAX_ATTEMPTS} conflicting writes in a row")

    def _opened(self, attempt: _Attempt) -> None:
        """A new game opened in a forum topic is kept among the chat's topics."""
        record = attempt.record
        if attempt.decision.new_game and record.topic is not None:
            change = item.topic(record.chat, record.topic, record.expires)
            self._apply(change, f"could not keep topic {record.topic}")

    def _apply(self, change: Change, failure: str) -> None:
        """A write after the commit, or beside it: logged, never raised (the move is
        committed; at worst a message is sent again, or a budget short of a few messages costs
        a 429)."""
        if not change:
            return
        try:
            self.store.apply(change)
        except Conflict:
            # A condition failed: a new game replaced the one that sent (nothing of it is the
            # chat's any more), or the budget changed since the read (only added to, then).
            if change.otherwise is not None:
                self._apply(change.otherwise, failure)
        except Exception:
            LOGGER.warning("%s in chat %s", failure, change.key, exc_info=True)

    def _wake(self, work: Work, attempt: _Attempt, taught: Learned, outcome: Outcome) -> None:
        """Set the chat's timer, the one place that does: for the write's next look when it
        moved, for owed parcels this update took (in case it dies before sending them), for a
        redraw owed, and again for a look that came early (clocks differ by a little; a timer
        set for an older look is stale instead, and the one set for the new look will come)."""
        record, now = attempt.record, self.clock()
        look = record.next_look
        wake: set[float] = set()
        if look is not None and look != attempt.looked:
            wake.add(look)
        retaken = any(p.update is None for p in attempt.plan.packed.taken)
        if retaken and work.update_id is not None:
            wake.add(now + GRACE)
        if taught.kept.owed is not None:
            wake.add(taught.kept.owed)
        early = outcome.result is Result.NOTHING_DUE and look is not None and look > now
        if early and look is not None and work.timer is not None and abs(look - work.timer) < 0.001:
            wake.add(look)
        for at in sorted(wake):
            self.schedule(record.chat, at, now, record.topic)

    def schedule(self, chat: int, at: float, now: float, topic: int | None = None) -> None:
        """Set the chat's timer; a failure is logged, never raised (the move is committed)."""
        if self.timers is None:
            return
        try:
            self.timers.schedule(chat, at, now, topic)
        except Exception:
            # Raising would answer 500, and Telegram's retry would be a duplicate that never
            # sends this move's messages. The minute's sweep of overdue chats fires the game anyway.
            LOGGER.warning("could not set a timer for chat %s", chat, exc_info=True)

    @staticmethod
    def _following(record: Record, taught: Learned) -> list[Work]:
        """What sending leaves to follow: the game's end when the group (or the game's topic)
        refuses the bot now, and nothing more is sent there; its move when the group became a
        supergroup (a later update naming the new chat id moves it too, if this fails)."""
        if taught.closed:
            closed = Work(record.chat, Abandon(), topic=record.topic, action="abandon")
            return [replace(closed, via=Via.CLOSED)]
        if taught.moved is not None:
            moved = Work(taught.moved, Redraw(), action="migration", via=Via.MIGRATION)
            return [replace(moved, moved_from=record.chat)]
        return []

    def reply_or_request(self, answer: Answer, requests: list[Request]) -> dict[str, Any] | None:
        """The button's answer as the webhook's reply, or as one more request to send."""
        if self.webhook_replies:
            return telegram_io.webhook_reply(answer)
        requests.insert(0, answer)
        return None
