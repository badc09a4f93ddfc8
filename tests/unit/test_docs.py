"""The README stays one or two screens for a newcomer, and the pages it sends readers to exist:
every docs page is linked from it, every relative link of the README and the docs resolves (to a
file, and to a heading of it when the link names one), and the commands and versions it states
are the ones the project runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, *DOCS]
LINK = re.compile(r"\]\(([^)\s]+)\)")
COMMANDS = ("python3 infra/dev.py play", "python3 infra/dev.py test")


def links(page: Path) -> list[str]:
    """The relative links of a Markdown page (fenced code left out)."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t)]


def anchors(page: Path) -> set[str]:
    """GitHub's ids for a page's headings: lower case, punctuation dropped, spaces to hyphens."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_the_readme_fits_two_screens() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 200


def test_the_readme_links_every_docs_page() -> None:
    linked = {(README.parent / target.split("#")[0]).resolve() for target in links(README)}
    assert DOCS, "the docs folder holds the rest of the documentation"
    for page in DOCS:
        assert page.resolve() in linked, page.name


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_resolves_to_a_file_and_its_heading(page: Path) -> None:
    for target in links(page):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        assert file.exists(), (page.name, target)
        if anchor and file.suffix == ".md":
            assert anchor in anchors(file), (page.name, target)


def test_the_readme_gives_the_two_commands_first_and_ci_runs_the_second() -> None:
    text = README.read_text(encoding="utf-8")
    first_block = text.split("```sh\n", 1)[1].split("```", 1)[0]
    assert [line.split("  ")[0].strip() for line in first_block.splitlines()] == list(COMMANDS)
    assert COMMANDS[1] in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_the_node_version_the_readme_states_is_the_one_the_store_asks_for() -> None:
    package = json.loads((ROOT / "infra" / "node" / "package.json").read_text(encoding="utf-8"))
    wanted = re.fullmatch(r">=(\d+)", package["engines"]["node"])
    assert wanted is not None
    assert f"Node.js {wanted[1]} or later" in README.read_text(encoding="utf-8")


def test_every_benchmark_figure_names_its_command_and_date() -> None:
    text = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    benchmarks = text.split("\n## Benchmarks\n", 1)[1].split("\n## ", 1)[0]
    figures = re.findall(r"^### (.+)$", benchmarks, flags=re.M)
    assert len(figures) >= 5
    for heading in figures:
        assert re.search(r"`[^`]*(benchmarks/\w+\.py|infra/dev\.py)[^`]*`", heading), heading
        assert re.search(r"\(\d{4}-\d{2}-\d{2}\)$", heading), heading
    assert "this machine" not in text


def test_the_deploy_steps_set_the_region_once_where_every_tool_reads_it() -> None:
    """AWS_DEFAULT_REGION: the AWS CLI, sam and infra/telegram_setup.py all read it, where sam
    ignores AWS_REGION (and would offer us-east-1). Set before the first AWS command, never
    AWS_REGION; the .venv those steps use comes from a command that only installs."""
    text = README.read_text(encoding="utf-8")
    deploy = text.split("## Deploy to AWS", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    lines = [line.split("#")[0].strip() for line in deploy.splitlines()]
    exported = next(i for i, line in enumerate(lines) if line.startswith("export "))
    assert lines[exported] == "export AWS_DEFAULT_REGION=eu-west-3"
    first_aws = next(i for i, line in enumerate(lines) if line.startswith(("aws ", "sam ")))
    assert exported < first_aws
    assert lines[0] == "python3 infra/dev.py install"
    assert '"install": install' in (ROOT / "infra" / "dev.py").read_text(encoding="utf-8")
    for page in PAGES:
        assert "export AWS_REGION" not in page.read_text(encoding="utf-8"), page.name
