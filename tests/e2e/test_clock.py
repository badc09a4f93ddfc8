"""R20, the turn clock, through the whole bot: the webhook, the timer function, the store and a
fake Telegram, on an injected clock (no test waits for real time).

A person awaited to play has the chat's clock (90 s unless /settings or /newgame says): the
table plays for them at the deadline exactly, through the same timer as the 45 seconds of a
final play; the second run-out in a row forfeits them, and they are told why in private; one
reminder a turn, when a third of the clock is left; the table and the hand say until when, as
a date_time entity each reader's app shows in their own time zone.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pytest

from engine import CLOCK_DEFAULT, Phase, settle, view
from engine import events as ev
from engine.cards import RANKS, is_lie
from handlers import callbacks, render
from handlers.callbacks import Kind
from handlers.text import FSI, PDI, RLM, SUPPORTED, t, tn
from infra.fake_telegram import StoredMessage, covered, message_update
from infra.harness import GROUP, GROUP_TITLE, Person, by_id, people
from infra.harness.bot import Table, open_and_start, running_bot
from infra.harness.screens import buttons

ANN = Person(101, "Ann")  # opens the game
BOB = Person(102, "Bob")  # seated
EVE = Person(103, "Eve")  # a member of the group, not at the table
ADA = Person(104, "Ada")  # a group administrator, not at the table
LANGS = pytest.mark.parametrize("lang", SUPPORTED)
# What the table's note says when the table played for someone, in each catalogue's words.
TABLE_PLAYED = {
    "en": "the table played for them",
    "ar": "نيابةً عن",
    "fr": "la table a joué à sa place",
}


def plain(text: str | None) -> str:
    """What a reader sees: the text without its invisible direction marks."""
    return (text or "").replace(FSI, "").replace(PDI, "").replace(RLM, "")


def fire(table: Table, at: float) -> dict[str, Any]:
    """The timer function on the SQS message set for `at`, delivered at the table's clock."""
    return table.fire(at)


def sent_to(table: Table, chat: int) -> list[str]:
    """The new messages delivered into a chat, in order (edits left out)."""
    return [str(c.params["text"]) for c in table.tg.calls("sendMessage", chat_id=chat) if c.ok]


def table_text(table: Table) -> str:
    message_id = table.record().table_msg
    assert message_id is not None
    message = table.tg.message(GROUP, message_id)
    assert message is not None
    return plain(message.text)


def play_one(table: Table, players: list[Person]) -> None:
    """The awaited person plays their lowest card (nobody shouts)."""
    person = by_id(players, table.game().awaited)
    table.play(person, {min(table.hand(person))})


def until_turn_of(table: Table, players: list[Person], silent: Person) -> None:
    """Everyone else plays a card until it is `silent`'s turn again."""
    for _ in range(len(players)):
        if table.game().awaited == silent.id:
            return
        play_one(table, players)
    raise AssertionError(f"{silent.name}'s turn never came")


def run_out(table: Table) -> list[ev.Event]:
    """The awaited person's reminder and then their deadline, each fired by its SQS message:
    the events the deadline settled (what the engine says)."""
    game = table.game()
    assert game.phase is Phase.PLAY and game.deadline is not None
    table.clock.now = game.deadline - game.clock / 3
    fire(table, table.clock.now)
    table.clock.now = game.deadline
    settled = settle(table.game(), game.deadline)
    fire(table, game.deadline)
    assert table.game() == settled[0]
    return settled[1]


# --- the table plays at the deadline ---------------------------------------------------------


