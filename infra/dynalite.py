"""A local DynamoDB-compatible server (dynalite, from npm) for development and race tests.

moto's in-process DynamoDB is not atomic under threads; dynalite serialises requests, so
conditional writes race exactly as they do on DynamoDB. It keeps its data in memory, or in
LevelDB files under `path` so a game survives a restart. It has no transactions and no
UpdateTimeToLive (items never expire locally).

    with Dynalite(path=".local/dynamodb") as server:
        client = server.client()            # bound to the server, dummy credentials
        os.environ.update(server.env())     # or hand these to a child process

Its Node.js dependencies come from `infra/node/package-lock.json` (`npm ci --prefix infra/node`,
which `python3 infra/dev.py` runs).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Self

import boto3
from botocore.config import Config

ROOT = Path(__file__).resolve().parent.parent
NODE_DIR = ROOT / "infra" / "node"
DYNALITE_BIN = NODE_DIR / "node_modules" / ".bin" / "dynalite"
HOST = "127.0.0.1"
REGION = "us-east-1"
# What dynalite prints once its server listens.
_READY_LINE = "listening at"
# Any non-empty credentials do: dynalite checks none, and the client is bound to a local
# endpoint, so these never reach AWS.
ORPHAN_TIMEOUT = 5.0  # seconds a dead runner's dynalite has to stop on SIGTERM
DUMMY_CREDENTIALS = {"aws_access_key_id": "local", "aws_secret_access_key": "local"}


class DynaliteError(RuntimeError):
    """dynalite could not be started (Node.js or its package missing, or it died)."""


class FolderInUse(DynaliteError):
    """Another dynalite keeps its data in this folder: LevelDB allows one process a folder."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"another runner is using {path}")
        self.path = path


LOCK_FILE = "runner.lock"
# The pid of the dynalite serving the folder, while it runs: a runner killed without a chance to
# stop it (SIGKILL, a closed terminal) leaves it running, holding LevelDB's own lock on the files.
PID_FILE = "dynalite.pid"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


def _accepts_connections(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=0.2):
            return True
    except OSError:
        return False


