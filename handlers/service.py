"""The transaction: read a chat's record once, decide, write once on the version read, then send.

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
from typing import Any, Protocol

import telegram
from telegram import CallbackQuery

from engine import Game
from handlers import delivery, metrics, outbox, telegram_io, timing
from handlers.acts import Abandon, Redraw
from handlers.outbox import Parcel
from handlers.outcomes import Act, Decision, Outcome, Result, Via
from handlers.render import name_of
from handlers.screens import Answer, Request, Screen, Send
from handlers.store import Conflict, Record, Store
from handlers.text import t

LOGGER = logging.getLogger("menteur")

MAX_ATTEMPTS = 6  # conditional-write conflicts tolerated before asking Telegram to retry


class Busy(Exception):
    """The chat's item kept changing under us, or the store failed: nothing was committed."""


class _Written:
    """An attempt whose conditional write was refused, kept to tell whether it landed anyway."""

    def __init__(
        self,
        record: Record,
        decision: Decision,
        moments: list[tuple[int, Screen]],
        *,
        parcels: list[Parcel],
        before: Game | None,
        previous_due: float | None,
        group_sends: int,
    ) -> None:
        self.version, self.writer = record.version + 1, record.writer
        self.decision, self.moments, self.before = decision, moments, before
        self.parcels, self.previous_due = parcels, previous_due
        self.group_sends = group_sends

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
        one) and commit it (see the module's docstring).

        `update_id` (None for the timer) makes a repeated update a duplicate; `query` is the
        button press to answer, with the refusal if any.
        """
        if via is None:
            via = Via.PRESS if query else (Via.TIMER if update_id is None else Via.COMMAND)
        outcome = Outcome(via, chat=chat, action=action, topic=topic)
        refused: _Written | None = None  # the last attempt, when its write was refused
        mine: set[int] = set()
        for attempt in range(MAX_ATTEMPTS):
            moments: list[tuple[int, Screen]] = []
            parcels: list[Parcel] = []
            changed: dict[int, Screen] | None = None  # the hands this attempt's write changed
            group_sends = 0
            now = self.clock()
            record = self.store.load(chat, topic)
            if refused is not None and refused.landed(record):
                # The write did land: its answer was lost, and the store client's own retry met
                # the version check. That attempt committed, and announces its moments.
                outcome.conflicts -= 1
                metrics.add("LostAnswersLanded")
                decision, moments, before = refused.decision, refused.moments, refused.before
                parcels, group_sends = refused.parcels, refused.group_sends
                record.sends = [*record.sends, *[now] * group_sends]
                if record.due is not None and record.due != refused.previous_due:
                    self.schedule(chat, record.due, now, topic)
                break
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
                decision = Decision(result=Result.DUPLICATE, silent=isinstance(act, Abandon))
                decision.hands = delivery.retried_hands(record, update_id)
            else:
                decision = act.decide(record, now)
            parcels = outbox.pack(
                record,
                decision.events,
                now,
                silent=decision.silent,
                update_id=update_id,
                mine=mine,
                new_game=decision.new_game,
            )
            if parcels:
                # Moments go out with the table drawn anew, even from a timer with nothing else
                # to do or a retried update.
                decision.write = decision.redraw = True
            moments, group_sends = delivery.plan_sends(before, record, decision, parcels, now)
            # A reply into the group is written too (with its update id, so that Telegram's
            # retry is not answered again), unless the chat has no record yet: a group (or a
            # topic) the bot never played in. Its time counts in the chat's budget either way.
            counted = group_sends > 0 and record.version > 0
            if duplicate and not parcels:
                break
            if not (decision.write or counted or parcels):
                break
            if update_id is not None and not duplicate:
                record.updates = [*record.updates, update_id]  # the store keeps the latest
                record.drawn, changed = delivery.hands_drawn(before, record, decision, now)
            if query is not None and decision.write:
                record.looking = delivery.looking(record, query.from_user.id, now)
            record.writer = f"{self._writer}.{next(self._writes):x}"
            previous_due = record.due
            record.due = timing.next_due(record, self.idle_expiry)
            if len(moments) < len(parcels):
                # Moments the minute has no room for: the timer sends them once it has.
                room = delivery.room_at(record, now)
                record.due = room if record.due is None else min(record.due, room)
            record.expires = timing.expiry(record, now, self.idle_expiry)
            try:
                self.store.save(record, new_game=decision.new_game)
            except Conflict:
                refused = _Written(
                    record,
                    decision,
                    moments,
                    parcels=parcels,
                    before=before,
                    previous_due=previous_due,
                    group_sends=group_sends,
                )
                outcome.conflicts += 1
                # Jitter, so that racing writers do not collide again in step.
                await self.sleep(self.rng.uniform(0.005, 0.02) * (attempt + 1))
                continue
            if record.due is not None and record.due != previous_due:
                self.schedule(chat, record.due, now, topic)
            if decision.new_game and topic is not None:
                self._add_topic(record)
            if any(p.update is None for p in parcels) and update_id is not None:
                # Owed parcels taken by this update: if it dies too, the timer sends them.
                self.schedule(chat, now + outbox.GRACE, now, topic)
            break
        else:
            raise Busy(f"chat {chat}: {MAX_ATTEMPTS} conflicting writes in a row")
        outcome.result, outcome.reason, outcome.due = decision.result, decision.reason, record.due
        if decision.write:
            metrics.game_events(
                record.game, decision.events, new_game=decision.new_game, removed=decision.silent
            )
        requests = delivery.screens(before, record, decision, moments, now, changed=changed)
        if query is not None:
            if decision.refusal and query.message is not None and query.message.chat.id > 0:
                # A refused press in a private chat may come from a stale hand: redraw it.
                presser = {query.from_user.id}
                drawn = delivery.hand_screens(record, presser, now)
                requests += delivery.hand_requests(record, drawn)
            answer = Answer(query.id, decision.refusal or decision.answer, decision.link)
            outcome.reply = self.reply_or_request(answer, requests)
        if group_sends:
            self._spend(record, group_sends)
        sent = await telegram_io.deliver(self.bot, requests)
        for held, seconds in sent.held.items():
            self._hold(held, self.clock() + seconds)
        outcome.telegram_requests = sent.requests
        await self._learn(record, decision, sent)
        self._mark(record, parcels, sent)
        if (chat, topic) in sent.topics_gone or chat in sent.kicked:
            # The group (or the game's topic) refuses the bot now: the game ends at once, and
            # nothing more is sent there, so nothing more can fail there.
            await self.abandon(chat, topic)
        elif sent.owed is not None and record.version > 0:
            self.owe(chat, self.clock() + sent.owed, topic, hands=sent.owed_hands)
        return outcome

    async def abandon(self, chat: int, topic: int | None, update_id: int | None = None) -> Outcome:
        """End the game of a chat (or topic) that no longer takes the bot's messages."""
        return await self.transact(
            chat, update_id, Abandon(), topic=topic, action="abandon", via=Via.REMOVED
        )

    def _spend(self, record: Record, count: int) -> None:
        """The group messages about to be sent, added to the chat's flood budget before sending.
        Logged, never raised: a budget short of a few messages costs at worst a 429."""
        if count <= 0:
            return
        new, recent = record.sends[-count:], record.sends[:-count]
        # Now and then, the times out of the minute go (only if nobody added any meanwhile).
        prune = record.sends_read > 2 * delivery.GROUP_SENDS_PER_MINUTE
        try:
            self.store.spend(
                record.chat, new, recent=recent if prune else None, read=record.sends_read
            )
        except Exception:
            LOGGER.warning("could not count the group's messages", exc_info=True)

    def _hold(self, chat: int, until: float) -> None:
        try:
            self.store.hold(chat, until)
        except Exception:
            LOGGER.warning("could not keep Telegram's wait for chat %s", chat, exc_info=True)

    def _mark(self, record: Record, parcels: list[Parcel], sent: telegram_io.Delivery) -> None:
        """After sending: each parcel of the write marked sent or given up. Given up, the timer
        sends it: when the minute has room (`due`), or when Telegram allows (`owe`)."""
        if not parcels:
            return
        marks = {p.stamp: delivery.was_sent(p.stamp, sent.remembered) for p in parcels}
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

    def schedule(self, chat: int, due: float, now: float, topic: int | None = None) -> None:
        """Set the chat's timer; a failure is logged, never raised (the move is committed)."""
        if self.timers is None:
            return
        try:
            self.timers.schedule(chat, due, now, topic)
        except Exception:
            # Raising would answer 500, and Telegram's retry would be a duplicate that never
            # sends this move's messages. The minute sweep of `due` fires the game anyway.
            LOGGER.warning("could not set a timer for chat %s", chat, exc_info=True)

    def reply_or_request(self, answer: Answer, requests: list[Request]) -> dict[str, Any] | None:
        """The button's answer as the webhook's reply, or as one more request to send."""
        if self.webhook_replies:
            return telegram_io.webhook_reply(answer)
        requests.insert(0, answer)
        return None

    async def _learn(self, record: Record, decision: Decision, sent: telegram_io.Delivery) -> None:
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
        room = delivery.group_room(record, self.clock())
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
            record.sends = [*record.sends, *[self.clock()] * len(notices)]
            self._spend(record, len(notices))
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
