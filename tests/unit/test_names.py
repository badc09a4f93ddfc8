"""Names as players see them: cleaned once when stored, told apart on every screen."""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from handlers import names
from handlers.names import ELLIPSIS, NAME_LENGTH, ROBOT, ZWJ, ZWNJ, labels, person
from infra import confusables

INVISIBLE = [
    "\u200b",  # zero-width space
    "\u2060",  # word joiner
    "\ufeff",  # byte order mark
    "\u00ad",  # soft hyphen
    "\u200e",  # left-to-right mark
    "\u200f",  # right-to-left mark
    "\u061c",  # Arabic letter mark
    "\u202e",  # right-to-left override
    "\u2066",  # left-to-right isolate
    "\u2069",  # pop directional isolate
    "\u180e",  # Mongolian vowel separator
    "\U000e0041",  # tag letter A
]
LAYOUT = ["\n", "\r", "\t", "\u2028", "\u2029", "\u0085", "\u00a0", "\u3000", "\u2003"]
BLANK_LETTERS = ["\u3164", "\u115f", "\u1160", "\uffa0", "\u2800"]


def test_invisible_characters_are_removed_from_a_name() -> None:
    for ch in INVISIBLE:
        assert person(f"S{ch}a{ch}m") == "Sam", repr(ch)
        assert person(ch + "Sam" + ch) == "Sam", repr(ch)


def test_layout_characters_and_blank_letters_become_one_space() -> None:
    for ch in LAYOUT + BLANK_LETTERS:
        assert person(f"Ann{ch}{ch}Lee") == "Ann Lee", repr(ch)
        assert person(f"{ch}Ann{ch}") == "Ann", repr(ch)


def test_the_joiners_arabic_and_emoji_need_are_kept() -> None:
    persian = "می" + ZWNJ + "خواهم"  # a word Persian writes with a zero-width non-joiner
    family = "👨" + ZWJ + "👩" + ZWJ + "👧"
    assert person(persian) == persian
    assert person(f"Sam {family}") == f"Sam {family}"
    assert person("خالد") == "خالد"


def test_a_name_of_nothing_visible_is_empty() -> None:
    for raw in ["", " ", "\u3164", "\u200b\u2060", ZWJ + ZWNJ, "\u2028\u2029", ROBOT, "🤖\ufe0f"]:
        assert person(raw) == "", repr(raw)


def test_nobody_can_take_the_computer_players_mark() -> None:
    assert person("🤖 Robot 1") == "Robot 1"
    assert person("Robo🤖t") == "Robo t"
    assert ROBOT not in person("🤖\ufe0f🤖 Sam 🤖")


def test_a_long_name_is_cut_and_ends_with_an_ellipsis() -> None:
    cut = person("A" * 100)
    assert cut == "A" * (NAME_LENGTH - 1) + ELLIPSIS
    assert len(cut) == NAME_LENGTH
    assert person("A" * NAME_LENGTH) == "A" * NAME_LENGTH, "a name that fits is not cut"
    # Cut at a space: no space before the ellipsis.
    word = "A" * (NAME_LENGTH - 2)
    assert person(f"{word} {word}") == word + ELLIPSIS


