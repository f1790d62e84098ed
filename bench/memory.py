"""What memory adds to a run, on SQLite and PostgreSQL, and many concurrent runs on many threads.

    .venv/bin/python bench/memory.py [--runs N] [--chunks N] [--concurrent N] [--database URL]

In process, with a scripted model (no provider I/O): a run of ``--chunks`` text deltas on a
thread that already holds 10 messages (loaded as history, the input and the answer stored, the
run recorded) against the same run without memory, as a ratio (target: at most 1.3x). Then
``--concurrent`` runs at once, each on its own thread, counting errors (target: 0).

PostgreSQL is ``--database``, else ``TREADLE_TEST_DATABASE_URL``, else a throwaway cluster
started with ``.ci/postgres``; SQLite is a file in a temporary directory.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from opentelemetry.trace import NoOpTracer  # noqa: E402

from treadle.agents import Agent, CallOptions, MemoryOptions, RunRequest  # noqa: E402
from treadle.loop import AgentLoop  # noqa: E402
from treadle.memory import SqlStore, database_url, open_store  # noqa: E402
from treadle.core.messages import Message, SystemMessage  # noqa: E402
from treadle.registry import Registry  # noqa: E402
from treadle.testing import ScriptedModel, ScriptedModels, text_response  # noqa: E402

AGENT = Agent(id="bench", model="scripted/bench", instructions=[SystemMessage("bench")])


async def _median_run(loop: AgentLoop, model: ScriptedModel, deltas: list[str], runs: int,
                      memory: MemoryOptions | None) -> float:
    samples = []
    for i in range(runs + 3):
        model.add(text_response(deltas))
        request = RunRequest([Message.user(f"question {i}")], CallOptions(memory=memory))
        start = time.perf_counter()
        chunks = [c async for c in loop.stream(AGENT, request)]
        elapsed = time.perf_counter() - start
        assert chunks[-1].payload.reason == "stop", chunks[-1]
        if i >= 3:  # warm-up runs
            samples.append(elapsed)
    return statistics.median(samples)


async def _concurrent(loop: AgentLoop, model: ScriptedModel, store: SqlStore, n: int) -> tuple[float, int]:
    model.add(*[text_response(["hello ", "there"]) for _ in range(n)])
    prefix = uuid.uuid4().hex[:8]  # fresh threads, also on a database that holds older runs

    async def one(i: int) -> None:
        request = RunRequest([Message.user("hi")],
                             CallOptions(memory=MemoryOptions(f"user-{prefix}-{i}", f"{prefix}-{i}")))
        result = await loop.generate(AGENT, request)
        if result.error is not None:
            raise RuntimeError(result.error.message)

    start = time.perf_counter()
    results = await asyncio.gather(*(one(i) for i in range(n)), return_exceptions=True)
    elapsed = time.perf_counter() - start
    errors = [r for r in results if isinstance(r, BaseException)]
    for e in errors[:3]:
        print(f"  error: {type(e).__name__}: {e}")
    stored = sum([await store.count_messages(f"{prefix}-{i}") for i in range(0, n, max(1, n // 50))])
    expected = 2 * len(range(0, n, max(1, n // 50)))
    if stored != expected:
        print(f"  sampled threads hold {stored} messages, expected {expected}")
        return elapsed, len(errors) + 1
    return elapsed, len(errors)


async def bench(name: str, url: str, runs: int, n_chunks: int, concurrent: int) -> None:
    store = await open_store(url)
    model = ScriptedModel()
    loop = AgentLoop(Registry(), ScriptedModels(model), NoOpTracer(), memory=store)
    deltas = [f"w{i} " for i in range(n_chunks)]
    try:
        thread = f"bench-{uuid.uuid4().hex[:8]}"
        await store.open_thread("bench-user", thread)
        history = [Message.user(f"earlier question {i}") if i % 2 == 0 else Message.assistant(f"answer {i}")
                   for i in range(10)]
        await store.save_messages(thread, "bench-user", history)
        # Interleaved, so that a change in the machine's load hits both alike.
        bases, withs = [], []
        for _ in range(3):
            bases.append(await _median_run(loop, model, deltas, runs, None))
            withs.append(await _median_run(loop, model, deltas, runs, MemoryOptions("bench-user", thread)))
        base, with_memory = statistics.median(bases), statistics.median(withs)
        print(f"{name}: {n_chunks}-chunk run {base * 1e3:.2f} ms without memory, "
              f"{with_memory * 1e3:.2f} ms with 10 history messages: {with_memory / base:.2f}x "
              f"(target <= 1.3x)")
        elapsed, errors = await _concurrent(loop, model, store, concurrent)
        print(f"{name}: {concurrent} concurrent runs on {concurrent} threads in {elapsed:.1f} s, "
              f"{errors} errors (target 0)")
    finally:
        await store.close()


def _postgres(given: str | None) -> tuple[str, str | None]:
    """A PostgreSQL URL, and the cluster directory to stop afterwards (when this run started it)."""
    if given or os.environ.get("TREADLE_TEST_DATABASE_URL"):
        return given or os.environ["TREADLE_TEST_DATABASE_URL"], None
    out = subprocess.run([str(ROOT / ".ci" / "postgres"), "start"], capture_output=True, text=True, check=True)
    values = dict(line.split("=", 1) for line in out.stdout.split() if "=" in line)
    return values["TREADLE_TEST_DATABASE_URL"], values["TREADLE_PG_DIR"]


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        await bench("sqlite", database_url(tmp), args.runs, args.chunks, args.concurrent)
    pg, started = _postgres(args.database)
    try:
        await bench("postgresql", database_url(tmp, pg), args.runs, args.chunks, args.concurrent)
    finally:
        if started:
            subprocess.run([str(ROOT / ".ci" / "postgres"), "stop", started], check=False)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--chunks", type=int, default=200)
    parser.add_argument("--concurrent", type=int, default=1000)
    parser.add_argument("--database", help="postgresql:// URL (default: a throwaway cluster)")
    asyncio.run(main(parser.parse_args()))
