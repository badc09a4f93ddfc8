"""Names that cannot act, and players you can tell apart: whole games through the webhook.

Players named like commands, mentions, tags and links, in a group whose title is one, play a
game to its end with challenges, a final play and refusals; every text the bot sends is read by
the fake Bot API the way Telegram reads it, and no command, mention, hashtag, cashtag, link or
e-mail address may cover a character of a name or of the title. Then names that read alike,
computer players, and names with nothing visible in them.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine import Phase, mask_of
from engine.cards import rank_of
from handlers import callbacks, names
from handlers.callbacks import Kind, Press
from handlers.names import ROBOT
from handlers.text import FSI, PDI, RLM, WORD_JOINER, t
from infra.entities import KINDS, find_entities
from infra.fake_telegram import blocked_by_user
from infra.harness import GROUP, Person, by_id
from infra.harness.bot import Table, running_bot
from infra.harness.screens import button
from infra.harness.updates import Reply

# The issue's names, and more that Telegram would make tappable.
ISSUE_NAMES = ["/forfeit", "/stop@yourbot", "@someone", "#tag", "$BTC", "example.com", "t.me/x"]
MORE_NAMES = [
    "https://t.me/x",
    "tg://resolve",
    "mailto:a@b.co",
    "www.x.org/y",
    "@gif",
    "$1INCH",
    "/start@menteur_test_bot",
]
TITLE = "/stop @admin #t $AB a.co t.me/x"  # cut to 24 characters when stored


def spans(text: str) -> list[tuple[int, int]]:
    """Where the isolated values of a text are (names, the title, numbers), in code points."""
    found, start = [], text.find(FSI)
    while start != -1:
        end = text.index(PDI, start)
        found.append((start, end + 1))
        start = text.find(FSI, end)
    return found


def covered(text: str) -> list[str]:
    """Each tappable entity Telegram finds in `text` that reaches into an isolated value."""
    units = [i for i, ch in enumerate(text) for _ in range(len(ch.encode("utf-16-le")) // 2)]
    units.append(len(text))
    hits = []
    for entity in find_entities(text):
        start = units[entity["offset"]]
        end = units[entity["offset"] + entity["length"]]
        if entity["type"] in KINDS and any(a < end and start < b for a, b in spans(text)):
            hits.append(f"{entity['type']} {text[start:end]!r}")
    return hits


def shown_texts(table: Table) -> list[tuple[str, str]]:
    """(method, text) of every text the bot showed: messages, edits and answers to buttons."""
    return [
        (call.method, str(call.params["text"]))
        for call in table.tg.calls()
        if call.method in ("sendMessage", "editMessageText", "answerCallbackQuery")
        and call.params.get("text")
    ]


def visible(text: str) -> str:
    return "".join(ch for ch in text if ch not in (FSI, PDI, RLM, WORD_JOINER))


def new_game(table: Table, opener: Person, title: str) -> None:
    update = table.updates.message(opener, "/newgame", GROUP)
    update["message"]["chat"]["title"] = title
    table.post(update)


def press_table(table: Table, person: Person, kind: Kind) -> Reply:
    return table.press_button(person, table.group_message_with(kind), kind)


def play_to_the_end(table: Table, players: list[Person]) -> None:
    """Truthful plays when possible, a Liar! now and then, refused presses on the way (each
    refusal naming someone), until the game is over."""
    shouted = named = 0
    for turn in range(200):
        game = table.game()
        if game.phase is Phase.OVER:
            break
        if game.phase is Phase.DECIDE:
            decider = by_id(players, game.awaited)
            other = next(p for p in players if p.id not in (decider.id, game.ids[game.last.seat]))  # type: ignore[union-attr]
            final = table.group_message_with(Kind.STAND)
            table.press_button(other, final, Kind.STAND)  # "Only … can let it stand."
            table.press_button(decider, final, Kind.STAND)
            continue
        person = by_id(players, game.awaited)
        if named < 3:  # "Not your turn — … plays."
            other = next(p for p in players if p != person and table.hand(p))
            cards = mask_of([min(table.hand(other))])
            press = Press(Kind.PLAY, GROUP, table.record().game_id, game.turns, cards=cards)
            message = table.hand_message(other).message_id
            table.press(other, other.id, message, callbacks.encode(press))
            named += 1
        hand = table.hand(person)
        true = {c for c in hand if rank_of(c) == game.rank}
        table.play(person, set(sorted(true or hand)[: 1 + turn % 3]))
        if turn % 3 == 1 and table.game().phase is Phase.PLAY and table.game().last is not None:
            after = table.game()
            armed = [p for p in players if p != person and after.bullets[after.ids.index(p.id)]]
            if len(armed) < 2:
                continue
            first, second = armed[turn % (len(armed) - 1) :][:2]
            shout = table.group_message_with(Kind.SHOUT)
            data = button(shout, Kind.SHOUT)
            assert data is not None
            table.press(first, GROUP, shout.message_id, data)
            table.press(second, GROUP, shout.message_id, data)  # "Too late: … shouted first."
            shouted += 1
    assert table.game().phase is Phase.OVER
    assert shouted and named


@pytest.mark.parametrize(
    ("lang", "hostile"),
    [("en", ISSUE_NAMES), ("ar", ISSUE_NAMES), ("en", MORE_NAMES), ("ar", MORE_NAMES)],
)
def test_no_name_or_title_is_ever_tappable_on_any_screen(lang: str, hostile: list[str]) -> None:
    players = [Person(201 + i, name, lang) for i, name in enumerate([*hostile, "a@b.co"])]
    with running_bot(seed=5) as table:
        opener = players[0]
        new_game(table, opener, TITLE)
        for person in players:
            table.join(person)
        table.tg.fail_next("sendMessage", chat_id=players[3].id, error=blocked_by_user())
        press_table(table, opener, Kind.START)
        table.say(players[3], "/hand")  # their chat works again: they get their hand
        table.say(players[1], "/stop")  # refused: not the opener
        play_to_the_end(table, players)
        shown = shown_texts(table)
        for method, text in shown:
            assert covered(text) == [], f"{method}: {text!r}"
        # The check saw every kind of screen, each naming the players.
        group = "\n".join(visible(text) for _, text in shown)
        for key in ("title_lobby", "challenge_title", "final_title", "final_ranking"):
            assert visible(t(lang, key)) in group, key
        answers = [visible(text) for method, text in shown if method == "answerCallbackQuery"]
        seated = [names.person(p.name) for p in players]
        for name in seated:
            assert name in group, name
        assert sum(any(name in answer for name in seated) for answer in answers) >= 3, answers
        joined = visible(t(lang, "join_in_private", group=names.title(TITLE)))
        assert joined in [visible(text) for _, text in shown]
        assert any(
            visible(t(lang, "unreachable", name=players[3].name)) == visible(text)
            for _, text in shown
        )


def test_players_with_the_same_name_are_told_apart_on_every_screen() -> None:
    players = [Person(301, "Sam"), Person(302, "sam"), Person(303, "Robot 1"), Person(304, "Sam")]
    with running_bot(seed=3) as table:
        table.say(players[0], "/newgame")
        for person in players[:3]:
            table.join(person)
        table.say(players[0], "/addbot")
        table.join(players[3])
        lobby = visible(table.tg.message(GROUP, table.record().table_msg or 0).text or "")  # type: ignore[union-attr]
        seats = [
            "1. Sam",
            "2. sam\u00a0²",
            "3. Robot 1",
            f"4. {ROBOT} Robot 1 · normal",
            "5. Sam\u00a0³",
        ]
        assert all(seat in lobby.split("\n") for seat in seats), lobby
        press_table(table, players[0], Kind.START)
        running = visible(table.tg.message(GROUP, table.record().table_msg or 0).text or "")  # type: ignore[union-attr]
        for name in ("Sam ·", "sam\u00a0² ·", "Robot 1 ·", f"{ROBOT} Robot 1 ·", "Sam\u00a0³ ·"):
            assert name in running, (name, running)


@pytest.mark.parametrize(("lang", "placeholder"), [("en", "Player 1"), ("ar", "لاعب 1")])
def test_a_name_with_nothing_visible_is_seated_as_player_n(lang: str, placeholder: str) -> None:
    ghost = Person(401, "\u3164\u200b", lang)
    robot = Person(402, "🤖", lang)
    opener = Person(403, "Ann", lang)
    with running_bot(seed=3) as table:
        table.say(opener, "/newgame")
        for person in (opener, ghost, robot):
            table.join(person)
        assert table.game().names == ("Ann", placeholder, placeholder.replace("1", "2"))
        private = visible(table.latest(ghost.id).text or "")
        assert private == visible(t(lang, "join_in_private", group="Friday cards"))


def test_a_long_name_is_cut_with_an_ellipsis_on_the_table() -> None:
    long = Person(501, "Bartholomew Fitzgerald-Kensington")
    with running_bot(seed=3) as table:
        table.say(long, "/newgame")
        table.join(long)
        (stored,) = table.game().names
        assert stored == "Bartholomew Fitzg…"
        lobby = visible(table.tg.message(GROUP, table.record().table_msg or 0).text or "")  # type: ignore[union-attr]
        assert "1. Bartholomew Fitzg…" in lobby.split("\n")


def test_a_first_name_of_nothing_is_seated_as_player_n_by_every_way_in() -> None:
    """The Bot API's types allow a `first_name` of "": Join's one tap, the seat link's Start and
    Play again each seat its owner as "Player N", numbered apart, and answer 200."""
    ann, tapper, linked, again = (Person(601 + i, name) for i, name in enumerate("ABCD"))
    with running_bot(seed=3) as table:

        def nameless(update: dict[str, Any], key: str) -> Reply:
            update[key]["from"]["first_name"] = ""
            update[key]["from"].pop("last_name", None)
            reply = table.post(update)
            assert reply.status == 200
            return reply

        for person in (tapper, again):  # people the bot may write to: seated at one tap
            table.say(person, "/help", person.id)
        table.say(ann, "/newgame")
        table.join(ann)
        join = table.group_message_with(Kind.JOIN)
        data = button(join, Kind.JOIN)
        assert data is not None
        nameless(table.updates.press(tapper, GROUP, join.message_id, data), "callback_query")
        link = f"/start j{GROUP}_{table.record().game_id}"
        nameless(table.updates.message(linked, link, linked.id), "message")
        assert table.game().names == ("A", "Player 1", "Player 2")
        table.say(ann, "/stop")
        end = table.group_message_with(Kind.AGAIN)
        data = button(end, Kind.AGAIN)
        assert data is not None
        nameless(table.updates.press(again, GROUP, end.message_id, data), "callback_query")
        assert table.game().phase is Phase.LOBBY
        assert table.game().names == ("Player 1",)
