"""A role for every command: who may add and remove computer players, choose the language,
stop the game; anonymous administrators; messages sent on behalf of a channel; and every
refusal in the presser's language."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from engine import Phase
from handlers import callbacks, item, render, robots
from handlers.app import ANONYMOUS_ADMIN
from handlers.callbacks import Kind, Press
from handlers.text import FSI, PDI, SUPPORTED, t
from infra.fake_telegram import GROUP_ANONYMOUS_BOT, message_update
from infra.harness import GROUP, Person
from infra.harness.bot import Table, running_bot
from infra.harness.screens import button, buttons
from infra.harness.updates import Reply
from tests.support.corpus import CALLBACK_LIMIT, Scene, games

ANN = Person(101, "Ann")  # opens the game
BOB = Person(102, "Bob")  # seated
EVE = Person(103, "Eve")  # a member of the group, not at the table
ADA = Person(104, "Ada")  # a group administrator, not at the table
CHANNEL = -1007777777777
LANGS = pytest.mark.parametrize("lang", SUPPORTED)


@contextmanager
def lobby(lang: str = "en") -> Iterator[Scene]:
    """Ann opened a game (without sitting), Bob sat down; Ada administers the group."""
    with running_bot() as table:
        people = [Person(p.id, p.name, lang) for p in (ANN, BOB, EVE, ADA)]
        table.tg.admins.add((GROUP, ADA.id))
        table.say(people[0], "/newgame")
        table.join(people[1])
        yield Scene(table, people)


@contextmanager
def nothing_changes(scene: Scene) -> Iterator[None]:
    """The stored game keeps its state (a refusal in the group is written for its minute)."""
    before = games(scene)
    yield
    assert games(scene) == before, "the store changed"


def replies(table: Table) -> list[str]:
    return [str(c.params["text"]) for c in table.tg.calls("sendMessage", chat_id=GROUP)]


def send_as(table: Table, text: str, sender_chat: dict[str, Any], user: dict[str, Any]) -> Reply:
    """A group message written as a chat: the group itself (an anonymous administrator) or a
    channel, through the user Telegram puts in `from` for them."""
    update = table.updates.message(Person(user["id"], user["first_name"]), text, GROUP)
    update["message"]["from"] = user
    update["message"]["sender_chat"] = sender_chat
    return table.post(update)


def as_chat(table: Table, text: str, chat: int) -> Reply:
    update = message_update(
        GROUP,
        0,
        text,
        update_id=table.updates.next_id(),
        date=int(table.clock.now),
        sender_chat=chat,
    )
    return table.post(update)


def as_anonymous_admin(table: Table, text: str) -> Reply:
    assert GROUP_ANONYMOUS_BOT["id"] == ANONYMOUS_ADMIN
    return as_chat(table, text, GROUP)


def as_channel(table: Table, text: str) -> Reply:
    return as_chat(table, text, CHANNEL)


def remove_data(scene: Scene, robot: int) -> str:
    return callbacks.encode(Press(Kind.REMOVE, GROUP, scene.table.record().game_id, robot))


def table_message(scene: Scene) -> int:
    return scene.table_message_id()


# --- computer players --------------------------------------------------------------------------


def test_the_opener_a_seated_player_or_an_admin_may_add_a_computer_player() -> None:
    with lobby() as scene:
        table = scene.table
        ann, bob, _, ada = scene.players
        for person in (ann, bob, ada):
            asked = len(table.tg.calls("getChatMember"))
            table.say(person, "/addbot")
            assert len(table.tg.calls("getChatMember")) == asked + 1, "one question, before"
        asked = len(table.tg.calls("getChatMember"))
        as_anonymous_admin(table, "/addbot")
        for command in ("/table", "/rules", "/help", "/leave", "/hand"):
            table.say(ann, command)
        assert len(table.tg.calls("getChatMember")) == asked, "asked only when it matters"
        assert table.game().ids == (bob.id, -1, -2, -3, -4)


def test_a_computer_player_is_seated_at_the_level_asked_and_the_lobby_shows_it() -> None:
    with lobby() as scene:
        table = scene.table
        ann, bob, *_ = scene.players
        table.say(ann, "/addbot hard")
        table.say(ann, "/addbot")
        table.say(ann, "/addbot Facile")  # as French says it
        table.say(ann, "/addbot صعب")  # as Arabic says "hard"
        game = table.game()
        assert game.ids == (bob.id, -21, -2, -13, -24)
        assert [robots.level_of(p) for p in game.ids[1:]] == ["hard", "normal", "easy", "hard"]
        shown = table.tg.message(GROUP, table_message(scene))
        assert shown is not None
        text = (shown.text or "").replace(FSI, "").replace(PDI, "")
        for line in ("Robot 1 · hard", "Robot 2 · normal", "Robot 3 · easy"):
            assert line in text, line
        table.press_button(bob, table.group_message_with(Kind.START), Kind.START)
        assert sorted(table.game().ids) == [-24, -21, -13, -2, bob.id], "stored as seated"


@LANGS
def test_a_level_there_is_not_is_refused_in_the_senders_language(lang: str) -> None:
    with lobby("en") as scene:
        ann = Person(ANN.id, ANN.name, lang)
        with nothing_changes(scene):
            scene.table.say(ann, "/addbot expert")
        assert replies(scene.table)[-1] == t(lang, "refusal_bad_level")


@LANGS
def test_anyone_else_may_not_add_one_and_is_told_why_in_their_language(lang: str) -> None:
    with lobby("en") as scene:
        eve = Person(EVE.id, EVE.name, lang)
        with nothing_changes(scene):
            scene.table.say(eve, "/addbot")
        said = replies(scene.table)[-1]
        assert said == t(lang, "addbot_not_allowed") and len(said) <= CALLBACK_LIMIT


def test_computer_players_are_added_in_the_lobby_only() -> None:
    with lobby() as scene:
        table = scene.table
        ann, bob, _, ada = scene.players
        table.say(ann, "/addbot")
        table.press_button(bob, table.group_message_with(Kind.START), Kind.START)
        for person in (ann, bob, ada):
            with nothing_changes(scene):
                table.say(person, "/addbot")
            assert replies(table)[-1] == t("en", "refusal_already_started")


def test_the_opener_or_an_admin_may_remove_a_computer_player_from_the_lobby() -> None:
    with lobby() as scene:
        table = scene.table
        ann, bob, eve, ada = scene.players
        for _ in range(3):
            table.say(ann, "/addbot")
        message = table_message(scene)
        for person in (bob, eve):  # at the table, or not: neither opened it nor administers it
            with nothing_changes(scene):
                response = table.press(person, GROUP, message, remove_data(scene, 2))
            assert response.text == t("en", "remove_not_allowed")
        table.press(ann, GROUP, message, remove_data(scene, 2))
        table.press(ada, GROUP, message, remove_data(scene, 3))
        assert table.game().ids == (bob.id, -1)
        with nothing_changes(scene):  # pressed again, on a stale table
            response = table.press(ann, GROUP, message, remove_data(scene, 3))
        assert response.text == t("en", "robot_gone")
        # The lobby's table offers a button per computer player left.
        shown = table.tg.message(GROUP, message)
        assert shown is not None
        removals = [b for b in buttons(shown) if b["text"].startswith("Remove")]
        assert [b["callback_data"] for b in removals] == [remove_data(scene, 1)]


def test_a_computer_player_cannot_be_removed_once_the_game_runs() -> None:
    with lobby() as scene:
        table = scene.table
        ann, bob, _, ada = scene.players
        table.say(ann, "/addbot")
        data = remove_data(scene, 1)
        table.press_button(bob, table.group_message_with(Kind.START), Kind.START)
        for person in (ann, ada):
            with nothing_changes(scene):
                response = table.press(person, GROUP, table_message(scene), data)
            assert response.text == t("en", "refusal_already_started")


def test_a_game_of_computer_players_alone_cannot_start() -> None:
    with lobby() as scene:
        table = scene.table
        ann, bob, *_ = scene.players
        table.say(ann, "/addbot")
        table.say(ann, "/addbot")
        table.say(bob, "/leave")
        assert table.game().ids == (-1, -2)
        shown = table.tg.message(GROUP, table_message(scene))
        assert shown is not None and button(shown, Kind.START) is None
        start = callbacks.encode(Press(Kind.START, GROUP, table.record().game_id))
        with nothing_changes(scene):
            response = table.press(ann, GROUP, table_message(scene), start)
        assert response.text == t("en", "refusal_no_person_seated")


# --- the language ------------------------------------------------------------------------------


def language_button(table: Table, lang_index: int) -> tuple[int, str]:
    prompt = table.latest(GROUP)
    for shown in buttons(prompt):
        press = callbacks.decode(shown["callback_data"])
        if press.kind is Kind.LANGUAGE and press.number == lang_index:
            return prompt.message_id, str(shown["callback_data"])
    raise AssertionError("no language prompt")


def test_the_opener_or_an_admin_chooses_the_language() -> None:
    with lobby() as scene:
        table = scene.table
        ann, bob, eve, ada = scene.players
        for person in (bob, eve):
            with nothing_changes(scene):
                table.say(person, "/language")
            assert replies(table)[-1] == t("en", "refusal_chat_settings")
        table.say(ann, "/language")
        message, arabic = language_button(table, 1)
        for person in (bob, eve):  # the buttons of someone else's prompt
            with nothing_changes(scene):
                response = table.press(person, GROUP, message, arabic)
            assert response.text == t("en", "refusal_chat_settings")
        table.press(ada, GROUP, message, arabic)
        assert (table.record().lang, table.record().later_lang) == ("ar", None)
        assert replies(table)[-1] == t("ar", "language_set")
        asked = len(table.tg.calls("getChatMember"))
        as_anonymous_admin(table, "/language")
        message, english = language_button(table, 0)
        assert len(table.tg.calls("getChatMember")) == asked, "an anonymous admin is known"
        table.press(ann, GROUP, message, english)
        assert (table.record().lang, table.record().later_lang) == ("en", "ar"), "this game's"
        assert replies(table)[-1] == t("en", "language_set_game")


def test_the_opener_sets_this_games_language_only_and_the_next_game_speaks_the_chats() -> None:
    """Tried as a hostile member would: refused /language, they opened a game and switched the
    chat's language from its lobby, and it stayed for every later game."""
    with running_bot() as table:
        table.tg.admins.add((GROUP, ADA.id))
        table.say(EVE, "/language")
        assert replies(table)[-1] == t("en", "refusal_chat_settings")
        table.say(EVE, "/newgame")
        table.say(EVE, "/language")
        message, arabic = language_button(table, 1)
        table.press(EVE, GROUP, message, arabic)
        record = table.record()
        assert (record.lang, record.later_lang) == ("ar", "en")
        assert replies(table)[-1] == t("ar", "language_set_game")
        table.join(EVE)
        table.join(BOB)
        table.press_button(EVE, table.group_message_with(Kind.START), Kind.START)
        table.say(EVE, "/language")  # the game runs: its language is set
        assert replies(table)[-1] == t("en", "refusal_chat_settings")
        english = language_button_of(table, message, 0)
        response = table.press(EVE, GROUP, message, english)  # the lobby's prompt, pressed late
        assert response.text == t("en", "refusal_chat_settings")
        assert table.record().lang == "ar"
        table.say(EVE, "/stop")
        table.say(ANN, "/newgame")
        record = table.record()
        assert (record.lang, record.later_lang) == ("en", None), "the chat's language again"
        assert table.tg.message(GROUP, record.table_msg or 0) is not None
        # Stored and read back: the chat's language survives the game that set its own.
        table.say(ANN, "/stop")
        table.say(ANN, "/language")
        assert replies(table)[-1] == t("en", "refusal_chat_settings")


