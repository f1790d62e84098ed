"""What the PII stream guard costs per chunk, in process and served remotely, as ratios to a
pass-through processor in the same setting.

    .venv/bin/python bench/builtin_pii.py [--runs N] [--chunks N]

One server in this process streams a scripted answer of ``--chunks`` text deltas (an in-process
scripted model, so no provider I/O blurs the numbers), every tenth one starting an e-mail
address that the next delta completes. In process it compares ``PII()`` with a processor that
returns every chunk unchanged; remotely, ``treadle processors serve pii`` with a pass-through
processor process on the SDK's default delivery. Each line prints the microseconds a processor
adds per chunk over the same run without processors, and the PII guard's cost as a ratio to the
pass-through's (the floor of that setting), measured in this run.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from treadle.agents import Agent, ProcessorRef, RunRequest  # noqa: E402
from treadle.app import TreadleApp  # noqa: E402
from treadle.config import Settings  # noqa: E402
from treadle.core.messages import Message, SystemMessage  # noqa: E402
from treadle.processors.builtin import PII  # noqa: E402
from treadle.testing import ScriptedModel, ScriptedModels, text_response  # noqa: E402


class PassThrough:
    id = "bench-pass"

    def process_output_stream(self, args: Any) -> Any:
        return args.part


def answer(n: int) -> list[str]:
    return [f"mail jane{i}" if i % 10 == 0 else ("@example.com " if i % 10 == 1 else f"w{i} ")
            for i in range(n)]


async def _time(app: TreadleApp, agent: Agent, model: ScriptedModel, runs: int,
                deltas: list[str]) -> tuple[float, int]:
    """Median seconds per run, and the chunks one run streams."""
    samples: list[float] = []
    count = 0
    for i in range(runs + 2):
        model.add(text_response(deltas))
        start = time.perf_counter()
        chunks = [c async for c in app.loop.stream(agent, RunRequest([Message.user("go")]))]
        elapsed = time.perf_counter() - start
        assert chunks[-1].payload.reason == "stop", chunks[-1]
        count = len(chunks) - 1
        if i >= 2:
            samples.append(elapsed)
    return statistics.median(samples), count


async def _spawn(app: TreadleApp, pid: str, *argv: str) -> asyncio.subprocess.Process:
    proc = await asyncio.create_subprocess_exec(*argv, stdout=subprocess.DEVNULL)
    assert await app.processors.wait_attached(pid, 30), f"{pid} did not attach"
    return proc


async def _stop(app: TreadleApp, pid: str, proc: asyncio.subprocess.Process) -> None:
    proc.kill()
    await proc.wait()
    while app.processors.declaration(pid) is not None:
        await asyncio.sleep(0.01)  # wait for the server to see the stream gone


async def main(runs: int, n_chunks: int) -> None:
    deltas = answer(n_chunks)
    model = ScriptedModel()
    app = TreadleApp(Settings(listen="127.0.0.1:0", example_agent=False))
    app.loop.models = ScriptedModels(model)
    target = f"127.0.0.1:{await app.start()}"

    def agent(processors: list[Any]) -> Agent:
        return Agent(id="bench", model="scripted/bench", instructions=[SystemMessage("bench")],
                     output_processors=processors, error_processor_defaults=False)

    try:
        base, count = await _time(app, agent([]), model, runs, deltas)
        print(f"baseline: {base * 1e3:.1f} ms per run of {count} chunks without a processor")
        print(f"{'setting':<12} {'processor':<13} {'ms/run':>8} {'added µs/chunk':>15} {'x pass-through':>15}")

        def row(setting: str, name: str, t: float, floor: float | None) -> float:
            added = (t - base) / count * 1e6
            ratio = f"{added / floor:>15.2f}" if floor else f"{'1.00':>15}"
            print(f"{setting:<12} {name:<13} {t * 1e3:>8.1f} {added:>15.1f} {ratio}")
            return added

        t, _ = await _time(app, agent([PassThrough()]), model, runs, deltas)
        floor = row("in process", "pass-through", t, None)
        t, _ = await _time(app, agent([PII()]), model, runs, deltas)
        row("in process", "pii", t, floor)

        proc = await _spawn(app, "bench-echo", sys.executable, str(ROOT / "bench" / "echo_processor.py"),
                            "default", target)
        try:
            t, _ = await _time(app, agent([ProcessorRef("bench-echo")]), model, runs, deltas)
            floor = row("remote", "pass-through", t, None)
        finally:
            await _stop(app, "bench-echo", proc)
        proc = await _spawn(app, "bench-pii", sys.executable, "-m", "treadle.cli", "processors", "serve",
                            "pii", "--id", "bench-pii", "--target", target)
        try:
            t, _ = await _time(app, agent([ProcessorRef("bench-pii")]), model, runs, deltas)
            row("remote", "pii", t, floor)
        finally:
            await _stop(app, "bench-pii", proc)
    finally:
        await app.stop(0)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--chunks", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(main(args.runs, args.chunks))
