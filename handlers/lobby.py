"""What the commands and buttons around a game mean: opening one, taking and leaving seats,
computer players, and the chat's settings (its language, R20's turn clock). Like every act
(`handlers.acts`), each decides on the record it is given and never writes or sends.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from engine import (
    CLOCK_CHOICES,
    Code,
    Event,
    Join,
    Leave,
    Phase,
    SetClock,
    apply,
    can,
    open_table,
)
from handlers import names, render, robots
from handlers.acts import (
    SEAT,
    PlayerMove,
    deep_link,
    opener_of_open_game,
    opener_or_admin,
    refused,
    reply,
)
from handlers.callbacks import GAME_IDS, Kind
from handlers.outcomes import Asking, Decision, Result, Why
from handlers.questions import Standing
from handlers.screens import Button, Edit, Request, Screen, Send
from handlers.store import Record
from handlers.text import DEFAULT, SUPPORTED, t

if TYPE_CHECKING:
    from handlers.questions import Questions


@dataclass(frozen=True, slots=True)
class AddBot:
    """/addbot, /addbot easy, /addbot hard: seat the next computer player, "Robot N" with the
    first free N, at that level (`robots`). In the lobby, by a player at the table, the player
    who opened it, or a group administrator (`admin`)."""

    reply_to: int
    by: int
    admin: bool
    lang: str | None = None
    level: str = robots.DEFAULT

    def decide(self, record: Record, now: float) -> Decision:
        game = record.game
        lobby = game is not None and game.phase is Phase.LOBBY
        if lobby and game is not None and not (self.admin or self.by in (game.opener, *game.ids)):
            text = t(self.lang or record.lang, "addbot_not_allowed")
            return refused(text, Code.NOT_ALLOWED, self.reply_to)
        taken = {robots.number_of(p) for p in game.ids if p < 0} if game else set()
        n = next(n for n in range(1, 10) if n not in taken)
        name = names.clean(t(record.lang, "robot_name", n=n), names.NAME_LENGTH)
        move = Join(robots.robot(n, self.level), name)
        return PlayerMove(move, lang=self.lang, reply_to=self.reply_to).decide(record, now)


@dataclass(frozen=True, slots=True)
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
        if not opener_or_admin(record, self.by, self.admin):
            return refused(t(self.lang, "remove_not_allowed"), Code.NOT_ALLOWED, None)
        if self.robot >= 0 or self.robot not in game.ids:
            return refused(t(self.lang, "robot_gone"), Code.NOT_A_PLAYER, None)
        return leave.decide(record, now)


def seat_name(record: Record, name: str) -> str:
    """A person's seat name: their cleaned name, or, when nothing of it was left, "Player N" in
    the group's language, stored once like a computer player's name."""
    return name or names.numbered(
        lambda n: names.clean(t(record.lang, "player_name", n=n), names.NAME_LENGTH),
        record.game.names if record.game else (),
    )


def seat_open(record: Record, user: int, game_id: int, now: float) -> bool:
    """Whether the record leaves `user` a seat at game `game_id`: its lobby, with room, and the
    user not seated yet. Only then is Telegram asked whether they may sit (`Asking`)."""
    game = record.game
    return game is not None and game_id == record.game_id and can(game, Join(user, "?"), now)


@dataclass(frozen=True, slots=True)
class JoinPress(Asking):
    """Join, pressed: a member of the group whom the bot may already write to in private is
    seated at once, with no trip through the private chat; anyone else is answered with the
    link whose Start seats them (and checks). Telegram is asked only when the record leaves a
    seat open: Join pressed again once seated, or on an earlier game's table, asks nothing."""

    user: int
    name: str
    game_id: int
    lang: str
    link: str | None = None  # asked: the private chat's link, for anyone not seated at once

    async def ask(self, record: Record, now: float, questions: Questions) -> JoinPress:
        if not seat_open(record, self.user, self.game_id, now):
            return self  # refused by the record alone
        if await questions.reachable(self.user) and await questions.member(record.chat, self.user):
            return self
        link = deep_link(await questions.username(), SEAT, record.place)
        return replace(self, link=link)

    def decide(self, record: Record, now: float) -> Decision:
        if self.link is not None:
            return Decision(link=self.link)
        return seat_at_once(self, record, now, self.game_id)


