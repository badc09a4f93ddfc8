"""The words and the screens: catalogues, the glossary's terms, right-to-left care, and what
each screen may show (the group never a card of a hand; a hand only its owner's cards)."""

from __future__ import annotations

import dataclasses
import json
import random
import re
from collections.abc import Iterator
from dataclasses import replace
from importlib.resources import files
from pathlib import Path
from string import Formatter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import (
    DECISION_SECONDS,
    Code,
    Forfeit,
    Game,
    IllegalMove,
    Join,
    Leave,
    LetItStand,
    MenteurError,
    Phase,
    Play,
    Shout,
    Start,
    Stop,
    VoteEnd,
    apply,
    card_name,
    cards_in,
    count,
    open_table,
    settle,
    strategy,
    view,
)
from engine import events as ev
from engine.moves import Expire, Move
from handlers import announcements, names, render, text
from handlers.callbacks import MAX_BYTES, NO_RANK, Kind, Place, Press, decode
from handlers.screens import Screen
from handlers.text import FSI, PDI, RLM, SUPPORTED, isolate, language_of, t, tn
from infra.harness import T0
from tests.support.games import cards
from tests.support.games import table as dealt

CHAT = -1001234567890  # a supergroup's id: the longest kind there is
GAME_ID = 41
PLACE = Place(CHAT, GAME_ID)
NAMES = ("Ann", "شهد", "Bob", "Chloé", "دريس", "Emma", "فريد", "Gus")
SUIT = re.compile("[♠♥♦♣]")
CARD = re.compile(r"(?:10|[A2-9VDR])[♠♥♦♣]")
GROUP_KINDS = {
    Kind.JOIN,
    Kind.LEAVE,
    Kind.START,
    Kind.SHOUT,
    Kind.STAND,
    Kind.REMOVE,
    Kind.VOTE,
    Kind.AGAIN,
}


def catalogue_files() -> dict[str, dict[str, Any]]:
    folder = files("handlers").joinpath("i18n")
    return {
        item.name.removesuffix(".json"): json.loads(item.read_text(encoding="utf-8"))
        for item in folder.iterdir()
        if item.name.endswith(".json")
    }


CATALOGUES = catalogue_files()


def forms(value: str | dict[str, str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value.values())


def fields_of(template: str) -> set[str]:
    return {field for _, field, _, _ in Formatter().parse(template) if field is not None}


def entries(lang: str) -> dict[str, str | dict[str, str]]:
    return {k: v for k, v in CATALOGUES[lang].items() if not k.startswith("_")}


def plain(s: str) -> str:
    """What a reader sees: the text without its invisible direction marks."""
    return s.replace(FSI, "").replace(PDI, "").replace(RLM, "")


def lines_of(screen: Screen) -> list[str]:
    return plain(screen.text).split("\n")


def buttons(screen: Screen) -> list[tuple[str, Press]]:
    return [(plain(b.text), decode(b.data)) for row in screen.buttons for b in row if b.data]


def check_keyboard(screen: Screen) -> None:
    """Telegram's limits: <= 100 buttons, <= 8 a row, callback data <= 64 bytes and ours."""
    assert sum(len(row) for row in screen.buttons) <= 100
    for row in screen.buttons:
        assert 0 < len(row) <= 8
        for button in row:
            assert button.data is not None and len(button.data.encode()) <= MAX_BYTES
            decode(button.data)


def lobby(players: int) -> Game:
    game = open_table(1, T0, NAMES[0])
    for p in range(2, players + 1):
        game, _ = apply(game, Join(p, NAMES[p - 1]), T0)
    return game


def final_play(truth: bool = True) -> Game:
    """Ann (1) empties her hand under 5; Bob (2) decides; Chloé (3) and Driss (4) watch."""
    ann = "5♠ 5♥" if truth else "5♠ 9♥"
    game = dealt(ann, "3♠ 4♠", "6♠ 7♠", "8♠", rank="5")
    return apply(game, Play(1, cards(ann)), T0)[0]


def lie_on_the_pile() -> Game:
    """Bob (2) has just lied 9♥ 3♠ under 9 on a pile of 3; Chloé (3) is next; Driss (4) has 2."""
    game = dealt("A♠ 2♠ 9♠", "3♠ 4♠ 9♥", "5♠ 6♠", "7♠", rank="8")
    game = dataclasses.replace(game, bullets=[3, 3, 3, 2])
    game, _ = apply(game, Play(1, cards("9♠")), T0)
    return apply(game, Play(2, cards("9♥ 3♠")), T0)[0]


# --- the catalogues ----------------------------------------------------------------------------


def test_every_language_has_exactly_the_keys_and_placeholders_of_english() -> None:
    english = entries("en")
    assert "en" in CATALOGUES and len(CATALOGUES) > 1
    for lang in CATALOGUES:
        catalogue = entries(lang)
        assert catalogue.keys() == english.keys(), lang
        for key, value in catalogue.items():
            wanted = set().union(*(fields_of(f) for f in forms(english[key])))
            # A plural form may leave {n} out ("بطاقة واحدة" says one card without a digit).
            plural = isinstance(value, dict) or isinstance(english[key], dict)
            optional = {"n"} if plural else set()
            for form in forms(value):
                assert wanted - optional <= fields_of(form) <= wanted, (lang, key, form)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"btn_join": "Rejoindre {name}"}, "placeholders"),  # a value English has not
        ({"winner": "Victoire."}, "placeholders"),  # English's {name} left out
        ({"btn_join": None}, "missing"),
        ({"btn_joinn": "Rejoindre"}, "unknown"),
        ({"_plural": "xx"}, "_plural"),
        ({"hand_title": {"few": "{n} cartes", "other": "{n} cartes"}}, "plural forms"),
        ({"_dir": "up"}, "_dir"),
    ],
)
def test_a_catalogue_unlike_english_fails_the_check(change: dict[str, Any], reason: str) -> None:
    raw = {**CATALOGUES["fr"], **change}
    raw = {key: value for key, value in raw.items() if value is not None}
    english = text._parse("en", CATALOGUES["en"])
    with pytest.raises(text.CatalogueError, match=reason):
        text._check({"en": english, "fr": text._parse("fr", raw)})
    text._check({"en": english, "fr": text._parse("fr", CATALOGUES["fr"])})  # as it is: fine


def test_the_bots_own_check_passes_every_catalogue() -> None:
    # The bot reads a language's file when the language is first used; this check, run here and
    # by the registration at a deploy, is what stops a bad file.
    assert set(text.catalogues()) == set(CATALOGUES) == set(text.SUPPORTED)
    assert text.SUPPORTED[0] == text.DEFAULT


def test_each_catalogue_names_its_plural_rule_and_uses_only_its_categories() -> None:
    for lang, raw in CATALOGUES.items():
        rule = raw["_plural"]
        assert rule in text.PLURAL_RULES
        assert raw.get("_dir", "ltr") in ("ltr", "rtl")
        categories = text.PLURAL_RULES[rule][1]
        for key, value in entries(lang).items():
            if isinstance(value, dict):
                assert "other" in value and set(value) <= categories, (lang, key)


@pytest.mark.parametrize(
    ("n", "category"),
    [
        (0, "zero"),
        (1, "one"),
        (2, "two"),
        (3, "few"),
        (10, "few"),
        (11, "many"),
        (45, "many"),
        (99, "many"),
        (100, "other"),
        (102, "other"),
        (103, "few"),
        (111, "many"),
    ],
)
def test_arabic_plural_categories_follow_cldr(n: int, category: str) -> None:
    assert text.PLURAL_RULES["ar"][0](n) == category


@pytest.mark.parametrize(("n", "category"), [(0, "one"), (1, "one"), (2, "other"), (100, "other")])
def test_french_says_zero_and_one_in_the_singular(n: int, category: str) -> None:
    assert text.PLURAL_RULES["fr"][0](n) == category


