"""Every scenario of ``python -m bench``, each a ratio to a floor measured in the same process.

    python bench/scenarios.py SCENARIO SIZE [--database URL]

runs one scenario (``inproc``, ``grpc``, ``memory``, ``remote``, ``signals``) at one size
(``smoke``, ``quick``, ``full``) and prints its rows as one JSON line. ``python -m bench`` starts
one such process per scenario and round (for ``--ab``, on the other revision's code too), so
that every scenario starts from a fresh process.

A row: ``{"scenario", "name", "value", "unit", "floor", "ratio", "target"}``, where ``target`` is
``[key, op, bound]`` (``["ratio", "<=", 1.5]``: the ratio is at most 1.5) or null.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import gc
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
_TREE = os.environ.get("TREADLE_BENCH_TREE")
if _TREE:
    # The server code of that tree only: an editable install of another tree (this one) must
    # not fill in the modules the tree lacks.
    sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "__module__", "").startswith("__editable__")]
    sys.path_hooks[:] = [h for h in sys.path_hooks if not getattr(h, "__module__", "").startswith("__editable__")]
    sys.path[:0] = [str(Path(_TREE) / "server"), str(Path(_TREE) / "clients" / "python")]
    sys.path_importer_cache.clear()

import grpc  # noqa: E402
from opentelemetry.trace import NoOpTracer  # noqa: E402

from bench import workload  # noqa: E402
from treadle.agents import Agent  # noqa: E402
from treadle.app import TreadleApp  # noqa: E402
from treadle.config import Settings  # noqa: E402
from treadle.core.chunks import Chunk  # noqa: E402
from treadle.core.messages import Message  # noqa: E402
from treadle.loop import AgentLoop  # noqa: E402
from treadle.registry import Registry  # noqa: E402
from treadle.v1 import agent_pb2, agent_service_pb2, agent_service_pb2_grpc, chunk_pb2  # noqa: E402

Row = dict[str, Any]
ERRORS: list[str] = []
"""What failed runs said (printed to stderr when a scenario counted errors)."""

SIZES: dict[str, dict[str, int]] = {
    # inproc: warm-up runs, rounds, runs per batch, concurrent runs
    # grpc: runs per batch, rounds, concurrent streams, spaced runs
    # memory: runs per batch, rounds, concurrent runs; remote: runs, chunks; signals: sends
    "smoke": {"warm": 2, "rounds": 2, "batch": 2, "conc": 20, "grpc_batch": 2, "grpc_rounds": 2,
              "grpc_conc": 20, "spaced": 1, "mem_batch": 2, "mem_rounds": 2, "mem_conc": 10,
              "remote_runs": 1, "remote_chunks": 20, "sends": 5},
    "quick": {"warm": 10, "rounds": 3, "batch": 5, "conc": 1000, "grpc_batch": 5, "grpc_rounds": 3,
              "grpc_conc": 1000, "spaced": 2, "mem_batch": 20, "mem_rounds": 3, "mem_conc": 200,
              "remote_runs": 3, "remote_chunks": 200, "sends": 20},
    "full": {"warm": 40, "rounds": 9, "batch": 25, "conc": 1000, "grpc_batch": 20, "grpc_rounds": 5,
             "grpc_conc": 1000, "spaced": 5, "mem_batch": 50, "mem_rounds": 5, "mem_conc": 1000,
             "remote_runs": 10, "remote_chunks": 200, "sends": 100},
}
N = 200  # text deltas of the workload's plain reply


def row(scenario: str, name: str, value: float, unit: str, floor: float | None = None,
        ratio: float | None = None, target: list[Any] | None = None) -> Row:
    if ratio is None and floor:
        ratio = value / floor
    return {"scenario": scenario, "name": name, "value": value, "unit": unit, "floor": floor,
            "ratio": ratio, "target": target}


class GcPauses:
    """Wall time spent in the garbage collector while the block runs."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.collections = 0
        self._start = 0.0

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._start
            self.collections += 1

    def __enter__(self) -> GcPauses:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc: Any) -> None:
        gc.callbacks.remove(self._callback)


def serving_gc() -> None:
    """What a serving process does once started (``treadle serve``, ``app.serve()``), when the
    revision under test does it: its garbage-collector settings."""
    try:
        from treadle import gc_tuning
    except ImportError:
        return
    gc_tuning.tune()


