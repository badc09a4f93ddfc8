"""What each command and button means: the chat's record as read, and the time, in; a decision out.

An act never writes or sends: it changes the record it is given (the transaction writes it,
conditionally on the version read, and runs the act again on a fresh read after a conflict) and
says what to send besides the screens. Each act is a small frozen value, built by the router
(`handlers.app`) from the update, decided by the transaction (`handlers.service`).

Here: the moves of a game and what the timer does; `handlers.lobby` has the acts around a game
(opening it, seats, computer players, the chat's settings).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from engine import (
    Code,
    Event,
    Expire,
    Forfeit,
    Game,
    Leave,
    LetItStand,
    MenteurError,
    Move,
    Phase,
    Play,
    Shout,
    Start,
    Stop,
    StopReason,
    VoteEnd,
    apply,
    can,
    settle,
)
from engine import events as ev
from handlers import metrics, names, plan, render, timing
from handlers.callbacks import GAME_IDS, Place, Press
from handlers.outcomes import Asking, Decision, Reason, Recordless, Result, Why
from handlers.questions import Standing
from handlers.screens import Button, EditButtons, HandSlot, Keyboard, Request, Screen, Send
from handlers.store import Record
from handlers.text import block, t, tn

if TYPE_CHECKING:
    from handlers.questions import Questions


def reply(chat: int, text: str, buttons: Keyboard = ()) -> Send:
    return Send(chat, Screen(text, buttons))


def refused(text: str, reason: Reason, reply_to: int | None) -> Decision:
    """A refusal: the answer to a button, or, for a command, a reply in the chat `reply_to`."""
    if reply_to is None:
        return Decision(refusal=text, result=Result.REFUSED, reason=reason)
    return Decision(extra=[reply(reply_to, text)], result=Result.REFUSED, reason=reason)


def opener_or_admin(record: Record, by: int, admin: bool) -> bool:
    """Who may stop the chat's game and remove its computer players: the player who opened
    it (running or over), or an administrator of the group."""
    return admin or (record.game is not None and by == record.game.opener)


def opener_of_open_game(record: Record, by: int) -> bool:
    """Whether `by` opened the chat's game, and it is not over: they may set that game's own
    clock and language (in the lobby), never the chat's for later games. Anyone may open a
    game, so the chat's settings are its administrators' alone."""
    game = record.game
    return game is not None and game.phase is not Phase.OVER and by == game.opener


@dataclass(frozen=True, slots=True)
class Refuse:
    """A command the bot will not take from this sender, whatever the game: one line why."""

    key: str
    reason: Reason
    reply_to: int
    lang: str | None = None

    def decide(self, record: Record, now: float) -> Decision:
        return refused(t(self.lang or record.lang, self.key), self.reason, self.reply_to)


# The moves only a member of the group may make: a player banned from it (or who left it)
# keeps the private chat their hand is in, and the buttons of the messages they saw.
_MEMBERS_MOVES = (Start, Play, Shout, LetItStand, VoteEnd)


@dataclass(frozen=True, slots=True)
class PlayerMove(Asking):
    """A player's move, judged by the engine after what the clock has decided (`settle`).

    From a button: `game_id` is the game it was drawn for. From a command: refusals are replies
    in the chat `reply_to`. Either way they are worded in the presser's `lang` (the group's
    when the sender's app gave none). A person's move that the engine would accept (a play,
    Liar!, Let it stand, a vote, Start) is refused when they are no longer in the group, as
    Telegram says (`ask`, its answer kept a while); leaving and forfeiting never are. Telegram
    not answering refuses nobody.
    """

    move: Move
    game_id: int | None = None
    lang: str | None = None
    reply_to: int | None = None
    outsider: bool = False  # asked: the player is no longer in the group

    async def ask(self, record: Record, now: float, questions: Questions) -> PlayerMove:
        game, move = record.game, self.move
        if (
            not isinstance(move, _MEMBERS_MOVES)
            or move.player < 0
            or game is None
            or (self.game_id is not None and self.game_id != record.game_id)
            or not can(game, move, now)
        ):
            return self  # nothing to ask: a computer player's, or refused by the record alone
        if await questions.standing(record.chat, move.player) is Standing.OUTSIDER:
            return replace(self, outsider=True)
        return self

    def decide(self, record: Record, now: float) -> Decision:
        lang = self.lang or record.lang
        game = record.game
        if game is None:
            return refused(t(lang, "no_game"), Why.NO_GAME, self.reply_to)
        if self.game_id is not None and self.game_id != record.game_id:
            return refused(t(lang, "old_game"), Why.OLD_GAME, self.reply_to)
        game, settled = settle(game, now)
        record.game = game
        if self.outsider:
            decision = refused(t(lang, "refusal_not_in_group"), Why.NOT_MEMBER, self.reply_to)
        else:
            try:
                record.game, events = apply(game, self.move, now)
            except MenteurError as e:
                decision = refused(render.refusal(e, game, lang), e.code, self.reply_to)
            else:
                return Decision(write=True, events=settled + events)
        decision.write, decision.events = bool(settled), settled
        return decision


@dataclass(frozen=True, slots=True)
class Kick(Asking):
    """/kick, by a group administrator (`admin`; None: Telegram is asked, only once the chat
    has a game): the player the command replies to a message of (`target`), or the one it
    names as the table shows them (`named`: "Sam ²", look-alikes told apart), is put out. Out
    of a running game as by a forfeit (R19: their hand set aside, ranked last), which the table
    tells as the administrator's doing and the player hears in private; off a lobby's table.
    Their presses are refused from then on. Refused, in the sender's `lang`: no game, not an
    administrator, nobody at the table by that reply or name."""

    by: int
    reply_to: int
    target: int | None
    named: str
    lang: str | None = None
    admin: bool | None = None

    async def ask(self, record: Record, now: float, questions: Questions) -> Kick:
        game = record.game
        if self.admin is not None or game is None or game.phase is Phase.OVER:
            return self
        return replace(self, admin=await questions.is_admin(record.chat, self.by))

    def _player(self, game: Game) -> int | None:
        """Whom the command means: among the players still in the game (or seated, in the
        lobby), the replied-to message's author, or the one name that reads as `named`."""
        shown = {
            player: label
            for seat, (player, label) in enumerate(render.shown_names(game).items())
            if game.phase is Phase.LOBBY or game.in_game(seat)
        }
        if self.target in shown:
            return self.target
        named = names.clean(self.named, len(self.named))
        found = [player for player, label in shown.items() if named and names.same(label, named)]
        return found[0] if len(found) == 1 else None

    def decide(self, record: Record, now: float) -> Decision:
        lang = self.lang or record.lang
        game = record.game
        if game is None or game.phase is Phase.OVER:
            return refused(t(lang, "no_game"), Why.NO_GAME, self.reply_to)
        if not self.admin:
            return refused(t(lang, "kick_not_allowed"), Code.NOT_ALLOWED, self.reply_to)
        player = self._player(game)
        if player is None:
            return refused(t(lang, "kick_whom"), Code.NOT_A_PLAYER, self.reply_to)
        running = game.phase is not Phase.LOBBY
        move = Forfeit(player, by_admin=True) if running else Leave(player)
        decision = PlayerMove(move, lang=self.lang, reply_to=self.reply_to).decide(record, now)
        if decision.write and running and player > 0 and player not in record.unreachable:
            told = t(record.lang_of(player), "kicked_private", group=record.title)
            decision.extra.append(Send(player, Screen(told)))
        return decision


