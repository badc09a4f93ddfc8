"""The commands of the README, runnable on a fresh machine with nothing but Python 3.11+.

    python3 infra/dev.py play       # run the project locally
    python3 infra/dev.py test       # every check: ruff, mypy, the layers, cfn-lint, checkov, pytest
    python3 infra/dev.py install    # only install: the .venv that deploying uses

Each creates `.venv/` beside the project and installs what the project's own files ask for,
once: the install is skipped while `pyproject.toml` (and the Node lock file) are unchanged.
`install` does without Node.js if it is missing (deploying needs only Python); `play` and
`test` then install the rest. `test` also installs checkov into an environment of its own,
`.venv/checkov` (pyproject.toml's [tool.menteur] says why). Standard library only, since it
runs before anything is installed.

pip installs uv, at the version [tool.menteur] pins, and uv installs the rest: on a clean clone
it does both environments' installs in about a third of pip's time (docs/performance.md).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
NODE_DIR = ROOT / "infra" / "node"
INSTALL_INPUTS = [
    ROOT / "pyproject.toml",
    NODE_DIR / "package.json",
    NODE_DIR / "package-lock.json",
]


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def run(*cmd: str | Path, quiet: bool = False, **env: str) -> int:
    """Run `cmd` in the project, saying so. `quiet`: its output is shown only if it fails (an
    install's notices and banners are nothing a newcomer has to read)."""
    print("$", " ".join(str(c) for c in cmd), flush=True)
    args, environ = [str(c) for c in cmd], {**os.environ, **env}
    if not quiet:
        return subprocess.call(args, cwd=ROOT, env=environ)
    done = subprocess.run(args, cwd=ROOT, env=environ, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(done.stdout + done.stderr, end="", flush=True)
    return done.returncode


def ensure_installed(*, node: bool = True) -> None:
    """Create the venv and install once; a stamp records what the install was made from.
    Without `node`, a machine with no Node.js gets the Python side, and no stamp."""
    digest = hashlib.sha256()
    for path in INSTALL_INPUTS:
        if path.exists():
            digest.update(path.read_bytes())
    stamp = VENV / ".installed"
    if stamp.exists() and stamp.read_text() == digest.hexdigest():
        return
    if not venv_python().exists():
        # With pip: the Lambda build (Makefile, tests/integration/test_build.py) runs .venv's pip.
        venv.create(VENV, with_pip=True)
    py = venv_python()
    if run(py, "-m", "pip", "install", "--quiet", pinned("uv"), quiet=True) != 0:
        sys.exit("uv, the installer, could not be installed")
    if uv_install(py, "--upgrade", "pip", "-e", ".[dev]") != 0:
        sys.exit("the Python dependencies could not be installed")
    if (NODE_DIR / "package.json").exists():
        npm = shutil.which("npm")
        if npm is None and not node:
            print("Node.js is missing: `play` and `test` will need it (the local store)")
            return
        if npm is None:
            sys.exit("Node.js (npm) is needed for the local DynamoDB-compatible store")
        if run(npm, "ci", "--no-audit", "--no-fund", "--prefix", NODE_DIR, quiet=True) != 0:
            sys.exit("the Node.js dependencies could not be installed")
    stamp.write_text(digest.hexdigest())


CHECKOV_TEMPLATE = ["--framework", "cloudformation", "--file", "template.yaml"]


def pinned(tool: str) -> str:
    """The requirement pyproject.toml's [tool.menteur] pins for `tool` (`checkov==3.3.30`)."""
    return str(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["menteur"][tool])


def uv_install(python: Path, *requirements: str) -> int:
    """Install into `python`'s environment with .venv's uv, compiling the .pyc files as pip
    would (where PYTHONDONTWRITEBYTECODE is set, nothing else writes them)."""
    uv = venv_python().parent / "uv"
    return run(
        uv, "pip", "install", "--quiet", "--compile-bytecode", "--python", python,
        *requirements, quiet=True,
    )  # fmt: skip


def ensure_checkov() -> Path:
    """checkov in `.venv/checkov`, at the version pyproject.toml pins; its executable."""
    pin = pinned("checkov")
    home = VENV / "checkov"
    stamp = home / ".installed"
    if not (stamp.exists() and stamp.read_text() == pin):
        venv.create(home, clear=True)  # without pip: uv installs into it
        if uv_install(home / "bin" / "python", pin) != 0:
            sys.exit("checkov could not be installed")
        stamp.write_text(pin)
    return home / "bin" / "checkov"


def test(args: list[str]) -> int:
    py = str(venv_python())
    checkov = ensure_checkov()
    checks: list[list[str]] = [
        [py, "-m", "ruff", "check", "."],
        [py, "-m", "ruff", "format", "--check", "."],
        [py, "-m", "mypy"],
        [str(venv_python().parent / "lint-imports")],  # the layers (pyproject.toml)
        [str(venv_python().parent / "cfn-lint"), "template.yaml"],
        # The template's IaC check: every skip is in the template, with its reason. Offline:
        # --skip-download keeps it from fetching guidelines from its vendor's servers.
        [str(checkov), "--quiet", "--compact", "--skip-download", *CHECKOV_TEMPLATE],
    ]
    # The checks are independent and use one core each (mypy most of the time): they run at
    # once, and each one's output is shown in turn, as if they had run one after another.
    out, both = subprocess.PIPE, subprocess.STDOUT
    running = [
        (check, subprocess.Popen(check, cwd=ROOT, stdout=out, stderr=both, errors="replace"))
        for check in checks
    ]
    failed = 0
    try:
        for check, process in running:
            output, _ = process.communicate()
            print("$", " ".join(check), flush=True)
            print(output, end="", flush=True)
            failed = failed or process.returncode
    finally:  # Ctrl-C: none is left running behind the newcomer's prompt
        for _, process in running:
            process.kill()
    return failed or run(py, "-m", "pytest", *args)


def play(args: list[str]) -> int:
    cmd = [str(venv_python()), "-m", "infra.local", *args]
    print("$", " ".join(cmd), flush=True)
    # Ctrl-C reaches the runner too (same terminal), and it stops what it started (dynalite,
    # the fake Telegram server): wait for it, where subprocess.call would kill it after 0.25 s
    # and print a KeyboardInterrupt traceback of its own.
    with subprocess.Popen(cmd, cwd=ROOT) as child:
        while True:
            try:
                return child.wait()
            except KeyboardInterrupt:
                continue


def install(args: list[str]) -> int:
    """Nothing more than the install `main` has done: the `.venv` for deploying."""
    print("installed: .venv (`python3 infra/dev.py test` runs the checks)")
    return 0


COMMANDS = {"test": test, "play": play, "install": install}


def main() -> int:
    # This file runs under whatever python3 the newcomer has, before the venv exists.
    if sys.version_info < (3, 11):  # noqa: UP036
        sys.exit("Python 3.11 or newer is needed")
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(f"usage: python3 infra/dev.py {{{'|'.join(COMMANDS)}}} [args...]")
    ensure_installed(node=sys.argv[1] != "install")
    return COMMANDS[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
