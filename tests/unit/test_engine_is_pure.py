"""The engine imports only the standard library and itself: it must run anywhere, untouched."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "engine"


def imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


def test_engine_imports_only_the_standard_library_and_itself() -> None:
    files = sorted(ENGINE.rglob("*.py"))
    assert len(files) >= 5
    outside = {
        f"{path.name}: {module}"
        for path in files
        for module in imported_modules(path)
        if module.split(".")[0] not in sys.stdlib_module_names | {"engine"}
    }
    assert not outside


def test_the_check_itself_sees_a_third_party_import(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("import telegram\nfrom boto3 import client\nimport json\n")
    assert imported_modules(sample) == {"telegram", "boto3", "json"}
