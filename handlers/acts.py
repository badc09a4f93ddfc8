"""What each command and button means: the chat's record as read, and the time, in; a decision out.

An act never writes or sends: it changes the record it is given (the transaction writes it,
conditionally on the version read, and runs the act again on a fresh read after a conflict) and
says what to send besides the screens. Each act is a small frozen value, built by the router
(`handlers.app`) from the update, decided by the transaction (`handlers.service`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine import (
    CLOCK_CHOICES,
    Code,
    Expire,
    Game,
    Join,
    Leave,
    MenteurError,
    Move,
    Phase,
    SetClock,
    Stop,
    apply,
    open_table,
    settle,
)
from engine.events import Event
from handlers import delivery, names, render, timing
from handlers.callbacks import GAME_IDS, Kind, Place
from handlers.outcomes import Decision, Reason, Result, Why
from handlers.screens import Button, Edit, Keyboard, Request, Screen, Send
from handlers.store import Record
from handlers.text import DEFAULT, SUPPORTED, block, t, tn


def _reply(chat: int, text: str, buttons: Keyboard = ()) -> Send:
    return Send(chat, Screen(text, buttons))


def _refused(text: str, reason: Reason, reply_to: int | None) -> Decision:
    """A refusal: the answer to a button, or, for a command, a reply in the chat `reply_to`."""
    if reply_to is None:
        return Decision(refusal=text, result=Result.REFUSED, reason=reason)
    return Decision(extra=[_reply(reply_to, text)], result=Result.REFUSED, reason=reason)


def _opener_or_admin(record: Record, by: int, admin: bool) -> bool:
    """Who may change a group's settings and its table's computer players: the player who
    opened the chat's game (running or over), or an administrator of the group."""
    return admin or (record.game is not None and by == record.game.opener)


@dataclass(frozen=True)
class Refuse:
    """A command the bot will not take from this sender, whatever the game: one line why."""

    key: str
    reason: Reason
    reply_to: int
    lang: str | None = None

    def decide(self, record: Record, now: float) -> Decision:
        return _refused(t(self.lang or record.lang, self.key), self.reason, self.reply_to)


@dataclass(frozen=True)
class PlayerMove:
    """A player's move, judged by the engine after what the clock has decided (`settle`).

    From a button: `game_id` is the game it was drawn for. From a command: refusals are replies
    in the chat `reply_to`. Either way they are worded in the presser's `lang` (the group's
    when the sender's app gave none).
    """

    move: Move
    game_id: int | None = None
    lang: str | None = None
    reply_to: int | None = None

    def decide(self, record: Record, now: float) -> Decision:
        lang = self.lang or record.lang
        game = record.game
        if game is None:
            return _refused(t(lang, "no_game"), Why.NO_GAME, self.reply_to)
        if self.game_id is not None and self.game_id != record.game_id:
            return _refused(t(lang, "old_game"), Why.OLD_GAME, self.reply_to)
        game, settled = settle(game, now)
        record.game = game
        try:
            record.game, events = apply(game, self.move, now)
        except MenteurError as e:
            decision = _refused(render.refusal(e, game, lang), e.code, self.reply_to)
            decision.write, decision.events = bool(settled), settled
            return decision
        return Decision(write=True, events=settled + events)


@dataclass(frozen=True)
class AddBot:
    """/addbot: seat the next computer player, "Robot N", with the first free N. In the lobby,
    by a player at the table, the player who opened it, or a group administrator (`admin`)."""

    reply_to: int
    by: int
    admin: bool
    lang: str | None = None

    def decide(self, record: Record, now: float) -> Decision:
        game = record.game
        lobby = game is not None and game.phase is Phase.LOBBY
        if lobby and game is not None and not (self.admin or self.by in (game.opener, *game.ids)):
            text = t(self.lang or record.lang, "addbot_not_allowed")
            return _refused(text, Code.NOT_ALLOWED, self.reply_to)
        taken = set(game.ids) if game else set()
        n = next(n for n in range(1, 10) if -n not in taken)
        move = Join(-n, names.clean(t(record.lang, "robot_name", n=n), names.NAME_LENGTH))
        return PlayerMove(move, lang=self.lang, reply_to=self.reply_to).decide(record, now)


