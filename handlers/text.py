"""Words in the players' languages: one catalogue file per language, plurals, right-to-left care.

A catalogue is `i18n/<code>.json`: keys to `str.format` templates, or to an object of CLDR plural
categories. Its meta keys start with "_": `_plural` names the plural rule, `_dir` is "ltr" or
"rtl". Adding a language is adding one file; every file must have exactly English's keys and
placeholders, which `catalogues()` checks (the tests run it). The bot reads a file when its
language is first used: a new container's first update needs one or two of them, not all.

Every value put into a template is isolated (FSI … PDI), and values joined only by "×" form one
chunk ("2 × R"), so a name or a card in another script never reorders the sentence around it. In
a right-to-left language every line also starts with RLM, so Telegram lays it out right to left
even when the line begins with a Latin name.

Every value is also made inert (`inert`): Telegram turns "/word", "@user", "#tag", "$TAG",
links and e-mail addresses in a plain text into things to tap, and a value is a name or a
group's title, which anyone chooses. A value can never become one of them; the templates' own
commands (/newgame in the help) stay tappable.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from string import Formatter
from typing import Any

FSI = "\u2068"  # first strong isolate: the direction of what follows is its own
PDI = "\u2069"  # pop directional isolate
RLM = "\u200f"  # right-to-left mark
WORD_JOINER = "\u2060"  # invisible, and no part of a command, a mention, a tag or a domain
DEFAULT = "en"

# Bidi controls a name may carry (overrides, embeddings, isolates, marks): removed, so a name
# cannot reach out of its isolate and flip the text around it.
_BIDI_CONTROLS = re.compile("[\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]")
# Where Telegram's detectors start (tdlib, td/telegram/MessageEntity.cpp): a command is "/"
# then [A-Za-z0-9_] (match_bot_commands), a mention "@" then [A-Za-z0-9_] (match_mentions), a
# hashtag "#" then a letter, digit or "_" (match_hashtags), a cashtag "$" then [A-Z]
# (match_cashtags), a tg:// link "tg:" then "//" (match_tg_urls); a link or an e-mail address
# is read from a dot outwards, through the characters a domain may hold (match_urls:
# is_domain_symbol, is_url_unicode_symbol), which in General Punctuation are only the two
# joiners and the dashes. A word joiner after each of these characters ends every one of
# them at its first character, and shows nothing.
_ACTIVE = re.compile(r"[/@#$.]")
# What may stand between two placeholders that form one chunk: "{n} × {rank}".
_JOINER = re.compile(r" ?× ?")

COMMANDS = (  # the group menu, in menu order
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
)


class CatalogueError(ValueError):
    """A catalogue file does not match English or is malformed: found by the tests, not in play."""


def _plural_en(n: int) -> str:
    return "one" if n == 1 else "other"


def _plural_fr(n: int) -> str:
    return "one" if n in (0, 1) else "other"  # "0 carte", as French says it


def _plural_ar(n: int) -> str:
    if n == 0:
        return "zero"
    if n == 1:
        return "one"
    if n == 2:
        return "two"
    if 3 <= n % 100 <= 10:
        return "few"
    if 11 <= n % 100 <= 99:
        return "many"
    return "other"


# CLDR's plural rules, for whole numbers, each named after the first catalogue that used it: a
# catalogue names its rule in `_plural`, so a language whose numbers agree like English's (German,
# Spanish …) or French's (Brazilian Portuguese …) is only a file; another rule is a function here.
PLURAL_RULES: Mapping[str, tuple[Callable[[int], str], frozenset[str]]] = {
    "en": (_plural_en, frozenset({"one", "other"})),
    "fr": (_plural_fr, frozenset({"one", "other"})),
    "ar": (_plural_ar, frozenset({"zero", "one", "two", "few", "many", "other"})),
}

Entry = str | dict[str, str]


@dataclass(frozen=True, slots=True)
class Catalogue:
    rtl: bool
    plural: Callable[[int], str]
    entries: Mapping[str, Entry]


def inert(value: str) -> str:
    """`value` as it reads, but never a command, a mention, a hashtag, a cashtag, a link or an
    e-mail address for Telegram (see `_ACTIVE`)."""
    return _ACTIVE.sub(lambda found: found[0] + WORD_JOINER, value)


def isolate(name: str) -> str:
    """`name` (a player, a group, a card, "2 × R") as one inert unit, whatever its script."""
    return FSI + inert(_BIDI_CONTROLS.sub("", name)) + PDI


@cache
def _parts(template: str) -> tuple[tuple[str, str | None], ...]:
    parts = []
    for literal, field, spec, conversion in Formatter().parse(template):
        if field is not None and (not field.isidentifier() or spec or conversion):
            raise CatalogueError(f"only plain {{name}} placeholders are allowed: {template!r}")
        parts.append((literal, field))
    return tuple(parts)


@cache
def _fields(template: str) -> frozenset[str]:
    """The placeholders of a template."""
    return frozenset(field for _, field in _parts(template) if field is not None)


def _fill(template: str, values: Mapping[str, object]) -> str:
    out: list[str] = []
    chunk: list[str] | None = None
    for literal, field in _parts(template):
        if chunk is not None and field is not None and _JOINER.fullmatch(literal):
            chunk += [literal, str(values[field])]
            continue
        if chunk is not None:
            out.append(isolate("".join(chunk)))
            chunk = None
        out.append(literal)
        if field is not None:
            chunk = [str(values[field])]
    if chunk is not None:
        out.append(isolate("".join(chunk)))
    return "".join(out)


def _entry_templates(entry: Entry) -> list[str]:
    return [entry] if isinstance(entry, str) else list(entry.values())


def _parse(code: str, raw: Any) -> Catalogue:
    if not isinstance(raw, dict):
        raise CatalogueError(f"{code}: not an object")
    rule = str(raw.get("_plural"))
    if rule not in PLURAL_RULES:
        raise CatalogueError(f"{code}: _plural must be one of {sorted(PLURAL_RULES)}")
    direction = raw.get("_dir", "ltr")
    if direction not in ("ltr", "rtl"):
        raise CatalogueError(f"{code}: _dir must be 'ltr' or 'rtl'")
    plural, categories = PLURAL_RULES[rule]
    entries: dict[str, Entry] = {}
    for key, value in raw.items():
        if key.startswith("_"):
            continue
        if isinstance(value, dict):
            if "other" not in value or not set(value) <= categories:
                raise CatalogueError(f"{code}.{key}: plural forms must be of {sorted(categories)}")
            if not all(isinstance(v, str) for v in value.values()):
                raise CatalogueError(f"{code}.{key}: plural forms must be strings")
        elif not isinstance(value, str):
            raise CatalogueError(f"{code}.{key}: must be a string or plural forms")
        for template in _entry_templates(value):
            _fields(template)  # raises on a malformed template
        entries[key] = value
    return Catalogue(direction == "rtl", plural, entries)


def _check(catalogues: Mapping[str, Catalogue]) -> None:
    """Every language has English's keys, and each template English's placeholders.

    A plural form may leave out {n} (Arabic says "بطاقة واحدة", not "1 بطاقة").
    """
    english = catalogues[DEFAULT].entries
    # English's placeholders, key by key, worked out once for all the languages.
    fields = {k: frozenset().union(*map(_fields, _entry_templates(e))) for k, e in english.items()}
    for code, catalogue in catalogues.items():
        missing = english.keys() - catalogue.entries.keys()
        extra = catalogue.entries.keys() - english.keys()
        if missing or extra:
            raise CatalogueError(f"{code}: missing {sorted(missing)}, unknown {sorted(extra)}")
        for key, entry in catalogue.entries.items():
            wanted = fields[key]
            optional = {"n"} if isinstance(entry, dict) or isinstance(english[key], dict) else set()
            for template in _entry_templates(entry):
                have = _fields(template)
                if not wanted - optional <= have <= wanted:
                    raise CatalogueError(
                        f"{code}.{key}: placeholders {sorted(have)}, English has {sorted(wanted)}"
                    )


# A folder beside this file, as the package is installed (and in the Lambda artifact):
# importlib.resources would cost each cold start imports for nothing more.
_FOLDER = Path(__file__).parent / "i18n"
_CODES = frozenset(item.name.removesuffix(".json") for item in _FOLDER.glob("*.json"))
if DEFAULT not in _CODES:
    raise CatalogueError(f"no {DEFAULT}.json")
# English first, then the others by code: the language buttons index this tuple.
SUPPORTED: tuple[str, ...] = (DEFAULT, *sorted(_CODES - {DEFAULT}))


@cache
def _read(code: str) -> Catalogue:
    path = _FOLDER / f"{code}.json"
    return _parse(code, json.loads(path.read_text(encoding="utf-8")))


def catalogues() -> dict[str, Catalogue]:
    """Every language's catalogue, checked against English (`CatalogueError` if one is not).

    Not done at import, where every cold start would pay for reading and checking languages its
    updates may never use: the tests call it, so a bad file fails them before it is deployed.
    """
    found = {code: _read(code) for code in SUPPORTED}
    _check(found)
    return found


def language_of(code: str | None) -> str:
    """A supported language for Telegram's `language_code` ("ar", "ar-EG", "en-US", None)."""
    primary = (code or "").replace("_", "-").split("-")[0].lower()
    return primary if primary in _CODES else DEFAULT


