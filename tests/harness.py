"""An in-process loop wired to a wire-level scripted provider, with spans kept in memory."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.support import LOOPBACK_TRUST, AnthropicServer, OpenAIServer, ScriptedServer, ScriptStep
from treadle.agents import Agent, CallOptions, RunRequest
from treadle.core.chunks import Chunk
from treadle.loop import AgentLoop, GenerateResult
from treadle.core.messages import Message, SystemMessage
from treadle.providers.router import ModelRouter
from treadle.registry import Registry


class Harness:
    def __init__(self, server: ScriptedServer) -> None:
        self.server = server
        self.registry = Registry()
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.router = ModelRouter(env={"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-test"}, trust=LOOPBACK_TRUST)
        self.loop = AgentLoop(self.registry, self.router, self.tracer_provider.get_tracer("treadle"))

    @property
    def provider(self) -> str:
        return "anthropic" if isinstance(self.server, AnthropicServer) else "openai"

    def agent(self, **kw: Any) -> Agent:
        kw.setdefault("id", "test-agent")
        kw.setdefault("name", "Test Agent")
        kw.setdefault("model", f"{self.provider}/test-model")
        kw.setdefault("base_url", self.server.base_url)
        instructions = kw.pop("instructions", "You are a test agent.")
        if isinstance(instructions, str):
            instructions = [SystemMessage(instructions)]
        return Agent(instructions=instructions, **kw)

    def request(self, prompt: str | list[Message], **options: Any) -> RunRequest:
        messages = [Message.user(prompt)] if isinstance(prompt, str) else prompt
        return RunRequest(messages=messages, options=CallOptions(**options))

    async def stream(self, agent: Agent, prompt: str | list[Message], **options: Any) -> list[Chunk]:
        return [c async for c in self.loop.stream(agent, self.request(prompt, **options))]

    async def generate(
        self, agent: Agent, prompt: str | list[Message], **options: Any
    ) -> GenerateResult:
        return await self.loop.generate(agent, self.request(prompt, **options))

    async def settled(self, check: Callable[[], bool], timeout: float = 10) -> None:
        """Asserts ``check()``: in-process it holds as soon as the run returned; a remote
        harness re-reads what its processors recorded until it holds (fire-and-forget hooks)."""
        assert check()

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies the provider received, in order."""
        return [r.body for r in self.server.recorded]


@pytest.fixture
async def harness_factory() -> AsyncIterator[Callable[..., Harness]]:
    made: list[Harness] = []

    def make(script: list[ScriptStep], provider: str = "openai") -> Harness:
        kind = AnthropicServer if provider == "anthropic" else OpenAIServer
        harness = Harness(kind(script))
        made.append(harness)
        return harness

    yield make
    for h in made:
        await h.router.aclose()
        h.server.close()


def types(chunks: list[Chunk]) -> list[str]:
    return [c.type for c in chunks]


def text_of(chunks: list[Chunk]) -> str:
    return "".join(c.payload.text for c in chunks if c.type == "text-delta")


def of_type(chunks: list[Chunk], type_: str) -> list[Chunk]:
    return [c for c in chunks if c.type == type_]
