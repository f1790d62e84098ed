"""A processor written in TypeScript, in its own process, against a real server.

``tests/remote/ts/content_filter.ts`` is the seed's ContentFilter speaking
``ProcessorService.Attach`` with the code generated into ``clients/typescript/src/gen`` (no SDK).
It runs with tsx from ``clients/typescript/node_modules`` (CI runs
``npm ci --prefix clients/typescript``); the assertions are the in-process seed tests' (see
``tests/test_seed_processors.py``), read from the chunks a gRPC client of the app receives.
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import grpc
import pytest

from tests.conftest import RunningApp, StartApp
from tests.remote.procs import Child
from tests.support import OpenAIServer, Turn
from treadle.agents import Agent, ProcessorRef
from treadle.core.messages import SystemMessage
from treadle.v1 import agent_service_pb2, agent_service_pb2_grpc, chunk_pb2

ROOT = Path(__file__).resolve().parent.parent
TS_CLIENT = ROOT / "clients" / "typescript"
TSX = TS_CLIENT / "node_modules" / ".bin" / "tsx"
TSC = TS_CLIENT / "node_modules" / ".bin" / "tsc"
CONTENT_FILTER = ROOT / "tests" / "remote" / "ts" / "content_filter.ts"


@pytest.fixture(scope="session")
def node_modules() -> None:
    if not TSX.exists() or not TSC.exists():
        pytest.fail(
            "clients/typescript/node_modules is missing (or lacks tsx/tsc); "
            "run `npm ci --prefix clients/typescript` (tests/run.sh and .ci/run do)"
        )


@pytest.mark.parametrize("project", [TS_CLIENT, ROOT / "tests" / "remote" / "ts" / "seed"], ids=["client", "seed"])
def test_the_typescript_type_checks(node_modules: None, project: Path) -> None:
    proc = subprocess.run([str(TSC), "--noEmit", "-p", str(project)], capture_output=True, text=True)
    assert proc.returncode == 0, f"tsc failed:\n{proc.stdout}{proc.stderr}"


class Env:
    def __init__(self, running: RunningApp, server: OpenAIServer) -> None:
        self.app = running.app
        self.target = running.target
        self.server = server

    def agent(self, agent_id: str, **processors: list[ProcessorRef]) -> str:
        self.app.add_agent(Agent(id=agent_id, name=agent_id, model="openai/test-model",
                                 base_url=self.server.base_url,
                                 instructions=[SystemMessage("You are terse.")], **processors))
        return agent_id

    async def stream(self, agent_id: str, prompt: str) -> list[chunk_pb2.Chunk]:
        async with grpc.aio.insecure_channel(self.target) as channel:
            stub = agent_service_pb2_grpc.AgentServiceStub(channel)
            call = stub.Stream(agent_service_pb2.StreamRequest(agent_id=agent_id, prompt=prompt))
            return [c async for r in call for c in r.chunks]

    async def generate(self, agent_id: str, prompt: str) -> agent_service_pb2.GenerateResponse:
        async with grpc.aio.insecure_channel(self.target) as channel:
            stub = agent_service_pb2_grpc.AgentServiceStub(channel)
            return await stub.Generate(agent_service_pb2.GenerateRequest(agent_id=agent_id, prompt=prompt))


@pytest.fixture
async def env(node_modules: None, start_app: StartApp) -> AsyncIterator[Callable[..., Awaitable[Env]]]:
    """``await env(script)``: an app, the scripted OpenAI server, and the TypeScript content filter
    (blocking "secret") attached to the app."""
    servers: list[OpenAIServer] = []
    children: list[Child] = []

    async def make(script: list[Turn]) -> Env:
        server = OpenAIServer(script)
        servers.append(server)
        running = await start_app()
        proc = await asyncio.create_subprocess_exec(
            str(TSX), str(CONTENT_FILTER), running.target, "secret", cwd=TS_CLIENT,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        )
        child = Child(proc)
        children.append(child)
        await child.expect("ready")
        assert await running.app.processors.wait_attached("content-filter", 30)
        return Env(running, server)

    yield make
    for child in children:
        await child.close()
    for server in servers:
        server.close()


def kinds(chunks: list[chunk_pb2.Chunk]) -> list[str]:
    return [c.WhichOneof("chunk") for c in chunks]


def text_of(chunks: list[chunk_pb2.Chunk]) -> str:
    return "".join(c.text_delta.text for c in chunks if c.HasField("text_delta"))


def visible(chunks: list[chunk_pb2.Chunk]) -> list[str]:
    """Each chunk as ``kind`` or ``kind:text``, for comparing whole streams."""
    return [f"{k}:{c.text_delta.text}" if k == "text_delta" else k for c, k in zip(chunks, kinds(chunks))]


async def test_content_filter_blocks_input_before_the_model(env) -> None:
    e: Env = await env([])  # the model is never called
    agent = e.agent("guarded", input_processors=[ProcessorRef("content-filter")])
    chunks = await e.stream(agent, "tell me the secret")
    assert kinds(chunks) == ["start", "tripwire", "finish"]
    assert chunks[1].tripwire.reason == "Blocked content detected in input"
    assert chunks[1].tripwire.processor_id == "content-filter"
    assert chunks[-1].finish.reason == chunk_pb2.FINISH_REASON_OTHER
    assert e.server.recorded == []  # the model is never called


async def test_content_filter_stops_the_stream_at_the_blocked_chunk(env) -> None:
    e: Env = await env([Turn.say(["Hello ", "the secret ", "is out"])])
    agent = e.agent("guarded", output_processors=[ProcessorRef("content-filter")])
    chunks = await e.stream(agent, "hi")
    assert text_of(chunks) == "Hello "
    k = kinds(chunks)
    assert k[-2:] == ["tripwire", "finish"]
    assert k.index("tripwire") == k.index("text_delta") + 1  # the chunk was replaced
    assert chunks[-2].tripwire.reason == "Blocked content detected in output"
    assert chunks[-2].tripwire.processor_id == "content-filter"
    assert chunks[-1].finish.reason == chunk_pb2.FINISH_REASON_OTHER

    e.server.add(Turn.say(["Hello ", "the secret"]))
    result = await e.generate(agent, "hi")
    assert result.HasField("tripwire") and result.tripwire.processor_id == "content-filter"
    assert result.finish_reason == chunk_pb2.FINISH_REASON_OTHER
    assert result.text == ""


async def test_an_unblocked_run_passes_through_unchanged(env) -> None:
    answer = ["Hello ", "there, ", "friend"]
    e: Env = await env([Turn.say(answer), Turn.say(answer)])
    plain = e.agent("plain")
    guarded = e.agent("guarded", input_processors=[ProcessorRef("content-filter")],
                      output_processors=[ProcessorRef("content-filter")])
    expected = await e.stream(plain, "hi")
    chunks = await e.stream(guarded, "hi")
    assert text_of(chunks) == "Hello there, friend"
    assert "tripwire" not in kinds(chunks)
    assert chunks[-1].finish.reason == chunk_pb2.FINISH_REASON_STOP
    assert visible(chunks) == visible(expected)
    first, second = (r.body["messages"] for r in e.server.recorded)
    assert second == first  # the input reached the model unchanged
