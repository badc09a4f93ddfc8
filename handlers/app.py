"""The bot: a Telegram update in, a move through the engine, what changed out to each chat.

One update is one action: translate it into a move, then read the chat's record once, let the
engine decide, write once on the version read (on a conflict: read again and decide again), and
only then render and send. The webhook and timer entry points and the local runner all drive
this one object; it knows nothing of HTTP, Lambda or the clock (`clock` is given).
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import telegram
from telegram import CallbackQuery, Message, Update, User

from engine import (
    Expire,
    Forfeit,
    Game,
    Join,
    Leave,
    LetItStand,
    MenteurError,
    Move,
    Phase,
    Play,
    Shout,
    Start,
    Stop,
    apply,
    open_table,
    settle,
    strategy,
    view,
)
from engine.events import Event
from handlers import callbacks, render, telegram_io
from handlers.callbacks import BadCallback, Kind, Press
from handlers.screens import Answer, Button, Edit, EditButtons, Keyboard, Request, Screen, Send
from handlers.store import Conflict, Record, Store
from handlers.text import SUPPORTED, language_of, t

LOGGER = logging.getLogger("menteur")

MAX_ATTEMPTS = 6  # conditional-write conflicts tolerated before asking Telegram to retry
GROUP_SENDS_PER_MINUTE = 18  # Telegram allows about 20 messages a minute into one group
COMPUTER_DELAY = (3.0, 5.0)  # seconds before a computer player acts: people shout first
FINISHED_KEPT = 7 * 24 * 3600  # a finished game's record stays this long, then expires
IDLE_GRANULARITY = 3600.0  # an idle game ends on the hour after its expiry
NAME_LENGTH = 32
START_PAYLOAD = re.compile(r"j(-?\d{1,20})_(\d{1,9})")


class Busy(Exception):
    """The chat's item kept changing under us, or the store failed: nothing was committed."""


class Timers(Protocol):
    def schedule(self, chat: int, at: float, now: float) -> None:
        """Have the timer look at `chat` at `at` (seconds), give or take a second."""
        ...


@dataclass
class Decision:
    """What one attempt at an action decided, before anything is written or sent."""

    write: bool = False
    new_game: bool = False
    events: list[Event] = field(default_factory=list)
    refusal: str | None = None  # already in the presser's language
    outcome: str = "applied"
    extra: list[Request] = field(default_factory=list)  # sent along with the screens
    reachable: set[int] = field(default_factory=set)
    table_again: bool = False  # /table: a new table message at the bottom


Act = Callable[[Record, float], Decision]


@dataclass
class Outcome:
    """What one update did: the structured log line, and an optional webhook reply."""

    kind: str
    result: str = "ignored"
    chat: int | None = None
    action: str = ""
    conflicts: int = 0
    telegram_requests: int = 0
    reply: dict[str, Any] | None = None
    due: float | None = None  # when the chat's timer is due after this update

    def log(self, update_id: int | None, started: float) -> dict[str, Any]:
        return {
            "update": update_id,
            "chat": self.chat,
            "kind": self.kind,
            "action": self.action,
            "outcome": self.result,
            "conflicts": self.conflicts,
            "telegram_requests": self.telegram_requests,
            "latency_ms": round((time.perf_counter() - started) * 1000, 1),
        }


def display_name(user: User) -> str:
    return (user.full_name.strip() or str(user.id))[:NAME_LENGTH]