def test_r20_the_table_plays_for_a_silent_person_at_90_0_seconds_not_at_89_9() -> None:
    players = people()
    with running_bot(seed=3) as table:
        open_and_start(table, players)
        game = table.game()
        started = table.clock.now
        assert (game.clock, game.deadline) == (CLOCK_DEFAULT, started + 90)
        assert table.timers.scheduled[-1] == (GROUP, started + 60), "the reminder's timer first"
        table.clock.now = started + 60
        fire(table, started + 60)
        assert table.timers.scheduled[-1] == (GROUP, started + 90), "then the deadline's"
        # An SQS message delivered a tenth of a second early changes nothing and is set again.
        table.clock.now = started + 89.9
        version = table.record().version
        fire(table, started + 90)
        assert table.record().version == version and table.game() == game
        assert table.timers.scheduled[-1] == (GROUP, started + 90)
        # The sweep a millisecond early does nothing either.
        table.clock.now = started + 89.999
        table.sweep()
        assert table.record().version == version
        table.clock.now = started + 90
        fire(table, started + 90)
        after, events = settle(game, started + 90)
        assert table.game() == after and after.turns == game.turns + 1
        played = next(e for e in events if isinstance(e, ev.TablePlayed))
        assert (played.player, played.seconds) == (game.awaited, 90)
        assert after.updated - started == 90.0, "played at the mark, not a moment later"
        silent = by_id(players, game.awaited)
        note = table_text(table).split("\n")[-1]
        n, rank = played.count, RANKS[played.rank]
        assert note == (
            f"No play from {silent.name} in 90 s: the table played for them (Called: {n} × {rank})."
        )
        # The hand shows what the table played from it.
        assert len(table.shown_hand(silent)) == len(table.hand(silent)) == 18 - n


@LANGS
def test_r20_the_tables_play_is_told_in_the_groups_language(lang: str) -> None:
    players = people(3, lang)
    with running_bot(seed=3) as table:
        open_and_start(table, players, "/newgame 30")
        events = run_out(table)
        played = next(e for e in events if isinstance(e, ev.TablePlayed))
        name = by_id(players, played.player).name
        said = t(
            lang,
            "note_table_played",
            name=name,
            seconds=30,
            n=played.count,
            rank=RANKS[played.rank],
        )
        assert table_text(table).split("\n")[-1] == plain(said)
        assert TABLE_PLAYED[lang] in plain(said)
        assert name in plain(said) and "30" in plain(said)


# --- two in a row forfeit; a play of one's own ends the run ------------------------------------


def test_r20_a_second_run_out_in_a_row_forfeits_and_the_player_is_told_why_in_private() -> None:
    players = [Person(101, "Ann"), Person(102, "أمل", "ar"), Person(103, "Chloé")]
    with running_bot(seed=3) as table:
        open_and_start(table, players, "/newgame 30")
        silent = by_id(players, table.game().awaited)
        first = run_out(table)
        assert any(isinstance(e, ev.TablePlayed) for e in first)
        assert table.game().ran_out, "their clock ran out once"
        until_turn_of(table, players, silent)
        reminders = len(sent_to(table, silent.id))
        second = run_out(table)
        reminder = plain(sent_to(table, silent.id)[reminders])
        assert reminder.endswith(plain(t(silent.lang, "reminder_last"))), "warned this time"
        assert ev.Forfeited(silent.id, clock=True) in second
        game = table.game()
        assert game.seat_of(silent.id) in game.out and game.phase is Phase.PLAY
        assert f"{silent.name} forfeits: two turns without a play." in table_text(table)
        told = plain(sent_to(table, silent.id)[-1])
        assert told == plain(t(silent.lang, "clock_forfeit", group=GROUP_TITLE))
        assert plain(table.hand_message(silent).text) == plain(t(silent.lang, "hand_out"))


def test_r20_a_play_of_ones_own_ends_the_run_of_run_outs() -> None:
    players = people()
    with running_bot(seed=3) as table:
        open_and_start(table, players, "/newgame 30")
        silent = by_id(players, table.game().awaited)
        run_out(table)
        until_turn_of(table, players, silent)
        play_one(table, players)  # their own play, in time
        assert not table.game().ran_out
        until_turn_of(table, players, silent)
        again = run_out(table)
        assert any(isinstance(e, ev.TablePlayed) for e in again), "the table plays, once more"
        assert not any(isinstance(e, ev.Forfeited) for e in again)


# --- one reminder a turn ----------------------------------------------------------------------


