"""The timers: the 45-second let-it-stand, computer players, idle games — on an injected clock."""

from __future__ import annotations

import boto3
import pytest

from engine import Phase
from handlers import timer
from handlers.callbacks import Kind
from handlers.runtime import SqsTimers
from infra.harness import GROUP, Person, by_id, people
from infra.harness.bot import Table, Watcher, open_and_start, play_to_a_final_play, running_bot
from infra.harness.stack import Stack
from infra.harness.updates import timer_event


def at_a_final_play(table: Table, players: list[Person]) -> tuple[Person, Person, float]:
    open_and_start(table, players)
    finisher = play_to_a_final_play(table, players, Watcher(table, players))
    game = table.game()
    assert game.deadline is not None
    return finisher, by_id(players, game.awaited), game.deadline


def test_a_shout_committed_before_the_deadline_wins_over_the_timer() -> None:
    players = people()
    with running_bot(seed=3) as table:
        finisher, decider, deadline = at_a_final_play(table, players)
        other = next(p for p in players if p not in (finisher, decider))
        table.clock.advance(deadline - table.clock.now - 0.01)
        table.press_button(other, table.group_message_with(Kind.STAND), Kind.SHOUT)
        after_shout = table.record()
        table.clock.advance(1)
        table.sweep()
        assert table.record().version == after_shout.version, "the stale timer changed nothing"
        challenge = table.tg.calls("sendMessage", chat_id=GROUP)[-2:]
        assert any(other.name in c.params["text"] for c in challenge)


def test_a_press_after_the_deadline_is_judged_as_let_stand() -> None:
    players = people()
    with running_bot(seed=3) as table:
        finisher, decider, deadline = at_a_final_play(table, players)
        table.clock.advance(deadline - table.clock.now + 5)  # the timer is late or lost
        table.press_button(decider, table.group_message_with(Kind.STAND), Kind.SHOUT)
        game = table.game()
        assert game.phase is Phase.OVER and game.winner is not None
        assert game.ids[game.winner] == finisher.id
        answer = table.tg.calls("answerCallbackQuery")[-1].params.get("text", "")
        assert answer, "the late shout is refused with a reason"


def test_the_sqs_client_is_made_for_the_first_timer_not_at_start_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[str] = []
    sent: list[dict[str, object]] = []

    class Sqs:
        def send_message(self, **message: object) -> None:
            sent.append(message)

    def client(name: str) -> Sqs:
        made.append(name)
        return Sqs()

    monkeypatch.setattr(boto3, "client", client)
    with Stack(store="memory") as stack:
        timers = stack.container(timer_queue_url="https://sqs.example/q").rt.app.service.timers
        assert isinstance(timers, SqsTimers) and made == []
        timers.schedule(7, 145.0, 100.0)
        timers.schedule(7, 150.0, 100.0)
        assert made == ["sqs"]
        assert [m["DelaySeconds"] for m in sent] == [45, 50]
        assert sent[0]["QueueUrl"] == "https://sqs.example/q"


def test_a_mark_kept_to_the_millisecond_costs_no_second_more() -> None:
    sent: list[dict[str, object]] = []

    class Sqs:
        def send_message(self, **message: object) -> None:
            sent.append(message)

    timers = SqsTimers(Sqs(), "https://sqs.example/q")
    now = 1_764_400_000.1237  # a time of the wall clock, which `due` rounds up
    mark = round((now + 45) * 1000) / 1000  # as `due` keeps it
    timers.schedule(7, mark, now)
    timers.schedule(7, now + 45.002, now)  # two milliseconds over: the next second
    timers.schedule(7, now - 3, now)  # overdue: at once
    assert [m["DelaySeconds"] for m in sent] == [45, 46, 0]


