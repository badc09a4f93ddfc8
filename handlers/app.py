"""The bot's front door: a Telegram update in, the act it asks for, decided and committed.

One update is one action. This module only reads the update and routes it: a button press or
a command becomes an act (`handlers.acts`, what it means), which the transaction
(`handlers.service`) decides on the chat's record, writes once and sends. The webhook and timer
entry points and the local runner all drive one `MenteurBot`; it knows nothing of HTTP, Lambda
or the clock (`clock` is given).
"""

from __future__ import annotations

import logging
from typing import Any

import telegram
from telegram import CallbackQuery, ChatMemberUpdated, Message, Update, User

from engine import (
    CLOCK_CHOICES,
    Code,
    Forfeit,
    Leave,
    LetItStand,
    Move,
    Play,
    Shout,
    Start,
    Stop,
    VoteEnd,
)
from handlers import acts, callbacks, render, updates
from handlers.callbacks import BadCallback, Kind, Press
from handlers.outcomes import Act, Outcome, Result, Via, Why, ignored
from handlers.questions import Standing
from handlers.service import Service
from handlers.store import Store
from handlers.text import COMMANDS, SUPPORTED, language_of, t

# The lobby's acts (seats, new games, settings) are imported where an update asks for one: a
# container that starts in the middle of games, whose first updates are moves, never pays for them.

LOGGER = logging.getLogger("menteur")

# Telegram's sender of the messages an anonymous group administrator writes.
ANONYMOUS_ADMIN = 1087968824
# The commands that open, join or act in a game, or change the group's settings: not for a
# message sent on behalf of a chat (a channel), which may still ask for /table, /rules, /help.
ACTING = frozenset(
    {
        "newgame",
        "join",
        "leave",
        "forfeit",
        "stop",
        "addbot",
        "hand",
        "language",
        "settings",
        "kick",
    }
)


