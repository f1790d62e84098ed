"""What a declarative tool payload transform costs per tool-argument delta, as a ratio to the same
run without one.

    .venv/bin/python bench/tool_transform.py [--runs N] [--deltas N]

The agent loop runs in this process on a scripted model (no provider I/O blurs the numbers): each
run is one tool call whose arguments stream as ``--deltas`` argument deltas, the tool's result,
then a short answer. Every chunk then goes through what ``Stream`` does before encoding it for a
client without raw payload access (``display_of``). Three agents:

- ``none``: no rules (the chunks pass as they are);
- ``mask``: a mask rule on the tool's output (a tool with a transform and no delta rule: every
  delta is suppressed);
- ``delta``: the same, plus an ``input-delta`` rule that replaces each delta (every delta is
  projected and sent).

Each line prints the median microseconds per delta of the whole run, the microseconds the
transform adds per delta over ``none``, and the ratio to ``none`` measured in this run; then the
same for the projection step alone (marking each delta chunk and picking what a client without raw
payload access is sent), which the whole-run numbers carry inside the loop's own per-chunk work.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from opentelemetry import trace  # noqa: E402

from treadle.agents import Agent, RunRequest  # noqa: E402
from treadle.core.chunks import (  # noqa: E402
    Chunk, ToolCallDelta, ToolCallInputStreamingEnd, ToolCallInputStreamingStart, ToolCallPayload, Usage,
)
from treadle.core.messages import Message, SystemMessage  # noqa: E402
from treadle.core.tool_payload import ToolPayloadRule  # noqa: E402
from treadle.loop import AgentLoop  # noqa: E402
from treadle.core.tool_payload import ToolPayloadPolicy  # noqa: E402
from treadle.loop.payload_view import PayloadView, display_of  # noqa: E402
from treadle.providers.base import ModelFinish  # noqa: E402
from treadle.registry import Registry  # noqa: E402
from treadle.testing import ScriptedModel, ScriptedModels, text_response  # noqa: E402
from treadle.tools import tool  # noqa: E402

ARGS = {"id": "c-42", "note": "x" * 2000}


@tool("lookup_customer", "A customer's record")
async def lookup_customer(args: Any, ctx: Any) -> Any:
    return {"id": args["id"], "ssn": "078-05-1120"}


def tool_call(deltas: int) -> list[Chunk]:
    text = json.dumps(ARGS)
    size = max(1, len(text) // deltas)
    pieces = [text[i:i + size] for i in range(0, len(text), size)]
    return [
        Chunk.of(ToolCallInputStreamingStart("call_1", "lookup_customer")),
        *(Chunk.of(ToolCallDelta("call_1", p, "lookup_customer")) for p in pieces),
        Chunk.of(ToolCallInputStreamingEnd("call_1")),
        Chunk.of(ToolCallPayload("call_1", "lookup_customer", ARGS)),
        Chunk("finish", ModelFinish("tool-calls", Usage(10, 1, 11))),
    ]


AGENTS = {
    "none": [],
    "mask": [ToolPayloadRule("output", tools=("lookup_customer",), mask=("/ssn",))],
    "delta": [ToolPayloadRule("output", tools=("lookup_customer",), mask=("/ssn",)),
              ToolPayloadRule("input-delta", tools=("lookup_customer",), replace=".")],
}


async def _once(loop: AgentLoop, model: ScriptedModel, agent: Agent, deltas: int) -> tuple[float, int]:
    """Seconds for one run, and the delta chunks it sent to the client."""
    model.add(tool_call(deltas), text_response("done"))
    start = time.perf_counter()
    shown = [s async for c in loop.stream(agent, RunRequest([Message.user("go")]))
             if (s := display_of(c)) is not None]
    elapsed = time.perf_counter() - start
    assert shown[-1].type == "finish", shown[-1]
    return elapsed, sum(1 for c in shown if c.type == "tool-call-delta")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--deltas", type=int, default=1000)
    opts = parser.parse_args()
    model = ScriptedModel()
    loop = AgentLoop(Registry(), ScriptedModels(model), trace.get_tracer("bench"))
    n = len(tool_call(opts.deltas)) - 4
    agents = {name: Agent(id=f"bench-{name}", model="scripted/bench", instructions=[SystemMessage("x")],
                          tools=[lookup_customer], tool_payload_rules=list(rules)) for name, rules in AGENTS.items()}
    samples: dict[str, list[float]] = {name: [] for name in agents}
    sent: dict[str, int] = {}
    for i in range(opts.runs + 2):  # interleaved, so that the machine's load weighs on each alike
        for name, agent in agents.items():
            elapsed, sent[name] = await _once(loop, model, agent, opts.deltas)
            if i >= 2:  # two warm-up rounds
                samples[name].append(elapsed)
    results = {name: (statistics.median(samples[name]), sent[name]) for name in agents}
    base = results["none"][0]
    print(f"whole runs: {n} argument deltas per run, median of {opts.runs} runs")
    for name, (seconds, sent) in results.items():
        per = seconds / n * 1e6
        added = (seconds - base) / n * 1e6
        print(f"  {name:5}  {per:6.2f} us/delta  {added:+6.2f} us/delta over none  ratio {seconds / base:.3f}  "
              f"({sent} deltas sent)")
    print(f"the projection step alone (what the run adds per delta chunk), median of {opts.runs} rounds")
    alone = {name: _projection(rules, n, opts.runs) for name, rules in AGENTS.items()}
    for name, seconds in alone.items():
        print(f"  {name:5}  {seconds / n * 1e6:6.3f} us/delta  ratio {seconds / alone['none']:.2f}")


def _projection(rules: list[ToolPayloadRule], n: int, rounds: int) -> float:
    """Median seconds to mark ``n`` delta chunks as the run's output does, then pick what a
    client without raw access is sent; ``none`` is the same loop with no rules (no marking)."""
    view = PayloadView(ToolPayloadPolicy(list(rules)))
    samples = []
    for _ in range(rounds):
        chunks = [Chunk.of(ToolCallDelta("call_1", "x", "lookup_customer")) for _ in range(n)]
        start = time.perf_counter()
        for chunk in chunks:
            if view:
                view.mark_delta(chunk)
            display_of(chunk)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


if __name__ == "__main__":
    asyncio.run(main())
