"""A command in a real terminal: a tmux pane on a private tmux server, driven with keys.

For what only a terminal shows: a prompt on a tty, Ctrl-C delivered by the terminal to the
foreground process group, what a person sees. ``wait_for`` polls the pane's text until a
condition holds (bounded by time), so nothing here sleeps for a fixed time.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

WAIT = 60.0


class Pane:
    def __init__(self, command: str, *, cwd: Path, env: dict[str, str]) -> None:
        if shutil.which("tmux") is None:
            pytest.fail("tmux is not installed: apt-get install -y tmux (.ci/run installs it)")
        self.socket = f"treadle-test-{uuid.uuid4().hex[:8]}"
        # The pane stays after the command ends (its exit status is printed), so its last words
        # can still be read. The tmux server, and so the pane, starts with exactly ``env``.
        script = f"cd {shlex.quote(str(cwd))} && {command}; echo \"[exit $?]\"; exec cat"
        self._tmux("new-session", "-d", "-s", "main", "-x", "160", "-y", "60", script, env=env)

    def _tmux(self, *args: str, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", *args], capture_output=True,
                              text=True, timeout=30, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def text(self) -> str:
        """Everything the pane shows, its scrollback included, trailing blanks dropped."""
        return self._tmux("capture-pane", "-p", "-J", "-t", "main", "-S", "-1000").rstrip()

    def keys(self, *keys: str) -> None:
        """``tmux send-keys``: literal text, or key names such as ``Enter``, ``C-c``, ``C-d``."""
        self._tmux("send-keys", "-t", "main", *keys)

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "main", "-l", text)

    def wait_for(self, condition: Callable[[str], bool], what: str, timeout: float = WAIT) -> str:
        deadline = time.monotonic() + timeout
        while True:
            text = self.text()
            if condition(text):
                return text
            if time.monotonic() > deadline:
                pytest.fail(f"the terminal never showed {what}; it shows:\n{text}")
            time.sleep(0.05)  # a poll interval, not a wait for an event

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=30)
