"""The Java SDK (``clients/java``) built once per test session, for tests that run Java processes.

``mvn -q test-compile`` compiles the SDK and its test programs (``src/test/java``: the Mastra
example processors, a tool, an agent client, ...) and writes their dependency classpath; when
``tests/run.sh`` has just run ``mvn verify``, this is an up-to-date check. Needs ``mvn`` and a JDK
17+.
"""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
import signal
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from tests.remote.procs import ROOT

JAVA_CLIENT = ROOT / "clients" / "java"


@functools.cache
def _build() -> str:
    mvn = shutil.which("mvn")
    if mvn is None or shutil.which("java") is None:
        pytest.fail("`mvn` and `java` (JDK 17+) must be on PATH to build clients/java "
                    "(tests/run.sh and .ci/run install them)")
    proc = subprocess.run([mvn, "-q", "-B", "test-compile"], cwd=JAVA_CLIENT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, f"mvn test-compile failed:\n{proc.stdout}{proc.stderr}"
    target = JAVA_CLIENT / "target"
    deps = (target / "test-classpath.txt").read_text().strip()
    return ":".join([str(target / "classes"), str(target / "test-classes"), deps])


def java_command(main_class: str, *args: str) -> list[str]:
    """The command that runs ``main_class`` (from the SDK's test programs) with ``args``."""
    return ["java", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", _build(), main_class, *args]


@pytest.fixture(scope="session")
def java_build() -> str:
    """The classpath of the built SDK and its test programs (built once per session)."""
    return _build()


class JavaProcess:
    """A running Java program; ``output()`` waits for it to exit, ``stop()`` sends SIGTERM."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lines: list[str] = []

    async def expect(self, text: str, timeout: float = 60) -> str:
        """The next stdout line containing ``text`` (earlier lines are kept in ``lines``)."""
        async def read() -> str:
            assert self.proc.stdout is not None
            while True:
                raw = await self.proc.stdout.readline()
                if not raw:
                    raise AssertionError(f"process exited before printing {text!r}: {self.lines}")
                line = raw.decode().rstrip("\n")
                self.lines.append(line)
                if text in line:
                    return line

        return await asyncio.wait_for(read(), timeout)

    async def output(self, timeout: float = 60) -> str:
        out, _ = await asyncio.wait_for(self.proc.communicate(), timeout)
        assert self.proc.returncode == 0, out.decode()
        return out.decode()

    async def stop(self) -> int:
        """SIGTERM (the programs close their attachment in a shutdown hook); the rest of stdout
        is added to ``lines``."""
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            out, _ = await asyncio.wait_for(self.proc.communicate(), 20)
        except TimeoutError:
            self.proc.kill()
            out, _ = await self.proc.communicate()
        self.lines.extend(out.decode().splitlines())
        return self.proc.returncode or 0


@pytest.fixture
async def java(java_build: str) -> AsyncIterator[Callable[..., Awaitable[JavaProcess]]]:
    """``await java("dev.treadle.examples.ToolExample", target, **env)``: a Java program running
    against ``target`` (``TREADLE_TARGET``), stopped at the end of the test."""
    started: list[JavaProcess] = []

    async def start(main_class: str, target: str, *args: str, **env: str) -> JavaProcess:
        base = {k: v for k, v in os.environ.items() if k != "TREADLE_TOKEN" and not k.startswith("OTEL_")}
        proc = await asyncio.create_subprocess_exec(
            *java_command(main_class, *args), env={**base, "TREADLE_TARGET": target, **env},
            stdin=subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        )
        started.append(JavaProcess(proc))
        return started[-1]

    yield start
    for p in started:
        await p.stop()
