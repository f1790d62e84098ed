"""Processes the remote tests start: a tool or processor process, waited on by what it prints."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class Child:
    """A ``python -m MODULE ARGS...`` process; ``await expect(text)`` reads stdout up to it."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lines: list[str] = []

    @property
    def pid(self) -> int:
        return self.proc.pid

    async def expect(self, text: str, timeout: float = 30) -> str:
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

    async def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        await self.proc.stdin.drain()

    def kill(self) -> None:
        if self.proc.returncode is None:
            os.kill(self.proc.pid, signal.SIGKILL)

    async def close(self) -> None:
        if self.proc.returncode is None:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            try:
                await asyncio.wait_for(self.proc.wait(), 10)
            except TimeoutError:
                self.kill()
                await self.proc.wait()


async def spawn(module: str, *args: str) -> Child:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", module, *args, cwd=ROOT, env=env,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )
    return Child(proc)


@asynccontextmanager
async def children() -> AsyncIterator[Callable[..., asyncio.Future[Child]]]:
    """``start = ...; child = await start(module, *args, ready="ready")``; all closed at exit."""
    started: list[Child] = []

    async def start(module: str, *args: str, ready: str | None = "ready") -> Child:
        child = await spawn(module, *args)
        started.append(child)
        if ready is not None:
            await child.expect(ready)
        return child

    try:
        yield start  # type: ignore[misc]
    finally:
        for child in started:
            await child.close()
