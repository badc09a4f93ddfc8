"""The vote to end a game (R18): the table's End game button, pressed through the webhook by the
seated people, counted on the table against the votes needed now, refused with a reason in the
presser's language, and the end it brings told with the game's reveal (R16). The awaited person
counts, until their clock is over (90 s when it is off: a deadline the timer decides)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from engine import UNTIMED_TURN, Phase
from handlers import callbacks
from handlers.callbacks import Kind, Press
from handlers.text import FSI, PDI, RLM, SUPPORTED, t
from infra.harness import GROUP, Person
from infra.harness.bot import Table, running_bot
from infra.harness.screens import button, button_texts
from tests.support.corpus import CALLBACK_LIMIT, Scene, games

ANN = Person(101, "Ann")  # opens the game and sits
BOB = Person(102, "Bob")
CHLOE = Person(103, "Chloé")
EVE = Person(104, "Eve")  # a member of the group, not at the table


def plain(text: str) -> str:
    return text.replace(FSI, "").replace(PDI, "").replace(RLM, "")


@contextmanager
def started(
    seated: list[Person], robots: int = 0, lang: str = "en", command: str = "/newgame"
) -> Iterator[Scene]:
    """`seated` at the table (the first opened it) and `robots` computer players; started."""
    with running_bot(seed=5) as table:
        people = [Person(p.id, p.name, lang) for p in seated]
        table.say(people[0], command)
        for person in people:
            table.join(person)
        for _ in range(robots):
            table.say(people[0], "/addbot")
        table.press_button(people[0], table.group_message_with(Kind.START), Kind.START)
        assert table.game().phase is Phase.PLAY
        yield Scene(table, people)


def table_text(table: Table) -> tuple[str, str]:
    """The table message as shown: its text, and its buttons' labels."""
    message = table.tg.message(GROUP, table.record().table_msg or 0)
    assert message is not None
    return plain(message.text or ""), plain(button_texts(message))


def vote(table: Table, person: Person) -> str | None:
    """`person` presses End game on the table message; the answer to their press."""
    message = table.tg.message(GROUP, table.record().table_msg or 0)
    data = button(message, Kind.VOTE)
    assert data is not None, "the table offers End game"
    return table.press(person, GROUP, message.message_id if message else 0, data).text


def voters(scene: Scene) -> list[Person]:
    """The seated people, the awaited one last: with a clock, every one of them must vote."""
    game = scene.table.game()
    return sorted(scene.players, key=lambda p: p.id == game.awaited)


def test_r18_every_person_votes_the_awaited_one_included_and_the_game_stops() -> None:
    with started([ANN, BOB, CHLOE]) as scene:
        table = scene.table
        first, second, awaited = voters(scene)
        assert table_text(table)[1].endswith("End game"), "offered before anyone voted"

        assert vote(table, first) is None, "accepted: no refusal"
        shown, labels = table_text(table)
        assert labels.endswith("End game 1/3")
        assert shown.endswith(f"{first.name} voted to end the game (1/3).")
        assert vote(table, second) is None
        assert table_text(table)[1].endswith("End game 2/3")
        assert table.game().phase is Phase.PLAY, "the awaited person has not voted"

        sent = len(table.tg.calls("sendMessage", chat_id=GROUP))
        assert vote(table, awaited) is None
        game = table.game()
        assert game.phase is Phase.OVER and game.winner is None
        shown, labels = table_text(table)
        assert shown.startswith(t("en", "title_stopped"))
        assert shown.endswith(t("en", "stopped_vote")), "the reason, on the table"
        assert labels == "", "no button is left on the table"
        (end,) = table.tg.calls("sendMessage", chat_id=GROUP)[sent:]
        lines = plain(str(end.params["text"])).split("\n")
        assert lines[:2] == [t("en", "title_stopped"), t("en", "stopped_vote")]
        assert lines[2:4] == ["", "How the game went"]
        rows = lines[4 : 4 + len(scene.players)]
        seated = [scene.by_id(player).name for player in game.ids]
        assert [row.split(" · ")[0] for row in rows] == seated, "in seat order: no ranking"
        for person in scene.players:  # every hand says it is over, without a button
            hand = table.hand_message(person)
            assert t("en", "hand_over_stopped") in plain(hand.text or "")
            assert button(hand, Kind.PLAY) is None


