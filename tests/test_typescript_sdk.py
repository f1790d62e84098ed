"""The TypeScript SDK (``clients/typescript``) against a real server: the README's examples, run
as separate Node processes, as the agent client, its thread calls, a processor, a tool, tracing
and TLS.

Each ``ts`` block of ``clients/typescript/README.md`` is one file under
``clients/typescript/examples``; the tests run those files with tsx and check what a user would
see: the streamed text and the tripwire the agent client prints, a subscribed thread's woken run,
the tool's output reaching the model, one trace across the server and the TypeScript processor,
the processes reattaching after the server restarts. Scripts under ``tests/remote/ts`` cover agent CRUD and a refused handshake.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import StartApp
from tests.security_env import TOKENS, secured  # noqa: F401
from tests.support import OpenAIServer, Turn
from tests.support.certs import TestCA
from tests.support.otlp import OtlpReceiver, otlp  # noqa: F401
from treadle.agents import Agent, ProcessorRef, RunRequest
from treadle.core.messages import Message, SystemMessage

ROOT = Path(__file__).resolve().parent.parent
TS_CLIENT = ROOT / "clients" / "typescript"
EXAMPLES = TS_CLIENT / "examples"
TSX = TS_CLIENT / "node_modules" / ".bin" / "tsx"
NODE_TSX = ("node", "--import", "tsx")
"""Node with tsx's loader (run from ``TS_CLIENT``): one process, where the ``tsx`` launcher makes two."""
DOC_BLOCKS = {("clients/typescript/README.md", "ts", i): "test_each_readme_example_is_a_file_the_tests_run"
              for i in range(6)}
"""The README's blocks are the example files the tests below run (tests/doc_blocks.py)."""


def test_each_readme_example_is_a_file_the_tests_run() -> None:
    blocks = re.findall(r"```ts\n(.*?)```", (TS_CLIENT / "README.md").read_text(), re.S)
    files = {p.name: p.read_text() for p in sorted(EXAMPLES.glob("*.ts"))}
    assert sorted(files) == ["agent.ts", "processor.ts", "threads.ts", "tls.ts", "tool.ts", "tracing.ts"]
    assert sorted(blocks) == sorted(files.values())
    assert all(len([line for line in b.splitlines() if line.strip()]) <= 12 for b in blocks)  # short


