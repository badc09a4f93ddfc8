"""Telegram's flood limits and lost answers, as a real group meets them: every screen converges to
the stored game whatever Telegram answers, and no player is left without the button they need.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from botocore.exceptions import ClientError

from engine import Phase
from engine import events as ev
from engine.cards import rank_of
from handlers import callbacks, outbox, plan, telegram_io
from handlers.callbacks import Kind
from handlers.lobby import NEW_GAMES_PER_MINUTE
from handlers.outbox import Parcel
from handlers.plan import GROUP_SENDS_PER_MINUTE, RESERVED_FOR_GAMES
from handlers.text import t
from infra.fake_telegram import StoredMessage, too_many_requests
from infra.harness import GROUP, Person, people
from infra.harness.bot import Table, running_bot
from infra.harness.screens import button, buttons
from tests.support.corpus import Scene

pytestmark = pytest.mark.usefixtures("ptb_timedelta")


class Sleeps(list[float]):
    """Waits asked for (flood limits, conflict jitter): recorded, never slept."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch: pytest.MonkeyPatch) -> Sleeps:
    asked = Sleeps()
    monkeypatch.setattr(telegram_io, "deliver", functools.partial(telegram_io.deliver, sleep=asked))
    return asked


@contextmanager
def started(seed: int = 11) -> Iterator[Scene]:
    """Three players, the game dealt."""
    with running_bot(seed=seed, sleep=Sleeps()) as table:
        scene = Scene(table, people())
        scene.start()
        yield scene


def kinds(table: Table, message: StoredMessage | None) -> set[Kind]:
    assert message is not None
    found = set()
    for shown in buttons(message):
        data = shown.get("callback_data")
        if data:
            found.add(callbacks.decode(data).kind)
    return found


def table_message(scene: Scene) -> StoredMessage:
    record = scene.table.record()
    assert record.table_msg is not None
    message = scene.table.tg.message(GROUP, record.table_msg)
    assert message is not None
    return message


def group_sends(table: Table) -> list[dict[str, Any]]:
    return [c.params for c in table.tg.calls("sendMessage", chat_id=GROUP) if c.ok]


# --- a keyboard is taken away only once its replacement arrived ----------------------------------


def test_table_whose_new_message_meets_a_flood_limit_leaves_the_old_table_its_buttons() -> None:
    with started() as scene:
        table = scene.table
        person = scene.awaited()
        scene.press_play(person, {min(scene.hand(person))})
        old = table_message(scene)
        assert kinds(table, old) == {Kind.SHOUT, Kind.VOTE}
        table.tg.fail_next("sendMessage", GROUP, error=too_many_requests(30))
        table.say(scene.players[0], "/table")
        assert table.record().table_msg == old.message_id, "the new table never arrived"
        assert kinds(table, table.tg.message(GROUP, old.message_id)) == {Kind.SHOUT, Kind.VOTE}
        assert table.tg.calls("editMessageReplyMarkup", chat_id=GROUP) == []
        # Within Telegram's wait nothing new goes into the group: the table is edited instead.
        sends = len(table.tg.calls("sendMessage", chat_id=GROUP))
        table.say(scene.players[0], "/table")
        assert len(table.tg.calls("sendMessage", chat_id=GROUP)) == sends
        assert table.record().table_msg == old.message_id
        # Delivered after the wait, the new table takes over and the old one loses its buttons.
        table.clock.advance(30)
        table.say(scene.players[0], "/table")
        assert table.record().table_msg != old.message_id
        assert kinds(table, table.tg.message(GROUP, old.message_id)) == set()
        assert Kind.SHOUT in kinds(table, table_message(scene))


def test_a_final_play_whose_message_is_lost_leaves_both_buttons_on_the_table() -> None:
    with started(seed=3) as scene:
        table = scene.table
        for _ in range(80):
            game = table.game()
            if game.phase is Phase.DECIDE:
                break
            person = scene.awaited()
            hand = scene.hand(person)
            if len(hand) <= 4:
                table.tg.fail_next("sendMessage", GROUP, error=too_many_requests(30))
            scene.press_play(person, set(sorted(hand)[:4]))
        assert table.game().phase is Phase.DECIDE
        assert not any(p["text"].startswith("Final play") for p in group_sends(table))
        assert {Kind.SHOUT, Kind.STAND} <= kinds(table, table_message(scene))


# --- every group message counts against the group's minute ---------------------------------------