def test_r20_one_reminder_a_turn_when_a_third_of_the_clock_is_left_whatever_fires_again() -> None:
    players = [Person(101, "Ann", "ar"), Person(102, "Bob"), Person(103, "Chloé")]
    with running_bot(seed=4) as table:
        open_and_start(table, players, "/newgame 60")
        game = table.game()
        person = by_id(players, game.awaited)
        assert game.deadline is not None
        at = game.deadline - 20
        assert table.record().next_look == at
        before, group = len(sent_to(table, person.id)), len(table.tg.calls(chat_id=GROUP))
        table.clock.now = at - 0.001
        fire(table, at)  # early: nothing yet
        assert len(sent_to(table, person.id)) == before
        table.clock.now = at
        for _ in range(3):  # the message, a retry of it, and the sweep
            fire(table, at)
            table.sweep()
        reminders = sent_to(table, person.id)[before:]
        assert [plain(r) for r in reminders] == [
            plain(tn(person.lang, "reminder", 20, group=GROUP_TITLE))
        ]
        assert len(table.tg.calls(chat_id=GROUP)) == group, "nothing in the group, no redraw"
        assert table.record().reminded == game.turns
        assert table.record().next_look == game.deadline, "the deadline's timer is next"
        # The next person's turn has a reminder of its own.
        play_one(table, players)
        game = table.game()
        assert game.deadline is not None and table.record().next_look == game.deadline - 20


# --- off, and computer players -----------------------------------------------------------------


def test_r20_off_means_no_clock_and_no_reminder() -> None:
    players = people()
    with running_bot(seed=3) as table:
        table.say(players[0], "/newgame off")
        assert "Turn clock: off (/settings)." in table_text(table)
        for person in players:
            table.join(person)
        table.press_button(players[0], table.group_message_with(Kind.START), Kind.START)
        game = table.game()
        assert game.clock == 0 and view(game, None, table.clock.now).deadline is None
        assert "turn clock" not in table_text(table) and "plays by" not in table_text(table)
        due = table.record().next_look
        assert due is not None and due - table.clock.now > 23 * 3600, "only the idle end"
        sent = len(table.tg.calls())
        table.clock.advance(3600)
        table.sweep()
        assert table.game() == game and len(table.tg.calls()) == sent


def test_r20_computer_players_have_no_clock_and_keep_their_delay() -> None:
    with running_bot(seed=5) as table:
        table.say(ANN, "/newgame 30")
        table.join(ANN)
        table.say(ANN, "/addbot")
        table.say(ANN, "/addbot")
        table.press_button(ANN, table.group_message_with(Kind.START), Kind.START)
        robot_turns = person_turns = 0
        while person_turns < 3 and table.game().phase is not Phase.OVER:
            game, record = table.game(), table.record()
            if game.awaited == ANN.id and game.phase is Phase.PLAY:
                person_turns += 1
                assert game.deadline == game.updated + 30
                assert "plays by" in table_text(table)
                table.play(ANN, {min(table.hand(ANN))})
                continue
            assert record.next_look is not None
            if game.phase is Phase.PLAY and game.awaited is not None and game.awaited < 0:
                robot_turns += 1
                assert game.deadline is None, "a computer player has no clock"
                assert 3.0 <= record.next_look - game.updated <= 5.0, "its own short delay"
                assert "plays by" not in table_text(table)
            table.clock.now = record.next_look
            table.sweep()
        assert robot_turns and person_turns


# --- who may set the clock ---------------------------------------------------------------------


def clock_button(message: StoredMessage, seconds: int) -> str:
    """The data of the settings message's button for `seconds`."""
    for shown in buttons(message):
        press = callbacks.decode(shown["callback_data"])
        if press.kind is Kind.CLOCK and press.number == seconds:
            return str(shown["callback_data"])
    raise AssertionError(f"no {seconds} s button in {[b['text'] for b in buttons(message)]}")


def as_anonymous_admin(table: Table, text: str) -> None:
    """A group message an anonymous administrator writes: as the group itself, through
    Telegram's GroupAnonymousBot."""
    update = message_update(
        GROUP, 0, text, update_id=table.updates.next_id(), date=table.clock.now, sender_chat=GROUP
    )
    table.post(update)


def settings_message(table: Table, person: Person) -> StoredMessage:
    table.say(person, "/settings")
    message = table.latest(GROUP)
    assert plain(message.text).startswith("Menteur · settings"), message.text
    return message


def press_clock(table: Table, person: Person, message: StoredMessage, seconds: int) -> str | None:
    response = table.press(person, GROUP, message.message_id, clock_button(message, seconds))
    return response.text