def test_a_table_drawn_again_in_another_language_keeps_no_line_of_the_former() -> None:
    """The table's note is text, written in the language of its time: a new language drops it
    rather than show it beside the table's other lines in the new one."""
    with running_bot() as table:
        table.tg.admins.add((GROUP, ADA.id))
        table.say(ANN, "/newgame")
        table.join(ANN)
        table.join(BOB)
        table.press_button(ANN, table.group_message_with(Kind.START), Kind.START)
        table.say(ANN, "/stop")
        said = t("en", "stopped_by", name="Ann")
        assert said in (table.table_message().text or "")
        table.say(ADA, "/language")
        message, arabic = language_button(table, 1)
        table.press(ADA, GROUP, message, arabic)
        assert table.table_message().text == t("ar", "title_stopped")


def language_button_of(table: Table, message: int, lang_index: int) -> str:
    shown = table.tg.message(GROUP, message)
    assert shown is not None
    for found in buttons(shown):
        press = callbacks.decode(found["callback_data"])
        if press.kind is Kind.LANGUAGE and press.number == lang_index:
            return str(found["callback_data"])
    raise AssertionError("no language button")


def test_before_any_game_only_an_admin_chooses_the_language() -> None:
    with running_bot() as table:
        table.tg.admins.add((GROUP, ADA.id))
        table.say(ANN, "/language")
        assert table.tg.messages_to(GROUP)[-1] == t("en", "refusal_chat_settings")
        table.say(ADA, "/language")
        message, arabic = language_button(table, 1)
        table.press(ADA, GROUP, message, arabic)
        assert table.rt.store.load(GROUP).lang == "ar"


