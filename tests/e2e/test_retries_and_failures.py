"""Retries and failures: an update delivered again is applied once; Telegram failing after a
commit never undoes the move nor blocks the game, and the next update heals stale screens; a
group that becomes a supergroup takes its game along; DynamoDB failing before a commit gets a
500 (Telegram retries), after one a 200.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from botocore.exceptions import ClientError

from engine import Phase, card_name
from handlers import commit, telegram_io
from handlers.callbacks import Kind
from handlers.text import t
from infra.fake_telegram import (
    MESSAGE_NOT_MODIFIED,
    bad_request,
    chat_migrated,
    delay,
    server_error,
    too_many_requests,
)
from infra.harness import GROUP, Person, people
from infra.harness.bot import running_bot
from infra.harness.screens import button, card_buttons
from tests.support.corpus import Scene

NEW_GROUP = -1005550001111  # the supergroup GROUP becomes


class Sleeps(list[float]):
    """Waits asked for (flood limits, conflict jitter): recorded, never slept."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


pytestmark = pytest.mark.usefixtures("ptb_timedelta")


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> Sleeps:
    asked = Sleeps()
    deliver = functools.partial(telegram_io.deliver, sleep=asked)
    monkeypatch.setattr(telegram_io, "deliver", deliver)
    return asked


@contextmanager
def game_in_play(
    seed: int = 11, sleep: Sleeps | None = None, read_timeout: float | None = None
) -> Iterator[Scene]:
    """Three players, the game started, and one card played: a Liar! can be shouted. The bot
    waits `read_timeout` for Telegram's answers, if given."""
    with running_bot(seed=seed, sleep=sleep, read_timeout=read_timeout) as table:
        scene = Scene(table, people())
        scene.start()
        mover = scene.awaited()
        scene.press_play(mover, {min(scene.hand(mover))})
        yield scene
        assert scene.leaks() == [], "a group message showed a card no challenge turned over"


def shouter_for(scene: Scene) -> Person:
    game = scene.table.game()
    assert game.last is not None
    return next(p for p in scene.players if p.id != game.ids[game.last.seat])


def challenge_messages(scene: Scene, chat: int = GROUP, lang: str = "en") -> list[str]:
    title = t(lang, "challenge_title")
    return [
        str(c.params["text"])
        for c in scene.table.tg.calls("sendMessage", chat_id=chat)
        if c.ok and str(c.params["text"]).startswith(title)
    ]


def version(scene: Scene, chat: int = GROUP) -> int:
    return scene.table.rt.store.load(chat).version