def test_r20_the_opener_or_an_admin_sets_the_clock_in_the_lobby_and_its_table_shows_it() -> None:
    with running_bot() as table:
        table.tg.admins.add((GROUP, ADA.id))
        table.say(ANN, "/newgame")
        table.join(BOB)
        assert "Turn clock: 90 s to play (/settings)." in table_text(table)
        shown = settings_message(table, EVE)  # anyone may look
        assert "✓ 90 s" in [plain(b["text"]) for b in buttons(shown)]
        for person in (EVE, BOB):  # neither opened the game nor administers the group
            version = table.record().version
            assert press_clock(table, person, shown, 60) == t("en", "refusal_chat_settings")
            assert table.record().version == version and table.record().clock == 90
        assert press_clock(table, ANN, shown, 60) is None
        assert (table.record().clock, table.game().clock) == (90, 60), "this game's only"
        assert "Turn clock: 60 s to play (/settings)." in table_text(table)
        assert table_text(table).endswith("Turn clock: 60 s.")  # the note
        edited = table.tg.message(GROUP, shown.message_id)
        assert edited is not None and "✓ 60 s" in [plain(b["text"]) for b in buttons(edited)]
        asked = len(table.tg.calls("getChatMember"))
        assert press_clock(table, ADA, shown, 30) is None
        assert len(table.tg.calls("getChatMember")) == asked + 1, "one question, before"
        assert (table.record().clock, table.game().clock) == (30, 30), "the chat's too"
        # The same choice again writes nothing.
        version = table.record().version
        assert press_clock(table, ADA, shown, 30) is None
        assert table.record().version == version


def test_r20_an_anonymous_admin_sets_the_clock_with_a_command_and_others_are_refused() -> None:
    with running_bot() as table:
        table.say(ANN, "/newgame")
        table.say(EVE, "/settings 30")
        assert sent_to(table, GROUP)[-1] == t("en", "refusal_chat_settings")
        assert table.game().clock == 90
        asked = len(table.tg.calls("getChatMember"))
        as_anonymous_admin(table, "/settings off")
        assert len(table.tg.calls("getChatMember")) == asked, "an anonymous admin is known"
        assert (table.record().clock, table.game().clock) == (0, 0)
        assert plain(sent_to(table, GROUP)[-1]) == "Turn clock: off."
        table.say(ANN, "/settings 45")
        assert sent_to(table, GROUP)[-1] == t("en", "refusal_bad_clock")
        table.say(ANN, "/settings ٦٠")  # Arabic-Indic digits read as the number they are
        assert table.game().clock == 60


def test_r20_the_clock_cannot_change_while_a_game_runs() -> None:
    with running_bot() as table:
        table.tg.admins.add((GROUP, ADA.id))
        table.say(ANN, "/newgame")
        shown = settings_message(table, ANN)
        table.join(ANN)
        table.join(BOB)
        table.press_button(ANN, table.group_message_with(Kind.START), Kind.START)
        running = settings_message(table, EVE)
        assert buttons(running) == [], "no button that cannot work"
        assert plain(t("en", "clock_running")) in plain(running.text)
        for person in (ANN, ADA):
            assert press_clock(table, person, shown, 30) == t("en", "clock_running")
        table.say(ADA, "/settings 30")
        assert sent_to(table, GROUP)[-1] == t("en", "clock_running")
        assert (table.record().clock, table.game().clock) == (90, 90)


def test_r20_newgame_with_seconds_sets_the_clock_of_this_game_only() -> None:
    """Anyone may open a game, so its opener chooses its clock, but the chat's setting for the
    next games stays /settings', the opener's or an admin's."""
    players = people(2)
    with running_bot() as table:
        table.say(ANN, "/newgame 45")
        assert sent_to(table, GROUP)[-1] == t("en", "refusal_bad_clock")
        assert table.record().game is None, "nothing opened"
        open_and_start(table, players, "/newgame 60")
        assert (table.game().clock, table.record().clock) == (60, 90)
        assert table_text(table).startswith("Menteur · 2 players · turn clock 60 s")
        table.say(players[0], "/stop")
        table.say(players[0], "/newgame")
        assert table.game().clock == 90, "the chat's setting, untouched"
        table.say(players[0], "/stop")
        table.say(players[0], "/newgame 180s")
        assert table.game().clock == 180
        table.say(players[0], "/settings 90")  # the opener of the chat's game
        assert table.game().clock == 90
        said = len(sent_to(table, GROUP))
        table.say(players[0], "/settings 90")  # as it is already: said so, nothing changes
        assert len(sent_to(table, GROUP)) == said + 1
        assert plain(sent_to(table, GROUP)[-1]) == plain(t("en", "note_clock", seconds=90))