def test_command_replies_count_against_the_groups_minute_and_go_first() -> None:
    with started() as scene:
        table = scene.table
        opener = scene.players[0]
        sent = len(group_sends(table))
        for _ in range(GROUP_SENDS_PER_MINUTE):
            table.say(opener, "/help")
        assert table.tg.max_messages_per_minute(GROUP) <= GROUP_SENDS_PER_MINUTE
        answered = len(group_sends(table)) - sent
        # The table's first message counted too; the minute's last messages are the game's.
        assert answered == GROUP_SENDS_PER_MINUTE - RESERVED_FOR_GAMES - sent
        record = table.record()
        assert len(record.sends) == GROUP_SENDS_PER_MINUTE - RESERVED_FOR_GAMES
        # Replies have no room left: /rules gets no reply and writes nothing; /table edits the
        # table in place instead of sending a new one.
        version = record.version
        table.say(opener, "/rules")
        table.say(opener, "/table")
        assert len(group_sends(table)) == sent + answered
        assert table.record().version == version
        assert table.record().table_msg == record.table_msg
        # A challenge now: its message takes the room kept for the game.
        person = scene.awaited()
        scene.press_play(person, {min(scene.hand(person))})
        scene.shout(next(p for p in scene.players if p != person))
        assert table.game().last is None, "the challenge was settled"
        assert len(group_sends(table)) == sent + answered + 1
        assert group_sends(table)[-1]["text"].startswith(t("en", "challenge_title"))
        assert scene.table_screen() == scene.current_table()
        # A minute later the group hears replies again.
        table.clock.advance(61)
        table.say(opener, "/rules")
        assert len(group_sends(table)) == sent + answered + 2


def test_rules_spammed_by_a_non_player_leave_the_next_challenge_its_message() -> None:
    with started() as scene:
        table = scene.table
        idler = Person(999, "Idle", "en")
        for _ in range(18):
            table.say(idler, "/rules")
        sent = len(group_sends(table))
        person = scene.awaited()
        scene.press_play(person, {min(scene.hand(person))})
        scene.shout(next(p for p in scene.players if p != person))
        assert len(group_sends(table)) == sent + 1, "the challenge was told in the group"
        assert group_sends(table)[-1]["text"].startswith(t("en", "challenge_title"))
        assert table.record().undelivered() == [], "nothing is owed"
        assert table.tg.max_messages_per_minute(GROUP) <= GROUP_SENDS_PER_MINUTE


def test_a_refused_command_is_answered_once_however_often_telegram_delivers_it() -> None:
    with started() as scene:
        table = scene.table
        stop = table.updates.message(scene.players[1], "/stop", GROUP)
        sent = len(group_sends(table))
        for _ in range(3):
            table.post(stop)
        assert len(group_sends(table)) == sent + 1
        assert table.game().phase is Phase.PLAY


# --- a commit whose answer was lost --------------------------------------------------------------


def conditional_failed(scene: Scene) -> Exception:
    error: Exception = scene.client.client.exceptions.ConditionalCheckFailedException(
        {"Error": {"Code": "ConditionalCheckFailedException", "Message": "failed"}},
        "UpdateItem",
    )
    return error


def answer_lost_then_retried(scene: Scene) -> Callable[[Any, dict[str, Any]], Any]:
    """The write reaches the table, its answer is lost, and the client's own retry (botocore
    retries a 500 or a throttle) meets the version check."""

    def call(real: Any, kwargs: dict[str, Any]) -> Any:
        real(**kwargs)
        raise conditional_failed(scene)

    return call