def test_a_cut_never_splits_a_character() -> None:
    family = "👨" + ZWJ + "👩" + ZWJ + "👧"  # one picture, five code points
    flag = "\U0001f1eb\U0001f1f7"  # one flag, two code points
    accent = "e\u0301"  # é as a letter and a combining accent
    for unit in (family, flag, accent, "👍🏽", "❤\ufe0f"):
        for pad in range(len(unit) + 1):
            cut = person("x" * (NAME_LENGTH - pad) + unit * 10)
            assert cut.endswith(ELLIPSIS) and len(cut) <= NAME_LENGTH
            body = cut.removesuffix(ELLIPSIS).lstrip("x")
            assert body == unit * (len(body) // len(unit)), (unit, pad, cut)


def test_equal_names_are_told_apart_in_seat_order() -> None:
    shown = labels([1, 2, 3, 4], ["Sam", "Bob", "sam", "ＳＡＭ"])
    assert shown == ("Sam", "Bob", "sam\u00a0²", "ＳＡＭ\u00a0³")


def test_a_person_called_like_a_computer_player_is_told_apart_from_it() -> None:
    shown = labels([-1, 5, 6], ["Robot 1", "Robot 1", "🤖 Robot 1"])
    assert shown[0] == "🤖 Robot 1"
    assert shown[1] == "Robot 1"
    assert len({names._key(s) for s in shown}) == 3


def test_a_name_that_looks_like_a_told_apart_name_is_told_apart_too() -> None:
    shown = labels([1, 2, 3], ["Sam ²", "Sam", "Sam"])
    assert shown == ("Sam ²", "Sam", "Sam\u00a0³")


def test_look_alikes_are_told_apart_like_equal_names() -> None:
    """Cyrillic and Greek letters that look Latin, and the joiners a name keeps, fold: the
    issue's names get the mark exact duplicates get."""
    seated = ["Sam", "Nico", "Ѕаm", f"S{ZWJ}am", f"S{ZWNJ}am", "Νiсo", "Sarn", "Il", "ll"]
    shown = labels(list(range(1, len(seated) + 1)), seated)
    marked = [
        f"{name}\u00a0{names.superscript(n)}"
        for name, n in zip(seated[2:6], (2, 3, 4, 2), strict=True)
    ]
    assert shown == ("Sam", "Nico", *marked, "Sarn\u00a0⁵", "Il", "ll\u00a0²")


def test_names_that_differ_to_the_eye_stay_apart() -> None:
    """Accents, other letters and other scripts are not look-alikes: no mark."""
    seated = ["Chloé", "Chloe", "Ann", "Anne", "Bob", "Bop", "أمل", "امل", "خالد", "Léa", "Lea"]
    assert labels(list(range(1, len(seated) + 1)), seated) == tuple(seated)


def test_every_look_alike_of_the_table_reads_as_its_prototype() -> None:
    """The shipped table, as the names compare: each character reads as its prototype (but the
    few whose prototype NFKC itself changes: "%" is "º/₀"), and it keeps Unicode's header."""
    data = json.loads(names._CONFUSABLES.read_text(encoding="utf-8"))
    header = "\n".join(data["header"])
    assert "© 2020 Unicode®, Inc." in header and "terms_of_use" in header
    assert "Version: 13.0.0" in header
    pairs = [(s, p) for p, sources in data["look-alikes"].items() for s in sources]
    assert len(pairs) == len(names._prototypes()) - 2, "one line per look-alike, and the joiners"
    apart = [(s, p) for s, p in pairs if names._key(s) != names._key(p)]
    assert all(unicodedata.normalize("NFKC", p) != p for _, p in apart), apart
    assert len(apart) < 10


def test_the_table_is_written_from_confusables_txt_with_what_a_name_can_hold() -> None:
    """infra/confusables.py, on lines of confusables.txt's form: the header kept, the sources a
    cleaned name never holds left out (a space, a format character, what NFKC changes, what
    decomposes), the rest grouped by prototype."""
    source = [
        "# confusables.txt",
        "# © 2020 Unicode®, Inc.",
        "0455 ;\t0073 ;\tMA\t# ( ѕ → s ) CYRILLIC SMALL LETTER DZE → LATIN SMALL LETTER S\t#",
        "",
        "0C1F ;\t0073 ;\tMA\t#",
        "006D ;\t0072 006E ;\tMA\t# ( m → rn )",
        "2003 ;\t0020 ;\tMA\t# EM SPACE",
        "200B ;\t0020 ;\tMA\t# ZERO WIDTH SPACE",
        "FF53 ;\t0073 ;\tMA\t# FULLWIDTH S",
        "0227 ;\t00E5 ;\tMA\t# a WITH DOT ABOVE",
    ]
    written = json.loads(confusables.write(source))
    assert written["header"] == ["# confusables.txt", "# © 2020 Unicode®, Inc."]
    assert written["look-alikes"] == {"s": "ѕట", "rn": "m"}


def test_the_table_is_read_at_the_first_comparison_not_at_import() -> None:
    probe = "import handlers.names as n; print(n._prototypes.cache_info().currsize)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "0", done.stderr


def test_player_n_takes_the_first_number_nobody_reads_as() -> None:
    def player(n: int) -> str:
        return f"Player {n}"

    assert names.numbered(player, []) == "Player 1"
    assert names.numbered(player, ["player 1", "Ann", "PLAYER 2"]) == "Player 3"


def test_the_group_title_is_cleaned_and_cut_like_a_name() -> None:
    assert names.title("Friday\u2028cards\u200b") == "Friday cards"
    assert names.title("x" * 40) == "x" * 23 + ELLIPSIS


@given(st.text(max_size=80))
def test_cleaning_any_text_keeps_nothing_invisible_and_fits(raw: str) -> None:
    name = person(raw)
    assert len(name) <= NAME_LENGTH
    assert person(name) == name, "cleaning twice changes nothing"
    assert ROBOT not in name
    for ch in name:
        category = unicodedata.category(ch)
        assert ch in (ZWJ, ZWNJ) or category not in ("Cf", "Cs", "Cc", "Zl", "Zp"), repr(ch)
    assert name == name.strip(), "no space at either end"
    assert "  " not in name


@given(
    st.lists(
        st.sampled_from(["Sam", "sam", "Sam ²", "Robot 1", "ＳＡＭ", "Bob", "Ѕаm", "S\u200dam"]),
        max_size=8,
    )
)
def test_no_two_seats_ever_read_the_same(seated: list[str]) -> None:
    ids = [-(i + 1) if i % 3 == 2 else i + 1 for i in range(len(seated))]
    shown = labels(ids, seated)
    assert len({names._key(s) for s in shown}) == len(shown)
