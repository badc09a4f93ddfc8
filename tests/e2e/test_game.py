"""Whole games through the webhook handler, with real update JSON, in every catalogue's language."""

from __future__ import annotations

import pytest

from engine import Phase, card_name
from engine.cards import rank_of
from handlers.callbacks import Kind
from handlers.text import DEFAULT, SUPPORTED, t
from infra.harness import GROUP, Person, by_id, people
from infra.harness.bot import Table, Watcher, open_and_start, play_to_a_final_play, running_bot
from infra.harness.screens import button, buttons


def truthful_or_any(table: Table, person: Person, at_most: int = 4) -> set[int]:
    """The cards of the expected rank when the player holds some; any cards otherwise."""
    hand, rank = table.hand(person), table.game().rank
    true = {c for c in hand if rank_of(c) == rank}
    return true or set(sorted(hand)[:at_most])


@pytest.mark.parametrize("lang", SUPPORTED)
def test_a_three_player_game_from_newgame_to_the_final_ranking(lang: str) -> None:
    play_a_whole_game(lang)


def play_a_whole_game(lang: str) -> None:
    """/language, then a game of three people whose apps speak `lang`, by buttons, to its final
    ranking: a lie exposed, a true play challenged, a final play let stand."""
    players = people(3, lang)
    with running_bot(seed=11) as table:
        if lang != DEFAULT:
            # Before any game, the group's language is an administrator's to choose.
            table.tg.admins.add((GROUP, players[0].id))
            table.say(players[0], "/language")
            prompt = table.latest(GROUP)
            offered = [b["text"] for b in buttons(prompt)]
            assert offered == [t(code, "language_name") for code in SUPPORTED]
            chosen = next(
                b["callback_data"]
                for b in buttons(prompt)
                if b["callback_data"].endswith(f".{SUPPORTED.index(lang)}")
            )
            table.press(players[0], GROUP, prompt.message_id, chosen)
            assert table.record().lang == lang
            assert table.tg.messages_to(GROUP)[-1] == t(lang, "language_set")
        watcher = Watcher(table, players)
        open_and_start(table, players)
        watcher.check()

        # A lie, exposed by the next player: the liar picks up.
        game = table.game()
        liar = by_id(players, game.awaited)
        expected = game.rank
        lie = {next(c for c in sorted(table.hand(liar)) if rank_of(c) != expected)}
        table.play(liar, lie)
        accuser = by_id(players, table.game().awaited)
        before = len(table.hand(liar))
        table.press_button(accuser, table.group_message_with(Kind.SHOUT), Kind.SHOUT)
        watcher.reveal(lie)
        assert len(table.hand(liar)) == before + 1
        assert table.game().awaited == accuser.id and table.game().rank == expected
        watcher.check()
        reveal = table.tg.messages_to(GROUP)[-2:]
        assert any(card_name(next(iter(lie))) in text for text in reveal)

        # A true play, challenged from the group: the accuser picks up.
        for _ in range(20):
            game = table.game()
            person = by_id(players, game.awaited)
            true = {c for c in table.hand(person) if rank_of(c) == game.rank}
            if true:
                break
            table.play(person, truthful_or_any(table, person))
            watcher.check()
        table.play(person, true)
        challenger = next(p for p in players if p.id not in (person.id,))
        bullets = table.game().bullets[table.game().ids.index(challenger.id)]
        table.press_button(challenger, table.group_message_with(Kind.SHOUT), Kind.SHOUT)
        watcher.reveal(true)
        game = table.game()
        assert game.bullets[game.ids.index(challenger.id)] == bullets - 1
        assert game.awaited == person.id
        watcher.check()

        # Play on to a final play; the next player lets it stand by the button.
        finisher = play_to_a_final_play(table, players, watcher)
        decider = by_id(players, table.game().awaited)
        final = table.group_message_with(Kind.STAND)
        table.press_button(decider, final, Kind.STAND)
        game = table.game()
        assert game.phase is Phase.OVER and game.winner is not None
        assert game.ids[game.winner] == finisher.id
        end = table.tg.messages_to(GROUP)[-3:]
        assert any(finisher.name in text and text.count("\n") >= 3 for text in end), end
        assert any(t(lang, "final_ranking") in text for text in end), "in the group's language"
        watcher.check()
        # Every private hand message lost its buttons; the group's buttons are gone too.
        for person in players:
            assert button(table.hand_message(person), Kind.PLAY) is None
            over = t(lang, "hand_over_won", name=finisher.name)
            assert over in (table.hand_message(person).text or ""), "in their own language"
        table_msg = table.record().table_msg
        assert table_msg is not None
        shown = table.tg.message(GROUP, table_msg)
        assert shown is not None and button(shown, Kind.SHOUT) is None


