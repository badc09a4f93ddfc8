"""The offline table: you at one seat, computer players at the others, in this terminal.

The whole production path runs: a line you type becomes the Telegram updates your taps would
send (a callback query from your user for each button it names, with the chat and id of the
message holding the button), queued on a fake Bot API server (`infra/fake_telegram.py`) that
stands for Telegram; the runner fetches them with getUpdates and hands each to the webhook
function inside a Lambda event (`infra/runner.py`); the bot reads and conditionally writes the
game in dynalite and sends its screens to the fake; the terminal shows what the fake now holds,
as a Telegram app would: the group's table message, your private hand and the latest private
line below it, whose turn it is with the time left, and the latest group messages (a
challenge, a final play, the end). The timer function runs every second, so computer players
move a few seconds after their turn begins, a person's turn clock runs out and a final play is
let stand after 45 s.

The table speaks one language throughout, the game's: the bot's messages are in it, and the
terminal's own words come from the same catalogues (`handlers/i18n/*.json`, the `term_` keys).
The screen fits the terminal (80 × 24 and up): on a terminal it is drawn in place on the
alternate screen, only its changed lines, so nothing piles up in the scrollback; what matters
(the table, the hand, whose turn and the time left) stays, and the welcome, `help` and the
group's messages take the rows left over.

A line is read whole, then read by `infra/typed.py`: a card by what it is (10, 7h, R♥) or its
position (#3), a key or a button's name (p, l, s, e, b1; "Menteur !"); a line with anything
else changes nothing. `OfflineTable` is all of it but the terminal: tests drive it headless
(`enter`, `screen`, `run_until` with an injected clock); `run_terminal` is the loop around it,
which a test drives through a pseudo-terminal.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import functools
import getpass
import itertools
import math
import os
import queue
import re
import secrets
import sys
import threading
import time
import unicodedata
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, NamedTuple, Self, TextIO

from telegram.error import TelegramError

from engine import Game, Phase
from handlers import render
from handlers.callbacks import BadCallback, Kind, Press, decode
from handlers.config import Settings
from handlers.lobby import clock_choice
from handlers.store import Record
from handlers.text import SUPPORTED, t, tn
from infra import runner, typed
from infra.fake_telegram import FakeTelegram, StoredMessage, callback_update, message_update
from infra.runner import (
    DATA_DIR,
    OFFLINE_TABLE,
    TICK_SECONDS,
    Interrupts,
    LocalBot,
    Poller,
)

GROUP = -1001000000001  # the fake group's chat id (a supergroup's form)
PERSON = 1000001  # your user id, which is also your private chat's id
TOKEN = "1000001:offline-table"  # the fake Bot API server takes any token
OFFLINE_LOG = "offline.log"  # beside the data folder: the log would garble the screen

# The word that presses each of the game's buttons (`infra/typed.py`: typed as it is, as its
# key, or as the button's name in any language).
ACTION_KEYS: dict[Kind, str] = {
    Kind.PLAY: "play",
    Kind.SHOUT: "liar",
    Kind.STAND: "stand",
    Kind.VOTE: "end",
    Kind.JOIN: "join",
    Kind.LEAVE: "leave",
    Kind.START: "start",
}
# The keys shown beside the moves' buttons: letters of no language, the same at every table
# (typed.ALIASES reads them). Every other button shows b1, b2...; a card shows none.
SHOWN_KEYS: dict[Kind, str] = {Kind.PLAY: "p", Kind.SHOUT: "l", Kind.STAND: "s", Kind.VOTE: "e"}
NOTICES = 8
DEFAULT_PLAYERS = 4
WIDTH = 80  # the screen's width when no terminal says
_T_ME_START = re.compile(r"https://t\.me/(?P<bot>\w+)\?start=(?P<payload>[A-Za-z0-9_-]{1,64})")
# Isolates, marks and joiners lay text out in Telegram; a terminal would show gaps or boxes.
_INVISIBLE = re.compile("[\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069\u2060]")


@dataclass(frozen=True)
class Shown:
    """A button on the screen: the key shown beside it, the word that presses it (a move's or
    the lobby's), its label, and the message that holds it."""

    key: str | None
    text: str
    message: StoredMessage
    data: str | None = None  # callback_data
    url: str | None = None
    press: Press | None = None  # the data decoded, when it is the bot's

    @property
    def word(self) -> str | None:
        return ACTION_KEYS.get(self.press.kind) if self.press is not None else None


@dataclass(frozen=True)
class View:
    """The messages on the screen, as they read at one moment."""

    recent: list[StoredMessage]  # the group's messages since the table was dealt, but the table
    table: StoredMessage | None
    private: list[StoredMessage]  # the private chat's latest unread message, but the hand
    hand: StoredMessage | None
    running: bool  # a game is on (not over)
    game: Game | None = None
    now: float = 0.0  # the bot's clock when the view was read

    def deadline(self) -> float | None:
        """The running game's deadline: R20's clock of the person to play, or R14's 45 s."""
        game = self.game
        if game is None or game.phase not in (Phase.PLAY, Phase.DECIDE):
            return None
        if game.phase is Phase.PLAY and not game.clock:
            return None  # with the clock off only R18's vote times a turn: nothing to count down
        return game.deadline


def plain_text(text: str) -> str:
    return _INVISIBLE.sub("", text)


def _rows(message: StoredMessage) -> list[list[dict[str, Any]]]:
    markup = message.reply_markup or {}
    return [list(row) for row in markup.get("inline_keyboard", [])]


def _decoded(data: str | None) -> Press | None:
    try:
        return decode(data)
    except BadCallback:
        return None


class OfflineTable:
    """A person at the offline table: what they press and type, what their screens show.

    `clock` is the bot's clock and `sleep` is how time passes between ticks: a test injects a
    clock it advances by hand (`sleep=clock.advance`), so 45 seconds take no time at all.
    """

    def __init__(
        self,
        *,
        players: int | None = None,
        lang: str | None = None,
        name: str | None = None,
        data_dir: Path | None = DATA_DIR,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        seed: int | None = None,
        new: bool = False,
        turn_clock: str | None = None,
        level: str | None = None,
    ) -> None:
        if players is not None and not 2 <= players <= 8:
            raise ValueError("2 to 8 players, you included")
        if lang is not None and lang not in SUPPORTED:
            raise ValueError(f"a language among {', '.join(SUPPORTED)}")
        # None: not asked for. A new game then has 4 players, in the group's language (English
        # the first time); a saved game is resumed as it is, and options that ask for another
        # table are answered (`_begin`).
        self.asked = (players, lang)
        self.players = players or DEFAULT_PLAYERS
        self.lang = lang or "en"  # the table's: its game's, once started
        self.turn_clock = turn_clock  # /newgame's argument ("off", "60"); None: the chat's
        self.level = level  # /addbot's argument ("easy", "hard"); None: normal
        self.name = name or _login_name()
        self.data_dir = data_dir
        self.clock = clock
        self.sleep = sleep
        self.seed = seed
        self.new = new
        self.notices: deque[str] = deque(maxlen=NOTICES)
        self.welcome: list[str] = []  # the first screen's words, until the first line typed
        self.help = False  # `help` was the latest line: its words show until the next
        self._dealing = False  # the table's own /newgame, Join and Start: nothing to tell
        # What dealing or resuming made the bot say (/newgame's lobby, "I sent your hand…") is
        # the table's own doing: not shown. Messages up to these ids are that.
        self._group_floor = 0
        self._private_floor = 0
        # A private message is read once a line has been typed after it was shown, and then
        # hidden at the next turn (a reminder of a turn gone by is not about this one): one
        # that came as a turn went away stays until read.
        self._read = 0  # the latest private message id shown when a line was typed
        self._turn_floor = 0  # the latest private message id shown before the turn changed
        self._seen = (0, -1)  # (latest private message id, the game's turns) last drawn
        # Update ids only grow, across runs too, as Telegram's do: the game item keeps the last
        # few applied, and a repeated id would be taken for a repeated update.
        self._ids = itertools.count(time.time_ns() // 1_000_000)
        self._stack = contextlib.ExitStack()
        self._tg: FakeTelegram | None = None
        self._local: LocalBot | None = None
        self._poller: Poller | None = None
        self._bot_user: dict[str, Any] = {}

    # --- lifecycle --------------------------------------------------------------------------

    @property
    def tg(self) -> FakeTelegram:
        if self._tg is None:
            raise RuntimeError("the table is not started")
        return self._tg

    @property
    def local(self) -> LocalBot:
        if self._local is None:
            raise RuntimeError("the table is not started")
        return self._local

    @property
    def poller(self) -> Poller:
        if self._poller is None:
            raise RuntimeError("the table is not started")
        return self._poller

    def start(self) -> Self:
        """Start the fake Telegram, dynalite and the bot; resume the saved game or deal one."""
        try:
            self._tg = self._stack.enter_context(FakeTelegram())
            self._tg.owners.add((GROUP, PERSON))  # your group: its language is yours to set
            self.tg.owners.add((GROUP, PERSON))  # you created the group: /stop is yours
            settings = Settings(
                table_name=OFFLINE_TABLE,
                bot_token=TOKEN,
                webhook_secret=secrets.token_urlsafe(32),
                api_base_url=self.tg.base_url,
            )
            self._local = self._stack.enter_context(
                LocalBot(settings, data_dir=self.data_dir, clock=self.clock, seed=self.seed)
            )
            self._poller = Poller(self.local)
            self.poller.start()
            me = self.local.rt.run(self.local.rt.bot.get_me())
            self._bot_user = {
                "id": me.id,
                "is_bot": True,
                "first_name": me.first_name,
                "username": me.username,
            }
            self._begin()
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        """Stop the bot, dynalite and the fake Telegram; safe to call twice."""
        self._poller = None
        self._local = None
        self._tg = None
        self._stack.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _begin(self) -> None:
        record = self.record()
        self._reclaim_message_ids(record)
        game = record.game
        running = game is not None and game.phase is not Phase.OVER
        resumed = (
            game is not None
            and game.phase in (Phase.PLAY, Phase.DECIDE)
            and PERSON in game.ids
            and not self.new
        )
        # A saved game speaks its own language, options that ask for another answered in it;
        # a new one, the language asked for, or else the group's, as the bot keeps it.
        self.lang = record.lang if resumed else self.asked[1] or record.lang
        if self.local.dynalite.stopped_orphan is not None:
            self.note(self.words("term_store_stopped"))
        if game is not None and resumed:
            self.players = len(game.ids)
            self.local.resume(GROUP)  # the time the runner was off was nobody's to play
            saved = (len(game.ids), record.lang, game.clock)
            key = "term_resumed_afresh" if game.clock else "term_resumed"
            self.note(self.words(key, table=self._table_words(*saved)))
            asked = self._asked_otherwise(*saved)
            if asked:
                self.note(self.words("term_asked", asked=asked))
            self.type("/table")
            self.type("/hand")
            self._dealt()
            self.welcome = self._welcome()[-1:]  # back at a table already seen: its clock
            return
        if running:
            self.type("/stop")
            stopped = self.record().game
            if stopped is not None and stopped.phase is not Phase.OVER:
                raise RuntimeError(f"the saved game could not be stopped: {self.last_group()}")
            if self.new and game is not None and game.phase is not Phase.LOBBY:
                self.note(self.words("term_new_dealt"))
        if record.lang != self.lang:
            self.choose_language(self.lang)
        self.new_game()
        self.welcome = self._welcome()

    def _table_words(self, players: int, lang: str, seconds: int) -> str:
        """A table in a few words, in the table's language: "4 players · English · turn clock
        90 s" (a language by its own name)."""
        language = t(lang, "language_name")
        if seconds:
            return tn(self.lang, "term_table_clock", players, language=language, seconds=seconds)
        return tn(self.lang, "term_table_no_clock", players, language=language)

    def _asked_otherwise(self, players: int, lang: str, seconds: int) -> str:
        """What the options asked for that the saved table is not ("Français"), or ""."""
        asked_players, asked_lang = self.asked
        asked_seconds = clock_choice(self.turn_clock) if self.turn_clock else None
        parts = []
        if asked_players is not None and asked_players != players:
            parts.append(tn(self.lang, "term_asked_players", asked_players))
        if asked_lang is not None and asked_lang != lang:
            parts.append(t(asked_lang, "language_name"))
        if asked_seconds is not None and asked_seconds != seconds:
            parts.append(
                t(self.lang, "term_asked_clock", seconds=asked_seconds)
                if asked_seconds
                else t(self.lang, "term_asked_no_clock")
            )
        return t(self.lang, "list_separator").join(parts)

    def _welcome(self) -> list[str]:
        """The first screen's words: how to play, the keys, the clock and how to turn it off."""
        game = self.record().game
        seconds = game.clock if game is not None else 0
        clock = (
            self.words("term_welcome_clock", seconds=seconds)
            if seconds
            else self.words("term_welcome_no_clock")
        )
        return [self.words("term_welcome"), clock]

    def _reclaim_message_ids(self, record: Record) -> None:
        """A new fake Telegram numbers messages from 1 again, but the store remembers the ids
        of the previous run's messages and the bot edits them. The fake adopts a message it
        never saw when asked to edit it, so those ids are claimed first (each edit answers "not
        modified") and new messages are numbered after them, as Telegram would."""
        remembered = [(GROUP, record.table_msg), (GROUP, record.final_msg)]
        remembered += list(record.hand_msgs.items())
        bot = self.local.rt.bot
        for chat, message_id in remembered:
            if message_id is not None:
                with contextlib.suppress(TelegramError):
                    self.local.rt.run(
                        bot.edit_message_reply_markup(chat_id=chat, message_id=message_id)
                    )

    def _dealt(self) -> None:
        """The table is dealt (or resumed): what the bot said until now is not news."""
        self._group_floor = max((m.message_id for m in self.tg.chat_messages(GROUP)), default=0)
        self._private_floor = max((m.message_id for m in self.tg.chat_messages(PERSON)), default=0)

    # --- what the person does ---------------------------------------------------------------

    def enter(self, line: str) -> bool:
        """A line typed at the prompt: a /command for the group, or cards, keys and words
        (`infra/typed.py`). A line with a word that means nothing, a card not in the hand, or
        a play off turn changes nothing and says why. False: quit."""
        line = line.strip()
        self.notices.clear()  # the notices answer the latest line
        self.welcome = []  # the first screen's words have been read
        self.help = False
        self._read = self._seen[0]
        if not line:
            return True
        if line.startswith("/"):
            self.type(line)
            return True
        labels = [s.text for s in self.hand_cards()]
        try:
            tokens = typed.parse(line, BUTTONS)
            chosen = typed.choose(tokens, labels)
        except typed.Meaningless as refused:
            self.note(self.words("term_meaningless", word=refused.word))
            return True
        except typed.NotInHand as refused:
            self.note(self._not_in_hand(refused))
            return True
        if typed.Word(ACTION_KEYS[Kind.PLAY]) in tokens and not self.your_turn():
            # The turn may have gone while the line was typed (a challenge, R10): nothing of it
            # is done, so no card is left selected for a play that cannot come.
            self.note(self._not_your_turn())
            return True
        cards = [label.removeprefix("✓") for label in labels]
        for token, index in zip(tokens, chosen, strict=True):
            if index is not None:
                self.toggle(cards[index])
                continue
            assert isinstance(token, typed.Word)
            if token.word == "quit":
                return False
            if token.word == "new":
                self.new_game_if_over()
            elif token.word == "help":
                self.help = True
            elif not self.press(token.word):
                break  # the words after it were meant for a screen that did not come
        return True

    def _not_in_hand(self, refused: typed.NotInHand) -> str:
        token = refused.token
        if isinstance(token, typed.Position):
            return tn(self.lang, "term_no_position", refused.held, number=token.number)
        return self.words("term_not_held", card=token.name, typed=token.text)

    def _not_your_turn(self) -> str:
        """Why a play cannot be made now: whose turn it is, when it is someone's to play."""
        game = self.record().game
        if game is not None and game.phase is Phase.PLAY and game.awaited not in (None, PERSON):
            return self.words("term_not_your_turn", name=self._name_of(game, game.awaited))
        return self.words("term_no_turn")

    def hand_cards(self, view: View | None = None) -> list[Shown]:
        """Your hand's card buttons, in screen order (their labels: "10♠", "✓7♥" if selected)."""
        shown = self.buttons(view)
        return [s for s in shown if s.press is not None and s.press.kind is Kind.TOGGLE]

    def toggle(self, card: str) -> None:
        """Select or unselect `card` ("10♠") in your hand: a tap on its button as it is now."""
        for shown in self.hand_cards():
            if shown.text.removeprefix("✓") == card:
                self.press_button(shown)
                return
        self.note(self.words("term_no_longer_held", card=card))

    def press(self, key: str) -> bool:
        """Press the button that `key` names (a word, or b1...); False when none does."""
        shown = self.keymap().get(key)
        if shown is None:
            self.note(self._missing(key))
            return False
        self.press_button(shown)
        return True

    def _missing(self, key: str) -> str:
        if key == ACTION_KEYS[Kind.PLAY]:
            if not self.your_turn():
                return self._not_your_turn()
            return self.words("term_select_first")
        if key == ACTION_KEYS[Kind.SHOUT]:
            return self.words("term_no_shout")
        if key == ACTION_KEYS[Kind.STAND]:
            return self.words("term_no_stand")
        return self.words("term_no_button", button=key)

    def press_button(self, shown: Shown) -> None:
        """A tap on a button: a callback query from you, sent as Telegram sends it."""
        if shown.url is not None:
            self._open(shown.url)
            return
        message = shown.message
        query_id = str(next(self._ids))
        self._deliver(
            callback_update(
                message.chat_id,
                PERSON,
                message.message_id,
                shown.data or "",
                callback_id=query_id,
                first_name=self.name,
                language_code=self.lang,
                chat_title=self.group_title,
                shown=message,
            )
        )
        # Telegram shows the answer (performed from the webhook reply) as a notice, or opens
        # the URL it carries. The table's own dealing tells nothing.
        for call in reversed(self.tg.calls("answerCallbackQuery")):
            if call.params.get("callback_query_id") == query_id:
                if call.params.get("text") and not self._dealing:
                    text = str(call.params["text"])
                    self.note(self.words("term_bot_says", bot=self._bot_name(), text=text))
                if call.params.get("url"):
                    self._open(str(call.params["url"]))
                break

    def type(self, text: str, chat: int = GROUP) -> None:
        """Send a text message from you: into the group, or into your private chat."""
        self._deliver(
            message_update(
                chat,
                PERSON,
                text,
                message_id=next(self._ids),
                first_name=self.name,
                language_code=self.lang,
                chat_title=self.group_title,
                date=self.clock(),
            )
        )

    def choose_language(self, lang: str) -> None:
        """/language in the group, then the button of `lang` in the bot's answer."""
        self.type("/language")
        wanted = SUPPORTED.index(lang)
        for message in reversed(self.tg.chat_messages(GROUP)):
            for row in _rows(message):
                for button in row:
                    press = _decoded(button.get("callback_data"))
                    if press is not None and press.kind is Kind.LANGUAGE and press.number == wanted:
                        self.press_button(self._shown(None, button, message))
                        return
        raise RuntimeError(f"no button for {lang} in the answer to /language")

    def new_game(self) -> None:
        """What a person does for a game against computers: /newgame, Join (and Start in the
        private chat the button opens), /addbot for each computer player, Start."""
        self._dealing = True
        try:
            self.type("/newgame" + (f" {self.turn_clock}" if self.turn_clock else ""))
            self._press_kind(Kind.JOIN)
            for _ in range(self.players - 1):
                self.type("/addbot" + (f" {self.level}" if self.level else ""))
            self._press_kind(Kind.START)
        finally:
            self._dealing = False
        game = self.record().game
        if game is None or game.phase not in (Phase.PLAY, Phase.DECIDE):
            raise RuntimeError(f"the game did not start: {self.last_group()}")
        self._dealt()

    def new_game_if_over(self) -> None:
        """n: a new game like the one just played (its number of players; the group's language
        is kept as the group's setting)."""
        game = self.record().game
        if game is not None and game.phase is not Phase.OVER:
            self.note(self.words("term_game_running"))
            return
        if game is not None and game.phase is Phase.OVER:
            self.players = len(game.ids)
        self.new_game()

    def _press_kind(self, kind: Kind) -> None:
        if not self.press(ACTION_KEYS[kind]):
            raise RuntimeError(f"no {kind.name} button: {self.last_group()}")

    def _open(self, url: str) -> None:
        """A link opened: t.me/<bot>?start=<payload> opens the private chat with the bot, whose
        Start button sends "/start <payload>"."""
        found = _T_ME_START.fullmatch(url)
        if found is None:
            self.note(self.words("term_link", url=url))
            return
        if not self._dealing:  # the table's own Join opens it with nobody watching
            self.note(self.words("term_private_opened", bot=f"@{found['bot']}"))
        self.type(f"/start {found['payload']}", chat=PERSON)

    def _deliver(self, update: dict[str, Any]) -> None:
        """Into Telegram's queue of updates, then one poll: the runner hands it to the webhook."""
        update = {"update_id": next(self._ids), **update}
        self.tg.push_update(update)
        if self.poller.poll_once(0) == 0:
            log = runner.shown(self.data_dir.parent / OFFLINE_LOG) if self.data_dir else "log"
            self.note(self.words("term_not_taken", log=log))

    def farewell(self) -> str:
        """What leaving says: a running game is kept, and how to come back to it."""
        return self.words("term_saved" if self.game_running() else "term_bye")

    def note(self, text: str) -> None:
        self.notices.append(text)

    def words(self, entry: str, /, **values: object) -> str:
        """The table's own words (a `term_` entry of the catalogues), in its language."""
        return plain_text(t(self.lang, entry, **values))

    @property
    def group_title(self) -> str:
        """The fake group's title, in the table's language: its name shows in the bot's lines."""
        return self.words("term_group_title")

    def _bot_name(self) -> str:
        return f"@{self._bot_user.get('username', 'bot')}"

    def _name_of(self, game: Game, player: int | None) -> str:
        return plain_text(render.name_of(game, player, self.lang))

    # --- time -------------------------------------------------------------------------------

    def tick(self) -> None:
        """One second of the runner: updates left to try again, then the timer's sweep."""
        self.poller.poll_once(0)
        self.local.tick()

    def step(self, seconds: float = TICK_SECONDS) -> None:
        self.sleep(seconds)
        self.tick()

    def run_until(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Let time pass, a tick a second, until `predicate()` holds or `timeout` seconds of
        the clock have passed; returns whether it holds."""
        deadline = self.clock() + timeout
        while not predicate():
            if self.clock() >= deadline:
                return False
            self.step()
        return True

    # --- what the person sees ---------------------------------------------------------------

    def record(self) -> Record:
        """The group's record in the store (what the bot remembers: its table, your hand)."""
        return self.local.rt.store.load(GROUP)

    def game_running(self) -> bool:
        game = self.record().game
        return game is not None and game.phase is not Phase.OVER

    def last_group(self) -> str:
        texts = [m.text for m in self.tg.chat_messages(GROUP) if m.text]
        return texts[-1] if texts else "(nothing)"

    def view(self) -> View:
        """What the screen shows now: one read of the store, one look at the fake's chats."""
        record = self.record()
        table = self.tg.message(GROUP, record.table_msg) if record.table_msg else None
        hand_id = record.hand_msgs.get(PERSON)
        hand = self.tg.message(PERSON, hand_id) if hand_id else None
        table = table if table is not None and table.text else None
        hand = hand if hand is not None and hand.text else None
        group = [
            m
            for m in self.tg.chat_messages(GROUP)
            if m.text
            and m.message_id > self._group_floor
            and (table is None or m.message_id != table.message_id)
        ]
        private = [
            m
            for m in self.tg.chat_messages(PERSON)
            if m.text
            and m.message_id > self._private_floor
            and (hand is None or m.message_id != hand.message_id)
        ]
        game = record.game
        private = [m for m in private if plain_text(m.text or "") not in self._pings(game)]
        turns = game.turns if game is not None else -1
        latest = max((m.message_id for m in private), default=0)
        if turns != self._seen[1]:
            self._turn_floor = self._seen[0]
        self._seen = (latest, turns)
        floor = min(self._turn_floor, self._read)
        private = [m for m in private if m.message_id > floor]
        return View(
            recent=group,
            table=table,
            private=private[-1:],
            hand=hand,
            running=game is not None and game.phase is not Phase.OVER,
            game=game,
            now=self.clock(),
        )

    def _pings(self, game: Game | None) -> set[str]:
        """The bot's "your turn" lines, which notify a phone: here the rule under the hand says
        whose turn it is, with the time left."""
        group = self.group_title
        pings = {plain_text(t(self.lang, "ping_play", group=group))}
        for name in render.shown_names(game).values() if game is not None else ():
            pings.add(plain_text(t(self.lang, "ping_decide", group=group, player=name)))
        return pings

    def buttons(self, view: View | None = None) -> list[Shown]:
        """Every button on the screen, in screen order, with its key: the moves' buttons their
        letter (SHOWN_KEYS), other buttons b1, b2..., and the cards none (a card is typed as
        what it is)."""
        view = view or self.view()
        shown = []
        others = itertools.count(1)
        messages = [m for m in (view.table, view.hand, *view.private, *view.recent) if m]
        for message in messages:
            for row in _rows(message):
                for button in row:
                    press = _decoded(button.get("callback_data"))
                    if press is not None and press.kind is Kind.TOGGLE:
                        key = None
                    elif press is not None and press.kind in SHOWN_KEYS:
                        key = SHOWN_KEYS[press.kind]
                    else:
                        key = f"b{next(others)}"
                    shown.append(self._shown(key, button, message))
        return shown

    def keymap(self, view: View | None = None) -> dict[str, Shown]:
        """Key or word to button. Liar! and Let it stand can show on more than one message
        (the table, a final play, your hand); they do the same, and the table's is the one
        pressed."""
        view = view or self.view()
        table_id = view.table.message_id if view.table else None
        ranked = sorted(
            self.buttons(view),
            key=lambda s: (
                s.message.chat_id != GROUP or s.message.message_id != table_id,
                s.message.chat_id != GROUP,
                -s.message.message_id,
            ),
        )
        keymap: dict[str, Shown] = {}
        for shown in ranked:
            for key in (shown.word, shown.key):
                if key is not None:
                    keymap.setdefault(key, shown)
        return keymap

    def your_turn(self) -> bool:
        """Whether your hand says it is your turn to play (its cards may be played)."""
        return any(
            s.press is not None and s.press.kind is Kind.TOGGLE and s.press.rank >= 0
            for s in self.buttons()
        )

    def screen(self, width: int = WIDTH, height: int | None = None) -> str:
        """The screen as text (`lines`)."""
        return "\n".join(self.lines(width, height))

    def lines(self, width: int = WIDTH, height: int | None = None) -> list[str]:
        """The screen's lines, none wider than `width` cells and at most `height` of them (all
        when None): the table; your hand, and your private chat's latest unread line below it,
        as Telegram shows it; a rule saying whose turn it is and the time left; then the group's
        messages since the deal (a challenge, a final play, the end), the welcome or `help`,
        the answers to the latest line, and a reminder of the keys. When the screen is short,
        the group's earlier lines give way first, then the reminder, the rule's title, the
        welcome's or `help`'s last lines, the private line; the table, the hand and the clock
        stay. The time of a deadline ("plays by 21:04:30 UTC") shows the time left beside
        it, counted down at every redraw (every second)."""
        view = self.view()
        by_message: dict[tuple[int, int], list[Shown]] = {}
        for shown in self.buttons(view):
            key = (shown.message.chat_id, shown.message.message_id)
            by_message.setdefault(key, []).append(shown)
        # Telegram's words where the terminal's differ (cards are typed, not tapped), and none
        # for what the rule under the hand says already (the time left to play).
        lines_as: dict[str, str | None] = {
            plain_text(t(self.lang, "hand_pick")): self.words("term_hand_pick")
        }
        marks = {}
        deadline = view.deadline()
        if deadline is not None:
            at = time.strftime("%H:%M:%S UTC", time.gmtime(int(deadline)))
            marks[at] = f"{at} {countdown(deadline - view.now)}"
            lines_as[plain_text(t(self.lang, "hand_play_by", time=at))] = None

        def lines_of(message: StoredMessage) -> list[str]:
            return _message_lines(message, by_message, width, lines_as, marks)

        def said(texts: Iterable[str]) -> list[str]:
            return [line for text in texts for line in wrap(text, width)]

        table = lines_of(view.table) if view.table else said([t(self.lang, "no_game")])
        hand = lines_of(view.hand) if view.hand else said([t(self.lang, "hand_not_seated")])
        private = [line for message in view.private for line in lines_of(message)]
        group: list[str] = []
        if view.recent:
            group.append(_rule(self.words("term_group", group=self.group_title), width))
            for i, message in enumerate(view.recent):
                group += [*(["  ·"] if i else []), *lines_of(message)]
        words = said(self.words("term_help").split("\n")) if self.help else said(self.welcome)
        hint = self.words("term_hint" if view.running else "term_hint_over")
        parts = [
            _Part(table, 0),
            _Part([_rule(self.words("term_private", bot=self._bot_name()), width)], 3),
            _Part(hand, 0),
            _Part(private, 1),
            _Part([_rule(self._clock_line(view) or "", width)], 0),
            _Part(group, 6, from_top=True),
            _Part(words, 2),
            _Part(said(self.notices), 1),
            _Part(said([hint]), 4),
        ]
        return _fit(parts, height)

    def _clock_line(self, view: View) -> str | None:
        """The time left to whoever is awaited, when a deadline runs: impossible to miss."""
        game, deadline = view.game, view.deadline()
        if game is None or deadline is None or game.turn is None:
            return None
        left = countdown(deadline - view.now)
        awaited = game.ids[game.turn]
        name = self._name_of(game, awaited)
        if game.phase is Phase.DECIDE:
            if awaited == PERSON:
                return self.words("term_clock_decide", left=left)
            return self.words("term_clock_decide_other", left=left, name=name)
        if awaited == PERSON:
            return self.words("term_clock_play", left=left)
        return self.words("term_clock_other", left=left, name=name)

    @staticmethod
    def _shown(key: str | None, button: dict[str, Any], message: StoredMessage) -> Shown:
        data = button.get("callback_data")
        return Shown(
            key=key,
            text=str(button.get("text", "")),
            message=message,
            data=data,
            url=button.get("url"),
            press=_decoded(data),
        )


def button_labels() -> typed.Buttons:
    """The game's buttons by their labels in every language the bot speaks ("Let it stand",
    "ترك الأمر", "Jouer 2 × 4": `typed.buttons`), each to the word that presses it."""
    keys = {
        "btn_play": Kind.PLAY,
        "btn_liar": Kind.SHOUT,
        "btn_stand": Kind.STAND,
        "btn_end_unvoted": Kind.VOTE,
        "btn_end": Kind.VOTE,
        "btn_join": Kind.JOIN,
        "btn_leave": Kind.LEAVE,
        "btn_start": Kind.START,
    }
    slot = typed.SLOT
    return typed.buttons(
        (plain_text(t(lang, key, n=slot, rank=slot, votes=slot, needed=slot)), ACTION_KEYS[kind])
        for lang in SUPPORTED
        for key, kind in keys.items()
    )


def _login_name() -> str:
    """Your name at the table unless --name says otherwise: the login name, capitalized."""
    try:
        name = getpass.getuser()
    except (KeyError, OSError):  # no user name to be found (a container, say)
        name = ""
    return name[:32].capitalize() or "Player"


def countdown(seconds: float) -> str:
    """The time left, rounded up to the second ("⏱ 1:05"; "⏱ 0:00" once it is up)."""
    left = max(0, math.ceil(seconds))
    return f"⏱ {left // 60}:{left % 60:02d}"


# --- the screen's lines, fitted ---------------------------------------------------------------


@functools.cache
def _cell(char: str) -> int:
    """The columns `char` takes in a terminal: 2 for a wide one (an emoji, a CJK letter), 0
    for a mark that combines with the one before (Arabic's vowels) or a format character."""
    if unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in "WF" else 1


def cells(text: str) -> int:
    return sum(_cell(char) for char in text)


def wrap(text: str, width: int, indent: str = "  ") -> list[str]:
    """`text`'s lines, each `indent`ed and cut between words to at most `width` columns (a
    word longer than a line is cut where it must); blank lines dropped: the screen is short."""
    out = []
    room = max(8, width - cells(indent))
    for paragraph in plain_text(text).splitlines():
        line = ""
        for word in paragraph.split(" "):
            candidate = f"{line} {word}" if line else word
            if cells(candidate) <= room:
                line = candidate
                continue
            if line:
                out.append(line)
            rest = word
            while cells(rest) > room:
                cut = _cut(rest, room)
                out.append(rest[:cut])
                rest = rest[cut:]
            line = rest
        if line.strip():
            out.append(line)
    return [f"{indent}{line}".rstrip() for line in out]


def _cut(word: str, room: int) -> int:
    """How many characters of `word` fit in `room` columns (at least one)."""
    used = 0
    for i, char in enumerate(word):
        used += _cell(char)
        if used > room:
            return max(1, i)
    return len(word)


def _rule(title: str, width: int) -> str:
    head = f"── {plain_text(title)} " if title else ""
    if cells(head) > width - 4:
        head = head[: _cut(head, width - 5)] + "… "
    return head + "─" * max(4, width - cells(head))


def _message_lines(
    message: StoredMessage,
    by_message: dict[tuple[int, int], list[Shown]],
    width: int,
    lines_as: dict[str, str | None] | None = None,
    marks: dict[str, str] | None = None,
) -> list[str]:
    """A message's lines, a line that is a key of `lines_as` shown as its value (not at all
    when None), each key of `marks` in a line replaced by its value; then its buttons: the
    cards by their labels alone, flowing to the width; the other buttons with their keys, on
    lines of their own."""
    lines = []
    for text in (message.text or "").splitlines():
        line = plain_text(text)
        shown_text = (lines_as or {}).get(line, line)
        if shown_text is None:
            continue
        for old, new in (marks or {}).items():
            shown_text = shown_text.replace(old, new)
        lines += wrap(shown_text, width)
    shown = by_message.get((message.chat_id, message.message_id), [])
    cards = [plain_text(s.text) for s in shown if s.key is None]
    keyed = [f"[{s.key}] {plain_text(s.text)}" for s in shown if s.key is not None]
    return lines + _flow(cards, width) + _flow(keyed, width)


def _flow(items: list[str], width: int, indent: str = "  ") -> list[str]:
    """`items` side by side, two spaces apart, a line broken between two of them."""
    rows: list[str] = []
    for item in items:
        candidate = f"{rows[-1]}  {item}" if rows else item
        if rows and cells(indent + candidate) <= width:
            rows[-1] = candidate
        else:
            rows.append(item)
    return [line for row in rows for line in wrap(row, width, indent)]


class _Part(NamedTuple):
    """A part of the screen: its lines, and when it gives way to a short screen (0: never;
    the highest first), from its last lines up, or from its first down (`from_top`: its title
    line stays, then "⋮" and its latest lines)."""

    lines: list[str]
    gives: int
    from_top: bool = False


def _fit(parts: list[_Part], height: int | None) -> list[str]:
    """The parts' lines, in order, within `height` lines when it is given."""
    kept = [list(part.lines) for part in parts]
    excess = sum(map(len, kept)) - height if height is not None else 0
    for i in sorted(range(len(parts)), key=lambda i: (-parts[i].gives, -i)):
        lines = kept[i]
        if excess <= 0 or parts[i].gives == 0:
            break
        drop = excess + 1  # "⋮" takes a line
        if parts[i].from_top and drop < len(lines) - 1:
            kept[i] = [lines[0], "  ⋮", *lines[1 + drop :]]
            excess = 0
        elif parts[i].from_top:
            kept[i] = []
            excess -= len(lines)
        else:
            cut = min(excess, len(lines))
            kept[i] = lines[: len(lines) - cut]
            excess -= cut
    return [line for lines in kept for line in lines]


BUTTONS = button_labels()


# --- the terminal -------------------------------------------------------------------------------


_ESCAPES = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|O.|.)?")  # arrows, function keys…
_COUNTDOWNS = re.compile(r"⏱ \d+:\d\d")


class Keyboard:
    """Lines typed at the terminal, waited for without blocking the ticks.

    On a terminal (POSIX), keys are read one at a time (cbreak mode: Ctrl-C still interrupts)
    and the line being typed is kept here, so the screen can be drawn again every second, its
    countdown running, without losing what is half typed: Backspace, Ctrl-U and Ctrl-W edit
    it, Enter sends it whole, Ctrl-D on an empty line leaves. Elsewhere (a pipe, Windows),
    lines as they come: select() on POSIX, a reader thread otherwise. `read` returns the lines
    complete so far, or None at the end."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._posix = os.name == "posix"
        self.tty = self._posix and stream.isatty()
        self.buffer = ""  # the line being typed (on a terminal)
        self.edited = False  # the buffer changed since the last read
        self._pending = ""
        self._saved: list[Any] | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._lines: queue.Queue[str | None] = queue.Queue()
        if not self._posix:
            threading.Thread(target=self._pump, name="stdin", daemon=True).start()

    def __enter__(self) -> Self:
        if self.tty:
            import termios  # noqa: PLC0415 - POSIX only
            import tty  # noqa: PLC0415

            fd = self.stream.fileno()
            self._saved = termios.tcgetattr(fd)
            # A runner killed outright (kill -9) left the terminal as it had set it: it is
            # given back as a shell wants it, lines echoed and edited.
            self._saved[3] |= termios.ECHO | termios.ICANON
            tty.setcbreak(fd)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._saved is not None:
            import termios  # noqa: PLC0415 - POSIX only

            termios.tcsetattr(self.stream.fileno(), termios.TCSADRAIN, self._saved)
            self._saved = None

    def _pump(self) -> None:
        for line in self.stream:
            self._lines.put(line)
        self._lines.put(None)

    def read(self, timeout: float) -> list[str] | None:
        self.edited = False
        if not self._posix:
            try:
                line = self._lines.get(timeout=timeout)
            except queue.Empty:
                return []
            return None if line is None else [line]
        import select  # noqa: PLC0415 - POSIX only

        fd = self.stream.fileno()
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            return []
        chunk = os.read(fd, 4096)
        if not chunk:
            return None
        text = self._decoder.decode(chunk)
        if not self.tty:
            self._pending += text
            *lines, self._pending = self._pending.split("\n")
            return lines
        return self._keys(_ESCAPES.sub("", text))

    def _keys(self, text: str) -> list[str] | None:
        lines = []
        for key in text:
            if key in "\r\n":
                lines.append(self.buffer)
                self.buffer = ""
            elif key in "\x7f\x08":  # Backspace
                self.buffer = self.buffer[:-1]
            elif key == "\x15":  # Ctrl-U: the whole line
                self.buffer = ""
            elif key == "\x17":  # Ctrl-W: the last word
                self.buffer = self.buffer.rstrip().rpartition(" ")[0]
            elif key == "\x04":  # Ctrl-D: the end, on an empty line
                if not self.buffer and not lines:
                    return None
            elif key.isprintable():
                self.buffer += key
            self.edited = True
        return lines


def _still(screen: str) -> str:
    """The screen without its countdowns: what a pipe is shown again only when it changes."""
    return _COUNTDOWNS.sub("⏱", screen)


class Display:
    """Where the screen is drawn. On a terminal: the alternate screen (the terminal's own
    screen and scrollback are left as they were, and come back at the end), each line drawn
    in place and only when it changed (the countdown: one line a second), the prompt on the
    last line. Elsewhere (a pipe): the whole screen again whenever more than its countdowns
    changed."""

    def __init__(self, stream: TextIO, tty: bool) -> None:
        self.stream = stream
        self.tty = tty
        self._rows: list[str] = []  # what the terminal shows, line by line
        self._size: tuple[int, int] | None = None
        self._still = ""

    def __enter__(self) -> Self:
        if self.tty:
            self.stream.write("\x1b[?1049h\x1b[H\x1b[2J")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.tty:
            self.stream.write("\x1b[?1049l")
            self.stream.flush()

    def size(self) -> tuple[int, int | None]:
        """The screen's columns and lines for the table (the prompt takes the last line)."""
        if not self.tty:
            return WIDTH, None
        try:
            columns, lines = os.get_terminal_size(self.stream.fileno())
        except OSError:
            columns, lines = WIDTH, 24
        return max(columns, 20), max(lines, 4) - 1

    def draw(self, lines: list[str], typing: str) -> None:
        """The screen's `lines`, then the prompt with the line being typed."""
        if not self.tty:
            screen = "\n".join(lines)
            if _still(screen) != self._still:
                self.stream.write("\n" + screen + "\n> ")
                self._still = _still(screen)
            self.stream.flush()
            return
        columns, height = self.size()
        assert height is not None
        if (columns, height) != self._size:  # resized: everything again
            self._size, self._rows = (columns, height), []
            self.stream.write("\x1b[H\x1b[2J")
        prompt = "> " + typing
        while cells(prompt) > columns - 1:  # the line's end, where the cursor is
            prompt = "> …" + prompt[4:]
        rows = [*lines[:height], *[""] * (height - len(lines)), prompt]
        out = [
            f"\x1b[{i + 1};1H{row}\x1b[K"
            for i, row in enumerate(rows)
            if i >= len(self._rows) or self._rows[i] != row
        ]
        out.append(f"\x1b[{len(rows)};{cells(prompt) + 1}H")
        self._rows = rows
        self.stream.write("".join(out))
        self.stream.flush()


def run_terminal(
    table: OfflineTable,
    interrupts: Interrupts,
    stdin: TextIO = sys.stdin,
    stdout: TextIO = sys.stdout,
    *,
    wait: float = TICK_SECONDS,
) -> None:
    """Draw the screen (`Display`) after each line typed, each key and each tick; lines typed
    in, a tick every second of the table's clock. `wait`: the longest wait for a key between
    two looks at the clock (a test's clock moves only when the test says)."""
    with Keyboard(stdin) as keyboard, Display(stdout, keyboard.tty) as display:
        lines: list[str] = []
        stale = True  # the screen is read again after a line or a tick, not after each key
        next_tick = table.clock() + TICK_SECONDS
        while True:
            if stale:
                lines, stale = table.lines(*display.size()), False
            display.draw(lines, keyboard.buffer)
            found = keyboard.read(min(wait, max(0.0, next_tick - table.clock())))
            if found is None:  # Ctrl-D, or the input's end
                return
            for line in found:
                with interrupts.step():
                    if not table.enter(line):
                        return
                stale = True
            if table.clock() >= next_tick:
                with interrupts.step():
                    table.tick()
                next_tick = table.clock() + TICK_SECONDS
                stale = True


def play(args: argparse.Namespace, interrupts: Interrupts) -> None:
    """The offline table in this terminal, until q, Ctrl-D or Ctrl-C; then a line in the
    table's language saying what became of the game."""
    table = OfflineTable(
        players=args.players,
        lang=args.lang,
        name=args.name,
        data_dir=args.data,
        seed=args.seed,
        new=args.new,
        turn_clock=args.clock,
        level=args.level,
    )
    # Before the table is read its language is not known: names only.
    print(f"Menteur · dynalite ({runner.shown(args.data)}) · Bot API · bot …", flush=True)
    with contextlib.ExitStack() as stack:
        with interrupts.step():
            table.start()
            stack.callback(table.close)
        with contextlib.suppress(KeyboardInterrupt):
            run_terminal(table, interrupts)
        farewell = table.farewell()
    print(f"\n{farewell}", flush=True)
