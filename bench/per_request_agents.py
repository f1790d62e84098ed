"""What resolving a per-request agent costs per call.

    .venv/bin/python bench/per_request_agents.py [--calls N]

In this process, no gRPC and no provider I/O: an ``AgentLoop`` over an in-process scripted model
answers each call with one text delta. Three agents, each called ``--calls`` times in turn:

- ``plain``: model and instructions as plain fields (nothing to resolve; the floor, 1.0);
- ``two variants``: the model as two variants (`tier equals pro`, then a rule-less fallback);
- ``heavy``: every variant field (model, instructions, tools, the three processor lanes,
  default options) with 4 variants each, each ruled by an AND of three conditions and a nested OR.

Printed: the median microseconds per whole call (``generate``) of each and its ratio to the
floor, and the resolution step alone (``resolve_for_call``) in a tight loop.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from opentelemetry.trace import NoOpTracer  # noqa: E402

from treadle.agents import Agent, CallOptions, RunRequest  # noqa: E402
from treadle.api.convert import agent_from_dict  # noqa: E402
from treadle.core.messages import Message, SystemMessage  # noqa: E402
from treadle.loop import AgentLoop  # noqa: E402
from treadle.loop.resolve import resolve_for_call  # noqa: E402
from treadle.registry import Registry  # noqa: E402
from treadle.testing import ScriptedModel, ScriptedModels, text_response  # noqa: E402

CONTEXT = {"tier": "pro", "role": "member", "seats": 12, "region": "eu"}


def _rules(i: int) -> dict[str, Any]:
    return {"operator": "AND", "conditions": [
        {"field": "tier", "operator": "in", "value": ["pro", "team"]},
        {"field": "seats", "operator": "greater_than", "value": i},
        {"operator": "OR", "conditions": [{"field": "region", "operator": "equals", "value": "eu"},
                                          {"field": "role", "operator": "equals", "value": "admin"}]},
    ]}


def agents() -> dict[str, Agent]:
    plain = Agent(id="plain", model="openai/gpt-4o", instructions=[SystemMessage("Be brief.")])
    two = agent_from_dict({"id": "two", "instructions": "Be brief.", "model": [
        {"value": "openai/gpt-4o", "rules": {"operator": "AND", "conditions": [
            {"field": "tier", "operator": "equals", "value": "pro"}]}},
        {"value": "openai/gpt-4o-mini"}]}, source="api")
    heavy = agent_from_dict({
        "id": "heavy", "model": "openai/gpt-4o-mini", "instructions": "Be brief.",
        "modelVariants": [{"value": f"openai/m{i}", "rules": _rules(20 + i)} for i in range(3)]
        + [{"value": "openai/gpt-4o"}],
        "instructionsVariants": [{"value": f"Variant {i}.", "rules": _rules(20 + i)} for i in range(3)]
        + [{"value": "Be brief."}],
        "toolsVariants": [{"value": [], "rules": _rules(i)} for i in range(4)],
        "inputProcessorsVariants": [{"value": [], "rules": _rules(i)} for i in range(4)],
        "outputProcessorsVariants": [{"value": [], "rules": _rules(i)} for i in range(4)],
        "errorProcessorsVariants": [{"value": [], "rules": _rules(i)} for i in range(4)],
        "defaultOptionsVariants": [{"value": {"maxSteps": 2 + i}, "rules": _rules(i)} for i in range(4)],
    }, source="api")
    return {"plain": plain, "two variants": two, "heavy": heavy}


def request() -> RunRequest:
    return RunRequest([Message.user("hi")], CallOptions(request_context=dict(CONTEXT)))


async def main(calls: int) -> None:
    model = ScriptedModel()
    registry = Registry()
    loop = AgentLoop(registry, ScriptedModels(model), NoOpTracer())
    found = agents()
    per_call: dict[str, list[float]] = {name: [] for name in found}
    for _ in range(20):  # warm-up
        for agent in found.values():
            model.add(text_response("ok"))
            await loop.generate(agent, request())
    for _ in range(calls):  # interleaved, so a busy machine slows each alike
        for name, agent in found.items():
            model.add(text_response("ok"))
            started = time.perf_counter()
            result = await loop.generate(agent, request())
            per_call[name].append(time.perf_counter() - started)
            assert result.text == "ok", result.error
    floor = statistics.median(per_call["plain"])
    print(f"whole call (generate, in process, one delta), median of {calls}:")
    for name, seconds in per_call.items():
        median = statistics.median(seconds)
        print(f"  {name:<13} {median * 1e6:8.1f} us  {median / floor:5.2f}x")
    print("resolution alone (resolve_for_call):")
    for name, agent in found.items():
        reps = max(calls, 2000)
        call = request()
        started = time.perf_counter()
        for _ in range(reps):
            await resolve_for_call(registry, agent, call)
        print(f"  {name:<13} {(time.perf_counter() - started) / reps * 1e6:8.1f} us")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=500)
    asyncio.run(main(parser.parse_args().calls))