def test_a_final_play_left_alone_for_45_seconds_is_let_stand_by_the_table() -> None:
    players = people()
    with running_bot(seed=3) as table:
        watcher = Watcher(table, players)
        open_and_start(table, players)
        finisher = play_to_a_final_play(table, players, watcher)
        deadline = table.game().deadline
        assert deadline is not None and table.record().next_look == deadline
        assert table.timers.scheduled[-1] == (GROUP, deadline), "a timer set for the 45th second"
        table.clock.advance(44.9)
        table.sweep()
        assert table.game().phase is Phase.DECIDE, "nothing happens before the deadline"
        table.clock.advance(0.1)
        sends = len(table.tg.calls("sendMessage", chat_id=GROUP))
        table.sweep()
        table.sweep()  # a second timer at the same moment: still one announcement
        game = table.game()
        assert game.phase is Phase.OVER and game.winner is not None
        assert game.ids[game.winner] == finisher.id
        announced = table.tg.calls("sendMessage", chat_id=GROUP)[sends:]
        assert len(announced) == 1
        assert finisher.name in announced[0].params["text"]
        assert "45" in announced[0].params["text"] or "table" in announced[0].params["text"]
        watcher.check()


def test_join_during_a_game_says_it_has_started_and_a_repeated_language_choice_writes_nothing() -> (
    None
):
    players = people()
    with running_bot(seed=3) as table:
        open_and_start(table, players)
        table.say(Person(999, "Late"), "/join")
        assert table.tg.messages_to(GROUP)[-1] == "The game has already started."
        table.tg.admins.add((GROUP, players[0].id))  # while a game runs: an admin's choice
        table.say(players[0], "/language")
        prompt = table.latest(GROUP)
        english = next(b["callback_data"] for b in buttons(prompt) if b["text"] == "English")
        version = table.record().version
        table.press(players[0], GROUP, prompt.message_id, english)
        assert table.record().version == version


def test_r6_a_play_button_drawn_before_a_challenge_is_stale_after_it() -> None:
    """The case seen in a group: Bob's Play button, drawn while he could still shout, was
    accepted after his own Liar! had changed the rank he had to call."""
    players = people(3)
    with running_bot(seed=5) as table:
        open_and_start(table, players)
        game = table.game()
        first = by_id(players, game.awaited)
        second = by_id(players, game.ids[(game.ids.index(first.id) + 1) % 3])
        lie = min(c for c in table.hand(first) if rank_of(c) != game.rank)
        table.play(first, {lie})
        drawn_for = table.game().rank
        drawn = table.select(second, {min(table.hand(second))})
        stale = button(drawn, Kind.PLAY)
        assert stale is not None
        table.press_button(second, table.group_message_with(Kind.SHOUT), Kind.SHOUT)
        after = table.game()
        # The lie caught: Bob plays on, but under the rank of the caught play (R11), not the
        # one his button was drawn for.
        assert after.awaited == second.id and after.rank != drawn_for
        response = table.press(second, second.id, drawn.message_id, stale)
        assert response.text == t("en", "refusal_stale")
        assert table.game() == after, "nothing changed"
