"""The conditional write of one act: read the chat's record, decide, plan, and write it once on
the version read; on a conflict (someone wrote since the read), all again on a fresh read, so
that two racing presses are settled by the conditional write, never by luck.

An update already applied (Telegram retries until it gets a 200) is decided again as a
duplicate, which changes nothing and only redraws. A write whose answer was lost, met by the
store client's own retry as a conflict, is recognised on the next read by its writer's token.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import secrets
from collections.abc import Awaitable, Callable
from typing import NamedTuple

from telegram import CallbackQuery

from handlers import item, logs, metrics, plan
from handlers.acts import Abandon
from handlers.outcomes import Act, Asking, Decision, Outcome, Result, Via
from handlers.plan import Plan
from handlers.questions import Questions
from handlers.store import Change, Conflict, Record, Store

LOGGER = logging.getLogger("menteur")

MAX_ATTEMPTS = 6  # conditional-write conflicts tolerated before asking Telegram to retry


class Busy(Exception):
    """The chat's item kept changing under us, or the store failed: nothing was committed."""


class Work(NamedTuple):
    """One transaction: `act` on the record of `chat` (its forum `topic`). `update_id` (None for
    the timer and what follows an update) makes a repeated update a duplicate; `query` is the
    press to answer; `timer` the moment a timer's look was set for; `moved_from`: the chat whose
    game the store moves here first (the group became a supergroup)."""

    chat: int
    act: Act
    via: Via
    action: str
    update_id: int | None = None
    topic: int | None = None
    query: CallbackQuery | None = None
    timer: float | None = None
    moved_from: int | None = None


class Attempt(NamedTuple):
    """A decision planned, and written (or refused: did it land anyway?) or needing no write."""

    record: Record  # as written: its version and its writer's token
    decision: Decision
    plan: Plan
    looked: float | None  # the timer's next look as read
    after: tuple[Change, ...] = ()  # the writes beside the commit (a topic's budget, the topic)

    def landed(self, stored: Record) -> bool:
        """Whether `stored` is this attempt's write: its version, and its writer's token (the
        same update handled at once by two containers may write the very same document)."""
        return (stored.version, stored.writer) == (self.record.version, self.record.writer)


class Writer:
    """Writes acts on the store: each write carries a token of its own, unique across
    containers (not game randomness: `rng` may be seeded alike in two of them), to recognise it
    after a lost answer; `rng` and `sleep` space out the retries of conflicting writes;
    `questions` answers an act that needs Telegram's word before it decides (`Asking`)."""

    def __init__(
        self,
        store: Store,
        questions: Questions,
        *,
        clock: Callable[[], float],
        rng: random.Random,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        idle_expiry: float = 86400.0,
        webhook_replies: bool = True,
    ) -> None:
        self.store, self.questions = store, questions
        self.clock, self.rng, self.sleep = clock, rng, sleep
        self.idle_expiry, self.webhook_replies = idle_expiry, webhook_replies
        self._token = secrets.token_hex(5)
        self._writes = itertools.count()

    async def commit(self, outcome: Outcome, work: Work) -> Attempt:
        """Load the record, decide, plan, and write it on the version read: again on a fresh
        read after a conflict. Returns the attempt that committed (or that wrote nothing)."""
        chat, topic, update_id = work.chat, work.topic, work.update_id
        refused: Attempt | None = None  # the last attempt, when its write was refused
        mine: set[int] = set()
        for attempt in range(MAX_ATTEMPTS):
            now = self.clock()
            record = self.store.load(chat, topic)
            if refused is not None and refused.landed(record):
                # The write did land: its answer was lost, and the store client's own retry met
                # the version check. That attempt committed, and sends its plan.
                outcome.conflicts -= 1
                metrics.add("LostAnswersLanded")
                return self._committed(refused)
            if record.moving is not None:
                # The group became a supergroup while this update was on its way: finish the
                # move (it may be half-done) and act on the game where it now lives.
                self.store.move(chat, record.moving)
                chat = outcome.chat = record.moving
                continue
            if attempt == 0 and update_id is not None:
                # Parcels this update wrote: its own to send again if its first delivery died.
                # Any stamped later were taken by another delivery of it, racing this one.
                mine = {p.stamp for p in record.outbox if p.update == update_id}
            before, looked = record.game, record.next_look
            duplicate = update_id is not None and update_id in record.updates
            if duplicate:
                # Redrawn as the act would, so a group that refuses the bot gets nothing more.
                hands, closed = plan.retried_hands(record, update_id), isinstance(work.act, Abandon)
                decision = Decision(result=Result.DUPLICATE, chat_closed=closed, hands=hands)
            else:
                act = work.act
                if isinstance(act, Asking):
                    # Telegram's word, where the record as read leaves the act open.
                    act = await act.ask(record, now, self.questions)
                decision = act.decide(record, now)
            planned = plan.of(
                before,
                record,
                decision,
                now,
                update_id=update_id,
                mine=mine,
                duplicate=duplicate,
                query=work.query,
                webhook=self.webhook_replies,
            )
            if not planned.write:
                # A reply in a chat the bot never played in: only its time, in the budget.
                self.apply(item.budget(record, now, planned.spent))
                return Attempt(record, decision, planned, looked)
            update, writer = None if duplicate else update_id, self._next_writer()
            write = plan.written(record, decision, planned, now, update, writer, self.idle_expiry)
            first, *after = item.commit(write)
            if decision.new_game and topic is not None:
                # Kept among the chat's topics, for whatever ends every game of the chat.
                after.append(item.topic(chat, topic, write.record.expires))
            committed = Attempt(write.record, decision, planned, looked, tuple(after))
            try:
                self.store.apply(first)
            except Conflict:
                refused = committed
                outcome.conflicts += 1
                # Jitter, so that racing writers do not collide again in step.
                await self.sleep(self.rng.uniform(0.005, 0.02) * (attempt + 1))
                continue
            return self._committed(committed)
        raise Busy(f"chat {logs.chat(chat)}: {MAX_ATTEMPTS} conflicting writes in a row")

    def _committed(self, attempt: Attempt) -> Attempt:
        """After the commit (at once, or found landed after a lost answer): the writes beside
        it, and the games it opened, started or ended counted."""
        for change in attempt.after:
            self.apply(change)
        decision = attempt.decision
        if attempt.plan.changes:
            events, closed = decision.events, decision.chat_closed
            metrics.game_events(
                attempt.record.game, events, new_game=decision.new_game, removed=closed
            )
        return attempt

    def _next_writer(self) -> str:
        return f"{self._token}.{next(self._writes):x}"

    def apply(self, change: Change) -> None:
        """A write after the commit, or beside it: logged, never raised (the move is committed;
        at worst a message goes again, or a budget short of a few messages costs a 429). A
        failed condition: a new game replaced the one that sent (nothing of it is the chat's any
        more), or the budget was added to since the read (`otherwise`: added to, then)."""
        if not change:
            return
        try:
            self.store.apply(change)
        except Conflict:
            if change.otherwise is not None:
                self.apply(change.otherwise)
        except Exception:
            LOGGER.warning("could not write beside chat %s's move", change.key, exc_info=True)