def _fit_us_per_chunk(points: list[tuple[int, float]]) -> float:
    """Least-squares slope (µs per chunk) of ms per run over chunk counts."""
    mx = statistics.fmean(p[0] for p in points)
    my = statistics.fmean(p[1] for p in points)
    slope = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)
    return slope * 1000


# --- in process: the framework's workload -----------------------------------------------------

async def inproc(size: dict[str, int]) -> list[Row]:
    """The framework's sequential scenarios (a, b0, b1, b5, d, a@50, a@800) and C concurrent runs."""
    registry = Registry()
    workload.register(registry)
    loops = {n: AgentLoop(registry, workload.WorkloadModels(workload.WorkloadModel(n)), NoOpTracer())
             for n in (50, N, 800)}
    configs: list[tuple[str, AgentLoop, Agent, int]] = [
        (c, loops[N], workload.agent(c), 50 if c == "d" else N) for c in workload.CONFIGS
    ] + [(f"a@{n}", loops[n], workload.agent("a"), n) for n in (50, 800)]
    for _, loop, agent, expect in configs:
        for _ in range(size["warm"]):
            await workload.run_once(loop, agent, expect)
    serving_gc()
    means: dict[str, list[float]] = {c[0]: [] for c in configs}
    for r in range(size["rounds"]):
        for k in range(len(configs)):
            name, loop, agent, expect = configs[(k + r) % len(configs)]
            start = time.perf_counter()
            for _ in range(size["batch"]):
                await workload.run_once(loop, agent, expect)
            means[name].append((time.perf_counter() - start) / size["batch"] * 1e3)
    med = {k: statistics.median(v) for k, v in means.items()}
    s = "inproc"
    rows = [row(s, f"ms per run, config {k}", v, "ms") for k, v in med.items()]
    per_chunk = _fit_us_per_chunk([(50, med["a@50"]), (N, med["a"]), (800, med["a@800"])])
    rows.append(row(s, "baseline µs per chunk (fit over 50/200/800)", per_chunk, "µs",
                    target=["value", "<=", 2.0]))
    paired = [(b5 - b0) * 1e3 / N / 5 for b5, b0 in zip(means["b5"], means["b0"], strict=True)]
    rows.append(row(s, "µs per chunk per pass-through processor ((b5-b0)/N/5)", statistics.median(paired),
                    "µs", target=["value", "<=", 1.5]))
    marginal = [(b5 - b1) * 1e3 / N / 4 for b5, b1 in zip(means["b5"], means["b1"], strict=True)]
    rows.append(row(s, "µs per chunk per pass-through processor ((b5-b1)/N/4)", statistics.median(marginal),
                    "µs"))
    # C concurrent runs sharing one agent
    c = size["conc"]
    loop, agent = loops[N], workload.agent("a")
    gc.collect()
    with GcPauses() as pauses:
        start = time.perf_counter()
        counts = await asyncio.gather(*(workload.run_once(loop, agent, N) for _ in range(c)),
                                      return_exceptions=True)
        wall = time.perf_counter() - start
    errors = sum(isinstance(x, BaseException) for x in counts)
    rows.append(row(s, f"{c} concurrent runs: text chunks/s", c * N / wall, "chunks/s"))
    rows.append(row(s, f"{c} concurrent runs: errors", errors, "", target=["value", "<=", 0]))
    rows.append(row(s, f"{c} concurrent runs: GC pause total", pauses.seconds * 1e3, "ms",
                    target=["value", "<=", 100.0]))
    return rows


# --- the gRPC edge: Stream through the server against a bare grpc.aio call --------------------

_FLOOR_METHOD = "/bench.Floor/Stream"


class _Floor:
    """A bare grpc.aio server that answers with given serialized responses (or spaced chunks)."""

    def __init__(self) -> None:
        self.replay: list[bytes] = []
        self.spaced: tuple[int, float] | None = None
        self.emitted: list[float] = []
        self.server = grpc.aio.server()
        handler = grpc.unary_stream_rpc_method_handler(
            self._stream, request_deserializer=lambda b: b, response_serializer=lambda b: b)
        self.server.add_generic_rpc_handlers(
            [grpc.method_handlers_generic_handler("bench.Floor", {"Stream": handler})])
        self.port = self.server.add_insecure_port("127.0.0.1:0")

    async def _stream(self, request: bytes, context: Any) -> AsyncIterator[bytes]:
        if self.spaced is None:
            for body in self.replay:
                yield body
            return
        n, gap = self.spaced
        for i in range(n):
            await asyncio.sleep(gap)
            response = agent_service_pb2.StreamResponse()
            response.chunks.add().text_delta.text = workload.WORDS[i % 16] + " "
            self.emitted.append(time.perf_counter())
            yield response.SerializeToString()


