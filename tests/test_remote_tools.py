"""Remote tools (SPEC §7, issue item 6): served by another process over ``ToolService.Attach``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.remote.procs import children
from tests.seed_processors import RedactToolResult
from tests.support import OpenAIServer, Turn
from treadle.agents import Agent, CallOptions, MemoryOptions, RunRequest
from treadle.app import TreadleApp
from treadle.core.chunks import Chunk
from treadle.config import Settings
from treadle.core.messages import Message, SystemMessage, ToolInvocationPart
from treadle.tools import ToolHooks
from treadle.v1 import prompt_pb2, tool_service_pb2, tool_service_pb2_grpc

TOOL_MAIN = "tests.remote.tool_main"
REDACTED = {"name": "Ann", "ssn": "[REDACTED]", "email": "[REDACTED]", "id": 7}


class Server:
    """A TreadleApp on a free port with spans kept in memory, and a scripted OpenAI server."""

    def __init__(self, app: TreadleApp, exporter: InMemorySpanExporter, model: OpenAIServer) -> None:
        self.app, self.exporter, self.model = app, exporter, model
        self.target = ""

    def agent(self, **kw: Any) -> Agent:
        return Agent(id=kw.pop("id", "tool-agent"), model="openai/test-model",
                     base_url=self.model.base_url, instructions=[SystemMessage("be brief")], **kw)

    async def stream(self, agent: Agent, prompt: str, **options: Any) -> list[Chunk]:
        request = RunRequest(messages=[Message.user(prompt)], options=CallOptions(**options))
        return [c async for c in self.app.loop.stream(agent, request)]

    def bodies(self) -> list[dict[str, Any]]:
        return [r.body for r in self.model.recorded]


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Any]:
    made: list[Server] = []

    async def make(script: list[Any], **settings: Any) -> Server:
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        app = TreadleApp(Settings(listen="127.0.0.1:0", example_agent=False,
                                  **{"data_dir": tmp_path / f"data{len(made)}", **settings}),
                         tracer_provider=provider, env={"OPENAI_API_KEY": "sk-test"})
        s = Server(app, exporter, OpenAIServer(script))
        s.target = f"127.0.0.1:{await app.start()}"
        made.append(s)
        return s

    yield make
    for s in made:
        await s.app.stop(0)
        s.model.close()


def of_type(chunks: list[Chunk], kind: str) -> list[Chunk]:
    return [c for c in chunks if c.type == kind]


def tool_messages(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


async def test_remote_tool_result_flows_to_the_next_step(server) -> None:
    s = await server([Turn.call("lookup-customer", {"id": 7}), Turn.say("found Ann")])
    async with children() as start:
        await start(TOOL_MAIN, s.target, "lookup-customer")
        chunks = await s.stream(s.agent(tools=["lookup-customer"]), "who is 7?")
    offered = s.bodies()[0]["tools"][0]["function"]
    assert offered["name"] == "lookup-customer"
    assert offered["description"] == "Look a customer up by id"  # the attached declaration
    assert offered["parameters"]["required"] == ["id"]
    result = {"name": "Ann", "ssn": "123-45-6789", "email": "ann@example.com", "id": 7}
    assert [c.payload.result for c in of_type(chunks, "tool-result")] == [result]
    kinds = [c.type for c in chunks]
    assert kinds.index("data-lookup") < kinds.index("tool-result")  # custom chunks come first
    assert of_type(chunks, "data-lookup")[0].data["id"] == 7
    assert json.loads(tool_messages(s.bodies()[1])[0]) == result
    assert "".join(c.payload.text for c in of_type(chunks, "text-delta")) == "found Ann"


async def test_tool_hooks_and_process_tool_result_apply_to_remote_tools(server) -> None:
    s = await server([Turn.call("lookup-customer", {"id": 7}), Turn.call("fail", {}),
                      Turn.say("done")])
    before: list[str] = []
    after: list[tuple[str, Any, str]] = []

    def before_hook(ctx: Any) -> Any:
        before.append(ctx.tool_name)
        return None

    def after_hook(ctx: Any) -> None:
        after.append((ctx.tool_name, ctx.output, str(ctx.error or "")))

    agent = s.agent(tools=["lookup-customer", "fail"], output_processors=[RedactToolResult()],
                    tool_hooks=ToolHooks(before_tool_call=before_hook, after_tool_call=after_hook))
    async with children() as start:
        await start(TOOL_MAIN, s.target, "lookup-customer", "fail")
        chunks = await s.stream(agent, "look 7 up", max_steps=5)
    assert before == ["lookup-customer", "fail"]
    assert after[0][0] == "lookup-customer" and after[0][1]["ssn"] == "123-45-6789"  # raw output
    assert after[1] == ("fail", None, "database is down")
    assert [c.payload.result for c in of_type(chunks, "tool-result")] == [REDACTED]
    assert [c.payload.error for c in of_type(chunks, "tool-error")] == ["database is down"]
    assert json.loads(tool_messages(s.bodies()[1])[0]) == REDACTED
    assert "database is down" in tool_messages(s.bodies()[2])[-1]


async def test_before_tool_call_can_skip_a_remote_tool(server) -> None:
    s = await server([Turn.call("lookup-customer", {"id": 7}), Turn.say("ok")])
    hooks = ToolHooks(before_tool_call=lambda ctx: {"proceed": False, "output": {"blocked": True}})
    async with children() as start:
        child = await start(TOOL_MAIN, s.target, "lookup-customer")
        chunks = await s.stream(s.agent(tools=["lookup-customer"]), "x", tool_hooks=hooks)
    assert [c.payload.result for c in of_type(chunks, "tool-result")] == [{"blocked": True}]
    assert not any("called" in line for line in child.lines)


async def test_tool_process_killed_mid_call_gives_the_model_a_tool_error(server) -> None:
    s = await server([Turn.call("hang", {}), Turn.say("the tool died")])
    async with children() as start:
        child = await start(TOOL_MAIN, s.target, "hang")
        run = asyncio.create_task(s.stream(s.agent(tools=["hang"]), "go"))
        await child.expect("called hang")
        child.kill()
        chunks = await asyncio.wait_for(run, 30)
    [error] = of_type(chunks, "tool-error")
    assert "disconnected before answering" in error.payload.error
    assert "disconnected" in tool_messages(s.bodies()[1])[0]  # the model saw it
    assert chunks[-1].type == "finish" and chunks[-1].payload.reason == "stop"


async def test_a_remote_tool_that_never_answers_times_out_and_is_cancelled(server) -> None:
    s = await server([Turn.call("hang", {}), Turn.say("too slow")], tool_timeout=0.3)
    async with children() as start:
        child = await start(TOOL_MAIN, s.target, "hang")
        chunks = await s.stream(s.agent(tools=["hang"]), "go")
        await child.expect("cancelled hang")  # the server told the process to stop
    [error] = of_type(chunks, "tool-error")
    assert error.payload.error == "tool 'hang' did not answer within 0.3s"
    assert chunks[-1].payload.reason == "stop"


async def test_a_tool_that_is_not_attached_is_a_tool_error_not_a_failed_run(server) -> None:
    s = await server([Turn.call("nowhere", {}), Turn.say("no luck")])
    chunks = await s.stream(s.agent(tools=["nowhere"]), "go")
    assert s.bodies()[0]["tools"][0]["function"]["name"] == "nowhere"
    assert [c.payload.error for c in of_type(chunks, "tool-error")] == ["tool 'nowhere' is not attached"]
    assert chunks[-1].payload.reason == "stop"


async def test_tool_process_span_is_a_child_of_execute_tool(server) -> None:
    s = await server([Turn.call("whoami", {}), Turn.say("ok")])
    async with children() as start:
        await start(TOOL_MAIN, s.target, "whoami")
        chunks = await s.stream(
            s.agent(tools=["whoami"]), "who?", request_context={"tenant": "acme"},
            memory=MemoryOptions(resource="user-1", thread="thread-1"),
        )
    [result] = [c.payload.result for c in of_type(chunks, "tool-result")]
    execute = next(sp for sp in s.exporter.get_finished_spans() if sp.name == "execute_tool whoami")
    assert result["trace_id"] == format(execute.context.trace_id, "032x")
    assert result["parent_span_id"] == format(execute.context.span_id, "016x")
    assert result["span_name"] == "execute_tool whoami"
    assert result["context"] == {"thread": "thread-1", "resource": "user-1", "agent": "tool-agent",
                                 "request": {"tenant": "acme"}}


async def test_replicas_share_calls(server) -> None:
    s = await server([Turn.call("whoami", {}), Turn.say("a"), Turn.call("whoami", {}), Turn.say("b")])
    async with children() as start:
        one = await start(TOOL_MAIN, s.target, "whoami")
        two = await start(TOOL_MAIN, s.target, "whoami")
        await s.app.tool_hub.wait_attached("whoami", count=2)
        pids = []
        for _ in range(2):
            chunks = await s.stream(s.agent(tools=["whoami"]), "who?")
            pids += [c.payload.result["pid"] for c in of_type(chunks, "tool-result")]
    assert sorted(pids) == sorted([one.pid, two.pid])


async def test_drain_on_shutdown_ends_tool_streams(server) -> None:
    s = await server([])
    async with children() as start:
        await start(TOOL_MAIN, s.target, "whoami")
        await s.app.stop(0)
        assert s.app.tool_hub.replicas("whoami") == []


# --- handshake validation ------------------------------------------------------------------


def _definition(name: str, schema: dict[str, Any] | None = None) -> prompt_pb2.ToolDefinition:
    d = prompt_pb2.ToolDefinition(name=name)
    if schema is not None:
        d.input_schema.update(schema)
    return d


@pytest.mark.parametrize(
    ("handshake", "code", "message"),
    [
        (tool_service_pb2.ToolHandshake(protocol_versions=[1], tools=[_definition("bad name!")]),
         grpc.StatusCode.INVALID_ARGUMENT, "tools[0].name 'bad name!' is invalid"),
        (tool_service_pb2.ToolHandshake(protocol_versions=[1],
                                        tools=[_definition("a"), _definition("a")]),
         grpc.StatusCode.INVALID_ARGUMENT, "tool 'a' is declared twice"),
        (tool_service_pb2.ToolHandshake(protocol_versions=[1],
                                        tools=[_definition("a", {"type": "string"})]),
         grpc.StatusCode.INVALID_ARGUMENT, 'must be a JSON schema with "type": "object"'),
        (tool_service_pb2.ToolHandshake(
            protocol_versions=[1], tools=[_definition("a", {"type": "object", "properties": 3})]),
         grpc.StatusCode.INVALID_ARGUMENT, "is not a valid JSON schema"),
        (tool_service_pb2.ToolHandshake(protocol_versions=[7], tools=[_definition("a")]),
         grpc.StatusCode.FAILED_PRECONDITION, "no common protocol version"),
        (tool_service_pb2.ToolHandshake(protocol_versions=[1]),
         grpc.StatusCode.INVALID_ARGUMENT, "declares no tools"),
    ],
)
async def test_bad_handshakes_are_refused_with_a_clear_status(server, handshake, code, message) -> None:
    s = await server([])
    async with grpc.aio.insecure_channel(s.target) as channel:
        call = tool_service_pb2_grpc.ToolServiceStub(channel).Attach(
            iter([tool_service_pb2.ToolServiceAttachRequest(handshake=handshake)]))
        with pytest.raises(grpc.aio.AioRpcError) as e:
            async for _ in call:
                pass
    assert e.value.code() == code
    assert message in (e.value.details() or "")


async def test_processed_result_is_what_memory_would_keep(server) -> None:
    s = await server([Turn.call("lookup-customer", {"id": 7}), Turn.say("found Ann")])
    async with children() as start:
        await start(TOOL_MAIN, s.target, "lookup-customer")
        result = await s.app.loop.generate(
            s.agent(tools=["lookup-customer"], output_processors=[RedactToolResult()]),
            RunRequest(messages=[Message.user("who is 7?")], options=CallOptions()))
    parts = [p for m in result.messages for p in m.content.parts if isinstance(p, ToolInvocationPart)]
    assert [(p.state, p.result) for p in parts] == [("result", REDACTED)]


async def test_tool_streams_and_calls_are_counted_in_metrics(tmp_path: Path) -> None:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    reader = InMemoryMetricReader()
    app = TreadleApp(Settings(listen="127.0.0.1:0", example_agent=False, data_dir=tmp_path), env={},
                     meter_provider=MeterProvider(metric_readers=[reader]))
    model = OpenAIServer([Turn.call("fail", {}), Turn.say("ok")])
    try:
        target = f"127.0.0.1:{await app.start()}"
        async with children() as start:
            await start(TOOL_MAIN, target, "fail")
            agent = Agent(id="m", model="openai/test-model", base_url=model.base_url, tools=["fail"])
            request = RunRequest(messages=[Message.user("go")], options=CallOptions())
            [c async for c in app.loop.stream(agent, request)]
    finally:
        await app.stop(0)
        model.close()
    points: dict[str, list[Any]] = {}
    for rm in reader.get_metrics_data().resource_metrics:
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                points[metric.name] = list(metric.data.data_points)
    assert [p.value for p in points["treadle.tool.streams_started"]] == [1]
    assert [(dict(p.attributes), p.value) for p in points["treadle.tool.calls"]] == [
        ({"tool": "fail", "outcome": "error"}, 1)]
    assert points["treadle.tool.latency"][0].count == 1
