"""Input checked before it is stored or run: each kind of bad input found by trying it, then a
randomised test over every request message of every method, built from the descriptors."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, given, settings, strategies as st

from tests.conftest import StartApp
from tests.support import OpenAIServer, Turn
from treadle.agents import Agent
from treadle.app import TreadleApp
from treadle.config import Settings
from treadle.v1 import (
    agent_pb2,
    agent_service_pb2,
    agent_service_pb2_grpc,
    agent_version_service_pb2,
    processor_service_pb2,
    prompt_pb2,
    thread_service_pb2,
    tool_service_pb2,
    tool_service_pb2_grpc,
)
from treadle_client import attach

Code = grpc.StatusCode
SERVICES = [agent_service_pb2.DESCRIPTOR.services_by_name["AgentService"],
            processor_service_pb2.DESCRIPTOR.services_by_name["ProcessorService"],
            tool_service_pb2.DESCRIPTOR.services_by_name["ToolService"],
            thread_service_pb2.DESCRIPTOR.services_by_name["ThreadService"],
            agent_version_service_pb2.DESCRIPTOR.services_by_name["AgentVersionService"]]
METHODS = [(s, m) for s in SERVICES for m in s.methods]


async def status_of(call: Any) -> tuple[grpc.StatusCode, str]:
    try:
        await call
    except grpc.aio.AioRpcError as e:
        return e.code(), e.details() or ""
    raise AssertionError("the call succeeded")


def create(agent: dict[str, Any] | agent_pb2.Agent) -> agent_service_pb2.CreateAgentRequest:
    from google.protobuf import json_format

    pb = agent if isinstance(agent, agent_pb2.Agent) else json_format.ParseDict(agent, agent_pb2.Agent())
    return agent_service_pb2.CreateAgentRequest(agent=pb)


BAD_AGENTS = [
    ({"id": "a", "model": "openai/m", "defaultOptions": {"modelSettings": {"temperature": "NaN"}}},
     "default_options.model_settings.temperature must be a finite number"),
    ({"id": "a", "model": "openai/m", "defaultOptions": {"modelSettings": {"topP": "Infinity"}}},
     "top_p must be a finite number"),
    ({"id": "a", "model": "openai/m", "defaultOptions": {"providerOptions": {"openai": 5}}},
     "default_options.provider_options.openai must be an object"),
    ({"id": "a", "model": "openai/m", "inputProcessors": [{"id": "has space"}]}, "could never attach"),
    ({"id": "a", "model": "openai/m", "tools": ["no/slash"]}, "could never attach"),
    ({"id": "a", "model": "openai/m", "requestContextSchema": {"$ref": "#/$defs/missing"}},
     "does not resolve inside the schema"),
    ({"id": "a", "model": "openai/m", "requestContextSchema": {"$ref": "https://example.com/s.json"}},
     "does not resolve inside the schema"),
    ({"id": "a", "model": "openai/m", "requestContextSchema": {"type": 5}}, "not a valid JSON schema"),
    ({"id": "a", "model": "anthropic/c", "defaultOptions": {
        "toolChoice": {"mode": "TOOL_CHOICE_MODE_REQUIRED"},
        "providerOptions": {"anthropic": {"thinking": {"type": "enabled", "budgetTokens": 2048}}}}},
     "forced tool choice"),
    ({"id": "a", "model": "anthropic/c", "defaultOptions": {
        "modelSettings": {"maxOutputTokens": 1024},
        "providerOptions": {"anthropic": {"thinking": {"type": "enabled", "budgetTokens": 2048}}}}},
     "must be above the Anthropic thinking budget"),
]


@pytest.mark.parametrize(("agent", "says"), BAD_AGENTS, ids=[s for _, s in BAD_AGENTS])
async def test_bad_agents_are_refused_and_nothing_is_stored(start_app: StartApp, agent: Any, says: str) -> None:
    running = await start_app()
    async with grpc.aio.insecure_channel(running.target) as channel:
        stub = agent_service_pb2_grpc.AgentServiceStub(channel)
        code, message = await status_of(stub.CreateAgent(create(agent)))
        assert code == Code.INVALID_ARGUMENT and says in message, message
        assert not (await stub.ListAgents(agent_service_pb2.ListAgentsRequest())).agents


async def test_local_refs_are_accepted(start_app: StartApp) -> None:
    running = await start_app()
    schema = {"$defs": {"user": {"type": "string"}}, "type": "object",
              "properties": {"u": {"$ref": "#/$defs/user"}, "self": {"$ref": "#"}}}
    async with grpc.aio.insecure_channel(running.target) as channel:
        stub = agent_service_pb2_grpc.AgentServiceStub(channel)
        await stub.CreateAgent(create({"id": "a", "model": "openai/m", "requestContextSchema": schema}))


async def test_enum_numbers_outside_the_enum_are_refused(start_app: StartApp) -> None:
    running = await start_app()
    agent = agent_pb2.Agent(id="a", model="openai/m")
    agent.input_processors.add(id="p", failure_policy=99)  # type: ignore[arg-type]
    request = agent_service_pb2.GenerateRequest(agent_id="a", prompt="x")
    request.options.tool_choice.mode = 42  # type: ignore[assignment]
    async with grpc.aio.insecure_channel(running.target) as channel:
        stub = agent_service_pb2_grpc.AgentServiceStub(channel)
        code, message = await status_of(stub.CreateAgent(create(agent)))
        assert code == Code.INVALID_ARGUMENT and "input_processors[0].failure_policy: 99 is not a FailurePolicy" in message
        code, message = await status_of(stub.Generate(request))
        assert code == Code.INVALID_ARGUMENT and "options.tool_choice.mode: 42" in message


async def test_update_masks_naming_output_only_fields_are_refused(start_app: StartApp) -> None:
    running = await start_app()
    async with grpc.aio.insecure_channel(running.target) as channel:
        stub = agent_service_pb2_grpc.AgentServiceStub(channel)
        await stub.CreateAgent(create({"id": "a", "model": "openai/m"}))
        request = agent_service_pb2.UpdateAgentRequest(agent=agent_pb2.Agent(id="a", model="openai/m"))
        request.update_mask.paths.extend(["create_time"])
        code, message = await status_of(stub.UpdateAgent(request))
        assert code == Code.INVALID_ARGUMENT and "output-only fields ['create_time']" in message


def nested_struct(levels: int) -> struct_pb2.Struct:
    root = struct_pb2.Struct()
    node = root
    for _ in range(levels):
        node = node.fields["a"].struct_value
    return root


async def test_undecodable_requests_are_invalid_argument_with_one_log_line(start_app: StartApp, caplog) -> None:
    running = await start_app()
    caplog.set_level(logging.WARNING)
    deep = agent_service_pb2.CreateAgentRequest(agent=agent_pb2.Agent(id="deep", model="openai/m"))
    deep.agent.metadata.CopyFrom(nested_struct(60))
    bodies = {
        "bad UTF-8": b"\x0a\x02\xc3\x28",  # GetAgentRequest.id = invalid UTF-8
        "corrupt wire data": b"\x0a\xff\xff\xff\xff\x0f",
        "nesting too deep": deep.SerializeToString(),
    }
    async with grpc.aio.insecure_channel(running.target) as channel:
        for what, body in bodies.items():
            method = "CreateAgent" if what == "nesting too deep" else "GetAgent"
            call = channel.unary_unary(f"/treadle.v1.AgentService/{method}")(body)
            code, message = await status_of(call)
            assert code == Code.INVALID_ARGUMENT and "cannot be decoded" in message, (what, code, message)
        health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        assert health.status == health_pb2.HealthCheckResponse.SERVING
    lines = [r for r in caplog.records if "undecodable request" in r.getMessage()]
    assert len(lines) == 3 and all(r.exc_info is None for r in lines)
    assert "nested deeper than protobuf's limit" in lines[2].getMessage()


async def test_a_tool_result_without_an_outcome_is_a_tool_error(start_app: StartApp) -> None:
    model = OpenAIServer([Turn.call("blank", {}), Turn.say("noted")])

    def setup(app: TreadleApp) -> None:
        app.add_agent(Agent(id="t", model="openai/m", base_url=model.base_url, tools=["blank"]))

    running = await start_app(setup=setup)
    outbound: asyncio.Queue[Any] = asyncio.Queue()
    outbound.put_nowait(tool_service_pb2.ToolServiceAttachRequest(handshake=tool_service_pb2.ToolHandshake(
        protocol_versions=[1], tools=[prompt_pb2.ToolDefinition(name="blank")])))

    async def requests() -> Any:
        while (item := await outbound.get()) is not None:
            yield item

    async with grpc.aio.insecure_channel(running.target) as channel:
        call = tool_service_pb2_grpc.ToolServiceStub(channel).Attach(requests())
        assert (await call.read()).HasField("welcome")
        run = asyncio.ensure_future(agent_service_pb2_grpc.AgentServiceStub(channel).Generate(
            agent_service_pb2.GenerateRequest(agent_id="t", prompt="go")))
        invocation = (await call.read()).call
        outbound.put_nowait(tool_service_pb2.ToolServiceAttachRequest(
            result=tool_service_pb2.ToolCallResult(invocation_id=invocation.invocation_id)))
        answer = await run
        outbound.put_nowait(None)
    model.close()
    assert answer.text == "noted"
    tool_message = model.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and "without an outcome" in tool_message["content"]


class DeepState:
    id = "deep"

    def process_input(self, args: Any) -> Any:
        node = args.state
        for _ in range(40):
            node = node.setdefault("a", {})
        return args.messages


async def test_a_processor_state_nested_too_deep_fails_the_call_saying_so(start_app: StartApp) -> None:
    model = OpenAIServer([])

    def setup(app: TreadleApp) -> None:
        app.add_agent(Agent(id="p", model="openai/m", base_url=model.base_url, input_processors=["deep"]))

    running = await start_app(setup=setup)
    async with await attach([DeepState()], running.target) as attachment:
        await attachment.ready(timeout=10)
        async with grpc.aio.insecure_channel(running.target) as channel:
            answer = await agent_service_pb2_grpc.AgentServiceStub(channel).Generate(
                agent_service_pb2.GenerateRequest(agent_id="p", prompt="go"))
        assert attachment.attached()  # the stream survives: only the call failed
    model.close()
    assert "nested too deep" in answer.error.message
    assert model.requests == []


# --- randomised: every request message of every method ---------------------------------------


def _scalar(fd: FieldDescriptor) -> st.SearchStrategy[Any]:
    t = FieldDescriptor
    if fd.type == t.TYPE_STRING:
        return st.one_of(st.sampled_from(["", "echo", "a", "openai/m", "#/x", "../..", "x" * 300]),
                         st.text(max_size=20))
    if fd.type == t.TYPE_BYTES:
        return st.binary(max_size=16)
    if fd.type == t.TYPE_BOOL:
        return st.booleans()
    if fd.type in (t.TYPE_DOUBLE, t.TYPE_FLOAT):
        return st.one_of(st.sampled_from([float("nan"), float("inf"), -float("inf"), -1.0, 0.5, 1e308]),
                         st.floats(allow_nan=True, width=32 if fd.type == t.TYPE_FLOAT else 64))
    if fd.type == t.TYPE_ENUM:
        return st.one_of(st.sampled_from([v.number for v in fd.enum_type.values]), st.integers(-3, 100))
    if fd.type in (t.TYPE_UINT32, t.TYPE_FIXED32):
        return st.integers(0, 2**32 - 1)
    if fd.type in (t.TYPE_UINT64, t.TYPE_FIXED64):
        return st.integers(0, 2**64 - 1)
    if fd.type in (t.TYPE_INT64, t.TYPE_SINT64, t.TYPE_SFIXED64):
        return st.integers(-(2**63), 2**63 - 1)
    return st.integers(-(2**31), 2**31 - 1)


@st.composite
def message(draw: Any, descriptor: Descriptor, depth: int = 0) -> Any:
    msg = descriptor._concrete_class()
    fields = list(descriptor.fields)
    chosen = draw(st.lists(st.sampled_from(fields), max_size=4, unique=True)) if fields and depth < 4 else []
    for fd in chosen:
        mt = fd.message_type
        if mt is not None and mt.GetOptions().map_entry:
            vfd = mt.fields_by_name["value"]
            for key in draw(st.lists(st.text(max_size=6), max_size=2, unique=True)):
                if vfd.message_type is not None:
                    getattr(msg, fd.name)[key].CopyFrom(draw(message(vfd.message_type, depth + 1)))
                else:
                    getattr(msg, fd.name)[key] = draw(_scalar(vfd))
        elif mt is not None:
            items = [draw(message(mt, depth + 1)) for _ in range(draw(st.integers(0, 2)) if fd.is_repeated else 1)]
            if fd.is_repeated:
                getattr(msg, fd.name).extend(items)
            else:
                getattr(msg, fd.name).CopyFrom(items[0])
        elif fd.is_repeated:
            getattr(msg, fd.name).extend(draw(st.lists(_scalar(fd), max_size=3)))
        else:
            setattr(msg, fd.name, draw(_scalar(fd)))
    return msg


class ThreadedServer:
    """A server on its own event loop in a thread, so hypothesis can drive it with a sync client."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.model = OpenAIServer([])
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

        async def start() -> tuple[TreadleApp, int]:  # the grpc.aio server belongs to this loop
            app = TreadleApp(Settings(listen="127.0.0.1:0", example_agent=False, tool_timeout=2,
                                      data_dir=self.data_dir), env={})
            app.add_agent(Agent(id="echo", model="openai/m", base_url=self.model.base_url))
            return app, await app.start()

        self.app, self.port = self.run(start())
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.port}")

    def run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(60)

    def close(self) -> None:
        self.channel.close()
        self.run(self.app.stop(0))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.model.close()


