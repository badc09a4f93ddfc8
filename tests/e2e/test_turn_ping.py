"""Told when your turn comes: the hand of the person whose turn (to play, or to decide on a final
play) a move brings is sent anew, which notifies where an edit does not; the old hand message
loses its buttons, so that one hand message has buttons at any time. Nobody is told twice a
turn, and someone who pressed a button a moment ago is looking already."""

from __future__ import annotations

from engine import Phase
from handlers.callbacks import Kind
from handlers.delivery import LOOKING_SECONDS
from tests.support import Person, by_id, people
from tests.support.bot import Table, open_and_start, running_bot
from tests.support.screens import buttons


def with_buttons(table: Table, person: Person) -> list[int]:
    """The ids of the messages in the person's private chat that still carry buttons."""
    return [m.message_id for m in table.tg.chat_messages(person.id) if buttons(m)]


def sent_to(table: Table, person: Person) -> int:
    return len(table.tg.calls("sendMessage", chat_id=person.id))


def test_the_person_whose_turn_comes_gets_their_hand_anew_and_one_hand_keeps_buttons() -> None:
    players = people(3)
    with running_bot(seed=3) as table:
        open_and_start(table, players)
        for _ in range(4):
            table.clock.advance(LOOKING_SECONDS)
            mover = by_id(players, table.game().awaited)
            nxt_seat = (table.game().ids.index(mover.id) + 1) % 3
            nxt = by_id(players, table.game().ids[nxt_seat])
            old = table.record().hand_msgs[nxt.id]
            sends, mover_sends = sent_to(table, nxt), sent_to(table, mover)
            table.play(mover, {min(table.hand(mover))})
            assert table.game().awaited == nxt.id
            # One new hand message, which notifies; the old one has lost its buttons.
            assert sent_to(table, nxt) == sends + 1
            new = table.record().hand_msgs[nxt.id]
            assert new != old
            assert with_buttons(table, nxt) == [new]
            assert table.shown_hand(nxt) == table.hand(nxt)
            assert sent_to(table, mover) == mover_sends  # the mover's hand is edited
            # A /table in the group, or the timer, tells them nothing more that turn.
            table.say(mover, "/table")
            table.tick()
            assert sent_to(table, nxt) == sends + 1


def test_whoever_pressed_a_moment_ago_is_looking_and_gets_no_ping() -> None:
    players = people(3)
    with running_bot(seed=3) as table:
        open_and_start(table, players)
        table.clock.advance(LOOKING_SECONDS)
        mover = by_id(players, table.game().awaited)
        seat = table.game().ids.index(mover.id)
        nxt = by_id(players, table.game().ids[(seat + 1) % 3])
        # The next person votes (a press, written), then the turn comes to them at once.
        table.press_button(nxt, table.group_message_with(Kind.VOTE), Kind.VOTE)
        table.clock.advance(LOOKING_SECONDS / 2)
        old = table.record().hand_msgs[nxt.id]
        sends = sent_to(table, nxt)
        table.play(mover, {min(table.hand(mover))})
        assert table.game().awaited == nxt.id
        assert sent_to(table, nxt) == sends
        assert table.record().hand_msgs[nxt.id] == old
        assert with_buttons(table, nxt) == [old]


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
        assert decider.id != game.ids[game.last.seat]
        # Their turn to decide came by the final play: the hand was sent anew, with its buttons.
        sends = [c.params.get("text") for c in table.tg.calls("sendMessage", chat_id=decider.id)]
        assert sends[-1] == table.hand_message(decider).text
        assert with_buttons(table, decider) == [table.record().hand_msgs[decider.id]]
