"""What the hop to another replica costs a signal: two servers on one PostgreSQL.

    .venv/bin/python bench/signals_replicas.py [--sends N] [--database URL]

Two ``TreadleApp`` servers (replicas A and B, each with its own gRPC port, store pool and
LISTEN connection) on one fresh PostgreSQL schema, with a scripted model (no provider I/O). A run
on A is held active by a tool that waits; then ``--sends`` ``SendMessage`` calls go to A itself
(the floor: the signal goes straight into the run's inbox) and as many to B (stored, NOTIFY to
A, A takes it into the run and answers, B answers the caller), interleaved. Printed: the median
and p90 latency of each as seen by the gRPC client, and the ratio B / A. Then the time from a
chunk on A to a subscriber on B against a subscriber on A, as a ratio.

PostgreSQL is ``--database``, else ``TREADLE_TEST_DATABASE_URL``, else a throwaway cluster
started with ``.ci/postgres``.
"""

from __future__ import annotations

import argparse
import contextlib
from dataclasses import replace
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402
import psycopg  # noqa: E402

from treadle.agents import Agent  # noqa: E402
from treadle.app import TreadleApp  # noqa: E402
from treadle.config import Settings  # noqa: E402
from treadle.testing import ScriptedModel, ScriptedModels, text_response  # noqa: E402
from treadle.testing.scripted import tool_call_response  # noqa: E402
from treadle.tools import Tool  # noqa: E402
from treadle.v1 import signal_pb2, thread_service_pb2_grpc  # noqa: E402

THREAD = {"resource_id": "bench-user", "thread_id": "bench-thread"}


def _postgres(url: str | None) -> tuple[str, str | None]:
    url = url or os.environ.get("TREADLE_TEST_DATABASE_URL")
    if url:
        return url, None
    out = subprocess.run([str(ROOT / ".ci" / "postgres"), "start"], capture_output=True, text=True, check=True).stdout
    values = dict(line.split("=", 1) for line in out.split() if "=" in line)
    return values["TREADLE_TEST_DATABASE_URL"], values["TREADLE_PG_DIR"]


async def _replica(database: str, data_dir: Path, model: ScriptedModel, hold: Tool) -> TreadleApp:
    app = TreadleApp(Settings(listen="127.0.0.1:0", database=database, data_dir=data_dir, example_agent=False))
    app.loop.models = ScriptedModels(model)
    app.registry.add_tool(hold)
    app.registry.add_agent(Agent(id="bench", model="scripted/bench", tools=["hold"]))
    await app.start()
    # The bench holds one run while it sends every signal into it: more than one thread may
    # have waiting by default (limits.maxSignalsPerThread).
    app.thread_service.limits = replace(app.thread_service.limits, max_signals_per_thread=100_000)
    return app


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(sends: int, database: str) -> dict[str, float]:
    """Median / p90 seconds of SendMessage to A and to B, and a chunk's fan-out to A and B."""
    released = asyncio.Event()
    entered = asyncio.Event()

    async def wait(args: Any, ctx: Any) -> str:
        entered.set()
        await released.wait()
        return "released"

    hold = Tool("hold", wait)
    model = ScriptedModel([tool_call_response("hold", {}), text_response("done")])
    with tempfile.TemporaryDirectory() as tmp:
        a = await _replica(database, Path(tmp) / "a", model, hold)
        b = await _replica(database, Path(tmp) / "b", model, hold)
        channels = [grpc.aio.insecure_channel(f"127.0.0.1:{app.port}") for app in (a, b)]
        stub_a, stub_b = (thread_service_pb2_grpc.ThreadServiceStub(c) for c in channels)
        try:
            woke = await stub_a.SendMessage(signal_pb2.SendMessageRequest(
                agent_id="bench", **THREAD, message=signal_pb2.SignalMessage(contents="start")))
            run_id = woke.accepted.run_id
            await entered.wait()
            local: list[float] = []
            remote: list[float] = []
            for i in range(sends + 5):
                for stub, samples in ((stub_a, local), (stub_b, remote)):
                    start = time.perf_counter()
                    sent = await stub.SendMessage(signal_pb2.SendMessageRequest(
                        **THREAD, message=signal_pb2.SignalMessage(contents=f"signal {i}")))
                    elapsed = time.perf_counter() - start
                    assert sent.accepted.run_id == run_id and sent.accepted.action == signal_pb2.SIGNAL_ACTION_DELIVER
                    if i >= 5:  # warm-up
                        samples.append(elapsed)
            fan = await _fan_out(a, b, stub_a, stub_b, sends)
            released.set()
            await a.threads.wait_idle()
            taken = [m for m in model.requests[-1].prompt if m.role in ("user", "signal")]
            assert len(taken) == 1 + 2 * (sends + 5), f"every signal reached the run once ({len(taken)})"
        finally:
            released.set()
            for c in channels:
                await c.close()
            await b.stop(0)
            await a.stop(0)
    same, other = fan
    return {"local": statistics.median(local), "local_p90": _percentile(local, 0.9),
            "remote": statistics.median(remote), "remote_p90": _percentile(remote, 0.9),
            "fan_same": same, "fan_other": other}