class _SpacedModel(workload.WorkloadModel):
    """Text deltas ``gap`` seconds apart, as a real provider sends them; stamps each one."""

    def __init__(self, n: int, gap: float) -> None:
        super().__init__(n)
        self.gap = gap
        self.emitted: list[float] = []

    async def stream(self, request: Any) -> AsyncIterator[Chunk]:
        for chunk in self.plain:
            if chunk.type == "text-delta":
                await asyncio.sleep(self.gap)
                self.emitted.append(time.perf_counter())
            yield Chunk(chunk.type, chunk.payload)


async def _consume(call: Any, arrivals: list[float] | None = None) -> tuple[int, int, list[bytes]]:
    """(responses, chunks, serialized responses) of one Stream; stamps text deltas' arrival."""
    responses = chunks = 0
    bodies: list[bytes] = []
    async for response in call:
        responses += 1
        chunks += len(response.chunks)
        bodies.append(response.SerializeToString())
        if arrivals is not None:
            now = time.perf_counter()
            arrivals.extend(now for c in response.chunks if c.WhichOneof("chunk") == "text_delta")
    return responses, chunks, bodies


async def grpc_edge(size: dict[str, int]) -> list[Row]:
    app = TreadleApp(Settings(listen="127.0.0.1:0", example_agent=False))
    model = workload.WorkloadModel(N)
    app.loop.models = workload.WorkloadModels(model)
    app.registry.add_agent(workload.agent("a"))
    port = await app.start()
    serving_gc()
    floor = _Floor()
    await floor.server.start()
    s = "grpc"
    rows: list[Row] = []
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    floor_channel = grpc.aio.insecure_channel(f"127.0.0.1:{floor.port}")
    try:
        stub = agent_service_pb2_grpc.AgentServiceStub(channel)
        request = agent_service_pb2.StreamRequest(agent_id="bench-a", prompt=workload.PROMPT)
        floor_call = floor_channel.unary_stream(
            _FLOOR_METHOD, request_serializer=agent_service_pb2.StreamRequest.SerializeToString,
            response_deserializer=agent_service_pb2.StreamResponse.FromString)

        async def treadle_once() -> tuple[int, int, list[bytes]]:
            return await _consume(stub.Stream(request))

        async def floor_once() -> tuple[int, int, list[bytes]]:
            return await _consume(floor_call(request))

        _, _, floor.replay = await treadle_once()
        for _ in range(3):
            await treadle_once()
            await floor_once()
        ratios, t_ms, f_ms, messages = [], [], [], []
        for _ in range(size["grpc_rounds"]):
            start = time.perf_counter()
            for _ in range(size["grpc_batch"]):
                n_responses, _, bodies = await treadle_once()
            t = (time.perf_counter() - start) / size["grpc_batch"]
            floor.replay = bodies  # the same messages and bytes as the last run
            messages.append(n_responses)
            start = time.perf_counter()
            for _ in range(size["grpc_batch"]):
                await floor_once()
            f = (time.perf_counter() - start) / size["grpc_batch"]
            ratios.append(t / f)
            t_ms.append(t * 1e3)
            f_ms.append(f * 1e3)
        rows.append(row(s, "one Stream, ms per run (206 chunks)", statistics.median(t_ms), "ms",
                        floor=statistics.median(f_ms), ratio=statistics.median(ratios),
                        target=["ratio", "<=", 1.5]))
        rows.append(row(s, "one Stream, responses per run", statistics.median(messages), ""))

        # C concurrent Streams against C concurrent floor calls with the same responses
        c = size["grpc_conc"]

        async def burst(once: Any) -> tuple[float, int, int]:
            start = time.perf_counter()
            results = await asyncio.gather(*(once() for _ in range(c)), return_exceptions=True)
            wall = time.perf_counter() - start
            chunks = sum(r[1] for r in results if not isinstance(r, BaseException))
            return chunks / wall, sum(isinstance(r, BaseException) for r in results), chunks

        gc.collect()
        with GcPauses() as pauses:
            t_cps, errors, _ = await burst(treadle_once)
        f_cps, _, _ = await burst(floor_once)
        rows.append(row(s, f"{c} concurrent Streams, chunks/s", t_cps, "chunks/s", floor=f_cps,
                        target=["ratio", ">=", 0.5]))
        rows.append(row(s, f"{c} concurrent Streams, errors", errors, "", target=["value", "<=", 0]))
        rows.append(row(s, f"{c} concurrent Streams, server+client GC pause total", pauses.seconds * 1e3, "ms"))

        # Spaced chunks: latency from the model's yield to the client's receipt
        gap, n = 0.002, 50
        spaced = _SpacedModel(n, gap)
        app.loop.models = workload.WorkloadModels(spaced)
        floor.spaced = (n, gap)
        t_lat, f_lat = [], []
        for _ in range(size["spaced"]):
            arrivals: list[float] = []
            spaced.emitted.clear()
            await _consume(stub.Stream(request), arrivals)
            t_lat += [a - e for a, e in zip(arrivals, spaced.emitted, strict=True)]
            arrivals = []
            floor.emitted.clear()
            await _consume(floor_call(request), arrivals)
            f_lat += [a - e for a, e in zip(arrivals, floor.emitted, strict=True)]
        t_med, f_med = statistics.median(t_lat) * 1e3, statistics.median(f_lat) * 1e3
        rows.append(row(s, "spaced chunks (2 ms apart): time to each chunk, median", t_med, "ms",
                        floor=f_med, ratio=None, target=["difference", "<=", 0.2]))
        rows[-1]["difference"] = t_med - f_med
    finally:
        await channel.close()
        await floor_channel.close()
        await floor.server.stop(None)
        await app.stop(0)
    return rows


