"""The transaction: one act's conditional write (`handlers.commit`), its plan sent
(`handlers.telegram_io`), what sending taught (`handlers.learn`) kept by one write more, the
timer set; then, one after the other, what it leaves to follow.

Nothing raises once a write has committed: a failed send, timer or bookkeeping write is logged,
and the next update heals what it left stale.
"""

from __future__ import annotations

import asyncio
import logging
import random
import secrets
import time
from collections.abc import Awaitable, Callable

import telegram
from telegram import CallbackQuery

from handlers import item, metrics, plan, questions, telegram_io
from handlers.acts import Abandon, Redraw
from handlers.commit import Attempt, Busy, Work, Writer
from handlers.learn import Learned, learned
from handlers.outbox import GRACE
from handlers.outcomes import Act, Outcome, Recordless, Result, Via
from handlers.store import Record, Store
from handlers.timing import Timers

__all__ = ["Busy", "Service"]

LOGGER = logging.getLogger("menteur")


class Service:
    """What every action needs (the store, the bot, the clock, the timers) and the transaction
    that uses them. `clock`, `sleep`, `rng` and `game_ids` are given, so that tests replay."""

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
        self.questions = questions.Questions(bot, clock)  # what Telegram said, kept a while
        self.rng = rng or random.Random()
        # A new game's id must be unguessable: drawn from the operating system's generator.
        self.game_ids = game_ids or secrets.SystemRandom()
        self.timers = timers
        self.idle_expiry = idle_expiry
        # Through a webhook, a button's answer rides on the HTTP response: no extra request.
        self.webhook_replies = webhook_replies
        self.writer = Writer(
            store,
            self.questions,
            clock=clock,
            rng=self.rng,
            sleep=sleep,
            idle_expiry=idle_expiry,
            webhook_replies=webhook_replies,
        )

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
        """Decide `act` on the record of the chat (of its forum `topic`), write it, send what it
        owes, keep what sending taught; then what that leaves to follow. An act that needs no
        record (`Recordless`) is decided and sent, nothing read or written. Returns its outcome."""
        if via is None:
            via = Via.PRESS if query else (Via.TIMER if update_id is None else Via.COMMAND)
        return await self.run(Work(chat, act, via, action, update_id, topic, query, timer))

    async def abandon(self, chat: int, topic: int | None, update_id: int | None = None) -> Outcome:
        """End the game of a chat (or topic) that no longer takes the bot's messages."""
        return await self.run(Work(chat, Abandon(), Via.CLOSED, "abandon", update_id, topic))

    async def migrate(self, old: int, new: int) -> Outcome:
        """The group became a supergroup: its game moves to the new chat id, drawn anew there."""
        return await self.run(Work(new, Redraw(), Via.MIGRATION, "migration", moved_from=old))

    async def run(self, work: Work) -> Outcome:
        """`work`, then what each transaction leaves to follow, one after the other (none inside
        another's sends). A follow-up that fails is logged: the first one committed."""
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
        outcome = Outcome(work.via, chat=work.chat, action=work.action, topic=work.topic)
        if isinstance(work.act, Recordless):
            record = Record(work.chat, work.topic)
            decision = work.act.decide(record, self.clock())
            planned = plan.without_record(decision, work.query, webhook=self.webhook_replies)
            attempt = Attempt(record, decision, planned, None)
        else:
            attempt = await self.writer.commit(outcome, work)
            if outcome.conflicts:
                metrics.add("WriteConflicts", outcome.conflicts)
        record, decision, planned = attempt.record, attempt.decision, attempt.plan
        outcome.result, outcome.reason = decision.result, decision.reason
        outcome.next_look = record.next_look
        outcome.webhook_reply = planned.webhook_reply
        delivery = await telegram_io.deliver(self.bot, planned.requests)
        outcome.telegram_requests = delivery.requests
        now = self.clock()
        taught = learned(record, decision, planned, delivery, now)
        for change in item.receipt(record, taught.kept, now):
            self.writer.apply(change)
        if taught.notices:
            await telegram_io.deliver(self.bot, taught.notices)
        if taught.kept.owed is not None:
            metrics.add("RedrawsOwed")
        self._wake(work, attempt, taught, outcome)
        # What follows: the game's end when the group (or the topic) refuses the bot now; its
        # move when the group became a supergroup (a later update naming it moves it too).
        if taught.closed:
            return outcome, [
                Work(record.chat, Abandon(), Via.CLOSED, "abandon", None, record.topic)
            ]
        if taught.moved is not None:
            moved = Work(taught.moved, Redraw(), Via.MIGRATION, "migration", moved_from=record.chat)
            return outcome, [moved]
        return outcome, []

    def _wake(self, work: Work, attempt: Attempt, taught: Learned, outcome: Outcome) -> None:
        """Set the chat's timer, the one place that does: for the write's next look when it
        moved, for owed parcels this update took (in case it dies before sending them), for a
        redraw owed, and again for a look that came early (clocks differ by a little; a timer
        set for an older look is stale instead, and the one set for the new look will come).
        A failure is logged, never raised: a 500 would have Telegram retry a committed move,
        and the minute's sweep of overdue chats fires the game anyway."""
        record, now = attempt.record, self.clock()
        look = record.next_look
        wake = {look} if look is not None and look != attempt.looked else set()
        if work.update_id is not None and any(p.update is None for p in attempt.plan.packed.taken):
            wake.add(now + GRACE)
        if taught.kept.owed is not None:
            wake.add(taught.kept.owed)
        early = outcome.result is Result.NOTHING_DUE and look is not None and look > now
        if early and look is not None and work.timer is not None and abs(look - work.timer) < 1e-3:
            wake.add(look)
        for at in sorted(wake):
            try:
                if self.timers is not None:
                    self.timers.schedule(record.chat, at, now, record.topic)
            except Exception:
                LOGGER.warning("could not set a timer for chat %s", record.chat, exc_info=True)