class Dynalite:
    """One dynalite process on a free loopback port, stopped on exit (also on exceptions)."""

    def __init__(
        self,
        path: Path | str | None = None,
        *,
        port: int | None = None,
        startup_timeout: float = 15.0,
    ) -> None:
        # Absolute: dynalite runs in NODE_DIR, where a relative path would mean another folder.
        self.path = Path(path).resolve() if path is not None else None
        self._requested_port = port
        self.startup_timeout = startup_timeout
        self.port: int | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._lock: IO[bytes] | None = None
        self.stopped_orphan: int | None = None  # the pid of a dead runner's dynalite, stopped

    @property
    def endpoint_url(self) -> str:
        if self.port is None or self._process is None:
            raise DynaliteError("dynalite is not running")
        return f"http://{HOST}:{self.port}"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @staticmethod
    def _node() -> str:
        node = shutil.which("node")
        if node is None:
            raise DynaliteError("Node.js (`node`) is not on PATH; dynalite needs it")
        if not DYNALITE_BIN.exists():
            raise DynaliteError(
                f"{DYNALITE_BIN} is missing: run `npm ci --prefix {NODE_DIR.relative_to(ROOT)}`"
                " (or `python3 infra/dev.py test`, which installs it)"
            )
        return node

    def start(self) -> Self:
        """Start dynalite and wait until it accepts connections."""
        if self._process is not None:
            raise DynaliteError("dynalite is already running")
        node = self._node()
        if self.path is not None:
            self.path.mkdir(parents=True, exist_ok=True)
        # A port picked free can be taken before dynalite binds it: try a few.
        attempts = 1 if self._requested_port is not None else 3
        for attempt in range(attempts):
            port = self._requested_port or _free_port()
            try:
                if self.path is not None:
                    self._lock_folder(self.path)
                    if self._lock is not None:
                        self._stop_orphan(self.path)
                self._spawn(node, port)
                return self
            except FolderInUse:
                raise
            except DynaliteError:
                self.stop()
                if attempt == attempts - 1:
                    raise
            except BaseException:  # Ctrl-C while waiting: leave no server behind
                self.stop()
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _lock_folder(self, path: Path) -> None:
        """Hold the folder for as long as this server runs. A second dynalite on the same
        LevelDB files would start, then fail at its first request with a connection error deep
        in botocore; the lock says what is wrong before anything starts. The operating system
        releases it when the process ends, however it ends."""
        if os.name != "posix" or self._lock is not None:
            return
        import fcntl  # noqa: PLC0415 - POSIX only

        lock = (path / LOCK_FILE).open("wb")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            raise FolderInUse(path) from None
        self._lock = lock

    def _stop_orphan(self, path: Path) -> None:
        """Stop the dynalite a dead runner left serving `path`, if one still runs. The folder's
        lock is held, so no live runner uses it: a process named in the pid file that is still
        this folder's dynalite is an orphan, and its LevelDB lock would fail every request of a
        new one. A pid the system gave to another process since is left alone."""
        pid_file = path / PID_FILE
        try:
            pid = int(pid_file.read_text())
        except (OSError, ValueError):
            return
        if self._serves(pid, path):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)
            deadline: float | None = time.monotonic() + ORPHAN_TIMEOUT
            while self._serves(pid, path):
                if deadline is not None and time.monotonic() >= deadline:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                    deadline = None
                time.sleep(0.05)
            self.stopped_orphan = pid
        pid_file.unlink(missing_ok=True)

    @staticmethod
    def _serves(pid: int, path: Path) -> bool:
        """Whether process `pid` runs and is the dynalite of folder `path` (a zombie is not)."""
        try:
            args = subprocess.run(
                ["ps", "-ww", "-o", "args=", "-p", str(pid)],
                capture_output=True,
                text=True,
                check=False,
            ).stdout
        except OSError:  # no ps: nothing is known to be running
            return False
        return str(DYNALITE_BIN) in args and f"--path {path}" in args

    def _spawn(self, node: str, port: int) -> None:
        command = [node, str(DYNALITE_BIN), "--host", HOST, "--port", str(port)]
        if self.path is not None:
            command += ["--path", str(self.path)]
        for setting in ("--createTableMs", "--deleteTableMs", "--updateTableMs"):
            command += [setting, "0"]
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - open while dynalite runs
        self._process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd=NODE_DIR,
            # Out of the terminal's process group: a Ctrl-C reaches only the runner, which then
            # stops dynalite itself, after its last write has gone through.
            start_new_session=True,
        )
        self.port = port
        atexit.register(self.stop)
        if self.path is not None:
            (self.path / PID_FILE).write_text(str(self._process.pid))
        deadline = time.monotonic() + self.startup_timeout
        # Ready once dynalite says it listens (so a server of someone else's that got the port
        # first is not mistaken for it) and a connection goes through.
        while not (_READY_LINE in self._output() and _accepts_connections(port)):
            if self._process.poll() is not None:
                raise DynaliteError(
                    f"dynalite exited with code {self._process.returncode}:\n{self._output()}"
                )
            if time.monotonic() >= deadline:
                raise DynaliteError(
                    f"dynalite did not listen on port {port} within {self.startup_timeout} s:\n"
                    f"{self._output()}"
                )
            time.sleep(0.02)

    def _output(self) -> str:
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read().decode(errors="replace").strip()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop dynalite: SIGTERM, then SIGKILL if it does not exit in time. Idempotent."""
        process, self._process = self._process, None
        if process is not None:
            atexit.unregister(self.stop)
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            if self.path is not None and self._lock is not None:  # the folder's own
                (self.path / PID_FILE).unlink(missing_ok=True)
        if self._log is not None:
            self._log.close()
            self._log = None
        lock, self._lock = self._lock, None
        if lock is not None:
            with contextlib.suppress(OSError):
                lock.close()  # closing the file releases the lock

    def restart(self) -> Self:
        """Stop and start again on the same port (and `path`): a restart of the server."""
        port = self.port
        self.stop()
        self._requested_port = port
        return self.start()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def env(self) -> dict[str, str]:
        """Environment variables that point boto3 (in this or a child process) at the server."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint_url,
            "AWS_ACCESS_KEY_ID": DUMMY_CREDENTIALS["aws_access_key_id"],
            "AWS_SECRET_ACCESS_KEY": DUMMY_CREDENTIALS["aws_secret_access_key"],
            "AWS_DEFAULT_REGION": REGION,
            "AWS_REGION": REGION,
        }

    def client(self, **config: Any) -> Any:
        """A boto3 DynamoDB client bound to this server, with dummy credentials.

        Credentials are passed explicitly, so no profile, environment or instance metadata is
        consulted; `config` goes to `botocore.config.Config` (e.g. `max_pool_connections`).
        """
        return boto3.client(
            "dynamodb",
            endpoint_url=self.endpoint_url,
            region_name=REGION,
            config=Config(**config) if config else None,
            **DUMMY_CREDENTIALS,
        )