def _catalogue(lang: str) -> Catalogue:
    return _read(lang if lang in _CODES else DEFAULT)


def is_rtl(lang: str) -> bool:
    return _catalogue(lang).rtl


def block(lang: str, lines: Iterable[str]) -> str:
    """Lines as one text; in a right-to-left language each starts with RLM."""
    if not is_rtl(lang):
        return "\n".join(lines)
    return "\n".join(line if line.startswith(RLM) else RLM + line for line in lines)


def _template(catalogue: Catalogue, key: str, n: int | None) -> str:
    entry = catalogue.entries[key]
    if isinstance(entry, str):
        return entry
    category = catalogue.plural(abs(n)) if n is not None else "other"
    return entry.get(category, entry["other"])


# The same few thousand texts are asked for on every screen of a container's games (a hand, the
# table): each is made once. `typed`: 1 and 1.0, True and 1 are told apart, as `str` tells them.
@lru_cache(maxsize=4096, typed=True)
def t(lang: str, key: str, **values: object) -> str:
    """The text of `key` in `lang` (English if unsupported), placeholders filled and isolated.

    A plural key is chosen by `n` when it is given among the values (see `tn`). The values are
    names, numbers and texts: hashable.
    """
    catalogue = _catalogue(lang)
    n = values.get("n")
    template = _template(catalogue, key, n if isinstance(n, int) else None)
    return block(lang, _fill(template, values).split("\n"))


def tn(lang: str, key: str, n: int, **values: object) -> str:
    """The plural form of `key` for `n` ("1 card", "9 cards"); `n` also fills {n}."""
    return t(lang, key, n=n, **values)


def commands(lang: str) -> tuple[tuple[str, str], ...]:
    """(command, description) pairs for Telegram's setMyCommands, in menu order."""
    catalogue = _catalogue(lang)
    return tuple((name, _template(catalogue, f"cmd_{name}", None)) for name in COMMANDS)
