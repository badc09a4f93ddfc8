"""The fake Bot API finds what Telegram makes tappable, and the bot's values never are.

The cases below are tdlib's own (test/message_entities.cpp), where the fake's detectors
(`infra.entities`) follow it; then the hostile names of the issue, tappable as they are and
inert once the bot has put them into a sentence.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from handlers.text import FSI, PDI, SUPPORTED, inert, isolate, t
from infra import entities
from infra.entities import Span, find_entities

HOSTILE_NAMES = [
    "/forfeit",
    "/stop@menteur_test_bot",
    "/stop@yourbot",
    "@someone",
    "#tag",
    "$BTC",
    "example.com",
    "t.me/x",
    "a@b.co",
    "https://evil.example/x?y=1",
    "tg://resolve?domain=evil",
    "ton://x",
    "mailto:a@b.co",
    "127.0.0.1",
    "www.x.org",
    "#1INCH $1INCH",
    "@gif",
    "Ann /newgame@x_bot #a $AB",
    "x.y.z.com/path#frag",
    "a.b@c.d.ef",
    "http://a@b.com:8080/x",
]


def texts(find: Callable[[str], list[Span]], s: str) -> list[str]:
    return [s[start:end] for start, end in find(s)]


@pytest.mark.parametrize(
    ("s", "expected"),
    [
        ("@mention", ["@mention"]),
        (" @mention ", ["@mention"]),
        ("@abc @xyz @abc @xyz @xxx@yyy @ttt", []),
        (
            "@abcde @xyzxy @abcde @xyzxy @xxxxx@yyyyy @ttttt",
            ["@abcde", "@xyzxy", "@abcde", "@xyzxy", "@xxxxx", "@ttttt"],
        ),
        ("no@mention", []),
        ("@n", []),
        ("@abcdefghijklmnopqrstuvwxyz123456", ["@abcdefghijklmnopqrstuvwxyz123456"]),
        ("@abcdefghijklmnopqrstuvwxyz1234567", []),
        ("нет@mention", []),
        ("@ya @gif @wiki @vid @pic @bold @cap @y @yar", ["@gif", "@wiki", "@vid", "@pic", "@bold"]),
    ],
)
def test_mentions_are_found_as_tdlib_finds_them(s: str, expected: list[str]) -> None:
    assert texts(entities.find_mentions, s) == expected


@pytest.mark.parametrize(
    ("s", "expected"),
    [
        ("/abc", ["/abc"]),
        (" /abc ", ["/abc"]),
        ("/a@abc", ["/a@abc"]),
        ("/a@b", []),
        ("/@bfdsa", []),
        ("/test/", []),
    ],
)
def test_bot_commands_are_found_as_tdlib_finds_them(s: str, expected: list[str]) -> None:
    assert texts(entities.find_bot_commands, s) == expected


@pytest.mark.parametrize(
    ("s", "expected"),
    [
        ("#", []),
        ("##", []),
        ("#a", ["#a"]),
        (" #я ", ["#я"]),
        (" я#a ", []),
        (" #a# ", []),
        (" #123 ", []),
        (" #123a ", ["#123a"]),
        (" #" + "1" * 256 + "a ", []),
        (" #" + "1" * 255 + "a", ["#" + "1" * 255 + "a"]),
        ("#a#b #c #d", ["#c", "#d"]),
        ("#te·st", ["#te·st"]),
        ("#a\u2122", ["#a"]),
    ],
)
def test_hashtags_are_found_as_tdlib_finds_them(s: str, expected: list[str]) -> None:
    assert texts(entities.find_hashtags, s) == expected


@pytest.mark.parametrize(
    ("s", "expected"),
    [
        ("$a", []),
        ("$A", ["$A"]),
        ("$ABС", []),  # a Cyrillic С
        ("$ABCDEFGH", ["$ABCDEFGH"]),
        ("$ABCDEFGHJ", []),
        (" $$XYZ ", []),
        (" $XYZ$ ", []),
        (" 1$ABC ", []),
        ("$ABC$DEF $GHI $KLM", ["$GHI", "$KLM"]),
        ("...$1INCH...", ["$1INCH"]),
        ("$1INCHA", []),
        ("\u2122$ABC\u2122", ["$ABC"]),
    ],
)
def test_cashtags_are_found_as_tdlib_finds_them(s: str, expected: list[str]) -> None:
    assert texts(entities.find_cashtags, s) == expected


@pytest.mark.parametrize(
    ("s", "expected"),
    [
        ("tg://a", ["tg://a"]),
        ("stg://a", ["tg://a"]),
        ("tg:test/", []),
        ("tg://test/?", ["tg://test/"]),
        ("tg://test?", ["tg://test"]),
        ("tg://test/?.:;,('?!`.:;,('?!`", ["tg://test/"]),
        ("tg://test?as«df", ["tg://test?as"]),
        ("tg://google.com", ["tg://google"]),
        ("tg://б.а.н.а.на", []),
    ],
)
def test_tg_links_are_found_as_tdlib_finds_them(s: str, expected: list[str]) -> None:
    assert texts(entities.find_tg_urls, s) == expected


@pytest.mark.parametrize(
    ("s", "email"),
    [
        ("telegram.org", False),
        ("security@telegram.org", True),
        ("A@a.a.a.ab", True),
        ("a.bc@d.ef", True),
        ("a.a.a.a.a.a.a.a.a.a.a.a@a.ab", False),
        ("a@a.a.a.a.a.a.a.ab", False),
        ("a@a.a.a.a.a.a.abcdefghi", False),
        ("a@-b.ab", False),
    ],
)
def test_email_addresses_are_told_as_tdlib_tells_them(s: str, email: bool) -> None:
    assert entities.is_email_address(s) is email


@pytest.mark.parametrize(
    ("s", "urls", "emails"),
    [
        ("telegram.org", ["telegram.org"], []),
        ("(telegram.org)", ["telegram.org"], []),
        (".telegram.org)", [], []),
        (" telegram. org. www. com... telegram.org... ...google.com...", ["telegram.org"], []),
        ("http://google,.com", [], []),
        ("http://telegram.org/?asd=123#123.", ["http://telegram.org/?asd=123#123"], []),
        ("http://@google.com", [], []),
        ("http://a@google.com", ["http://a@google.com"], []),
        ("ftps://telegram.org", [], []),
        ("sHTTP://telegram.org", [], []),
        ("аHTTP://telegram.org", ["HTTP://telegram.org"], []),
        (".ahttp://google.com", [], []),
        ("google.com:65535", ["google.com:65535"], []),
        ("google.com:65536", ["google.com"], []),
        ("127.0.0.1", ["127.0.0.1"], []),
        ("127.0.0.256", [], []),
        ("1.0", [], []),
        ("www.🤙.tk", ["www.🤙.tk"], []),
        ("teiegram.org/test", [], []),
        ("http://test.google.com/?q=abc()}[]def", ["http://test.google.com/?q=abc()"], []),
        ("http://google_.com", [], []),
        ("http://google.com##", ["http://google.com##"], []),
        ("a.bc@c.com", [], ["a.bc@c.com"]),
        ("https://a.de[bc@c.com", ["https://a.de"], ["bc@c.com"]),
        ("mailto:a@b.co", [], ["a@b.co"]),
    ],
)
def test_links_and_email_addresses_are_found_as_tdlib_finds_them(
    s: str, urls: list[str], emails: list[str]
) -> None:
    found = entities.find_urls(s)
    assert [s[a:b] for (a, b), kind in found if kind == "url"] == urls
    assert [s[a:b] for (a, b), kind in found if kind == "email"] == emails


def test_only_the_top_level_domains_are_looser_than_telegrams() -> None:
    """tdlib knows "a.ab" and "test.abd" are no links (unknown top-level domains); the fake
    calls them links: it errs on the side of finding more."""
    assert [kind for _, kind in entities.find_urls("a.ab test.abd")] == ["url", "url"]


def test_entities_come_in_utf16_units_and_never_overlap() -> None:
    text = "🀄 /start @someone #tag $BTC example.com a@b.co"
    found = find_entities(text)
    assert [e["type"] for e in found] == [
        "bot_command",
        "mention",
        "hashtag",
        "cashtag",
        "url",
        "email",
    ]
    units = text.encode("utf-16-le")
    shown = [
        units[2 * e["offset"] : 2 * (e["offset"] + e["length"])].decode("utf-16-le") for e in found
    ]
    assert shown == ["/start", "@someone", "#tag", "$BTC", "example.com", "a@b.co"]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_every_hostile_name_is_tappable_as_it_stands(name: str) -> None:
    """The detector sees what the issue says Telegram sees: the checks below can fail."""
    assert find_entities(FSI + name + PDI), name


@pytest.mark.parametrize("lang", SUPPORTED)
@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_name_put_into_a_sentence_is_never_tappable(name: str, lang: str) -> None:
    for key in ("note_joined", "winner", "refusal_not_your_turn_named", "lobby_seat"):
        shown = t(lang, key, name=name, pos=1)
        assert find_entities(shown) == [], (name, key, shown)
    # Around any text a template could put next to it, and beside another name.
    for before, after in [("", ""), ("x", "y"), ("/", "/"), ("@", "."), ("#", "$"), (".", ".")]:
        assert find_entities(before + isolate(name) + after + isolate(name)) == []
    assert inert(name).replace("\u2060", "") == name, "it reads the same"
