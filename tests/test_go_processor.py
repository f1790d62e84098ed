"""A remote processor process written in Go with the Go SDK (package ``treadle``).

``clients/go/internal/seedprocessors`` (built once per session with ``go build``) attaches two of
the seed's processors over ``ProcessorService.Attach``: ``word-counter`` (processOutputStream,
per-chunk, state in the invocation's ``ProcessorState``, a ``data-word-count`` custom chunk on
``finish``) and ``redact-tool-result`` (processToolResult, ``replace.messages``). The tests start
an in-process TreadleApp, spawn the Go binary against it, wait on the server's own view of the
attached streams (never a sleep) and check what a client and the model receive.

Needs the ``go`` command (1.26+); the Go modules download during the build.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import grpc
import pytest

from tests.harness import Harness, of_type
from tests.remote.procs import Child
from tests.support import OpenAIServer, Turn
from tests.support.go import GoBuild
from tests.test_seed_processors import echo_tool
from treadle.agents import Agent, ProcessorRef
from treadle.app import TreadleApp
from treadle.config import Settings
from treadle.loop import AgentLoop
from treadle.core.messages import SystemMessage, ToolInvocationPart
from treadle.v1 import agent_service_pb2, agent_service_pb2_grpc, chunk_pb2

@pytest.fixture(scope="session")
def go_binary(go_build: GoBuild) -> Path:
    return go_build("seedprocessors")


class GoEnv:
    def __init__(self, app: TreadleApp, port: int, binary: Path) -> None:
        self.app = app
        self.target = f"127.0.0.1:{port}"
        self.binary = binary
        self.children: list[Child] = []

    async def attach(self, *processor_ids: str) -> Child:
        """Starts the Go process and waits until the server holds its stream for each id."""
        proc = await asyncio.create_subprocess_exec(
            str(self.binary), self.target, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE)
        child = Child(proc)
        self.children.append(child)
        await child.expect("ready")
        for pid in processor_ids:
            assert await self.app.processors.wait_attached(pid, 30)
        return child

    async def close(self) -> None:
        for child in self.children:
            if child.proc.returncode is None:
                child.proc.terminate()
                await child.proc.wait()


@pytest.fixture
async def go_env(go_binary: Path) -> AsyncIterator[GoEnv]:
    app = TreadleApp(Settings(listen="127.0.0.1:0", example_agent=False), env={})
    env = GoEnv(app, await app.start(), go_binary)
    yield env
    await env.close()
    await app.stop(0)


async def stream(target: str, prompt: str, agent_id: str) -> list[chunk_pb2.Chunk]:
    async with grpc.aio.insecure_channel(target) as channel:
        stub = agent_service_pb2_grpc.AgentServiceStub(channel)
        call = stub.Stream(agent_service_pb2.StreamRequest(agent_id=agent_id, prompt=prompt))
        return [c async for r in call for c in r.chunks]


def word_counts(chunks: list[chunk_pb2.Chunk]) -> list[tuple[int, float]]:
    """(position, words) of every data-word-count chunk."""
    return [(i, c.data.data.struct_value.fields["words"].number_value)
            for i, c in enumerate(chunks)
            if c.WhichOneof("chunk") == "data" and c.data.name == "data-word-count"]


async def test_go_word_counter_counts_per_run_and_reports_before_finish(go_env: GoEnv) -> None:
    model = OpenAIServer([Turn.say(["Hello brave ", "new world, ", "how are you?"]),
                          Turn.say(["one ", "two three"])])
    try:
        go_env.app.add_agent(Agent(
            id="counted", name="Counted", model="openai/test-model", base_url=model.base_url,
            instructions=[SystemMessage("You are terse.")],
            output_processors=[ProcessorRef("word-counter")]))
        await go_env.attach("word-counter")

        first = await stream(go_env.target, "talk", "counted")
        kinds = [c.WhichOneof("chunk") for c in first]
        assert kinds[-1] == "finish"
        # Every chunk passed unchanged, and the count arrived on the model's finish, which
        # processors see in its step: right before step-finish (the run's finish comes last).
        assert "".join(c.text_delta.text for c in first if c.HasField("text_delta")) == \
            "Hello brave new world, how are you?"
        assert kinds[-2] == "step_finish"
        assert word_counts(first) == [(len(first) - 3, 7)]

        # The second run starts from a fresh state: 3, not 10.
        second = await stream(go_env.target, "again", "counted")
        assert word_counts(second) == [(len(second) - 3, 3)]
        assert second[-1].WhichOneof("chunk") == "finish"
    finally:
        model.close()


@pytest.fixture
async def harness(go_env: GoEnv) -> AsyncIterator[Callable[..., Harness]]:
    """A Harness whose loop resolves processor ids through the app (so to the Go process)."""
    made: list[Harness] = []

    def make(script: list[Turn]) -> Harness:
        h = Harness(OpenAIServer(script))
        h.registry = go_env.app.registry
        h.loop = AgentLoop(h.registry, h.router, h.tracer_provider.get_tracer("treadle"))
        made.append(h)
        return h

    yield make
    for h in made:
        await h.router.aclose()
        h.server.close()


async def test_go_redactor_redacts_the_stream_and_the_next_request(
    go_env: GoEnv, harness: Callable[..., Harness]
) -> None:
    customer = {"name": "Ann", "ssn": "123-45-6789", "email": "ann@example.com"}
    h = harness([Turn.call("lookup-customer", {"id": 7}), Turn.say("found Ann")])
    agent = h.agent(output_processors=[ProcessorRef("redact-tool-result")],
                    tools=[echo_tool("lookup-customer", customer)])
    await go_env.attach("redact-tool-result")

    chunks = await h.stream(agent, "who is 7?")
    redacted = {"name": "Ann", "ssn": "[REDACTED]", "email": "[REDACTED]"}
    assert [c.payload.result for c in of_type(chunks, "tool-result")] == [redacted]
    tool_message = [m for m in h.bodies()[1]["messages"] if m["role"] == "tool"][0]
    assert json.loads(tool_message["content"]) == redacted
    assert "123-45-6789" not in json.dumps(h.bodies()[1])

    h.server.add(Turn.call("lookup-customer", {"id": 7}), Turn.say("found Ann"))
    result = await h.generate(agent, "who is 7?")
    parts = [p for m in result.messages for p in m.content.parts if isinstance(p, ToolInvocationPart)]
    assert [(p.state, p.result) for p in parts] == [("result", redacted)]
