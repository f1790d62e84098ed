"""What the PII guard (a remote ``TextGate`` processor) adds to time to first token and per chunk.

    .venv/bin/python bench/pii_guard.py [--runs N] [--chunks N]

One server in this process streams a scripted answer of ``--chunks`` text deltas, one in ten an
e-mail address split across three deltas (an in-process scripted model, so no provider I/O
blurs the numbers), through ``clients/python/examples/pii_guard.py`` running in another
process, per-chunk and windowed. It prints the time to the first text delta and the added
microseconds per chunk against the same run without the guard, and each as a ratio to the
floor: a bare gRPC bidirectional round trip measured in this run (``grpc_floor.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.grpc_floor import bidi_round_trip_us  # noqa: E402
from treadle.agents import Agent, ProcessorRef, RunRequest  # noqa: E402
from treadle.app import TreadleApp  # noqa: E402
from treadle.config import Settings  # noqa: E402
from treadle.core.messages import Message, SystemMessage  # noqa: E402
from treadle.testing import ScriptedModel, ScriptedModels, text_response  # noqa: E402


def answer(n: int) -> list[str]:
    out: list[str] = []
    while len(out) < n:
        i = len(out)
        out.extend(["mail ", f"user{i}@exa", "mple.com ", "now "] if i % 10 == 0 else [f"w{i} "])
    return out[:n]


async def _time_runs(app: TreadleApp, agent: Agent, model: ScriptedModel, runs: int,
                     deltas: list[str]) -> tuple[float, float, int, str]:
    """Median seconds to the first text delta and per run, the chunks of a run, and its text."""
    firsts: list[float] = []
    totals: list[float] = []
    count, text = 0, ""
    for i in range(runs + 2):
        model.add(text_response(deltas))
        start = time.perf_counter()
        first = None
        chunks = []
        async for c in app.loop.stream(agent, RunRequest([Message.user("go")])):
            if first is None and c.type == "text-delta":
                first = time.perf_counter() - start
            chunks.append(c)
        elapsed = time.perf_counter() - start
        assert chunks[-1].payload.reason == "stop", chunks[-1]
        count = len(chunks) - 1
        text = "".join(c.payload.text for c in chunks if c.type == "text-delta")
        if i >= 2:  # two warm-up runs
            firsts.append(first or 0.0)
            totals.append(elapsed)
    return statistics.median(firsts), statistics.median(totals), count, text


async def main(runs: int, n_chunks: int) -> None:
    floor = await bidi_round_trip_us()
    deltas = answer(n_chunks)
    model = ScriptedModel()
    app = TreadleApp(Settings(listen="127.0.0.1:0", example_agent=False, data_dir=Path(tempfile.mkdtemp())))
    app.loop.models = ScriptedModels(model)
    port = await app.start()
    target = f"127.0.0.1:{port}"

    def agent(processors: list[ProcessorRef]) -> Agent:
        return Agent(id="bench", model="scripted/bench", instructions=[SystemMessage("bench")],
                     output_processors=processors)

    try:
        ttft0, base, count, _ = await _time_runs(app, agent([]), model, runs, deltas)
        print(f"floor: bare gRPC bidi round trip {floor:.1f} µs")
        print(f"baseline: first token {ttft0 * 1e6:.0f} µs, {base * 1e3:.1f} ms per run of {count} chunks, no guard")
        print(f"{'delivery':<10} {'+TTFT µs':>9} {'x floor':>8} {'+µs/chunk':>10} {'x floor':>8}")
        for delivery in ("per_chunk", "windowed"):
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "clients.python.examples.pii_guard", target, "--delivery", delivery,
                cwd=ROOT, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL,
            )
            try:
                assert await app.processors.wait_attached("pii-guard", 30)
                ttft, t, _, text = await _time_runs(app, agent([ProcessorRef("pii-guard")]), model, runs, deltas)
                assert "@" not in text, text  # the guard did its job
                added_first = (ttft - ttft0) * 1e6
                added = (t - base) / count * 1e6
                print(f"{delivery:<10} {added_first:>9.0f} {added_first / floor:>8.2f} {added:>10.1f} {added / floor:>8.2f}")
            finally:
                proc.kill()
                await proc.wait()
                while app.processors.declaration("pii-guard") is not None:
                    await asyncio.sleep(0.01)  # wait for the server to see the stream gone
    finally:
        await app.stop(0)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--chunks", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(main(args.runs, args.chunks))
