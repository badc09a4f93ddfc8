"""Under abuse, through the webhook: presses the record alone refuses cost no question to
Telegram, and a person is asked about once in a while; deep links say nothing of which chats
have games; a player banned from the group is refused their moves; an admin's /kick puts a
player out (R19)."""

from __future__ import annotations

from typing import Any

from engine import Phase, mask_of
from handlers import callbacks
from handlers.callbacks import Kind, Place
from handlers.questions import KEPT
from handlers.text import t
from infra.fake_telegram import user_json
from infra.harness import GROUP, OTHER_GROUP, Person
from infra.harness.bot import Table, open_and_start, running_bot
from infra.harness.screens import button

ANN, BOB, CHLOE = Person(101, "Ann"), Person(102, "Bob"), Person(103, "Chloé", "fr")
ADA = Person(104, "Ada")  # an administrator of the group, at no table
QUESTIONS = ("getChatMember", "sendChatAction")


def asked(table: Table) -> int:
    return sum(len(table.tg.calls(method)) for method in QUESTIONS)


def answer(table: Table) -> str | None:
    text = table.tg.calls("answerCallbackQuery")[-1].params.get("text")
    return None if text is None else str(text)


def known(table: Table, *people: Person) -> None:
    """People who started the bot once: Join seats them at one tap."""
    for person in people:
        table.say(person, "/help", person.id)


def test_join_and_play_again_ask_telegram_only_when_the_record_leaves_a_seat_open() -> None:
    with running_bot(seed=3) as table:
        known(table, ANN, BOB)
        table.say(ANN, "/newgame")
        before = asked(table)
        table.join(ANN)
        assert asked(table) - before == 2, "a new person: may the bot write, are they in"
        first = table.record().game_id
        join = table.group_message_with(Kind.JOIN)
        before = asked(table)
        for _ in range(20):
            assert table.press_button(ANN, join, Kind.JOIN).status == 200
        assert answer(table) == t("en", "refusal_already_joined")
        assert asked(table) == before, "seated already: nothing to ask"
        # Left and back within a while: the answers are kept.
        table.press_button(ANN, join, Kind.LEAVE)
        table.press_button(ANN, join, Kind.JOIN)
        assert table.game().ids == (ANN.id,) and asked(table) == before
        for command in ("/stop", "/newgame", "/stop", "/newgame"):
            table.say(ANN, command)
        before = asked(table)  # /stop asks whether its sender is an admin, each time
        # Join on the first game's table, Play again on its end, two games later.
        old_join = Place(GROUP, first).data(Kind.JOIN)
        table.press(BOB, GROUP, join.message_id, old_join)
        assert answer(table) == t("en", "old_game")
        end = next(m for m in table.tg.chat_messages(GROUP) if button(m, Kind.AGAIN))
        data = button(end, Kind.AGAIN)
        assert data is not None
        table.press(BOB, GROUP, end.message_id, data)
        assert answer(table) == t("en", "old_game")
        assert asked(table) == before and table.game().ids == ()
        # Past the while, a person is asked again.
        table.clock.advance(KEPT)
        table.join(ANN)
        assert asked(table) - before == 2


def test_a_link_names_no_chat_that_has_a_game() -> None:
    """/start h<chat>_<game>: one answer whether the chat has a game or not; a game id no game
    can have is refused before the store is read."""
    with running_bot(seed=3) as table:
        open_and_start(table, [ANN, BOB])
        game_id = table.record().game_id
        links = [
            f"h{GROUP}_0",  # no game ever has id 0
            f"h{GROUP}_{36**9}",  # nor one past the ids drawn
            f"h{GROUP}_{game_id + 1}",  # a chat with a game, another game's id
            f"h{OTHER_GROUP}_{game_id}",  # a chat without one
            f"h{BOB.id}_{game_id}",  # a private chat has none
        ]
        for payload in links:
            reads = table.rt.store.counts.reads
            table.say(CHLOE, f"/start {payload}", CHLOE.id)
            assert table.latest(CHLOE.id).text == t("fr", "not_playing"), payload
            impossible = payload.endswith(("_0", f"_{36**9}")) or payload.startswith(f"h{BOB.id}")
            assert (table.rt.store.counts.reads == reads) == impossible, payload
        table.say(CHLOE, f"/start j{GROUP}_0", CHLOE.id)
        assert table.latest(CHLOE.id).text == t("fr", "old_game")
        # Ann's own link still brings her hand.
        table.say(ANN, f"/start h{GROUP}_{game_id}", ANN.id)
        assert str(table.latest(ANN.id).text).startswith("Your hand")