SEAT, HAND = "j", "h"  # what a deep link's Start does: seat the user, or send their hand
# The deep links' payloads: <what><chat>_<game id>[_<forum topic>], in decimal.
START_PAYLOAD = re.compile(r"([jh])(-?\d{1,20})_(\d{1,15})(?:_(\d{1,10}))?")


def possible_game(chat: int, game_id: int) -> bool:
    """Whether a deep link's chat and game can name a game: a group's chat id (negative), and
    an id `GAME_IDS` draws from, or one of the ids that counted from 1 before them."""
    return chat < 0 and 0 < game_id < GAME_IDS.stop


def deep_link(bot_username: str, what: str, place: Place) -> str:
    """A link into the private chat whose Start does `what` (`SEAT`, `HAND`) for the game at
    `place`: Telegram forbids a bot to write first to someone who never opened a chat with it.
    It names the game's forum topic when it is played in one."""
    where = f"{place.chat}_{place.game}" + ("" if place.topic is None else f"_{place.topic}")
    return f"https://t.me/{bot_username}?start={what}{where}"


@dataclass(frozen=True, slots=True)
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
        # One answer for another game's link and for a game one is not in: a link names a
        # chat, and the answer must not tell whether that chat has a game.
        if (
            game is None
            or game.phase in (Phase.LOBBY, Phase.OVER)
            or self.user not in game.ids
            or (self.game_id is not None and self.game_id != record.game_id)
        ):
            return refused(t(lang, "not_playing"), Why.NOT_PLAYING, self.reply_to)
        screen = plan.hand_screen(record, game, self.user, now)
        extra: list[Request] = [Send(self.user, screen, HandSlot(self.user))]
        if self.reply_to == self.user:
            pass  # asked in private: the hand is the answer
        elif self.user in record.unreachable:
            link = deep_link(self.bot_username, HAND, record.place)
            button = Button(t(lang, "btn_open_private"), url=link)
            extra.append(reply(self.reply_to, t(lang, "hand_blocked"), ((button,),)))
        else:
            extra.append(reply(self.reply_to, t(lang, "hand_sent")))
        return Decision(extra=extra, result=Result.RESENT)