def seat_at_once(who: JoinPress | PlayAgain, record: Record, now: float, game_id: int) -> Decision:
    """Seated by the press itself: their hand will come in the private chat when the game
    starts, which the button's answer says."""
    decision = seat(who, record, now, game_id)
    if decision.write:
        decision.answer = t(who.lang, "seated_at_once")
    return decision


def seat(who: JoinPress | PlayAgain | Seat, record: Record, now: float, game_id: int) -> Decision:
    """The engine's Join at game `game_id` for a person the bot can write to in private, in
    their language."""
    join = Join(who.user, seat_name(record, who.name))
    decision = PlayerMove(join, game_id, who.lang).decide(record, now)
    if decision.write:
        record.langs[who.user] = who.lang
        decision.reachable.add(who.user)
    return decision


@dataclass(frozen=True, slots=True)
class PlayAgain(Asking):
    """Play again, on the end message of game `game_id`. The first press opens the next game in
    the same chat (and forum topic) with the same clock, the presser its opener, the last
    game's computer players seated again; a press on it while that next game's lobby is open
    takes a seat there. Only for members of the group; a presser the bot may write to in
    private is seated at once, anyone else is answered with the Join link. `new_id` is a random
    draw from `GAME_IDS`, as /newgame's. Telegram is asked (`ask`) only when the record leaves
    the press open: not on an older game's end, while the next game runs, or once seated."""

    user: int
    name: str
    game_id: int
    lang: str
    new_id: int
    # Asked: why the presser may not sit (not a member, or Telegram could not say); whether
    # the bot may write to them; its username, for the Join link when it may not.
    outsider: Why | None = None
    reachable: bool = False
    bot_username: str = ""

    async def ask(self, record: Record, now: float, questions: Questions) -> PlayAgain:
        if self._refusal(record) is not None or self._no_seat(record, now):
            return self
        where = await questions.standing(record.chat, self.user)
        if where not in (Standing.ADMIN, Standing.MEMBER):
            why = Why.NOT_MEMBER if where is Standing.OUTSIDER else Why.MEMBER_UNKNOWN
            return replace(self, outsider=why)
        if await questions.reachable(self.user):
            return replace(self, reachable=True)
        return replace(self, bot_username=await questions.username())

    def _opens(self, record: Record) -> bool:
        """Whether this press opens the next game: the first on the end of the chat's game."""
        last = record.game
        return last is not None and self.game_id == record.game_id and last.phase is Phase.OVER

    def _refusal(self, record: Record) -> Why | None:
        """Why the record alone refuses the press: an older game's end, or the next game has
        started."""
        if self._opens(record):
            return None
        game = record.game
        if game is None or game.phase is Phase.OVER or self.game_id != record.previous:
            return Why.OLD_GAME
        return None if game.phase is Phase.LOBBY else Why.GAME_RUNNING

    def _no_seat(self, record: Record, now: float) -> bool:
        """Whether the next game's lobby leaves the presser no seat (seated, or full)."""
        return not self._opens(record) and not seat_open(record, self.user, record.game_id, now)

    def decide(self, record: Record, now: float) -> Decision:
        why = self._refusal(record)
        if why is not None:
            return refused(t(self.lang, why.value), why, None)
        if self._no_seat(record, now):
            return seat(self, record, now, record.game_id)  # "You are already at the table."
        if self.outsider is not None:
            return refused(t(self.lang, self.outsider.value), self.outsider, None)
        if not self._opens(record):
            return self._take_seat(record, now)
        last = record.game
        assert last is not None
        open_game(record, self.user, self.new_id, last.clock, now)
        lobby = record.game
        assert lobby is not None
        for player, name in zip(last.ids, last.names, strict=True):
            if player < 0:  # the computer players, seated again as they were
                lobby, _ = apply(lobby, Join(player, name), now)
        record.game = lobby
        decision = self._take_seat(record, now)
        decision.write = decision.new_game = True
        return decision

    def _take_seat(self, record: Record, now: float) -> Decision:
        if self.reachable:
            return seat_at_once(self, record, now, record.game_id)
        return Decision(link=deep_link(self.bot_username, SEAT, record.place))


@dataclass(frozen=True, slots=True)
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
        decision = seat(self, record, now, self.game_id)
        private = Screen(decision.refusal or t(self.lang, "join_in_private", group=record.title))
        decision.extra.append(Send(self.user, private))
        decision.refusal = None  # said in the private chat already
        return decision


NEW_GAMES_PER_MINUTE = 3  # /newgame by one person in one chat (or forum topic)