# --- memory through the server's Stream path ----------------------------------------------------

async def memory(size: dict[str, int], engine: str, url: str | None, data_dir: Path) -> list[Row]:
    """``url`` None: the server's SQLite file in ``data_dir``."""
    app = TreadleApp(Settings(listen="127.0.0.1:0", database=url, data_dir=data_dir, example_agent=False))
    app.loop.models = workload.WorkloadModels(workload.WorkloadModel(N))
    app.registry.add_agent(workload.agent("a"))
    port = await app.start()
    serving_gc()
    # Measured as a server runs after its first second: a replica that is unsure whether others
    # listen sends them its chunks until its hello came back and the others could answer.
    relay, settled = getattr(app, "relay", None), time.monotonic() + 10
    while getattr(relay, "watched", False) and time.monotonic() < settled:
        await asyncio.sleep(0.05)
    s = f"memory-{engine}"
    rows: list[Row] = []
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        assert app.store is not None
        thread = f"bench-{uuid.uuid4().hex[:8]}"
        await app.store.open_thread("bench-user", thread)
        history = [Message.user(f"earlier question {i}") if i % 2 == 0 else Message.assistant(f"answer {i}")
                   for i in range(10)]
        await app.store.save_messages(thread, "bench-user", history)
        stub = agent_service_pb2_grpc.AgentServiceStub(channel)
        plain = agent_service_pb2.StreamRequest(agent_id="bench-a", prompt=workload.PROMPT)

        def with_memory(resource: str, thread_id: str) -> agent_service_pb2.StreamRequest:
            return agent_service_pb2.StreamRequest(
                agent_id="bench-a", prompt=workload.PROMPT,
                options=agent_pb2.CallOptions(memory=agent_pb2.MemoryOptions(resource=resource, thread_id=thread_id)))

        on_thread = with_memory("bench-user", thread)

        async def once(request: agent_service_pb2.StreamRequest) -> int:
            errors = 0
            try:
                async for response in stub.Stream(request):
                    for c in response.chunks:
                        kind = c.WhichOneof("chunk")
                        if kind == "error":
                            ERRORS.append(c.error.message)
                        if kind == "error" or (kind == "finish" and c.finish.reason != chunk_pb2.FINISH_REASON_STOP):
                            errors += 1
            except grpc.aio.AioRpcError as e:
                ERRORS.append(f"{e.code().name}: {e.details()}")
                raise
            return errors

        # What the runs on the thread ask of the database: its write transactions, its writes of
        # one statement (``Database.write_one``, or ``Database.one`` with ``write``: no BEGIN and
        # COMMIT on PostgreSQL) and its reads, whatever runs inside each, counted while the
        # memory runs are timed (a call made by another of them is not counted again).
        db = app.store.db
        counted = {"write": 0, "write_one": 0, "read": 0, "on": False}
        inside: contextvars.ContextVar[bool] = contextvars.ContextVar("inside", default=False)

        def counting(kind: str) -> Any:
            method = getattr(db, kind)

            async def counted_call(*args: Any, **kwargs: Any) -> Any:
                if inside.get():
                    return await method(*args, **kwargs)
                if counted["on"]:
                    counted[("write_one" if kwargs.get("write") else "read") if kind == "one" else kind] += 1
                token = inside.set(True)
                try:
                    return await method(*args, **kwargs)
                finally:
                    inside.reset(token)
            return counted_call

        kinds = [k for k in ("write", "write_one", "read", "one") if hasattr(db, k)]  # an older revision has fewer
        for kind in kinds:
            setattr(db, kind, counting(kind))
        for _ in range(3):
            await once(plain)
            await once(on_thread)
        ratios, base_ms, mem_ms = [], [], []
        for _ in range(size["mem_rounds"]):
            timings = []
            for request in (plain, on_thread):
                counted["on"] = request is on_thread
                start = time.perf_counter()
                for _ in range(size["mem_batch"]):
                    if await once(request):
                        raise RuntimeError("a benchmark run failed")
                timings.append((time.perf_counter() - start) / size["mem_batch"] * 1e3)
                counted["on"] = False
            base_ms.append(timings[0])
            mem_ms.append(timings[1])
            ratios.append(timings[1] / timings[0])
        for kind in kinds:
            db.__dict__.pop(kind, None)  # the instance's own methods again
        bound = 1.3 if engine == "sqlite" else 1.5
        rows.append(row(s, "Stream on a thread with 10 messages, ms per run", statistics.median(mem_ms), "ms",
                        floor=statistics.median(base_ms), ratio=statistics.median(ratios),
                        target=["ratio", "<=", bound]))
        timed = size["mem_rounds"] * size["mem_batch"]
        rows.append(row(s, "write transactions per run", counted["write"] / timed, ""))
        rows.append(row(s, "single-statement writes per run", counted["write_one"] / timed, ""))
        rows.append(row(s, "reads (outside a transaction) per run", counted["read"] / timed, ""))
        # The floor under those calls: each is at least one bare write of one row through the
        # driver alone, measured here; how much of what the target leaves memory they take.
        bare = await bare_write_ms(url, data_dir)
        calls = (counted["write"] + counted["write_one"] + counted["read"]) / timed
        budget = (bound - 1) * statistics.median(base_ms)
        rows.append(row(s, "a bare one-row write through the driver alone, ms", bare, "ms"))
        rows.append(row(s, "calls per run x that bare write, ms (floor: what the target leaves memory)",
                        calls * bare, "ms", floor=budget))
        c = size["mem_conc"]
        prefix = uuid.uuid4().hex[:8]
        start = time.perf_counter()
        results = await asyncio.gather(
            *(once(with_memory(f"user-{prefix}-{i}", f"{prefix}-{i}")) for i in range(c)), return_exceptions=True)
        wall = time.perf_counter() - start
        errors = sum(1 if isinstance(r, BaseException) else r for r in results)
        for message in sorted(set(ERRORS))[:5]:
            print(f"{s}: a run failed: {message}", file=sys.stderr)
        rows.append(row(s, f"{c} concurrent Streams on {c} threads, s", wall, "s"))
        rows.append(row(s, f"{c} concurrent Streams on {c} threads, errors", errors, "", target=["value", "<=", 0]))
    finally:
        await channel.close()
        await app.stop(0)
    return rows


