"""Outlier ejection with REAL SDK replica processes (``tests/remote/chaos_main.py``), one of them
stopped with SIGSTOP: its stream stays open, it just answers nothing.

1. With the default threshold (3) the stopped replica is ejected after exactly 3 timeouts (one
   per hung invocation: the run's later chunks are not each made to wait); the run completes on
   the healthy replica, and the next run completes there with no timeout at all.
2. Once the ejection time is up (the hub's clock is a manual one here) it is routable again, and
   as it answers again (SIGCONT) it serves runs.

Nothing is timed: the test waits for observable state (what the children print, the hub's view
of each stream, the metrics) and moves the ejection clock itself.
"""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.support import Turn
from tests.test_remote_processes import (  # noqa: F401
    HEAD,
    PID,
    TAIL,
    Processor,
    Server,
    deltas,
    processor,
    until,
    visible,
    words,
)
from treadle.agents import ProcessorRef
from treadle.api.processor_hub import Connection
from treadle.app import TreadleApp
from treadle.config import Settings

EJECTION_TIME = 30.0


class ManualClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def metric_total(reader: InMemoryMetricReader, name: str) -> float:
    data = reader.get_metrics_data()
    return sum(p.value for rm in (data.resource_metrics if data else []) for sm in rm.scope_metrics
               for m in sm.metrics if m.name == name for p in m.data.data_points)


@pytest.fixture
async def ejecting(tmp_path: Any) -> AsyncIterator[tuple[Server, InMemoryMetricReader]]:
    reader = InMemoryMetricReader()
    app = TreadleApp(Settings(listen="127.0.0.1:0", example_agent=False, processor_ejection_time=EJECTION_TIME,
                              data_dir=tmp_path),
                     env={}, tracer_provider=TracerProvider(), meter_provider=MeterProvider(metric_readers=[reader]))
    s = Server(app, InMemorySpanExporter())
    await app.start()
    yield s, reader
    await app.stop(0)
    for model in s.models:
        model.close()


def full(answer: list[str]) -> list[str]:
    """The whole run as the client sees it (the chaos processor adds its word count at finish)."""
    return [*HEAD, *deltas(answer), "text_end", "data:data-word-count", "step_finish", TAIL[-1]]


def stream_of(s: Server, child: Processor) -> Connection:
    return next(c for c in s.app.processors.connections() if c.instance_id.endswith(f":{child.pid}"))


def runs_served(child: Processor) -> set[str]:
    return {r["run"] for r in child.reports("chunk")}


async def test_a_stopped_replica_is_ejected_and_returns_after_the_ejection_time(ejecting: Any, processor: Any) -> None:
    s, reader = ejecting
    answer = words(6)
    s.agent("guarded", [Turn.say(answer) for _ in range(3)],
            output_processors=[ProcessorRef(PID, "fail_open", timeout=0.5)])
    stopped = await processor(s, "--delivery", "per_chunk")
    healthy = await processor(s, "--delivery", "per_chunk")
    a, b = stream_of(s, stopped), stream_of(s, healthy)
    hub = s.app.processors
    clock = hub.clock = ManualClock()
    os.kill(stopped.pid, signal.SIGSTOP)
    try:
        # Run 1 goes to the first replica (both idle), which answers nothing.
        chunks = await s.stream("guarded")
        assert visible(chunks) == full(answer)  # every chunk once: skipped ones, then the healthy replica's
        assert metric_total(reader, "treadle.processor.timeouts") == 3
        assert metric_total(reader, "treadle.processor.ejections") == 1
        assert hub.ejected(a) and not hub.ejected(b)
        await healthy.expect('"type": "finish"')  # the run finished on the healthy replica

        # Run 2: straight to the healthy replica, no timeout waited for.
        chunks = await s.stream("guarded")
        assert visible(chunks) == full(answer)
        assert metric_total(reader, "treadle.processor.timeouts") == 3
        await healthy.expect('"type": "finish"')
        assert len(runs_served(healthy)) == 2
    finally:
        os.kill(stopped.pid, signal.SIGCONT)

    # It answers again; still ejected until its time is up, then routable, and run 3 goes to it.
    clock.now += EJECTION_TIME - 1
    assert hub.ejected(a)
    clock.now += 1
    assert not hub.ejected(a)
    chunks = await s.stream("guarded")
    assert visible(chunks) == full(answer)
    line = await stopped.expect('"type": "finish"')  # run 1's finish never went to it: run 3's
    assert runs_served(stopped) - runs_served(healthy) and '"run"' in line
    assert metric_total(reader, "treadle.processor.timeouts") == 3
    assert a.ejections == 1 and b.ejections == 0