@pytest.fixture(scope="module")
def threaded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreadedServer]:
    server = ThreadedServer(tmp_path_factory.mktemp("data"))
    yield server
    server.close()


def stored(server: ThreadedServer) -> bytes:
    listing = server.channel.unary_unary(
        "/treadle.v1.AgentService/ListAgents",
        request_serializer=agent_service_pb2.ListAgentsRequest.SerializeToString,
        response_deserializer=agent_service_pb2.ListAgentsResponse.FromString,
    )(agent_service_pb2.ListAgentsRequest(page_size=1000))
    for agent in listing.agents:
        agent.ClearField("create_time")
        agent.ClearField("update_time")
    return listing.SerializeToString(deterministic=True)


def listings(server: ThreadedServer, body: bytes, input_type: Any) -> tuple[grpc.StatusCode, bytes]:
    """What the request's thread lists (threads of its resource, messages of its thread), and
    how the listing answered: whatever was accepted must list back."""
    try:
        request = input_type._concrete_class.FromString(body)
    except Exception:
        return grpc.StatusCode.OK, b""
    fields = request.DESCRIPTOR.fields_by_name
    resource = getattr(request, "resource_id", "") if "resource_id" in fields else ""
    thread = getattr(request, "thread_id", "") if "thread_id" in fields else ""
    if "thread" in fields and request.DESCRIPTOR.fields_by_name["thread"].message_type is not None \
            and request.HasField("thread") and hasattr(request.thread, "resource_id"):
        resource, thread = request.thread.resource_id, request.thread.id
    if not resource:
        return grpc.StatusCode.OK, b""
    out = b""
    rpc = server.channel.unary_unary
    try:
        page = rpc("/treadle.v1.ThreadService/ListThreads", thread_service_pb2.ListThreadsRequest.SerializeToString,
                   thread_service_pb2.ListThreadsResponse.FromString)(
            thread_service_pb2.ListThreadsRequest(resource_id=resource, page_size=1), timeout=5)
        out += page.SerializeToString(deterministic=True)
        if thread:
            listed = rpc("/treadle.v1.ThreadService/ListMessages",
                         thread_service_pb2.ListMessagesRequest.SerializeToString,
                         thread_service_pb2.ListMessagesResponse.FromString)(
                thread_service_pb2.ListMessagesRequest(resource_id=resource, thread_id=thread, page_size=1), timeout=5)
            out += listed.SerializeToString(deterministic=True)
    except grpc.RpcError as e:
        return e.code(), out  # type: ignore[no-any-return]
    return grpc.StatusCode.OK, out