async def bare_write_ms(url: str | None, data_dir: Path, n: int = 1000) -> float:
    """Mean ms of one write of one row, one after another, through the driver alone (psycopg in
    autocommit on ``url``; else sqlite3 on a file of its own in ``data_dir``, with the server's
    pragmas, ``BEGIN IMMEDIATE`` and ``COMMIT``): what a call to the database costs at least."""
    if url is not None:
        import psycopg
        from sqlalchemy.engine import make_url

        libpq = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
        async with await psycopg.AsyncConnection.connect(libpq, autocommit=True) as conn:
            await conn.execute("CREATE TEMP TABLE bench_floor (id int PRIMARY KEY, n int)")
            await conn.execute("INSERT INTO bench_floor VALUES (1, 0)")
            update = "UPDATE bench_floor SET n = n + 1 WHERE id = %s"
            for _ in range(100):
                await conn.execute(update, (1,), prepare=True)
            start = time.perf_counter()
            for _ in range(n):
                await conn.execute(update, (1,), prepare=True)
            return (time.perf_counter() - start) / n * 1e3
    import sqlite3

    data_dir.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(data_dir / "bench-floor.db", isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("CREATE TABLE IF NOT EXISTS bench_floor (id INTEGER PRIMARY KEY, n INTEGER)")
        db.execute("INSERT OR REPLACE INTO bench_floor VALUES (1, 0)")

        def write() -> None:
            db.execute("BEGIN IMMEDIATE")
            db.execute("UPDATE bench_floor SET n = n + 1 WHERE id = ?", (1,))
            db.execute("COMMIT")

        for _ in range(100):
            write()
        start = time.perf_counter()
        for _ in range(n):
            write()
        return (time.perf_counter() - start) / n * 1e3
    finally:
        db.close()


# --- remote processors and signals (the existing benches) ---------------------------------------

async def remote(size: dict[str, int]) -> list[Row]:
    from bench.remote_processor_stream import measure

    r = await measure(size["remote_runs"], size["remote_chunks"])
    s = "remote"
    rows = [row(s, "bare gRPC bidi round trip (floor)", r["floor_us"], "µs"),
            row(s, f"run without a processor ({r['chunks']} chunks)", r["baseline_ms"], "ms")]
    targets = {"pipelined": ["ratio", "<=", 1.0]}
    for mode, m in r["modes"].items():
        if mode == "observe":
            rows.append(row(s, "observe: added µs per chunk", m["added_us"], "µs", target=["value", "<=", 5.0]))
        else:
            rows.append(row(s, f"{mode}: added µs per chunk", m["added_us"], "µs", floor=r["floor_us"],
                            ratio=m["x_floor"], target=targets.get(mode)))
    return rows


async def signals(size: dict[str, int], database: str) -> list[Row]:
    from bench.signals_replicas import fresh_schema, measure

    with fresh_schema(database) as url:
        r = await measure(size["sends"], url)
    s = "signals"
    return [
        row(s, "SendMessage via the other replica, median", r["remote"] * 1e3, "ms", floor=r["local"] * 1e3),
        row(s, "SendMessage via the other replica, p90", r["remote_p90"] * 1e3, "ms", floor=r["local_p90"] * 1e3),
        row(s, "a chunk to a subscriber on the other replica", r["fan_other"] * 1e3, "ms", floor=r["fan_same"] * 1e3),
    ]


SCENARIOS = ("inproc", "grpc", "memory-sqlite", "memory-postgresql", "remote", "signals")


async def run(name: str, size_name: str, database: str | None) -> list[Row]:
    size = SIZES[size_name]
    if name == "inproc":
        return await inproc(size)
    if name == "grpc":
        return await grpc_edge(size)
    if name == "memory-sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            return await memory(size, "sqlite", None, Path(tmp))
    if name == "memory-postgresql":
        from bench.signals_replicas import fresh_schema

        if not database:
            raise SystemExit("memory-postgresql needs --database")
        with tempfile.TemporaryDirectory() as tmp, fresh_schema(database) as url:
            return await memory(size, "postgresql", url, Path(tmp) / "data")
    if name == "remote":
        return await remote(size)
    if name == "signals":
        if not database:
            raise SystemExit("signals needs --database")
        return await signals(size, database)
    raise SystemExit(f"unknown scenario {name!r}; one of {', '.join(SCENARIOS)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", choices=SCENARIOS)
    parser.add_argument("size", choices=tuple(SIZES))
    parser.add_argument("--database", help="postgresql:// URL (memory-postgresql, signals)")
    args = parser.parse_args()
    rows = asyncio.run(run(args.scenario, args.size, args.database))
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
