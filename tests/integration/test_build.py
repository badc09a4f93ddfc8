"""What deployers get: the Lambda artifact, built the way the Makefile builds it, imports alone.

`sam build` runs the Makefile, which runs `pip install --target ARTIFACTS_DIR .` with flags that
pick Linux arm64 wheels for CPython 3.12. This test runs that same pip command (the flags are
read from the Makefile, so the two cannot drift) into a temporary folder, then imports the
three Lambda handlers in a fresh interpreter whose only import path besides the standard library
is that folder, and runs each once the way Lambda would (the custom resource's with a Delete
request, answered to a local stand-in for CloudFormation's pre-signed URL). It catches a module
missing from the package list, a catalogue file left out of the package data, a run-time import
of a development-only package (PyYAML, moto, ...), and a dependency without an arm64 wheel.

Why a wheel cache rather than `--no-deps`: with `--no-deps` the artifact would hold only the
project, and its imports could only succeed through the test environment's site-packages, which
holds the development packages too; that would prove nothing about the declared dependencies.
So the dependencies really are installed into the artifact, but from wheels cached under
`.venv/artifact-wheels/`, pinned to the versions installed in `.venv` (the versions the rest of
the suite ran against). The first run downloads them from the package registry with the
Makefile's platform flags; later runs need no network. The cache lives in `.venv`, so it goes
when the environment is rebuilt.

The interpreter is the one running the tests (3.11 here, where the functions run 3.12): every
dependency is pure Python today, and pip is told `--python-version 3.12`, so the wheel choice is
the runtime's. A compiled dependency would need a 3.12 arm64 interpreter to import; the
download step would already say which one has no such wheel.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from handlers.text import SUPPORTED

ROOT = Path(__file__).resolve().parents[2]
WHEELS = ROOT / ".venv" / "artifact-wheels"
# Not copied into the build: environments, caches, build leftovers (a stale build/lib would be
# packed into the wheel), the Node modules. tests/ and infra/ are copied, so that leaving them
# out of the artifact is the packaging's doing, not this test's.
IGNORED = shutil.ignore_patterns(
    ".venv",
    ".git",
    "build",
    "dist",
    "*.egg-info",
    "node_modules",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
    ".aws-sam",
    ".local",
)
# Pinned from .venv, except the installers: the build backend comes from pyproject's
# build-system requirement, not from whatever setuptools the environment happens to have.
UNPINNED = {"pip", "setuptools", "wheel", "menteur-bot"}
DEV_ONLY = (
    *("yaml", "_yaml", "moto", "pytest", "_pytest", "xdist", "hypothesis", "mypy", "cfnlint"),
    "ruff",
)

# Runs in the artifact-only interpreter: `python -I -S -c PROBE ARTIFACT`.
PROBE = r"""
import json, sys, sysconfig
artifact = sys.argv[1]
stdlib = (sysconfig.get_path("stdlib"), sysconfig.get_path("platstdlib"))
sys.path.insert(0, artifact)
import handlers.webhook, handlers.timer  # with AWS_LAMBDA_FUNCTION_NAME set: the init phase
import handlers.custom_resource
import engine
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

webhook = handlers.webhook.lambda_handler(
    {"headers": {"x-telegram-bot-api-secret-token": "forged"}, "body": "{}"}, None
)
timer = handlers.timer.lambda_handler({"Records": []}, None)

# The custom resource, deleted: SSM cannot be reached (a closed port), yet CloudFormation gets
# its answer, PUT to this stand-in for S3's pre-signed URL (the function answers only S3's hosts).
import urllib.request
answers = []

class ResponseUrl(BaseHTTPRequestHandler):
    def do_PUT(self):
        answers.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass

class Context:
    def get_remaining_time_in_millis(self):
        return 60_000

server = HTTPServer(("127.0.0.1", 0), ResponseUrl)
threading.Thread(target=server.handle_request, daemon=True).start()
S3 = "https://cloudformation-custom-resource-response-useast1.s3.amazonaws.com"
urlopen = urllib.request.urlopen

def to_stand_in(request, timeout):
    local = request.full_url.replace(S3, f"http://127.0.0.1:{server.server_address[1]}")
    return urlopen(urllib.request.Request(local, request.data, method="PUT"), timeout=timeout)