def test_r20_rules_say_this_tables_clock_in_the_group_and_the_groups_choice_in_private() -> None:
    players = people(2)
    with running_bot() as table:
        open_and_start(table, players, "/newgame 30")
        table.say(players[0], "/rules")
        assert sent_to(table, GROUP)[-1] == render.rules("en", 30)
        assert plain(t("en", "rules_clock", seconds=30)) in plain(sent_to(table, GROUP)[-1])
        table.say(players[0], "/stop")
        table.say(players[0], "/newgame off")  # in its lobby: that game's clock
        table.say(players[0], "/rules")
        assert plain(t("en", "rules_clock_off")) in plain(sent_to(table, GROUP)[-1])
        table.say(players[0], "/rules", chat=players[0].id)
        assert sent_to(table, players[0].id)[-1] == render.rules("en", None)


# --- until when, in each reader's own time zone ------------------------------------------------


def test_r20_the_table_and_the_hand_say_until_when_in_a_date_time_entity() -> None:
    players = [
        Person(101, "🌙 أمل", "ar"),
        Person(102, "Zoë 👩‍👩‍👧", "ar"),
        Person(103, "خالد", "ar"),
    ]
    with running_bot(seed=3) as table:
        open_and_start(table, players, "/newgame 30")
        game = table.game()
        assert game.deadline is not None
        unix = int(game.deadline)
        utc = time.strftime("%H:%M:%S UTC", time.gmtime(unix))
        record = table.record()
        assert record.table_msg is not None
        shown = table.tg.message(GROUP, record.table_msg)
        person = by_id(players, game.awaited)
        hand = table.hand_message(person)
        for message in (shown, hand):
            assert message is not None and message.text is not None
            (entity,) = message.own_entities
            assert covered(message.text, entity) == utc
            assert (entity["type"], entity["unix_time"]) == ("date_time", unix)
            assert entity["date_time_format"] == "T"
        # Counted in UTF-16 units: the emoji in the names above it make that differ from a
        # count of characters.
        assert shown is not None and shown.text is not None
        assert shown.own_entities[0]["offset"] > shown.text.index(utc)
        assert "المهلة حتى" in plain(shown.text) and "ضع بطاقاتك قبل" in plain(hand.text)
        # Nobody else's hand says it; a play moves it to the next person's line.
        for other in players:
            if other != person:
                assert table.hand_message(other).own_entities == []
        play_one(table, players)
        moved = table.tg.message(GROUP, record.table_msg)
        assert moved is not None and moved.text is not None
        (entity,) = moved.own_entities
        assert entity["unix_time"] == int(table.clock.now + 30)


# --- no person left ------------------------------------------------------------------------------


def test_r20_a_game_with_no_person_left_ends_at_once_and_the_table_and_hands_say_why() -> None:
    with running_bot(seed=5) as table:
        table.say(ANN, "/newgame 30")
        table.join(ANN)
        table.say(ANN, "/addbot")
        table.say(ANN, "/addbot")
        table.press_button(ANN, table.group_message_with(Kind.START), Kind.START)
        for _ in range(200):  # Ann never plays: computers move, the clock runs out on her
            game = table.game()
            if game.phase is Phase.OVER:
                break
            due = table.record().next_look
            assert due is not None
            table.clock.now = due
            table.sweep()
        game = table.game()
        assert game.phase is Phase.OVER and game.stopped
        assert game.seat_of(ANN.id) in game.out
        why = plain(t("en", "stopped_no_person"))
        assert table_text(table).startswith("Menteur · stopped — no winner")
        assert table_text(table).endswith(why)
        # The end message says it (the reveal of how the game went follows it).
        assert any(why in plain(m).splitlines() for m in sent_to(table, GROUP)), "a message says it"
        assert plain(table.hand_message(ANN).text) == f"{plain(t('en', 'hand_out'))}\n{why}"
        assert plain(sent_to(table, ANN.id)[-1]) == plain(
            t("en", "clock_forfeit", group=GROUP_TITLE)
        )
        assert table.record().next_look is None, "nothing left to time"