@pytest.mark.parametrize("lang", SUPPORTED)
def test_r18_a_second_vote_a_stranger_and_an_old_button_are_refused_in_the_pressers_language(
    lang: str,
) -> None:
    with started([ANN, BOB, CHLOE]) as scene:
        table = scene.table
        first = Person(voters(scene)[0].id, voters(scene)[0].name, lang)
        vote(table, first)
        shown, labels = table_text(table)
        assert labels.endswith("End game 1/3")
        eve = Person(EVE.id, EVE.name, lang)
        for person, key in ((first, "refusal_already_voted"), (eve, "refusal_not_a_player")):
            before = games(scene)
            said = vote(table, person)
            assert said == t(lang, key) and len(said) <= CALLBACK_LIMIT
            assert games(scene) == before, "nothing changed"
            assert table_text(table) == (shown, labels)
        # A button of another game (forged, or from a game since replaced) acts on nothing.
        record = table.record()
        other = callbacks.encode(Press(Kind.VOTE, GROUP, record.game_id + 1))
        before = games(scene)
        said = table.press(first, GROUP, record.table_msg or 0, other).text
        assert said == t(lang, "old_game") and games(scene) == before
        # After the end, the End game of an old copy of the table is told the game is over.
        stale = callbacks.encode(Press(Kind.VOTE, GROUP, record.game_id))
        for person in voters(scene)[1:]:
            vote(table, person)
        assert table.game().phase is Phase.OVER
        said = table.press(first, GROUP, record.table_msg or 0, stale).text
        assert said == t(lang, "refusal_game_over")


def test_r18_computer_players_have_no_vote_and_are_not_waited_for() -> None:
    with started([ANN, BOB], robots=1) as scene:
        table = scene.table
        first, second = scene.players
        assert table_text(table)[1].endswith("End game")
        vote(table, first)
        assert table_text(table)[1].endswith("End game 1/2"), "the two people, not the computer"
        assert table.game().phase is Phase.PLAY
        vote(table, second)
        game = table.game()
        assert game.phase is Phase.OVER and game.winner is None
        assert table_text(table)[0].endswith(t("en", "stopped_vote"))


def test_r18_a_person_alone_with_a_computer_player_ends_the_game_by_voting() -> None:
    with started([ANN], robots=1) as scene:
        table = scene.table
        seen: set[int | None] = set()
        for _ in range(12):  # the computer player plays by the timer; Ann plays her first card
            game = table.game()
            if game.phase is not Phase.PLAY or seen == {ANN.id, -1}:
                break
            message = table.tg.message(GROUP, table.record().table_msg or 0)
            assert button(message, Kind.VOTE) is not None, "Ann has the vote, awaited or not"
            seen.add(game.awaited)
            if game.awaited == ANN.id:
                table.play(ANN, {min(table.hand(ANN))})
            else:
                table.clock.advance(6)
                table.sweep()
        assert seen == {ANN.id, -1}, "both turns were seen"
        vote(table, ANN)
        assert table.game().stopped


def test_r18_in_a_two_person_game_one_vote_ends_nothing_while_the_other_plays() -> None:
    with started([ANN, BOB], command="/newgame 30") as scene:
        table = scene.table
        game = table.game()
        other = voters(scene)[0]
        vote(table, other)
        assert table_text(table)[1].endswith("End game 1/2")
        assert game.deadline is not None
        table.clock.now = game.deadline  # the table plays for the awaited one: still 1/2
        table.sweep()
        game = table.game()
        assert game.phase is Phase.PLAY and game.plays == 1 and game.awaited == other.id
        assert table_text(table)[1].endswith("End game 1/2")


def test_r18_with_the_clock_off_the_timer_ends_the_vote_90_seconds_into_a_silent_turn() -> None:
    with started([ANN, BOB, CHLOE], command="/newgame off") as scene:
        table = scene.table
        begun = table.clock.now
        first, second, awaited = voters(scene)
        assert table.record().next_look != begun + UNTIMED_TURN, "no timer while nobody voted"
        table.clock.advance(10)
        vote(table, first)
        assert table.record().next_look == begun + UNTIMED_TURN, "the timer is set for that instant"
        table.clock.now = begun + UNTIMED_TURN  # the SQS message, on time
        table.fire(begun + UNTIMED_TURN)
        assert table.game().phase is Phase.PLAY, "the second one has not voted"
        assert table_text(table)[1].endswith("End game 1/2"), "the awaited one no longer counts"
        table.clock.advance(5)
        vote(table, second)
        game = table.game()
        assert game.stopped and game.updated == begun + UNTIMED_TURN + 5
        assert table_text(table)[0].endswith(t("en", "stopped_vote"))
        assert awaited.id not in {game.ids[s] for s in range(3) if game.votes >> s & 1}
