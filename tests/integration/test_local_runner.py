"""The local runner, as `python3 infra/dev.py play` runs it: a real dynalite, the webhook and
timer handlers fed Lambda events, a fake Telegram; an offline game played by keys, long polling,
and Ctrl-C. Time is an injected clock: 45 seconds pass in no time."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pty
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from engine import Game, Phase
from engine.cards import parse_card
from handlers.callbacks import Kind
from handlers.config import Settings
from handlers.dynamo import DynamoStore
from handlers.text import t
from infra.dynalite import PID_FILE, Dynalite
from infra.fake_telegram import FakeTelegram
from infra.harness import Clock, Person
from infra.harness.updates import Updates
from infra.runner import OFFLINE_TABLE, Interrupts, LocalBot, Poller, serve
from infra.terminal import (
    ACTION_KEYS,
    GROUP,
    PERSON,
    OfflineTable,
    cells,
    plain_text,
    run_terminal,
)
from tests.support import vt

ROOT = Path(__file__).resolve().parents[2]
ANN = Person(7, "Ann")
FIRST_TO_PLAY = 3  # a seed whose deal (two players) has the person play first, holding 10♣ and 7♥

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None, reason="Node.js (`node`) is not on PATH: dynalite cannot run"
)


def offline(data: Path, clock: Clock, **options) -> OfflineTable:
    """The runner's offline table on `data`, its time the injected clock (no real waiting)."""
    return OfflineTable(data_dir=data, clock=clock, sleep=clock.advance, name="Ann", **options)


def deciding(game: Game) -> bool:
    """A final play waits for the person's decision."""
    return game.phase is Phase.DECIDE and game.awaited == PERSON


def over(game: Game) -> bool:
    return game.phase is Phase.OVER


def shoutable(game: Game) -> bool:
    """The most recent play is a computer player's, and the person may shout at it (R10)."""
    seat = game.ids.index(PERSON)
    return game.last is not None and game.last.seat != seat and game.bullets[seat] > 0


def play(table: OfflineTable, until: Callable[[Game], bool], *, stand: bool = True) -> int:
    """The person's simple policy, typed: on their turn, the first card and play; let
    a final play stand when asked (unless `stand` is off); otherwise let a second pass. Returns
    how many times the person played. (When to act is read from the store, to keep it quick.)"""
    plays = 0
    for _ in range(3000):
        game = table.record().game
        assert game is not None
        if until(game):
            return plays
        if game.phase is Phase.PLAY and game.awaited == PERSON:
            assert table.your_turn(), "the hand says so too"
            assert table.enter("#1 play")
            plays += 1
        elif stand and deciding(game):
            assert table.enter(ACTION_KEYS[Kind.STAND])
        else:
            table.step()
    raise AssertionError("the game did not get there:\n" + table.screen())


def hand(table: OfflineTable) -> list[str]:
    return [s.text for s in table.buttons() if s.press and s.press.kind is Kind.TOGGLE]


def flat(text: str) -> str:
    """Text as it reads on the screen, whatever its lines: words one space apart."""
    return " ".join(plain_text(text).split())


def group_texts(table: OfflineTable) -> list[str]:
    return [m.text for m in table.tg.chat_messages(GROUP) if m.text]


