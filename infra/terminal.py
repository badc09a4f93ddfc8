"""The offline table: you at one seat, computer players at the others, in this terminal.

The whole production path runs: a line you type becomes the Telegram updates your taps would
send (a callback query from your user for each button it names, with the chat and id of the
message holding the button), queued on a fake Bot API server (`infra/fake_telegram.py`) that
stands for Telegram; the runner fetches them with getUpdates and hands each to the webhook
function inside a Lambda event (`infra/runner.py`); the bot reads and conditionally writes the
game in dynalite and sends its screens to the fake; the terminal shows what the fake now holds,
as a Telegram app would: the group's table message, the latest group messages (a challenge, a
final play, the end) and your private hand, with the time left beside a deadline. The timer
function runs every second, so computer players move a few seconds after their turn begins, a
person's turn clock runs out and a final play is let stand after 45 s.

A line is read whole, then read by `infra/typed.py`: a card by what it is (10, 7h, R♥) or its
position (#3), a word as a word (play, liar, stand, end); a line with anything else changes
nothing. `OfflineTable` is all of it but the terminal: tests drive it headless (`enter`,
`screen`, `run_until` with an injected clock); `run_terminal` is the loop around it, which a
test drives through a pseudo-terminal.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import getpass
import itertools
import math
import os
import queue
import random
import re
import secrets
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TextIO

from telegram.error import TelegramError

from engine import Game, Phase
from handlers.callbacks import BadCallback, Kind, Press, decode
from handlers.config import Settings
from handlers.lobby import clock_choice
from handlers.store import Record
from handlers.text import SUPPORTED, t
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
GROUP_TITLE = "Offline table"
PERSON = 1000001  # your user id, which is also your private chat's id
TOKEN = "1000001:offline-table"  # the fake Bot API server takes any token

# The word that presses each of the game's buttons (typed, or its short form: `infra/typed.py`).
# Other buttons (a language, a clock, a link) are pressed by the key shown beside them: b1, b2...
ACTION_KEYS: dict[Kind, str] = {
    Kind.PLAY: "play",
    Kind.SHOUT: "liar",
    Kind.STAND: "stand",
    Kind.VOTE: "end",
    Kind.JOIN: "join",
    Kind.LEAVE: "leave",
    Kind.START: "start",
}
RECENT_GROUP = 3  # group messages shown above the table
NOTICES = 8
DEFAULT_PLAYERS = 4
_T_ME_START = re.compile(r"https://t\.me/(?P<bot>\w+)\?start=(?P<payload>[A-Za-z0-9_-]{1,64})")
# Isolates and marks lay text out in Telegram; most terminals would show them as gaps or boxes.
_BIDI_CONTROLS = re.compile("[\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]")
RULE_WIDTH = 64
HELP = (
    "Cards: 10, 7, A, V (or J), D (or Q), R (or K); a suit if you like: 7h 7♥ Ds.",
    "  #3: the third card of your hand. 7 7: two sevens. 7♥ again: unselected.",
    "Words: play (p), liar (l), stand (s), end (e: vote to end the game), join,",
    "  start, leave; b1, b2…: the other buttons; n: a new game; q: quit.",
    "In order, in one line: 7h 7s play.  /rules, /stop… speak in the group.",
    "Turn clock: ⏱ counts down your time; /stop, /settings off, n: no clock.",
)


@dataclass(frozen=True)
class Shown:
    """A button on the screen: its key, its label, and the message that holds it."""

    key: str | None
    text: str
    message: StoredMessage
    data: str | None = None  # callback_data
    url: str | None = None
    press: Press | None = None  # the data decoded, when it is the bot's


@dataclass(frozen=True)
class View:
    """The messages on the screen, as they read at one moment."""

    recent: list[StoredMessage]  # the latest group messages but the table, oldest first
    older: bool  # whether earlier ones scrolled away
    table: StoredMessage | None
    private: list[StoredMessage]  # the private chat's latest message but the hand
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

    def messages(self) -> list[StoredMessage]:
        """In screen order."""
        tail = [m for m in (self.table, *self.private, self.hand) if m is not None]
        return [*self.recent, *tail]


def plain_text(text: str) -> str:
    return _BIDI_CONTROLS.sub("", text)


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
        # None: not asked for. A new game then has 4 players in English; a saved game is
        # resumed as it is, and options that ask for another table are answered (`_begin`).
        self.asked = (players, lang)
        self.players = players or DEFAULT_PLAYERS
        self.lang = lang or "en"
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
        self._dealing = False  # the table's own /newgame, Join and Start: nothing to tell
        # Private messages up to this id belong to an earlier turn of the game (a reminder
        # of a turn gone by): not shown. `_seen` is the latest id the screen has shown.
        self._private_floor = 0
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
                LocalBot(settings, data_dir=self.data_dir, clock=self.clock)
            )
            if self.seed is not None:
                self.local.rt.app.service.rng = random.Random(self.seed)
                self.local.rt.app.service.game_ids = random.Random(self.seed)
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
        if (
            game is not None
            and game.phase in (Phase.PLAY, Phase.DECIDE)
            and PERSON in game.ids
            and not self.new
        ):
            self.players = len(game.ids)
            self.lang = self.asked[1] or record.lang
            self.local.resume(GROUP)  # the time the runner was off was nobody's to play
            saved = (len(game.ids), record.lang, game.clock)
            afresh = " (afresh)" if game.clock else ""
            self.note(f"Resumed the saved game: {_table_words(*saved)}{afresh}.")
            players, lang = self.asked
            seconds = clock_choice(self.turn_clock) if self.turn_clock else None
            wanted = (
                players or saved[0],
                lang or saved[1],
                saved[2] if seconds is None else seconds,
            )
            if wanted != saved:
                self.note(f"You asked for {_table_words(*wanted)}: add --new to deal that instead.")
            self.type("/table")
            self.type("/hand")
            self.welcome = self._welcome()
            return
        if running:
            self.type("/stop")
            stopped = self.record().game
            if stopped is not None and stopped.phase is not Phase.OVER:
                raise RuntimeError(f"the saved game could not be stopped: {self.last_group()}")
        if record.lang != self.lang:
            self.choose_language(self.lang)
        self.new_game()
        self.welcome = self._welcome()

    def _welcome(self) -> list[str]:
        """The first screen's words: how to play, the clock and how to turn it off."""
        game = self.record().game
        seconds = game.clock if game is not None else 0
        lines = [
            "Welcome to Menteur: empty your hand to win. On your turn, play 1 to 4",
            "cards face down, called as the Expected rank; a Lie is punished only",
            "if someone shouts Liar! at it. Type your cards, then play: 10 7h play",
            "(#3: your third card). liar shouts; stand lets a Final play stand.",
        ]
        if seconds:
            lines += [
                f"Turn clock: {seconds} s to play, counted down by ⏱ beside “plays by”.",
                "When it runs out the table plays for you; twice, and you leave the game.",
                "No clock: /stop, /settings off, then n (or start with --clock off).",
            ]
        else:
            lines.append("Turn clock: off, take your time (/settings 90 between games sets one).")
        return lines

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

    # --- what the person does ---------------------------------------------------------------

    def enter(self, line: str) -> bool:
        """A line typed at the prompt: a /command for the group, or words and cards
        (`infra/typed.py`). A line with a word that means nothing, or a card not in the hand,
        changes nothing and says what would. False: quit."""
        line = line.strip()
        self.notices.clear()  # the notices answer the latest line
        self.welcome = []  # the first screen's words have been read
        if not line:
            return True
        if line.startswith("/"):
            self.type(line)
            return True
        labels = [s.text for s in self.hand_cards()]
        try:
            tokens = typed.parse(line, BUTTON_NAMES)
            chosen = typed.choose(tokens, labels)
        except (typed.Meaningless, typed.NotInHand) as refused:
            self.note(str(refused))
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
                self.notices.extend(HELP)
            elif not self.press(token.word):
                break  # the words after it were meant for a screen that did not come
        return True

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
        self.note(f"Your hand no longer holds {card}.")

    def press(self, key: str) -> bool:
        """Press the button that shows `key` (a word, or b1...); False when none does."""
        shown = self.keymap().get(key)
        if shown is None:
            self.note(self._missing(key))
            return False
        self.press_button(shown)
        return True

    def _missing(self, key: str) -> str:
        if key == ACTION_KEYS[Kind.PLAY]:
            if not self.your_turn():
                return "It is not your turn to play: Play shows on your turn."
            return "Play shows once 1 to 4 cards are selected (10, 7h, #3): then play."
        if key == ACTION_KEYS[Kind.SHOUT]:
            return "No play to shout Liar! at now (or no bullet left)."
        if key == ACTION_KEYS[Kind.STAND]:
            return "No final play waits for your decision."
        return f"No button “{key}” on the screen now."

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
                chat_title=GROUP_TITLE,
                shown=message,
            )
        )
        # Telegram shows the answer (performed from the webhook reply) as a notice, or opens
        # the URL it carries.
        for call in reversed(self.tg.calls("answerCallbackQuery")):
            if call.params.get("callback_query_id") == query_id:
                if call.params.get("text"):
                    self.note(f"Bot: {call.params['text']}")
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
                chat_title=GROUP_TITLE,
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

    def new_game_if_over(self) -> None:
        """n: a new game like the one just played (its number of players; the group's language
        is kept as the group's setting)."""
        game = self.record().game
        if game is not None and game.phase is not Phase.OVER:
            self.note("A game is running: /stop ends it first.")
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
            self.note(f"Link: {url}")
            return
        if not self._dealing:  # the table's own Join opens it with nobody watching
            self.note(f"Your private chat with @{found['bot']} opened, and Start was pressed.")
        self.type(f"/start {found['payload']}", chat=PERSON)

    def _deliver(self, update: dict[str, Any]) -> None:
        """Into Telegram's queue of updates, then one poll: the runner hands it to the webhook."""
        update = {"update_id": next(self._ids), **update}
        self.tg.push_update(update)
        if self.poller.poll_once(0) == 0:
            self.note("The bot could not take that now (see the log); it is tried again.")

    def farewell(self) -> str:
        """What leaving says: a running game is kept, and how to come back to it."""
        if not self.game_running():
            return "Bye. python3 infra/dev.py play deals a new game."
        return "The game is saved: python3 infra/dev.py play resumes it (your clock afresh)."

    def note(self, text: str) -> None:
        self.notices.append(text)

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
            if m.text and (table is None or m.message_id != table.message_id)
        ]
        private = [
            m
            for m in self.tg.chat_messages(PERSON)
            if m.text and (hand is None or m.message_id != hand.message_id)
        ]
        game = record.game
        # A new turn (another player awaited, another rank, another phase) hides the private
        # messages shown before it: a reminder of a turn gone by is not about this one.
        turns = game.turns if game is not None else -1
        latest = max((m.message_id for m in private), default=0)
        if turns != self._seen[1]:
            self._private_floor = self._seen[0]
        self._seen = (latest, turns)
        private = [m for m in private if m.message_id > self._private_floor]
        return View(
            recent=group[-RECENT_GROUP:],
            older=len(group) > RECENT_GROUP,
            table=table,
            private=private[-1:],
            hand=hand,
            running=game is not None and game.phase is not Phase.OVER,
            game=game,
            now=self.clock(),
        )

    def buttons(self, view: View | None = None) -> list[Shown]:
        """Every button on the screen, in screen order, with its key: the game's buttons their
        word, other buttons b1, b2..., and the cards none (a card is typed as what it is)."""
        view = view or self.view()
        shown = []
        others = itertools.count(1)
        for message in view.messages():
            for row in _rows(message):
                for button in row:
                    press = _decoded(button.get("callback_data"))
                    if press is not None and press.kind is Kind.TOGGLE:
                        key = None
                    elif press is not None and press.kind in ACTION_KEYS:
                        key = ACTION_KEYS[press.kind]
                    else:
                        key = f"b{next(others)}"
                    shown.append(self._shown(key, button, message))
        return shown

    def keymap(self, view: View | None = None) -> dict[str, Shown]:
        """Key to button. Liar! and Let it stand can show on more than one message (the table,
        a final play, your hand); they do the same, and the table's is the one pressed."""
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
            if shown.key is not None:
                keymap.setdefault(shown.key, shown)
        return keymap

    def your_turn(self) -> bool:
        """Whether your hand says it is your turn to play (its cards may be played)."""
        return any(
            s.press is not None and s.press.kind is Kind.TOGGLE and s.press.rank >= 0
            for s in self.buttons()
        )

    def screen(self) -> str:
        """The screen: the latest group messages, the table, your private chat, the clock,
        notices. The time of a deadline ("plays by 21:04:30 UTC") shows the time left beside
        it, counted down at every redraw (every second)."""
        view = self.view()
        by_message: dict[tuple[int, int], list[Shown]] = {}
        for shown in self.buttons(view):
            key = (shown.message.chat_id, shown.message.message_id)
            by_message.setdefault(key, []).append(shown)
        deadline = view.deadline()
        marks = {}
        if deadline is not None:
            at = time.strftime("%H:%M:%S UTC", time.gmtime(int(deadline)))
            marks[at] = f"{at} {countdown(deadline - view.now)}"

        def lines_of(message: StoredMessage) -> list[str]:
            return _message_lines(message, by_message, marks)

        lines = [_rule(f"Group “{GROUP_TITLE}”")]
        if view.older:
            lines.append("  ⋮")
        elif not view.recent:
            lines.append("  (nothing new: a challenge, a final play or the end shows here)")
        for i, message in enumerate(view.recent):
            if i:
                lines.append("  ·")
            lines += lines_of(message)
        lines.append(_rule("Table (one message, edited in place)"))
        if view.table:
            lines += lines_of(view.table)
        else:
            lines.append("  (no game yet: /newgame)")
        lines.append(_rule(f"Your private chat with @{self._bot_user.get('username', 'bot')}"))
        for message in view.private:
            lines += lines_of(message)
            lines.append("  ·")
        lines += lines_of(view.hand) if view.hand else ["  (no hand yet)"]
        lines.append(_rule(""))
        clock = self._clock_line(view)
        if clock:
            lines.append(f"  {clock}")
        lines += [f"  {plain_text(n)}" for n in (*self.notices, *self.welcome)]
        help_line = "Type: cards (10 7h #3) · play · liar · stand · end · help · /command · q"
        if not view.running:
            help_line += " · n: new game"
        lines.append(help_line)
        return "\n".join(lines)

    def _clock_line(self, view: View) -> str | None:
        """The time left to whoever is awaited, when a deadline runs: impossible to miss."""
        game, deadline = view.game, view.deadline()
        if game is None or deadline is None or game.turn is None:
            return None
        left = countdown(deadline - view.now)
        awaited = game.ids[game.turn]
        if game.phase is Phase.DECIDE:
            if awaited == PERSON:
                return f"{left} to decide on the final play: liar or stand (then it stands)."
            return f"{left} for {plain_text(game.names[game.turn])} to decide on the final play."
        if awaited == PERSON:
            return f"{left} to play, or the table plays for you."
        return f"{left} for {plain_text(game.names[game.turn])} to play."

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