@dataclass(frozen=True)
class RemoveBot:
    """A lobby's button that takes computer player `robot` (a negative id) off the table: for
    the player who opened it, or a group administrator (`admin`)."""

    robot: int
    game_id: int
    by: int
    admin: bool
    lang: str

    def decide(self, record: Record, now: float) -> Decision:
        leave = PlayerMove(Leave(self.robot), self.game_id, self.lang)
        game = record.game
        if game is None or self.game_id != record.game_id or game.phase is not Phase.LOBBY:
            return leave.decide(record, now)  # no game, another game, or past the lobby
        if not _opener_or_admin(record, self.by, self.admin):
            return _refused(t(self.lang, "remove_not_allowed"), Code.NOT_ALLOWED, None)
        if self.robot >= 0 or self.robot not in game.ids:
            return _refused(t(self.lang, "robot_gone"), Code.NOT_A_PLAYER, None)
        return leave.decide(record, now)


@dataclass(frozen=True)
class Seat:
    """/start in private, from the Join button's link: seat the player at that table.

    `name` is the player's cleaned name (`handlers.names.person`); when nothing of it was left,
    the seat is "Player N" in the group's language, stored once like a computer player's name.
    """

    user: int
    name: str
    game_id: int
    lang: str

    def decide(self, record: Record, now: float) -> Decision:
        name = self.name or names.numbered(
            lambda n: names.clean(t(record.lang, "player_name", n=n), names.NAME_LENGTH),
            record.game.names if record.game else (),
        )
        join = PlayerMove(Join(self.user, name), self.game_id, self.lang)
        decision = join.decide(record, now)
        private = Screen(decision.refusal or t(self.lang, "join_in_private", group=record.title))
        decision.extra.append(Send(self.user, private))
        decision.refusal = None  # said in the private chat already
        if decision.write:
            record.langs[self.user] = self.lang
            decision.reachable.add(self.user)
        return decision


@dataclass(frozen=True)
class NewGame:
    """/newgame: a new lobby, unless a game is running. `game_id` is a random draw from
    `callbacks.GAME_IDS`; should it be the id of the game it replaces, the next one is taken.
    `lang` is the opener's, when their app gave one. `clock` (`/newgame 60`) is R20's seconds
    for this game and the chat's next ones, as /settings would set them; None keeps the
    chat's."""

    opener: int
    title: str
    lang: str | None
    game_id: int
    clock: int | None = None

    def decide(self, record: Record, now: float) -> Decision:
        if record.game is not None and record.game.phase is not Phase.OVER:
            text = t(self.lang or record.lang, "game_running")
            return _refused(text, Why.GAME_RUNNING, record.chat)
        if record.version == 0:
            # A new group speaks its opener's language until /language.
            record.lang = self.lang or DEFAULT
        if self.clock is not None:
            record.clock = self.clock
        record.game = open_table(self.opener, now, clock=record.clock)
        record.reminded = None  # moments count from 0 again
        ids = GAME_IDS
        record.game_id = (
            self.game_id
            if self.game_id != record.game_id
            else ids.start + (self.game_id - ids.start + 1) % len(ids)
        )
        record.title = names.title(self.title)
        record.note = None
        record.langs = {}
        return Decision(write=True, new_game=True)


@dataclass(frozen=True)
class JoinLink:
    """/join in the group: a button opening the private chat whose Start seats the player."""

    reply_to: int
    bot_username: str
    lang: str | None = None

    def decide(self, record: Record, now: float) -> Decision:
        if record.game is None or record.game.phase is Phase.OVER:
            screen = Screen(t(self.lang or record.lang, "no_game"))
        elif record.game.phase is not Phase.LOBBY:
            screen = Screen(t(self.lang or record.lang, "refusal_already_started"))
        else:
            link = deep_link(self.bot_username, SEAT, record.place)
            button = Button(t(record.lang, "join_button"), url=link)
            screen = Screen(t(record.lang, "open_private"), ((button,),))
        return Decision(extra=[Send(self.reply_to, screen)])


