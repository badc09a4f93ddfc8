"""Forum topics: in a supergroup with topics, each topic (the General topic too) has its game,
every message of a game goes to its topic, buttons act on their topic's game, and a topic closed
or deleted while a game runs ends that game without a storm of retries."""

from __future__ import annotations

from engine import Phase
from handlers import callbacks
from handlers.callbacks import Kind
from handlers.store import Change, Conflict
from handlers.text import t
from infra.fake_telegram import my_chat_member_update, topic_closed_update
from infra.harness import GROUP, Person
from infra.harness.bot import running_bot
from infra.harness.screens import button
from tests.support.forum import ANN, BOB, CHLOE, Forum


def test_each_topic_has_its_game_and_every_message_of_a_game_goes_to_its_topic() -> None:
    with running_bot(seed=4) as table:
        forum = Forum(table)
        first, second = forum.tg.open_topic(GROUP), forum.tg.open_topic(GROUP)
        forum.open(first, [ANN, BOB])
        forum.open(second, [BOB, CHLOE])
        forum.open(None, [ANN, CHLOE])  # the General topic is a topic like the others
        records = {topic: forum.record(topic) for topic in (first, second, None)}
        ids = {r.game_id for r in records.values()}
        assert len(ids) == 3 and 0 not in ids, "three games, one per topic"
        # A play in the first topic's game, from a private hand: only that game moves.
        versions = {topic: r.version for topic, r in records.items()}
        forum.play_one(first)
        assert forum.record(first).version == versions[first] + 1
        assert forum.record(second).version == versions[second]
        assert forum.record(None).version == versions[None]
        # Liar! from the first topic's table.
        game = forum.record(first).game
        assert game is not None and game.last is not None
        shouter = ANN if game.ids[game.last.seat] == BOB.id else BOB
        forum.press_kind(shouter, forum.table_message(first), Kind.SHOUT)
        after = forum.record(first).game
        assert after is not None and after.last is None, "the challenge was settled"
        # Commands answer in their topic; each game's messages stay in its own.
        forum.say(CHLOE, "/rules", second)
        forum.say(ANN, "/table", None)
        sends = forum.group_sends()
        assert sends[-2].get("message_thread_id") == second
        assert "message_thread_id" not in sends[-1], "General: no thread id"
        for topic in (first, second, None):
            texts = [m.text for m in forum.tg.topic_messages(GROUP, topic)]
            assert any(t and t.startswith("Menteur") for t in texts), topic
            table_msg = forum.record(topic).table_msg
            assert forum.tg.message(GROUP, table_msg or 0).thread == topic  # type: ignore[union-attr]
        challenge = [
            m for m in forum.tg.chat_messages(GROUP) if (m.text or "").startswith("Challenge")
        ]
        assert [m.thread for m in challenge] == [first]
        # One game at a time per topic: /newgame in a topic with a running game is refused there.
        running = forum.record(second).game_id
        forum.say(BOB, "/newgame", second)
        assert forum.group_sends()[-1].get("message_thread_id") == second
        assert forum.record(second).game_id == running


def test_a_button_from_one_topic_cannot_act_on_another_topics_game() -> None:
    with running_bot(seed=4) as table:
        forum = Forum(table)
        first, second = forum.tg.open_topic(GROUP), forum.tg.open_topic(GROUP)
        forum.open(first, [ANN, BOB])
        forum.say(CHLOE, "/newgame", second)
        message = forum.table_message(second)
        join = button(message, Kind.JOIN)
        assert join is not None
        forged = callbacks.encode(
            callbacks.Press(Kind.JOIN, GROUP, callbacks.decode(join).game, topic=first)
        )
        response = forum.press(CHLOE, message, forged)  # pressed in the second topic
        assert response.text, "refused"


def test_timers_name_the_topic_and_fire_on_its_game() -> None:
    with running_bot(seed=4) as table:
        forum = Forum(table)
        topic = forum.tg.open_topic(GROUP)
        forum.say(ANN, "/newgame", topic)
        forum.join(ANN, topic)
        forum.say(ANN, "/addbot", topic)
        forum.press_kind(ANN, forum.table_message(topic), Kind.START)
        assert table.timers.topics[-1] == topic
        record = forum.record(topic)
        assert record.next_look is not None
        for _ in range(30):  # the computer player moves at its time, through the sweep
            game = forum.record(topic).game
            assert game is not None
            if game.phase is Phase.OVER or game.awaited == ANN.id:
                break
            due = forum.record(topic).next_look
            assert due is not None
            table.clock.advance(max(0.0, due - table.clock.now) + 0.01)
            table.sweep()
        game = forum.record(topic).game
        assert game is not None and game.plays >= 1, "the computer played in the topic's game"
        assert all(
            c.params.get("message_thread_id") == topic
            for c in forum.tg.calls("sendMessage", chat_id=GROUP)
        )


