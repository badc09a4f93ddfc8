"""No log line holds a secret, nor a person's id: a whole game logged at DEBUG and at INFO,
every record read."""

from __future__ import annotations

import logging
import re
import traceback
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from engine import Phase
from handlers import logs
from handlers.callbacks import Kind
from handlers.store import Record
from infra.fake_telegram import bad_request, blocked_by_user, server_error
from infra.harness import GROUP, SECRET, TOKEN, Person, by_id, people
from infra.harness.bot import Table, Watcher, open_and_start, play_to_a_final_play, running_bot
from infra.harness.screens import button

SECRETS = (TOKEN, TOKEN.partition(":")[2], SECRET)


class Everything(logging.Handler):
    """Every record the root logger sees, whatever its level or logger."""

    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def texts(self) -> Iterator[str]:
        """Each record as every handler could show it: template, arguments, message,
        exception and stack."""
        for record in self.records:
            yield str(record.msg)
            yield repr(record.args)
            yield record.getMessage()
            if record.exc_info and record.exc_info[0] is not None:
                yield "".join(traceback.format_exception(*record.exc_info))
            yield record.exc_text or ""
            yield record.stack_info or ""


@contextmanager
def everything_logged() -> Iterator[Everything]:
    capture = Everything()
    root = logging.getLogger()
    root.addHandler(capture)
    try:
        yield capture
    finally:
        root.removeHandler(capture)


def a_whole_game_with_failures(table: Table, players: list[Person]) -> None:
    """Through the webhook and the timer, with a forged update, Telegram errors whose text
    echoes the token, and a store failure whose exception names it."""
    watcher = Watcher(table, players)
    open_and_start(table, players)
    # A proxy that echoes the URL it was asked for, token and all. The faults hit the group's
    # calls: a move sends to the group and to private chats at once, and which arrives first
    # is the scheduler's choice, while a hand edit given up would fail the watcher's check.
    echo = f"wrong url https://api.telegram.org/bot{TOKEN}/editMessageText"
    table.tg.fail_next("editMessageText", GROUP, error=bad_request(echo))
    table.tg.fail_next("sendMessage", GROUP, error=server_error(502))
    finisher = play_to_a_final_play(table, players, watcher)
    forged = table.post({"update_id": table.updates.next_id(), "message": {}}, secret="forged")
    assert forged.status == 401

    # The store fails with the URL it was given in its error: the webhook logs the traceback.
    store = table.rt.store
    load = store.load

    def failing(chat: int, topic: int | None = None) -> Record:
        raise RuntimeError(f"cannot reach https://example.invalid/{TOKEN}?secret={SECRET}")

    store.load = failing  # type: ignore[method-assign]
    assert table.say(players[0], "/table").status == 500
    store.load = load  # type: ignore[method-assign]

    game = table.game()
    decider = by_id(players, game.awaited)
    final = table.group_message_with(Kind.STAND)
    stand = button(final, Kind.STAND)
    assert game.deadline is not None and stand is not None
    table.clock.advance(game.deadline - table.clock.now)
    table.sweep()  # the timer lets the final play stand
    game = table.game()
    assert game.phase is Phase.OVER and game.winner is not None
    assert game.ids[game.winner] == finisher.id
    table.press(decider, GROUP, final.message_id, stand)  # too late: refused


@pytest.mark.parametrize("level", ["DEBUG", "INFO"])
def test_no_record_holds_the_token_its_key_or_the_webhook_secret(level: str) -> None:
    players = people(3, "en")
    with everything_logged() as capture, running_bot(seed=3, log_level=level) as table:
        a_whole_game_with_failures(table, players)
    texts = list(capture.texts())
    assert any("applied" in text for text in texts), "the handlers logged the game"
    for secret in SECRETS:
        leaks = [text for text in texts if secret.lower() in text.lower()]
        assert not leaks, f"{secret!r} logged: {leaks[0][:300]}"
    assert any(logs.REDACTED in text for text in texts), "the echoed token reached a record"


def test_no_record_names_a_person_by_their_id() -> None:
    """A private chat's id is its user's, personal data: the logs say "private" for it, and
    name groups (negative ids) as they are. Every record of a game at DEBUG, with a player's
    private chat refusing the bot and a forged button pressed in private, is read for the
    players' ids."""
    players = people(3, "en", first_id=777_001)
    with everything_logged() as capture, running_bot(seed=3, log_level="DEBUG") as table:
        a_whole_game_with_failures(table, players)
        table.tg.fail_next("sendMessage", players[2].id, error=blocked_by_user())
        table.say(players[2], "/help", chat=players[2].id)
        hand = table.latest(players[0].id)
        table.press(players[0], players[0].id, hand.message_id, "forged")
    texts = list(capture.texts())
    ids = re.compile(r"(?<!\d)(?:" + "|".join(str(p.id) for p in players) + r")(?!\d)")
    leaks = [text for text in texts if ids.search(text)]
    assert not leaks, f"a person's id logged: {leaks[0][:300]}"
    assert any(f'"chat": "{logs.PRIVATE}"' in text for text in texts), "private chats logged"
    assert any(f"sendMessage {logs.PRIVATE}: " in text for text in texts), "the 403 logged"
    assert any(f'"chat": {GROUP}' in text for text in texts), "the group's lines name it"


def test_a_library_record_and_an_exception_are_redacted_whatever_the_logger() -> None:
    logs.protect(TOKEN, SECRET)
    with everything_logged() as capture:
        logging.getLogger("telegram.ext").warning("POST %s failed", f"/bot{TOKEN}/getMe")
        try:
            raise ValueError(f"bad header {SECRET}")
        except ValueError:
            logging.getLogger("menteur").exception("update failed")
        logging.getLogger("somewhere").error("stack", stack_info=True, extra={"x": TOKEN})
    texts = list(capture.texts())
    assert len(capture.records) == 3
    assert "/bot[redacted]/getMe" in texts[2]
    for secret in SECRETS:
        assert not [text for text in texts if secret in text], secret


def test_libraries_are_held_at_warning_whatever_the_level() -> None:
    logs.configure("DEBUG", [TOKEN])
    for name in ("httpx", "httpcore", "telegram", "botocore", "urllib3"):
        assert logging.getLogger(name).getEffectiveLevel() == logging.WARNING, name
    logs.configure("ERROR", [TOKEN])
    assert logging.getLogger("httpx").getEffectiveLevel() == logging.ERROR
    logs.configure("INFO", [TOKEN])
