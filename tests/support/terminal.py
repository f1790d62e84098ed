"""Commands run the way a user runs them in a terminal, from the repository's root.

``Terminal`` starts long-running commands (a server, a remote processor) and waits for the lines
they print; ``run`` runs one to its end. Waits are bounded by time but end as soon as the awaited
line (or the process's exit) is seen: nothing here sleeps.

The environment is this one without provider, tracing or Treadle settings, plus what a test
adds; servers listen on a free port (``TREADLE_LISTEN``) and the command-line tools find them
through ``TREADLE_TARGET``, since tests run beside other servers on this machine.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
WAIT = 180.0
"""Upper bound on any one wait (a first model load on a busy 2-core machine is slow)."""
DEFAULT_ADDRESS = "127.0.0.1:50051"


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "OTEL_", "TREADLE_"))}
    env["PYTHONUNBUFFERED"] = "1"
    return env | extra


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Process:
    """A started command; stdout and stderr lines are collected as they come."""

    def __init__(self, command: Sequence[str] | str, env: dict[str, str], cwd: Path = ROOT) -> None:
        self.command = command
        self.proc = subprocess.Popen(
            command, shell=isinstance(command, str), executable="/bin/bash" if isinstance(command, str) else None,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            encoding="utf-8", env=env, cwd=cwd, start_new_session=True,
        )
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self._changed = threading.Condition()
        self._readers = [
            threading.Thread(target=self._read, args=(stream, lines), daemon=True)
            for stream, lines in ((self.proc.stdout, self.stdout), (self.proc.stderr, self.stderr))
        ]
        for reader in self._readers:
            reader.start()

    def _read(self, stream: Any, lines: list[str]) -> None:
        for line in stream:
            with self._changed:
                lines.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    @property
    def output(self) -> str:
        return "\n".join(["stdout:", *self.stdout, "stderr:", *self.stderr])

    def wait_for(self, needle: str, *, stream: str = "any", count: int = 1, timeout: float = WAIT) -> str:
        """The ``count``-th line containing ``needle`` (in stdout, stderr or either); fails when
        the process exits or the time runs out first."""
        def found() -> str | None:
            pools = {"stdout": [self.stdout], "stderr": [self.stderr], "any": [self.stdout, self.stderr]}[stream]
            matches = [line for pool in pools for line in pool if needle in line]
            return matches[count - 1] if len(matches) >= count else None

        with self._changed:
            self._changed.wait_for(lambda: found() is not None or self.proc.poll() is not None, timeout)
            match = found()
        if match is None:
            pytest.fail(f"{self.command!r} printed no line with {needle!r}; exit={self.proc.poll()}\n{self.output}")
        return match

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def wait(self, timeout: float = WAIT) -> int:
        code = self.proc.wait(timeout=timeout)
        for reader in self._readers:
            reader.join(timeout)
        return code

    def interrupt(self) -> int:
        """Ctrl-C, then the exit status."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
        return self.wait()

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


class Terminal:
    """Where a test types commands; everything it started is stopped at the end."""

    def __init__(self, **env: str) -> None:
        self.port = free_port()
        self.target = f"127.0.0.1:{self.port}"
        # A store of its own: servers started from the repository would otherwise share
        # ./.treadle, and an agent one test creates would show up in the next one's server.
        self._data = data = tempfile.mkdtemp(prefix="treadle-data-")
        # The web console on a port the system picks (by default it takes the next port, which
        # another test's server may hold; two replicas of one test would also share it).
        self.env = clean_env(TREADLE_LISTEN=self.target, TREADLE_TARGET=self.target, TREADLE_CONSOLE="127.0.0.1:0",
                             **({"TREADLE_DATA_DIR": data} | env))
        self._started: list[Process] = []

    def start(self, command: Sequence[str] | str, cwd: Path = ROOT, **env: str) -> Process:
        proc = Process(command, self.env | env, cwd)
        self._started.append(proc)
        return proc

    def serve(self, command: Sequence[str] | str, cwd: Path = ROOT, **env: str) -> Process:
        """Start a server and wait until it says it listens."""
        proc = self.start(command, cwd, **env)
        proc.wait_for(f"Treadle listening on {self.target}", stream="stdout")
        return proc

    def run(self, command: Sequence[str] | str, *, input: str | None = None, cwd: Path = ROOT,
            timeout: float = WAIT, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            command, shell=isinstance(command, str), executable="/bin/bash" if isinstance(command, str) else None,
            input=input, capture_output=True, text=True, encoding="utf-8", env=self.env | env, cwd=cwd,
            timeout=timeout,
        )

    def close(self) -> None:
        for proc in reversed(self._started):
            proc.kill()
        shutil.rmtree(self._data, ignore_errors=True)


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    term = Terminal()
    yield term
    term.close()