def test_a_topic_closed_while_a_game_runs_ends_that_game_only() -> None:
    with running_bot(seed=4) as table:
        forum = Forum(table)
        closed, other = forum.tg.open_topic(GROUP), forum.tg.open_topic(GROUP)
        forum.open(closed, [ANN, BOB])
        forum.open(other, [ANN, BOB])
        forum.play_one(closed)
        forum.tg.close_topic(GROUP, closed)
        sends = len(forum.group_sends())
        service = topic_closed_update(
            GROUP, ANN.id, closed, update_id=table.updates.next_id(), date=table.clock.now
        )
        assert forum.post(service).status == 200
        ended = forum.record(closed)
        assert ended.game is not None and ended.game.phase is Phase.OVER
        assert ended.game.winner is None and ended.next_look is None, (
            "no winner; nothing for the timer"
        )
        assert len(forum.group_sends()) == sends, "nothing is sent into a closed topic"
        for person in (ANN, BOB):
            assert forum.hand(person, closed).text.endswith("Game stopped — no winner."), person  # type: ignore[union-attr]
        running = forum.record(other).game
        assert running is not None and running.phase is Phase.PLAY
        forum.play_one(other)


def test_a_topic_deleted_while_a_game_runs_ends_it_at_the_first_refusal_without_retries() -> None:
    with running_bot(seed=4) as table:
        forum = Forum(table)
        topic = forum.tg.open_topic(GROUP)
        forum.open(topic, [ANN, BOB, CHLOE])
        forum.tg.delete_topic(GROUP, topic)
        calls = len(forum.tg.calls(chat_id=GROUP))
        forum.play_one(topic)  # the table edit fails, its fallback send meets the deleted topic
        ended = forum.record(topic).game
        assert ended is not None and ended.phase is Phase.OVER and ended.winner is None
        refused = [c for c in forum.tg.calls(chat_id=GROUP)[calls:] if not c.ok]
        assert len(refused) == 2, [c.method for c in refused]  # the edit, then the send
        calls = len(forum.tg.calls(chat_id=GROUP))
        for person in (ANN, BOB, CHLOE):
            assert forum.hand(person, topic).text.endswith("Game stopped — no winner.")  # type: ignore[union-attr]
        table.clock.advance(3600)
        table.sweep()
        assert forum.tg.calls(chat_id=GROUP)[calls:] == [], "nothing more is tried there"


def test_a_topic_closed_without_the_bot_hearing_of_it_ends_the_game_at_the_first_refusal() -> None:
    with running_bot(seed=4) as table:
        forum = Forum(table)
        topic = forum.tg.open_topic(GROUP)
        forum.open(topic, [ANN, BOB])
        forum.tg.close_topic(GROUP, topic)
        forum.say(ANN, "/rules", topic)  # the reply meets TOPIC_CLOSED
        ended = forum.record(topic).game
        assert ended is not None and ended.phase is Phase.OVER
        assert [c.ok for c in forum.tg.calls("sendMessage", chat_id=GROUP)][-1] is False


def test_a_removal_delivered_again_sends_nothing_into_the_group_that_removed_the_bot() -> None:
    """Telegram delivers the "bot removed" update again when it got no 200: the retry found its
    update id written and redrew every topic's table into the group that had removed the bot."""
    with running_bot(seed=4) as table:
        forum = Forum(table)
        first, second = forum.tg.open_topic(GROUP), forum.tg.open_topic(GROUP)
        forum.open(first, [ANN, BOB])
        forum.open(second, [BOB, CHLOE])
        forum.play_one(first)
        update = my_chat_member_update(GROUP, "left", by=ANN.id, update_id=table.updates.next_id())
        update["my_chat_member"]["chat"]["is_forum"] = True
        assert forum.post(update).status == 200
        for topic in (first, second):
            ended = forum.record(topic).game
            assert ended is not None and ended.phase is Phase.OVER, topic
        calls = len(forum.tg.calls(chat_id=GROUP))
        versions = [forum.record(topic).version for topic in (first, second)]
        for _ in range(2):
            assert forum.post(update).status == 200
        assert forum.tg.calls(chat_id=GROUP)[calls:] == [], "nothing more into the group"
        assert [forum.record(topic).version for topic in (first, second)] == versions
        for person in (ANN, BOB, CHLOE):  # each private hand still says how it ended
            hands = [m.text for m in forum.tg.chat_messages(person.id)]
            assert any(x and x.endswith("Game stopped — no winner.") for x in hands), person


