"""A card selection in progress survives the redraws it has nothing to do with: the cards a
person ticks live only in their hand message's buttons, so a hand drawn again for no change of
its own would untick them (issue 17 §4). A redraw owed after the group's flood limit draws the
group's screens; a re-delivered update draws the hands its move changed."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from handlers import telegram_io
from handlers.callbacks import Kind
from handlers.plan import LOOKING_SECONDS
from handlers.text import t
from infra.fake_telegram import bad_request, too_many_requests
from infra.harness import GROUP, GROUP_TITLE, Person, people
from infra.harness.bot import Table, running_bot
from infra.harness.screens import button, selected
from tests.support.corpus import Scene

pytestmark = pytest.mark.usefixtures("ptb_timedelta")


async def _no_sleep(seconds: float) -> None:
    """Waits asked for by a flood limit: never slept."""


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    deliver = functools.partial(telegram_io.deliver, sleep=_no_sleep)
    monkeypatch.setattr(telegram_io, "deliver", deliver)


@contextmanager
def started(seed: int = 11) -> Iterator[Scene]:
    """Three players, the game dealt."""
    with running_bot(seed=seed, sleep=_no_sleep) as table:
        scene = Scene(table, people())
        scene.start()
        yield scene


def sent_to(table: Table, person: Person) -> list[str]:
    """The texts of the new messages sent into the person's private chat, in order."""
    return [str(c.params.get("text")) for c in table.tg.calls("sendMessage", chat_id=person.id)]


def ticking(scene: Scene, person: Person) -> set[int]:
    """`person` ticks two of their cards in their hand message, as a person does."""
    picked = set(sorted(scene.hand(person))[:2])
    assert selected(scene.table.select(person, picked)) == picked
    return picked


def plays_ticked(table: Table, person: Person, picked: set[int]) -> None:
    """Play 2 × RANK, pressed in the hand message as it stands, plays the ticked cards."""
    message = table.hand_message(person)
    assert selected(message) == picked, "the ticks are still there"
    held = table.hand(person)
    table.press(person, person.id, message.message_id, str(button(message, Kind.PLAY)))
    assert table.hand(person) == held - picked


def test_a_redraw_owed_after_the_groups_flood_limit_keeps_the_cards_being_ticked() -> None:
    with started() as scene:
        table = scene.table
        person = scene.awaited()
        picked = ticking(scene, person)
        other = next(p for p in scene.players if p != person)
        # Someone's reply into the group meets a long 429: a redraw is owed, of the group's.
        table.tg.fail_next("sendMessage", GROUP, error=too_many_requests(30))
        table.say(other, "/rules")
        record = table.record()
        assert record.owed is not None and not record.owed_hands
        edits = len(table.tg.calls("editMessageText", chat_id=person.id))
        table.clock.advance(31)
        table.sweep()
        assert table.record().owed is None, "paid"
        assert len(table.tg.calls("editMessageText", chat_id=person.id)) == edits
        plays_ticked(table, person, picked)


def a_hand_edit_given_up(scene: Scene) -> Person:
    """The awaited person plays, and Telegram makes their hand's edit wait 30 s: the edit is
    given up, and every hand is owed a redraw then. Returns who played."""
    table = scene.table
    mover = scene.awaited()
    table.clock.advance(LOOKING_SECONDS)
    table.tg.fail_next("editMessageText", mover.id, error=too_many_requests(30))
    scene.press_play(mover, {min(scene.hand(mover))})
    record = table.record()
    assert record.owed is not None and record.owed_hands
    return mover


def test_a_redraw_owed_for_a_hand_given_up_draws_the_hands_again() -> None:
    with started() as scene:
        table = scene.table
        mover = a_hand_edit_given_up(scene)
        assert table.shown_hand(mover) != table.hand(mover), "stale for now"
        table.clock.advance(31)
        table.sweep()
        record = table.record()
        assert record.owed is None and not record.owed_hands
        assert table.shown_hand(mover) == table.hand(mover)


def test_a_tick_that_pays_a_redraw_of_every_hand_still_pings_whose_turn_it_brings() -> None:
    with started() as scene:
        table = scene.table
        mover = a_hand_edit_given_up(scene)
        silent = scene.awaited()
        # Past the silent person's clock too: one tick pays the redraw and plays for them.
        moment = table.game().turns
        nxt = next(p for p in scene.players if p not in (mover, silent))
        told = sent_to(table, nxt)
        table.clock.advance(table.game().clock + 1)
        table.sweep()
        assert table.game().turns == moment + 1 and table.record().owed is None
        assert scene.awaited() == nxt, "the table played for the silent person"
        assert sent_to(table, nxt) == [*told, t("en", "ping_play", group=GROUP_TITLE)]


def test_a_retried_update_of_someone_elses_move_keeps_the_cards_being_ticked() -> None:
    with started() as scene:
        table = scene.table
        person = scene.awaited()
        other = next(p for p in scene.players if p != person)
        # Someone else votes to end the game: their update, as Telegram will deliver it again.
        vote = table.group_message_with(Kind.VOTE)
        data = str(button(vote, Kind.VOTE))
        update = scene.press_update(other, GROUP, vote.message_id, data)
        picked = ticking(scene, person)
        table.post(update)
        assert table.game().votes != 0
        version = table.record().version
        edits = len(table.tg.calls("editMessageText", chat_id=person.id))
        table.post(update)  # the retry: applied once, its screens drawn again
        assert table.record().version == version
        assert len(table.tg.calls("editMessageText", chat_id=person.id)) == edits
        plays_ticked(table, person, picked)


def test_a_retried_update_draws_again_the_hands_its_move_changed() -> None:
    with started() as scene:
        table = scene.table
        mover = scene.awaited()
        data = scene.play_data(mover, {min(scene.hand(mover))})
        update = scene.press_update(mover, mover.id, scene.hand_message_id(mover), data)
        # The first delivery commits, and the mover's hand is not drawn (as if it died first).
        table.tg.fail_next("editMessageText", mover.id, error=bad_request("Bad Request: lost"))
        table.post(update)
        assert table.record().owed is None
        assert table.shown_hand(mover) != table.hand(mover), "stale for now"
        third = next(p for p in scene.players if p not in (mover, scene.awaited()))
        picked = set(sorted(scene.hand(third))[:2])
        assert selected(table.select(third, picked)) == picked, "ticked while waiting"
        table.post(update)
        assert table.shown_hand(mover) == table.hand(mover), "drawn again"
        assert selected(table.hand_message(third)) == picked, "a hand the move left alone"
