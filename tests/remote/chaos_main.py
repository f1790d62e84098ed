"""A processor process for the chaos tests (tests/test_remote_processes.py), attached with the SDK.

    python -m tests.remote.chaos_main TARGET [--id ID] [--delivery D] [--block-at N] [--sleep S]
                                             [--observe] [--with-input] [--data-parts]

It serves one processor, ``ID`` (default ``chaos``), whose ``process_output_stream``:

- counts the words of the run's text deltas in ``args.state["words"]`` and, on the ``finish``
  chunk, emits ``data-word-count`` ``{"words": ..., "pid": ...}`` with ``writer.custom`` (so the
  state a run ends with is visible to the client, whichever replica held it);
- prints one line per chunk it handles, before handling it:
  ``chunk {"n": ..., "delta": ..., "type": ..., "text": ..., "run": ..., "inv": ..., "pid": ...}``
  (``n`` counts every chunk this process handled, ``delta`` only text deltas; ``inv`` names the
  invocation, the SDK's span for it, which the chunks of one window share);
- with ``--block-at N``: on the Nth text delta this process handles, prints ``blocking {...}`` and
  never answers (the test kills it there);
- with ``--sleep S``: sleeps S seconds per chunk; with ``--observe`` the hook is declared OBSERVE.

``--delivery`` is how ``process_output_stream`` invocations come: ``per_chunk`` (lock-step, the
default), ``pipelined`` (per chunk, up to 4 in flight) or ``windowed`` (up to 4 chunks per
invocation, 2 in flight). ``--with-input`` adds a ``process_input`` hook (prints ``input {...}``) that changes nothing.
``--data-parts`` declares ``process_data_parts`` (without it, ``data-*`` chunks must never arrive).

Spans: ``{hook} {ID}`` for every invocation, exported over OTLP/HTTP when the standard
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is set (and nowhere otherwise).

Prints ``ready`` after the server's welcome. On stdin, ``flush`` exports the spans ended so far
and prints ``flushed``. Exits (detaching, and flushing spans) when stdin closes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from treadle_client import attach


def report(kind: str, **fields: Any) -> None:
    print(f"{kind} {json.dumps(fields)}", flush=True)


class Chaos:
    """Counts words in ``state``, says what it handles, and fails on demand."""

    def __init__(self, pid: str, *, delivery: str, block_at: int, sleep: float, observe: bool,
                 with_input: bool, data_parts: bool = False) -> None:
        self.id = pid
        self.process_data_parts = data_parts
        # Every mode is spelled out: the SDK's default is windowed.
        if delivery == "per_chunk":
            self.stream_delivery, self.max_in_flight = "per_chunk", 1
        elif delivery == "pipelined":
            self.stream_delivery, self.max_in_flight = "per_chunk", 4
        elif delivery == "windowed":
            self.stream_delivery, self.max_window, self.max_in_flight = "windowed", 4, 2
        self.block_at = block_at
        self.sleep = sleep
        if observe:
            self.observe = {"process_output_stream"}
        if with_input:
            self.process_input = self._process_input
        self.handled = 0
        self.deltas = 0

    def _process_input(self, args: Any) -> None:
        report("input", run=args.run.run_id, pid=os.getpid())
        return None

    async def process_output_stream(self, args: Any) -> Any:
        part = args.part
        self.handled += 1
        text = part.payload.text if part.type == "text-delta" else None
        if text is not None:
            self.deltas += 1
            args.state["words"] = args.state.get("words", 0) + len(text.split())
        # Chunks of one invocation (a window) share the SDK's span for it.
        inv = f"{trace.get_current_span(args.tracing_context).get_span_context().span_id:016x}"
        report("chunk", n=self.handled, delta=self.deltas if text is not None else None, type=part.type,
               text=text, run=args.run.run_id, inv=inv, pid=os.getpid())
        if text is not None and self.deltas == self.block_at:
            report("blocking", delta=self.deltas, inv=inv, pid=os.getpid())
            await asyncio.Event().wait()  # never answers: the test kills this process here
        if self.sleep:
            await asyncio.sleep(self.sleep)
        if part.type == "finish":
            await args.writer.custom({"type": "data-word-count", "transient": False,
                                      "data": {"words": args.state.get("words", 0), "pid": os.getpid()}})
        return part


def tracer_provider() -> TracerProvider:
    provider = TracerProvider()
    if os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))  # reads the variable
    return provider


async def serve(opts: argparse.Namespace) -> None:
    provider = tracer_provider()
    processor = Chaos(opts.id, delivery=opts.delivery, block_at=opts.block_at, sleep=opts.sleep,
                      observe=opts.observe, with_input=opts.with_input, data_parts=opts.data_parts)
    attachment = await attach([processor], opts.target, tracer_provider=provider, backoff=(0.05, 0.5))
    await attachment.ready(timeout=30)
    print("ready", flush=True)
    loop = asyncio.get_running_loop()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        if line.strip() == "flush":
            await loop.run_in_executor(None, provider.force_flush)
            print("flushed", flush=True)
    await attachment.close()
    provider.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("target")
    parser.add_argument("--id", default="chaos")
    parser.add_argument("--delivery", choices=["per_chunk", "pipelined", "windowed"], default="per_chunk")
    parser.add_argument("--block-at", type=int, default=0, help="never answer the Nth text delta")
    parser.add_argument("--sleep", type=float, default=0.0, help="seconds to sleep per chunk")
    parser.add_argument("--observe", action="store_true", help="declare the stream hook OBSERVE")
    parser.add_argument("--with-input", action="store_true", help="also serve process_input")
    parser.add_argument("--data-parts", action="store_true", help="declare process_data_parts")
    asyncio.run(serve(parser.parse_args()))


if __name__ == "__main__":
    main()