def test_plurals_pick_the_form_for_n_and_fall_back_to_other() -> None:
    assert plain(tn("en", "hand_title", 1)) == "Your hand · 1 card"
    assert plain(tn("en", "hand_title", 0)) == "Your hand · 0 cards"
    assert plain(tn("ar", "hand_title", 1)) == "يدك · بطاقة واحدة"
    assert plain(tn("ar", "hand_title", 2)) == "يدك · بطاقتان"
    assert plain(tn("ar", "hand_title", 9)) == "يدك · 9 بطاقات"
    assert plain(tn("ar", "hand_title", 11)) == "يدك · 11 بطاقة"  # no "many" form: "other"
    assert plain(tn("ar", "title_running", 4)) == "Menteur · 4 لاعبين"
    assert plain(tn("fr", "hand_title", 0)) == "Votre main · 0 carte"
    assert plain(tn("fr", "hand_title", 1)) == "Votre main · 1 carte"
    assert plain(tn("fr", "hand_title", 2)) == "Votre main · 2 cartes"


def test_supported_languages_are_english_first_then_one_per_catalogue_file() -> None:
    assert ("en", *sorted(set(CATALOGUES) - {"en"})) == SUPPORTED
    glossaries = {item.name.split(".")[1] for item in GLOSSARIES.glob("glossary.*.txt")}
    assert glossaries == set(CATALOGUES), "a language is a catalogue and its glossary"


@pytest.mark.parametrize(
    ("code", "lang"),
    [
        ("ar", "ar"),
        ("ar-EG", "ar"),
        ("AR_sa", "ar"),
        ("en-US", "en"),
        ("en", "en"),
        (None, "en"),
        ("", "en"),
        ("fr", "fr"),
        ("fr-CA", "fr"),
        ("FR_be", "fr"),
        ("de-AT", "en"),
        ("zh-hans", "en"),
    ],
)
def test_telegram_language_codes_map_to_a_supported_language(code: str | None, lang: str) -> None:
    assert language_of(code) == lang


def test_an_unsupported_language_speaks_english() -> None:
    assert t("de", "btn_liar") == t("en", "btn_liar") == "Liar!"


def test_the_command_menu_describes_every_command_in_every_language() -> None:
    wanted = [
        "newgame",
        "join",
        "leave",
        "forfeit",
        "stop",
        "hand",
        "table",
        "addbot",
        "rules",
        "language",
        "settings",
        "kick",
        "help",
    ]
    for lang in SUPPORTED:
        menu = text.commands(lang)
        assert [name for name, _ in menu] == wanted
        for _, description in menu:
            assert 0 < len(description) <= 256
            assert not set(description) & {FSI, PDI, RLM}


# --- the glossary's words ------------------------------------------------------------------------

# The user's own words (shared/seeds/glossary.*.txt, and the French one written in their form),
# read from the glossaries copied beside the catalogues: each term heads a line, "Term: what it
# means" (French sets its colon off with a no-break space), in English's order.
GLOSSARIES = Path(__file__).resolve().parents[2] / "handlers" / "i18n"
SEEDS = Path(__file__).resolve().parents[3] / "shared" / "seeds"  # their source, when present
# English's running text also says these, as its glossary's definitions do.
RUNNING_TEXT = {"en": ("picks up", "bullets", "Called: 2 × R")}


def glossary(lang: str) -> str:
    return (GLOSSARIES / f"glossary.{lang}.txt").read_text(encoding="utf-8")


def glossary_terms(lang: str) -> list[str]:
    headings = [line.split(":")[0] for line in glossary(lang).splitlines() if ": " in line]
    return [h.rstrip("\u00a0\u202f ") for h in headings if len(h) < 25]


def test_every_glossary_names_the_twelve_terms_of_english() -> None:
    assert glossary_terms("en") == [
        "Call",
        "Bullet",
        "Final ranking",
        "Challenge",
        "Final play",
        "Let it stand",
        "Lie",
        "Liar!",
        "Play",
        "Pick up",
        "Expected rank",
        "Pile",
    ]
    for lang in SUPPORTED:
        terms = glossary_terms(lang)
        assert len(terms) == len(set(terms)) == 12, lang


@pytest.mark.parametrize("lang", SUPPORTED)
def test_every_glossary_term_appears_verbatim_in_its_catalogue(lang: str) -> None:
    everything = "\n".join(f for value in entries(lang).values() for f in forms(value))
    for term in (*glossary_terms(lang), *RUNNING_TEXT.get(lang, ())):
        assert term in everything, term
    # The call is written as the glossary's example shows it: "Called: 2 × R".
    assert plain(t(lang, "call", n=2, rank="R")) in glossary(lang)


@pytest.mark.parametrize("lang", SUPPORTED)
def test_the_screens_name_things_with_the_glossary_words(lang: str) -> None:
    # The glossaries list their terms in the same order: English term -> this language's.
    en = dict(zip(glossary_terms("en"), glossary_terms(lang), strict=True))
    assert plain(t(lang, "btn_liar")) == en["Liar!"]
    assert plain(t(lang, "btn_stand")) == en["Let it stand"]
    assert plain(t(lang, "final_ranking")) == en["Final ranking"]
    assert plain(t(lang, "challenge_title")) == en["Challenge"]
    assert plain(t(lang, "final_title")) == en["Final play"]
    status = plain(tn(lang, "status", 12, rank="7"))
    assert re.match(re.escape(en["Expected rank"]) + r"\s?: 7", status) and en["Pile"] in status


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the glossaries' source is not beside the clone")
def test_the_copied_glossaries_are_the_users_own() -> None:
    seeded = [f"glossary.{lang}.txt" for lang in SUPPORTED]
    seeded = [name for name in seeded if (SEEDS / name).exists()]  # French is written here
    assert "glossary.en.txt" in seeded
    for name in seeded:
        assert (GLOSSARIES / name).read_bytes() == (SEEDS / name).read_bytes(), name


# English's words for its buttons and its glossary's terms: none is left untranslated on another
# language's screen (the rank letters and "Menteur", the game's name, are no English words).
ENGLISH_UI = sorted(
    {
        word
        for key, value in entries("en").items()
        if key.startswith("btn_") or key == "join_button"
        for form in forms(value)
        if len(word := re.sub(r"\{\w+\}|[^\w ]", "", form).strip()) > 2
    }
    | set(glossary_terms("en"))
)


# Where the private chat's Start is meant, Telegram's own button, which an app may show in English.
TELEGRAMS_OWN = {("hand_blocked", "Start"), ("unreachable", "Start")}


@pytest.mark.parametrize("lang", [lang for lang in SUPPORTED if lang != "en"])
def test_no_english_ui_word_is_left_on_another_languages_screen(lang: str) -> None:
    assert {"Join", "Liar!", "End game", "Let it stand", "Pile"} <= set(ENGLISH_UI)
    for key, value in entries(lang).items():
        for form in forms(value):
            # Its own words, not values or commands (the bot's, or the shell's: the offline table
            # quotes the one that runs it).
            said = re.sub(r"\{\w+\}|/\w+|python3 infra/dev\.py \w+", "", form)
            for word in ENGLISH_UI:
                found = re.search(rf"\b{re.escape(word.rstrip('!'))}\b", said, re.IGNORECASE)
                assert found is None or (key, word) in TELEGRAMS_OWN, (key, word)


def term(lang: str, english: str) -> str:
    """The glossary's word in `lang` for the English term (the glossaries list them in order)."""
    return dict(zip(glossary_terms("en"), glossary_terms(lang), strict=True))[english]


# The glossary's site (pearls, leaderboard, experience) means nothing in a Telegram group.
SITE_WORDS = {
    "en": ("pearl", "leaderboard", "experience"),
    "ar": ("لآلئ", "لوحة الصدارة", "خبرة"),
    "fr": ("perle", "palmarès", "expérience"),
}
NOTHING_SCORED = {
    "en": "Nothing is scored beyond the Final ranking.",
    "ar": "غير الترتيب النهائي",
    "fr": "Rien ne compte au-delà du Classement final.",
}


@pytest.mark.parametrize("lang", SUPPORTED)
def test_r16_the_rules_end_saying_nothing_is_scored_beyond_the_final_ranking(lang: str) -> None:
    for key, value in entries(lang).items():
        for form in forms(value):
            assert not [w for w in SITE_WORDS[lang] if w in form.lower()], key
    last = plain(render.rules(lang, 90)).split("\n")[-1]
    assert NOTHING_SCORED[lang] in last
    assert term(lang, "Final ranking") in last


# What the letters V, D and R stand for, in the reader's words (R2), said once: in /rules.
RANK_WORDS = {
    "en": ("Valet", "Dame", "Roi", "Jack", "Queen", "King"),
    "ar": ("الآس", "الولد", "الدامة", "الملك"),
    "fr": ("Valet", "Dame", "Roi"),
}