SEAT, HAND = "j", "h"  # what a deep link's Start does: seat the user, or send their hand
# The deep links' payloads: <what><chat>_<game id>[_<forum topic>], in decimal.
START_PAYLOAD = re.compile(r"([jh])(-?\d{1,20})_(\d{1,15})(?:_(\d{1,10}))?")


def deep_link(bot_username: str, what: str, place: Place) -> str:
    """A link into the private chat whose Start does `what` (`SEAT`, `HAND`) for the game at
    `place`: Telegram forbids a bot to write first to someone who never opened a chat with it.
    It names the game's forum topic when it is played in one."""
    where = f"{place.chat}_{place.game}" + ("" if place.topic is None else f"_{place.topic}")
    return f"https://t.me/{bot_username}?start={what}{where}"


@dataclass(frozen=True)
class Hand:
    """/hand: the player's hand again, as a new private message. Asked in the group, one line
    there says so; or, when the player's private chat refused the bot, it offers a button that
    opens it and sends the hand there (a `HAND` deep link, whose Start asks again in private:
    `reply_to` is then the player's own chat, and `game_id` the link's game)."""

    user: int
    reply_to: int
    lang: str | None = None
    bot_username: str = ""
    game_id: int | None = None

    def decide(self, record: Record, now: float) -> Decision:
        game = record.game
        lang = self.lang or record.lang
        if self.game_id is not None and self.game_id != record.game_id:
            return _refused(t(lang, "old_game"), Why.OLD_GAME, self.reply_to)
        if game is None or game.phase in (Phase.LOBBY, Phase.OVER) or self.user not in game.ids:
            return _refused(t(lang, "not_playing"), Why.NOT_PLAYING, self.reply_to)
        screen = delivery.hand_screen(record, game, self.user, now)
        extra: list[Request] = [Send(self.user, screen, f"hand:{self.user}")]
        if self.reply_to == self.user:
            pass  # asked in private: the hand is the answer
        elif self.user in record.unreachable:
            link = deep_link(self.bot_username, HAND, record.place)
            button = Button(t(lang, "btn_open_private"), url=link)
            extra.append(_reply(self.reply_to, t(lang, "hand_blocked"), ((button,),)))
        else:
            extra.append(_reply(self.reply_to, t(lang, "hand_sent")))
        return Decision(extra=extra, result=Result.RESENT)


@dataclass(frozen=True)
class TableAgain:
    """/table: the table again, as a new message at the bottom of the group."""

    lang: str | None = None

    def decide(self, record: Record, now: float) -> Decision:
        if record.game is None:
            return Decision(extra=[_reply(record.chat, t(self.lang or record.lang, "no_game"))])
        return Decision(table_again=True, result=Result.RESENT)


@dataclass(frozen=True)
class Say:
    """A fixed text from the catalogue, in the group's language (/rules, /help)."""

    key: str
    reply_to: int

    def decide(self, record: Record, now: float) -> Decision:
        return Decision(extra=[_reply(self.reply_to, t(record.lang, self.key))])


@dataclass(frozen=True)
class LanguagePrompt:
    """/language: a button per supported language, each named in its own language. For the
    player who opened the chat's game, or a group administrator (`admin`)."""

    reply_to: int
    by: int
    admin: bool
    lang: str | None = None

    def decide(self, record: Record, now: float) -> Decision:
        if not _opener_or_admin(record, self.by, self.admin):
            text = t(self.lang or record.lang, "refusal_not_allowed")
            return _refused(text, Code.NOT_ALLOWED, self.reply_to)
        buttons = tuple(
            Button(
                t(code, "language_name"),
                record.place.data(Kind.LANGUAGE, i),
            )
            for i, code in enumerate(SUPPORTED)
        )
        prompt = t(record.lang, "language_prompt")
        return Decision(extra=[_reply(self.reply_to, prompt, (buttons,))])


