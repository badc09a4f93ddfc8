"""The transaction: read a chat's record once, decide, plan, write once on the version read,
then send the plan and learn from Telegram's answers.

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
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import telegram
from telegram import CallbackQuery

from handlers import logs, metrics, outbox, questions, telegram_io, timing
from handlers import plan as planning
from handlers.acts import Abandon, Redraw
from handlers.outbox import Parcel
from handlers.outcomes import Act, Asking, Decision, Outcome, Recordless, Result, Via
from handlers.plan import Plan
from handlers.render import name_of
from handlers.screens import Answer, Request, Screen, Send
from handlers.store import Conflict, Record, Store
from handlers.text import t

LOGGER = logging.getLogger("menteur")

MAX_ATTEMPTS = 6  # conditional-write conflicts tolerated before asking Telegram to retry


class Busy(Exception):
    """The chat's item kept changing under us, or the store failed: nothing was committed."""


@dataclass(frozen=True, slots=True)
class _Written:
    """An attempt whose conditional write was refused, kept to tell whether it landed anyway."""

    version: int  # the version it wrote
    writer: str  # its writer's token
    decision: Decision
    plan: Plan
    previous_look: float | None

    def landed(self, stored: Record) -> bool:
        """Whether `stored` is this attempt's write: its version, and its writer's token (the
        same update handled at once by two containers may write the very same document)."""
        return (stored.version, stored.writer) == (self.version, self.writer)