class MenteurBot:
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
    ) -> None:
        self.store = store
        self.bot = bot
        self.clock = clock
        self.rng = rng or random.Random()
        self.timers = timers
        self.idle_expiry = idle_expiry
        self.sleep = sleep
        # Through a webhook, a button's answer rides on the HTTP response: no extra request.
        self.webhook_replies = webhook_replies

    # --- entry points ----------------------------------------------------------------------

    async def handle(self, data: Any) -> Outcome:
        """One update, as Telegram's JSON. Raises `Busy` when Telegram should send it again."""
        try:
            update = Update.de_json(data, self.bot)
        except Exception:  # anything Telegram's library cannot read is not an update of ours
            return Outcome("ignored", "ignored:malformed")
        # Bug fix: PTB does not check field types, and a chat id sent as a string reached the
        # store as another key (or raised after the move was committed: a 500 for good).
        if update is None or not _well_typed(update):
            return Outcome("ignored", "ignored:malformed")
        if update.callback_query is not None:
            return await self._press(update.update_id, update.callback_query)
        message = update.message
        if message is None:
            return Outcome("ignored", "ignored:kind")
        if message.migrate_to_chat_id:
            self.store.move(message.chat.id, message.migrate_to_chat_id)
            new = message.migrate_to_chat_id
            outcome = await self._transact(new, None, self._redraw_act(), action="migration")
            outcome.kind = "migration"
            return outcome
        if message.from_user is None or not message.text or not message.text.startswith("/"):
            return Outcome("ignored", "ignored:not_a_command", chat=message.chat.id)
        return await self._command(update.update_id, message, message.from_user)

    async def tick(self, chat: int, at: float | None = None) -> Outcome:
        """The timer's look at one chat: the deadline, computer players, an idle game.

        `at` is the time the timer was set for, when it was set for one.
        """
        outcome = await self._transact(chat, None, self._tick_act, action="timer")
        now = self.clock()
        due = outcome.due
        # Delivered before its second (clocks differ by a little): set it again. A timer set
        # for an older `due` is stale instead: the one set for the new `due` will come.
        early = outcome.result == "nothing_due" and due is not None and due > now
        if early and due is not None and at is not None and abs(due - at) < 0.001:
            self._schedule_at(chat, due, now)
        return outcome

    # --- buttons -----------------------------------------------------------------------------

    async def _press(self, update_id: int, query: CallbackQuery) -> Outcome:
        user = query.from_user
        lang = language_of(user.language_code)
        origin = query.message.chat.id if query.message is not None else None
        try:
            press = callbacks.decode(query.data)
            if not _from_right_chat(press, origin, user.id):
                raise BadCallback("pressed in another chat")
        except BadCallback as e:
            LOGGER.info("refused callback data: %s", e)
            return await self._answer(query, t(lang, "bad_button"), "refused:bad_button")
        if press.kind is Kind.TOGGLE:
            return await self._toggle(query, press, lang)
        if press.kind is Kind.JOIN:
            link = await self._join_link_url(press.chat, press.game)
            return await self._answer(query, None, "applied", url=link, action="join")
        if press.kind is Kind.LANGUAGE:
            return await self._transact(
                press.chat, update_id, self._language_act(press), query=query, action="language"
            )
        move: Move
        match press.kind:
            case Kind.LEAVE:
                move = Leave(user.id)
            case Kind.START:
                move = Start(user.id, self.rng.getrandbits(63))
            case Kind.SHOUT:
                move = Shout(user.id, press.number)
            case Kind.STAND:
                move = LetItStand(user.id, press.number)
            case _:
                move = Play(user.id, press.cards, press.number)
        act = self._move_act(lambda record: move, press.game, lang)
        return await self._transact(
            press.chat, update_id, act, query=query, action=type(move).__name__
        )

    async def _toggle(self, query: CallbackQuery, press: Press, lang: str) -> Outcome:
        """A card (un)selected: redrawn from the button's own data, with no read or write."""
        message = query.message
        assert message is not None, "checked by _from_right_chat"
        keyboard = render.hand_buttons(press, lang)
        requests: list[Request] = [EditButtons(message.chat.id, message.message_id, keyboard)]
        outcome = Outcome("press", "applied", chat=press.chat, action="toggle")
        reply = self._reply_or_request(Answer(query.id), requests)
        delivery = await telegram_io.deliver(self.bot, requests)
        outcome.telegram_requests, outcome.reply = delivery.requests, reply
        return outcome

    async def _answer(
        self,
        query: CallbackQuery,
        text: str | None,
        result: str,
        *,
        url: str | None = None,
        action: str = "",
    ) -> Outcome:
        requests: list[Request] = []
        reply = self._reply_or_request(Answer(query.id, text, url), requests)
        delivery = await telegram_io.deliver(self.bot, requests)
        return Outcome(
            "press", result, action=action, telegram_requests=delivery.requests, reply=reply
        )

    def _reply_or_request(self, answer: Answer, requests: list[Request]) -> dict[str, Any] | None:
        if self.webhook_replies:
            return telegram_io.webhook_reply(answer)
        requests.insert(0, answer)
        return None

    # --- commands ----------------------------------------------------------------------------

    async def _command(self, update_id: int, message: Message, user: User) -> Outcome:
        word, _, argument = message.text.partition(" ") if message.text else ("", "", "")
        name, _, addressee = word[1:].partition("@")
        if addressee and addressee.lower() != (await telegram_io.username(self.bot)).lower():
            return Outcome("ignored", "ignored:other_bot", chat=message.chat.id)
        name = name.lower()
        chat = message.chat.id
        if message.chat.type == "private":
            return await self._private_command(update_id, name, argument.strip(), message, user)
        lang_of_user = language_of(user.language_code)

        def answer(key: str) -> Act:
            return lambda record, now: Decision(extra=[_reply(message, t(record.lang, key))])

        match name:
            case "newgame":
                act = self._newgame_act(user, message.chat.title or "", lang_of_user)
            case "join":
                return await self._join_link(message)
            case "leave":
                act = self._move_act(lambda record: Leave(user.id), None, None, message)
            case "forfeit":
                act = self._move_act(lambda record: Forfeit(user.id), None, None, message)
            case "stop":
                # Asked first, so that one transaction decides: asking only after a refusal told
                # an admin "not allowed" before stopping the game, and read the game twice.
                admin = await telegram_io.is_admin(self.bot, chat, user.id)
                act = self._stop_act(user, message, admin=admin)
            case "addbot":
                act = self._addbot_act(message)
            case "hand":
                act = self._hand_act(user, message)
            case "table":
                act = self._table_act()
            case "language":
                act = self._language_prompt_act(message)
            case "rules":
                act = answer("rules")
            case "help" | "start":
                act = answer("help_group")
            case _:
                return Outcome("ignored", "ignored:unknown_command", chat=chat)
        return await self._transact(chat, update_id, act, action=name)

    async def _private_command(
        self, update_id: int, name: str, argument: str, message: Message, user: User
    ) -> Outcome:
        lang = language_of(user.language_code)
        if name == "start" and (found := START_PAYLOAD.fullmatch(argument)):
            chat, game_no = int(found[1]), int(found[2])
            act = self._seat_act(user, chat, game_no, lang)
            return await self._transact(chat, update_id, act, action="seat")
        key = {"rules": "rules", "help": "help_private", "start": "help_private"}.get(
            name, "not_in_group"
        )
        delivery = await telegram_io.deliver(self.bot, [_reply(message, t(lang, key))])
        return Outcome(
            "command",
            "applied",
            chat=message.chat.id,
            action=name,
            telegram_requests=delivery.requests,
        )

    async def _join_link(self, message: Message) -> Outcome:
        record = self.store.load(message.chat.id)
        if record.game is None or record.game.phase is Phase.OVER:
            screen = Screen(t(record.lang, "no_game"))
        elif record.game.phase is not Phase.LOBBY:
            screen = Screen(t(record.lang, "refusal_already_started"))
        else:
            link = await self._join_link_url(record.chat, record.game_no)
            screen = Screen(
                t(record.lang, "open_private"),
                ((Button(t(record.lang, "join_button"), url=link),),),
            )
        delivery = await telegram_io.deliver(self.bot, [Send(message.chat.id, screen)])
        return Outcome(
            "command",
            "applied",
            chat=message.chat.id,
            action="join",
            telegram_requests=delivery.requests,
        )

    async def _join_link_url(self, chat: int, game_no: int) -> str:
        """A deep link into the private chat, whose Start seats the user (Telegram forbids a
        bot to write first to someone who never opened a chat with it)."""
        return f"https://t.me/{await telegram_io.username(self.bot)}?start=j{chat}_{game_no}"

    # --- acts: what an action decides, given the record read and the time ---------------------

    def _move_act(
        self,
        move_for: Callable[[Record], Move],
        game_no: int | None,
        lang: str | None,
        message: Message | None = None,
    ) -> Act:
        """A player's move. Refusals are worded in `lang` (the presser's), or in the group's
        language as a reply to `message` for a command."""

        def act(record: Record, now: float) -> Decision:
            refusal_lang = lang or record.lang
            game = record.game
            if game is None:
                return _refused(t(refusal_lang, "no_game"), "no_game", message)
            if game_no is not None and game_no != record.game_no:
                return _refused(t(refusal_lang, "old_game"), "old_game", message)
            game, settled = settle(game, now)
            record.game = game
            try:
                record.game, events = apply(game, move_for(record), now)
            except MenteurError as e:
                decision = _refused(render.refusal(e, game, refusal_lang), e.code.value, message)
                decision.write, decision.events = bool(settled), settled
                return decision
            return Decision(write=True, events=settled + events)

        return act

    def _tick_act(self, record: Record, now: float) -> Decision:
        game = record.game
        if game is None or game.phase is Phase.OVER:
            return Decision(outcome="nothing_due")
        game, events = settle(game, now)
        if game.phase is not Phase.OVER and record.due is not None and now >= record.due:
            move = self._computer_move(record, game, now)
            if move is None and now - game.updated >= self.idle_expiry:
                move = Expire(self.idle_expiry)
            if move is not None:
                game, more = apply(game, move, now)
                events += more
        record.game = game
        return Decision(
            write=bool(events), events=events, outcome="applied" if events else "nothing_due"
        )

    @staticmethod
    def _computer_rng(record: Record, game: Game) -> random.Random:
        """Computer players decide from the state alone, so the decision foreseen when the
        timer is set is the one taken when it fires (and a replay takes it again)."""
        return random.Random(f"{record.chat}/{record.game_no}/{game.plays}/{game.updated}")

    def _computer_move(self, record: Record, game: Game, now: float) -> Move | None:
        """The first computer player, in turn order from the one awaited, that wants to act."""
        rng = self._computer_rng(record, game)
        seats = len(game.ids)
        start = max(game.turn, 0)
        for seat in sorted(range(seats), key=lambda s: (s - start) % seats):
            player = game.ids[seat]
            if player < 0 and game.in_game(seat):
                move = strategy.choose(view(game, player, now), rng)
                if move is not None:
                    return move
        return None

    def _newgame_act(self, user: User, title: str, lang: str) -> Act:
        def act(record: Record, now: float) -> Decision:
            if record.game is not None and record.game.phase is not Phase.OVER:
                return Decision(
                    extra=[Send(record.chat, Screen(t(record.lang, "game_running")))],
                    outcome="refused:game_running",
                )
            if record.version == 0:
                record.lang = lang  # a new group speaks its opener's language until /language
            record.game = open_table(user.id, now)
            record.game_no += 1
            record.title = title
            record.note = None
            record.langs = {}
            return Decision(write=True, new_game=True)

        return act

    def _seat_act(self, user: User, chat: int, game_no: int, lang: str) -> Act:
        """/start in private, from the Join button's link: seat the player at that table."""
        move_act = self._move_act(lambda record: Join(user.id, display_name(user)), game_no, lang)

        def act(record: Record, now: float) -> Decision:
            decision = move_act(record, now)
            private = Screen(decision.refusal or t(lang, "join_in_private", group=record.title))
            decision.extra.append(Send(user.id, private))
            decision.refusal = None  # said in the private chat already
            if decision.write:
                record.langs[user.id] = lang
                decision.reachable.add(user.id)
            return decision

        return act

    def _stop_act(self, user: User, message: Message, *, admin: bool) -> Act:
        return self._move_act(lambda record: Stop(user.id, admin), None, None, message)

    def _addbot_act(self, message: Message) -> Act:
        def name_for(record: Record) -> Move:
            taken = set(record.game.ids) if record.game else set()
            n = next(n for n in range(1, 10) if -n not in taken)
            return Join(-n, t(record.lang, "robot_name", n=n))

        return self._move_act(name_for, None, None, message)

    def _hand_act(self, user: User, message: Message) -> Act:
        def act(record: Record, now: float) -> Decision:
            game = record.game
            if game is None or game.phase in (Phase.LOBBY, Phase.OVER) or user.id not in game.ids:
                return _refused(t(record.lang, "not_playing"), "not_playing", message)
            lang = record.lang_of(user.id)
            screen = render.hand(game, user.id, record.chat, record.game_no, lang, now)
            return Decision(extra=[Send(user.id, screen, f"hand:{user.id}")], outcome="resent")

        return act

    def _table_act(self) -> Act:
        def act(record: Record, now: float) -> Decision:
            if record.game is None:
                return Decision(extra=[Send(record.chat, Screen(t(record.lang, "no_game")))])
            return Decision(table_again=True, outcome="resent")

        return act

    def _language_prompt_act(self, message: Message) -> Act:
        def act(record: Record, now: float) -> Decision:
            buttons = tuple(
                Button(
                    t(code, "language_name"),
                    callbacks.encode(Press(Kind.LANGUAGE, record.chat, record.game_no, i)),
                )
                for i, code in enumerate(SUPPORTED)
            )
            return Decision(extra=[_reply(message, t(record.lang, "language_prompt"), (buttons,))])

        return act

    def _language_act(self, press: Press) -> Act:
        def act(record: Record, now: float) -> Decision:
            if press.number >= len(SUPPORTED):
                return Decision(refusal=t(record.lang, "bad_button"), outcome="refused:bad_button")
            if record.lang == SUPPORTED[press.number]:
                return Decision(outcome="unchanged")  # a second press on the prompt: no write
            record.lang = SUPPORTED[press.number]
            notice = Send(record.chat, Screen(t(record.lang, "language_set")))
            return Decision(write=True, extra=[notice])

        return act

    # --- the transaction: read, decide, write (retried on conflict), then render and send ------

    async def _transact(
        self,
        chat: int,
        update_id: int | None,
        act: Act,
        *,
        query: CallbackQuery | None = None,
        action: str = "",
    ) -> Outcome:
        outcome = Outcome(
            "press" if query else ("timer" if update_id is None else "command"),
            chat=chat,
            action=action,
        )
        for attempt in range(MAX_ATTEMPTS):
            moments: list[Screen] = []
            now = self.clock()
            record = self.store.load(chat)
            before = record.game
            if update_id is not None and update_id in record.updates:
                decision = Decision(outcome="duplicate")
                break
            decision = act(record, now)
            if not decision.write:
                break
            if update_id is not None:
                record.updates = [*record.updates, update_id]  # the store keeps the latest
            moments = self._plan_moments(record, decision, now)
            previous_due = record.due
            record.due = self._next_due(record, now)
            record.expires = self._expiry(record, now)
            try:
                self.store.save(record, new_game=decision.new_game)
            except Conflict:
                outcome.conflicts += 1
                # Jitter, so that racing writers do not collide again in step.
                await self.sleep(self.rng.uniform(0.005, 0.02) * (attempt + 1))
                continue
            if record.due is not None and record.due != previous_due:
                self._schedule_at(chat, record.due, now)
            break
        else:
            raise Busy(f"chat {chat}: {MAX_ATTEMPTS} conflicting writes in a row")
        outcome.result, outcome.due = decision.outcome, record.due
        requests = self._screens(before, record, decision, moments, now)
        if query is not None:
            if decision.refusal and query.message is not None and query.message.chat.id > 0:
                # A refused press in a private chat may come from a stale hand: redraw it.
                presser = {query.from_user.id}
                requests += self._hand_requests(record, self._hand_screens(record, presser, now))
            outcome.reply = self._reply_or_request(Answer(query.id, decision.refusal), requests)
        delivery = await telegram_io.deliver(self.bot, requests)
        outcome.telegram_requests = delivery.requests
        await self._learn(record, decision, delivery, now)
        return outcome

    def _plan_moments(self, record: Record, decision: Decision, now: float) -> list[Screen]:
        """The new group messages this action deserves, within Telegram's flood limit; the rest
        is told by the table's note. Their times are written with the move."""
        game = record.game
        if game is None or not decision.events:
            return []
        note = render.note(decision.events, game, record.lang)
        if note is not None:
            record.note = note
        moments = render.moments(
            decision.events, game, record.chat, record.game_no, record.lang, now
        )
        recent = [s for s in record.sends if now - s < 60.0]
        room = max(0, GROUP_SENDS_PER_MINUTE - len(recent) - (1 if record.table_msg is None else 0))
        kept = moments[-room:] if room else []  # the latest matter most: the end, then the rest
        record.sends = recent + [now] * len(kept)
        return kept

    def _next_due(self, record: Record, now: float) -> float | None:
        game = record.game
        if game is None or game.phase is Phase.OVER:
            return None
        # The idle end is due within the hour after the expiry, on the hour: `due` is the key of
        # the timers' index, and a key that moved with every move would cost two more index
        # writes per move (a delete and a put) for a deadline nobody needs to the second.
        due = math.ceil((game.updated + self.idle_expiry) / IDLE_GRANULARITY) * IDLE_GRANULARITY
        if game.deadline is not None:
            due = min(due, game.deadline)
        computers = game.phase is not Phase.LOBBY and any(p < 0 for p in game.ids)
        if computers and self._computer_move(record, game, now) is not None:
            delay = self._computer_rng(record, game).uniform(*COMPUTER_DELAY)
            due = min(due, now + delay)
        return due

    def _expiry(self, record: Record, now: float) -> int:
        game = record.game
        if game is None or game.phase is Phase.OVER:
            return int(now + FINISHED_KEPT)
        return int(game.updated + self.idle_expiry + FINISHED_KEPT)

    def _schedule_at(self, chat: int, due: float, now: float) -> None:
        if self.timers is None:
            return
        try:
            self.timers.schedule(chat, due, now)
        except Exception:
            # The move is committed: raising would answer 500, and Telegram's retry would be a
            # duplicate that never sends this move's messages. The minute sweep of `due` fires
            # the game anyway, later.
            LOGGER.warning("could not set a timer for chat %s", chat, exc_info=True)

    # --- rendering what changed ----------------------------------------------------------------

    def _screens(
        self,
        before: Game | None,
        record: Record,
        decision: Decision,
        moments: list[Screen],
        now: float,
    ) -> list[Request]:
        requests: list[Request] = list(decision.extra)
        game = record.game
        if game is None or not (
            decision.write or decision.table_again or decision.outcome == "duplicate"
        ):
            return requests
        chat, game_no = record.chat, record.game_no
        table = render.table(game, chat, game_no, record.lang, now, record.note)
        if record.table_msg is None or decision.table_again:
            requests.append(Send(chat, table, "table"))
            if record.table_msg is not None:
                requests.append(EditButtons(chat, record.table_msg, ()))
        else:
            requests.append(Edit(chat, record.table_msg, table, "table"))
        requests += [Send(chat, screen, "final" if screen.buttons else None) for screen in moments]
        settled = before is not None and before.phase is Phase.DECIDE
        if settled and game.phase is not Phase.DECIDE and record.final_msg is not None:
            # The final play is settled: its buttons go.
            requests.append(EditButtons(chat, record.final_msg, ()))
        if game.phase is not Phase.LOBBY and decision.write:
            requests += self._hand_requests(record, self._changed_hands(before, record, now))
        elif game.phase is not Phase.LOBBY and decision.outcome == "duplicate":
            # Telegram sends an update again only when it got no 200: the first delivery may
            # have committed and then died before sending (a container killed or timed out).
            # Which hands its move changed is no longer known, so redraw them all; an unchanged
            # one costs a "message is not modified", which counts as success.
            requests += self._hand_requests(record, self._hand_screens(record, set(game.ids), now))
        return requests

    def _changed_hands(self, before: Game | None, record: Record, now: float) -> dict[int, Screen]:
        """The private hand screens that differ after the move: only those are edited."""
        game = record.game
        assert game is not None
        humans = {p for p in game.ids if p > 0}
        if before is None or before.phase is Phase.LOBBY or game.phase is Phase.OVER:
            return self._hand_screens(record, humans, now)
        # A hand's screen shows the hand, and whether its owner plays, decides, or made the
        # final play: only those players can see a change, so only they are drawn twice.
        touched = {
            game.ids[s]
            for s, (a, b) in enumerate(zip(before.hands, game.hands, strict=True))
            if a != b
        }
        touched |= {p for p in (before.awaited, game.awaited) if p is not None}
        touched |= {g.ids[g.last.seat] for g in (before, game) if g.last is not None}
        touched |= {game.ids[s] for s in game.out if s not in before.out}
        screens = self._hand_screens(record, touched & humans, now)
        for player, screen in list(screens.items()):
            lang = record.lang_of(player)
            if render.hand(before, player, record.chat, record.game_no, lang, now) == screen:
                del screens[player]
        return screens

    def _hand_screens(self, record: Record, players: set[int], now: float) -> dict[int, Screen]:
        game = record.game
        if game is None or game.phase is Phase.LOBBY:
            return {}
        return {
            p: render.hand(game, p, record.chat, record.game_no, record.lang_of(p), now)
            for p in players
            if p > 0 and p in game.ids
        }

    def _hand_requests(self, record: Record, screens: dict[int, Screen]) -> list[Request]:
        requests: list[Request] = []
        for player, screen in sorted(screens.items()):
            if player in record.unreachable:
                continue
            key = f"hand:{player}"
            message = record.hand_msgs.get(player)
            requests.append(
                Send(player, screen, key) if message is None else Edit(player, message, screen, key)
            )
        return requests

    async def _learn(
        self, record: Record, decision: Decision, delivery: telegram_io.Delivery, now: float
    ) -> None:
        """Keep what sending taught us: new message ids, and who cannot be reached."""
        remembered = delivery.remembered
        hands = {int(k.split(":")[1]): v for k, v in remembered.items() if k.startswith("hand:")}
        newly_unreachable = (
            delivery.unreachable & set(record.game.ids if record.game else ())
        ) - record.unreachable
        try:
            self.store.remember(
                record.chat,
                record.game_no,
                table=remembered.get("table"),
                final=remembered.get("final"),
                hands=hands,
                unreachable=newly_unreachable,
                # Bug fix: a hand delivered (after /hand) shows the private chat is open again;
                # without this the player stayed unreachable and their hand was never redrawn.
                reachable=(decision.reachable | set(hands)) & record.unreachable,
            )
        except Exception:
            # Bug fix: the move is committed; raising here made the webhook answer 500, and
            # Telegram retry a done move. The ids lost only cost a message sent anew later.
            LOGGER.warning("could not remember what was sent", exc_info=True)
        if newly_unreachable and record.game is not None:
            names = dict(zip(record.game.ids, record.game.names, strict=True))
            notices: list[Request] = [
                Send(record.chat, Screen(t(record.lang, "unreachable", name=names[p])))
                for p in sorted(newly_unreachable)
            ]
            await telegram_io.deliver(self.bot, notices)
        for old, new in delivery.migrated.items():
            if old == record.chat:
                try:
                    self.store.move(old, new)
                    await self._transact(new, None, self._redraw_act(), action="migration")
                except Exception:
                    # After a commit, as above: the next update that names the new chat id
                    # (a migrate_to_chat_id message) moves the game again.
                    LOGGER.warning("could not move chat %s to %s", old, new, exc_info=True)

    def _redraw_act(self) -> Act:
        """Bug fix: after a group became a supergroup, its table's and the hands' buttons still
        named the old chat (refused, or "no game here"): draw them again for the new one."""

        def act(record: Record, now: float) -> Decision:
            if record.game is None:
                return Decision(outcome="nothing_due")
            hands = self._hand_requests(
                record, self._hand_screens(record, set(record.game.ids), now)
            )
            return Decision(extra=hands, table_again=True, outcome="resent")

        return act