@pytest.mark.parametrize("lang", SUPPORTED)
def test_r2_the_rules_say_once_what_v_d_and_r_are(lang: str) -> None:
    rules = plain(render.rules(lang, None)).split("\n")
    line = next(x for x in rules if re.search(r"\bV\b", x) and re.search(r"\bD\b", x))
    assert re.match("• " + re.escape(term(lang, "Expected rank")) + r"\s?: A", line), line
    for word in RANK_WORDS[lang]:
        assert word in line, word
        explained = [k for k, v in entries(lang).items() if any(word in f for f in forms(v))]
        assert explained == ["rules"], word


@pytest.mark.parametrize("lang", SUPPORTED)
def test_r20_the_rules_say_the_clock_of_the_table_they_are_asked_at(lang: str) -> None:
    at_30, off, anywhere = (plain(render.rules(lang, s)) for s in (30, 0, None))
    assert plain(t(lang, "rules_clock", seconds=30)) in at_30.split("\n")
    assert plain(t(lang, "rules_clock_off")) in off.split("\n")
    assert plain(t(lang, "rules_clock_any")) in anywhere.split("\n")
    # Only the clock's line differs, and it is the only one about the clock.
    for said in (at_30, off):
        assert "90" not in said and len(said.split("\n")) == len(anywhere.split("\n"))


@pytest.mark.parametrize("lang", SUPPORTED)
def test_your_turn_says_the_cards_are_called_as_the_expected_rank_not_under_it(lang: str) -> None:
    line = plain(t(lang, "hand_your_turn", rank="3"))
    assert " under " not in line and " sous " not in line
    assert {"en": "called as 3", "ar": "تُعلَن على أنها 3", "fr": "L’annonce dira 3"}[lang] in line
    assert {"en": "play", "ar": "ضع", "fr": "jouez"}[lang] in line  # the glossary's Play


def test_rank_letters_and_digits_stay_latin_in_arabic() -> None:
    called = t("ar", "call", n=2, rank="R")
    assert called == RLM + "أُعلن: " + FSI + "2 × R" + PDI
    assert plain(called) == "أُعلن: 2 × R"
    assert plain(t("ar", "btn_play", n=3, rank="V")).endswith("3 × V")


# --- right to left ----------------------------------------------------------------------------


def test_isolate_makes_a_name_one_unit_and_strips_its_direction_controls() -> None:
    assert isolate("Ann") == FSI + "Ann" + PDI
    assert isolate("شهد") == FSI + "شهد" + PDI
    assert isolate("\u202eevil\u2069\u200f") == FSI + "evil" + PDI


def test_values_joined_by_times_form_one_isolated_chunk_and_names_are_isolated() -> None:
    assert t("en", "call", n=2, rank="R") == "Called: " + FSI + "2 × R" + PDI
    line = t("en", "call_by", n=2, rank="6", name="شهد")
    assert line == f"Called: {FSI}2 × 6{PDI} ({FSI}شهد{PDI})"


def test_every_arabic_text_starts_each_line_with_rlm_and_english_has_none() -> None:
    assert text.is_rtl("ar") and not text.is_rtl("en") and not text.is_rtl("fr")
    for key, value in entries("ar").items():
        values: dict[str, object] = {f: "Ann" for form in forms(value) for f in fields_of(form)}
        values["n"] = 2
        for lang in SUPPORTED:
            shown = t(lang, key, **values)
            for line in shown.split("\n"):
                assert line.startswith(RLM) == text.is_rtl(lang), (lang, key)


# --- the table ---------------------------------------------------------------------------------


def test_the_lobby_lists_players_in_join_order_and_offers_start_from_two_players() -> None:
    alone = render.table(lobby(1), PLACE, "en", T0)
    assert [p.kind for _, p in buttons(alone)] == [Kind.JOIN, Kind.LEAVE]
    three = render.table(lobby(3), PLACE, "en", T0, note=t("en", "note_joined", name="Bob"))
    assert [(label, p) for label, p in buttons(three)] == [
        ("Join", Press(Kind.JOIN, CHAT, GAME_ID)),
        ("Leave", Press(Kind.LEAVE, CHAT, GAME_ID)),
        ("Start", Press(Kind.START, CHAT, GAME_ID)),
    ]
    shown = lines_of(three)
    assert shown[0] == "Menteur · new game"
    assert "2–8 players" in shown[1]
    assert shown[2] == "Turn clock: 90 s to play (/settings)."  # R20's, 90 s unless set
    assert shown[4:8] == ["3 players at the table:", "1. Ann", "2. شهد", "3. Bob"]
    assert shown[-1] == "Bob joined."
    assert "Nobody" in render.table(open_table(1, T0), PLACE, "en", T0).text


def test_the_lobby_offers_to_remove_each_computer_player_and_no_start_without_a_person() -> None:
    robots = open_table(1, T0)
    for robot in (-1, -2, -3):
        robots, _ = apply(robots, Join(robot, f"Robot {-robot}"), T0)
    screen = render.table(robots, PLACE, "en", T0)
    assert [[label for label, _ in buttons(Screen("", (row,)))] for row in screen.buttons] == [
        ["Join", "Leave"],
        ["Remove 🤖 Robot 1", "Remove 🤖 Robot 2"],
        ["Remove 🤖 Robot 3"],
    ]
    assert [p for _, p in buttons(screen)][2:] == [
        Press(Kind.REMOVE, CHAT, GAME_ID, n) for n in (1, 2, 3)
    ]
    with_ann, _ = apply(robots, Join(7, "Ann"), T0)
    kinds = [p.kind for _, p in buttons(render.table(with_ann, PLACE, "en", T0))]
    assert kinds == [Kind.JOIN, Kind.LEAVE, Kind.START, *[Kind.REMOVE] * 3]


def test_every_screen_tells_equal_names_apart_and_marks_computer_players() -> None:
    game = open_table(1, T0)
    for player, name in ((1, "Sam"), (-1, "Robot 1"), (2, "sam"), (3, "Robot 1")):
        game, _ = apply(game, Join(player, name), T0)
    shown = lines_of(render.table(game, PLACE, "en", T0))
    assert shown[5:9] == ["1. Sam", "2. 🤖 Robot 1 · normal", "3. sam\u00a0²", "4. Robot 1"]
    game, _ = apply(game, Start(1, 5), T0)
    labels = {1: "Sam", -1: "🤖 Robot 1", 2: "sam\u00a0²", 3: "Robot 1"}
    running = lines_of(render.table(game, PLACE, "en", T0))
    for player, label in labels.items():
        seat = game.ids.index(player)
        assert any(line.startswith(("\u2003 ", "▶ ")) and label + " ·" in line for line in running)
        assert running[3 + seat].split(" · ")[0].endswith(label)
    refusal = render.refusal(IllegalMove(Code.NOT_YOUR_TURN, 2), game, "en")
    assert plain(refusal) == "Not your turn — sam\u00a0² plays."
    over, events = apply(game, Forfeit(1), T0)
    over, more = apply(over, Forfeit(2), T0)
    over, last = apply(over, Forfeit(3), T0)
    ranking = lines_of(render.table(over, PLACE, "en", T0))
    assert ranking[1] == "🤖 Robot 1 wins."
    assert "2. Robot 1 · left the game" in ranking and "4. Sam · left the game" in ranking
    assert "3. sam\u00a0² · left the game" in ranking
    assert (
        plain(announcements.note(more, over, "en") or "") == "sam\u00a0² left the game (forfeit)."
    )
    lobby = open_table(1, T0)
    for player, name in ((1, "Sam"), (-1, "Robot 1"), (2, "Sam")):
        lobby, _ = apply(lobby, Join(player, name), T0)
    after, left = apply(lobby, Leave(2), T0)
    assert plain(announcements.note(left, after, "en", lobby) or "") == "Sam\u00a0² left the table."
    after, left = apply(lobby, Leave(-1), T0)
    assert plain(announcements.note(left, after, "en", lobby) or "") == "🤖 Robot 1 left the table."
    (won,) = announcements.messages(events + more + last, over, PLACE, "en", T0)
    assert plain(won.text).startswith("🤖 Robot 1 wins!")