def test_a_player_banned_from_the_group_is_refused_their_moves() -> None:
    with running_bot(seed=3) as table:
        open_and_start(table, [ANN, BOB, CHLOE], command="/newgame off")
        awaited = next(p for p in (ANN, BOB, CHLOE) if p.id == table.game().awaited)
        banned = CHLOE if awaited == CHLOE else awaited
        # Moves within the while the seat's answer is kept ask nothing.
        before = asked(table)
        table.tg.set_status(GROUP, banned.id, "kicked")
        table.clock.advance(KEPT)
        version = table.record().version
        reply = table.play(banned, {min(table.hand(banned))})
        assert reply.status == 200
        assert reply.text == t(banned.lang, "refusal_not_in_group")
        assert table.record().version == version, "nothing changed"
        assert asked(table) - before == 1, "one question, kept"
        table.play(banned, {min(table.hand(banned))})
        assert asked(table) - before == 1
        # The others play on; each is asked once in the while, not at every move.
        for _ in range(4):
            game = table.game()
            person = next(p for p in (ANN, BOB, CHLOE) if p.id == game.awaited)
            if person == banned:
                break
            table.play(person, {min(table.hand(person))})
        assert asked(table) - before <= 3


def reply_kick(table: Table, sender: Person, replied: Person | None, text: str = "/kick") -> None:
    update: dict[str, Any] = table.updates.message(sender, text, GROUP)
    if replied is not None:
        update["message"]["reply_to_message"] = {
            "message_id": 7,
            "date": int(table.clock.now),
            "chat": update["message"]["chat"],
            "from": user_json(replied.id, replied.name, replied.lang),
            "text": "hello",
        }
    assert table.post(update).status == 200


def test_an_admin_puts_a_player_out_by_reply_and_others_are_refused_in_a_word() -> None:
    with running_bot(seed=3) as table:
        table.tg.admins.add((GROUP, ADA.id))
        open_and_start(table, [ANN, BOB, CHLOE], command="/newgame off")
        game = table.game()
        reply_kick(table, BOB, CHLOE)  # not an admin
        assert table.latest(GROUP).text == t("en", "kick_not_allowed")
        reply_kick(table, ADA, None)  # nobody named
        assert table.latest(GROUP).text == t("en", "kick_whom")
        reply_kick(table, ADA, ADA)  # not at the table
        assert table.latest(GROUP).text == t("en", "kick_whom")
        assert table.game() == game
        hand = table.hand(CHLOE)
        place = table.record().place
        reply_kick(table, ADA, CHLOE)
        game = table.game()
        seat = game.ids.index(CHLOE.id)
        assert seat in game.out and game.hands[seat] == 0 and game.phase is Phase.PLAY
        assert bin(game.aside).count("1") == len(hand), "her hand set aside (R19)"
        note = t("en", "note_kicked", name="Chloé")
        assert note in str(table.table_message().text)
        assert t("fr", "kicked_private", group="Friday cards") in [
            m.text for m in table.tg.chat_messages(CHLOE.id)
        ]
        play = callbacks.encode(place.press(Kind.PLAY, game.turns, cards=mask_of([min(hand)])))
        hand_msg, table_msg = table.hand_message(CHLOE).message_id, table.table_message().message_id
        for chat, message, data in [
            (CHLOE.id, hand_msg, play),
            (CHLOE.id, hand_msg, place.data(Kind.SHOUT, game.plays)),
            (GROUP, table_msg, place.data(Kind.VOTE)),
        ]:
            reply = table.press(CHLOE, chat, message, data)
            assert reply.text == t("fr", "refusal_not_a_player")
            assert table.game() == game, "her presses change nothing"


def test_a_kick_names_the_player_as_the_table_shows_them() -> None:
    """Named after the command: the name as shown, a look-alike's mark included; a name that
    reads as several seats, or none, is no one."""
    sam, lookalike = Person(201, "Sam"), Person(202, "Ѕаm")  # the second in Cyrillic letters
    with running_bot(seed=3) as table:
        table.tg.admins.add((GROUP, ADA.id))
        open_and_start(table, [ANN, sam, lookalike], command="/newgame off")
        table.say(ADA, "/kick Nobody")
        assert table.latest(GROUP).text == t("en", "kick_whom")
        table.say(ADA, "/kick Sam ²")
        game = table.game()
        assert game.out == [game.ids.index(lookalike.id)]
        table.say(ADA, "/kick sam")
        assert sorted(table.game().out) == sorted(game.ids.index(p.id) for p in (sam, lookalike))
        assert table.game().phase is Phase.OVER, "Ann is left, and wins"
