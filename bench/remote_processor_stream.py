"""What a remote MUTATE ``processOutputStream`` processor adds per chunk, by delivery mode.

    .venv/bin/python bench/remote_processor_stream.py [--runs N] [--chunks N]

One server in this process, with a serving process's garbage-collector settings, streams a
scripted answer of ``--chunks`` text deltas (an in-process scripted model, so no provider I/O
blurs the numbers) through an echo processor running in another process, attached over
``ProcessorService.Attach``. For each mode it prints the added microseconds per chunk against
the same run without the processor, and that cost as a ratio to the floor: a bare gRPC
bidirectional round trip measured in this run (``grpc_floor.py``).
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

from bench.grpc_floor import bidi_round_trip_us  # noqa: E402
from treadle.agents import Agent, ProcessorRef, RunRequest  # noqa: E402
from treadle.app import TreadleApp  # noqa: E402
from treadle.config import Settings  # noqa: E402
from treadle.core.messages import Message, SystemMessage  # noqa: E402
from treadle.testing import ScriptedModel, ScriptedModels, text_response  # noqa: E402

MODES = ("lockstep", "pipelined", "windowed", "observe")


async def _time_runs(app: TreadleApp, agent: Agent, model: ScriptedModel, runs: int,
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
        count = len(chunks) - 1  # every chunk but "start" passes processOutputStream
        if i >= 2:  # two warm-up runs
            samples.append(elapsed)
    return statistics.median(samples), count


def _serving_gc() -> None:
    """The garbage-collector settings of a serving process (``treadle serve``), when the revision
    under test has them: the server measured here is configured as one that serves."""
    try:
        from treadle import gc_tuning
    except ImportError:
        return
    gc_tuning.tune()


async def measure(runs: int, n_chunks: int, modes: tuple[str, ...] = MODES) -> dict[str, Any]:
    """The floor, the run without a processor, and each mode's ms per run and added µs per chunk."""
    floor = await bidi_round_trip_us()
    deltas = [f"w{i} " for i in range(n_chunks)]
    model = ScriptedModel()
    app = TreadleApp(Settings(listen="127.0.0.1:0", example_agent=False))
    app.loop.models = ScriptedModels(model)
    port = await app.start()
    target = f"127.0.0.1:{port}"
    _serving_gc()

    def agent(processors: list[ProcessorRef]) -> Agent:
        return Agent(id="bench", model="scripted/bench", instructions=[SystemMessage("bench")],
                     output_processors=processors)

    result: dict[str, Any] = {"floor_us": floor, "modes": {}}
    try:
        base, count = await _time_runs(app, agent([]), model, runs, deltas)
        result.update(baseline_ms=base * 1e3, chunks=count)
        for mode in modes:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, str(ROOT / "bench" / "echo_processor.py"), mode, target,
                stdout=subprocess.DEVNULL,
            )
            try:
                assert await app.processors.wait_attached("bench-echo", 30)
                # The run without the processor again, on either side of this mode's runs: the
                # machine's load drifts between modes, so each mode has its own baseline.
                before, _ = await _time_runs(app, agent([]), model, runs, deltas)
                t, _ = await _time_runs(app, agent([ProcessorRef("bench-echo")]), model, runs, deltas)
                after, _ = await _time_runs(app, agent([]), model, runs, deltas)
                added = (t - (before + after) / 2) / count * 1e6
                result["modes"][mode] = {"ms": t * 1e3, "added_us": added, "x_floor": added / floor}
            finally:
                proc.kill()
                await proc.wait()
                while app.processors.declaration("bench-echo") is not None:
                    await asyncio.sleep(0.01)  # wait for the server to see the stream gone
    finally:
        await app.stop(0)
    return result


async def main(runs: int, n_chunks: int) -> None:
    r = await measure(runs, n_chunks)
    print(f"floor: bare gRPC bidi round trip {r['floor_us']:.1f} µs")
    print(f"baseline: {r['baseline_ms']:.1f} ms per run of {r['chunks']} chunks without a processor")
    print(f"{'mode':<10} {'ms/run':>8} {'added µs/chunk':>15} {'x floor':>8}")
    for mode, m in r["modes"].items():
        print(f"{mode:<10} {m['ms']:>8.1f} {m['added_us']:>15.1f} {m['x_floor']:>8.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--chunks", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(main(args.runs, args.chunks))
