"""The offline table: you at one seat, computer players at the others, in this terminal.

The whole production path runs: a key you press becomes the Telegram update a tap on that
button sends (a callback query from your user, with the chat and id of the message holding the
button), queued on a fake Bot API server (`infra/fake_telegram.py`) that stands for Telegram;
the runner fetches it with getUpdates and hands it to the webhook function inside a Lambda event
(`infra/runner.py`); the bot reads and conditionally writes the game in dynalite and sends its
screens to the fake; the terminal shows what the fake now holds, as a Telegram app would: the
group's table message, the latest group messages (a challenge, a final play, the end) and your
private hand, each button with its key. The timer function runs every second, so computer
players move a few seconds after their turn begins and a final play is let stand after 45 s.

`OfflineTable` is all of it but the terminal: tests drive it headless (`press`, `type`,
`screen`, `run_until` with an injected clock); `play` is the thin loop around it.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import getpass
import itertools
import os
import queue
import random
import re
import secrets
import string
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

from engine import Phase
from handlers.callbacks import BadCallback, Kind, Press, decode
from handlers.config import Settings
from handlers.store import Record
from handlers.text import SUPPORTED
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

# Buttons that do something have a fixed key; the cards of your hand take the others in order.
ACTION_KEYS: dict[Kind, str] = {
    Kind.PLAY: "p",
    Kind.SHOUT: "l",  # Liar!
    Kind.STAND: "s",  # Let it stand
    Kind.JOIN: "j",
    Kind.LEAVE: "e",
    Kind.START: "t",
}
QUIT_KEY = "q"
NEW_GAME_KEY = "n"
_RESERVED = {*ACTION_KEYS.values(), QUIT_KEY, NEW_GAME_KEY}
CARD_KEYS = (
    "123456789"
    + "".join(c for c in string.ascii_lowercase if c not in _RESERVED)
    + string.ascii_uppercase
)  # 53 keys: a hand holds at most 51 cards
RECENT_GROUP = 3  # group messages shown above the table
NOTICES = 3
_T_ME_START = re.compile(r"https://t\.me/(?P<bot>\w+)\?start=(?P<payload>[A-Za-z0-9_-]{1,64})")
# Isolates and marks lay text out in Telegram; most terminals would show them as gaps or boxes.
_BIDI_CONTROLS = re.compile("[\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]")
RULE_WIDTH = 64


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
        players: int = 4,
        lang: str = "en",
        name: str | None = None,
        data_dir: Path | None = DATA_DIR,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        seed: int | None = None,
        new: bool = False,
    ) -> None:
        if not 2 <= players <= 8:
            raise ValueError("2 to 8 players, you included")
        if lang not in SUPPORTED:
            raise ValueError(f"a language among {', '.join(SUPPORTED)}")
        self.players = players
        self.lang = lang
        self.name = name or _login_name()
        self.data_dir = data_dir
        self.clock = clock
        self.sleep = sleep
        self.seed = seed
        self.new = new
        self.notices: deque[str] = deque(maxlen=NOTICES)
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
                self.local.rt.app.rng = random.Random(self.seed)
                self.local.rt.app.game_ids = random.Random(self.seed)
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
            self.note(f"Resumed the game kept in dynalite ({len(game.ids)} players).")
            self.type("/table")
            self.type("/hand")
            return
        if running:
            self.type("/stop")
            stopped = self.record().game
            if stopped is not None and stopped.phase is not Phase.OVER:
                raise RuntimeError(f"the saved game could not be stopped: {self.last_group()}")
        if record.lang != self.lang:
            self.choose_language(self.lang)
        self.new_game()

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
        """A line typed at the prompt: a /command for the group, or keys. False: quit."""
        line = line.strip()
        self.notices.clear()  # the notices answer the latest line
        if line.startswith("/"):
            self.type(line)
            return True
        for key in line.replace(" ", ""):
            if key == QUIT_KEY:
                return False
            if key == NEW_GAME_KEY:
                self.new_game_if_over()
            elif not self.press(key):
                break  # the keys after an unknown one were meant for another screen
        return True

    def press(self, key: str) -> bool:
        """Press the button that shows `key`; False when no button does."""
        shown = self.keymap().get(key)
        if shown is None:
            self.note(f"No button has the key {key!r} now.")
            return False
        self.press_button(shown)
        return True

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
        self.type("/newgame")
        self._press_kind(Kind.JOIN)
        for _ in range(self.players - 1):
            self.type("/addbot")
        self._press_kind(Kind.START)
        game = self.record().game
        if game is None or game.phase not in (Phase.PLAY, Phase.DECIDE):
            raise RuntimeError(f"the game did not start: {self.last_group()}")

    def new_game_if_over(self) -> None:
        if self.game_running():
            self.note("A game is running: /stop ends it first.")
        else:
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
        self.note(f"Telegram opened your private chat with @{found['bot']}: you pressed Start.")
        self.type(f"/start {found['payload']}", chat=PERSON)

    def _deliver(self, update: dict[str, Any]) -> None:
        """Into Telegram's queue of updates, then one poll: the runner hands it to the webhook."""
        update = {"update_id": next(self._ids), **update}
        self.tg.push_update(update)
        if self.poller.poll_once(0) == 0:
            self.note("The bot could not take that now (see the log); it is tried again.")

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
        return View(
            recent=group[-RECENT_GROUP:],
            older=len(group) > RECENT_GROUP,
            table=table,
            private=private[-1:],
            hand=hand,
            running=game is not None and game.phase is not Phase.OVER,
        )

    def buttons(self, view: View | None = None) -> list[Shown]:
        """Every button on the screen, in screen order, with its key."""
        view = view or self.view()
        raw = [(m, b) for m in view.messages() for row in _rows(m) for b in row]
        keys: dict[int, str] = {}
        cards = 0
        for i, (_, button) in enumerate(raw):
            press = _decoded(button.get("callback_data"))
            if press is not None and press.kind is Kind.TOGGLE and cards < len(CARD_KEYS):
                keys[i] = CARD_KEYS[cards]
                cards += 1
            elif press is not None and press.kind in ACTION_KEYS:
                keys[i] = ACTION_KEYS[press.kind]
        # Other buttons (a language, a link) take keys from the far end of the cards' keys.
        spare = (k for k in reversed(CARD_KEYS) if k not in set(keys.values()))
        for i in range(len(raw)):
            if i not in keys:
                key = next(spare, None)
                if key is not None:
                    keys[i] = key
        return [self._shown(keys.get(i), b, m) for i, (m, b) in enumerate(raw)]

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
        """The screen: the latest group messages, the table, your private chat, notices."""
        view = self.view()
        by_message: dict[tuple[int, int], list[Shown]] = {}
        for shown in self.buttons(view):
            key = (shown.message.chat_id, shown.message.message_id)
            by_message.setdefault(key, []).append(shown)
        lines = [_rule(f"Group “{GROUP_TITLE}”")]
        if view.older:
            lines.append("  ⋮")
        elif not view.recent:
            lines.append("  (nothing new: a challenge, a final play or the end shows here)")
        for i, message in enumerate(view.recent):
            if i:
                lines.append("  ·")
            lines += _message_lines(message, by_message)
        lines.append(_rule("Table (one message, edited in place)"))
        if view.table:
            lines += _message_lines(view.table, by_message)
        else:
            lines.append("  (no game yet: /newgame)")
        lines.append(_rule(f"Your private chat with @{self._bot_user.get('username', 'bot')}"))
        for message in view.private:
            lines += _message_lines(message, by_message)
            lines.append("  ·")
        lines += _message_lines(view.hand, by_message) if view.hand else ["  (no hand yet)"]
        lines.append(_rule(""))
        lines += [f"  {plain_text(n)}" for n in self.notices]
        help_line = (
            "Keys: a button's [key], then Enter; several at once (12p) · "
            "/command speaks in the group · q quits"
        )
        if not view.running:
            help_line += " · n: a new game"
        lines.append(help_line)
        return "\n".join(lines)

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


