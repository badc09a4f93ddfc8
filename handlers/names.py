"""Names as players see them: cleaned once when stored, told apart on every screen.

A Telegram name (or a group's title) is whatever its owner typed: invisible characters, line
and paragraph separators, a name that is only blank letters, the computer players' mark, more
than a table line can hold. `clean` is applied once, when the text is stored (a player's seat,
a group's title): invisible and layout characters go, spaces are collapsed, and a text too long
is cut at a character boundary and ends with "…". A name left empty is replaced by the caller
("Player N").

`labels` is applied on every screen, to all the names of a table at once: computer players
(negative ids, the bot's convention) carry 🤖, which no person's name keeps; names that look
the same get a superscript, in seat order ("Sam", "Sam ²"): the same once normalised (NFKC,
case folded, without the joiners a name keeps), or look-alikes by Unicode's confusables
(UTS #39: "Ѕаm" in Cyrillic letters looks like "Sam"). Making a name unable to act (a command,
a mention, a link) is `text.isolate`'s work, done to every value put into a sentence.
"""

from __future__ import annotations

import functools
import json
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path

# A table line is a name and about 25 characters ("▶ Sam · 12 cards · bullets ●●●"): 24 keeps
# it on one line of a phone. It also keeps the stored item small: 8 names of 24 Latin letters,
# with two of them in the table's note, stay within one 1 KB write unit, and 8 names of 24
# emoji (4 bytes each, the widest) within two (tests/integration/test_store.py).
NAME_LENGTH = 18
TITLE_LENGTH = 24  # the group's title, shown in private chats: "You are at the table in …"
ELLIPSIS = "…"
ROBOT = "\U0001f916"  # 🤖: the computer players' mark
_VS16 = "\ufe0f"  # emoji presentation selector, which may follow the mark
_NBSP = "\u00a0"  # keeps "Sam ²" together on one line
_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")

ZWNJ, ZWJ = "\u200c", "\u200d"
# The two format characters a name needs: Arabic (and Persian) shaping, and emoji sequences.
_KEPT_FORMAT = frozenset({ZWNJ, ZWJ})
# Letters and symbols that show as nothing: the usual way to an "empty" Telegram name.
_BLANK = frozenset({"\u115f", "\u1160", "\u3164", "\uffa0", "\u2800", "\ufffc", "\u180e"})


def _is_space(ch: str) -> bool:
    """Whitespace, line and paragraph separators (U+2028, U+2029), controls, blank letters."""
    return ch.isspace() or ch in _BLANK or unicodedata.category(ch) in ("Zs", "Zl", "Zp", "Cc")


def _is_dropped(ch: str) -> bool:
    """Format characters (zero-width space, bidi controls, BOM, soft hyphen, tags…) but the two
    joiners; and lone surrogates, which no message can carry."""
    return ch not in _KEPT_FORMAT and unicodedata.category(ch) in ("Cf", "Cs")


def _extends(ch: str) -> bool:
    """Whether `ch` belongs to the character before it: a cut must not fall before it."""
    code = ord(ch)
    return (
        unicodedata.category(ch) in ("Mn", "Mc", "Me")
        or ch in _KEPT_FORMAT
        or 0xFE00 <= code <= 0xFE0F  # variation selectors
        or 0x1F3FB <= code <= 0x1F3FF  # skin tones
        or 0xE0100 <= code <= 0xE01EF
    )