def test_r20_before_any_game_an_admin_sets_the_clock_of_the_first() -> None:
    ada = Person(ADA.id, "Ada", "ar")
    with running_bot() as table:
        table.tg.admins.add((GROUP, ada.id))
        table.say(ANN, "/settings 30")
        assert sent_to(table, GROUP)[-1] == t("en", "refusal_chat_settings")
        table.say(ada, "/settings 30")
        record = table.record()
        assert (record.clock, record.lang) == (30, "ar"), "the group speaks its first setter's"
        table.say(ANN, "/newgame")
        assert table.game().clock == 30


@LANGS
def test_r20_the_opener_sets_this_games_clock_only_and_the_chats_stays_an_admins(
    lang: str,
) -> None:
    """Tried as a hostile member would: refused /settings off, they opened a game, turned the
    chat's clock off from its lobby, and it stayed off for every later game."""
    eve = Person(EVE.id, EVE.name, lang)
    with running_bot() as table:
        table.tg.admins.add((GROUP, ADA.id))
        table.say(ADA, "/settings 60")  # the chat's clock: an administrator's
        table.say(eve, "/settings off")
        assert sent_to(table, GROUP)[-1] == t(lang, "refusal_chat_settings")
        assert table.record().clock == 60
        table.say(eve, "/newgame")
        table.say(eve, "/settings off")
        assert (table.game().clock, table.record().clock) == (0, 60), "this game's clock only"
        assert "Turn clock: off (/settings)." in table_text(table)
        table.say(eve, "/stop")
        table.say(eve, "/settings off")  # their game is over: nothing of theirs to set
        assert sent_to(table, GROUP)[-1] == t(lang, "refusal_chat_settings")
        table.say(ANN, "/newgame")
        assert table.game().clock == 60, "the next game has the chat's clock"
        table.say(eve, "/settings 30")  # not the opener of this one
        assert sent_to(table, GROUP)[-1] == t(lang, "refusal_chat_settings")
        assert table.game().clock == 60
        as_anonymous_admin(table, "/settings 180")
        assert (table.game().clock, table.record().clock) == (180, 180)


# --- every instant in its turn: the table's play seen, late timers caught up -------------------


def fire_due(table: Table, late: float = 0.3) -> None:
    """The SQS message set for the record's `due`, delivered `late` seconds after it, as SQS
    delivers delay messages."""
    due = table.record().next_look
    assert due is not None
    table.clock.now = max(table.clock.now, due + late)
    fire(table, due)


def shown_plays(texts: list[str], name: str) -> int:
    """How many of the table's successive texts newly told a play by `name`."""
    notes = [text.split("\n")[-1] for text in texts]
    told = [n for i, n in enumerate(notes) if i == 0 or n != notes[i - 1]]
    return sum(n.startswith((f"{name}: Called", f"No play from {name} in")) for n in told)