class MenteurBot:
    """Routes updates and timer ticks to acts, which its `service` transacts."""

    def __init__(self, store: Store, bot: telegram.Bot, **options: Any) -> None:
        """`options`: the service's (`handlers.service.Service`)."""
        self.service = Service(store, bot, **options)

    def _new_game_id(self) -> int:
        """An unguessable id for a new game (the service's generator is the system's)."""
        return self.service.game_ids.randrange(callbacks.GAME_IDS.start, callbacks.GAME_IDS.stop)

    async def handle(self, data: Any) -> Outcome:
        """One update, as Telegram's JSON. Raises `Busy` when Telegram should send it again."""
        try:
            update = Update.de_json(data, self.service.bot)
        except Exception:  # anything Telegram's library cannot read is not an update of ours
            return ignored(Why.MALFORMED)
        # python-telegram-bot does not check field types: a chat id sent as a string would
        # reach the store as another key.
        if update is None or not updates.well_typed(update):
            return ignored(Why.MALFORMED)
        if update.callback_query is not None:
            return await self._press(update.update_id, update.callback_query)
        if update.my_chat_member is not None:
            return await self._membership(update.update_id, update.my_chat_member)
        message = update.message
        if message is None:
            return ignored(Why.KIND)
        if message.migrate_to_chat_id:
            return await self.service.migrate(message.chat.id, message.migrate_to_chat_id)
        if message.forum_topic_closed is not None:
            # Closed by its admins: the game played in the topic ends now (a closed topic
            # refuses the bot's messages; a deleted one is met when sending there).
            return await self.service.abandon(
                message.chat.id, updates.topic_of(message), update.update_id
            )
        if message.from_user is None or not message.text or not message.text.startswith("/"):
            return ignored(Why.NOT_A_COMMAND, message.chat.id)
        return await self._command(update.update_id, message, message.from_user)

    async def tick(self, chat: int, at: float | None = None, topic: int | None = None) -> Outcome:
        """The timer's look at one chat (or forum topic): the deadline, computer players, an
        idle game, a redraw owed.

        `at` is the time the timer was set for, when it was set for one.
        """
        tick = acts.Tick(self.service.idle_expiry)
        return await self.service.transact(chat, None, tick, topic=topic, action="timer", timer=at)

    # --- the bot's own membership --------------------------------------------------------------

    async def _membership(self, update_id: int, change: ChatMemberUpdated) -> Outcome:
        """The bot was removed from a group, or lost the right to send there: every game of the
        group (each forum topic's too) ends at once, and nothing more is sent there."""
        chat = change.chat.id
        member = change.new_chat_member
        if change.chat.type == "private" or updates.can_send(member):
            return ignored(Why.KIND, chat)  # a private chat blocked, or the bot (re)added
        if member.user.username != await self.service.questions.username():
            return ignored(Why.MALFORMED, chat)  # Telegram sends only the bot's own here
        outcome = Outcome(Via.CLOSED, Result.NOTHING_DUE, chat=chat, action="removed")
        for topic in [None, *self.service.store.topics(chat)]:
            ended = await self.service.abandon(chat, topic, update_id)
            if ended.result is Result.APPLIED:
                outcome.result = Result.APPLIED
            outcome.conflicts += ended.conflicts
            outcome.telegram_requests += ended.telegram_requests
        return outcome

    # --- buttons -----------------------------------------------------------------------------

    async def _press(self, update_id: int, query: CallbackQuery) -> Outcome:
        user = query.from_user
        lang = language_of(user.language_code)
        origin = query.message.chat.id if query.message is not None else None
        try:
            press = callbacks.decode(query.data)
            if not updates.from_right_chat(press, origin, user.id, updates.origin_topic(query)):
                raise BadCallback("pressed in another chat")
        except BadCallback as e:
            LOGGER.info("refused callback data: %s", e)
            act: Act = acts.ButtonAnswer(t(lang, "bad_button"), reason=Why.BAD_BUTTON)
            where = user.id if origin is None else origin
            return await self.service.transact(where, update_id, act, query=query, action="")
        move: Move
        match press.kind:
            case Kind.TOGGLE:
                message = query.message
                assert message is not None, "checked by updates.from_right_chat"
                act = acts.Toggle(press, message.chat.id, message.message_id, lang)
                return await self.service.transact(
                    press.chat, update_id, act, query=query, action="toggle"
                )
            case Kind.JOIN:
                return await self._join(update_id, query, press, lang)
            case Kind.AGAIN:
                return await self._again(update_id, query, press, lang)
            case Kind.LANGUAGE:  # a language no button offers is refused with no question first
                admin = press.number < len(SUPPORTED) and await self.service.questions.is_admin(
                    press.chat, user.id
                )
                from handlers import lobby  # noqa: PLC0415 - only when asked: see the imports

                act = lobby.SetLanguage(press.number, user.id, admin, lang)
                return await self.service.transact(
                    press.chat, update_id, act, topic=press.topic, query=query, action="language"
                )
            case Kind.CLOCK:
                # A choice no button offers is refused by the act; no question to Telegram first.
                admin = press.number in CLOCK_CHOICES and await self.service.questions.is_admin(
                    press.chat, user.id
                )
                shown = query.message.message_id if query.message is not None else None
                from handlers import lobby  # noqa: PLC0415 - only when asked: see the imports

                act = lobby.SetClockSetting(press.number, user.id, admin, lang, message=shown)
                return await self.service.transact(
                    press.chat, update_id, act, topic=press.topic, query=query, action="clock"
                )
            case Kind.REMOVE:
                admin = await self.service.questions.is_admin(press.chat, user.id)
                from handlers import lobby  # noqa: PLC0415 - only when asked: see the imports

                act = lobby.RemoveBot(-press.number, press.game, user.id, admin, lang)
                return await self.service.transact(
                    press.chat, update_id, act, topic=press.topic, query=query, action="removebot"
                )
            case Kind.LEAVE:
                move = Leave(user.id)
            case Kind.START:
                move = Start(user.id, self.service.rng.getrandbits(63))
            case Kind.SHOUT:
                move = Shout(user.id, press.number)
            case Kind.STAND:
                move = LetItStand(user.id, press.number)
            case Kind.PLAY:
                move = Play(user.id, press.cards, press.number)
            case Kind.VOTE:
                move = VoteEnd(user.id)
        act = acts.PlayerMove(move, press.game, lang)
        return await self.service.transact(
            press.chat, update_id, act, topic=press.topic, query=query, action=type(move).__name__
        )

    async def _join(self, update_id: int, query: CallbackQuery, press: Press, lang: str) -> Outcome:
        """Join: seated at once, or answered with the link whose Start seats (`lobby.JoinPress`,
        which asks Telegram only when the record leaves a seat open)."""
        user = query.from_user
        from handlers import lobby  # noqa: PLC0415 - only when asked: see the imports

        act = lobby.JoinPress(user.id, updates.display_name(user), press.game, lang)
        return await self.service.transact(
            press.chat, update_id, act, topic=press.topic, query=query, action="join"
        )

    async def _again(
        self, update_id: int, query: CallbackQuery, press: Press, lang: str
    ) -> Outcome:
        """Play again: the next game, for members of the group (`lobby.PlayAgain`)."""
        user = query.from_user
        from handlers import lobby  # noqa: PLC0415 - only when asked: see the imports

        name = updates.display_name(user)
        act = lobby.PlayAgain(user.id, name, press.game, lang, self._new_game_id())
        return await self.service.transact(
            press.chat, update_id, act, topic=press.topic, query=query, action="again"
        )

    # --- commands ----------------------------------------------------------------------------

    async def _command(self, update_id: int, message: Message, user: User) -> Outcome:
        word, _, argument = message.text.partition(" ") if message.text else ("", "", "")
        name, _, addressee = word[1:].partition("@")
        chat = message.chat.id
        ask = self.service.questions
        if addressee and addressee.lower() != (await ask.username()).lower():
            return ignored(Why.OTHER_BOT, chat)
        name = name.lower()
        if message.chat.type == "private":
            return await self._private_command(update_id, name, argument.strip(), message, user)
        # Refusals go to the sender in their app's language; without one, in the group's.
        lang = language_of(user.language_code) if user.language_code else None
        sender = message.sender_chat
        # An anonymous administrator writes as the group itself, through Telegram's own user.
        anonymous = sender is not None and sender.id == chat and user.id == ANONYMOUS_ADMIN
        if sender is not None and not anonymous and name in ACTING:
            # On behalf of a channel (or another chat): nobody to seat, to answer or to trust.
            act: Act = acts.Refuse("on_behalf_of_chat", Why.ON_BEHALF_OF_CHAT, chat, lang)
            return await self.service.transact(
                chat, update_id, act, topic=updates.topic_of(message), action=name
            )

        async def admin() -> bool:
            """Asked before the transaction, so that one decision is taken with the answer;
            asked only of commands whose answer depends on it."""
            return anonymous or await ask.is_admin(chat, user.id)

        from handlers import lobby  # noqa: PLC0415 - only when asked: see the imports

        match name:
            case "newgame" | "settings" if (
                argument.strip() and lobby.clock_choice(argument) is None
            ):
                act = acts.Refuse("refusal_bad_clock", Code.BAD_CLOCK, chat, lang)
            case "newgame":
                game_id = self._new_game_id()
                clock = lobby.clock_choice(argument) if argument.strip() else None
                act = lobby.NewGame(user.id, message.chat.title or "", lang, game_id, clock)
            case "join":
                act = lobby.JoinLink(chat, await ask.username(), lang)
            case "leave":
                act = acts.PlayerMove(Leave(user.id), lang=lang, reply_to=chat)
            case "forfeit":
                act = acts.PlayerMove(Forfeit(user.id), lang=lang, reply_to=chat)
            case "stop":
                act = acts.PlayerMove(Stop(user.id, await admin()), lang=lang, reply_to=chat)
            case "kick":  # Telegram is asked whether the sender is an admin only if need be
                target = updates.replied_to(message)
                known = True if anonymous else None
                act = acts.Kick(user.id, chat, target, argument.strip(), lang, admin=known)
            case "addbot":
                level = lobby.level_choice(argument)
                if level is None:
                    act = acts.Refuse("refusal_bad_level", Why.BAD_LEVEL, chat, lang)
                else:
                    act = lobby.AddBot(chat, user.id, await admin(), lang, level)
            case "hand":
                act = acts.Hand(user.id, chat, lang, await ask.username())
            case "table":
                act = acts.TableAgain(lang)
            case "language":
                act = lobby.LanguagePrompt(chat, user.id, await admin(), lang)
            case "settings" if argument.strip():
                seconds = lobby.clock_choice(argument)
                assert seconds is not None, "refused above"
                act = lobby.SetClockSetting(seconds, user.id, await admin(), lang, reply_to=chat)
            case "settings":
                act = lobby.ShowSettings(chat)
            case "rules":
                act = acts.Rules(chat)
            case "help" | "start":
                act = acts.Say("help_group", chat)
            case _:
                return ignored(Why.UNKNOWN_COMMAND, chat)
        # In a group with forum topics, each topic has its game (the General topic too).
        return await self.service.transact(
            chat, update_id, act, topic=updates.topic_of(message), action=name
        )

    async def _private_command(
        self, update_id: int, name: str, argument: str, message: Message, user: User
    ) -> Outcome:
        lang = language_of(user.language_code)
        ask = self.service.questions
        ask.wrote(user.id)
        if name == "start" and (found := acts.START_PAYLOAD.fullmatch(argument)):
            what, chat, game_id = found[1], int(found[2]), int(found[3])
            topic = int(found[4]) if found[4] else None
            if not acts.possible_game(chat, game_id):
                # No game ever had that id: refused before anything is read or asked, in the
                # words a link to a game one is not in gets, whichever chat it names.
                why = Why.NOT_PLAYING if what == acts.HAND else Why.OLD_GAME
                act: Act = acts.PrivateReply(t(lang, why.value), message.chat.id, why)
                return await self.service.transact(message.chat.id, update_id, act, action="seat")
            if what == acts.HAND:
                act = acts.Hand(user.id, user.id, lang, game_id=game_id)
                return await self.service.transact(chat, update_id, act, topic=topic, action="hand")
            # Only the group's members may sit at its table: a link names the chat, and anyone
            # may have it. Asked before anything is read, so that the answer says nothing of
            # the chat to someone outside it.
            where = await ask.standing(chat, user.id)
            if where not in (Standing.ADMIN, Standing.MEMBER):
                why = Why.NOT_MEMBER if where is Standing.OUTSIDER else Why.MEMBER_UNKNOWN
                act = acts.PrivateReply(t(lang, why.value), message.chat.id, why)
                return await self.service.transact(message.chat.id, update_id, act, action="seat")
            from handlers import lobby  # noqa: PLC0415 - only when asked: see the imports

            act = lobby.Seat(user.id, updates.display_name(user), game_id, lang)
            return await self.service.transact(chat, update_id, act, topic=topic, action="seat")
        key = {"rules": "rules", "help": "help_private", "start": "help_private"}.get(
            name, "not_in_group"
        )
        # Logged as the action: a command of ours by its name; any other word, which anyone
        # may type at any length, only as "other".
        action = name if name in COMMANDS or name == "start" else "other"
        text = render.rules(lang, None) if key == "rules" else t(lang, key)
        act = acts.PrivateReply(text, message.chat.id)
        return await self.service.transact(message.chat.id, update_id, act, action=action)
