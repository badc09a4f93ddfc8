"""One-tap Join, through the webhook: Join seats at once a member of the group whom the bot may
already write to in private; everyone else goes through the private chat's Start, as before."""

from __future__ import annotations

from handlers.callbacks import Kind
from handlers.text import t
from infra.harness import GROUP, people
from infra.harness.bot import Table, running_bot


def answer(table: Table) -> dict[str, object]:
    return dict(table.tg.calls("answerCallbackQuery")[-1].params)


def test_join_seats_at_once_a_member_the_bot_can_already_write_to() -> None:
    ann, bob = people(2)
    with running_bot(seed=3) as table:
        table.say(bob, "/help", chat=bob.id)  # Bob started the bot once
        table.say(ann, "/newgame")
        table.press_button(bob, table.group_message_with(Kind.JOIN), Kind.JOIN)
        assert answer(table).get("text") == t("en", "seated_at_once")
        assert "url" not in answer(table)
        assert table.game().ids == (bob.id,)
        assert bob.name in str(table.latest(GROUP).text)  # the table shows them
        # Ann never started the bot: today's link, whose Start seats her.
        table.press_button(ann, table.group_message_with(Kind.JOIN), Kind.JOIN)
        assert "?start=j" in str(answer(table)["url"])
        assert table.game().ids == (bob.id,)
        table.start_from_link(ann)
        assert table.game().ids == (bob.id, ann.id)


def test_join_gives_the_link_to_someone_who_blocked_the_bot_or_is_not_a_member() -> None:
    ann, bob, chloe = people(3)
    with running_bot(seed=3) as table:
        for person in (bob, chloe):
            table.say(person, "/help", chat=person.id)
        table.tg.block(bob.id)
        table.tg.set_status(GROUP, chloe.id, "left")
        table.say(ann, "/newgame")
        for person in (bob, chloe):
            table.press_button(person, table.group_message_with(Kind.JOIN), Kind.JOIN)
            assert "?start=j" in str(answer(table)["url"])
        assert table.game().ids == ()
        # Chloé's Start is refused as before: she is not in the group.
        table.start_from_link(chloe)
        assert table.game().ids == ()