def test_the_running_table_shows_the_call_counts_bullets_and_who_plays() -> None:
    game = lie_on_the_pile()
    screen = render.table(game, PLACE, "en", T0)
    assert lines_of(screen) == [
        "Menteur · 4 players",
        "Expected rank: 10 · Pile: 3 cards",
        "Called: 2 × 9 (Bob)",
        "",
        "\u2003 Ann · 2 cards · bullets ●●●",
        "\u2003 Bob · 1 card · bullets ●●●",
        "▶ Chloé · 2 cards · bullets ●●●",
        "\u2003 Driss · 44 cards · bullets ●●○",
    ]
    assert buttons(screen) == [
        ("Liar!", Press(Kind.SHOUT, CHAT, GAME_ID, 2)),
        ("End game", Press(Kind.VOTE, CHAT, GAME_ID)),
    ]


def test_the_arabic_table_says_the_same_right_to_left() -> None:
    screen = render.table(lie_on_the_pile(), PLACE, "ar", T0)
    shown = lines_of(screen)
    assert shown[:3] == [
        "Menteur · 4 لاعبين",
        "الرتبة المطلوبة: 10 · البطاقات في الوسط: 3",
        "أُعلن: 2 × 9 (Bob)",
    ]
    assert "◀ Chloé · بطاقتان · طلقات ●●●" in shown
    assert all(line.startswith(RLM) for line in screen.text.split("\n"))
    for name in ("Ann", "Bob", "Chloé", "Driss"):
        assert isolate(name) in screen.text
    assert buttons(screen) == [
        ("كاذب!", Press(Kind.SHOUT, CHAT, GAME_ID, 2)),
        ("إنهاء المباراة", Press(Kind.VOTE, CHAT, GAME_ID)),
    ]


def test_liar_leaves_the_table_when_no_shout_is_possible() -> None:
    start = apply(lobby(3), Start(1, 5), T0)[0]
    only_the_vote = [("End game", Press(Kind.VOTE, CHAT, GAME_ID))]
    assert buttons(render.table(start, PLACE, "en", T0)) == only_the_vote
    challenged, _ = apply(lie_on_the_pile(), Shout(4, 2), T0)
    assert buttons(render.table(challenged, PLACE, "en", T0)) == only_the_vote
    assert "Called:" not in render.table(challenged, PLACE, "en", T0).text


def test_a_final_play_shows_who_decides_the_seconds_left_and_let_it_stand() -> None:
    game = final_play()
    screen = render.table(game, PLACE, "en", T0 + 10)
    assert lines_of(screen)[-1] == (
        "Final play by Ann: Bob decides within 35 seconds — Liar! or Let it stand."
    )
    assert buttons(screen) == [
        ("Liar!", Press(Kind.SHOUT, CHAT, GAME_ID, 1)),
        ("Let it stand", Press(Kind.STAND, CHAT, GAME_ID, 1)),
        ("End game", Press(Kind.VOTE, CHAT, GAME_ID)),
    ]


def test_a_forfeited_seat_is_marked_as_gone() -> None:
    game, _ = apply(lie_on_the_pile(), Forfeit(4), T0)
    assert "\u2003 Driss · left the game" in lines_of(render.table(game, PLACE, "en", T0))


def rows_of(screen: Screen) -> list[list[str]]:
    return [[plain(b.text) for b in row] for row in screen.buttons]


def test_r18_end_game_sits_under_the_moves_and_counts_the_votes_once_someone_voted() -> None:
    game = lie_on_the_pile()  # Chloé (3) is to play: all four have the vote
    assert rows_of(render.table(game, PLACE, "en", T0)) == [["Liar!"], ["End game"]]
    game, events = apply(game, VoteEnd(1), T0)
    for lang, label, said in (
        ("en", "End game 1/4", "Ann voted to end the game (1/4)."),
        ("ar", "إنهاء المباراة (1 من 4)", "صوّت Ann لإنهاء المباراة (1 من 4)."),
    ):
        screen = render.table(game, PLACE, lang, T0, announcements.note(events, game, lang))
        assert buttons(screen)[-1] == (label, Press(Kind.VOTE, CHAT, GAME_ID))
        assert lines_of(screen)[-1] == said
        check_direction(screen.text, lang)
    game, _ = apply(game, Play(3, cards("5♠")), T0)  # the moves do not reset the votes
    assert rows_of(render.table(game, PLACE, "en", T0)) == [["Liar!"], ["End game 1/4"]]


def test_r18_the_awaited_persons_vote_counts_and_is_not_needed_after_90_seconds() -> None:
    game, events = apply(lie_on_the_pile(), VoteEnd(3), T0)  # Chloé, who is to play
    assert (
        plain(announcements.note(events, game, "en") or "") == "Chloé voted to end the game (1/4)."
    )
    assert rows_of(render.table(game, PLACE, "en", T0))[-1] == ["End game 1/4"]
    game, _ = apply(game, VoteEnd(1), T0 + 1)
    assert rows_of(render.table(game, PLACE, "en", T0 + 89))[-1] == ["End game 2/4"]
    # The clock is off: 90 seconds into her turn, only Ann's vote counts, of three needed.
    game, _ = settle(game, T0 + 90)
    assert rows_of(render.table(game, PLACE, "en", T0 + 90))[-1] == ["End game 1/3"]


def test_r18_the_last_vote_stops_the_game_and_its_buttons_go() -> None:
    game = lie_on_the_pile()
    for player in (1, 2, 3):
        game, _ = apply(game, VoteEnd(player), T0)
    game, events = apply(game, VoteEnd(4), T0)
    assert events[-1] == ev.Stopped(None, ev.StopReason.VOTE)
    note = announcements.note(events, game, "en")
    assert plain(note or "") == "The players voted to end the game: no winner."
    screen = render.table(game, PLACE, "en", T0, note)
    assert lines_of(screen) == [
        "Menteur · stopped — no winner",
        "",
        "The players voted to end the game: no winner.",
    ]
    assert screen.buttons == ()


def test_r18_only_people_vote_and_a_person_alone_with_computers_may_end_it() -> None:
    people_and_computers = dataclasses.replace(lie_on_the_pile(), ids=(1, -2, 3, -4))
    assert view(people_and_computers, None, T0).votes_needed == 2  # Ann, and Chloé to play
    with pytest.raises(IllegalMove):
        apply(people_and_computers, VoteEnd(-2), T0)
    assert rows_of(render.table(people_and_computers, PLACE, "en", T0))[-1] == ["End game"]
    alone = dataclasses.replace(people_and_computers, ids=(-1, -2, 3, -4))
    assert view(alone, None, T0).votes_needed == 1
    assert rows_of(render.table(alone, PLACE, "en", T0))[-1] == ["End game"]


def test_the_end_shows_the_winner_and_the_final_ranking_with_cards_left() -> None:
    game, _ = apply(final_play(), LetItStand(2, 1), T0 + 5)
    screen = render.table(game, PLACE, "en", T0 + 5)
    assert screen.buttons == ()
    assert lines_of(screen) == [
        "Menteur · game over",
        "Ann wins.",
        "",
        "Final ranking",
        "1. Ann · 0 cards",
        "2. Bob · 2 cards",
        "3. Chloé · 2 cards",
        "4. Driss · 46 cards",
    ]


def test_a_stopped_game_says_there_is_no_winner() -> None:
    game, events = apply(lie_on_the_pile(), Stop(1), T0)
    screen = render.table(game, PLACE, "en", T0, announcements.note(events, game, "en"))
    assert screen.buttons == ()
    assert lines_of(screen) == [
        "Menteur · stopped — no winner",
        "",
        "Ann stopped the game: no winner.",
    ]


# --- the private hand ---------------------------------------------------------------------------


def test_the_hand_shows_its_owners_cards_sorted_by_rank_in_rows_of_six() -> None:
    game = dealt("R♠ A♥ 7♦ 7♣ 9♠ 10♥ V♦ D♣ 3♥", "2♠", rank="7")
    screen = render.hand(game, 1, PLACE, "en", T0, selection=cards("7♦ 7♣"))
    labels = [[plain(b.text) for b in row] for row in screen.buttons]
    assert labels == [
        ["A♥", "3♥", "✓7♦", "✓7♣", "9♠", "10♥"],
        ["V♦", "D♣", "R♠"],
        ["Play 2 × 7"],
    ]
    assert lines_of(screen) == [
        "Your hand · 9 cards",
        "Your turn: play 1 to 4 cards. They are called as 7, true or not.",
        "Tap cards to select them, then Play.",
    ]
    assert buttons(screen)[-1][1] == Press(Kind.PLAY, CHAT, GAME_ID, 0, cards=cards("7♦ 7♣"))
    seven = buttons(screen)[2][1]
    assert seven == Press(
        Kind.TOGGLE, CHAT, GAME_ID, 0, cards=cards("7♣"), hand=game.hands[0], rank=6
    )