def test_r20_the_tables_play_before_a_computer_player_is_seen_and_open_to_liar() -> None:
    ann, bob = Person(101, "Ann"), Person(102, "Bob")
    with running_bot(seed=5) as table:
        table.say(ann, "/newgame 30")
        table.join(ann)
        table.join(bob)
        table.say(ann, "/addbot")
        table.press_button(ann, table.group_message_with(Kind.START), Kind.START)
        ids = table.game().ids
        robot = next(p for p in ids if p < 0)
        silent = by_id([ann, bob], ids[ids.index(robot) - 1])  # the seat before the computer
        other = bob if silent is ann else ann
        texts: list[str] = []
        for _ in range(12):  # the others play until it is the silent person's turn
            game = table.game()
            if game.awaited == silent.id and game.phase is Phase.PLAY:
                break
            if game.awaited == other.id and game.phase is Phase.PLAY:
                table.play(other, {min(table.hand(other))})
            else:
                fire_due(table)
            texts.append(table_text(table))
        game = table.game()
        assert game.awaited == silent.id and game.deadline is not None
        deadline = game.deadline
        fire_due(table)  # the reminder
        assert table.game() == game and table.record().next_look == deadline
        fire_due(table)  # the deadline, its message delivered 0.3 s late
        texts.append(table_text(table))
        played = table.game()
        assert played.plays == game.plays + 1 and played.awaited == robot, "the table alone"
        assert played.last is not None and played.ids[played.last.seat] == silent.id
        n, rank = played.last.cards.bit_count(), RANKS[played.last.rank]
        assert table_text(table).split("\n")[-1] == (
            f"No play from {silent.name} in 30 s: the table played for them (Called: {n} × {rank})."
        )
        due = table.record().next_look
        assert due is not None and 3.0 <= due - deadline <= 5.0, "the computer takes its time"
        # One second later, a Liar! is judged against the table's play.
        table.clock.now = deadline + 1
        table.press_button(other, table.group_message_with(Kind.SHOUT), Kind.SHOUT)
        challenged = table.game()
        assert challenged.shouted == challenged.ids.index(other.id) and challenged.pile == 0
        lie = is_lie(played.last.cards, played.last.rank)
        loser = silent if lie else other
        held = played.hands[played.ids.index(loser.id)].bit_count()
        assert len(table.hand(loser)) == held + played.pile.bit_count(), "the pile, picked up"
        texts.append(table_text(table))
        table.say(ann, "/stop")
        # The reveal counts the plays the group was shown, the table's included.
        stats = view(table.game(), None, table.clock.now).stats
        for person in (ann, bob):
            made = next(s.plays for s in stats if s.player == person.id)
            assert made == shown_plays(texts, person.name), person.name


def test_r20_one_tick_catches_up_every_deadline_missed_while_the_timer_was_down() -> None:
    players = people(3)
    with running_bot(seed=3) as table:
        open_and_start(table, players, "/newgame 30")
        stored, started = table.game(), table.clock.now
        version = table.record().version
        private = {p.id: len(sent_to(table, p.id)) for p in players}
        table.clock.now = started + 200  # no timer fired for 200 s
        table.sweep()
        caught_up, events = settle(stored, started + 200)
        assert table.game() == caught_up and table.record().version == version + 1
        # In order, each at its own time: three run-outs, then the second ones forfeit.
        assert [type(e) for e in events if isinstance(e, ev.TablePlayed | ev.Forfeited)] == [
            ev.TablePlayed,
            ev.TablePlayed,
            ev.TablePlayed,
            ev.Forfeited,
            ev.Forfeited,
        ]
        assert caught_up.phase is Phase.OVER and caught_up.updated == started + 150
        # No reminder for a turn already decided; the forfeits are told in private.
        for person in players:
            new = [plain(s) for s in sent_to(table, person.id)[private[person.id] :]]
            assert not any("left to play" in s for s in new), person.name


def test_r20_a_late_timer_gives_the_next_person_their_clock_from_the_deadline() -> None:
    players = people(2)
    with running_bot(seed=3) as table:
        open_and_start(table, players, "/newgame 30")
        started = table.clock.now
        table.clock.now = started + 50  # the sweep, 20 s after the run-out
        table.sweep()
        game = table.game()
        assert game.plays == 1 and game.deadline == started + 60
        assert table.record().next_look == started + 50, "the reminder at a third of 30 s left"


def test_a_forged_language_button_is_refused_without_a_question_to_telegram() -> None:
    """A language no button offers (a forged index) changes nothing, and costs no
    getChatMember: as a clock no button offers."""
    ann = people(2)[0]
    with running_bot(seed=5) as table:
        table.say(ann, "/newgame")
        table.say(ann, "/language")
        prompt = table.latest(GROUP)
        shown = next(
            b for b in buttons(prompt) if callbacks.decode(b["callback_data"]).kind is Kind.LANGUAGE
        )
        press = callbacks.decode(shown["callback_data"])
        forged = callbacks.encode(dataclasses.replace(press, number=35))
        version, asked = table.record().version, len(table.tg.calls("getChatMember"))
        reply = table.press(ann, GROUP, prompt.message_id, forged)
        assert reply.status == 200 and reply.text
        assert len(table.tg.calls("getChatMember")) == asked, "no question asked"
        assert table.record().version == version, "nothing written"