def _well_typed(update: Update) -> bool:
    """Whether the fields the bot reads have Telegram's types (python-telegram-bot does not
    check them): ids are integers below 2**53 (exact in JSON), texts are strings, a press has
    a presser."""

    def is_id(value: object) -> bool:
        return type(value) is int and abs(value) < 1 << 53

    def is_text(value: object, *, optional: bool = True) -> bool:
        return isinstance(value, str) or (optional and value is None)

    query, message = update.callback_query, update.message
    if not is_id(update.update_id):
        return False
    if query is not None and not (
        query.from_user is not None and is_text(query.id, optional=False) and is_text(query.data)
    ):
        return False
    if message is not None and not (
        is_text(message.text)
        and (message.migrate_to_chat_id is None or is_id(message.migrate_to_chat_id))
    ):
        return False
    users = [x.from_user for x in (query, message) if x is not None and x.from_user is not None]
    chats = [m for m in (message, query.message if query else None) if m is not None]
    names_ok = all(is_text(u.first_name, optional=False) and is_text(u.last_name) for u in users)
    return (
        names_ok
        and all(is_id(u.id) and is_text(u.language_code) for u in users)
        and all(m.chat is not None and is_id(m.chat.id) and is_id(m.message_id) for m in chats)
        and all(is_text(m.chat.type, optional=False) and is_text(m.chat.title) for m in chats)
    )


def _from_right_chat(press: Press, origin: int | None, user: int) -> bool:
    """Group buttons live in the game's group; hand buttons in the presser's own chat."""
    if press.kind in (Kind.TOGGLE, Kind.PLAY):
        return origin == user
    if press.kind is Kind.SHOUT:
        return origin in (press.chat, user)
    return origin == press.chat


def _reply(message: Message, text: str, buttons: Keyboard = ()) -> Send:
    return Send(message.chat.id, Screen(text, buttons))


def _refused(text: str, code: str, message: Message | None) -> Decision:
    """A refusal: an answer to a button, or a reply in the chat to a command."""
    if message is None:
        return Decision(refusal=text, outcome=f"refused:{code}")
    return Decision(extra=[_reply(message, text)], outcome=f"refused:{code}")