def logged_outcomes(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    found = []
    for record in caplog.records:
        if record.name == "menteur.webhook.outcome" and record.getMessage().startswith("{"):
            found.append(json.loads(record.getMessage()))
    return found


# --- the same update, again ------------------------------------------------------------------


def test_an_update_delivered_three_times_is_applied_once() -> None:
    with game_in_play() as scene:
        table = scene.table
        shouter = shouter_for(scene)
        bullets = table.game().bullets[table.game().ids.index(shouter.id)]
        liar = scene.liar(shouter)
        start = version(scene)
        first = table.post(liar)
        after_first = scene.snapshot()
        assert first.status == 200 and version(scene) == start + 1
        sends = len(table.tg.calls("sendMessage"))
        edits = len(table.tg.calls("editMessageText", chat_id=GROUP))
        for _ in range(2):
            again = table.post(liar)
            assert again.status == 200
            assert again.text is None, "a retried press is answered, without a refusal"
        assert scene.snapshot() == after_first, "the retries changed nothing"
        assert len(challenge_messages(scene)) == 1, "the group saw the challenge once"
        assert len(table.tg.calls("sendMessage")) == sends, "nothing new was sent"
        # A retry re-renders: the table is edited again, to what it already shows.
        assert len(table.tg.calls("editMessageText", chat_id=GROUP)) == edits + 2
        assert scene.table_screen() == scene.current_table()
        game = table.game()
        assert game.bullets[game.ids.index(shouter.id)] in (bullets, bullets - 1)

        # A play, and a command, delivered three times each: applied once.
        person = scene.awaited()
        held = len(scene.hand(person))
        data = scene.play_data(person, {min(scene.hand(person))})
        play = scene.press_update(person, person.id, scene.hand_message_id(person), data)
        for _ in range(3):
            assert table.post(play).status == 200
        assert len(scene.hand(person)) == held - 1
        assert version(scene) == start + 2
        stop = table.updates.message(scene.players[0], "/stop")
        newgame = table.updates.message(scene.players[0], "/newgame")
        first_game = table.record().game_id
        for _ in range(3):
            table.post(stop)
        for _ in range(3):
            table.post(newgame)
        record = table.record()
        assert record.game_id != first_game and version(scene) == start + 4
        stopped = t("en", "stopped_by", name=scene.players[0].name)
        sent = [c.params["text"] for c in table.tg.calls("sendMessage", chat_id=GROUP)]
        assert sum(stopped in text for text in sent) == 1


# --- Telegram failing after the commit -------------------------------------------------------


def test_a_flood_limit_on_the_table_edit_is_waited_out_or_healed_next_time(
    sleeps: Sleeps,
) -> None:
    with game_in_play(sleep=sleeps) as scene:
        table = scene.table
        # 429, retry after 2 s: waited out (within the 3 s bound), then the edit goes through.
        table.tg.fail_next("editMessageText", GROUP, error=too_many_requests(2))
        person = scene.awaited()
        start = version(scene)
        assert scene.press_play(person, {min(scene.hand(person))}).status == 200
        assert version(scene) == start + 1
        assert sleeps == [2.0]
        assert scene.table_screen() == scene.current_table()
        # 429, retry after 30 s: given up at once; the move stands and the next one heals it.
        table.tg.fail_next("editMessageText", GROUP, error=too_many_requests(30))
        person = scene.awaited()
        assert scene.press_play(person, {min(scene.hand(person))}).status == 200
        assert version(scene) == start + 2 and sleeps == [2.0]
        assert scene.table_screen() != scene.current_table(), "the table is stale for now"
        person = scene.awaited()
        assert scene.press_play(person, {min(scene.hand(person))}).status == 200
        assert scene.table_screen() == scene.current_table(), "the next update healed it"


def test_server_errors_lose_a_send_but_never_the_move(sleeps: Sleeps) -> None:
    with game_in_play(sleep=sleeps) as scene:
        table = scene.table
        # A 5xx on the challenge's message: not sent twice (it may have arrived), and the
        # challenge stands; the table, edited as usual, tells what happened.
        table.tg.fail_next("sendMessage", GROUP, error=server_error(502))
        start = version(scene)
        response = scene.shout(shouter_for(scene))
        assert response.status == 200 and version(scene) == start + 1
        assert table.game().last is None, "the challenge was settled"
        failed = [c for c in table.tg.calls("sendMessage", chat_id=GROUP) if not c.ok]
        assert len(failed) == 1 and challenge_messages(scene) == []
        assert scene.table_screen() == scene.current_table()
        note = table.record().note
        assert note is not None and note in (scene.table_screen()[0] or "")
        # A 5xx on a hand's edit: an edit is safe to repeat, so it is retried.
        person = scene.awaited()
        table.tg.fail_next("editMessageText", person.id, error=server_error())
        assert scene.press_play(person, {min(scene.hand(person))}).status == 200
        assert table.shown_hand(person) == scene.hand(person)
        # The game goes on.
        person = scene.awaited()
        assert scene.press_play(person, {min(scene.hand(person))}).status == 200
        assert version(scene) == start + 3


def test_a_slow_telegram_times_out_and_the_edit_is_retried() -> None:
    # A bot that waits 0.5 s for an answer, and a Telegram that answers after 2 s.
    with game_in_play(read_timeout=0.5) as scene:
        table = scene.table
        table.tg.fail_next("editMessageText", GROUP, error=delay(2.0))
        person = scene.awaited()
        start = version(scene)
        assert scene.press_play(person, {min(scene.hand(person))}).status == 200
        assert version(scene) == start + 1
        edits = table.tg.calls("editMessageText", chat_id=GROUP)
        # The slow edit took effect; the retry found the text already there: a success.
        assert edits[-1].params["text"] == edits[-2].params["text"]
        assert scene.table_screen() == scene.current_table()


def test_message_is_not_modified_counts_as_success(caplog: pytest.LogCaptureFixture) -> None:
    with game_in_play() as scene:
        table = scene.table
        table.tg.fail_next("editMessageText", GROUP, error=bad_request(MESSAGE_NOT_MODIFIED))
        caplog.clear()
        person = scene.awaited()
        edits = len(table.tg.calls("editMessageText", chat_id=GROUP))
        sends = len(table.tg.calls("sendMessage", chat_id=GROUP))
        assert scene.press_play(person, {min(scene.hand(person))}).status == 200
        assert len(table.tg.calls("editMessageText", chat_id=GROUP)) == edits + 1, "no retry"
        assert not any("given up" in r.getMessage() for r in caplog.records)
        assert len(table.tg.calls("sendMessage", chat_id=GROUP)) == sends, "no new table sent"


def test_a_player_who_blocks_the_bot_does_not_block_the_game() -> None:
    with game_in_play() as scene:
        table, game = scene.table, scene.table.game()
        assert game.last is not None
        person, mover = scene.awaited(), scene.by_id(game.ids[game.last.seat])
        blocked = next(p for p in scene.players if p not in (person, mover))  # plays next
        table.tg.block(blocked.id)
        notice = t("en", "unreachable", name=blocked.name)

        def notices() -> int:
            sent = table.tg.calls("sendMessage", chat_id=GROUP)
            return sum(c.ok and c.params["text"] == notice for c in sent)

        # The move that makes it their turn edits their hand: 403. The move stands.
        start = version(scene)
        assert scene.press_play(person, {min(scene.hand(person))}).status == 200
        assert version(scene) == start + 1 and scene.awaited() == blocked
        assert blocked.id in table.record().unreachable and notices() == 1
        # Their own move still counts, a challenge of it too, and the game goes on; the group
        # is not told again.
        assert scene.press_play(blocked, {min(scene.hand(blocked))}).status == 200
        assert scene.shout(mover).status == 200
        for _ in range(3):
            player = scene.awaited()
            assert scene.press_play(player, {min(scene.hand(player))}).status == 200
        assert version(scene) == start + 6 and notices() == 1
        # Unblocked: /hand sends the hand again, and later moves keep it current.
        table.tg.unblock(blocked.id)
        table.say(blocked, "/hand")
        assert table.shown_hand(blocked) == scene.hand(blocked)
        assert blocked.id not in table.record().unreachable
        for _ in range(4):
            player = scene.awaited()
            scene.press_play(player, {min(scene.hand(player))})
            assert table.shown_hand(blocked) == scene.hand(blocked), "the hand went stale"
        assert notices() == 1


# --- a group that becomes a supergroup -------------------------------------------------------


def _the_game_goes_on_in_the_supergroup(scene: Scene) -> None:
    """A play from a private hand, then Liar! from the table: both work in the new chat."""
    table = scene.table
    assert table.rt.store.load(GROUP).version == 0, "nothing is left under the old id"
    record = table.rt.store.load(NEW_GROUP)
    assert record.game is not None and record.game.phase is Phase.PLAY
    start = record.version
    # The awaited player selects a card in their hand message and plays it.
    person = scene.by_id(record.game.awaited)
    mask = record.game.hands[record.game.ids.index(person.id)]
    card = min(c for c in range(52) if mask >> c & 1)
    message = table.tg.message(person.id, record.hand_msgs[person.id])
    assert message is not None
    toggle = card_buttons(message)[card]
    table.press(person, person.id, message.message_id, toggle)
    message = table.tg.message(person.id, record.hand_msgs[person.id])
    assert message is not None
    play = button(message, Kind.PLAY)
    assert play is not None
    response = table.press(person, person.id, message.message_id, play)
    assert response.text is None, response.text
    record = table.rt.store.load(NEW_GROUP)
    assert record.version == start + 1 and record.game is not None
    assert record.game.last is not None and record.game.ids[record.game.last.seat] == person.id
    # Liar! from the supergroup's table message.
    assert scene.table_screen(NEW_GROUP) == scene.current_table(NEW_GROUP)
    shown = table.tg.message(NEW_GROUP, record.table_msg or 0)
    assert shown is not None
    liar = button(shown, Kind.SHOUT)
    assert liar is not None
    shouter = next(p for p in scene.players if p != person)
    response = table.press(shouter, NEW_GROUP, shown.message_id, liar)
    assert response.text is None, response.text
    record = table.rt.store.load(NEW_GROUP)
    assert record.version == start + 2 and record.game is not None and record.game.last is None
    assert len(challenge_messages(scene, NEW_GROUP)) >= 1
    scene.revealed |= {card_name(card)}


def test_a_migration_update_moves_the_game_to_the_supergroup() -> None:
    with game_in_play() as scene:
        table = scene.table
        opener = scene.players[0]
        update = table.updates.message(opener, "")
        service = update["message"]
        del service["text"]
        service["chat"]["type"] = "group"
        service["migrate_to_chat_id"] = NEW_GROUP
        assert table.post(update).status == 200
        _the_game_goes_on_in_the_supergroup(scene)


def test_a_chat_migrated_error_on_a_send_moves_the_game() -> None:
    with game_in_play() as scene:
        table = scene.table
        table.tg.fail_next("sendMessage", GROUP, error=chat_migrated(NEW_GROUP))
        assert table.post(scene.liar(shouter_for(scene))).status == 200
        assert len(challenge_messages(scene, NEW_GROUP)) == 1, "sent again, to the supergroup"
        _the_game_goes_on_in_the_supergroup(scene)


def test_a_move_made_on_the_old_chat_id_during_a_migration_lands_in_the_supergroup() -> None:
    with game_in_play() as scene:
        table = scene.table
        start = version(scene)
        # The migration marks the old item, then dies before copying it (a container killed).
        scene.client.fail("put_item", client_error("InternalServerError", "PutItem"))
        with pytest.raises(ClientError):
            table.rt.store.move(GROUP, NEW_GROUP)
        assert table.rt.store.load(GROUP).moving == NEW_GROUP
        # Liar! pressed on the old table (its button names the old chat): refused there, the
        # move is finished, and the shout lands on the game in the supergroup.
        response = table.post(scene.liar(shouter_for(scene)))
        assert response.status == 200 and response.text is None
        assert table.rt.store.load(GROUP).version == 0
        moved = table.rt.store.load(NEW_GROUP)
        assert moved.version == start + 1 and moved.game is not None
        assert moved.game.last is None, "the challenge was settled in the supergroup"


# --- DynamoDB failing ------------------------------------------------------------------------


def client_error(code: str, operation: str = "UpdateItem") -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": code}}, operation)


def conditional_failed(scene: Scene) -> ClientError:
    error: ClientError = scene.client.client.exceptions.ConditionalCheckFailedException(
        {"Error": {"Code": "ConditionalCheckFailedException", "Message": "failed"}},
        "UpdateItem",
    )
    return error


def _committed_then_lost(real: Any, kwargs: dict[str, Any]) -> Any:
    """The write reaches the table, but its answer is lost on the way back."""
    real(**kwargs)
    raise client_error("InternalServerError")


def _delivered_again_applies_once(scene: Scene, update: dict[str, Any], start: int) -> None:
    """Once the store works again, Telegram's next deliveries apply `update` exactly once."""
    for _ in range(2):
        assert scene.table.post(update).status == 200
        assert version(scene) == start + 1


@pytest.mark.parametrize(
    ("operation", "error"),
    [
        ("get_item", client_error("ProvisionedThroughputExceededException", "GetItem")),
        ("get_item", client_error("InternalServerError", "GetItem")),
        ("update_item", client_error("ProvisionedThroughputExceededException")),
        ("update_item", client_error("InternalServerError")),
    ],
    ids=["read throttled", "read 500", "write throttled", "write 500"],
)
def test_a_store_failure_before_the_commit_gets_500_then_the_retry_applies_once(
    operation: str, error: ClientError, sleeps: Sleeps
) -> None:
    with game_in_play(sleep=sleeps) as scene:
        table = scene.table
        shouter = shouter_for(scene)
        liar = scene.liar(shouter)
        start, calls = version(scene), len(table.tg.calls())
        scene.client.fail(operation, error)
        response = table.post(liar)
        assert response.status == 500, "nothing committed: Telegram must retry"
        assert version(scene) == start
        assert table.tg.calls()[calls:] == [], "nothing was said about a move not made"
        _delivered_again_applies_once(scene, liar, start)
        assert len(challenge_messages(scene)) == 1


def test_a_commit_whose_answer_was_lost_is_not_applied_twice(sleeps: Sleeps) -> None:
    with game_in_play(sleep=sleeps) as scene:
        table = scene.table
        person = scene.awaited()
        held = len(scene.hand(person))
        data = scene.play_data(person, {min(scene.hand(person))})
        play = scene.press_update(person, person.id, scene.hand_message_id(person), data)
        start = version(scene)
        scene.client.fail("update_item", _committed_then_lost)
        assert table.post(play).status == 500
        assert version(scene) == start + 1, "the write did reach the table"
        _delivered_again_applies_once(scene, play, start)
        assert len(scene.hand(person)) == held - 1
        assert scene.table_screen() == scene.current_table(), "the retry rendered the move"


def test_a_store_failure_after_the_commit_still_gets_200(sleeps: Sleeps) -> None:
    with game_in_play(sleep=sleeps) as scene:
        table, opener = scene.table, scene.players[0]
        table.say(opener, "/stop")
        newgame = table.updates.message(opener, "/newgame")
        start, game_id = version(scene), table.record().game_id
        # The first write is the move's; the second keeps the new table message's id, and fails.
        scene.client.fail("update_item", lambda real, kwargs: real(**kwargs))
        scene.client.fail("update_item", client_error("ProvisionedThroughputExceededException"))
        assert table.post(newgame).status == 200, "committed: no retry wanted"
        assert version(scene) == start + 1 and table.record().game_id != game_id
        assert table.post(newgame).status == 200
        assert version(scene) == start + 1, "applied once"
        # The table's id was lost: the next update sends the table anew and keeps that one.
        table.join(scene.players[1])
        assert scene.table_screen() == scene.current_table()


def test_a_short_storm_of_conflicts_is_absorbed(
    caplog: pytest.LogCaptureFixture, sleeps: Sleeps
) -> None:
    caplog.set_level(logging.INFO, logger="menteur.webhook")
    with game_in_play(sleep=sleeps) as scene:
        table = scene.table
        shouter = shouter_for(scene)
        liar = scene.liar(shouter)
        start = version(scene)
        storm = commit.MAX_ATTEMPTS - 1
        scene.client.fail("update_item", conditional_failed(scene), times=storm)
        caplog.clear()
        assert table.post(liar).status == 200
        assert version(scene) == start + 1 and len(challenge_messages(scene)) == 1
        (outcome,) = logged_outcomes(caplog)
        assert outcome["conflicts"] == storm and outcome["outcome"] == "applied"
        assert len(sleeps) >= storm, "each conflict waits a little (jitter) before trying again"


def test_a_long_storm_of_conflicts_gets_500_then_the_retry_applies_once(
    sleeps: Sleeps,
) -> None:
    with game_in_play(sleep=sleeps) as scene:
        table = scene.table
        shouter = shouter_for(scene)
        liar = scene.liar(shouter)
        start = version(scene)
        scene.client.fail("update_item", conditional_failed(scene), times=commit.MAX_ATTEMPTS)
        assert table.post(liar).status == 500
        assert version(scene) == start and challenge_messages(scene) == []
        _delivered_again_applies_once(scene, liar, start)
        assert len(challenge_messages(scene)) == 1