def outcomes(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    return [
        json.loads(r.getMessage())
        for r in caplog.records
        if r.name == "menteur.webhook.outcome" and r.getMessage().startswith("{")
    ]


def test_a_write_whose_answer_was_lost_is_recognised_and_its_moments_announced(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="menteur.webhook")
    with started() as scene:
        table = scene.table
        person = scene.awaited()
        scene.press_play(person, {min(scene.hand(person))})
        version = table.record().version
        challenges = len([p for p in group_sends(table) if p["text"].startswith("Challenge")])
        scene.client.fail("update_item", answer_lost_then_retried(scene))
        caplog.clear()
        shouter = next(p for p in scene.players if p != person)
        response = table.post(scene.liar(shouter))
        assert response.status == 200 and response.text is None
        assert table.record().version == version + 1, "written once"
        assert table.game().last is None, "the challenge was settled"
        said = [p for p in group_sends(table) if p["text"].startswith("Challenge")]
        assert len(said) == challenges + 1, "the challenge was announced"
        (outcome,) = outcomes(caplog)
        assert (outcome["outcome"], outcome["conflicts"]) == ("applied", 0)
        assert scene.table_screen() == scene.current_table()


def at_a_final_play(scene: Scene) -> None:
    table = scene.table
    for _ in range(80):
        if table.game().phase is Phase.DECIDE:
            return
        person = scene.awaited()
        scene.press_play(person, set(sorted(scene.hand(person))[:4]))
    raise AssertionError("no final play")


def let_it_stand(scene: Scene) -> dict[str, Any]:
    table = scene.table
    record = table.record()
    assert record.final_msg is not None and record.game is not None
    final = table.tg.message(GROUP, record.final_msg)
    assert final is not None
    data = button(final, Kind.STAND)
    assert data is not None
    decider = scene.by_id(record.game.awaited)
    return scene.press_update(decider, GROUP, final.message_id, data)


@pytest.mark.parametrize("lost", ["retried by the client", "500, retried by Telegram"])
def test_after_a_lost_answer_no_message_keeps_liar_or_let_it_stand_once_the_game_ended(
    lost: str,
) -> None:
    with started(seed=3) as scene:
        table = scene.table
        at_a_final_play(scene)
        record = table.record()
        assert {Kind.SHOUT, Kind.STAND} <= kinds(
            table, table.tg.message(GROUP, record.final_msg or 0)
        )
        stand = let_it_stand(scene)
        if lost == "retried by the client":
            scene.client.fail("update_item", answer_lost_then_retried(scene))
            assert table.post(stand).status == 200
        else:

            def committed_then_lost(real: Any, kwargs: dict[str, Any]) -> Any:
                real(**kwargs)
                raise ClientError({"Error": {"Code": "InternalServerError", "Message": "x"}}, "x")

            scene.client.fail("update_item", committed_then_lost)
            assert table.post(stand).status == 500
            assert table.post(stand).status == 200  # Telegram's retry: a duplicate
        assert table.game().phase is Phase.OVER
        for message in table.tg.chat_messages(GROUP):
            assert not kinds(table, message) & {Kind.SHOUT, Kind.STAND}, message.text
        assert scene.table_screen() == scene.current_table()
        if lost == "retried by the client":
            assert any("wins!" in p["text"] for p in group_sends(table)), "the end was announced"


# --- a flood limit longer than a handler waits: the timer redraws ---------------------------------


def screens_converged(scene: Scene) -> bool:
    """The table and every hand read as drawn from the stored game now."""
    table = scene.table
    record = table.record()
    game = record.game
    assert game is not None
    if scene.table_screen() != scene.current_table():
        return False
    now = table.clock.now
    for person in scene.players:
        message = table.tg.message(person.id, record.hand_msgs.get(person.id, 0))
        drawn = plan.hand_screen(record, game, person.id, now)
        data = [b.data for row in drawn.buttons for b in row]
        if message is None or message.text != drawn.text:
            return False
        if [b.get("callback_data") for b in buttons(message)] != data:
            return False
    return True


def test_screens_a_long_flood_limit_left_stale_are_redrawn_once_by_the_timer() -> None:
    with started() as scene:
        table = scene.table
        # Three moves in a row meet 429s (table edits, a hand): nothing is waited out.
        for retry_after in (20, 30, 25):
            table.tg.fail_next("editMessageText", GROUP, error=too_many_requests(retry_after))
            person = scene.awaited()
            table.tg.fail_next("editMessageText", person.id, error=too_many_requests(retry_after))
            scene.press_play(person, {min(scene.hand(person))})
        assert not screens_converged(scene)
        record = table.record()
        owed = record.owed
        assert owed is not None and abs(owed - (table.clock.now + 30)) < 0.01, "the longest wait"
        assert record.next_look == owed, "the sweep finds it"
        timers = [at for chat, at in table.timers.scheduled if chat == GROUP]
        assert any(abs(at - owed) < 0.01 for at in timers), "an SQS timer too"
        version, calls = record.version, len(table.tg.calls())
        table.clock.advance(29)
        table.sweep()
        assert table.record().version == version, "not before Telegram's wait"
        table.clock.advance(1.5)
        table.sweep()
        table.sweep()  # the SQS timer and the sweep both fire: one redraw
        after = table.record()
        assert after.owed is None and after.version == version + 1
        assert after.next_look is not None and after.next_look > table.clock.now, (
            "the game's own timer"
        )
        assert screens_converged(scene)
        redraw = table.tg.calls()[calls:]
        assert len(redraw) <= 1 + len(scene.players), "the table and each hand, once"


def test_an_end_whose_table_edit_met_a_flood_limit_is_redrawn_without_buttons() -> None:
    with started(seed=3) as scene:
        table = scene.table
        at_a_final_play(scene)
        flood = table.tg.fail_always("editMessageText", GROUP, error=too_many_requests(40))
        table.post(let_it_stand(scene))
        assert table.game().phase is Phase.OVER
        assert {Kind.SHOUT, Kind.STAND} <= kinds(table, table_message(scene)), "stale for now"
        assert table.record().owed is not None
        table.tg.remove_rule(flood)
        table.clock.advance(41)
        table.sweep()
        assert kinds(table, table_message(scene)) == set()
        assert scene.table_screen() == scene.current_table()
        record = table.record()
        assert record.owed is None and record.next_look is None, "nothing left for the timer"


def test_an_end_given_up_on_a_429_is_sent_once_telegrams_wait_is_over() -> None:
    with started() as scene:
        table = scene.table
        table.tg.fail_next("sendMessage", GROUP, error=too_many_requests(30))
        table.say(scene.players[0], "/stop")
        assert table.game().phase is Phase.OVER
        title = t("en", "title_stopped")

        def ends() -> list[dict[str, Any]]:
            return [p for p in group_sends(table) if p["text"].startswith(title)]

        assert ends() == [], "Telegram refused it"
        assert len(table.record().undelivered()) == 1, "the end is owed"
        # Within the wait, a command's reply does not go in, nor does the end.
        table.clock.advance(10)
        table.say(scene.players[1], "/rules")
        table.sweep()
        assert ends() == []
        table.clock.advance(20)
        table.sweep()
        assert len(ends()) == 1, "sent when Telegram's wait is over"
        assert table.record().undelivered() == []
        for _ in range(3):
            table.clock.advance(30)
            table.sweep()
            table.say(scene.players[1], "/rules")
        assert len(ends()) == 1, "and never again"


# --- a long wait, or a flood of challenges: the outbox stays bounded, no moment is lost ----------


def lie(scene: Scene) -> bool:
    """The awaited player plays a card that is not the expected rank (whether they could: a
    hand of nothing but the expected rank plays truly)."""
    person = scene.awaited()
    rank = scene.table.game().rank
    lies = sorted(c for c in scene.hand(person) if rank_of(c) != rank)
    scene.press_play(person, {lies[0] if lies else min(scene.hand(person))})
    scene.table.clock.advance(1)
    return bool(lies)


def shout(scene: Scene) -> bool:
    """The next player shouts Liar! at the lie (rightly: the liar picks up, the bullet comes
    back); whether it was a challenge."""
    assert scene.shout(scene.awaited()).status == 200
    scene.table.clock.advance(1)
    return scene.table.game().last is None


def lie_and_shout(scene: Scene) -> bool:
    return lie(scene) and shout(scene)


def challenge_texts(table: Table) -> list[str]:
    return [str(p["text"]) for p in group_sends(table) if p["text"].startswith("Challenge")]


def a_mark_write(kwargs: dict[str, Any]) -> bool:
    """Whether an UpdateItem is a write of sent marks, and not the action's own write."""
    names = kwargs.get("ExpressionAttributeNames", {}).values()
    commit = "ver" in names or "ver = " in kwargs["UpdateExpression"]
    values = kwargs.get("ExpressionAttributeValues", {}).values()
    return not commit and any("BOOL" in v for v in values)


def test_a_challenge_made_after_a_long_wait_is_announced_whatever_came_before() -> None:
    """Telegram makes the group wait 120 s; 18 challenges are made meanwhile, owed (all the
    outbox holds); the next play sends what the minute allows; the challenge at that play has
    its mark write throttled once.
    That challenge is still announced, the minute is never exceeded, and nothing stays owed
    (a stamp given to one write's moments was once given again to the next write's, which then
    read as sent and was dropped unsent)."""
    with started() as scene:
        table = scene.table
        table.tg.fail_next("sendMessage", GROUP, error=too_many_requests(120))
        begun, made = table.clock.now, 0
        while made < 18:
            made += lie_and_shout(scene)
        assert table.clock.now - begun < 120, "all within Telegram's wait"
        assert len(table.record().undelivered()) >= outbox.MOST_HELD, "owed, none sent"
        table.clock.advance(120)
        while not lie(scene):  # the wait is over: this play sends the moments owed
            pass
        throttle = ClientError(
            {"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "slow"}},
            "UpdateItem",
        )

        def throttle_the_marks(real: Any, kwargs: dict[str, Any]) -> Any:
            if not a_mark_write(kwargs):
                scene.client.fail("update_item", throttle_the_marks)  # not this one: the next
                return real(**kwargs)
            raise throttle

        scene.client.fail("update_item", throttle_the_marks)
        assert shout(scene), "the next challenge, at that play"
        scene.client.faults.pop("update_item", None)
        record = table.record()
        newest = max(
            (p for p in record.outbox if isinstance(p.events[-1], ev.Challenged)),
            key=lambda p: p.stamp,
        )
        assert record.game is not None
        told = outbox.screen(newest, record.game, record.place, record.lang, table.clock.now)
        for _ in range(12):  # the timer, for a few minutes
            table.clock.advance(31)
            table.sweep()
        assert told.text in challenge_texts(table), "the newest challenge was announced"
        assert table.record().undelivered() == [], "nothing is owed any more"
        assert table.tg.max_messages_per_minute(GROUP) <= GROUP_SENDS_PER_MINUTE


def test_a_backlog_of_hundreds_of_moments_stays_within_dynamodbs_limits() -> None:
    """An outbox of 250 owed challenges (two players making them faster than the group may be
    told, for long): the write that takes them must mark them within DynamoDB's 4 KB update
    expression (the store's client refuses more, as DynamoDB does), else every mark fails and
    the same first messages go out again every half minute. None is sent twice; the outbox
    ends empty, its oldest challenges folded away rather than told."""
    with started() as scene:
        table = scene.table
        record = table.record()
        game = record.game
        assert game is not None
        a, b = game.ids[:2]
        at = int(table.clock.now) - 60  # their writer is long gone: anyone's to send
        record.outbox = [
            Parcel(
                i,
                None,
                at,
                (ev.Challenged(a, b, 1, 3, 1 << (i % 52) | 1 << (i // 52), True, b, 1, False, a),),
            )
            for i in range(1, 251)
        ]
        scene.client.client.put_item(
            TableName=table.rt.settings.table_name,
            Item={
                "pk": {"S": f"chat#{GROUP}"},
                "ver": {"N": "100"},  # after many writes: their stamps are behind it
                "doc": {"S": record.document()},
                "gn": {"N": str(record.game_id)},
                "hm": {"M": {str(p): {"N": str(m)} for p, m in record.hand_msgs.items()}},
                "tm": {"N": str(record.table_msg)},
            },
        )
        person = scene.awaited()
        scene.press_play(person, {min(scene.hand(person))})
        for _ in range(20):  # the timer, for ten minutes
            table.clock.advance(31)
            table.sweep()
        told = challenge_texts(table)
        assert told, "the backlog is told, what of it the minutes allow"
        assert len(told) == len(set(told)), "no challenge is told twice"
        assert table.record().undelivered() == [], "nothing is owed any more"
        assert table.tg.max_messages_per_minute(GROUP) <= GROUP_SENDS_PER_MINUTE


# --- a lobby waits its turn: the group's minute is kept for the games played -------------------


def test_a_new_games_first_table_waits_out_telegrams_wait_like_any_message() -> None:
    with started() as scene:
        table = scene.table
        opener = scene.players[0]
        table.tg.fail_next("sendMessage", GROUP, error=too_many_requests(30))
        table.say(opener, "/stop")  # its end meets a 429: the group must wait 30 s
        sends = len(group_sends(table))
        table.say(opener, "/newgame")
        game = table.game()
        assert game.phase is Phase.LOBBY
        assert len(group_sends(table)) == sends, "nothing new goes in while Telegram waits"
        assert table.record().table_msg is None
        table.clock.advance(10)
        table.sweep()
        assert table.record().table_msg is None, "not before the wait is over"
        table.clock.advance(21)
        table.sweep()
        assert table.record().table_msg is not None, "the table, once Telegram's wait is over"
        assert group_sends(table)[-1]["text"] == table.table_message().text


def test_newgame_again_and_again_is_refused_in_a_word_after_a_few_a_minute() -> None:
    with running_bot() as table:
        (ann,) = people(1)
        for _ in range(NEW_GAMES_PER_MINUTE):
            table.say(ann, "/newgame")
            assert table.game().phase is Phase.LOBBY
            table.say(ann, "/stop")
            table.clock.advance(1)
        table.say(ann, "/newgame")
        assert group_sends(table)[-1]["text"] == t("en", "newgame_too_often")
        assert table.game().phase is Phase.OVER, "no new lobby"
        table.clock.advance(60)
        table.say(ann, "/newgame")
        assert table.game().phase is Phase.LOBBY, "a minute later, a new game"
