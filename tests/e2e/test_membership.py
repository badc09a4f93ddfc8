"""The bot's own membership: removed from a group, or its right to send there taken, every game
of the group (each forum topic's too) ends at once, its timers do nothing, and nothing more is
sent into the group."""

from __future__ import annotations

from typing import Any

import pytest

from engine import Phase
from infra.fake_telegram import api_error, my_chat_member_update, too_many_requests
from infra.harness import GROUP
from infra.harness.bot import running_bot
from tests.support.forum import ANN, BOB, CHLOE, Forum

pytestmark = pytest.mark.usefixtures("ptb_timedelta")


def membership(forum: Forum, status: str, **rights: bool) -> dict[str, Any]:
    """The bot's membership in the forum changed; each call a new update, with an id of its own."""
    ids = forum.table.updates
    update = my_chat_member_update(GROUP, status, by=ANN.id, rights=rights, update_id=ids.next_id())
    update["my_chat_member"]["chat"]["is_forum"] = True
    return update


def assert_all_ended(forum: Forum, topics: list[int | None]) -> None:
    for topic in topics:
        record = forum.record(topic)
        assert record.game is not None and record.game.phase is Phase.OVER, topic
        assert record.game.winner is None and record.next_look is None and record.owed is None, (
            topic
        )


@pytest.mark.parametrize(
    ("status", "rights"),
    [
        ("left", {}),  # removed
        ("kicked", {}),  # removed and banned
        ("restricted", {"can_send_messages": False}),  # muted
        ("restricted", {"is_member": False}),  # restricted after leaving
    ],
    ids=["left", "kicked", "muted", "restricted-away"],
)
def test_every_game_of_a_group_the_bot_can_no_longer_write_to_ends_at_once(
    status: str, rights: dict[str, bool]
) -> None:
    with running_bot(seed=4) as table:
        forum = Forum(table)
        first, second = forum.tg.open_topic(GROUP), forum.tg.open_topic(GROUP)
        forum.open(first, [ANN, BOB])
        forum.open(second, [BOB, CHLOE])
        forum.open(None, [ANN, CHLOE])
        forum.play_one(first)
        # A redraw owed in one topic must not be tried once the bot is out.
        forum.tg.fail_next("editMessageText", GROUP, error=too_many_requests(30))
        forum.play_one(second)
        assert forum.record(second).owed is not None
        calls = len(forum.tg.calls(chat_id=GROUP))
        assert forum.post(membership(forum, status, **rights)).status == 200
        assert_all_ended(forum, [first, second, None])
        for person in (ANN, BOB, CHLOE):
            hands = [m.text for m in forum.tg.chat_messages(person.id)]
            assert any(t and t.endswith("Game stopped — no winner.") for t in hands), person
        table.clock.advance(3600)
        table.sweep()
        assert forum.tg.calls(chat_id=GROUP)[calls:] == [], "nothing is sent into the group"
        # Telegram delivering the update again changes nothing.
        versions = [forum.record(t).version for t in (first, second, None)]
        forum.post(membership(forum, status, **rights))
        assert [forum.record(t).version for t in (first, second, None)] == versions


@pytest.mark.parametrize(
    ("status", "rights"),
    [("member", {}), ("administrator", {}), ("restricted", {"can_send_polls": False})],
    ids=["member", "admin", "restricted-but-may-send"],
)
def test_a_membership_change_that_leaves_the_bot_its_voice_changes_nothing(
    status: str, rights: dict[str, bool]
) -> None:
    with running_bot(seed=4) as table:
        forum = Forum(table)
        forum.open(None, [ANN, BOB])
        version = forum.record(None).version
        forum.post(membership(forum, status, **rights))
        record = forum.record(None)
        assert record.version == version and record.game is not None
        assert record.game.phase is Phase.PLAY


def test_a_group_that_answers_403_ends_its_game_even_unheard() -> None:
    with running_bot(seed=4) as table:
        forum = Forum(table)
        forum.open(None, [ANN, BOB])
        forum.tg.fail_always(
            None, GROUP, error=api_error(403, "Forbidden: bot was kicked from the supergroup chat")
        )
        forum.play_one(None)
        assert_all_ended(forum, [None])
        refused = [c for c in forum.tg.calls(chat_id=GROUP) if not c.ok]
        assert len(refused) == 1, "one refusal, then nothing more is tried"


def test_a_lobby_ended_by_the_bots_removal_sends_no_hand_to_its_members() -> None:
    """Nobody in a lobby was dealt a hand: its end writes nothing into their private chats
    (no "Your hand · 0 cards")."""
    with running_bot(seed=4) as table:
        forum = Forum(table)
        lobby = forum.tg.open_topic(GROUP)
        forum.say(ANN, "/newgame", lobby)
        for person in (ANN, BOB):
            forum.join(person, lobby)
        private = {p: len(forum.tg.chat_messages(p.id)) for p in (ANN, BOB)}
        assert forum.post(membership(forum, "kicked")).status == 200
        assert_all_ended(forum, [lobby])
        assert {p: len(forum.tg.chat_messages(p.id)) for p in (ANN, BOB)} == private