async def run(sends: int, database: str) -> None:
    r = await measure(sends, database)
    ms = 1000
    print(f"SendMessage into a run on replica A, {sends} each (median / p90):")
    print(f"  sent to A (same replica, floor): {r['local'] * ms:7.2f} ms / {r['local_p90'] * ms:7.2f} ms")
    print(f"  sent to B (other replica)      : {r['remote'] * ms:7.2f} ms / {r['remote_p90'] * ms:7.2f} ms")
    print(f"  ratio B / A                    : {r['remote'] / r['local']:7.2f}x")
    print(f"a chunk of the run on A reaching a subscriber (median of {sends}):")
    print(f"  subscriber on A (floor)        : {r['fan_same'] * ms:7.2f} ms")
    print(f"  subscriber on B                : {r['fan_other'] * ms:7.2f} ms")
    print(f"  ratio B / A                    : {r['fan_other'] / r['fan_same']:7.2f}x")


async def _fan_out(a: TreadleApp, b: TreadleApp, stub_a: Any, stub_b: Any, n: int) -> tuple[float, float]:
    """A custom chunk published on A's hub (as a run's chunk is), timed to both subscribers."""
    from treadle.core.chunks import Chunk

    key = (THREAD["resource_id"], THREAD["thread_id"])
    calls = [stub.SubscribeToThread(signal_pb2.SubscribeToThreadRequest(**THREAD)) for stub in (stub_a, stub_b)]
    for call in calls:
        await call.read()  # subscribed (the first response is the thread's state)
    same: list[float] = []
    other: list[float] = []
    for i in range(n + 5):
        start = time.perf_counter()
        a.threads.hub.publish(key, Chunk.custom("data-bench", {"i": i}, transient=True))
        async def seen(call: Any) -> float:
            while True:
                response = await call.read()
                if any(c.HasField("data") and c.data.name == "data-bench" for c in response.chunks):
                    return time.perf_counter() - start

        here, there = await asyncio.gather(seen(calls[0]), seen(calls[1]))
        if i >= 5:
            same.append(here)
            other.append(there)
    for call in calls:
        call.cancel()
    return statistics.median(same), statistics.median(other)


def schema_url(base: str, schema: str) -> str:
    """``base`` with every connection's search_path set to ``schema``."""
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}options={quote(f'-csearch_path={schema}')}"


@contextlib.contextmanager
def fresh_schema(base: str) -> Iterator[str]:
    """A new, empty schema on ``base`` for the length of the block; yields its URL."""
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield schema_url(base, schema)
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sends", type=int, default=100)
    parser.add_argument("--database")
    args = parser.parse_args()
    base, started = _postgres(args.database)
    try:
        with fresh_schema(base) as url:
            asyncio.run(run(args.sends, url))
    finally:
        if started:
            subprocess.run([str(ROOT / ".ci" / "postgres"), "stop", started], check=False, capture_output=True)


if __name__ == "__main__":
    main()