def test_a_topic_game_whose_write_landed_unheard_ends_when_the_bot_is_removed() -> None:
    """The store's answer to /newgame's write is lost and its own retry meets the version
    check: the transaction finds its write landed, and keeps the new game's topic all the
    same, so removing the bot from the group ends that game too."""
    with running_bot(seed=4) as table:
        forum = Forum(table)
        topic = forum.tg.open_topic(GROUP)
        store = table.rt.store
        apply = store.apply
        lost: list[str] = []

        def commit_then_lose_the_answer(change: Change) -> None:
            apply(change)
            if not lost and "ver" in change.set:  # the action's write: stored, never heard
                lost.append(change.key)
                raise Conflict(change.key)

        store.apply = commit_then_lose_the_answer  # type: ignore[method-assign]
        assert forum.say(ANN, "/newgame", topic).status == 200
        store.apply = apply  # type: ignore[method-assign]
        assert lost, "the write's answer was lost"
        assert store.topics(GROUP) == [topic]
        update = my_chat_member_update(GROUP, "left", by=ANN.id, update_id=table.updates.next_id())
        update["my_chat_member"]["chat"]["is_forum"] = True
        assert forum.post(update).status == 200
        ended = forum.record(topic).game
        assert ended is not None and ended.phase is Phase.OVER


# --- one chat, one flood budget --------------------------------------------------------------


def test_a_forum_flooded_with_rules_loses_no_games_challenge_nor_end() -> None:
    """Three topics' games and a member spamming /rules, under Telegram's limit of 20 messages
    a minute into the chat: command replies go first, and every game's challenges and end reach
    its topic, once each, within a minute and two seconds of the flood's end."""
    with running_bot(seed=4, flood_limit=20) as table:
        forum = Forum(table)
        topics = [forum.tg.open_topic(GROUP) for _ in range(3)]
        empty = forum.tg.open_topic(GROUP)
        for topic in topics:
            forum.open(topic, [ANN, BOB])
        table.clock.advance(61)  # the games' lobbies are a minute old
        eve = Person(999, "Eve")
        for _ in range(25):
            forum.say(eve, "/rules", empty)
        for _ in range(2):
            for topic in topics:
                forum.play_one(topic)
                game = forum.record(topic).game
                assert game is not None and game.last is not None
                shouter = ANN if game.ids[game.last.seat] == BOB.id else BOB
                forum.press_kind(shouter, forum.table_message(topic), Kind.SHOUT)
                forum.say(eve, "/rules", empty)
        for topic in topics:
            forum.say(ANN, "/stop", topic)
        flood_end = table.clock.now
        while table.clock.now <= flood_end + 62:
            table.clock.advance(1)
            table.sweep()
        sent = [c for c in forum.tg.calls("sendMessage", chat_id=GROUP) if c.ok]
        for topic in topics:
            texts = [
                str(c.params["text"]) for c in sent if c.params.get("message_thread_id") == topic
            ]
            assert sum(x.startswith(t("en", "challenge_title")) for x in texts) == 2, topic
            assert sum(x.startswith(t("en", "title_stopped")) for x in texts) == 1, topic
            assert forum.record(topic).undelivered() == []
        assert forum.tg.max_messages_per_minute(GROUP) <= 20
        replies = [c for c in sent if c.params.get("message_thread_id") == empty]
        assert 0 < len(replies) < 27, "replies went first"
        assert forum.tg.limited == 0, "the chat's budget kept every send within Telegram's limit"


def test_a_lobby_churned_in_one_topic_never_holds_up_a_game_in_another() -> None:
    """A member seated nowhere opens and stops a game in one topic, fifteen times in fifteen
    seconds: /newgame is refused in a word after a few, a lobby's table and its end never take
    the minute's last messages, and a challenge made in another topic's game meanwhile is told
    at once."""
    with running_bot(seed=4, flood_limit=20) as table:
        forum = Forum(table)
        played, churned = forum.tg.open_topic(GROUP), forum.tg.open_topic(GROUP)
        forum.open(played, [ANN, BOB])
        table.clock.advance(61)  # the game's lobby is a minute old
        eve = Person(999, "Eve")
        for _ in range(15):
            forum.say(eve, "/newgame", churned)
            forum.say(eve, "/stop", churned)
            table.clock.advance(1)
        forum.play_one(played)
        game = forum.record(played).game
        assert game is not None and game.last is not None
        shouter = ANN if game.ids[game.last.seat] == BOB.id else BOB
        forum.press_kind(shouter, forum.table_message(played), Kind.SHOUT)
        sent = [c for c in forum.tg.calls("sendMessage", chat_id=GROUP) if c.ok]
        last = sent[-1].params
        assert last["message_thread_id"] == played, "the challenge went out at once"
        assert str(last["text"]).startswith(t("en", "challenge_title"))
        churn = [
            str(c.params["text"]) for c in sent if c.params.get("message_thread_id") == churned
        ]
        assert t("en", "newgame_too_often") in churn
        assert forum.tg.max_messages_per_minute(GROUP) <= 20 and forum.tg.limited == 0