def test_an_offline_game_typed_survives_a_restart_and_ends_in_the_final_ranking(
    tmp_path: Path, clock: Clock
) -> None:
    data = tmp_path / "dynalite"
    with offline(data, clock, players=4, seed=5) as table:
        screen = table.screen()
        assert "Menteur · 4 players" in screen and "Your hand · 13 cards" in screen
        cards = hand(table)
        assert "  ".join(cards[:6]) in screen, "the cards show as what they are, without keys"
        played = 0
        while played < 3:
            played += play(table, lambda game: game.phase is Phase.PLAY and game.awaited == PERSON)
            played += play(table, lambda game: game.awaited != PERSON)
        kept = hand(table)
        assert kept

    # The runner stops and starts again: the game is in dynalite, and goes on. The options
    # ask for another table: said so in one line, and the saved game goes on as it is.
    with offline(data, clock, players=3, seed=5) as table:
        screen = table.screen()
        assert "Resumed the saved game: 4 players · English · turn clock 90 s" in flat(screen)
        assert "You asked for 3 players: add --new to deal that" in flat(screen)
        assert hand(table) == kept
        play(table, over)
        screen = table.screen()
        texts = group_texts(table)
        # The end: a message of its own with the winner and the Final ranking, on the screen.
        (end,) = [t for t in texts if "wins!" in t]
        assert flat(end) in flat(screen)
        assert "Final ranking" in end and "Ann" in end
        assert "Final ranking" in screen
        assert any(t.startswith("Challenge") for t in texts), "the first card is often a lie"

        # What dynalite holds, read by a client of its own: the finished game.
        store = DynamoStore(table.local.dynalite.client(), OFFLINE_TABLE)
        game = store.load(GROUP).game
        assert game is not None and game.phase is Phase.OVER and game.winner is not None
        assert plain_text(game.names[game.winner]) in plain_text(end)
        assert PERSON in game.ids and len(game.ids) == 4

        # n deals again, like the game just played (4 players, not the 3 of the options).
        assert "n: a new game · ? help · q quit" in screen
        assert table.farewell().startswith("Bye.")
        assert table.enter("n")
        assert table.game_running() and "Your hand · 13 cards" in table.screen()
        game = table.record().game
        assert game is not None and len(game.ids) == 4
        assert "opened" not in table.screen(), "nobody pressed anything: nothing to tell"
        assert table.farewell().startswith("The game is saved: python3 infra/dev.py play resumes")


def test_a_final_play_nobody_decides_is_let_stand_by_the_timer_at_45_seconds(
    tmp_path: Path, clock: Clock
) -> None:
    with offline(tmp_path / "dynalite", clock, players=2, seed=3, lang="en") as table:
        for _ in range(3):  # until a computer's final play waits for the person's decision
            play(table, lambda game: deciding(game) or over(game), stand=False)
            game = table.record().game
            assert game is not None
            if deciding(game):
                break
            table.enter("n")
        assert game is not None and game.deadline is not None
        assert table.keymap()[ACTION_KEYS[Kind.STAND]].text == "Let it stand"
        assert table.run_until(lambda: not table.game_running(), timeout=50)
        assert game.deadline <= clock.now <= game.deadline + 1.0, "within a tick of the mark"
        assert "the table let it stand" in table.screen()


def test_r20_a_resumed_game_gives_the_awaited_person_their_clock_afresh(
    tmp_path: Path, clock: Clock
) -> None:
    data = tmp_path / "dynalite"
    with offline(data, clock, players=2, seed=FIRST_TO_PLAY) as table:
        game = table.record().game
        assert game is not None and game.awaited == PERSON and game.plays == 0
        assert game.deadline == clock.now + 90

    clock.advance(3600)  # the runner was off for an hour: nobody's time to play
    with offline(data, clock, seed=FIRST_TO_PLAY) as table:
        game = table.record().game
        assert game is not None and game.awaited == PERSON
        assert game.deadline == clock.now + 90, "the whole clock, from now"
        assert game.plays == 0 and game.ran_out == 0
        screen = table.screen()
        said = "Resumed the saved game: 2 players · English · turn clock 90 s; your clock starts"
        assert said in flat(screen)
        assert "⏱ 1:30 to play, or the table plays for you." in screen
        table.step()
        assert table.record().game == game, "a tick after the resume plays for nobody"

        # The clock runs as it should: the reminder when a third is left, in the private chat...
        reminder = "30 seconds left to play"
        assert table.run_until(lambda: reminder in table.screen(), timeout=61)
        assert "⏱ 0:30" in table.screen()
        # ...and gone from the screen once the turn has moved on.
        assert table.enter("#1 play")
        assert reminder not in table.screen()


def test_r14_a_resumed_final_play_gets_its_45_seconds_afresh(tmp_path: Path, clock: Clock) -> None:
    data = tmp_path / "dynalite"
    with offline(data, clock, players=2, seed=3) as table:
        for _ in range(3):  # until a computer's final play waits for the person's decision
            play(table, lambda game: deciding(game) or over(game), stand=False)
            game = table.record().game
            assert game is not None
            if deciding(game):
                break
            table.enter("n")
        assert game is not None and deciding(game)
        clock.advance(20)
    clock.advance(600)
    with offline(data, clock) as table:
        game = table.record().game
        assert game is not None and deciding(game), "not let stand while the runner was off"
        assert game.deadline == clock.now + 45
        said = "⏱ 0:45 to decide on the final play: l shouts Liar!, s lets it stand"
        assert said in table.screen()
        assert table.run_until(lambda: not table.game_running(), timeout=50)
        assert game.deadline <= clock.now <= game.deadline + 1.0