@pytest.mark.parametrize("picked", ["", "A♥ 3♥ 7♦ 7♣ 9♠"])
def test_play_appears_only_with_one_to_four_cards_selected(picked: str) -> None:
    game = dealt("A♥ 3♥ 7♦ 7♣ 9♠", "2♠", rank="7")
    screen = render.hand(game, 1, PLACE, "en", T0, selection=cards(picked))
    assert all(p.kind is Kind.TOGGLE for _, p in buttons(screen))


@pytest.mark.parametrize(("player_lang", "table_lang"), [("ar", "en"), ("en", "ar")])
def test_a_hint_naming_a_table_button_quotes_it_as_the_table_shows_it(
    player_lang: str, table_lang: str
) -> None:
    game = dealt("A♥ 3♥", "2♠ 5♦", "6♣ 7♣", rank="A", rest_to=0)
    game, _ = apply(game, Play(1, cards("A♥")), T0)
    table = render.table(game, PLACE, table_lang, T0)
    liar = plain(t(table_lang, "btn_liar"))
    end = plain(t(table_lang, "btn_end_unvoted"))
    assert [plain(b.text) for row in table.buttons for b in row] == [liar, end]
    waiting = render.hand(game, 3, PLACE, player_lang, T0, table_lang=table_lang)
    hint = plain(lines_of(waiting)[1])
    assert liar in hint, "the table's own word"
    assert plain(t(player_lang, "btn_liar")) not in hint, "not the player's word for it"
    assert hint == plain(t(player_lang, "hand_wait", liar=liar)), "a sentence in their language"
    # The decider of a final play is told of both buttons, as the table shows them.
    final = dealt("A♥", "2♠ 5♦", "6♣", rank="A", rest_to=1)
    final, _ = apply(final, Play(1, cards("A♥")), T0)
    decider = final.awaited
    assert decider is not None
    deciding = render.hand(final, decider, PLACE, player_lang, T0, table_lang=table_lang)
    stand = plain(t(table_lang, "btn_stand"))
    assert liar in plain(lines_of(deciding)[1]) and stand in plain(lines_of(deciding)[1])


def test_off_turn_the_hand_shows_without_play_and_the_same_words_whoever_plays() -> None:
    game = dealt("A♥ 3♥", "2♠ 5♦", "6♣", rank="7", rest_to=0)
    screen = render.hand(game, 2, PLACE, "en", T0, selection=cards("2♠"))
    assert [label for label, _ in buttons(screen)] == ["✓2♠", "5♦"]
    assert all(p.rank == NO_RANK and not p.shout for _, p in buttons(screen))
    assert lines_of(screen) == [
        "Your hand · 2 cards",
        "Not your turn. “Liar!” is on the table message in the group.",
    ]
    # Another player's move leaves this hand's screen as it was: no edit is needed.
    later, _ = apply(game, Play(1, cards("A♥")), T0)
    assert render.hand(later, 3, PLACE, "en", T0) == render.hand(game, 3, PLACE, "en", T0)


def test_the_next_player_can_shout_liar_from_their_hand_and_only_they() -> None:
    game = lie_on_the_pile()
    next_player = render.hand(game, 3, PLACE, "en", T0)
    assert buttons(next_player)[-1] == ("Liar!", Press(Kind.SHOUT, CHAT, GAME_ID, 2))
    assert "Or shout Liar! at Bob's play: Called: 2 × 9." in lines_of(next_player)
    assert all(p.shout for _, p in buttons(next_player) if p.kind is Kind.TOGGLE)
    other = render.hand(game, 4, PLACE, "en", T0)
    assert all(p.kind is Kind.TOGGLE for _, p in buttons(other))
    assert plain(t("en", "hand_wait", liar="Liar!")) in lines_of(other)


def test_the_hands_play_names_the_turn_and_its_liar_the_play() -> None:
    # Chloé forfeits: the turn passes to Driss on the same rank, Bob's play still open. The
    # turn moved on (a Play drawn for Chloé's turn is stale); the play Liar! targets did not.
    game, _ = apply(lie_on_the_pile(), Forfeit(3), T0)
    assert (game.plays, game.turns) == (2, 3)
    screen = render.hand(game, 4, PLACE, "en", T0, selection=cards("7♠"))
    pressed = dict(buttons(screen))
    assert pressed["Play 1 × 10"] == Press(Kind.PLAY, CHAT, GAME_ID, 3, cards=cards("7♠"))
    assert pressed["Liar!"] == Press(Kind.SHOUT, CHAT, GAME_ID, 2)
    toggle = pressed["✓7♠"]
    assert (toggle.number, toggle.shout, toggle.play) == (3, True, 2)
    assert render.hand_buttons(replace(toggle, cards=cards("7♠")), "en") == screen.buttons


def test_a_51_card_hand_fits_telegram_keyboard_limits() -> None:
    game = dealt("", "A♠", rest_to=0)
    assert count(game.hands[0]) == 51
    picked = cards("2♠ 2♥ 2♦ 2♣")
    screen = render.hand(game, 1, Place(CHAT, 36**5), "ar", T0, selection=picked)
    check_keyboard(screen)
    assert len(screen.buttons) == 10
    assert sum(p.kind is Kind.TOGGLE for _, p in buttons(screen)) == 51


def test_the_decider_is_sent_to_the_group_and_the_final_player_waits() -> None:
    game = final_play()
    decider = render.hand(game, 2, PLACE, "en", T0 + 1)
    assert lines_of(decider)[1] == (
        "Ann made a final play: “Liar!” or “Let it stand” in the group, within 44 seconds."
    )
    assert all(p.kind is Kind.TOGGLE and p.rank == NO_RANK for _, p in buttons(decider))
    ann = render.hand(game, 1, PLACE, "en", T0 + 1)
    assert lines_of(ann) == ["Your hand · 0 cards", "You made a final play: Bob decides."]
    assert ann.buttons == ()


def test_after_the_end_or_a_forfeit_the_hand_is_text_only() -> None:
    over, _ = apply(final_play(), LetItStand(2, 1), T0)
    screen = render.hand(over, 3, PLACE, "en", T0)
    assert screen.buttons == ()
    assert lines_of(screen) == ["Your hand · 2 cards", "Game over: Ann wins."]
    gone, _ = apply(lie_on_the_pile(), Forfeit(4), T0)
    assert render.hand(gone, 4, PLACE, "en", T0) == Screen(t("en", "hand_out"))
    outsider = render.hand(gone, 99, PLACE, "en", T0)
    assert outsider == Screen(t("en", "hand_not_seated"))


def test_hand_buttons_rebuilds_from_a_toggle_exactly_what_hand_draws() -> None:
    for game, player in ((lie_on_the_pile(), 3), (lie_on_the_pile(), 4), (final_play(), 2)):
        for lang in SUPPORTED:
            first = render.hand(game, player, PLACE, lang, T0, selection=cards("5♠"))
            for _, press in buttons(first):
                if press.kind is Kind.TOGGLE:
                    again = render.hand(game, player, PLACE, lang, T0, selection=press.cards)
                    assert render.hand_buttons(press, lang) == again.buttons


def test_hand_buttons_ignores_selected_cards_that_are_not_in_the_hand() -> None:
    held = cards("A♥ 3♥ 7♦")
    press = Press(Kind.TOGGLE, CHAT, GAME_ID, 3, cards=cards("3♥ R♠"), hand=held, rank=0)
    assert render.hand_buttons(press, "en") == render.hand_buttons(
        replace(press, cards=cards("3♥")), "en"
    )


# --- moments -------------------------------------------------------------------------------------