class Node:
    """A ``tsx FILE`` process; ``stop()`` sends SIGTERM and waits for it to exit."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    async def output(self, timeout: float = 60) -> str:
        out, _ = await asyncio.wait_for(self.proc.communicate(), timeout)
        assert self.proc.returncode == 0, out.decode()
        return out.decode()

    async def stop(self) -> int:
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 20)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        return self.proc.returncode or 0


@pytest.fixture
async def node() -> AsyncIterator[Callable[..., Any]]:
    """``await node("agent.ts", target, **env)``: an example running against ``target``."""
    if not TSX.exists():
        pytest.fail("clients/typescript/node_modules is missing; run `npm ci --prefix clients/typescript`")
    started: list[Node] = []

    async def start(example: str, target: str, **env: str) -> Node:
        base = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        proc = await asyncio.create_subprocess_exec(
            *NODE_TSX, str(EXAMPLES / example), cwd=TS_CLIENT, env={**base, "TREADLE_TARGET": target, **env},
            stdin=subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )
        started.append(Node(proc))
        return started[-1]

    yield start
    for n in started:
        await n.stop()


def agent(server: OpenAIServer, agent_id: str = "assistant", **kw: Any) -> Agent:
    return Agent(id=agent_id, name=agent_id, model="openai/test-model", base_url=server.base_url,
                 instructions=[SystemMessage("You are terse.")], **kw)


async def test_agent_client_streams_an_answer_and_reads_a_tripwire(start_app: StartApp, node) -> None:
    model = OpenAIServer([Turn.say(["Hello ", "from ", "Treadle"])])
    try:
        running = await start_app()
        running.app.add_agent(agent(model, input_processors=[ProcessorRef("content-filter")]))
        processor = await node("processor.ts", running.target)
        assert await running.app.processors.wait_attached("content-filter", 30)
        out = await (await node("agent.ts", running.target)).output()
        assert out.splitlines() == [
            "Hello from Treadle",
            "blocked by content-filter: Blocked content detected in input",
        ]
        assert len(model.recorded) == 1  # the blocked prompt never reached the model
        assert await processor.stop() == 0  # close() ends the process cleanly
    finally:
        model.close()


async def test_a_typescript_tool_is_called_by_an_agent(start_app: StartApp, node) -> None:
    model = OpenAIServer([Turn.call("weather", {"city": "Lisbon"}), Turn.say("Sunny in Lisbon")])
    try:
        running = await start_app()
        weather_agent = agent(model, tools=["weather"])
        running.app.add_agent(weather_agent)
        tool = await node("tool.ts", running.target)
        await running.app.tool_hub.wait_attached("weather", timeout=30)
        result = await running.app.loop.generate(weather_agent, RunRequest([Message.user("weather?")]))
        assert result.text == "Sunny in Lisbon"
        offered = model.recorded[0].body["tools"][0]["function"]
        assert (offered["name"], offered["description"]) == ("weather", "The weather in a city")
        assert offered["parameters"]["required"] == ["city"]
        tool_message = [m for m in model.recorded[1].body["messages"] if m["role"] == "tool"][0]
        assert json.loads(tool_message["content"]) == {"city": "Lisbon", "forecast": "sunny", "celsius": 21}
        assert await tool.stop() == 0
    finally:
        model.close()


async def test_one_trace_across_the_server_and_the_typescript_processor(
    start_app: StartApp, node, otlp: OtlpReceiver,
) -> None:
    model = OpenAIServer([Turn.say(["traced ", "answer"])])
    try:
        running = await start_app(env={"OTEL_EXPORTER_OTLP_ENDPOINT": otlp.base,
                                       "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"})
        traced = agent(model, output_processors=[ProcessorRef("traced-echo")])
        running.app.add_agent(traced)
        processor = await node("tracing.ts", running.target, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=otlp.endpoint)
        assert await running.app.processors.wait_attached("traced-echo", 30)
        result = await running.app.loop.generate(traced, RunRequest([Message.user("hi")]))
        assert result.text == "traced answer"
        assert await processor.stop() == 0  # shutting the provider down exports its spans
        assert running.app.tracer_provider is not None
        running.app.tracer_provider.force_flush()
        by_scope: dict[str, list[Any]] = {}
        for req in otlp.trace_requests():
            for rs in req.resource_spans:
                for ss in rs.scope_spans:
                    by_scope.setdefault(ss.scope.name, []).extend(ss.spans)
        ours = by_scope.pop("@treadle/client")
        server = [s for spans in by_scope.values() for s in spans]
        assert {s.name for s in ours} == {"processOutputStream traced-echo"}
        assert {s.trace_id for s in ours + server} == {ours[0].trace_id}  # one trace
        server_hook_spans = {s.span_id for s in server if s.name == "processOutputStream traced-echo"}
        assert all(s.parent_span_id in server_hook_spans for s in ours)  # children of the hook spans
    finally:
        model.close()


async def test_agent_client_subscribes_to_a_thread_and_sends_a_message(start_app: StartApp, node) -> None:
    model = OpenAIServer([Turn.say(["Hi ", "Devin"])])
    try:
        running = await start_app()
        running.app.add_agent(agent(model, "support"))
        out = await (await node("threads.ts", running.target)).output()
        assert out == "Hi Devin"  # the woken run's text, read from the subscription
        user = [m["content"] for m in model.recorded[0].body["messages"] if m["role"] == "user"]
        assert user == ['<user name="Devin" from="slack">hello</user>']
    finally:
        model.close()


async def test_processor_and_agent_client_over_mutual_tls_with_tokens(secured, node, tmp_path: Path) -> None:
    ca = TestCA(tmp_path)
    server, client = ca.issue("localhost", server=True), ca.issue("ts-host")
    running, model = await secured([Turn.say("guarded")], tls_cert=server.cert, tls_key=server.key,
                                   tls_client_ca=ca.cert)
    out = await (await node("tls.ts", f"localhost:{running.port}", TREADLE_CA=str(ca.cert), TREADLE_CERT=str(client.cert),
                            TREADLE_KEY=str(client.key), GUARD_TOKEN=TOKENS["guard-team"],
                            TREADLE_TOKEN=TOKENS["web-app"])).output()
    assert out.splitlines() == ["guarded"]
    assert len(model.requests) == 1


async def test_agent_client_crud(start_app: StartApp) -> None:
    running = await start_app()
    assert json.loads(await _run_script("agent_crud.ts", running.target)) == {
        "createdFromApi": True,
        "listed": ["echo", "more-0", "more-1", "more-2"],
        "updated": ["Echo v2", "openai/gpt-4o-mini"],
        "fetched": "Echo v2",
        "missing": "NotFound",
        "bad": "InvalidArgument",  # the server says what is wrong, and stores nothing:
        "after": ["more-0", "more-1", "more-2"],
    }


async def _run_script(name: str, *args: str) -> str:
    proc = await asyncio.create_subprocess_exec(
        *NODE_TSX, str(ROOT / "tests" / "remote" / "ts" / name), *args, cwd=TS_CLIENT,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, out.decode()
    return out.decode()


async def test_a_refused_handshake_is_reported_and_not_retried(start_app: StartApp) -> None:
    running = await start_app()
    report = json.loads(await _run_script("refused.ts", running.target))
    assert report["code"] == 3  # INVALID_ARGUMENT
    assert "bad id!" in report["details"]
    assert report["streams"] == 1


async def test_processor_and_tool_reattach_after_the_server_restarts(start_app: StartApp, node) -> None:
    model = OpenAIServer([Turn.call("weather", {"city": "Oslo"}), Turn.say("ok")])
    try:
        first = await start_app()
        await node("processor.ts", first.target)
        await node("tool.ts", first.target)
        assert await first.app.processors.wait_attached("content-filter", 30)
        await first.app.tool_hub.wait_attached("weather", timeout=30)
        await first.app.stop(0)  # drains both streams; the processes reconnect with backoff
        second = await start_app(listen=first.target)
        both = agent(model, input_processors=[ProcessorRef("content-filter")], tools=["weather"])
        second.app.add_agent(both)
        assert await second.app.processors.wait_attached("content-filter", 30)
        await second.app.tool_hub.wait_attached("weather", timeout=30)
        blocked = await second.app.loop.generate(both, RunRequest([Message.user("the secret")]))
        assert blocked.tripwire is not None and blocked.tripwire.processor_id == "content-filter"
        answered = await second.app.loop.generate(both, RunRequest([Message.user("weather in Oslo?")]))
        assert answered.text == "ok"
        tool_message = [m for m in model.recorded[1].body["messages"] if m["role"] == "tool"][0]
        assert json.loads(tool_message["content"])["city"] == "Oslo"
    finally:
        model.close()