# --- anonymous administrators and channels -----------------------------------------------------


def test_an_anonymous_admin_may_stop_the_game_without_a_question_to_telegram() -> None:
    with lobby() as scene:
        table = scene.table
        ann = scene.players[0]
        table.join(ann)
        table.press_button(ann, table.group_message_with(Kind.START), Kind.START)
        asked = len(table.tg.calls("getChatMember"))
        as_anonymous_admin(table, "/stop")
        game = table.game()
        assert game.phase is Phase.OVER and game.winner is None
        assert len(table.tg.calls("getChatMember")) == asked


@pytest.mark.parametrize(
    "command",
    [
        "/newgame",
        "/join",
        "/leave",
        "/forfeit",
        "/stop",
        "/addbot",
        "/hand",
        "/language",
        "/settings",
    ],
)
def test_a_channel_cannot_open_join_or_act_in_a_game(command: str) -> None:
    with lobby() as scene:
        table = scene.table
        ann = scene.players[0]
        table.say(ann, "/stop")  # the lobby stopped: /newgame would open a new one
        with nothing_changes(scene):
            as_channel(table, command)
        said = replies(table)[-1]
        assert said == t("en", "on_behalf_of_chat") and len(said) <= CALLBACK_LIMIT
        assert "\n" not in said


def test_a_message_as_the_group_from_anyone_but_telegrams_anonymous_admin_is_refused() -> None:
    with lobby() as scene:
        group = {"id": GROUP, "type": "supergroup", "title": "Friday cards"}
        with nothing_changes(scene):
            send_as(
                scene.table, "/stop", group, {"id": EVE.id, "is_bot": False, "first_name": "Eve"}
            )
        assert replies(scene.table)[-1] == t("en", "on_behalf_of_chat")