def test_a_challenge_shows_the_turned_over_cards_the_verdict_and_who_plays_next() -> None:
    game, events = apply(lie_on_the_pile(), Shout(4, 2), T0)
    (screen,) = announcements.messages(events, game, PLACE, "en", T0)
    assert lines_of(screen) == [
        "Challenge",
        "Driss: Liar!  →  Bob's play, “Called: 2 × 9”",
        "Turned over: 3♠ 9♥",
        "A lie. Bob picks up 3 cards.",
        "Driss gets the bullet back and plays next: 9.",
    ]
    assert screen.buttons == ()
    (arabic,) = announcements.messages(events, game, PLACE, "ar", T0)
    assert lines_of(arabic)[2:4] == [
        "البطاقات المكشوفة: 3♠ 9♥",
        "كذبة! على Bob التقاط البطاقات: 3 بطاقات.",
    ]
    assert isolate("3♠ 9♥") in arabic.text


def test_a_true_play_challenged_costs_the_accuser_the_pile_and_the_bullet() -> None:
    game = dealt("A♠ 2♠", "3♠ 4♠", "5♠ 6♠", rank="3")
    game, _ = apply(game, Play(1, cards("2♠")), T0)
    game, _ = apply(game, Play(2, cards("4♠")), T0)
    game, events = apply(game, Shout(3, 2), T0)
    (screen,) = announcements.messages(events, game, PLACE, "en", T0)
    assert lines_of(screen)[3:] == [
        "Not a lie. Chloé picks up 2 cards.",
        "Chloé loses the bullet.",
        "Bob plays next: 4.",
    ]


def test_a_forfeiters_exposed_lie_is_set_aside() -> None:
    game, _ = apply(lie_on_the_pile(), Forfeit(2), T0)
    game, events = apply(game, Shout(4, 2), T0)
    (screen,) = announcements.messages(events, game, PLACE, "en", T0)
    assert "A lie. Bob has left the game: the 3 cards of the pile are set aside." in lines_of(
        screen
    )
    assert announcements.note(events, game, "en") == t(
        "en", "note_challenge_aside", accuser="Driss", loser="Bob", n=3
    )


def test_a_challenge_that_ends_the_game_names_nobody_to_play_next_then_the_end() -> None:
    game, events = apply(final_play(truth=True), Shout(4, 1), T0 + 3)
    challenge, end = announcements.messages(events, game, PLACE, "en", T0 + 3)
    assert lines_of(challenge)[-1] == "Driss loses the bullet."
    assert "plays next" not in challenge.text
    assert lines_of(end)[:2] == ["Ann wins!", "A challenge showed the final play was true."]


def test_a_final_play_moment_offers_liar_and_let_it_stand_for_that_play() -> None:
    game = dealt("5♠ 5♥", "3♠ 4♠", "6♠ 7♠", "8♠", rank="5")
    game, events = apply(game, Play(1, cards("5♠ 5♥")), T0)
    (screen,) = announcements.messages(events, game, PLACE, "en", T0)
    assert lines_of(screen) == [
        "Final play",
        "Ann emptied their hand: Called: 2 × 5.",
        "Bob decides within 45 seconds: Liar! or Let it stand.",
        "Anyone else with a bullet may still shout Liar!",
    ]
    assert buttons(screen) == [
        ("Liar!", Press(Kind.SHOUT, CHAT, GAME_ID, 1)),
        ("Let it stand", Press(Kind.STAND, CHAT, GAME_ID, 1)),
    ]
    assert announcements.note(events, game, "en") == t(
        "en", "note_final", player="Ann", n=2, rank="5"
    )


def test_a_passed_decision_gets_its_own_message_with_a_fresh_45_seconds() -> None:
    game, events = apply(final_play(), Forfeit(2), T0 + 20)
    (screen,) = announcements.messages(events, game, PLACE, "en", T0 + 20)
    assert lines_of(screen)[1:] == [
        "The player who was to decide left: Chloé now decides on Ann's final play.",
        "Chloé decides within 45 seconds: Liar! or Let it stand.",
    ]
    assert [p for _, p in buttons(screen)] == [
        Press(Kind.SHOUT, CHAT, GAME_ID, 1),
        Press(Kind.STAND, CHAT, GAME_ID, 1),
    ]


def two_left() -> Game:
    return apply(lie_on_the_pile(), Forfeit(1), T0)[0]


@pytest.mark.parametrize(
    ("game", "move", "how"),
    [
        (final_play(), LetItStand(2, 1), "Bob let it stand."),
        (final_play(), None, "No decision within 45 seconds: the table let it stand."),
        (final_play(), Shout(3, 1), "A challenge showed the final play was true."),
        (apply(two_left(), Forfeit(2), T0)[0], Forfeit(3), "Every other player left the game."),
    ],
)
def test_the_end_says_who_won_how_and_the_final_ranking(
    game: Game, move: Move | None, how: str
) -> None:
    if move is None:  # R14: no decision; the timer settles the game at the deadline
        now = T0 + DECISION_SECONDS
        game, events = settle(game, now)
    else:
        now = T0 + 1
        game, events = apply(game, move, now)
    end = announcements.messages(events, game, PLACE, "en", now)[-1]
    assert game.winner is not None
    winner = game.names[game.winner]
    assert lines_of(end)[:4] == [f"{winner} wins!", how, "", "Final ranking"]
    ranked = 4 + len(game.ids)
    assert lines_of(end)[ranked : ranked + 2] == ["", "How the game went"], "then the reveal"
    assert lines_of(end)[4] == f"1. {winner} · {count(game.hands[game.winner])} cards"
    assert plain(announcements.note(events, game, "en") or "") == how


def test_forfeited_players_rank_last_as_gone() -> None:
    game, _ = apply(two_left(), Forfeit(2), T0)
    game, events = apply(game, Forfeit(3), T0)
    end = announcements.messages(events, game, PLACE, "en", T0)[-1]
    ranking = lines_of(end).index("Final ranking")
    assert lines_of(end)[ranking : ranking + 5] == [
        "Final ranking",
        "1. Driss · 44 cards",
        "2. Chloé · left the game",
        "3. Bob · left the game",
        "4. Ann · left the game",
    ]


@pytest.mark.parametrize(
    ("move", "said"),
    [(Stop(1), "Ann stopped the game: no winner."), (Expire(60), "after a long time")],
)
def test_a_stopped_game_says_by_whom_or_for_idleness(move: Move, said: str) -> None:
    game, events = apply(lie_on_the_pile(), move, T0 + 3600)
    (screen,) = announcements.messages(events, game, PLACE, "en", T0 + 3600)
    assert lines_of(screen)[0] == "Menteur · stopped — no winner"
    assert said in lines_of(screen)[1]


# --- the reveal (R16): how the game went, told once at its end, kept nowhere ------------------


def two_lies_one_caught() -> Game:
    """Ann lies 9♠ under 8 and Bob's play lets it stand; Bob lies 9♥ 3♠ under 9 and Driss
    catches it: Bob picks up 3, Driss gets the bullet back and plays next."""
    game = dealt("A♠ 2♠ 9♠", "3♠ 4♠ 9♥", "5♠ 6♠", "7♠", rank="8")
    game, _ = apply(game, Play(1, cards("9♠")), T0)
    game, _ = apply(game, Play(2, cards("9♥ 3♠")), T0)
    return apply(game, Shout(4, 2), T0)[0]