urllib.request.urlopen = to_stand_in
handlers.custom_resource.lambda_handler(
    {
        "RequestType": "Delete",
        "ResponseURL": f"{S3}/response?X-Amz-Signature=abc",
        "StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/menteur/1",
        "RequestId": "request-1",
        "LogicalResourceId": "TelegramRegistration",
        "PhysicalResourceId": "menteur-TelegramRegistration",
        "ResourceType": "Custom::TelegramRegistration",
        "ResourceProperties": {
            "WebhookUrl": "https://example.execute-api.us-east-1.amazonaws.com/webhook",
            "BotTokenParameterName": "/menteur/telegram-bot-token",
            "WebhookSecretParameterName": "/menteur/telegram-webhook-secret",
        },
    },
    Context(),
)
server.server_close()
outside = sorted(
    name
    for name, module in list(sys.modules.items())
    if getattr(module, "__file__", None)
    and not module.__file__.startswith((artifact, *stdlib))
)
print(json.dumps({
    "webhook": webhook,
    "timer": timer,
    "custom_resource": answers,
    "outside": outside,
    "handlers": handlers.__file__,
    "telegram": sys.modules["telegram"].__file__,
    "boto3": sys.modules["boto3"].__file__,
    "path": sys.path,
}))
"""

# What the template sets, with the secrets given directly (no SSM here), and every endpoint
# pointed at a closed local port: the init phase must make no request at all.
LAMBDA_ENV = {
    "AWS_LAMBDA_FUNCTION_NAME": "menteur-WebhookFunction",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
    "TABLE_NAME": "menteur-games",
    "TIMER_QUEUE_URL": "http://127.0.0.1:9/123456789012/timers",
    "TELEGRAM_BOT_TOKEN": "123456:artifact-test-token",
    "TELEGRAM_WEBHOOK_SECRET": "artifact-test-secret",
    "TELEGRAM_API_BASE_URL": "http://127.0.0.1:9/bot",
    "WEBHOOK_URL": "https://example.execute-api.us-east-1.amazonaws.com/webhook",
    "PTB_TIMEDELTA": "true",
    "LOG_LEVEL": "WARNING",
}


def makefile_pip_flags() -> list[str]:
    """PIP_TARGET_FLAGS from the Makefile, continuation lines joined."""
    makefile = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    found = re.search(r"^PIP_TARGET_FLAGS\s*=(.*)$", makefile, re.MULTILINE)
    assert found, "the Makefile no longer defines PIP_TARGET_FLAGS"
    return shlex.split(found[1])


def requirements() -> list[str]:
    """The run-time dependencies and the build backend, as pyproject.toml declares them."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return [*project["project"]["dependencies"], *project["build-system"]["requires"]]


def pins(folder: Path) -> Path:
    """A constraints file: every package installed in .venv at its installed version."""
    lines = sorted(
        {
            f"{dist.metadata['Name']}=={dist.version}"
            for dist in importlib.metadata.distributions()
            if dist.metadata["Name"]
            and dist.metadata["Name"].lower().replace("_", "-") not in UNPINNED
        }
    )
    path = folder / "constraints.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def pip(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pip", *(str(a) for a in args)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def explain_download_failure(output: str) -> str:
    network = ("NewConnectionError", "Could not fetch URL", "Temporary failure in name resolution")
    if any(marker in output for marker in network):
        return (
            "the package registry could not be reached to fill the wheel cache "
            f"{WHEELS} (needed once per environment):\n{output[-2000:]}"
        )
    missing = re.findall(r"No matching distribution found for (\S+)", output)
    if missing:
        return (
            f"no wheel for the functions' platform (Linux arm64, CPython 3.12) for: "
            f"{', '.join(missing)}. `sam build` would fail the same way: pin a version that "
            f"ships such a wheel, or build that dependency for arm64.\n{output[-2000:]}"
        )
    return f"pip download failed:\n{output[-2000:]}"