@dataclass(frozen=True, slots=True)
class NewGame:
    """/newgame: a new lobby, unless a game is running. `game_id` is a random draw from
    `callbacks.GAME_IDS`; should it be the id of the game it replaces, the next one is taken.
    `lang` is the opener's, when their app gave one. `clock` (`/newgame 60`) is R20's seconds
    for this game only (its opener's choice; the chat's setting, for the next games, is an
    admin's, through /settings); None takes the chat's. A game opens in the chat's language,
    whatever the last game's opener chose for theirs."""

    opener: int
    title: str
    lang: str | None
    game_id: int
    clock: int | None = None

    def decide(self, record: Record, now: float) -> Decision:
        if record.game is not None and record.game.phase is not Phase.OVER:
            text = t(self.lang or record.lang, "game_running")
            return refused(text, Why.GAME_RUNNING, record.chat)
        # A few new games a minute each: a member opening and stopping games over and over
        # would otherwise spend the group's messages on lobbies.
        opened = {p: [at for at in ats if now - at < 60.0] for p, ats in record.opened.items()}
        if len(opened.get(self.opener, ())) >= NEW_GAMES_PER_MINUTE:
            text = t(self.lang or record.lang, "newgame_too_often")
            return refused(text, Why.TOO_OFTEN, record.chat)
        record.opened = {p: ats for p, ats in opened.items() if ats}
        record.opened[self.opener] = [*opened.get(self.opener, ()), now]
        if record.version == 0:
            # A new group speaks its opener's language until /language.
            record.lang = self.lang or DEFAULT
        if record.later_lang is not None:
            # The last game spoke its opener's choice: this one speaks the chat's again.
            record.lang, record.later_lang = record.later_lang, None
        clock = record.clock if self.clock is None else self.clock
        open_game(record, self.opener, self.game_id, clock, now)
        record.title = names.title(self.title)
        return Decision(write=True, new_game=True)


def open_game(record: Record, opener: int, game_id: int, clock: int, now: float) -> None:
    """A new lobby in the record, whose game id is `game_id` (the next one, should it be the
    current game's). The people of the game it follows are kept, for its table to say who has
    not come back yet, and that game's id, whose Play again then seats them."""
    last = record.game
    record.previous = record.game_id
    record.previous_seats = (
        {} if last is None else {p: n for p, n in zip(last.ids, last.names, strict=True) if p > 0}
    )
    record.game = open_table(opener, now, clock=clock)
    record.reminded = None  # turns count from 0 again
    ids = GAME_IDS
    record.game_id = (
        game_id if game_id != record.game_id else ids.start + (game_id - ids.start + 1) % len(ids)
    )
    record.note = None
    record.langs = {}


@dataclass(frozen=True, slots=True)
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


def _in_lobby(record: Record) -> bool:
    return record.game is not None and record.game.phase is Phase.LOBBY


@dataclass(frozen=True, slots=True)
class LanguagePrompt:
    """/language: a button per supported language, each named in its own language. For a
    group administrator (`admin`: the chat's language), or the player who opened the chat's
    game, in its lobby (that game's only)."""

    reply_to: int
    by: int
    admin: bool
    lang: str | None = None

    def decide(self, record: Record, now: float) -> Decision:
        if not (self.admin or (_in_lobby(record) and opener_of_open_game(record, self.by))):
            text = t(self.lang or record.lang, "refusal_chat_settings")
            return refused(text, Code.NOT_ALLOWED, self.reply_to)
        buttons = tuple(
            Button(
                t(code, "language_name"),
                record.place.data(Kind.LANGUAGE, i),
            )
            for i, code in enumerate(SUPPORTED)
        )
        prompt = t(record.lang, "language_prompt")
        return Decision(extra=[reply(self.reply_to, prompt, (buttons,))])