REVEALED = {
    "en": [
        "How the game went",
        "Ann · 1 play · 1 lie, 0 caught · Liar! 0×, 0 right · picked up 0",
        "Bob · 1 play · 1 lie, 1 caught · Liar! 0×, 0 right · picked up 3",
        "Chloé · 0 plays · 0 lies, 0 caught · Liar! 0×, 0 right · picked up 0",
        "Driss · 0 plays · 0 lies, 0 caught · Liar! 1×, 1 right · picked up 0",
        "Boldest bluff that stood: Ann, Called: 1 × 8.",
    ],
    "ar": [
        "كيف جرت المباراة",
        "Ann · وضع البطاقات مرة واحدة · كذبة واحدة، لم يُكشف منها شيء"
        " · «كاذب!» ولا مرة، لم تُصب أي منها · التقاط البطاقات: ولا بطاقة",
        "Bob · وضع البطاقات مرة واحدة · كذبة واحدة، كُشفت واحدة"
        " · «كاذب!» ولا مرة، لم تُصب أي منها · التقاط البطاقات: 3 بطاقات",
        "Chloé · وضع البطاقات: ولا مرة · ولا كذبة، لم يُكشف منها شيء"
        " · «كاذب!» ولا مرة، لم تُصب أي منها · التقاط البطاقات: ولا بطاقة",
        "Driss · وضع البطاقات: ولا مرة · ولا كذبة، لم يُكشف منها شيء"
        " · «كاذب!» مرة واحدة، أصابت واحدة · التقاط البطاقات: ولا بطاقة",
        "أجرأ كذبة لم يُعترض عليها: Ann، «أُعلن: 1 × 8».",
    ],
    "fr": [  # 0 and 1 in the singular; a no-break space before ":" and "!"
        "Comment la partie s’est jouée",
        "Ann · 1 coup · 1 mensonge, 0 démasqué · Menteur\u00a0! 0×, 0 juste · 0 carte ramassée",
        "Bob · 1 coup · 1 mensonge, 1 démasqué · Menteur\u00a0! 0×, 0 juste · 3 cartes ramassées",
        "Chloé · 0 coup · 0 mensonge, 0 démasqué · Menteur\u00a0! 0×, 0 juste · 0 carte ramassée",
        "Driss · 0 coup · 0 mensonge, 0 démasqué · Menteur\u00a0! 1×, 1 juste · 0 carte ramassée",
        "Le mensonge le plus audacieux qui est passé\u00a0: Ann, Annoncé\u00a0: 1 × 8.",
    ],
}


@pytest.mark.parametrize("lang", sorted(REVEALED))
def test_r16_a_stopped_game_tells_how_it_went_in_seat_order(lang: str) -> None:
    game, events = apply(two_lies_one_caught(), Stop(1), T0)
    (end,) = announcements.messages(events, game, PLACE, lang, T0)
    assert lines_of(end)[2:] == ["", *REVEALED[lang]]
    check_direction(end.text, lang)
    for name in game.names:
        assert isolate(name) in end.text, "names made safe, as on every screen"
    assert "How the game went" not in render.table(game, PLACE, lang, T0).text, "once, not twice"


def test_r16_the_reveal_follows_the_final_ranking_in_its_order() -> None:
    # Ann empties her hand truly; Chloé, with one card, ranks ahead of Bob, seated before her.
    game = dealt("5♠ 5♥", "3♠ 4♠ 2♠", "6♠", "8♠", rank="5")
    game, _ = apply(game, Play(1, cards("5♠ 5♥")), T0)
    game, events = apply(game, LetItStand(2, 1), T0)
    end = lines_of(announcements.messages(events, game, PLACE, "en", T0)[-1])
    assert end[3:7] == [
        "Final ranking",
        "1. Ann · 0 cards",
        "2. Chloé · 1 card",
        "3. Bob · 3 cards",
    ]
    reveal = end[end.index("How the game went") + 1 :]
    assert [row.split(" · ")[0] for row in reveal] == ["Ann", "Chloé", "Bob", "Driss"]
    assert reveal[0] == "Ann · 1 play · 0 lies, 0 caught · Liar! 0×, 0 right · picked up 0"
    assert not any(row.startswith("Boldest") for row in reveal), "no bluff stood"


def test_r16_nothing_is_told_before_the_end_nor_of_a_game_without_counters() -> None:
    game = two_lies_one_caught()
    assert view(game, None, T0).stats == ()  # before the end it would tell hidden lies
    for screen in (render.table(game, PLACE, "en", T0), render.hand(game, 1, PLACE, "en", T0)):
        assert "How the game went" not in screen.text
    older = dataclasses.replace(game, tally=None)  # begun before the counters were kept
    stopped, events = apply(older, Stop(1), T0)
    (end,) = announcements.messages(events, stopped, PLACE, "en", T0)
    assert lines_of(end) == ["Menteur · stopped — no winner", "Ann stopped the game: no winner."]


def widest_end(name: str) -> Game:
    """An 8-player game over, every name `name` (told apart by superscripts, two of them
    computer players), every counter at its greatest (`engine.game.TALLY_MAX`) and a bluff of
    4 cards: the longest reveal there can be."""
    deck = [1 << c for c in range(52)]
    hands = [sum(deck[i::8]) for i in range(8)]
    hands[7] |= hands[0]
    hands[0] = 0
    return Game(
        opener=1,
        updated=T0,
        phase=Phase.OVER,
        ids=(1, 2, 3, 4, -5, -6, 7, 8),
        names=(name,) * 8,
        hands=hands,
        bullets=[0] * 8,
        winner=0,
        tally=chr(0xD7FF) * (5 * 8),
        boldest=1 + 7 + 8 * (3 + 4 * 12),
    )


@pytest.mark.parametrize("lang", SUPPORTED)
def test_r16_the_longest_end_message_fits_telegrams_4096_characters(lang: str) -> None:
    """8 players with names of NAME_LENGTH (18) Arabic letters, or of the widest characters
    (emoji: 2 UTF-16 units each; dots: doubled once made inert), and counters of 5 digits."""
    for raw in ("ب" * 40, "\U0001f004" * 40, "." * 40):
        name = names.person(raw)
        assert len(name) == names.NAME_LENGTH
        game = widest_end(name)
        assert view(game, None, T0).stats[0].plays > 50_000
        stopped = announcements.messages([ev.Stopped(8)], game, PLACE, lang, T0)
        won = announcements.messages(
            [ev.LetStand(1, 2), ev.Won(1, game.ranking())], game, PLACE, lang, T0
        )
        for (screen,) in (stopped, won):
            assert len(lines_of(screen)) > 2 + 8, "the reveal's 8 rows and more"
            assert utf16_units(screen.text) <= 4096


def test_calls_joins_starts_and_passed_turns_make_no_new_message() -> None:
    game, joined = apply(lobby(2), Join(3, "Bob"), T0)
    game, started = apply(game, Start(1, 3), T0)
    player = game.ids[0]
    game, called = apply(game, Play(player, 1 << next(cards_in(game.hands[0]))), T0)
    game, passed = apply(game, Forfeit(game.ids[1]), T0)
    for events in (joined, started, called, passed):
        assert announcements.messages(events, game, PLACE, "en", T0) == []


# --- the table's note -----------------------------------------------------------------------------


def test_the_note_tells_the_most_telling_event_of_a_move() -> None:
    game, events = apply(lobby(2), Join(3, "Bob"), T0)
    assert announcements.note(events, game, "en") == t("en", "note_joined", name="Bob")
    game = dealt("A♠ 2♠", "3♠ 4♠", "5♠")
    game, events = apply(game, Play(1, cards("A♠")), T0)
    assert plain(announcements.note(events, game, "en") or "") == "Ann: Called: 1 × A"
    game, events = apply(lie_on_the_pile(), Shout(4, 2), T0)
    assert plain(announcements.note(events, game, "en") or "") == (
        "Driss: Liar! — a lie, Bob picks up 3 cards"
    )
    game, events = apply(lie_on_the_pile(), Forfeit(3), T0)  # Chloé was to play: turn passes
    assert [type(e) for e in events] == [ev.Forfeited, ev.TurnPassed]
    assert plain(announcements.note(events, game, "en") or "") == "Chloé left the game (forfeit)."
    assert announcements.note([], game, "en") is None


# --- refusals ----------------------------------------------------------------------------------


def test_refusals_say_what_ui_md_says() -> None:
    game = final_play()

    def said(code: Code, player: int | None = None) -> str:
        return plain(render.refusal(IllegalMove(code, player), game, "en"))

    assert said(Code.NOT_YOUR_TURN, 2) == "Not your turn — Bob plays."
    assert said(Code.NO_BULLETS) == "No bullets left."
    assert said(Code.ALREADY_CHALLENGED, 4) == "Too late: Driss shouted first."
    assert said(Code.NEXT_PLAYER_PLAYED) == "Too late: the next player has already played."
    assert said(Code.NOT_A_PLAYER) == "You are not at this table."
    assert said(Code.STALE) == "That button is from an earlier turn."
    assert said(Code.CARD_COUNT) == "Pick 1 to 4 cards."
    assert said(Code.DEADLINE_PASSED) == "Too late: the 45 seconds are over."
    assert said(Code.NOT_DECIDER, 2) == "Only Bob can let it stand."
    assert said(Code.FINAL_PLAY_PENDING) == "Wait: Bob must decide on the final play first."
    assert plain(render.refusal(IllegalMove(Code.NOT_YOUR_TURN, 2), None, "en")) == (
        "Not your turn."
    )