@pytest.fixture(scope="module")
def artifact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("artifact")
    source = work / "source"
    shutil.copytree(ROOT, source, ignore=IGNORED)
    target = work / "ARTIFACTS_DIR"
    flags = makefile_pip_flags()
    constraints = pins(work)
    WHEELS.mkdir(parents=True, exist_ok=True)

    def install() -> subprocess.CompletedProcess[str]:
        return pip(
            "install",
            *flags,
            "--no-index",
            "--find-links",
            WHEELS,
            "--constraint",
            constraints,
            "--target",
            target,
            source,
        )

    built = install()
    if built.returncode != 0:  # first run, or a new dependency: fill the cache, then again
        fetched = pip(
            "download",
            *flags,
            "--dest",
            WHEELS,
            "--constraint",
            constraints,
            *requirements(),
        )
        if fetched.returncode != 0:
            pytest.fail(explain_download_failure(fetched.stdout + fetched.stderr))
        shutil.rmtree(target, ignore_errors=True)
        built = install()
    assert built.returncode == 0, f"pip install failed:\n{(built.stdout + built.stderr)[-3000:]}"
    return target


def test_the_artifact_holds_the_project_and_its_dependencies_only(artifact: Path) -> None:
    top = {path.name for path in artifact.iterdir()}
    assert {"engine", "handlers", "telegram", "boto3", "httpx"} <= top
    assert "tests" not in top
    assert "infra" not in top
    assert "benchmarks" not in top
    assert not any(
        name.endswith(".py") and name not in {"six.py", "typing_extensions.py"}
        for name in top - {"__pycache__"}
    ), sorted(top)
    assert not set(DEV_ONLY) & top, sorted(set(DEV_ONLY) & top)
    catalogues = {path.name for path in (artifact / "handlers" / "i18n").glob("*.json")}
    assert catalogues == {f"{lang}.json" for lang in SUPPORTED}, "every language, French too"
    assert (artifact / "handlers" / "confusables.json").is_file(), "the names' look-alikes"


def test_every_handler_imports_and_runs_from_the_artifact_alone(artifact: Path) -> None:
    # -I: no PYTHON* variables, no user site, not the current folder; -S: no site-packages.
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", PROBE, str(artifact)],
        cwd=artifact.parent,
        env=LAMBDA_ENV,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["outside"] == [], f"imported from outside the artifact: {seen['outside']}"
    for module in ("handlers", "telegram", "boto3"):
        assert seen[module].startswith(str(artifact)), (module, seen[module], seen["path"])
    assert not any("site-packages" in entry for entry in seen["path"]), seen["path"]
    # A forged request is refused before anything is read; an empty SQS batch fails nothing.
    assert seen["webhook"]["statusCode"] == 401
    assert seen["timer"] == {"batchItemFailures": []}
    # A stack whose parameters cannot be read is still deletable, and CloudFormation is told.
    (answer,) = seen["custom_resource"]
    assert answer["Status"] == "SUCCESS"
    assert answer["RequestId"] == "request-1"
    assert "webhook was left as it was" in answer["Reason"]


def test_sam_builds_in_the_project_folder_one_function_at_a_time() -> None:
    """`sam build` copied the whole folder, the 400+ MB .venv included, once per function
    before running the Makefile, where building in place copies nothing. Every `sam build` the
    docs give says so (`--build-in-source`), and not `--parallel`: the three builds run pip in
    the same folder, so one after the other. The flag is on the command, not in
    samconfig.toml: that file is the deployer's own (`sam deploy --guided` writes their answers
    there), kept out of git so that a pull never meets it."""
    builds = [
        line
        for page in (ROOT / "README.md", *(ROOT / "docs").glob("*.md"))
        for line in page.read_text(encoding="utf-8").splitlines()
        if "sam build" in line and line.lstrip().startswith("sam build")
    ]
    assert len(builds) >= 4, builds  # the first deployment, updating, the two rotations
    for line in builds:
        assert line.lstrip().startswith("sam build --build-in-source"), line
        assert "--parallel" not in line, line
    assert "samconfig.toml" in (ROOT / ".gitignore").read_text().splitlines()
    assert not (ROOT / "samconfig.toml").exists() or not tracked("samconfig.toml")
    rule = re.search(r"^build-WebhookFunction[^\n]*:\n((?:\t[^\n]*\n)+)", makefile_text(), re.M)
    assert rule is not None, "the functions' rule is gone from the Makefile"
    steps = rule[1].split("\n\t")
    assert steps[0].strip() == "rm -rf build", "setuptools' leftovers go before pip runs"


def tracked(path: str) -> bool:
    done = subprocess.run(
        ["git", "ls-files", "--error-unmatch", path],
        cwd=ROOT,
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


def makefile_text() -> str:
    return (ROOT / "Makefile").read_text()
