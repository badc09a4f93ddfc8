"""A language is one catalogue file and its glossary, nothing more: a made-up fourth language,
added as one file beside a copy of the bot's code, is offered by /language, has its command
menus, speaks to a Telegram app set to it, and plays a whole game through the webhook."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from string import Formatter
from typing import Any

import handlers

ROOT = Path(__file__).resolve().parents[2]
CODE = "zz"  # no language has this code: a made-up one

# Run with the copy first on the path (and -P: not the working directory), so `handlers` is the
# copy with its one more file, and everything else (engine, tests, infra) is the project's own.
GAME = f"""
import handlers
from handlers import registration, text
from tests.e2e.test_game import play_a_whole_game

assert {CODE!r} in text.SUPPORTED
assert {CODE!r} in text.catalogues(), "checked against English"
assert text.language_of({CODE + "-XX"!r}) == {CODE!r}
assert [m.language for m in registration.menus()].count({CODE!r}) == 2, "group and private"
play_a_whole_game({CODE!r})
print(handlers.__file__)
"""


def made_up(template: str) -> str:
    """English's template in capitals, its placeholders as they are: a language of its own."""
    out = []
    for literal, field, _, _ in Formatter().parse(template):
        out.append(literal.upper().replace("{", "{{").replace("}", "}}"))
        if field is not None:
            out.append("{" + field + "}")
    return "".join(out)


def made_up_catalogue(english: dict[str, Any]) -> dict[str, Any]:
    catalogue: dict[str, Any] = {"_plural": "fr", "_dir": "ltr"}
    for key, value in english.items():
        if key.startswith("_"):
            continue
        if isinstance(value, dict):
            catalogue[key] = {form: made_up(v) for form, v in value.items()}
        else:
            catalogue[key] = made_up(value)
    catalogue["language_name"] = "Zedish"
    return catalogue


def test_a_fourth_language_is_one_file_and_a_whole_game_plays_in_it(tmp_path: Path) -> None:
    package = Path(handlers.__file__).parent
    copy = tmp_path / "code" / "handlers"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    english = json.loads((package / "i18n" / "en.json").read_text(encoding="utf-8"))
    catalogue = json.dumps(made_up_catalogue(english), ensure_ascii=False, indent=1)
    (copy / "i18n" / f"{CODE}.json").write_text(catalogue, encoding="utf-8")
    glossary = (package / "i18n" / "glossary.en.txt").read_text(encoding="utf-8")
    (copy / "i18n" / f"glossary.{CODE}.txt").write_text(glossary.upper(), encoding="utf-8")
    before = {p.relative_to(package) for p in package.rglob("*") if "__pycache__" not in p.parts}
    after = {p.relative_to(copy) for p in copy.rglob("*") if "__pycache__" not in p.parts}
    assert after - before == {Path("i18n", f"{CODE}.json"), Path("i18n", f"glossary.{CODE}.txt")}

    path = os.pathsep.join([str(copy.parent), str(ROOT)])
    run = subprocess.run(
        [sys.executable, "-P", "-c", GAME],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip() == str(copy / "__init__.py"), "the copy played, not the project"