def test_r20_the_runner_deals_a_game_without_a_clock_when_asked_and_says_so(
    tmp_path: Path, clock: Clock
) -> None:
    data = tmp_path / "dynalite"
    with offline(data, clock, players=2, seed=FIRST_TO_PLAY, turn_clock="off") as table:
        game = table.record().game
        # No clock: only R18's 90 s, after which the vote to end stops waiting for the person.
        assert game is not None and game.clock == 0 and game.deadline == clock.now + 90
        screen = table.screen()
        assert "Turn clock: off, take your time" in screen and "⏱" not in screen
        # No clock is no promise against a challenge (R10): the welcome says so.
        assert "Until you play, anyone may shout Liar! at the play before yours" in flat(screen)
    # Resumed two days later (past the idle expiry), with options that ask for a clock: the
    # saved game goes on as it is, and says so; the time the runner was off counts for nothing.
    clock.advance(2 * 24 * 3600)
    with offline(data, clock, turn_clock="60") as table:
        screen = flat(table.screen())
        assert "Resumed the saved game: 2 players · English · no turn clock." in screen
        assert "You asked for turn clock 60 s: add --new" in screen
        assert "⏱" not in screen
        game = table.record().game
        assert game is not None and game.clock == 0
        assert game.deadline == clock.now + 90, "R18's 90 s afresh, not over at once"
        assert game.acted == clock.now, "an idle end counts from the resume"
        table.step()
        assert table.game_running(), "not ended as idle by the first tick"
    # --new deals the game asked for, and says so: no "Ann stopped the game" as if typed.
    with offline(data, clock, players=8, new=True) as table:
        screen = flat(table.screen())
        assert "The saved game was stopped, as --new asks: here is a new one." in screen
        assert "stopped the game" not in screen
        # Eight at the table, on 80 × 24: the table, the hand and the clock fit, the rest gives
        # way (the prompt takes the last line).
        rows = table.lines(80, 23)
        assert len(rows) <= 23 and max(map(cells, rows)) <= 80
        assert rows[0].startswith("  Menteur · 8 players · turn clock 90 s")
        assert sum("cards · bullets" in row for row in rows) == 8
        assert any(row.startswith("  Your hand · ") for row in rows)
        game = table.record().game
        assert game is not None
        if game.awaited == PERSON:
            assert any("to play, or the table plays for you." in row for row in rows)


def moved(table: OfflineTable, game: Game) -> Callable[[], bool]:
    """Whether the table's game is no longer `game`."""
    return lambda: table.record().game != game


def test_r10_a_turn_a_challenge_took_says_why_once_and_a_play_typed_late_does_nothing(
    tmp_path: Path, clock: Clock
) -> None:
    """With no clock (which promises time, not the turn), the person selects a card on their
    turn and takes their time; a computer player's Liar! at the play before (R10) hands the
    turn to the challenge's winner (R11). The screen says so, in the private line under the
    hand, until it has been read; a play typed after that does nothing, and says why."""
    taken = "shouted Liar! at"
    with offline(tmp_path / "dynalite", clock, players=3, seed=7, turn_clock="off") as table:
        seen = 0
        for _ in range(2000):
            game = table.record().game
            assert game is not None
            if over(game):
                table.enter("n")
            elif game.awaited != PERSON or game.phase is not Phase.PLAY:
                table.step()
            else:
                table.enter("#1")  # about to play...
                assert selected(table.screen())
                # Computer players act 3 to 5 seconds after the game changed.
                if not table.run_until(lambda: table.record().game.awaited != PERSON, 6):  # type: ignore[union-attr]
                    table.enter("p")  # ...and plays, nobody having shouted
                    continue
                # ...but a computer player shouted first: why, and who plays now.
                screen = flat(table.screen())
                game = table.record().game
                assert game is not None and game.awaited not in (PERSON, None)
                now = plain_text(table._name_of(game, game.awaited))
                assert f"{taken} " in screen and f"before you played: {now} plays now." in screen
                assert not selected(screen), "the selection went with the turn, visibly"
                seen += 1
                if seen == 1:
                    # A play typed as the turn went: nothing of the line is done.
                    table.enter("#1 p")
                    screen = flat(table.screen())
                    said = f"Nothing of that line was done: it is not your turn, {now} plays now."
                    assert said in screen and not selected(screen)
                    assert table.record().game == game, "nothing played, nothing shouted"
                    assert taken in screen, "read now: it goes with the next turn"
                    continue
                # Unread, it stays when the game moves on (the winner plays a few seconds later).
                assert table.run_until(moved(table, game), 10)
                assert taken in table.screen()
                table.enter("?")  # read: at the next turn it goes
                assert table.run_until(lambda: taken not in table.screen(), 20)
                return
    raise AssertionError("no computer player shouted on the person's turn")


