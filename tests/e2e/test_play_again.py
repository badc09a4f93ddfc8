"""Play again, through the webhook: the end message's Play again opens the next game for the same
people, in one press each; and what it takes to seat four people, counted."""

from __future__ import annotations

import pytest

from engine import Phase
from handlers import callbacks
from handlers.callbacks import Kind, Press
from handlers.text import SUPPORTED, t
from infra.harness import GROUP, OTHER_GROUP, Person, by_id, people
from infra.harness.bot import Table, Watcher, open_and_start, play_to_a_final_play, running_bot
from infra.harness.screens import button, buttons


def answer(table: Table) -> dict[str, object]:
    return dict(table.tg.calls("answerCallbackQuery")[-1].params)


def again(table: Table, person: Person) -> dict[str, object]:
    """Press Play again on the latest end message; the press's answer."""
    table.press_button(person, table.group_message_with(Kind.AGAIN), Kind.AGAIN)
    return answer(table)


def stopped_game(table: Table, players: list[Person], command: str = "/newgame") -> None:
    open_and_start(table, players, command)
    table.say(players[0], "/stop")
    assert table.game().phase is Phase.OVER


def test_r17_play_again_opens_the_next_game_for_the_same_people() -> None:
    ann, bob, chloe = players = people(3)
    with running_bot(seed=3) as table:
        table.say(ann, "/newgame 60")
        for person in players:
            table.join(person)
        table.say(ann, "/addbot")
        table.press_button(ann, table.group_message_with(Kind.START), Kind.START)
        table.say(ann, "/stop")
        first = table.record()
        end = table.group_message_with(Kind.AGAIN)
        # Bob presses first: he opens the next game, with its clock, and sits at once.
        assert again(table, bob).get("text") == t("en", "seated_at_once")
        record = table.record()
        game = table.game()
        assert record.game_id != first.game_id and record.previous == first.game_id
        assert game.phase is Phase.LOBBY and game.opener == bob.id and game.clock == 60
        assert first.game is not None
        assert game.ids == (-1, bob.id)  # the computer player, seated again as it was
        assert game.names[0] == first.game.names[first.game.ids.index(-1)]
        lobby = table.tg.message(GROUP, record.table_msg or 0)
        assert lobby is not None and lobby.text is not None
        not_back = next(x for x in lobby.text.splitlines() if "not back yet" in x)
        assert "Ann" in not_back and "Chloé" in not_back and "Bob" not in not_back
        # Ann presses the same Play again: seated in the new game; only Chloé is awaited.
        table.press_button(ann, end, Kind.AGAIN)
        assert table.game().ids == (-1, bob.id, ann.id)
        lobby = table.tg.message(GROUP, table.record().table_msg or 0)
        assert lobby is not None and lobby.text is not None
        not_back = next(x for x in lobby.text.splitlines() if "not back yet" in x)
        assert "Chloé" in not_back and "Ann" not in not_back
        # Pressed again by Ann: refused by the engine (she sits already); nothing changes.
        version = table.record().version
        table.press_button(ann, end, Kind.AGAIN)
        assert table.record().version == version
        table.press_button(bob, table.group_message_with(Kind.START), Kind.START)
        assert table.game().phase is Phase.PLAY
        # While it runs, Chloé's press is answered why; nothing changes.
        version = table.record().version
        table.press_button(chloe, end, Kind.AGAIN)
        assert answer(table).get("text") == t("en", "game_running")
        assert table.record().version == version
        # Once the second game is over, the first game's Play again is from an earlier game.
        table.say(bob, "/stop")
        table.press_button(chloe, end, Kind.AGAIN)
        assert answer(table).get("text") == t("en", "old_game")
        # The second game's own Play again opens a third.
        assert again(table, chloe).get("text") == t("en", "seated_at_once")
        assert table.record().previous != first.game_id


def test_play_again_by_someone_the_bot_cannot_write_to_opens_the_game_and_links() -> None:
    players = people(3)
    with running_bot(seed=3) as table:
        stopped_game(table, players)
        table.tg.block(players[2].id)
        link = again(table, players[2])
        assert "?start=j" in str(link["url"])
        assert table.game().phase is Phase.LOBBY and table.game().ids == ()
        table.tg.unblock(players[2].id)
        table.start_from_link(players[2])
        assert table.game().ids == (players[2].id,)


