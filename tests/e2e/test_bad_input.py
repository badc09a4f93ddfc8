"""Bad input gets a clear answer, and nothing changes.

Forged secrets, bodies that are not updates, unknown update kinds, tampered or misplaced
buttons, moves the rules refuse and commands in the wrong place: each is answered (or ignored)
through the webhook, the stored game keeps its version and document, and no group message ever
shows a card that no challenge turned over. Then a corpus of a few hundred hostile inputs and a
fuzz test over update JSON make the same checks.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import Phase, mask_of
from handlers import callbacks
from handlers.callbacks import Kind, Press
from handlers.plan import GROUP_SENDS_PER_MINUTE
from handlers.text import SUPPORTED, is_rtl, t
from handlers.webhook import SECRET_HEADER
from infra.fake_telegram import bad_request, server_error, too_many_requests
from infra.harness import GROUP, OTHER_GROUP, SECRET, Person, people
from infra.harness.bot import running_bot
from infra.harness.screens import button
from infra.harness.updates import Reply, event
from tests.support import updates as generated
from tests.support.corpus import (
    ARABIC,
    CALLBACK_LIMIT,
    STRANGER,
    Scene,
    corpus,
    games,
    signature,
    texts,
)

# --- a game in play, and the checks ----------------------------------------------------------


@contextmanager
def game_in_play(lang: str = "en", seed: int = 11) -> Iterator[Scene]:
    """Three players, the game started, and one card played: a Liar! can be shouted."""
    with running_bot(seed=seed) as table:
        scene = Scene(table, people(3, lang))
        scene.start()
        mover = scene.awaited()
        scene.press_play(mover, {min(scene.hand(mover))})
        assert table.game().last is not None
        yield scene
        assert scene.leaks() == [], "a group message showed a card no challenge turned over"


# What a reply into the group writes besides: its update id and its time, which counts against
# the group's flood limit (handlers.plan.plan). Nothing else may change.


@contextmanager
def nothing_changes(scene: Scene, *, no_calls: bool = False) -> Iterator[None]:
    """The stored games keep their state (and, if asked, Telegram hears nothing)."""
    before, calls = games(scene), len(scene.table.tg.calls())
    yield
    assert games(scene) == before, "the store changed"
    if no_calls:
        assert scene.table.tg.calls()[calls:] == [], "Telegram was called"


def stranger(lang: str) -> Person:
    return Person(STRANGER.id, STRANGER.name, lang)


def assert_answered(scene: Scene, reply: Reply, lang: str, *keys: str) -> str:
    """The press was answered, in `lang`, with one of the wordings of `keys`."""
    assert reply.status == 200
    text = reply.text
    assert text, f"no reason given; expected one of {keys}"
    assert len(text) <= CALLBACK_LIMIT
    game = scene.table.record().game
    names = game.names if game else ()
    allowed = set().union(*(texts(lang, key, names) for key in keys))
    assert text in allowed, f"{text!r} is not one of {keys} in {lang}"
    assert bool(ARABIC.search(text)) == is_rtl(lang), f"not in the presser's language: {text}"
    # The webhook reply reached Telegram as the answer to that press.
    assert scene.table.tg.calls("answerCallbackQuery")[-1].params.get("text") == text
    return text


def refused(scene: Scene, person: Person, chat: int, message_id: int, data: str, *keys: str) -> str:
    with nothing_changes(scene):
        response = scene.table.press(person, chat, message_id, data)
    return assert_answered(scene, response, person.lang, *keys)


def replies(scene: Scene, chat: int) -> list[str]:
    return [str(c.params["text"]) for c in scene.table.tg.calls("sendMessage", chat_id=chat)]


def with_field(data: str, index: int, value: str) -> str:
    parts = data.split(".")
    parts[index] = value
    return ".".join(parts)


# --- the secret ------------------------------------------------------------------------------


def test_a_forged_secret_gets_401_and_touches_nothing() -> None:
    with game_in_play() as scene:
        opener = scene.players[0]
        stop = scene.table.updates.message(opener, "/stop")
        forged: dict[str, tuple[str | None, str]] = {
            "missing": (None, SECRET_HEADER),
            "empty": ("", SECRET_HEADER),
            "forged": ("not-the-secret", SECRET_HEADER),
            "wrong-case value": (SECRET.upper(), SECRET_HEADER),
            "capitalized value": (SECRET.capitalize(), SECRET_HEADER),
            "trailing space": (SECRET + " ", SECRET_HEADER),
            "a prefix": (SECRET[:5], SECRET_HEADER),
            "non-ASCII": (SECRET.replace("e", "é"), SECRET_HEADER),
            "under another name": (SECRET, "X-Telegram-Secret"),
        }
        for name, (secret, header) in forged.items():
            with nothing_changes(scene, no_calls=True):
                response = scene.deliver(event(stop, secret=secret, header=header))
            assert response == {"statusCode": 401, "body": ""}, name
        # The same update with the secret (header names are case-insensitive) does apply:
        # the 401s above were the secret's doing.
        response = scene.deliver(event(stop, header=SECRET_HEADER.upper()))
        assert response["statusCode"] == 200
        game = scene.table.game()
        assert game.phase is Phase.OVER and game.winner is None


# --- bodies that are not updates -------------------------------------------------------------


def test_bodies_that_are_not_updates_get_200_and_change_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with game_in_play() as scene:
        table, opener = scene.table, scene.players[0]
        say = table.updates.message
        stop = say(opener, "/stop")
        stop_message = stop["message"]
        text = json.dumps(stop)
        no_text = {k: v for k, v in stop_message.items() if k not in ("text", "entities")}
        cases: dict[str, dict[str, Any]] = {
            "malformed JSON": event("{'update_id': 1", raw=True),
            "truncated JSON": event(text[:-1], raw=True),
            "empty body": event("", raw=True),
            "JSON null": event("null", raw=True),
            "JSON list": event("[" + text + "]", raw=True),
            "JSON string": event('"/stop"', raw=True),
            "JSON number": event("42", raw=True),
            "over 1 MB": event({**stop, "pad": "x" * (1 << 20)}),
            "100k nested lists": event("[" * 100_000 + "]" * 100_000, raw=True),
            "100k nested objects": event('{"a":' * 100_000 + "0" + "}" * 100_000, raw=True),
            "invalid base64": event("***not base64***", raw=True, b64=True),
            "base64 of bytes that are not UTF-8": event("//79", raw=True, b64=True),
            "no update_id": event({"message": stop_message}),
            "update_id as a string": event({"update_id": "77", "message": stop_message}),
            "update_id true": event({"update_id": True, "message": stop_message}),
            "message as a list": event({"update_id": 77, "message": [stop_message]}),
            "chat id as a string": event(
                {"update_id": 78, "message": {**stop_message, "chat": {"id": str(GROUP)}}}
            ),
            "text as a number": event({"update_id": 79, "message": {**stop_message, "text": 5}}),
            "migrate_to_chat_id as a string": event(
                {"update_id": 80, "message": {**stop_message, "migrate_to_chat_id": "x"}}
            ),
            "edited_message": event({"update_id": 81, "edited_message": stop_message}),
            "channel_post": event({"update_id": 82, "channel_post": stop_message}),
            "my_chat_member": event(
                {
                    "update_id": 83,
                    "my_chat_member": {
                        "chat": stop_message["chat"],
                        "from": stop_message["from"],
                        "date": 1,
                        "old_chat_member": {"status": "member", "user": stop_message["from"]},
                        "new_chat_member": {
                            "status": "kicked",
                            "user": stop_message["from"],
                            "until_date": 0,
                        },
                    },
                }
            ),
            "poll": event(
                {
                    "update_id": 84,
                    "poll": {
                        "id": "9",
                        "question": "Liar?",
                        "options": [],
                        "total_voter_count": 0,
                        "is_closed": False,
                        "is_anonymous": True,
                        "type": "regular",
                        "allows_multiple_answers": False,
                    },
                }
            ),
            "inline_query": event(
                {
                    "update_id": 85,
                    "inline_query": {
                        "id": "9",
                        "from": stop_message["from"],
                        "query": "/stop",
                        "offset": "",
                    },
                }
            ),
            "a message with no text": event({"update_id": 86, "message": no_text}),
            "a sticker": event(
                {"update_id": 87, "message": {**no_text, "sticker": {"file_id": "x"}}}
            ),
            "text that is not a command": event(
                {"update_id": 88, "message": say(opener, "stop the game")["message"]}
            ),
            "a command for another bot": event(
                {"update_id": 89, "message": say(opener, "/stop@other_bot")["message"]}
            ),
        }
        for name, ev in cases.items():
            caplog.clear()
            with nothing_changes(scene, no_calls=True):
                response = scene.deliver(ev)
            assert response == {"statusCode": 200, "body": ""}, name
            errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
            assert errors == [], f"{name}: {[r.getMessage() for r in errors]}"
        # The update they were all made from is a real one: well formed, it stops the game.
        assert scene.deliver(event(stop))["statusCode"] == 200
        assert scene.table.game().phase is Phase.OVER


# --- buttons ---------------------------------------------------------------------------------

LANGS = pytest.mark.parametrize("lang", SUPPORTED)


@LANGS
def test_tampered_buttons_are_refused_in_the_pressers_language(lang: str) -> None:
    with game_in_play(lang) as scene:
        record, game = scene.table.record(), scene.table.game()
        awaited = scene.awaited()
        table_msg, hand_msg = scene.table_message_id(), scene.hand_message_id(awaited)
        shout = scene.shout_data()
        assert callbacks.decode(shout).kind is Kind.SHOUT
        b36 = callbacks._b36
        # Every field of the table's Liar! button, changed.
        for data, *keys in [
            (with_field(shout, 0, "q"), "bad_button"),  # no such kind
            (with_field(shout, 0, "p"), "bad_button"),  # a kind whose fields differ
            (with_field(shout, 1, b36(OTHER_GROUP)), "bad_button"),  # another group's button
            (with_field(shout, 1, "zz!"), "bad_button"),
            (with_field(shout, 2, b36(record.game_id + 1)), "old_game"),
            (with_field(shout, 3, b36(game.plays + 1)), "refusal_stale"),
            (with_field(shout, 3, b36(game.plays - 1)), "refusal_next_player_played"),
            (shout + ".1", "bad_button"),
            (shout.rsplit(".", 1)[0], "bad_button"),
            (shout + "0" * (65 - len(shout)), "bad_button"),  # 65 bytes
            ("ب" * 33, "bad_button"),  # 33 characters, 66 bytes
            (with_field(shout, 2, "0" + b36(record.game_id)), "bad_button"),  # not canonical
            (with_field(shout, 1, "-0" + b36(-GROUP)), "bad_button"),
            (shout.upper(), "bad_button"),
        ]:
            refused(scene, awaited, GROUP, table_msg, data, *keys)
        # Every field of a Play button, changed.
        held = sorted(scene.hand(awaited))
        not_held = sorted(set(range(52)) - set(held))
        play = scene.play_data(awaited, {held[0]})
        for data, *keys in [
            (scene.play_data(awaited, {not_held[0]}), "refusal_cards_not_in_hand"),
            (scene.play_data(awaited, {held[0], not_held[0]}), "refusal_cards_not_in_hand"),
            (scene.play_data(awaited, set(held[:5])), "refusal_card_count"),
            (with_field(play, 4, "0"), "refusal_bad_cards"),
            (with_field(play, 4, b36(1 << 52)), "bad_button"),  # not a card
            (with_field(play, 3, b36(game.turns + 3)), "refusal_stale"),
            (with_field(play, 2, b36(record.game_id + 1)), "old_game"),
            (with_field(play, 1, b36(OTHER_GROUP)), "no_game"),
            (with_field(play, 0, "t"), "bad_button"),  # a toggle needs the hand's fields
        ]:
            refused(scene, awaited, awaited.id, hand_msg, data, *keys)
        # A card toggle whose hand or rank is not one.
        toggle = callbacks.encode(
            Press(Kind.TOGGLE, GROUP, record.game_id, game.turns, 1, mask_of(held), game.rank)
        )
        for data in (with_field(toggle, 5, b36(1 << 52)), with_field(toggle, 6, "d")):
            refused(scene, awaited, awaited.id, hand_msg, data, "bad_button")


@LANGS
def test_misplaced_buttons_and_moves_out_of_turn_are_refused(lang: str) -> None:
    with game_in_play(lang) as scene:
        table, game = scene.table, scene.table.game()
        assert game.last is not None
        awaited = scene.awaited()
        mover = scene.by_id(game.ids[game.last.seat])
        third = next(p for p in scene.players if p not in (awaited, mover))
        eve = stranger(lang)
        table_msg = scene.table_message_id()
        hand_msg = scene.hand_message_id(awaited)
        play = scene.play_data(awaited, {min(scene.hand(awaited))})
        record = table.record()
        toggle = callbacks.encode(
            Press(Kind.TOGGLE, GROUP, record.game_id, game.turns, 0, game.hands[0], game.rank)
        )

        def group_button(kind: Kind, number: int = 0) -> str:
            return callbacks.encode(Press(kind, GROUP, record.game_id, number))

        # Another player's hand: a Play pressed in someone else's private chat, or in the group.
        refused(scene, third, awaited.id, hand_msg, play, "bad_button")
        refused(scene, awaited, GROUP, table_msg, play, "bad_button")
        refused(scene, third, GROUP, table_msg, toggle, "bad_button")
        # A group button pressed in another group.
        refused(scene, awaited, OTHER_GROUP, 1, scene.shout_data(), "bad_button")
        refused(scene, awaited, OTHER_GROUP, 1, group_button(Kind.START), "bad_button")
        # Someone who is not at the table.
        refused(scene, eve, GROUP, table_msg, scene.shout_data(), "refusal_not_a_player")
        number = game.plays
        refused(
            scene, eve, GROUP, table_msg, group_button(Kind.STAND, number), "refusal_not_a_player"
        )
        refused(scene, eve, GROUP, table_msg, group_button(Kind.START), "refusal_already_started")
        refused(scene, eve, GROUP, table_msg, group_button(Kind.LEAVE), "refusal_already_started")
        refused(scene, eve, eve.id, 1, play, "refusal_not_a_player")
        # A shout at one's own play; a play out of turn; Let it stand with no final play.
        refused(scene, mover, GROUP, table_msg, scene.shout_data(), "refusal_own_play")
        theirs = scene.play_data(third, {min(scene.hand(third))})
        third_msg = scene.hand_message_id(third)
        text = refused(scene, third, third.id, third_msg, theirs, "refusal_not_your_turn")
        assert awaited.name in text, "the refusal names who plays"
        stand = group_button(Kind.STAND, number)
        refused(scene, third, GROUP, table_msg, stand, "refusal_no_decision_pending")
        # A language button that is not one.
        refused(scene, third, GROUP, table_msg, group_button(Kind.LANGUAGE, 7), "bad_button")


@LANGS
def test_a_shout_without_bullets_is_refused(lang: str) -> None:
    with game_in_play(lang, seed=5) as scene:
        table = scene.table
        victim = scene.players[2]
        # The victim shouts at true plays until their bullets are spent.
        for _ in range(60):
            game = table.game()
            if game.bullets[game.ids.index(victim.id)] == 0:
                break
            person = scene.awaited()
            true, hand = scene.truthful(person), scene.hand(person)
            if person != victim and true and len(true) < len(hand):
                scene.press_play(person, true)
                scene.shout(victim)
            else:
                scene.press_play(person, set(sorted(true or hand)[:1]))
            assert table.game().phase is Phase.PLAY
        else:
            raise AssertionError("the victim still has bullets")
        if table.game().last is None:
            person = scene.awaited()
            scene.press_play(person, {min(scene.hand(person))})
        game = table.game()
        assert game.last is not None and game.ids[game.last.seat] != victim.id
        refused(
            scene, victim, GROUP, scene.table_message_id(), scene.shout_data(), "refusal_no_bullets"
        )
        assert scene.revealed, "the challenges turned cards over, and only those may show"


@LANGS
def test_refusals_around_a_final_play(lang: str) -> None:
    with game_in_play(lang, seed=3) as scene:
        table = scene.table
        for _ in range(60):
            if table.game().phase is Phase.DECIDE:
                break
            person = scene.awaited()
            scene.press_play(person, set(sorted(scene.hand(person))[:4]))
        game = table.game()
        assert game.phase is Phase.DECIDE and game.last is not None
        decider = scene.awaited()
        finisher = scene.by_id(game.ids[game.last.seat])
        third = next(p for p in scene.players if p not in (decider, finisher))
        final = table.group_message_with(Kind.STAND)
        stand = button(final, Kind.STAND)
        assert stand is not None
        # Only the next player can let it stand; nobody can play on.
        for person in (finisher, third):
            text = refused(scene, person, GROUP, final.message_id, stand, "refusal_not_decider")
            assert decider.name in text
        eve = stranger(lang)
        refused(scene, eve, GROUP, final.message_id, stand, "refusal_not_a_player")
        play = scene.play_data(third, {min(scene.hand(third))})
        third_msg = scene.hand_message_id(third)
        refused(scene, third, third.id, third_msg, play, "refusal_final_play_pending")
        old = with_field(stand, 3, callbacks._b36(game.plays - 1))
        refused(scene, decider, GROUP, final.message_id, old, "refusal_stale")
        # The decider lets it stand: the game is over, and a late Liar! changes nothing.
        table.press(decider, GROUP, final.message_id, stand)
        assert table.game().phase is Phase.OVER
        shout = button(final, Kind.SHOUT) or scene.shout_data()
        refused(scene, third, GROUP, final.message_id, shout, "refusal_game_over")


@LANGS
def test_buttons_from_an_earlier_game_are_refused(lang: str) -> None:
    with game_in_play(lang) as scene:
        table = scene.table
        awaited, opener = scene.awaited(), scene.players[0]
        old_shout, old_table = scene.shout_data(), scene.table_message_id()
        old_play = scene.play_data(awaited, {min(scene.hand(awaited))})
        old_hand = scene.hand_message_id(awaited)
        old_game_id = table.record().game_id
        table.say(opener, "/stop")
        assert table.game().phase is Phase.OVER
        scene.start()
        assert table.record().game_id not in (0, old_game_id)
        mover = scene.awaited()
        scene.press_play(mover, {min(scene.hand(mover))})
        shouter = next(p for p in scene.players if p != mover)
        refused(scene, shouter, GROUP, old_table, old_shout, "old_game")
        refused(scene, awaited, awaited.id, old_hand, old_play, "old_game")
        # The join link of the earlier game, opened now, is refused in the private chat.
        eve = stranger(lang)
        with nothing_changes(scene):
            table.say(eve, f"/start j{GROUP}_{old_game_id}", chat=eve.id)
        assert replies(scene, eve.id)[-1] == t(lang, "old_game")


@LANGS
def test_buttons_and_links_from_before_the_chats_record_expired_are_refused(lang: str) -> None:
    with game_in_play(lang) as scene:
        table = scene.table
        old_shout, old_game_id = scene.shout_data(), table.record().game_id
        # DynamoDB's expiry deletes the chat's item; the group plays again.
        scene.client.client.delete_item(
            TableName=table.rt.settings.table_name, Key={"pk": {"S": f"chat#{GROUP}"}}
        )
        scene.start()
        mover = scene.awaited()
        scene.press_play(mover, {min(scene.hand(mover))})
        assert table.record().game_id != old_game_id
        shouter = next(p for p in scene.players if p != mover)
        refused(scene, shouter, GROUP, scene.table_message_id(), old_shout, "old_game")
        eve = stranger(lang)
        with nothing_changes(scene):
            table.say(eve, f"/start j{GROUP}_{old_game_id}", chat=eve.id)
        assert replies(scene, eve.id)[-1] == t(lang, "old_game")


@LANGS
def test_a_forged_toggle_shows_only_to_its_presser_and_cannot_be_played(lang: str) -> None:
    with game_in_play(lang) as scene:
        table, record, game = scene.table, scene.table.record(), scene.table.game()
        awaited = scene.awaited()
        held = scene.hand(awaited)
        forged = set(sorted(set(range(52)) - held)[:3])
        data = callbacks.encode(
            Press(
                Kind.TOGGLE,
                GROUP,
                record.game_id,
                game.turns,
                mask_of(forged),
                mask_of(forged),
                game.rank,
            )
        )
        message = scene.hand_message_id(awaited)
        with nothing_changes(scene):
            response = table.press(awaited, awaited.id, message, data)
        assert response.status == 200 and response.text is None
        # The toggle redrew the presser's own message from its data (no read): the forged
        # cards show there, and only there. Its Play is checked against the stored hand.
        assert table.shown_hand(awaited) == forged
        shown = table.hand_message(awaited)
        refused(
            scene,
            awaited,
            awaited.id,
            message,
            button(shown, Kind.PLAY) or "",
            "refusal_cards_not_in_hand",
        )
        assert table.shown_hand(awaited) == held, "the refusal redrew the true hand"


# --- who may sit at the table ----------------------------------------------------------------


@LANGS
def test_only_members_of_the_group_can_take_a_seat(
    lang: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PTB_TIMEDELTA", "true")  # a 429's retry_after in v23's type, no warning
    with running_bot() as table:
        opener = Person(101, "Ann", lang)
        scene = Scene(table, [opener])
        table.say(opener, "/newgame")
        table.join(opener)
        payload = table.tg.calls("answerCallbackQuery")[-1].params["url"].split("?start=")[1]
        tg = table.tg
        tg.set_status(GROUP, 601, "left")
        tg.set_status(GROUP, 602, "kicked")  # banned from the group
        tg.set_status(GROUP, 603, "restricted", is_member=False)
        tg.set_status(GROUP, 606, "restricted", is_member=True)  # muted, but a member
        refusals = [
            (601, None, "not_member"),
            (602, None, "not_member"),
            (603, None, "not_member"),
            (604, bad_request("chat not found"), "not_member"),
            (605, server_error(502), "member_unknown"),
            (605, too_many_requests(3), "member_unknown"),
        ]
        for user, fault, key in refusals:
            person = Person(user, "Mallory", lang)
            if fault is not None:
                tg.fail_next("getChatMember", error=fault)
            asked = len(tg.calls("getChatMember"))
            with nothing_changes(scene):
                table.say(person, f"/start {payload}", chat=person.id)
            assert replies(scene, person.id)[-1] == t(lang, key), user
            assert len(tg.calls("getChatMember")) == asked + 1, "one question to Telegram"
            assert len(t(lang, key)) <= CALLBACK_LIMIT
        muted = Person(606, "Muted", lang)
        table.say(muted, f"/start {payload}", chat=muted.id)
        assert table.game().ids == (opener.id, muted.id)
        # Seated or not, nobody learnt the group's title but members.
        for user, _, _ in refusals:
            assert not any("Friday" in text for text in replies(scene, user))


# --- commands --------------------------------------------------------------------------------


def test_commands_in_the_wrong_chat_or_with_odd_arguments() -> None:
    with game_in_play() as scene:
        table = scene.table
        opener, bob, chloe = scene.players
        eve = STRANGER
        game_id = table.record().game_id
        private = [
            (opener, "/newgame", "not_in_group"),
            (bob, "/hand", "not_in_group"),
            (bob, "/forfeit", "not_in_group"),
            (opener, "/stop", "not_in_group"),
            (eve, "/start", "help_private"),
            (eve, "/start jnonsense", "help_private"),
            (eve, f"/start j{GROUP}", "help_private"),
            (eve, f"/start j{GROUP}_", "help_private"),
            (eve, f"/start j{GROUP}_{game_id}_{game_id}_{game_id}", "help_private"),
            (eve, f"/start j{GROUP}_{game_id}_", "help_private"),
            (eve, f"/start j{GROUP}_{game_id}_7", "no_game"),  # no game in that forum topic
            (eve, f"/start j{'9' * 40}_1", "help_private"),
            (eve, f"/start j{GROUP}_0", "old_game"),
            (eve, f"/start j{GROUP}_{game_id}", "refusal_already_started"),
            (eve, f"/start j{OTHER_GROUP}_1", "no_game"),
        ]
        for person, text, key in private:
            with nothing_changes(scene):
                table.say(person, text, chat=person.id)
            assert replies(scene, person.id)[-1] == t("en", key), text
        # /newgame in a private chat opened nothing there.
        assert table.rt.store.load(opener.id).version == 0

        in_group = [
            (eve, "/forfeit", "refusal_not_a_player"),
            (eve, "/forfeit@menteur_test_bot", "refusal_not_a_player"),
            (bob, "/stop", "refusal_not_allowed"),
            (chloe, "/stop right now", "refusal_not_allowed"),
            (bob, "/leave", "refusal_already_started"),
            (bob, "/addbot", "refusal_already_started"),
            (opener, "/newgame", "game_running"),
            (eve, "/hand", "not_playing"),
        ]
        for person, text, key in in_group:
            with nothing_changes(scene):
                table.say(person, text)
            assert replies(scene, GROUP)[-1] == t("en", key), text
        assert table.tg.calls("getChatMember"), "a non-opener's /stop asks whether they are admin"
        for text in ("/stop@other_bot", "/frobnicate", "/"):
            with nothing_changes(scene, no_calls=True):
                table.say(opener, text)

        # A group administrator may stop the game.
        table.tg.admins.add((GROUP, bob.id))
        said = len(replies(scene, GROUP))
        table.say(bob, "/stop")
        game = table.game()
        assert game.phase is Phase.OVER and game.winner is None
        assert any(bob.name in text for text in replies(scene, GROUP)[said:])
        assert t("en", "refusal_not_allowed") not in replies(scene, GROUP)[said:], (
            "an admin is not told no before the game stops"
        )


def test_no_hand_ever_shows_in_a_group_message() -> None:
    """A whole game with challenges, watched: group texts name challenged cards only."""
    with game_in_play(seed=9) as scene:
        table = scene.table
        for turn in range(80):
            game = table.game()
            if game.phase is Phase.OVER:
                break
            if game.phase is Phase.DECIDE:
                decider = scene.awaited()
                final = table.group_message_with(Kind.STAND)
                table.press_button(decider, final, Kind.STAND)
                continue
            person = scene.awaited()
            true, hand = scene.truthful(person), scene.hand(person)
            scene.press_play(person, set(sorted(true or hand)[: 1 + turn % 3]))
            if turn % 4 == 1 and table.game().phase is Phase.PLAY:
                shouter = next(p for p in scene.players if p != person)
                scene.shout(shouter)
        assert table.game().phase is Phase.OVER
        assert scene.revealed, "challenges turned cards over"
        # Cards picked up after a challenge were public; nothing else anyone holds ever was.
        picked_up = scene.held_in_group()
        assert picked_up <= scene.revealed


# --- a corpus, and fuzzing -------------------------------------------------------------------


def test_a_corpus_of_hostile_inputs_changes_nothing(caplog: pytest.LogCaptureFixture) -> None:
    with game_in_play() as scene:
        cases = corpus(scene)
        assert len(cases) >= 200
        assert len({signature(case.event) for case in cases}) == len(cases), "distinct inputs"
        assert {case.status for case in cases} == {200, 401}
        before = games(scene)
        for case in cases:
            caplog.clear()
            response = scene.deliver(case.event)  # raises if anything escapes the handler
            assert response["statusCode"] == case.status, case.name
            errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
            assert errors == [], f"{case.name}: {errors}"
            assert games(scene) == before, f"{case.name} changed the game"
        assert_replies_within_the_flood_limit(scene)
        assert scene.leaks() == []
        assert scene.held_in_group() == set(), "a group message named a card someone holds"


JSON_KEYS = st.sampled_from(
    [
        "update_id",
        "message",
        "callback_query",
        "edited_message",
        "chat",
        "from",
        "id",
        "type",
        "text",
        "data",
        "message_id",
        "date",
        "migrate_to_chat_id",
        "language_code",
        "first_name",
        "entities",
        "title",
        "is_bot",
        "chat_instance",
    ]
) | st.text(max_size=6)
# Integers that are nobody's id here: a fuzzed update must not become a real player's move.
ODD_INTS = st.sampled_from([0, -1, 1, 7, 2**31, -(2**53), 2**53, 2**63, 2**64, -(10**30)])
LEAVES = st.none() | st.booleans() | ODD_INTS | st.floats() | st.text(max_size=12)
JSON = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(JSON_KEYS, inner, max_size=4),
    max_leaves=12,
)
DATA = st.text(max_size=70) | st.from_regex(callbacks._PATTERN, fullmatch=True)


def refused_updates(scene: Scene) -> list[dict[str, Any]]:
    """Real updates the game refuses now: the material the fuzzer mutates."""
    table, game = scene.table, scene.table.game()
    assert game.last is not None
    mover = scene.by_id(game.ids[game.last.seat])
    awaited = scene.awaited()
    third = next(p for p in scene.players if p not in (awaited, mover))
    table_msg = scene.table_message_id()

    def press(person: Person, chat: int, message_id: int, data: str) -> dict[str, Any]:
        updates, query_id = table.updates, f"fuzz-{person.id}"
        return updates.press(person, chat, message_id, data, update_id=5000, query_id=query_id)

    def say(person: Person, text: str, chat: int = GROUP) -> dict[str, Any]:
        return table.updates.message(person, text, chat, update_id=5000)

    not_held = min(set(range(52)) - scene.hand(awaited))
    return [
        say(STRANGER, "/stop"),
        say(third, "/leave"),
        say(STRANGER, f"/start j{GROUP}_{table.record().game_id}", STRANGER.id),
        press(STRANGER, GROUP, table_msg, scene.shout_data()),
        press(mover, GROUP, table_msg, scene.shout_data()),
        press(
            awaited,
            awaited.id,
            scene.hand_message_id(awaited),
            scene.play_data(awaited, {not_held}),
        ),
        press(
            third,
            third.id,
            scene.hand_message_id(third),
            scene.play_data(third, {min(scene.hand(third))}),
        ),
    ]


def _spots(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value inside nested dicts and lists."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield (*path, key)
            yield from _spots(inner, (*path, key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield (*path, i)
            yield from _spots(inner, (*path, i))


@st.composite
def mutations(draw: st.DrawFn, bases: list[dict[str, Any]]) -> dict[str, Any]:
    update: dict[str, Any] = copy.deepcopy(draw(st.sampled_from(bases)))
    for _ in range(draw(st.integers(1, 3))):
        spots = list(_spots(update))
        path = draw(st.sampled_from(spots))
        parent: Any = update
        for key in path[:-1]:
            parent = parent[key]
        action = draw(st.sampled_from(["replace", "delete", "data", "add"]))
        if action == "delete":
            del parent[path[-1]]
        elif action == "data" and path[-1] == "data":
            parent[path[-1]] = draw(DATA)
        elif action == "add" and isinstance(parent, dict):
            parent[draw(JSON_KEYS)] = draw(JSON)
        else:
            parent[path[-1]] = draw(JSON)
    return update


def assert_replies_within_the_flood_limit(scene: Scene) -> None:
    """Replies to hostile commands are counted like any group message: Telegram's ~20 a
    minute into one group is never exceeded however many arrive (the clock stands still)."""
    assert scene.table.tg.max_messages_per_minute(GROUP) <= GROUP_SENDS_PER_MINUTE


def _fuzz(scene: Scene, caplog: pytest.LogCaptureFixture, updates: st.SearchStrategy[Any]) -> None:
    before = games(scene)

    @settings(
        max_examples=75,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(update=updates)
    def check(update: Any) -> None:
        caplog.clear()
        response = scene.deliver(event(update))
        assert response["statusCode"] == 200
        errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
        assert errors == []
        assert games(scene) == before, "the game was changed"

    check()
    assert_replies_within_the_flood_limit(scene)
    assert scene.leaks() == []


def test_fuzzed_update_json_changes_nothing(caplog: pytest.LogCaptureFixture) -> None:
    with game_in_play() as scene:
        _fuzz(scene, caplog, st.dictionaries(JSON_KEYS, JSON, max_size=4) | JSON)


def test_fuzzed_mutations_of_real_updates_change_nothing(caplog: pytest.LogCaptureFixture) -> None:
    with game_in_play() as scene:
        _fuzz(scene, caplog, mutations(refused_updates(scene)))


# --- every kind of update, generated from the Bot API's types ---------------------------------

SENDS = ("sendMessage", "editMessageText", "editMessageReplyMarkup", "sendChatAction")
ALL = list(HealthCheck)


@pytest.mark.usefixtures("ptb_timedelta")  # as deployed: periods are timedeltas, unwarned
def test_generated_updates_of_every_kind_are_answered_200_and_change_no_game(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Twelve updates of each of the Bot API's kinds, sixty of the two the bot reads, messages
    and button presses, and sixty commands (`tests.support.updates`: from
    python-telegram-bot's classes), from people at no table, in the game's group, another, a
    channel and private chats: each answered 200 with no error logged, nothing sent to a chat
    it did not come from, and the running game unchanged."""
    with game_in_play() as scene:
        before = games(scene)
        tg = scene.table.tg

        def check(drawn: dict[str, Any]) -> None:
            caplog.clear()
            calls = len(tg.calls())
            response = scene.deliver(event(drawn))
            assert response["statusCode"] == 200, drawn
            errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
            assert errors == [], drawn
            assert games(scene) == before, f"the game was changed by {drawn}"
            sent = {c.chat_id for c in tg.calls()[calls:] if c.method in SENDS}
            assert sent <= generated.writers(drawn), (sent, drawn)

        for kind in generated.KINDS:
            # The kinds the bot reads get more: most of their fields matter.
            examples = 60 if kind in ("message", "callback_query") else 12
            run = settings(max_examples=examples, deadline=None, suppress_health_check=ALL)
            run(given(generated.updates(kind))(check))()
        run = settings(max_examples=60, deadline=None, suppress_health_check=ALL)
        run(given(generated.commands())(check))()
        assert_replies_within_the_flood_limit(scene)
