"""The framework's own benchmark workload, reproduced in Python.

The TypeScript framework's benchmark (``shared/bench/mastra``: ``workload.mjs``) runs
``Agent.stream()`` against a zero-delay mock model. This module is the same workload on Treadle:

- the mock model streams ``text-start``, N ``text-delta`` chunks (``WORDS[i % 16] + " "``),
  ``text-end`` and ``finish`` (stop, usage 10 / N / 10 + N), with no delay at all;
- when the call offers tools and the last prompt message is not a tool result, it answers with
  one ``echo`` tool call (``{"value": "ping"}``, finish ``tool-calls``); after the tool result
  it streams a plain reply of ``after_tool_chunks`` deltas;
- the agent has the instructions ``You are a benchmark agent.``, no memory;
- the configurations: ``a`` (no processors), ``b0`` (one pass-through input processor), ``b1`` /
  ``b5`` (that input processor and 1 / 5 pass-through output processors), ``d`` (the echo tool);
- one run is the whole stream of ``PROMPT`` consumed, checked to carry exactly N text deltas.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from treadle.agents import Agent, ProcessorRef, RunRequest
from treadle.core.chunks import Chunk
from treadle.core.messages import Message, SystemMessage
from treadle.core.tool import Tool
from treadle.providers.base import ModelRequest
from treadle.registry import Registry
from treadle.testing import text_response
from treadle.testing.scripted import tool_call_response

WORDS = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
    "india", "juliet", "kilo", "lima", "mike", "november", "oscar", "papa",
]
PROMPT = "Benchmark prompt: please answer."
INSTRUCTIONS = "You are a benchmark agent."
CONFIGS = ("a", "b0", "b1", "b5", "d")


def deltas(n: int) -> list[str]:
    return [WORDS[i % len(WORDS)] + " " for i in range(n)]


class WorkloadModel:
    """The zero-delay mock model; stateless, so any number of runs may share it."""

    provider = "bench"
    model_id = "mock-model-id"

    def __init__(self, text_chunks: int = 200, after_tool_chunks: int = 50) -> None:
        self.plain = text_response(deltas(text_chunks))
        self.after_tool = text_response(deltas(after_tool_chunks))
        self.call = tool_call_response("echo", {"value": "ping"}, call_id="call-1")
        self.calls = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        self.calls += 1
        if request.tools:
            last = request.prompt[-1] if request.prompt else None
            chunks = self.after_tool if last is not None and last.role == "tool" else self.call
        else:
            chunks = self.plain
        for chunk in chunks:
            yield Chunk(chunk.type, chunk.payload)


class WorkloadModels:
    """A model router whose every model is one ``WorkloadModel``."""

    def __init__(self, model: WorkloadModel) -> None:
        self.model = model

    def validate(self, model_string: str) -> None:
        return None

    def check_access(self, config: Any) -> None:
        return None

    def resolve(self, config: Any) -> WorkloadModel:
        return self.model

    async def aclose(self) -> None:
        return None


class PassThroughIn:
    id = "passthrough-in"

    async def process_input(self, args: Any) -> Any:
        return args.messages


def pass_through_out(i: int) -> Any:
    class PassThroughOut:
        id = f"passthrough-out-{i}"

        async def process_output_stream(self, args: Any) -> Any:
            return args.part

    return PassThroughOut()


async def _echo(args: Any, ctx: Any) -> Any:
    return {"echoed": args["value"]}


ECHO = Tool("echo", _echo, "Returns its input immediately.",
            {"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]})


def register(registry: Registry) -> None:
    """The processors and the tool every configuration may name."""
    registry.add_processor(PassThroughIn())
    for i in range(5):
        registry.add_processor(pass_through_out(i))
    registry.add_tool(ECHO)


def agent(config: str) -> Agent:
    base: dict[str, Any] = {"id": f"bench-{config}", "model": "bench/mock-model-id",
                            "instructions": [SystemMessage(INSTRUCTIONS)]}
    if config in ("b0", "b1", "b5"):
        base["input_processors"] = [ProcessorRef("passthrough-in")]
    if config in ("b1", "b5"):
        base["output_processors"] = [ProcessorRef(f"passthrough-out-{i}") for i in range(int(config[1:]))]
    if config == "d":
        base["tools"] = ["echo"]
    return Agent(**base)


def request() -> RunRequest:
    return RunRequest([Message.user(PROMPT)])


async def run_once(loop: Any, config_agent: Agent, expect: int) -> int:
    """One run consumed to the end; returns the number of chunks, checks the text deltas."""
    count = text = 0
    async for chunk in loop.stream(config_agent, request()):
        count += 1
        if chunk.type == "text-delta":
            text += 1
        elif chunk.type == "error":
            raise RuntimeError(chunk.payload.message)
    if text != expect:
        raise RuntimeError(f"expected {expect} text deltas, got {text}")
    return count