def _login_name() -> str:
    """Your name at the table unless --name says otherwise: the login name, capitalized."""
    try:
        name = getpass.getuser()
    except (KeyError, OSError):  # no user name to be found (a container, say)
        name = ""
    return name[:32].capitalize() or "Player"


def _rule(title: str) -> str:
    head = f"── {title} " if title else ""
    return head + "─" * max(4, RULE_WIDTH - len(head))


def _message_lines(
    message: StoredMessage, by_message: dict[tuple[int, int], list[Shown]]
) -> list[str]:
    lines = [f"  {plain_text(line)}".rstrip() for line in (message.text or "").splitlines()]
    shown = by_message.get((message.chat_id, message.message_id), [])
    position = 0
    for row in _rows(message):
        cells = []
        for _ in row:
            button = shown[position]
            position += 1
            cells.append(f"[{button.key or ' '}] {plain_text(button.text)}")
        lines.append("  " + "  ".join(cells))
    return lines


# --- the terminal -------------------------------------------------------------------------------


class LineReader:
    """Lines typed at the terminal, waited for without blocking the ticks: select() on POSIX,
    a reader thread elsewhere. `read` returns the lines complete so far, or None at the end."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._posix = os.name == "posix"
        self._buffer = ""
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._lines: queue.Queue[str | None] = queue.Queue()
        if not self._posix:
            threading.Thread(target=self._pump, name="stdin", daemon=True).start()

    def _pump(self) -> None:
        for line in self.stream:
            self._lines.put(line)
        self._lines.put(None)

    def read(self, timeout: float) -> list[str] | None:
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
        self._buffer += self._decoder.decode(chunk)
        *lines, self._buffer = self._buffer.split("\n")
        return lines


def run_terminal(
    table: OfflineTable,
    interrupts: Interrupts,
    stdin: TextIO = sys.stdin,
    stdout: TextIO = sys.stdout,
) -> None:
    """Show the screen whenever it changes; keys and commands in, a tick every second."""
    reader = LineReader(stdin)
    clear = stdout.isatty()
    last = ""
    next_tick = time.monotonic() + TICK_SECONDS
    while True:
        screen = table.screen()
        if screen != last:
            stdout.write("\x1b[H\x1b[2J" if clear else "\n")
            stdout.write(screen + "\n> ")
            stdout.flush()
            last = screen
        lines = reader.read(max(0.0, next_tick - time.monotonic()))
        if lines is None:  # Ctrl-D, or the input's end
            return
        for line in lines:
            with interrupts.step():
                if not table.enter(line):
                    return
            last = ""  # the typed line moved the prompt: draw again
        if time.monotonic() >= next_tick:
            with interrupts.step():
                table.tick()
            next_tick = time.monotonic() + TICK_SECONDS


def play(args: argparse.Namespace, interrupts: Interrupts) -> None:
    """The offline table in this terminal, until q, Ctrl-D or Ctrl-C."""
    table = OfflineTable(
        players=args.players,
        lang=args.lang,
        name=args.name,
        data_dir=args.data,
        seed=args.seed,
        new=args.new,
    )
    print(
        "Starting the offline table: dynalite (games kept in "
        f"{args.data}), a fake Telegram, the bot…",
        flush=True,
    )
    with contextlib.ExitStack() as stack:
        with interrupts.step():
            table.start()
            stack.callback(table.close)
        run_terminal(table, interrupts)