def button_names() -> dict[str, str]:
    """The game's buttons by their names in every language the bot speaks ("let it stand",
    "ترك الأمر": `typed.name_key`), each to the word that presses it ("stand")."""
    keys = {
        "btn_play": Kind.PLAY,
        "btn_liar": Kind.SHOUT,
        "btn_stand": Kind.STAND,
        "btn_end_unvoted": Kind.VOTE,
        "btn_join": Kind.JOIN,
        "btn_leave": Kind.LEAVE,
        "btn_start": Kind.START,
    }
    names = {}
    for lang in SUPPORTED:
        for key, kind in keys.items():
            # "Play {n} × {rank}": its name is what comes before the numbers.
            label = plain_text(t(lang, key, n="\0", rank="", votes="", needed=""))
            names[typed.name_key(label.partition("\0")[0])] = ACTION_KEYS[kind]
    names.pop("", None)
    return names


def _login_name() -> str:
    """Your name at the table unless --name says otherwise: the login name, capitalized."""
    try:
        name = getpass.getuser()
    except (KeyError, OSError):  # no user name to be found (a container, say)
        name = ""
    return name[:32].capitalize() or "Player"


LANGUAGES = {"en": "English", "ar": "Arabic", "fr": "French"}


def _table_words(players: int, lang: str, seconds: int) -> str:
    """A table as the options ask for one: "4 players, in English, a 90 s turn clock"."""
    clock = f"a {seconds} s turn clock" if seconds else "no turn clock"
    return f"{players} players, in {LANGUAGES.get(lang, lang)}, {clock}"