# --- the terminal, as a person types at it ---------------------------------------------------


class Terminal:
    """The person's side of a pseudo-terminal of 80 × 24: keys typed, and what the screen
    shows (`tests/support/vt.py` reads the output as a terminal does)."""

    def __init__(self, master: int, slave: int, columns: int = 80, lines: int = 24) -> None:
        self.master = master
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
        self.vt = vt.Screen(columns, lines)
        self.output = ""

    def keys(self, text: str) -> None:
        os.write(self.master, text.encode())

    def _read(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                chunk = os.read(self.master, 65536).decode(errors="replace")
                self.output += chunk
                self.vt.feed(chunk)

    def screen(self) -> str:
        return self.vt.text()

    def screen_when(self, condition: Callable[[str], bool], timeout: float = 20.0) -> str:
        """Waits (for the thread drawing it, not for the game's time) until the screen, its
        prompt drawn, satisfies `condition`."""
        deadline = time.monotonic() + timeout
        while not (self.vt.rows()[-1].startswith(">") and condition(self.screen())):
            assert time.monotonic() < deadline, "never shown:\n" + self.screen()
            self._read(0.05)
        return self.screen()

    def quiet(self, seconds: float = 0.5) -> str:
        """What is drawn in the next `seconds`."""
        before = len(self.output)
        self._read(seconds)
        return self.output[before:]


def selected(screen: str) -> list[str]:
    return re.findall(r"✓(\S+)", screen)


@pytest.mark.skipif(os.name != "posix", reason="a pseudo-terminal")
def test_typed_10_play_7h_press_only_what_they_name_on_an_80_by_24_screen_drawn_in_place(
    tmp_path: Path, clock: Clock
) -> None:
    master, slave = pty.openpty()
    with (
        offline(tmp_path / "dynalite", clock, players=2, seed=FIRST_TO_PLAY) as table,
        open(slave, encoding="utf-8", closefd=False) as stdin,
        open(slave, "w", encoding="utf-8", closefd=False) as stdout,
    ):
        game = table.record().game
        assert game is not None and game.awaited == PERSON and game.rank == 0
        held = hand(table)
        assert [c for c in held if c.startswith("10")] == ["10♣"] and "7♥" in held
        term = Terminal(master, slave)
        drawing = threading.Thread(
            target=run_terminal, args=(table, Interrupts(), stdin, stdout), kwargs={"wait": 0.02}
        )
        drawing.start()
        try:
            # The first screen, in 80 × 24 and on the alternate screen: the table's header at
            # the top, the hand, the time left, and the welcome whole (how to play, the clock).
            first = term.screen_when(lambda s: "Welcome" in s)
            rows = term.vt.rows()
            assert term.vt.alternate and not term.vt.overflowed and term.vt.scrolled == 0
            assert rows[0].startswith("  Menteur · 2 players · turn clock 90 s")
            assert rows[1].startswith("  Expected rank: A")
            assert "Your hand · 26 cards" in first and "10♣" in first
            assert "── ⏱ 1:30 to play, or the table plays for you." in first
            assert "Type cards, then a key in [ ]: 10 7h p (#3: your third card)" in flat(first)
            assert "No clock: /stop, /settings off, n, or --clock off." in flat(first)
            assert "plays by" in first and "⏱ 1:30" in first
            # The countdown moves with the clock, drawn in place: only the lines that changed.
            clock.advance(30)
            assert "⏱ 1:00 to play" in term.screen_when(lambda s: "⏱ 1:00 to play" in s)
            drawn = term.quiet()
            assert "\x1b[2J" not in drawn and term.vt.scrolled == 0
            clock.advance(1)
            drawn = term.quiet()
            assert 0 < drawn.count("\x1b[K") <= 3, "the two countdowns, and the prompt's line"

            # help: its words where the welcome was; the table stays where it is.
            term.keys("?\r")
            screen = term.screen_when(lambda s: "Keys in [ ]" in s)
            assert term.vt.rows()[0].startswith("  Menteur · 2 players")
            assert "q: quit, the game is kept." in flat(screen) and "Welcome" not in screen

            # Keys are a line being typed: "1" then "0" press nothing...
            term.keys("1")
            term.keys("0")
            term.quiet()
            assert term.vt.rows()[-1] == "> 10" and not selected(term.screen())
            # ...and the line is the 10 of the hand, nothing else.
            term.keys("\r")
            screen = term.screen_when(lambda s: bool(selected(s)))
            assert selected(screen) == ["10♣"]
            assert "means nothing" not in screen and "no card" not in screen
            assert "[p] Play 1 × A" in screen

            # The key beside Play plays, and shouts at nobody.
            term.keys("p\r")
            screen = term.screen_when(lambda s: "Your hand · 25 cards" in s)
            assert not selected(screen) and "Called: 1 × A (Ann)" in screen

            # A card and its suit, typed off turn: selected, alone.
            term.keys("7h\r")
            assert selected(term.screen_when(lambda s: bool(selected(s)))) == ["7♥"]

            # A line with a word that means nothing changes nothing, and says what would.
            term.keys("7c xyz\r")
            screen = flat(term.screen_when(lambda s: "means nothing" in s))
            assert "“xyz” means nothing here. Type cards (10, 7h, #3), then a key" in screen
            assert selected(screen) == ["7♥"]
            assert not term.vt.overflowed and term.vt.scrolled == 0, "never past the screen"

            term.keys("q\r")
            drawing.join(timeout=10)
            assert not drawing.is_alive()
            term.quiet(0.1)
            # Back on the terminal's own screen, as it was: nothing of the table left there.
            assert not term.vt.alternate and "Menteur" not in term.screen()
        finally:
            if drawing.is_alive():
                term.keys("\x04")
                drawing.join(timeout=10)
            os.close(master)
            os.close(slave)
        game = table.record().game
        assert game is not None and game.plays == 1
        seat = game.ids.index(PERSON)
        assert game.last is not None and game.last.seat == seat
        assert game.last.cards == 1 << parse_card("10♣"), "the 10 alone"
        assert game.bullets[seat] == 3 and game.shouted is None, "no Liar! was shouted"
        assert [c for c in hand(table) if c.lstrip("✓").startswith("10")] == []


def vocabulary(lang: str) -> set[str]:
    """Every word of a catalogue, in lower case."""
    raw = json.loads((ROOT / "handlers" / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
    texts = [
        v
        for value in raw.values()
        for v in (value.values() if isinstance(value, dict) else [value])
    ]
    return {word for text in texts for word in WORDS.findall(text.casefold())}


WORDS = re.compile(r"[^\W\d_]{2,}")
# Names on the screen that are no language's words: yours, the bot's, the time zone; and a
# word typed, quoted back.
NAMES = {"ann", "menteur", "test", "bot", "utc", "xyz"}


def foreign(screen: str, lang: str) -> set[str]:
    """The words of `screen` that its language's catalogue does not have."""
    return set(WORDS.findall(screen.casefold())) - vocabulary(lang) - NAMES


@pytest.mark.parametrize("lang", ["fr", "ar"])
def test_a_strangers_game_in_french_or_arabic_shows_no_english_line(
    tmp_path: Path, clock: Clock, lang: str
) -> None:
    """A game as a stranger plays it: the first screen, help, a typo, a card not held, a play
    off turn, plays and challenges, leaving (R19: the last player left wins), n; then the runner
    again with another language asked for."""
    data = tmp_path / "dynalite"
    shown: list[str] = []
    with offline(data, clock, players=2, seed=3, lang=lang) as table:
        assert table.record().lang == lang, "the group's, through /language"
        shown.append(table.screen())
        for line in ("?", "xyz", "#99", "9♣ 9♣ 9♣ 9♣ 9♣", "l", "s", "b9", "n", "#1 p"):
            table.enter(line)
            shown.append(table.screen())
        # Liar! at the computer player's play, when the person is next: a challenge.
        play(table, lambda game: (game.awaited == PERSON and shoutable(game)) or over(game))
        table.enter("l")
        shown.append(table.screen())
        for _ in range(6):
            play(table, lambda game: game.awaited == PERSON or over(game))
            shown.append(table.screen())
            play(table, lambda game: game.awaited != PERSON or over(game))
            shown.append(table.screen())
        challenge = plain_text(t(lang, "challenge_title"))
        assert any(plain_text(text).startswith(challenge) for text in group_texts(table))
        table.enter("/forfeit")
        assert not table.game_running()
        shown += [table.screen(), table.farewell()]
        assert plain_text(t(lang, "reveal_title")) in shown[-2], "the end, how the game went"
        table.enter("n")
        shown += [table.screen(), table.farewell()]
    for screen in shown:
        assert not foreign(screen, lang), screen
    # Resumed, with options that ask for another table: answered in the table's language,
    # naming the language asked for by its own name.
    with offline(data, clock, lang="en", players=3) as table:
        screen = table.screen()
    assert foreign(screen, lang) == {"english"}, screen
    assert "English" in screen and "--new" in screen


def test_long_polling_hands_each_update_to_the_webhook_handler_and_performs_its_reply(
    tmp_path: Path,
) -> None:
    token = "123456:fake-token"
    with FakeTelegram() as tg:
        # A deployed bot's webhook is set: getUpdates is refused until the runner deletes it.
        httpx.post(
            f"{tg.base_url}{token}/setWebhook", json={"url": "https://example.org/webhook"}
        ).raise_for_status()
        settings = Settings(
            table_name="menteur-polled",
            bot_token=token,
            webhook_secret="a-per-run-secret",
            api_base_url=tg.base_url,
        )
        with LocalBot(settings, data_dir=tmp_path / "dynalite") as local:
            poller = Poller(local)
            assert poller.webhook() == "https://example.org/webhook"
            poller.start()
            assert tg.webhook_url == "" and poller.webhook() == ""

            updates = Updates(first=41)
            tg.push_update(updates.message(ANN, "/newgame", GROUP))
            assert poller.poll_once(0) == 1
            (table,) = tg.chat_messages(GROUP)
            join = next(
                b["callback_data"]
                for row in (table.reply_markup or {})["inline_keyboard"]
                for b in row
                if b["callback_data"].startswith(Kind.JOIN.value + ".")
            )

            # A press: the handler's webhook reply (the join link) is performed on Telegram.
            press = updates.press(ANN, GROUP, table.message_id, join)
            tg.push_update(press)
            assert poller.poll_once(0) == 1
            (answer,) = tg.calls("answerCallbackQuery")
            assert answer.params["callback_query_id"] == press["callback_query"]["id"]
            assert str(answer.params["url"]).startswith("https://t.me/menteur_test_bot?start=")

            # The offset confirms what was handled: nothing comes twice.
            assert poller.offset == 43
            assert poller.poll_once(0) == 0
            assert tg.calls("getUpdates")[-1].params["offset"] == 43
            # The update types the deployed webhook asks for, the bot's own membership included.
            for call in tg.calls("getUpdates"):
                assert call.params["allowed_updates"] == [
                    "message",
                    "callback_query",
                    "my_chat_member",
                ]
            assert local.rt.store.load(GROUP).updates == [41]  # the press wrote nothing


# --- the command itself, in a process of its own ---------------------------------------------


@contextmanager
def runner(
    args: list[str], env: dict[str, str]
) -> Iterator[tuple[subprocess.Popen[str], list[str]]]:
    """`python -m infra.local ...` in its own process group, as a terminal runs it; its output
    collected as it comes."""
    process = subprocess.Popen(
        [sys.executable, "-m", "infra.local", *args],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    output: list[str] = []
    assert process.stdout is not None
    stdout = process.stdout
    reader = threading.Thread(target=lambda: output.extend(stdout), daemon=True)
    reader.start()
    try:
        yield process, output
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        reader.join(timeout=5)


def wait_for(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def ctrl_c(process: subprocess.Popen[str], output: list[str], said: str = "Stopped.") -> None:
    """Ctrl-C as a terminal sends it, to the whole process group (dynalite included); then
    nothing of it may be left, and nothing but a clean goodbye (`said`) said."""
    os.killpg(process.pid, signal.SIGINT)
    code = process.wait(timeout=15)
    time.sleep(0.1)
    text = "".join(output)
    assert code == 0, text
    with pytest.raises(ProcessLookupError):
        os.killpg(process.pid, 0)  # no process left in the group: dynalite is gone too
    assert "Traceback" not in text and said in text, text


def base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "AWS_"))}
    env["PYTHONPATH"] = str(ROOT)
    return env


@pytest.mark.skipif(os.name != "posix", reason="process groups")
def test_a_runner_killed_outright_leaves_its_store_which_the_next_start_stops_and_resumes(
    tmp_path: Path,
) -> None:
    """kill -9 (or a closed pipe) gives the runner no chance to stop dynalite: the next start
    finds it still serving the folder, stops it, and resumes the saved game, in one line. Ctrl-C
    then stops it and all it started, saying the game is kept."""
    data = tmp_path / "dynalite"
    args = ["--players", "2", "--data", str(data)]
    with runner(args, base_env()) as (process, output):
        wait_for(lambda: "Your hand" in "".join(output))
        orphan = int((data / PID_FILE).read_text())
        os.kill(process.pid, signal.SIGKILL)  # the runner alone, as kill -9 <pid> does
        process.wait(timeout=10)
    try:
        assert Dynalite._serves(orphan, data.resolve()), "its store lives on"
        # Started again with another language asked for: all it says is in the game's.
        with runner([*args, "--lang", "fr"], base_env()) as (process, output):
            wait_for(lambda: "Resumed the saved game" in flat("".join(output)))
            text = flat("".join(output))
            assert "The local store a runner left running when it died was stopped first" in text
            assert "You asked for Français: add --new" in text
            assert "Traceback" not in text and "Error" not in text
            assert process.stdin is not None
            process.stdin.write("/table\n")
            process.stdin.flush()
            ctrl_c(process, output, "The game is saved: python3 infra/dev.py play resumes it")
        assert (tmp_path / "offline.log").exists()
        assert not Dynalite._serves(orphan, data.resolve())
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(orphan, signal.SIGKILL)


@pytest.mark.skipif(os.name != "posix", reason="process groups")
def test_ctrl_d_leaves_the_offline_table_saying_the_game_is_kept(tmp_path: Path) -> None:
    args = ["--players", "2", "--data", str(tmp_path / "dynalite")]
    with runner(args, base_env()) as (process, output):
        wait_for(lambda: "Your hand" in "".join(output))
        assert process.stdin is not None
        process.stdin.close()  # the end of the input, as Ctrl-D on an empty line
        assert process.wait(timeout=15) == 0
        time.sleep(0.1)
        text = "".join(output)
        assert "The game is saved: python3 infra/dev.py play resumes it" in text, text
        assert "Traceback" not in text


@pytest.mark.skipif(os.name != "posix", reason="process groups")
def test_with_a_token_the_runner_polls_telegram_until_ctrl_c(tmp_path: Path) -> None:
    with FakeTelegram() as tg:
        env = base_env() | {
            "TELEGRAM_BOT_TOKEN": "123456:fake-token",
            "TELEGRAM_API_BASE_URL": tg.base_url,
        }
        # A deployed bot's webhook is set: polling would take its updates from the stack.
        hook = "https://example.org/webhook"
        httpx.post(f"{tg.base_url}123456:fake-token/setWebhook", json={"url": hook})
        settings = Settings(bot_token="123456:fake-token", api_base_url=tg.base_url)
        with pytest.raises(
            SystemExit, match=r"webhook \(https://example.org/webhook\).* add --take-webhook"
        ):
            serve(settings, tmp_path / "dynalite", Interrupts())  # as the command runs it
        assert tg.webhook_url == hook and not tg.calls("getUpdates"), "nothing taken"
        args = ["--take-webhook", "--data", str(tmp_path / "dynalite")]
        with runner(args, env) as (process, output):
            wait_for(lambda: "is running" in "".join(output))
            assert tg.webhook_url == ""
            assert f"the bot's webhook ({hook}) was removed" in flat("".join(output))
            tg.push_update(Updates().message(ANN, "/newgame", -100555))
            wait_for(lambda: bool(tg.chat_messages(-100555)))
            assert "Join" in str(tg.chat_messages(-100555)[0].reply_markup)
            ctrl_c(process, output)