def test_a_channel_may_still_read_the_rules_the_help_and_the_table() -> None:
    with lobby() as scene:
        table = scene.table
        for command, said in (("/rules", render.rules("en", 90)), ("/help", t("en", "help_group"))):
            as_channel(table, command)
            assert replies(table)[-1] == said
        sent = len(replies(table))
        as_channel(table, "/table")
        assert len(replies(table)) == sent + 1
        as_channel(table, "/frobnicate")  # not a command of ours: ignored, as from anyone
        assert len(replies(table)) == sent + 1


# --- refusals in the presser's language --------------------------------------------------------


def test_a_refused_command_is_answered_in_the_senders_language_or_else_the_groups() -> None:
    with lobby("en") as scene:
        table = scene.table
        eve = scene.players[2]
        table.say(Person(eve.id, eve.name, "ar"), "/stop")
        assert replies(table)[-1] == t("ar", "refusal_not_allowed")
        table.say(Person(eve.id, eve.name, "fr-CA"), "/stop")
        assert replies(table)[-1] == t("fr", "refusal_not_allowed")
        table.say(Person(eve.id, eve.name, "de"), "/stop")  # a language the bot does not speak
        assert replies(table)[-1] == t("en", "refusal_not_allowed")
        update = table.updates.message(eve, "/stop", GROUP)
        message = update["message"]
        del message["from"]["language_code"]
        table.post(update)
        assert replies(table)[-1] == t(table.record().lang, "refusal_not_allowed")
        item.save(table.rt.store, _with_lang(table, "ar"))
        table.post(
            {"update_id": table.updates.next_id(), "message": {**message, "message_id": 999}}
        )
        assert replies(table)[-1] == t("ar", "refusal_not_allowed")


def _with_lang(table: Table, lang: str) -> Any:
    record = table.record()
    record.lang = lang
    return record