@dataclass(frozen=True)
class SetLanguage:
    """A language button: the group's language from now on. Pressed by the player who opened
    the chat's game, or a group administrator (`admin`); refusals in the presser's `lang`."""

    index: int
    by: int
    admin: bool
    lang: str

    def decide(self, record: Record, now: float) -> Decision:
        if self.index >= len(SUPPORTED):
            return _refused(t(self.lang, "bad_button"), Why.BAD_BUTTON, None)
        if not _opener_or_admin(record, self.by, self.admin):
            return _refused(t(self.lang, "refusal_not_allowed"), Code.NOT_ALLOWED, None)
        if record.lang == SUPPORTED[self.index]:
            return Decision(result=Result.UNCHANGED)  # a second press on the prompt: no write
        record.lang = SUPPORTED[self.index]
        notice = Send(record.chat, Screen(t(record.lang, "language_set")))
        return Decision(write=True, extra=[notice])


@dataclass(frozen=True)
class Settings:
    """/settings: the chat's turn clock (R20), with a button per choice while no game runs."""

    reply_to: int

    def decide(self, record: Record, now: float) -> Decision:
        screen = render.settings(record.clock, record.game, record.place, record.lang)
        return Decision(extra=[Send(self.reply_to, screen)])


def clock_choice(argument: str) -> int | None:
    """R20's seconds that `/newgame 60` or `/settings off` asks for, 0 for no clock; None when
    the argument names none of `CLOCK_CHOICES` ("60", "60s", "٦٠", "off" or the off button's
    word in a supported language)."""
    word = argument.strip().casefold().removesuffix("s").strip()
    offs = {"off", *(t(code, "btn_clock_off").strip("\u200f").casefold() for code in SUPPORTED)}
    if word in offs:
        return 0
    seconds = int(word) if word.isdecimal() and len(word) <= 3 else None
    return seconds if seconds in CLOCK_CHOICES else None


@dataclass(frozen=True)
class SetClockSetting:
    """A clock button of /settings, or `/settings 60`: the chat's turn clock from now on (R20),
    and the open lobby's, whose table then shows it. For the player who opened the chat's game
    or a group administrator (`admin`); refused while a game runs. `message` is the settings
    message pressed, redrawn with the choice ticked; a command (`reply_to`, the chat) is
    answered in one line. Refusals in the presser's `lang`."""

    seconds: int
    by: int
    admin: bool
    lang: str | None = None
    message: int | None = None
    reply_to: int | None = None

    def decide(self, record: Record, now: float) -> Decision:
        lang = self.lang or record.lang
        if self.seconds not in CLOCK_CHOICES:
            return _refused(t(lang, "bad_button"), Why.BAD_BUTTON, self.reply_to)
        if not _opener_or_admin(record, self.by, self.admin):
            return _refused(t(lang, "refusal_not_allowed"), Code.NOT_ALLOWED, self.reply_to)
        game = record.game
        if game is not None and game.phase in (Phase.PLAY, Phase.DECIDE):
            return _refused(t(lang, "clock_running"), Code.ALREADY_STARTED, self.reply_to)
        lobby = game if game is not None and game.phase is Phase.LOBBY else None
        if record.clock == self.seconds and (lobby is None or lobby.clock == self.seconds):
            return Decision(result=Result.UNCHANGED)  # a second press on the same choice
        if record.version == 0:
            # As /newgame would: a new group speaks the language of whoever set it up first.
            record.lang = self.lang or DEFAULT
        record.clock = self.seconds
        events: list[Event] = []
        if lobby is not None:
            move = SetClock(self.by, self.seconds, self.admin or self.by == lobby.opener)
            record.game, events = apply(lobby, move, now)
        shown = render.settings(record.clock, record.game, record.place, record.lang)
        extra: list[Request] = []
        if self.message is not None:
            extra.append(Edit(record.chat, self.message, shown))
        if self.reply_to is not None:
            key = "note_clock" if self.seconds else "note_clock_off"
            extra.append(_reply(self.reply_to, t(record.lang, key, seconds=self.seconds)))
        return Decision(write=True, events=events, extra=extra)