def test_the_timer_message_is_a_45_second_sqs_delay_and_fires_through_the_timer_lambda(
    aws_env: None,
) -> None:
    players = people()
    sent: list[dict[str, object]] = []

    class Spy(SqsTimers):
        def schedule(self, chat: int, at: float, now: float, topic: int | None = None) -> None:
            sent.append({"chat": chat, "delay": round(at - now, 3)})
            super().schedule(chat, at, now, topic)

    url = "https://sqs.us-east-1.amazonaws.com/123456789012/timers"  # moto's, for "timers"
    with running_bot(seed=3, timers=Spy(None, url)) as table:
        sqs = boto3.client("sqs", region_name="us-east-1")
        queue = sqs.create_queue(QueueName="timers")["QueueUrl"]
        assert queue == url
        finisher, _, deadline = at_a_final_play(table, players)
        assert sent[-1] == {"chat": GROUP, "delay": 45.0}
        attributes = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["All"])
        assert int(attributes["Attributes"]["ApproximateNumberOfMessagesDelayed"]) >= 1
        table.clock.advance(45)
        # The second message is dropped, not retried forever.
        event = timer_event({"chat": GROUP, "at": deadline}, "not json")
        assert timer.handle(event, table.rt) == {"batchItemFailures": []}
        game = table.game()
        assert game.phase is Phase.OVER and game.winner is not None
        assert game.ids[game.winner] == finisher.id
        # Announced at the mark: in simulated time, the delay from the deadline is zero.
        assert table.clock.now - deadline == 0


def test_computer_players_move_after_their_delay_through_the_same_path() -> None:
    ann = Person(101, "Ann")
    with running_bot(seed=5) as table:
        table.say(ann, "/newgame")
        table.join(ann)
        table.say(ann, "/addbot")
        table.say(ann, "/addbot")
        game = table.game()
        assert len(game.ids) == 3 and sum(p < 0 for p in game.ids) == 2
        table.press_button(ann, table.group_message_with(Kind.START), Kind.START)
        steps = 0
        while table.game().phase is not Phase.OVER and steps < 2000:
            steps += 1
            game, record = table.game(), table.record()
            if game.awaited == ann.id and game.phase is Phase.PLAY:
                table.play(ann, set(sorted(table.hand(ann))[:1]))
                continue
            if game.awaited == ann.id and game.phase is Phase.DECIDE:
                table.press_button(ann, table.group_message_with(Kind.STAND), Kind.STAND)
                continue
            assert record.next_look is not None
            version = record.version
            table.clock.advance(max(0.0, record.next_look - table.clock.now - 0.5))
            table.sweep()
            assert table.record().version == version, "a computer waits its delay"
            table.clock.advance(0.5)
            table.sweep()
            assert table.record().version == version + 1, "then it acts, once"
        assert table.game().phase is Phase.OVER
        robots = [c.params["text"] for c in table.tg.calls("editMessageText", chat_id=GROUP)]
        assert any("Robot" in text for text in robots)


def test_an_idle_game_ends_and_the_group_is_told() -> None:
    players = people()
    with running_bot(seed=3) as table:
        open_and_start(table, players, "/newgame off")  # with a clock, the table plays on
        updated = table.game().updated
        due = table.record().next_look
        assert due is not None and 0 <= due - (updated + 24 * 3600) < 3600, "within the hour"
        assert due % 3600 == 0, "on the hour: moves within the hour leave the index alone"
        table.clock.advance(24 * 3600 - 1)
        table.sweep()
        assert table.game().phase is Phase.PLAY
        table.clock.now = due
        sends = len(table.tg.calls("sendMessage", chat_id=GROUP))
        table.sweep()
        game = table.game()
        assert game.phase is Phase.OVER and game.stopped and game.updated == due
        assert len(table.tg.calls("sendMessage", chat_id=GROUP)) == sends + 1
        assert table.record().next_look is None, "nothing left to time"


def test_a_timer_that_cannot_be_set_loses_nothing_of_the_committed_move(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """SQS failing after the commit: the final play is still announced (not a 500, whose retry
    would be a duplicate sending nothing new), and the minute sweep ends it at the deadline."""
    players = people()

    class Failing:
        def schedule(self, chat: int, at: float, now: float, topic: int | None = None) -> None:
            raise ConnectionError("queue unreachable")

    with running_bot(seed=3, timers=Failing()) as table:
        finisher, decider, deadline = at_a_final_play(table, players)
        final = table.group_message_with(Kind.STAND)
        assert decider.name in (final.text or ""), "the final play was announced"
        assert "could not set a timer" in caplog.text
        table.clock.advance(deadline - table.clock.now)
        table.sweep()
        game = table.game()
        assert game.phase is Phase.OVER and game.winner is not None
        assert game.ids[game.winner] == finisher.id


def test_an_idle_lobby_ends_through_the_timer() -> None:
    ann = Person(101, "Ann")
    with running_bot(seed=3) as table:
        table.say(ann, "/newgame")
        table.join(ann)
        due = table.record().next_look
        assert due is not None and table.game().phase is Phase.LOBBY
        table.clock.now = due
        table.sweep()
        game = table.game()
        assert game.phase is Phase.OVER and game.stopped
