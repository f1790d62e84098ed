"""What the dataclass client (``treadle_client.typed``) costs per chunk against the plain one.

    .venv/bin/python bench/typed_client.py [--runs N] [--chunks N]

One server in this process streams a scripted answer of ``--chunks`` text deltas (an in-process
scripted model: no provider I/O); the plain ``AgentClient`` and ``treadle_client.typed.AgentClient``
read the same stream in turn, over real gRPC. Printed: the median microseconds per chunk of each,
their ratio (the floor is the plain client, 1.0), and the conversion alone on the chunks of one run:
upb's decode of the batched responses (what the plain client pays), the client's conversion of
each chunk to its dataclass (encode with upb, decode with betterproto2), betterproto2 decoding
the batched responses directly, and ``betterproto2_rust_codec`` when it is installed
(``pip install betterproto2-rust-codec``) and accepts betterproto2's messages.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from treadle.agents import Agent  # noqa: E402
from treadle.app import TreadleApp  # noqa: E402
from treadle.config import Settings  # noqa: E402
from treadle.core.messages import SystemMessage  # noqa: E402
from treadle.testing import ScriptedModel, ScriptedModels, text_response  # noqa: E402
from treadle.v1 import agent_service_pb2  # noqa: E402
from treadle_client import AgentClient  # noqa: E402
from treadle_client import typed  # noqa: E402


async def _per_chunk_us(read: Callable[[], Any], model: ScriptedModel, deltas: list[str], runs: int) -> float:
    """Median microseconds per chunk of ``read()`` (one whole stream), after two warm-up runs."""
    samples: list[float] = []
    for i in range(runs + 2):
        model.add(text_response(deltas))
        start = time.perf_counter()
        count = await read()
        elapsed = time.perf_counter() - start
        if i >= 2:
            samples.append(elapsed / count * 1e6)
    return statistics.median(samples)


def _codec_us(fn: Callable[[], Any], count: int, repeat: int = 5) -> float:
    """Best of ``repeat`` of ``fn()`` over one run's chunks, in microseconds per chunk."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best / count * 1e6


async def main(runs: int, n_chunks: int) -> None:
    deltas = [f"w{i} " for i in range(n_chunks)]
    model = ScriptedModel()
    app = TreadleApp(Settings(listen="127.0.0.1:0", example_agent=False))
    app.loop.models = ScriptedModels(model)
    app.registry.add_agent(Agent(id="bench", model="scripted/bench", instructions=[SystemMessage("bench")]))
    port = await app.start()
    target = f"127.0.0.1:{port}"
    try:
        async with AgentClient(target) as plain, typed.AgentClient(target) as dataclasses:
            async def read_plain() -> int:
                count = 0
                async for chunk in plain.stream("bench", "go"):
                    count += chunk.HasField("text_delta") and len(chunk.text_delta.text) > 0
                return count

            async def read_typed() -> int:
                count = 0
                async for chunk in dataclasses.stream("bench", "go"):
                    match chunk.chunk:
                        case typed.TextDeltaChunk(text=text):
                            count += len(text) > 0
                return count

            plain_us = await _per_chunk_us(read_plain, model, deltas, runs)
            typed_us = await _per_chunk_us(read_typed, model, deltas, runs)

            # One run's wire form, as the client receives it (the server batches chunks).
            model.add(text_response(deltas))
            call = plain._stub.Stream(agent_service_pb2.StreamRequest(agent_id="bench", prompt="go"))
            wire = [r.SerializeToString() async for r in call]
    finally:
        await app.stop(0)

    responses = [agent_service_pb2.StreamResponse.FromString(b) for b in wire]
    chunks = [c for r in responses for c in r.chunks]
    count = len(chunks)
    upb = _codec_us(lambda: [agent_service_pb2.StreamResponse.FromString(b) for b in wire], count)
    convert = _codec_us(lambda: [typed.to_dataclass(typed.Chunk, c) for c in chunks], count)
    direct = _codec_us(lambda: [typed.StreamResponse.parse(b) for b in wire], count)

    print(f"{n_chunks} text deltas ({count} chunks in {len(wire)} responses), median of {runs} runs")
    print(f"{'client':<12} {'µs/chunk':>9} {'x plain':>8}")
    print(f"{'plain':<12} {plain_us:>9.1f} {1.0:>8.2f}")
    print(f"{'dataclasses':<12} {typed_us:>9.1f} {typed_us / plain_us:>8.2f}")
    print(f"added by the dataclass path: {typed_us - plain_us:.1f} µs per chunk")
    print("conversion alone, µs per chunk:")
    print(f"  upb decode (plain client)               {upb:>7.2f}")
    print(f"  to_dataclass (upb encode + betterproto2) {convert:>7.2f}  ({convert / upb:.0f}x upb)")
    print(f"  betterproto2 decode of the responses     {direct:>7.2f}  ({direct / upb:.0f}x upb)")
    try:
        import betterproto2_rust_codec as rust  # type: ignore[import-not-found]
    except ImportError:
        print("  betterproto2_rust_codec: not installed")
        return
    try:
        rust.deserialize(typed.StreamResponse(), wire[0])
    except Exception as exc:  # the codec checks the message classes' metadata
        print(f"  betterproto2_rust_codec: refuses betterproto2's messages ({type(exc).__name__}: {exc})")
        return
    fast = _codec_us(lambda: [rust.deserialize(typed.StreamResponse(), b) for b in wire], count)
    print(f"  betterproto2_rust_codec decode           {fast:>7.2f}  ({fast / upb:.0f}x upb)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--chunks", type=int, default=1000)
    args = parser.parse_args()
    asyncio.run(main(args.runs, args.chunks))