@dataclass(frozen=True, slots=True)
class SetLanguage:
    """A language button. Pressed by a group administrator (`admin`): the chat's language from
    now on, this game's too. By the player who opened the chat's game, in its lobby: that
    game's language only, the next game speaking the chat's again. Refusals in the presser's
    `lang`."""

    index: int
    by: int
    admin: bool
    lang: str

    def decide(self, record: Record, now: float) -> Decision:
        if self.index >= len(SUPPORTED):
            return refused(t(self.lang, "bad_button"), Why.BAD_BUTTON, None)
        chosen = SUPPORTED[self.index]
        if self.admin:
            if record.lang == chosen and record.later_lang is None:
                return Decision(result=Result.UNCHANGED)  # a second press on the prompt
            record.lang, record.later_lang = chosen, None
            key = "language_set"
        elif _in_lobby(record) and opener_of_open_game(record, self.by):
            if record.lang == chosen:
                return Decision(result=Result.UNCHANGED)
            later = record.later_lang or record.lang
            record.lang, record.later_lang = chosen, (None if later == chosen else later)
            key = "language_set_game"
        else:
            return refused(t(self.lang, "refusal_chat_settings"), Code.NOT_ALLOWED, None)
        # The table is drawn again in the new language: its note, written in the former, goes.
        record.note = None
        notice = Send(record.chat, Screen(t(record.lang, key)))
        return Decision(write=True, extra=[notice])


@dataclass(frozen=True, slots=True)
class ShowSettings:
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
    offs = {"off", *(_said(code, "btn_clock_off") for code in SUPPORTED)}
    if word in offs:
        return 0
    seconds = int(word) if word.isdecimal() and len(word) <= 3 else None
    return seconds if seconds in CLOCK_CHOICES else None


def level_choice(argument: str) -> str | None:
    """The level `/addbot hard` asks for (`robots.LEVELS`, in English or as a supported
    language says it), normal when none is named; None when the argument names none."""
    word = argument.strip().casefold()
    if not word:
        return robots.DEFAULT
    for level in robots.LEVELS:
        if word == level or word in {_said(code, f"level_{level}") for code in SUPPORTED}:
            return level
    return None


def _said(lang: str, key: str) -> str:
    """A word as someone would type it in `lang`: without the mark that sets an Arabic text's
    direction on screen."""
    return t(lang, key).strip("\u200f").casefold()


@dataclass(frozen=True, slots=True)
class SetClockSetting:
    """A clock button of /settings, or `/settings 60` (R20). By a group administrator
    (`admin`): the chat's turn clock from now on, and the open lobby's, whose table then shows
    it. By the player who opened the chat's game: that lobby's clock only. Refused while a
    game runs. `message` is the settings message pressed, redrawn with the choice ticked; a
    command (`reply_to`, the chat) is answered in one line. Refusals in the presser's `lang`."""

    seconds: int
    by: int
    admin: bool
    lang: str | None = None
    message: int | None = None
    reply_to: int | None = None

    def decide(self, record: Record, now: float) -> Decision:
        lang = self.lang or record.lang
        if self.seconds not in CLOCK_CHOICES:
            return refused(t(lang, "bad_button"), Why.BAD_BUTTON, self.reply_to)
        if not (self.admin or opener_of_open_game(record, self.by)):
            return refused(t(lang, "refusal_chat_settings"), Code.NOT_ALLOWED, self.reply_to)
        game = record.game
        if game is not None and game.phase in (Phase.PLAY, Phase.DECIDE):
            return refused(t(lang, "clock_running"), Code.ALREADY_STARTED, self.reply_to)
        lobby = game if game is not None and game.phase is Phase.LOBBY else None
        # The opener's choice is the lobby's alone; an administrator's, the chat's as well.
        chat_clock = self.seconds if self.admin else record.clock
        if record.clock == chat_clock and (lobby is None or lobby.clock == self.seconds):
            if self.reply_to is None:
                return Decision(result=Result.UNCHANGED)  # a second press on the same choice
            # `/settings 90` when it is 90 already: said so, and nothing written.
            key = "note_clock" if self.seconds else "note_clock_off"
            said = reply(self.reply_to, t(record.lang, key, seconds=self.seconds))
            return Decision(result=Result.UNCHANGED, extra=[said])
        if record.version == 0:
            # As /newgame would: a new group speaks the language of whoever set it up first.
            record.lang = self.lang or DEFAULT
        record.clock = chat_clock
        events: list[Event] = []
        if lobby is not None:
            move = SetClock(self.by, self.seconds, self.admin)
            record.game, events = apply(lobby, move, now)
        shown = render.settings(record.clock, record.game, record.place, record.lang)
        extra: list[Request] = []
        if self.message is not None:
            extra.append(Edit(record.chat, self.message, shown))
        if self.reply_to is not None:
            key = "note_clock" if self.seconds else "note_clock_off"
            extra.append(reply(self.reply_to, t(record.lang, key, seconds=self.seconds)))
        return Decision(write=True, events=events, extra=extra)