def countdown(seconds: float) -> str:
    """The time left, rounded up to the second ("⏱ 1:05"; "⏱ 0:00" once it is up)."""
    left = max(0, math.ceil(seconds))
    return f"⏱ {left // 60}:{left % 60:02d}"


def _rule(title: str) -> str:
    head = f"── {title} " if title else ""
    return head + "─" * max(4, RULE_WIDTH - len(head))


def _message_lines(
    message: StoredMessage,
    by_message: dict[tuple[int, int], list[Shown]],
    marks: dict[str, str] | None = None,
) -> list[str]:
    """A message's lines, each `marks` key replaced by its value, then its buttons: a card
    as its label alone, another button with its key."""
    lines = []
    for text in (message.text or "").splitlines():
        for old, new in (marks or {}).items():
            text = text.replace(old, new)  # noqa: PLW2901 - the line, as it is shown
        lines.append(f"  {plain_text(text)}".rstrip())
    shown = by_message.get((message.chat_id, message.message_id), [])
    position = 0
    for row in _rows(message):
        cells = []
        for _ in row:
            button = shown[position]
            position += 1
            label = plain_text(button.text)
            cells.append(label if button.key is None else f"[{button.key}] {label}")
        lines.append("  " + "  ".join(cells))
    return lines


BUTTON_NAMES = button_names()


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


