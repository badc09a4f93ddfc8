"""The first `python3 infra/dev.py …` installs, and a newcomer's first screen stays clean: an
install step's notices and banners (setuptools' "Editable installation", npm's warnings) are
shown only when the step fails, and then whole."""

from __future__ import annotations

import sys

import pytest

from infra import dev


def test_a_quiet_step_says_what_it_runs_and_nothing_of_its_output_when_it_succeeds(
    capfd: pytest.CaptureFixture[str],
) -> None:
    # Said in pieces, so that the command line shown does not hold what the step prints.
    banner = "import sys; print('Editable', 'installation.'); print('npm', 'warn', file=sys.stderr)"
    assert dev.run(sys.executable, "-c", banner, quiet=True) == 0
    out, err = capfd.readouterr()
    assert out.startswith("$ ") and out.count("\n") == 1, "the command, in one line"
    assert "Editable installation." not in out + err and "npm warn" not in out + err


def test_a_quiet_step_that_fails_shows_all_it_said(capfd: pytest.CaptureFixture[str]) -> None:
    failing = "import sys; print('resolving', 'all'); sys.exit(' '.join(('no', 'match')))"
    assert dev.run(sys.executable, "-c", failing, quiet=True) == 1
    out, _ = capfd.readouterr()
    assert "resolving all" in out and "no match" in out