class Timers(Protocol):
    def schedule(self, chat: int, at: float, now: float, topic: int | None = None) -> None:
        """Have the timer look at `chat` (its forum `topic`) at `at` seconds, give or take one."""
        ...


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
        timers: Timers | None = None,
        idle_expiry: float = 86400.0,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        webhook_replies: bool = True,
        game_ids: random.Random | None = None,
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
    ) -> Outcome:
        """Decide `act` on the record of the chat (of its forum `topic`, for a game played in
        one), write it, send what it owes, and learn from the answers (see the module's
        docstring). An act that needs no record (`Recordless`) is decided and sent, with
        nothing read or written.

        `update_id` (None for the timer) makes a repeated update a duplicate; `query` is the
        button press to answer, with the refusal if any.
        """
        if via is None:
            via = Via.PRESS if query else (Via.TIMER if update_id is None else Via.COMMAND)
        outcome = Outcome(via, chat=chat, action=action, topic=topic)
        recordless = isinstance(act, Recordless)
        if recordless:
            record = Record(chat, topic)
            decision = act.decide(record, self.clock())
            plan = planning.reply(decision, query)
        else:
            record, decision, plan = await self._commit(outcome, update_id, act, query)
            if outcome.conflicts:  # here, so that a nested transaction's count too
                metrics.add("WriteConflicts", outcome.conflicts)
        outcome.result, outcome.reason = decision.result, decision.reason
        outcome.next_look = record.next_look
        if plan.changes:
            metrics.game_events(
                record.game, decision.events, new_game=decision.new_game, removed=decision.silent
            )
        await self._send(outcome, record, decision, plan, learn=not recordless)
        return outcome

    async def _commit(
        self, outcome: Outcome, update_id: int | None, act: Act, query: CallbackQuery | None
    ) -> tuple[Record, Decision, Plan]:
        """Load the record, decide, plan, and write it on the version read: again on a fresh
        read after a conflict. Returns the record as written (or read, when nothing was)."""
        chat, topic = outcome.chat, outcome.topic
        assert chat is not None
        refused: _Written | None = None  # the last attempt, when its write was refused
        mine: set[int] = set()
        for attempt in range(MAX_ATTEMPTS):
            now = self.clock()
            record = self.store.load(chat, topic)
            if refused is not None and refused.landed(record):
                # The write did land: its answer was lost, and the store client's own retry met
                # the version check. That attempt committed, and sends its plan.
                outcome.conflicts -= 1
                metrics.add("LostAnswersLanded")
                self._committed(
                    record, refused.decision, refused.plan, refused.previous_look, update_id
                )
                return record, refused.decision, refused.plan
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
                # Redrawn as the act would, so a group that removed the bot gets nothing more.
                hands = planning.retried_hands(record, update_id)
                silent = isinstance(act, Abandon)
                decision = Decision(result=Result.DUPLICATE, silent=silent, hands=hands)
            else:
                asked = (
                    await act.ask(record, now, self.questions) if isinstance(act, Asking) else act
                )
                decision = asked.decide(record, now)
            plan = planning.plan(
                before,
                record,
                decision,
                now,
                update_id=update_id,
                mine=mine,
                duplicate=duplicate,
                query=query,
            )
            if not plan.write:
                return record, decision, plan
            plan.keep(record)
            if update_id is not None and not duplicate:
                record.updates = [*record.updates, update_id]  # the store keeps the latest
            record.writer = f"{self._writer}.{next(self._writes):x}"
            previous_look = record.next_look
            record.next_look = timing.next_look(record, self.idle_expiry)
            if plan.room is not None:
                record.next_look = (
                    plan.room if record.next_look is None else min(record.next_look, plan.room)
                )
            record.expires = timing.expiry(record, now, self.idle_expiry)
            try:
                self.store.save(record, new_game=decision.new_game)
            except Conflict:
                refused = _Written(record.version + 1, record.writer, decision, plan, previous_look)
                outcome.conflicts += 1
                # Jitter, so that racing writers do not collide again in step.
                await self.sleep(self.rng.uniform(0.005, 0.02) * (attempt + 1))
                continue
            self._committed(record, decision, plan, previous_look, update_id)
            return record, decision, plan
        raise Busy(f"chat {logs.chat(chat)}: {MAX_ATTEMPTS} conflicting writes in a row")

    def _committed(
        self,
        record: Record,
        decision: Decision,
        plan: Plan,
        previous_look: float | None,
        update_id: int | None = None,
    ) -> None:
        """After a write that landed (at once, or found landed after a lost answer): the timer
        set, a new game's forum topic kept, and owed parcels this update took given a timer of
        their own, in case it dies before sending them."""
        chat, topic, now = record.chat, record.topic, self.clock()
        if record.next_look is not None and record.next_look != previous_look:
            self.schedule(chat, record.next_look, now, topic)
        if decision.new_game and topic is not None:
            self._add_topic(record)
        if any(p.update is None for p in plan.parcels) and update_id is not None:
            self.schedule(chat, now + outbox.GRACE, now, topic)

    async def _send(
        self, outcome: Outcome, record: Record, decision: Decision, plan: Plan, *, learn: bool
    ) -> None:
        """Send what the plan owes (the group's new messages counted first), then learn from
        Telegram's answers (`learn`: unless the act read no record): message ids, who cannot be
        reached, a chat that is gone."""
        chat, topic = record.chat, record.topic
        requests = list(plan.requests)
        if plan.answer is not None:
            outcome.reply = self.reply_or_request(plan.answer, requests)
        self._spend(chat, plan.new, plan.recent, plan.sends_read)
        sent = await telegram_io.deliver(self.bot, requests)
        for held, seconds in sent.held.items():
            self._hold(held, self.clock() + seconds)
        outcome.telegram_requests = sent.requests
        if not learn:
            return
        await self._learn(record, decision, plan, sent)
        self._mark(record, plan.parcels, sent)
        if (chat, topic) in sent.topics_gone or chat in sent.kicked:
            # The group (or the game's topic) refuses the bot now: the game ends at once, and
            # nothing more is sent there, so nothing more can fail there.
            await self.abandon(chat, topic)
        elif sent.owed is not None and record.version > 0:
            self.owe(chat, self.clock() + sent.owed, topic, hands=sent.owed_hands)

    async def abandon(self, chat: int, topic: int | None, update_id: int | None = None) -> Outcome:
        """End the game of a chat (or topic) that no longer takes the bot's messages."""
        return await self.transact(
            chat, update_id, Abandon(), topic=topic, action="abandon", via=Via.REMOVED
        )

    def _spend(self, chat: int, new: Sequence[float], recent: Sequence[float], read: int) -> None:
        """The group messages about to be sent (`new`), added to the chat's flood budget before
        sending; `recent`: the minute's, as read, when `read` times were. Logged, never raised:
        a budget short of a few messages costs at worst a 429."""
        if not new:
            return
        # Now and then, the times out of the minute go (only if nobody added any meanwhile).
        prune = read > 2 * planning.GROUP_SENDS_PER_MINUTE
        try:
            self.store.spend(chat, list(new), recent=list(recent) if prune else None, read=read)
        except Exception:
            LOGGER.warning("could not count the group's messages", exc_info=True)

    def _hold(self, chat: int, until: float) -> None:
        try:
            self.store.hold(chat, until)
        except Exception:
            LOGGER.warning("could not keep Telegram's wait for chat %s", chat, exc_info=True)

    def _mark(self, record: Record, parcels: Sequence[Parcel], sent: telegram_io.Delivery) -> None:
        """After sending: each parcel of the write marked sent or given up. Given up, the timer
        sends it: when the minute has room (`next_look`), or when Telegram allows (`owe`)."""
        if not parcels:
            return
        marks = {p.stamp: planning.was_sent(p.stamp, sent.remembered) for p in parcels}
        try:
            self.store.mark(record.chat, record.topic, marks)
        except Exception:
            # Unmarked, the parcels go out again once their writer must be gone: rather twice
            # than never for a game's end.
            LOGGER.warning("could not mark what was sent", exc_info=True)

    def _add_topic(self, record: Record) -> None:
        """Bookkeeping after the commit: logged, never raised."""
        assert record.topic is not None
        try:
            self.store.add_topic(record.chat, record.topic, record.expires)
        except Exception:
            LOGGER.warning("could not keep topic %s of chat %s", record.topic, record.chat)

    def owe(self, chat: int, at: float, topic: int | None = None, *, hands: bool = False) -> None:
        """Telegram made screens wait longer than a handler may: the timer draws the table (and
        every hand, if a private chat's screen was given up: `hands`) again at `at`, from the
        game stored then. Logged, never raised (the move is committed); a later update draws
        what changed meanwhile anyway."""
        try:
            self.store.owe(chat, at, topic, hands=hands)
        except Exception:
            LOGGER.warning("could not mark chat %s for a redraw", chat, exc_info=True)
            return
        metrics.add("RedrawsOwed")
        self.schedule(chat, at, self.clock(), topic)

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

    def reply_or_request(self, answer: Answer, requests: list[Request]) -> dict[str, Any] | None:
        """The button's answer as the webhook's reply, or as one more request to send."""
        if self.webhook_replies:
            return telegram_io.webhook_reply(answer)
        requests.insert(0, answer)
        return None

    async def _learn(
        self, record: Record, decision: Decision, plan: Plan, sent: telegram_io.Delivery
    ) -> None:
        """Keep what sending taught us: new message ids, and who cannot be reached."""
        remembered = sent.remembered
        hands = {int(k.split(":")[1]): v for k, v in remembered.items() if k.startswith("hand:")}
        seated = set(record.game.ids if record.game else ())
        newly_unreachable = (sent.unreachable & seated) - record.unreachable
        try:
            self.store.remember(
                record.chat,
                record.game_id,
                topic=record.topic,
                table=remembered.get("table"),
                final=next((v for k, v in remembered.items() if k.startswith("final")), None),
                hands=hands,
                unreachable=newly_unreachable,
                # A hand delivered (after /hand) shows the private chat is open again.
                reachable=(decision.reachable | set(hands)) & record.unreachable,
            )
        except Exception:
            # The move is committed: a 500 would have Telegram retry a done move. The ids lost
            # only cost a message sent anew later.
            LOGGER.warning("could not remember what was sent", exc_info=True)
        # Told once per player, after sending, so it is not written in `sends`: sent only while
        # the group's minute has room.
        room = planning.group_room(plan.sends, self.clock())
        if newly_unreachable and record.game is not None and room > 0:
            game, lang = record.game, record.lang
            notices: list[Request] = [
                Send(
                    record.chat,
                    Screen(t(lang, "unreachable", name=name_of(game, p, lang))),
                    thread=record.topic,
                )
                for p in sorted(newly_unreachable)[:room]
            ]
            now = self.clock()
            # Added to the budget as it now stands, never pruned: the plan's own times were
            # just spent, so a prune conditioned on the size read would fail and cost a write.
            self._spend(record.chat, [now] * len(notices), (), 0)
            await telegram_io.deliver(self.bot, notices)
        for old, new in sent.migrated.items():
            if old == record.chat:
                try:
                    await self.migrate(old, new)
                except Exception:
                    # After a commit, as above: the next update that names the new chat id (a
                    # migrate_to_chat_id message) moves the game again.
                    LOGGER.warning("could not move chat %s to %s", old, new, exc_info=True)

    async def migrate(self, old: int, new: int) -> Outcome:
        """The group became a supergroup: its game moves to the new chat id, drawn anew there."""
        self.store.move(old, new)
        return await self.transact(new, None, Redraw(), action="migration", via=Via.MIGRATION)