def test_play_again_refuses_a_non_member_and_forged_buttons_and_changes_nothing() -> None:
    players = people(3)
    outsider = Person(999, "Mallory")
    with running_bot(seed=3) as table:
        stopped_game(table, players)
        record = table.record()
        end = table.group_message_with(Kind.AGAIN)
        table.tg.set_status(GROUP, outsider.id, "left")
        table.press_button(outsider, end, Kind.AGAIN)
        assert answer(table).get("text") == t("en", "not_member")
        # A Play again for a game that never was, or naming another group.
        forged = callbacks.encode(Press(Kind.AGAIN, GROUP, record.game_id + 1))
        table.press(players[1], GROUP, end.message_id, forged)
        assert answer(table).get("text") == t("en", "old_game")
        elsewhere = callbacks.encode(Press(Kind.AGAIN, OTHER_GROUP, record.game_id))
        table.press(players[1], GROUP, end.message_id, elsewhere)
        assert answer(table).get("text") == t("en", "bad_button")
        after = table.record()
        assert (after.version, after.game_id) == (record.version, record.game_id)
        assert after.game is not None and after.game.phase is Phase.OVER


def test_the_end_message_keeps_play_again_when_the_final_buttons_go() -> None:
    players = people(3)
    with running_bot(seed=3) as table:
        stopped_game(table, players)
        end = table.group_message_with(Kind.AGAIN)
        table.say(players[0], "/table")  # a redraw takes settled buttons off, not this one
        current = table.tg.message(GROUP, end.message_id)
        assert button(current, Kind.AGAIN) is not None


class Taps:
    """What people do to take a seat, counted as the issue counts it: a press is a tap (a
    button, Start, the way back to the group); a screen change is a move between chats."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.presses = 0
        self.changes = 0

    def press(self, person: Person, kind: Kind) -> None:
        self.table.press_button(person, self.table.group_message_with(kind), kind)
        self.presses += 1
        if "url" in answer(self.table):
            self.table.start_from_link(person)
            self.presses += 2  # Start, then back to the group
            self.changes += 2  # into the private chat, and back


def test_presses_and_screen_changes_to_seat_four_people() -> None:
    players = people(4)
    with running_bot(seed=3) as table:
        table.say(players[0], "/newgame")
        first = Taps(table)
        for person in players:
            first.press(person, Kind.JOIN)
        assert len(table.game().ids) == 4
        table.press_button(players[0], table.group_message_with(Kind.START), Kind.START)
        table.say(players[0], "/stop")
        following = Taps(table)
        for person in players:
            following.press(person, Kind.AGAIN)
        assert len(table.game().ids) == 4
        # Nobody had started the bot: 3 presses and 2 screen changes a person, as before.
        assert (first.presses, first.changes) == (12, 8)
        # The next game: Play again, 1 press a person, no screen change (no /newgame either).
        assert (following.presses, following.changes) == (4, 0)
        # A game after that, opened by /newgame: Join seats them at once too.
        table.press_button(players[0], table.group_message_with(Kind.START), Kind.START)
        table.say(players[0], "/stop")
        table.say(players[0], "/newgame")
        joined = Taps(table)
        for person in players:
            joined.press(person, Kind.JOIN)
        assert (joined.presses, joined.changes) == (4, 0)


def play_to_the_end(table: Table, players: list[Person], opener: Person) -> None:
    """Start, play on to a final play, and the next player lets it stand: by buttons."""
    table.press_button(opener, table.group_message_with(Kind.START), Kind.START)
    table.clock.advance(10)
    watcher = Watcher(table, players)
    play_to_a_final_play(table, players, watcher)
    decider = by_id(players, table.game().awaited)
    table.press_button(decider, table.group_message_with(Kind.STAND), Kind.STAND)
    assert table.game().phase is Phase.OVER and table.game().winner is not None
    watcher.check()


@pytest.mark.parametrize("lang", SUPPORTED)
def test_a_whole_game_then_play_again_then_a_second_game_by_buttons(lang: str) -> None:
    players = people(3, lang)
    with running_bot(seed=11) as table:
        table.say(players[0], "/newgame")
        assert table.record().lang == lang  # the opener's language, for a new group
        first = Taps(table)
        for person in players:
            first.press(person, Kind.JOIN)
        play_to_the_end(table, players, players[0])
        end = table.group_message_with(Kind.AGAIN)
        assert t(lang, "btn_again") in [b["text"] for b in buttons(end)]
        again = Taps(table)
        again.press(players[1], Kind.AGAIN)
        lobby = table.latest(GROUP)
        assert lobby.text is not None and t(lang, "lobby_not_back") in lobby.text
        for person in (players[0], players[2]):
            again.press(person, Kind.AGAIN)
        full = table.tg.message(GROUP, table.record().table_msg or 0)
        assert full is not None and t(lang, "lobby_not_back") not in str(full.text)
        assert set(table.game().ids) == {p.id for p in players}
        assert table.game().opener == players[1].id
        play_to_the_end(table, players, players[1])
        assert (first.presses, first.changes) == (9, 6)
        assert (again.presses, again.changes) == (3, 0)