def send(server: ThreadedServer, service: Any, method: Any, body: bytes) -> grpc.StatusCode:
    path = f"/{service.full_name}/{method.name}"
    identity = (lambda b: b)
    try:
        if method.client_streaming:
            call = server.channel.stream_stream(path, identity, identity)(iter([body]), timeout=5)
            for _ in call:
                pass
        elif method.server_streaming:
            call = server.channel.unary_stream(path, identity, identity)(body, timeout=5)
            for _ in call:
                if method.name == "SubscribeToThread":  # it lasts until cancelled: its first answer will do
                    call.cancel()
                    break
        else:
            server.channel.unary_unary(path, identity, identity)(body, timeout=5)
    except grpc.RpcError as e:
        return e.code()  # type: ignore[no-any-return]
    return grpc.StatusCode.OK


@st.composite
def request_for_any_method(draw: Any) -> tuple[Any, Any, bytes]:
    service, method = draw(st.sampled_from(METHODS))
    if draw(st.integers(0, 9)) == 0:  # now and then, bytes that are not the message at all
        return service, method, draw(st.binary(max_size=64))
    return service, method, draw(message(method.input_type)).SerializeToString()


@settings(max_examples=250, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(request=request_for_any_method())
def test_random_requests_never_get_unknown_or_internal_and_change_nothing_when_refused(
    threaded: ThreadedServer, request: tuple[Any, Any, bytes]
) -> None:
    service, method, body = request
    before = stored(threaded)
    _, threads_before = listings(threaded, body, method.input_type)
    code = send(threaded, service, method, body)
    assert code not in (Code.UNKNOWN, Code.INTERNAL), (method.full_name, body)
    threaded.run(threaded.app.threads.wait_idle())  # a run it woke has ended and stored its messages
    listed, threads_after = listings(threaded, body, method.input_type)
    # what was accepted lists back (a thread of another resource is PERMISSION_DENIED, not broken)
    assert listed not in (Code.UNKNOWN, Code.INTERNAL, Code.RESOURCE_EXHAUSTED, Code.DATA_LOSS), \
        (method.full_name, listed, body)
    if code != Code.OK and method.name not in ("AbortRun",):
        assert threads_after == threads_before, (method.full_name, code)
    health = health_pb2_grpc.HealthStub(threaded.channel).Check(health_pb2.HealthCheckRequest())
    assert health.status == health_pb2.HealthCheckResponse.SERVING
    if code != Code.OK:
        assert stored(threaded) == before, (method.full_name, code)
    else:  # an accepted CreateAgent may store a new agent; nothing else changes what is listed
        after = stored(threaded)
        if method.name not in ("CreateAgent", "UpdateAgent", "DeleteAgent"):
            assert after == before, method.full_name
