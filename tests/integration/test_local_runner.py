"""The local runner, as `python3 infra/dev.py play` runs it: a real dynalite, the webhook and
timer handlers fed Lambda events, a fake Telegram; an offline game played by keys, long polling,
and Ctrl-C. Time is an injected clock: 45 seconds pass in no time."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from engine import Game, Phase
from handlers.callbacks import Kind
from handlers.config import Settings
from handlers.dynamo import DynamoStore
from infra.fake_telegram import FakeTelegram
from infra.runner import OFFLINE_TABLE, LocalBot, Poller
from infra.terminal import ACTION_KEYS, GROUP, PERSON, OfflineTable, plain_text
from tests.support import Clock, Person
from tests.support.updates import Updates

ROOT = Path(__file__).resolve().parents[2]
ANN = Person(7, "Ann")

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


def play(table: OfflineTable, until: Callable[[Game], bool], *, stand: bool = True) -> int:
    """The person's simple policy, by keys: on their turn, select the first card and Play; let
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
            assert table.enter("1p")
            plays += 1
        elif stand and deciding(game):
            assert table.enter(ACTION_KEYS[Kind.STAND])
        else:
            table.step()
    raise AssertionError("the game did not get there:\n" + table.screen())


def hand(table: OfflineTable) -> list[str]:
    return [s.text for s in table.buttons() if s.press and s.press.kind is Kind.TOGGLE]


def lines(text: str) -> str:
    """Text as the terminal shows it, without its indentation."""
    return "\n".join(line.strip() for line in plain_text(text).splitlines())


def group_texts(table: OfflineTable) -> list[str]:
    return [m.text for m in table.tg.chat_messages(GROUP) if m.text]


def test_an_offline_game_by_keys_survives_a_restart_and_ends_in_the_final_ranking(
    tmp_path: Path, clock: Clock
) -> None:
    data = tmp_path / "dynalite"
    with offline(data, clock, players=4, seed=5) as table:
        screen = table.screen()
        assert "Menteur · 4 players" in screen and "Your hand · 13 cards" in screen
        assert "[1] " in screen, "each card button shows its key"
        played = 0
        while played < 3:
            played += play(table, lambda game: game.phase is Phase.PLAY and game.awaited == PERSON)
            played += play(table, lambda game: game.awaited != PERSON)
        kept = hand(table)
        assert kept

    # The runner stops and starts again: the game is in dynalite, and goes on.
    with offline(data, clock, players=4, seed=5) as table:
        assert "Resumed" in table.screen()
        assert hand(table) == kept
        play(table, over)
        screen = table.screen()
        texts = group_texts(table)
        # The end: a message of its own with the winner and the Final ranking, on the screen.
        (end,) = [t for t in texts if "wins!" in t]
        assert lines(end) in lines(screen)
        assert "Final ranking" in end and "Ann" in end
        assert "Final ranking" in screen
        assert any(t.startswith("Challenge") for t in texts), "the first card is often a lie"

        # What dynalite holds, read by a client of its own: the finished game.
        store = DynamoStore(table.local.dynalite.client(), OFFLINE_TABLE)
        game = store.load(GROUP).game
        assert game is not None and game.phase is Phase.OVER and game.winner is not None
        assert plain_text(game.names[game.winner]) in plain_text(end)
        assert PERSON in game.ids and len(game.ids) == 4

        # n deals again, with the same players.
        assert "n: a new game" in screen
        assert table.enter("n")
        assert table.game_running() and "Your hand · 13 cards" in table.screen()


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


def test_the_offline_table_speaks_the_language_asked_for_of_every_catalogue(
    tmp_path: Path, clock: Clock
) -> None:
    with offline(tmp_path / "dynalite", clock, players=2, seed=3, lang="fr") as table:
        assert table.record().lang == "fr", "the group's, through /language"
        screen = table.screen()
        assert "] Français" in screen, "/language offers it, a key to press"
        assert "Je parlerai français ici." in screen
        assert "Votre main · 26 cartes" in screen, "and your private chat speaks it too"


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
            assert poller.start() == "https://example.org/webhook"
            assert tg.webhook_url == ""

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


def ctrl_c(process: subprocess.Popen[str], output: list[str]) -> None:
    """Ctrl-C as a terminal sends it, to the whole process group (dynalite included); then
    nothing of it may be left, and nothing but a clean goodbye said."""
    os.killpg(process.pid, signal.SIGINT)
    code = process.wait(timeout=15)
    time.sleep(0.1)
    text = "".join(output)
    assert code == 0, text
    with pytest.raises(ProcessLookupError):
        os.killpg(process.pid, 0)  # no process left in the group: dynalite is gone too
    assert "Traceback" not in text and "Stopped." in text, text


def base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "AWS_"))}
    env["PYTHONPATH"] = str(ROOT)
    return env


@pytest.mark.skipif(os.name != "posix", reason="process groups")
def test_ctrl_c_stops_the_offline_table_and_all_it_started(tmp_path: Path) -> None:
    args = ["--players", "3", "--data", str(tmp_path / "dynalite")]
    with runner(args, base_env()) as (process, output):
        wait_for(lambda: "Your hand" in "".join(output))
        assert process.stdin is not None
        process.stdin.write("/table\n")
        process.stdin.flush()
        ctrl_c(process, output)
    assert (tmp_path / "offline.log").exists()


@pytest.mark.skipif(os.name != "posix", reason="process groups")
def test_with_a_token_the_runner_polls_telegram_until_ctrl_c(tmp_path: Path) -> None:
    with FakeTelegram() as tg:
        env = base_env() | {
            "TELEGRAM_BOT_TOKEN": "123456:fake-token",
            "TELEGRAM_API_BASE_URL": tg.base_url,
        }
        with runner(["--data", str(tmp_path / "dynalite")], env) as (process, output):
            wait_for(lambda: "is running" in "".join(output))
            tg.push_update(Updates().message(ANN, "/newgame", -100555))
            wait_for(lambda: bool(tg.chat_messages(-100555)))
            assert "Join" in str(tg.chat_messages(-100555)[0].reply_markup)
            ctrl_c(process, output)
