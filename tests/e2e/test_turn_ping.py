"""Told when your turn comes: the person whose turn (to play, or to decide on a final play) a move
brings gets one short private line, which notifies where the hand's edit does not; the hand
stays the one message with buttons. Nobody is told twice a turn, and someone who pressed a
button a moment ago is looking already."""

from __future__ import annotations

import pytest

from engine import Phase
from engine.cards import rank_of
from handlers.callbacks import Kind
from handlers.plan import LOOKING_SECONDS
from handlers.text import t
from infra.harness import GROUP_TITLE, Person, by_id, people
from infra.harness.bot import Table, Watcher, open_and_start, play_to_a_final_play, running_bot
from infra.harness.screens import button, buttons, selected, shown_cards


def with_buttons(table: Table, person: Person) -> list[int]:
    """The ids of the messages in the person's private chat that carry buttons."""
    return [m.message_id for m in table.tg.chat_messages(person.id) if buttons(m)]


def sent_to(table: Table, person: Person) -> list[str]:
    """The texts of the new messages sent into the person's private chat, in order."""
    return [str(c.params.get("text")) for c in table.tg.calls("sendMessage", chat_id=person.id)]


def test_the_person_whose_turn_comes_is_told_once_and_keeps_one_hand_with_buttons() -> None:
    players = people(3)
    ping = t("en", "ping_play", group=GROUP_TITLE)
    with running_bot(seed=3) as table:
        open_and_start(table, players)
        for _ in range(4):
            table.clock.advance(LOOKING_SECONDS)
            mover = by_id(players, table.game().awaited)
            nxt = by_id(players, table.game().ids[(table.game().ids.index(mover.id) + 1) % 3])
            hand = table.record().hand_msgs[nxt.id]
            before, mover_before = sent_to(table, nxt), sent_to(table, mover)
            table.play(mover, {min(table.hand(mover))})
            assert table.game().awaited == nxt.id
            # One new message, which notifies; the hand is edited in place and keeps buttons.
            assert sent_to(table, nxt) == [*before, ping]
            assert table.record().hand_msgs[nxt.id] == hand
            assert with_buttons(table, nxt) == [hand]
            assert table.shown_hand(nxt) == table.hand(nxt)
            assert sent_to(table, mover) == mover_before  # the mover is told nothing
            # A /table in the group, or the timer, tells them nothing more that turn.
            table.say(mover, "/table")
            table.sweep()
            assert sent_to(table, nxt) == [*before, ping]


def test_whoever_pressed_a_moment_ago_is_looking_and_gets_no_ping() -> None:
    players = people(3)
    with running_bot(seed=3) as table:
        open_and_start(table, players)
        table.clock.advance(LOOKING_SECONDS)
        mover = by_id(players, table.game().awaited)
        nxt = by_id(players, table.game().ids[(table.game().ids.index(mover.id) + 1) % 3])
        # The next person votes (a press, written), then the turn comes to them at once.
        table.press_button(nxt, table.group_message_with(Kind.VOTE), Kind.VOTE)
        table.clock.advance(LOOKING_SECONDS / 2)
        before = sent_to(table, nxt)
        table.play(mover, {min(table.hand(mover))})
        assert table.game().awaited == nxt.id
        assert sent_to(table, nxt) == before
        assert table.shown_hand(nxt) == table.hand(nxt)


def test_the_person_who_decides_on_a_final_play_is_told_too() -> None:
    players = people(3)
    with running_bot(seed=3) as table:
        open_and_start(table, players)
        for _ in range(60):
            table.clock.advance(LOOKING_SECONDS)
            game = table.game()
            if game.phase is Phase.DECIDE:
                break
            mover = by_id(players, game.awaited)
            table.play(mover, set(sorted(table.hand(mover))[:4]))
        game = table.game()
        assert game.phase is Phase.DECIDE and game.last is not None
        decider = by_id(players, game.awaited)
        finalist = by_id(players, game.ids[game.last.seat])
        assert decider != finalist
        told = t("en", "ping_decide", group=GROUP_TITLE, player=finalist.name)
        assert sent_to(table, decider)[-1] == told
        assert with_buttons(table, decider) == [table.record().hand_msgs[decider.id]]