@dataclass(frozen=True, slots=True)
class TableAgain:
    """/table: the table again, as a new message at the bottom of the group."""

    lang: str | None = None

    def decide(self, record: Record, now: float) -> Decision:
        if record.game is None:
            return Decision(extra=[reply(record.chat, t(self.lang or record.lang, "no_game"))])
        return Decision(table_again=True, result=Result.RESENT)


@dataclass(frozen=True, slots=True)
class Say:
    """A fixed text from the catalogue, in the group's language (/help)."""

    key: str
    reply_to: int

    def decide(self, record: Record, now: float) -> Decision:
        return Decision(extra=[reply(self.reply_to, t(record.lang, self.key))])


@dataclass(frozen=True, slots=True)
class Rules:
    """/rules in the group: the rules in short, in the group's language, with this table's turn
    clock (its game's while one is open or running, else the chat's setting)."""

    reply_to: int

    def decide(self, record: Record, now: float) -> Decision:
        game = record.game
        seconds = game.clock if game is not None and game.phase is not Phase.OVER else record.clock
        return Decision(extra=[reply(self.reply_to, render.rules(record.lang, seconds))])


@dataclass(frozen=True, slots=True)
class Toggle(Recordless):
    """A card (un)selected: the hand's buttons redrawn from the button's own data (`press`), in
    the hand's message (`chat`, `message`); nothing read or written."""

    press: Press
    chat: int
    message: int
    lang: str

    def decide(self, record: Record, now: float) -> Decision:
        keyboard = render.hand_buttons(self.press, self.lang)
        return Decision(extra=[EditButtons(self.chat, self.message, keyboard)])


@dataclass(frozen=True, slots=True)
class ButtonAnswer(Recordless):
    """A button answered and nothing else: a refusal (`reason`) decided before any read, or a
    link to open (Join's, for someone the bot must first be allowed to write to)."""

    text: str | None = None
    link: str | None = None
    reason: Reason | None = None

    def decide(self, record: Record, now: float) -> Decision:
        if self.reason is not None:
            return Decision(refusal=self.text, result=Result.REFUSED, reason=self.reason)
        return Decision(answer=self.text, link=self.link)


@dataclass(frozen=True, slots=True)
class PrivateReply(Recordless):
    """One message into a private chat (`reply_to`), with no record: a fixed text (/help, /rules
    in private), or a refusal (`reason`) decided before any read."""

    text: str
    reply_to: int
    reason: Reason | None = None

    def decide(self, record: Record, now: float) -> Decision:
        result = Result.APPLIED if self.reason is None else Result.REFUSED
        return Decision(extra=[reply(self.reply_to, self.text)], result=result, reason=self.reason)


