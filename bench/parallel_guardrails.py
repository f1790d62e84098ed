"""What three input guardrails cost, in sequence, as a parallel group, and beside the model call.

    .venv/bin/python bench/parallel_guardrails.py [--runs N] [--guard-ms MS] [--model-ms MS]

Three in-process validators each take ``--guard-ms``; a scripted model takes ``--model-ms``
before its first token. For each arrangement it prints the median time to first token and the
ratio to the floor measured in the same run: the model alone (no guardrails).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from opentelemetry import trace  # noqa: E402

from treadle.agents import Agent, RunRequest  # noqa: E402
from treadle.core.chunks import Chunk  # noqa: E402
from treadle.core.messages import Message, SystemMessage  # noqa: E402
from treadle.processors.parallel import ParallelGroup  # noqa: E402
from treadle.providers.base import ModelRequest  # noqa: E402
from treadle.registry import Registry  # noqa: E402
from treadle.testing import ScriptedModel, ScriptedModels, text_response  # noqa: E402
from treadle.loop import AgentLoop  # noqa: E402


class Guard:
    def __init__(self, pid: str, seconds: float) -> None:
        self.id = pid
        self.seconds = seconds

    async def process_input(self, args: Any) -> None:
        await asyncio.sleep(self.seconds)


class SlowModel(ScriptedModel):
    """Waits ``delay`` before streaming its scripted answer (a provider's time to first token)."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        await asyncio.sleep(self.delay)
        async for chunk in super().stream(request):
            yield chunk


async def ttft(loop: AgentLoop, agent: Agent, model: ScriptedModel, runs: int) -> float:
    samples = []
    for i in range(runs + 1):
        model.add(text_response(["ok"]))
        start = time.perf_counter()
        first = None
        async for c in loop.stream(agent, RunRequest([Message.user("go")])):
            if first is None and c.type == "text-delta":
                first = time.perf_counter() - start
        if i:  # one warm-up run
            samples.append(first or 0.0)
    return statistics.median(samples)


async def main(runs: int, guard_s: float, model_s: float) -> None:
    model = SlowModel(model_s)
    loop = AgentLoop(Registry(), ScriptedModels(model), trace.NoOpTracer())
    guards = [Guard(f"g{i}", guard_s) for i in range(3)]

    def agent(inputs: list[Any]) -> Agent:
        return Agent(id="bench", model="scripted/bench", instructions=[SystemMessage("bench")],
                     input_processors=inputs)

    floor = await ttft(loop, agent([]), model, runs)
    print(f"floor: the model alone, first token after {floor * 1e3:.0f} ms "
          f"(guards {guard_s * 1e3:.0f} ms each, model {model_s * 1e3:.0f} ms)")
    for name, inputs in (
        ("sequential", list(guards)),
        ("parallel", [ParallelGroup(list(guards))]),
        ("with_model", [ParallelGroup(list(guards), with_model=True)]),
    ):
        t = await ttft(loop, agent(inputs), model, runs)
        print(f"{name:<11} first token after {t * 1e3:>6.0f} ms  x floor {t / floor:>5.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--guard-ms", type=float, default=200)
    parser.add_argument("--model-ms", type=float, default=150)
    args = parser.parse_args()
    asyncio.run(main(args.runs, args.guard_ms / 1000, args.model_ms / 1000))