@pytest.mark.parametrize("lang", SUPPORTED)
@pytest.mark.parametrize("code", list(Code))
def test_every_code_has_a_short_refusal_in_every_language(lang: str, code: Code) -> None:
    long_names = tuple(("ب" if i % 2 else "W") * 64 for i in range(4))
    game = dataclasses.replace(final_play(), names=long_names)
    for who in (None, 1, 2, 99):
        said = render.refusal(MenteurError(code, who), game, lang)
        assert 0 < len(said) <= 200
        assert said.startswith(RLM) == text.is_rtl(lang)
        assert plain(said) != code.value


# The bot's own refusals, beside the engine's codes: each an answer to a button or a one-line
# reply to a command, in the presser's language.
BOT_REFUSALS = (
    "no_game",
    "old_game",
    "game_running",
    "not_playing",
    "bad_button",
    "not_in_group",
    "not_member",
    "member_unknown",
    "addbot_not_allowed",
    "remove_not_allowed",
    "robot_gone",
    "on_behalf_of_chat",
)


def utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@pytest.mark.parametrize("lang", SUPPORTED)
def test_every_refusal_fits_an_answer_in_every_language(lang: str) -> None:
    """The wordings that name nobody; those that name someone are `render.refusal`'s, below
    and in test_every_code_has_a_short_refusal_in_every_language."""
    engine = [k for k in entries(lang) if k.startswith("refusal_") and not k.endswith("_named")]
    for key in (*BOT_REFUSALS, *engine):
        said = t(lang, key)
        assert 0 < utf16_units(said) <= 200, key
        assert plain(said) != key


@pytest.mark.parametrize("lang", SUPPORTED)
def test_a_refusal_names_any_player_whose_name_fits_the_limit(lang: str) -> None:
    """At NAME_LENGTH, the widest labels (a name of dots doubles once made inert; a computer
    player's mark; the eighth Sam's superscript) still fit a named refusal within 200."""
    widest = [
        names.person("." * 40),
        names.person("\U0001f004" * 40),
        names.person("ب" * 40),
        *[names.person("W" * 40)] * 5,
    ]
    game = dataclasses.replace(final_play(), ids=(1, 2, 3, 4, -5, 6, 7, 8), names=tuple(widest))
    game = dataclasses.replace(game, hands=[*game.hands, 0, 0, 0, 0], bullets=[3] * 8, out=[])
    named = (Code.NOT_YOUR_TURN, Code.ALREADY_CHALLENGED, Code.NOT_DECIDER)
    for who in game.ids:
        for code in named:
            said = render.refusal(IllegalMove(code, who), game, lang)
            label = render.name_of(game, who, lang)
            assert plain(text.isolate(label)) in plain(said), "named, not the short form"
            assert utf16_units(said) <= 200
    # Names never cut (64 characters, Telegram's most), the widest once inert: the refusal
    # leaves the name out rather than pass 200.
    raw = ("." * 64, "\U0001f004" * 64, "ب" * 64, "W" * 64, "@" * 64, "a" * 64, "b" * 64, "c" * 64)
    game = dataclasses.replace(game, names=raw)
    for who in game.ids:
        for code in named:
            assert utf16_units(render.refusal(IllegalMove(code, who), game, lang)) <= 200


# --- properties: whole games, every screen, both languages ------------------------------------


def walk(players: int, seed: int, steps: int) -> Iterator[tuple[Game, list[ev.Event], float]]:
    """A game between computer players, with forfeits and a stop now and then: each state
    after a move, with the move's events."""
    rng = random.Random(seed)
    now = T0
    game = open_table(1, now)
    for p in range(1, players + 1):
        game, events = apply(game, Join(p, NAMES[p - 1]), now)
        yield game, events, now
    game, events = apply(game, Start(1, seed), now)
    yield game, events, now
    for _ in range(steps):
        if game.phase is Phase.OVER:
            return
        now += 1
        roll = rng.random()
        move: Move | None = None
        if roll < 0.01:
            move = Stop(1)
        elif roll < 0.04:
            move = Forfeit(rng.choice([game.ids[s] for s in game.active_seats()]))
        else:
            for player in rng.sample(game.ids, len(game.ids)):
                move = strategy.choose(view(game, player, now), rng)
                if move is not None:
                    break
        if move is None:
            now += DECISION_SECONDS
            game, events = settle(game, now)
        else:
            game, events = apply(game, move, now)
        yield game, events, now


def check_group_screen(screen: Screen, game: Game, lang: str) -> None:
    assert not SUIT.search(screen.text), "a group screen shows no card"
    check_keyboard(screen)
    assert all(p.kind in GROUP_KINDS for _, p in buttons(screen))
    assert all(p.chat == CHAT and p.game == GAME_ID for _, p in buttons(screen))
    check_direction(screen.text, lang)


def check_direction(shown: str, lang: str) -> None:
    for line in shown.split("\n"):
        assert line.startswith(RLM) == text.is_rtl(lang), line


@given(players=st.integers(2, 8), seed=st.integers(0, 2**32))
@settings(max_examples=25, deadline=None)
def test_the_group_never_sees_a_hand_and_a_hand_shows_only_its_owners_cards(
    players: int, seed: int
) -> None:
    for game, events, now in walk(players, seed, steps=150):
        for lang in SUPPORTED:
            note = announcements.note(events, game, lang)
            if note is not None:
                assert "\n" not in note and not SUIT.search(note)
            table = render.table(game, PLACE, lang, now, note)
            check_group_screen(table, game, lang)
            if game.phase is not Phase.OVER:
                for name in game.names:
                    assert isolate(name) in table.text
            challenges = [e for e in events if isinstance(e, ev.Challenged)]
            for moment in announcements.messages(events, game, PLACE, lang, now):
                shown = set(CARD.findall(moment.text))
                if shown:  # only a challenge turns cards over, and only its play's
                    (challenge,) = challenges
                    assert shown == {card_name(c) for c in cards_in(challenge.cards)}
                rest = replace(moment, text=CARD.sub("", moment.text))
                check_group_screen(rest, game, lang)
            for seat, player in enumerate(game.ids):
                check_hand(game, seat, player, lang, now)


def check_hand(game: Game, seat: int, player: int, lang: str, now: float) -> None:
    held = game.hands[seat] if game.hands else 0
    selection = held & -held  # the lowest card selected
    screen = render.hand(game, player, PLACE, lang, now, selection=selection)
    assert not SUIT.search(screen.text)
    check_keyboard(screen)
    check_direction(screen.text, lang)
    pressed = buttons(screen)
    toggles = [(label, p) for label, p in pressed if p.kind is Kind.TOGGLE]
    shown = {label.removeprefix("✓") for label, _ in toggles}
    if toggles:
        assert shown == {card_name(c) for c in cards_in(held)}, "the owner's cards, all of them"
        assert all(p.hand == held for _, p in toggles)
        _, press = toggles[-1]
        again = render.hand(game, player, PLACE, lang, now, selection=press.cards)
        assert render.hand_buttons(press, lang) == again.buttons
    else:
        assert game.phase in (Phase.LOBBY, Phase.OVER) or seat in game.out or held == 0
    if game.phase is Phase.OVER or seat in game.out:
        assert screen.buttons == ()


@pytest.mark.parametrize("lang", SUPPORTED)
def test_r13_a_final_play_says_others_may_shout_only_when_someone_else_can(lang: str) -> None:
    def final_screen(*hands: str, bullets: list[int]) -> str:
        game = dataclasses.replace(dealt(*hands, rank="5"), bullets=bullets)
        game, events = apply(game, Play(1, cards("5♠ 5♥")), T0)
        (screen,) = announcements.messages(events, game, PLACE, lang, T0)
        return screen.text

    others = t(lang, "final_others")
    four = ("5♠ 5♥", "3♠ 4♠", "6♠ 7♠", "8♠")
    # Two players: the decider is the only one who may shout.
    assert others not in final_screen("5♠ 5♥", "3♠ 4♠", bullets=[3, 3])
    # Four, but the two who watch have no bullet left.
    assert others not in final_screen(*four, bullets=[3, 3, 0, 0])
    # One of them has a bullet: the line is true.
    assert others in final_screen(*four, bullets=[3, 3, 0, 1])