@dataclass(frozen=True)
class Tick:
    """The timer's look at a game: the 45-second mark, a computer player's move, an idle end,
    a redraw owed after a flood limit."""

    idle_expiry: float

    def decide(self, record: Record, now: float) -> Decision:
        game: Game | None = record.game
        owed = record.owed is not None and now >= record.owed
        due = timing.game_due(record, self.idle_expiry)  # `record.due` may be an owed redraw's
        remind = timing.reminder_due(record)
        events: list[Event] = []
        if game is not None and game.phase is not Phase.OVER:
            game, events = settle(game, now)
            if game.phase is not Phase.OVER and due is not None and now >= due:
                move = timing.computer_move(record, game, now)
                if move is None and now - game.updated >= self.idle_expiry:
                    move = Expire(self.idle_expiry)
                if move is not None:
                    game, more = apply(game, move, now)
                    events += more
            record.game = game
        reminded = game is not None and not events and remind is not None and now >= remind
        # Only when nothing else happened: the moment is then the one whose reminder is due.
        reminder = self._remind(record, game, now) if reminded and game is not None else []
        if owed:
            # Screens Telegram made wait: the table and every hand, drawn from the game as it is
            # now, once however many redraws were owed. The mark goes with this write.
            record.redrawn, record.owed = record.owed, None
            result = Result.APPLIED if events else Result.RESENT
            return Decision(
                write=True, events=events, all_hands=True, result=result, extra=reminder
            )
        if events:
            return Decision(write=True, events=events)
        if reminded:
            # Written with the moment reminded of, so that a timer fired again (or twice at
            # once: one write wins) sends no second one; no screen changes.
            return Decision(write=True, extra=reminder, redraw=False, result=Result.REMINDED)
        return Decision(result=Result.NOTHING_DUE)

    @staticmethod
    def _remind(record: Record, game: Game, now: float) -> list[Request]:
        """R20: one private message to the person awaited to play when a third of their clock is
        left, in their language (none to a private chat that refuses the bot)."""
        record.reminded = game.moment
        player = game.awaited
        if player is None or player < 0 or player in record.unreachable:
            return []
        lang = record.lang_of(player)
        seconds = render.seconds_left(game.deadline, now)
        lines = [tn(lang, "reminder", seconds, group=record.title)]
        seat = game.seat_of(player)
        if seat is not None and game.ran_out >> seat & 1:
            lines.append(t(lang, "reminder_last"))
        return [Send(player, Screen(block(lang, lines)))]


@dataclass(frozen=True)
class Abandon:
    """The group no longer takes the bot's messages (it removed the bot, or took its right to
    send), or the game's forum topic was closed or deleted: the game ends at once, without a
    winner (R18, on the table's behalf), and nothing more is sent there; hands say it ended."""

    def decide(self, record: Record, now: float) -> Decision:
        game = record.game
        events: list[Event] = []
        if game is not None and game.phase is not Phase.OVER:
            game, events = settle(game, now)  # a final play whose 45 seconds are over has won
            if game.phase is not Phase.OVER:
                game, more = apply(game, Stop(game.opener, admin=True), now)
                events += more
            record.game, record.note = game, None
        if record.owed is not None:  # a redraw owed there would only meet the refusal
            record.redrawn, record.owed = record.owed, None
        if not events and record.redrawn is None:
            return Decision(result=Result.NOTHING_DUE)
        return Decision(write=True, events=events, silent=True)


@dataclass(frozen=True)
class Redraw:
    """After a group became a supergroup, every button still names the old chat: draw the
    table and every hand again for the new one."""

    def decide(self, record: Record, now: float) -> Decision:
        if record.game is None:
            return Decision(result=Result.NOTHING_DUE)
        return Decision(table_again=True, all_hands=True, result=Result.RESENT)
