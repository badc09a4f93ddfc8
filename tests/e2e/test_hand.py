"""/hand in the group: the hand again in private, and one line in the group saying so; or, when
the bot may not write to the player, a button that opens the private chat and sends it there."""

from __future__ import annotations

from handlers.text import t
from infra.harness import GROUP, Person, by_id, people
from infra.harness.bot import open_and_start, running_bot
from infra.harness.screens import buttons


def test_hand_in_the_group_sends_the_hand_in_private_and_says_so_in_the_group() -> None:
    ann, bob, chloe = people(3, "en")
    bob = Person(bob.id, bob.name, "ar")  # the line is in the asker's language
    with running_bot(seed=3) as table:
        open_and_start(table, [ann, bob, chloe])
        hands = len(table.tg.calls("sendMessage", chat_id=bob.id))
        table.say(bob, "/hand")
        assert len(table.tg.calls("sendMessage", chat_id=bob.id)) == hands + 1
        assert table.shown_hand(bob) == table.hand(bob)
        said = table.latest(GROUP)
        assert said.text == t("ar", "hand_sent")
        assert not buttons(said)


def test_a_player_the_bot_cannot_write_to_gets_a_button_whose_start_sends_the_hand() -> None:
    players = people(3, "en")
    with running_bot(seed=3) as table:
        open_and_start(table, players)
        game = table.game()
        blocked = by_id(players, game.ids[-1])
        table.tg.block(blocked.id)
        # The next move that redraws their hand finds their private chat closed.
        for _ in range(len(players)):
            mover = by_id(players, table.game().awaited)
            table.play(mover, {min(table.hand(mover))})
            if blocked.id in table.record().unreachable:
                break
        assert blocked.id in table.record().unreachable
        table.tg.unblock(blocked.id)
        table.say(blocked, "/hand")
        offer = table.latest(GROUP)
        assert offer.text == t("en", "hand_blocked")
        (button,) = buttons(offer)
        url = button["url"]
        assert url.startswith("https://t.me/") and "?start=h" in url
        # Start in the private chat, with the link's payload: the hand arrives there.
        table.say(blocked, "/start " + url.split("?start=")[1], chat=blocked.id)
        assert table.shown_hand(blocked) == table.hand(blocked)
        assert blocked.id not in table.record().unreachable


def test_a_hand_link_of_an_earlier_game_sends_nothing_but_a_reason() -> None:
    players = people(3, "en")
    with running_bot(seed=3) as table:
        open_and_start(table, players)
        record = table.record()
        stale = f"/start h{GROUP}_{record.game_id + 1}"
        person = players[0]
        hands = len(table.tg.calls("sendMessage", chat_id=person.id))
        table.say(person, stale, chat=person.id)
        sent = table.tg.calls("sendMessage", chat_id=person.id)[hands:]
        # The words a link to a game one is not in gets: a link must not tell whether its chat
        # has a game (issue 24).
        assert [c.params["text"] for c in sent] == [t("en", "not_playing")]
