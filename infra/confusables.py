"""Writes `handlers/confusables.json`, the look-alikes names are told apart by, from Unicode's
`confusables.txt` (UTS #39, Unicode Security Mechanisms: https://www.unicode.org/Public/security/).

    python -m infra.confusables path/to/confusables.txt > handlers/confusables.json

Only what a name can hold is kept: `handlers.names` compares names NFKC-normalised, decomposed,
without invisible characters, so a character that NFKC changes (𝐀, ﬁ, full-width letters) or
that decomposes (é), a space, a control or a format character never reaches the table: 2,524
of its 6,311 lines (in version 13.0.0). What is left is grouped by prototype, one line each
(`"prototype": "its look-alikes"`), in ASCII (`\\u` escapes: no bidirectional or combining
character in the file), after the original header (Unicode's copyright and terms of use,
which permit redistribution with it). JSON, because the standard library reads it in C: the
table is read when a container first compares names.
"""

from __future__ import annotations

import json
import sys
import unicodedata
from collections.abc import Iterable

# What no name keeps once cleaned (handlers.names): spaces, separators, controls, format
# characters, surrogates, private use, unassigned.
_NEVER_IN_A_NAME = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn"})


def mappings(lines: Iterable[str]) -> dict[str, str]:
    """The source → prototype pairs of confusables.txt's data lines that a name can meet."""
    found: dict[str, str] = {}
    for line in lines:
        data = line.split("#", 1)[0].strip()
        if not data:
            continue
        source_hex, target_hex, *_ = (field.strip() for field in data.split(";"))
        source = chr(int(source_hex, 16))
        if unicodedata.category(source) in _NEVER_IN_A_NAME:
            continue
        if unicodedata.normalize("NFKC", source) != source:
            continue  # NFKC changes it: never in a name as compared
        if unicodedata.normalize("NFD", source) != source:
            continue  # decomposed before it is looked up: é is e and an accent
        found[source] = "".join(chr(int(code, 16)) for code in target_hex.split())
    return found


def header(lines: Iterable[str]) -> list[str]:
    """The original file's header: its comment lines before the first data line."""
    kept = []
    for line in lines:
        if not line.startswith("#"):
            break
        kept.append(line.rstrip())
    return kept


def write(lines: list[str]) -> str:
    """handlers/confusables.json's text, from confusables.txt's lines."""
    groups: dict[str, str] = {}
    for source, target in mappings(lines).items():
        groups[target] = groups.get(target, "") + source
    about = (
        "UTS #39's look-alikes as handlers/names.py reads them, written by infra/confusables.py: "
        "each prototype with the characters that may be mistaken for it, only those a cleaned "
        "name can hold. From Unicode's confusables.txt, whose header is kept."
    )
    lines_of = ",\n".join(f"{json.dumps(p)}: {json.dumps(s)}" for p, s in groups.items())
    return (
        f'{{"about": {json.dumps(about)},\n"header": {json.dumps(header(lines))},\n'
        f'"look-alikes": {{\n{lines_of}\n}}}}\n'
    )


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8-sig") as source:
        sys.stdout.write(write(source.read().split("\n")))
