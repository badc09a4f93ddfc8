"""R20's words and screens, from engine state alone: the table's header and the awaited person's
line, the hand, the notes, the settings, what `/newgame 60` and `/settings off` accept, and the
moments of a screen counted as Telegram counts them."""

from __future__ import annotations

import dataclasses

import pytest

from engine import CLOCK_CHOICES, Game, Play, apply, settle
from engine import events as ev
from handlers import announcements, render
from handlers.callbacks import Kind, Place, decode
from handlers.lobby import clock_choice
from handlers.screens import TimeSpan, time_of_day, timed
from handlers.text import FSI, PDI, RLM, SUPPORTED, t
from infra.harness import T0
from tests.support.games import cards
from tests.support.games import table as dealt

PLACE = Place(-1001234567890, 41)
LANGS = pytest.mark.parametrize("lang", SUPPORTED)


def plain(s: str) -> str:
    return s.replace(FSI, "").replace(PDI, "").replace(RLM, "")


def clocked(*hands: str, clock: int = 30, rank: str = "A") -> Game:
    """A running game whose first seat, a person, has `clock` seconds from T0."""
    game = dealt(*hands, rank=rank)
    return dataclasses.replace(game, clock=clock, deadline=T0 + clock)


@pytest.mark.parametrize(
    ("said", "seconds"),
    [
        ("60", 60),
        (" 90s ", 90),
        ("180", 180),
        ("0", 0),
        ("off", 0),
        ("OFF", 0),
        ("بلا مؤقّت", 0),
        ("désactivé", 0),
        ("Désactivé", 0),
        ("٣٠", 30),
        ("45", None),
        ("-30", None),
        ("30.0", None),
        ("9" * 400, None),
        ("soon", None),
    ],
)
def test_r20_newgame_and_settings_take_one_of_the_choices(said: str, seconds: int | None) -> None:
    assert clock_choice(said) == seconds


def test_r20_the_header_says_the_clock_and_the_awaited_persons_line_until_when() -> None:
    game = clocked("A♠ 2♠", "3♠ 4♠", "5♠")
    lines = plain(render.table(game, PLACE, "en", T0).text).split("\n")
    assert lines[0] == "Menteur · 3 players · turn clock 30 s"
    assert lines[3] == "▶ Ann · 2 cards · bullets ●●● · plays by 07:07:10 UTC"
    assert "plays by" not in "\n".join(lines[4:])
    off = dataclasses.replace(game, clock=0, deadline=None)
    assert plain(render.table(off, PLACE, "en", T0).text).split("\n")[0] == "Menteur · 3 players"


def test_r20_a_moment_is_counted_in_utf16_code_units_as_telegram_counts() -> None:
    screen = timed(f"🤖 ‍👩 x {time_of_day(T0 + 30.9)} y {time_of_day(5)}")
    assert screen.text == "🤖 ‍👩 x 07:07:10 UTC y 00:00:05 UTC"
    assert screen.times == (TimeSpan(9, 12, int(T0) + 30), TimeSpan(24, 12, 5))
    units = screen.text.encode("utf-16-le")
    for span in screen.times:
        shown = units[2 * span.offset : 2 * (span.offset + span.length)].decode("utf-16-le")
        assert shown.endswith(" UTC")


@LANGS
def test_r20_the_hand_of_the_person_to_play_says_until_when_and_warns_after_a_run_out(
    lang: str,
) -> None:
    game = clocked("A♠ 2♠", "3♠ 4♠", "5♠")
    hand = render.hand(game, 1, PLACE, lang, T0)
    assert plain(t(lang, "hand_play_by", time="07:07:10 UTC")) in plain(hand.text)
    assert len(hand.times) == 1 and hand.times[0].unix == int(T0) + 30
    warned = render.hand(dataclasses.replace(game, ran_out=1), 1, PLACE, lang, T0)
    assert plain(t(lang, "hand_play_by_last", time="07:07:10 UTC")) in plain(warned.text)
    assert render.hand(game, 2, PLACE, lang, T0).times == ()


@LANGS
def test_r20_a_final_play_made_by_the_table_is_told_so(lang: str) -> None:
    game = clocked("5♠", "3♠ 4♠", "6♠", rank="5")
    after, events = settle(game, T0 + 30)
    assert [type(e) for e in events] == [ev.TablePlayed, ev.Called, ev.FinalPlay]
    said = announcements.note(events, after, lang, game)
    expected = t(lang, "note_table_final", name="Ann", seconds=30, n=1, rank="5")
    assert said == expected
    by_hand = apply(game, Play(1, cards("5♠")), T0)
    assert announcements.note(by_hand[1], by_hand[0], lang, game) == t(
        lang, "note_final", player="Ann", n=1, rank="5"
    )


@LANGS
def test_r20_the_forfeit_after_a_second_run_out_is_told_so(lang: str) -> None:
    game = dataclasses.replace(clocked("A♠ 2♠", "3♠ 4♠", "5♠"), ran_out=1)
    after, events = settle(game, T0 + 30)
    assert ev.Forfeited(1, clock=True) in events
    assert announcements.note(events, after, lang, game) == t(
        lang, "note_forfeited_clock", name="Ann"
    )
    if lang == "en":
        assert plain(t(lang, "note_forfeited_clock", name="Ann")) == (
            "Ann forfeits: two turns without a play."
        )


@LANGS
def test_r20_settings_show_the_clock_and_a_button_per_choice_unless_a_game_runs(
    lang: str,
) -> None:
    lobby = render.settings(60, None, PLACE, lang)
    row = lobby.buttons[0]
    assert [decode(b.data).number for b in row if b.data] == list(CLOCK_CHOICES)
    assert all(decode(b.data).kind is Kind.CLOCK for b in row if b.data)
    ticked = [plain(b.text) for b in row if b.text.startswith("✓")]
    assert ticked == ["✓ " + plain(t(lang, "btn_clock", seconds=60))]
    assert plain(t(lang, "settings_clock", seconds=60)) in plain(lobby.text)
    off = render.settings(0, None, PLACE, lang)
    assert plain(t(lang, "settings_clock_off")) in plain(off.text)
    running = render.settings(90, clocked("A♠", "2♠"), PLACE, lang)
    assert running.buttons == ()
    assert plain(t(lang, "clock_running")) in plain(running.text)
    # A running game's own clock is the one shown.
    assert plain(t(lang, "settings_clock", seconds=30)) in plain(running.text)