def run_terminal(
    table: OfflineTable,
    interrupts: Interrupts,
    stdin: TextIO = sys.stdin,
    stdout: TextIO = sys.stdout,
    *,
    wait: float = TICK_SECONDS,
) -> None:
    """Show the screen whenever it changes (a terminal: every second, for the countdown);
    lines typed in, a tick every second of the table's clock. `wait`: the longest wait for a
    key between two looks at the clock (a test's clock moves only when the test says)."""
    with Keyboard(stdin) as keyboard:
        drawn = screen = ""
        stale = True  # the screen is read again after a line or a tick, not after each key
        next_tick = table.clock() + TICK_SECONDS
        while True:
            if stale:
                screen, stale = table.screen(), False
            if keyboard.tty and screen != drawn:
                stdout.write("\x1b[H\x1b[2J" + screen + "\n> " + keyboard.buffer)
                drawn = screen
            elif keyboard.tty and keyboard.edited:
                stdout.write("\r\x1b[K> " + keyboard.buffer)
            elif not keyboard.tty and _still(screen) != _still(drawn):
                stdout.write("\n" + screen + "\n> ")
                drawn = screen
            stdout.flush()
            lines = keyboard.read(min(wait, max(0.0, next_tick - table.clock())))
            if lines is None:  # Ctrl-D, or the input's end
                return
            for line in lines:
                with interrupts.step():
                    if not table.enter(line):
                        return
                drawn, stale = "", True  # the typed line moved the prompt: draw again
            if table.clock() >= next_tick:
                with interrupts.step():
                    table.tick()
                next_tick = table.clock() + TICK_SECONDS
                stale = True


def play(args: argparse.Namespace, interrupts: Interrupts) -> None:
    """The offline table in this terminal, until q, Ctrl-D or Ctrl-C."""
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
    print(
        "Starting the offline table: dynalite (games kept in "
        f"{runner.shown(args.data)}), a fake Telegram, the bot…",
        flush=True,
    )
    with contextlib.ExitStack() as stack:
        with interrupts.step():
            table.start()
            stack.callback(table.close)
        run_terminal(table, interrupts)
        print(f"\n{table.farewell()}", flush=True)