def collude(table: Table, players: list[Person], victim: Person) -> bool:
    """One press of two players keeping a third's turn coming back: the awaited one of them
    plays (a lie when they can); when the third's turn has come, the other shouts Liar! at the
    play that brought it, and wins the turn. Whether the third's turn had come."""
    table.clock.advance(2)
    game = table.game()
    if game.awaited == victim.id:
        assert game.last is not None
        last = game.ids[game.last.seat]
        shouter = next(p for p in players if p.id not in (victim.id, last))
        table.press_button(shouter, table.group_message_with(Kind.SHOUT), Kind.SHOUT)
        return True
    mover = by_id(players, game.awaited)
    hand = sorted(table.hand(mover))
    table.play(mover, {([c for c in hand if rank_of(c) != game.rank] or hand)[0]})
    return False


def test_two_players_taking_turns_cannot_ring_a_third_players_phone_at_every_press() -> None:
    """Two players lie, shout and play so that a third's turn comes back every few presses:
    that person, who pressed nothing, is told once in a minute, not each time."""
    players = people(3)
    ping = t("en", "ping_play", group=GROUP_TITLE)
    with running_bot(seed=3) as table:
        open_and_start(table, players)
        game = table.game()
        victim = by_id(players, game.ids[(game.ids.index(game.awaited or 0) + 2) % 3])
        started, turns = table.clock.now, 0
        while table.clock.now - started < 50:
            turns += collude(table, players, victim)
        assert turns >= 4, "the third player's turn came back again and again"
        assert sent_to(table, victim).count(ping) == 1, "told once in the minute"
        # A minute on, their turn coming back is told again.
        while not collude(table, players, victim) or table.clock.now - started < 70:
            pass
        assert sent_to(table, victim).count(ping) == 2


def shout_on_the_table(table: Table, person: Person) -> None:
    table.press_button(person, table.group_message_with(Kind.SHOUT), Kind.SHOUT)


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_r10_whoever_was_about_to_play_is_told_once_why_a_challenge_took_the_turn(
    lang: str,
) -> None:
    players = people(3, lang)
    with running_bot(seed=3) as table:
        open_and_start(table, players)
        game = table.game()
        mover = by_id(players, game.awaited)
        seat = game.ids.index(mover.id)
        nxt, third = (by_id(players, game.ids[(seat + step) % 3]) for step in (1, 2))
        table.play(mover, {min(table.hand(mover))})
        # The next person selects a card, about to play; someone else shouts first.
        table.select(nxt, {min(table.hand(nxt))})
        before = {p: sent_to(table, p) for p in players}
        shout_on_the_table(table, third)
        game = table.game()
        winner = by_id(players, game.awaited)
        assert winner in (mover, third) and game.phase is Phase.PLAY
        told = t(lang, "turn_taken", accuser=third.name, player=mover.name, name=winner.name)
        assert sent_to(table, nxt)[len(before[nxt]) :] == [told]
        # The hand, edited in place, shows the selection gone with the turn: no ✓, no Play.
        hand = table.hand_message(nxt)
        assert shown_cards(hand) == table.hand(nxt) and not selected(hand)
        assert button(hand, Kind.PLAY) is None
        # Once: nothing more for it, and nothing of it for the others.
        table.say(third, "/table")
        table.sweep()
        assert sent_to(table, nxt)[len(before[nxt]) :] == [told]
        for other in (mover, third):
            assert told not in sent_to(table, other)


def test_r13_whoever_was_to_decide_on_a_final_play_is_told_why_a_lie_exposed_took_it() -> None:
    players = people(3)
    with running_bot(seed=3) as table:
        open_and_start(table, players)
        watcher = Watcher(table, players)
        finalist = play_to_a_final_play(table, players, watcher)
        decider = by_id(players, table.game().awaited)
        third = next(p for p in players if p not in (finalist, decider))
        before = sent_to(table, decider)
        shout_on_the_table(table, third)
        game = table.game()
        assert game.phase is Phase.PLAY and game.awaited == third.id, "a lie: the accuser plays"
        told = t(
            "en", "turn_taken_decide", accuser=third.name, player=finalist.name, name=third.name
        )
        assert sent_to(table, decider)[len(before) :] == [told]