@dataclass(frozen=True, slots=True)
class Tick:
    """The timer's look at a game: every deadline passed (`settle`: R14's 45 seconds, R20's
    clock, R18's vote), or else a computer player's move or an idle end; R20's reminder; a
    redraw owed after a flood limit.

    What the clock decided is written and drawn on its own: a computer player takes its
    usual seconds after the table's play for an absent person, as after any play, so the
    group sees that play and can shout Liar! at it (R10) before the next one."""

    idle_expiry: float

    def decide(self, record: Record, now: float) -> Decision:
        set_for = record.next_look  # the moment the timer was set for
        decision = self._decide(record, now)
        # An idle end waits for the minute's sweep by design: its lateness says nothing.
        idle = any(
            isinstance(e, ev.Stopped) and e.reason is StopReason.IDLE for e in decision.events
        )
        acted = decision.result is not Result.NOTHING_DUE
        if acted and not idle and set_for is not None and now >= set_for:
            metrics.put("TimerLateness", now - set_for)
        return decision

    def _decide(self, record: Record, now: float) -> Decision:
        game: Game | None = record.game
        owed = record.owed is not None and now >= record.owed
        remind = timing.reminder_at(record)  # the stored turn's, before the clock moves it
        events: list[Event] = []
        settled = False
        if game is not None and game.phase is not Phase.OVER:
            game, events = settle(game, now)
            settled = game is not record.game
            record.game = game
            # The game's own next look (`record.next_look` may be a redraw's), and the computer
            # player's move it was set for, if any: decided once.
            look, move = timing.game_due(record, self.idle_expiry)
            # Nothing after what the clock told: the next look follows it, a few seconds on.
            if not events and game.phase is not Phase.OVER and look is not None and now >= look:
                if move is None and now - game.acted >= self.idle_expiry:
                    move = Expire(self.idle_expiry)
                if move is not None:
                    game, events = apply(game, move, now)
                    record.game = game
        reminded = game is not None and not settled and not events
        reminded = reminded and remind is not None and now >= remind
        # Only when nothing else happened: the turn is then the one whose reminder is due.
        reminder = self._remind(record, game, now) if reminded and game is not None else []
        if owed:
            # Screens Telegram made wait: the table, drawn from the game as it is now, once
            # however many redraws were owed, and every hand only if a hand was given up: a hand
            # drawn again loses the cards its owner was ticking. The mark goes with this write.
            record.redrawn, record.owed = record.owed, None
            metrics.put("RedrawsPaid", 1)
            result = Result.APPLIED if events else Result.RESENT
            hands = record.owed_hands
            return Decision(
                write=True,
                events=events,
                all_hands=hands,
                owed=True,
                result=result,
                extra=reminder,
            )
        if events or settled:
            # Settled with nothing told: R18's vote no longer needs the awaited person's, and
            # the End game button, if anyone voted, says so.
            redraw = bool(events) or (game is not None and game.votes != 0)
            return Decision(write=True, events=events, redraw=redraw)
        if reminded:
            # Written with the turn reminded of, so that a timer fired again (or twice at
            # once: one write wins) sends no second one; no screen changes.
            return Decision(write=True, extra=reminder, redraw=False, result=Result.REMINDED)
        return Decision(result=Result.NOTHING_DUE)

    @staticmethod
    def _remind(record: Record, game: Game, now: float) -> list[Request]:
        """R20: one private message to the person awaited to play when a third of their clock is
        left, in their language (none to a private chat that refuses the bot)."""
        record.reminded = game.turns
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


@dataclass(frozen=True, slots=True)
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
        return Decision(write=True, events=events, chat_closed=True)


@dataclass(frozen=True, slots=True)
class Redraw:
    """After a group became a supergroup, every button still names the old chat: draw the
    table and every hand again for the new one."""

    def decide(self, record: Record, now: float) -> Decision:
        if record.game is None:
            return Decision(result=Result.NOTHING_DUE)
        return Decision(table_again=True, all_hands=True, result=Result.RESENT)