def _regional(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF  # a flag is two of these


def _boundary(text: str, i: int) -> bool:
    """Whether cutting `text` before index `i` keeps every character whole."""
    if i <= 0 or i >= len(text):
        return True
    if _extends(text[i]) or text[i - 1] == ZWJ:
        return False
    if _regional(text[i]) and _regional(text[i - 1]):
        run = 0
        while i - run - 1 >= 0 and _regional(text[i - run - 1]):
            run += 1
        return run % 2 == 0  # between two flags, not inside one
    return True


def _trim(text: str) -> str:
    """Spaces and joiners at either end do nothing."""
    return text.strip(" " + ZWNJ + ZWJ)


def cut(text: str, limit: int) -> str:
    """`text` in at most `limit` characters; a text cut ends with "…"."""
    if len(text) <= limit:
        return text
    end = limit - len(ELLIPSIS)
    while end > 0 and not _boundary(text, end):
        end -= 1
    return _trim(text[:end]) + ELLIPSIS


def clean(text: str, limit: int) -> str:
    """`text` without invisible or layout characters, spaces collapsed, cut to `limit`.

    "" when nothing visible is left. Applying it again changes nothing.
    """
    kept = "".join(" " if _is_space(ch) else ch for ch in text if not _is_dropped(ch))
    collapsed = _trim(" ".join(kept.split()))
    if not collapsed.strip(ZWNJ + ZWJ + " "):
        return ""
    return cut(collapsed, limit)


def person(full_name: str) -> str:
    """A person's name as stored at their seat: cleaned, without the computer players' mark.
    "" when nothing is left (the seat then says "Player N")."""
    return clean(full_name.replace(ROBOT + _VS16, " ").replace(ROBOT, " "), NAME_LENGTH)


def title(text: str) -> str:
    return clean(text, TITLE_LENGTH)


# UTS #39's look-alikes: each prototype with the characters that may be mistaken for it (from
# Unicode's confusables.txt by infra/confusables.py; its "header" says which version). Read
# when a container first compares names, never at import.
_CONFUSABLES = Path(__file__).with_name("confusables.json")


@functools.cache
def _prototypes() -> dict[int, str | None]:
    """`str.translate`'s table: each look-alike to its prototype, and the two joiners, the only
    invisible characters a cleaned name keeps, to nothing."""
    table: dict[int, str | None] = dict.fromkeys(map(ord, _KEPT_FORMAT))
    for prototype, sources in json.loads(_CONFUSABLES.read_bytes())["look-alikes"].items():
        table.update(dict.fromkeys(map(ord, sources), prototype))
    return table


def _look(text: str) -> str:
    """UTS #39's skeleton of a cleaned `text` once NFKC-normalised: decomposed, each character
    its prototype, without the joiners."""
    return unicodedata.normalize("NFD", unicodedata.normalize("NFKC", text)).translate(
        _prototypes()
    )


@functools.lru_cache(maxsize=1024)  # every screen compares its table's names again
def _key(label: str) -> str:
    """What two names (cleaned, `clean`) are compared by: what they look like, not how they are
    spelled. Case is folded between two skeletons, so that "SAM" meets "sam" ("sarn": m looks
    like rn) and "Il" meets "ll" (I looks like l)."""
    return " ".join(_look(_look(label).casefold()).split())


def same(label: str, name: str) -> bool:
    """Whether `name` (cleaned) reads as the seat's `label`: how a command names a player."""
    return _key(label) == _key(name)


def superscript(n: int) -> str:
    return str(n).translate(_SUPERSCRIPTS)


def labels(ids: Sequence[int], names: Sequence[str]) -> tuple[str, ...]:
    """The name each seat shows, aligned with `ids`: computer players marked, and a name that
    reads like an earlier seat's followed by a superscript ("Sam", "Sam ²")."""
    shown: list[str] = []
    taken: set[str] = set()
    for player, name in zip(ids, names, strict=True):
        base = f"{ROBOT} {name}" if player < 0 else name
        label, n = base, 1
        while _key(label) in taken:
            n += 1
            label = f"{base}{_NBSP}{superscript(n)}"
        taken.add(_key(label))
        shown.append(label)
    return tuple(shown)


def numbered(name: Callable[[int], str], taken: Sequence[str]) -> str:
    """`name(n)` ("Player 2") for the first n whose name no name in `taken` reads as."""
    keys = {_key(other) for other in taken}
    n = 1
    while _key(name(n)) in keys:
        n += 1
    return name(n)
