"""The gRPC server in-process: AgentService CRUD and statuses, runs, health, reflection, drain.

Runs go to the loopback OpenAI server through the agents' ``base_url``, so no environment
variable is involved. Waiting is on observable state (a chunk, an event), never on time.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from tests.conftest import RunningApp, StartApp
from tests.support import OpenAIServer, Turn
from treadle.agents import Agent, ProcessorRef
from treadle.config import AgentFileError
from treadle.core.messages import SystemMessage
from treadle.tools import Tool
from treadle.v1 import agent_pb2, agent_service_pb2, agent_service_pb2_grpc, chunk_pb2, message_pb2

Code = grpc.StatusCode


@pytest.fixture
async def stub_for() -> AsyncIterator[Callable[[RunningApp], agent_service_pb2_grpc.AgentServiceStub]]:
    channels: list[grpc.aio.Channel] = []

    def make(running: RunningApp) -> agent_service_pb2_grpc.AgentServiceStub:
        channel = grpc.aio.insecure_channel(running.target)
        channels.append(channel)
        return agent_service_pb2_grpc.AgentServiceStub(channel)

    yield make
    for channel in channels:
        await channel.close()


def agent_pb(agent_id: str = "echo", **kw: Any) -> agent_pb2.Agent:
    kw.setdefault("name", "Echo")
    kw.setdefault("instructions", "You are terse.")
    kw.setdefault("model", "openai/gpt-4o-mini")
    return agent_pb2.Agent(id=agent_id, **kw)


async def status_of(call: Any) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call
    return info.value.code(), info.value.details() or ""


async def list_ids(stub: agent_service_pb2_grpc.AgentServiceStub) -> list[tuple[str, str]]:
    response = await stub.ListAgents(agent_service_pb2.ListAgentsRequest())
    return [(a.id, a.SerializeToString(deterministic=True).hex()) for a in response.agents]


def code_agent(app: Any) -> None:
    app.add_agent(Agent(id="coded", name="Coded", model="openai/gpt-4o-mini",
                        instructions=[SystemMessage("Defined in Python.")]))


# --- health and reflection ---------------------------------------------------------------------


async def test_health_reports_serving_for_the_server_and_agent_service(start_app: StartApp) -> None:
    running = await start_app()
    async with grpc.aio.insecure_channel(running.target) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for service in ("", "treadle.v1.AgentService"):
            response = await health.Check(health_pb2.HealthCheckRequest(service=service))
            assert response.status == health_pb2.HealthCheckResponse.SERVING


async def test_reflection_lists_agent_service_health_and_reflection(start_app: StartApp) -> None:
    running = await start_app()
    async with grpc.aio.insecure_channel(running.target) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        call = stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]))
        response = await call.read()
        names = {s.name for s in response.list_services_response.service}
        call.cancel()
    assert {"treadle.v1.AgentService", "grpc.health.v1.Health",
            "grpc.reflection.v1alpha.ServerReflection"} <= names


# --- CRUD --------------------------------------------------------------------------------------


async def test_create_get_update_delete_round_trip(start_app: StartApp, stub_for: Any) -> None:
    stub = stub_for(await start_app())
    created = (await stub.CreateAgent(agent_service_pb2.CreateAgentRequest(agent=agent_pb()))).agent
    assert created.source == agent_pb2.AGENT_SOURCE_API
    assert created.create_time.seconds > 0 and created.instructions == "You are terse."

    got = (await stub.GetAgent(agent_service_pb2.GetAgentRequest(id="echo"))).agent
    assert got.name == "Echo" and got.model == "openai/gpt-4o-mini"

    # With a mask only the named fields change.
    patch = agent_pb2.Agent(id="echo", name="ignored", description="Says it back.")
    request = agent_service_pb2.UpdateAgentRequest(agent=patch)
    request.update_mask.paths.append("description")
    updated = (await stub.UpdateAgent(request)).agent
    assert (updated.name, updated.description) == ("Echo", "Says it back.")
    assert updated.create_time == created.create_time
    assert updated.source == agent_pb2.AGENT_SOURCE_API

    # Without a mask the whole agent is replaced.
    replaced = (await stub.UpdateAgent(agent_service_pb2.UpdateAgentRequest(
        agent=agent_pb(name="Echo 2", model="anthropic/claude-sonnet-4-5")))).agent
    assert (replaced.name, replaced.model, replaced.description) == ("Echo 2", "anthropic/claude-sonnet-4-5", "")

    await stub.DeleteAgent(agent_service_pb2.DeleteAgentRequest(id="echo"))
    assert (await status_of(stub.GetAgent(agent_service_pb2.GetAgentRequest(id="echo"))))[0] == Code.NOT_FOUND


async def test_list_shows_code_and_api_agents_page_by_page(start_app: StartApp, stub_for: Any) -> None:
    stub = stub_for(await start_app(setup=code_agent))
    for i in range(4):
        await stub.CreateAgent(agent_service_pb2.CreateAgentRequest(agent=agent_pb(f"api-{i}")))
    seen: list[tuple[str, int]] = []
    token = ""
    pages = 0
    while True:
        page = await stub.ListAgents(agent_service_pb2.ListAgentsRequest(page_size=2, page_token=token))
        seen += [(a.id, a.source) for a in page.agents]
        pages += 1
        token = page.next_page_token
        if not token:
            break
    assert pages == 3
    assert seen == [("api-0", 3), ("api-1", 3), ("api-2", 3), ("api-3", 3), ("coded", agent_pb2.AGENT_SOURCE_CODE)]
    code, message = await status_of(stub.ListAgents(agent_service_pb2.ListAgentsRequest(page_token="%%%")))
    assert code == Code.INVALID_ARGUMENT and "page_token" in message


@pytest.mark.parametrize(
    ("agent", "says"),
    [
        (agent_pb("has space"), "agent.id"),
        (agent_pb(""), "agent.id is required"),
        (agent_pb(model=""), "model is required"),
        (agent_pb(model="gpt-4o-mini"), "provider/model"),
        (agent_pb(model="acme/model-1"), "unknown provider 'acme'"),
        (agent_pb(fallback_models=[agent_pb2.FallbackModel(model="nope")]), "agent.fallback_models[0].model"),
        (agent_pb(input_processors=[agent_pb2.ProcessorRef()]), "agent.input_processors[0].id is required"),
    ],
)
async def test_malformed_agent_is_invalid_argument_and_stores_nothing(
    start_app: StartApp, stub_for: Any, agent: agent_pb2.Agent, says: str
) -> None:
    stub = stub_for(await start_app(setup=code_agent))
    before = await list_ids(stub)
    code, message = await status_of(stub.CreateAgent(agent_service_pb2.CreateAgentRequest(agent=agent)))
    assert code == Code.INVALID_ARGUMENT
    assert says in message
    assert await list_ids(stub) == before


async def test_create_without_agent_and_update_with_bad_mask_are_invalid(start_app: StartApp, stub_for: Any) -> None:
    stub = stub_for(await start_app())
    code, message = await status_of(stub.CreateAgent(agent_service_pb2.CreateAgentRequest()))
    assert (code, message) == (Code.INVALID_ARGUMENT, "agent is required")
    await stub.CreateAgent(agent_service_pb2.CreateAgentRequest(agent=agent_pb()))
    before = await list_ids(stub)
    for paths, says in ((["colour"], "unknown field"), (["id"], "id cannot change")):
        request = agent_service_pb2.UpdateAgentRequest(agent=agent_pb())
        request.update_mask.paths.extend(paths)
        code, message = await status_of(stub.UpdateAgent(request))
        assert code == Code.INVALID_ARGUMENT and says in message
    bad_model = agent_service_pb2.UpdateAgentRequest(agent=agent_pb(model="nope"))
    assert (await status_of(stub.UpdateAgent(bad_model)))[0] == Code.INVALID_ARGUMENT
    assert await list_ids(stub) == before


async def test_already_exists_not_found_and_code_agents(start_app: StartApp, stub_for: Any) -> None:
    stub = stub_for(await start_app(setup=code_agent))
    await stub.CreateAgent(agent_service_pb2.CreateAgentRequest(agent=agent_pb()))
    before = await list_ids(stub)

    code, message = await status_of(stub.CreateAgent(agent_service_pb2.CreateAgentRequest(agent=agent_pb(name="x"))))
    assert code == Code.ALREADY_EXISTS and "'echo'" in message
    code, message = await status_of(stub.CreateAgent(agent_service_pb2.CreateAgentRequest(agent=agent_pb("coded"))))
    assert code == Code.ALREADY_EXISTS

    for call in (
        stub.GetAgent(agent_service_pb2.GetAgentRequest(id="ghost")),
        stub.DeleteAgent(agent_service_pb2.DeleteAgentRequest(id="ghost")),
        stub.UpdateAgent(agent_service_pb2.UpdateAgentRequest(agent=agent_pb("ghost"))),
    ):
        code, message = await status_of(call)
        assert code == Code.NOT_FOUND and "'ghost'" in message

    for call in (
        stub.DeleteAgent(agent_service_pb2.DeleteAgentRequest(id="coded")),
        stub.UpdateAgent(agent_service_pb2.UpdateAgentRequest(agent=agent_pb("coded", name="Hacked"))),
    ):
        code, message = await status_of(call)
        assert code == Code.FAILED_PRECONDITION and "Python code" in message
    assert await list_ids(stub) == before


# --- runs --------------------------------------------------------------------------------------


def fake_agent(server: OpenAIServer, agent_id: str = "echo", **kw: Any) -> agent_pb2.Agent:
    return agent_pb(agent_id, base_url=server.base_url, **kw)


async def test_generate_returns_text_finish_reason_usage_steps_and_messages(
    start_app: StartApp, stub_for: Any, openai_server: Any
) -> None:
    server = openai_server([Turn.say(["Hel", "lo!"])])
    stub = stub_for(await start_app())
    await stub.CreateAgent(agent_service_pb2.CreateAgentRequest(agent=fake_agent(server)))
    response = await stub.Generate(agent_service_pb2.GenerateRequest(agent_id="echo", prompt="hello"))
    assert response.text == "Hello!"
    assert response.finish_reason == chunk_pb2.FINISH_REASON_STOP
    assert response.usage.input_tokens == 10 and response.usage.total_tokens > 10
    assert len(response.steps) == 1 and response.steps[0].text == "Hello!"
    assert response.run_id and not response.HasField("tripwire")
    assert [m.role for m in response.messages] == [message_pb2.MESSAGE_ROLE_ASSISTANT]
    sent = server.requests[0]["messages"]
    assert sent[0] == {"role": "system", "content": "You are terse."}
    assert sent[-1]["role"] == "user" and "hello" in str(sent[-1]["content"])


async def test_stream_sends_every_chunk_in_order_ending_with_finish(
    start_app: StartApp, stub_for: Any, openai_server: Any
) -> None:
    server = openai_server([Turn.say(["a", "b", "c", "d"])])
    stub = stub_for(await start_app())
    await stub.CreateAgent(agent_service_pb2.CreateAgentRequest(agent=fake_agent(server)))
    responses = [r async for r in stub.Stream(agent_service_pb2.StreamRequest(agent_id="echo", prompt="hi"))]
    chunks = [c for r in responses for c in r.chunks]
    kinds = [c.WhichOneof("chunk") for c in chunks]
    assert kinds[0] == "start" and kinds[-1] == "finish"
    assert "".join(c.text_delta.text for c in chunks if c.HasField("text_delta")) == "abcd"
    assert all(r.chunks for r in responses)
    assert chunks[-1].finish.reason == chunk_pb2.FINISH_REASON_STOP
    assert {c.run_id for c in chunks} == {chunks[0].run_id}
    assert all(getattr(c, "from") == chunk_pb2.CHUNK_FROM_AGENT for c in chunks)


async def test_stream_shows_tool_calls_and_results(start_app: StartApp, stub_for: Any, openai_server: Any) -> None:
    server = openai_server([Turn.call("get_weather", {"city": "Paris"}), Turn.say("Sunny.")])

    def setup(app: Any) -> None:
        app.add_tool(Tool("get_weather", lambda args, ctx: {"city": args["city"], "sky": "sunny"}))

    stub = stub_for(await start_app(setup=setup))
    await stub.CreateAgent(agent_service_pb2.CreateAgentRequest(agent=fake_agent(server, tools=["get_weather"])))
    chunks = [c async for r in stub.Stream(agent_service_pb2.StreamRequest(agent_id="echo", prompt="weather?"))
              for c in r.chunks]
    call = next(c.tool_call for c in chunks if c.HasField("tool_call"))
    result = next(c.tool_result for c in chunks if c.HasField("tool_result"))
    assert call.tool_name == "get_weather" and call.args.struct_value.fields["city"].string_value == "Paris"
    assert result.result.struct_value.fields["sky"].string_value == "sunny"
    assert chunks[-1].finish.reason == chunk_pb2.FINISH_REASON_STOP


class _Blocker:
    id = "blocker"

    def process_input(self, args: Any) -> None:
        args.abort("no input today", metadata={"rule": 7})


async def test_tripwire_reaches_generate_and_stream(start_app: StartApp, stub_for: Any, openai_server: Any) -> None:
    server = openai_server([])
    stub = stub_for(await start_app(setup=lambda app: app.add_processor(_Blocker())))
    agent = fake_agent(server, input_processors=[agent_pb2.ProcessorRef(id="blocker")])
    await stub.CreateAgent(agent_service_pb2.CreateAgentRequest(agent=agent))

    response = await stub.Generate(agent_service_pb2.GenerateRequest(agent_id="echo", prompt="hi"))
    assert response.finish_reason == chunk_pb2.FINISH_REASON_OTHER and response.text == ""
    assert (response.tripwire.reason, response.tripwire.processor_id) == ("no input today", "blocker")
    assert response.tripwire.metadata.struct_value.fields["rule"].number_value == 7

    chunks = [c async for r in stub.Stream(agent_service_pb2.StreamRequest(agent_id="echo", prompt="hi"))
              for c in r.chunks]
    assert [c.WhichOneof("chunk") for c in chunks][-2:] == ["tripwire", "finish"]
    assert chunks[-1].finish.reason == chunk_pb2.FINISH_REASON_OTHER
    assert server.requests == []  # the model was never called


@pytest.mark.parametrize("method", ["Generate", "Stream"])
async def test_bad_run_requests_get_clear_statuses(start_app: StartApp, stub_for: Any, method: str) -> None:
    stub = stub_for(await start_app(setup=code_agent))
    Request = agent_service_pb2.GenerateRequest if method == "Generate" else agent_service_pb2.StreamRequest
    user = message_pb2.Message(role=message_pb2.MESSAGE_ROLE_USER)
    user.content.parts.add().text.text = "hi"
    cases = [
        (Request(agent_id="ghost", prompt="hi"), Code.NOT_FOUND, "'ghost'"),
        (Request(agent_id="coded", prompt="hi", messages=[user]), Code.INVALID_ARGUMENT, "not both"),
        (Request(agent_id="coded"), Code.INVALID_ARGUMENT, "prompt or messages is required"),
        (Request(prompt="hi"), Code.INVALID_ARGUMENT, "agent_id is required"),
        (Request(agent_id="coded", messages=[message_pb2.Message()]), Code.INVALID_ARGUMENT, "messages[0].role"),
        (Request(agent_id="coded", prompt="hi", options=agent_pb2.CallOptions(max_steps=0)),
         Code.INVALID_ARGUMENT, "options.max_steps"),
        (Request(agent_id="coded", prompt="hi", options=agent_pb2.CallOptions(model="nope")),
         Code.INVALID_ARGUMENT, "provider/model"),
    ]
    for request, want, says in cases:
        call = getattr(stub, method)(request)
        if method == "Stream":
            call = _drain(call)
        code, message = await status_of(call)
        assert (code, says in message) == (want, True), message


async def _drain(call: Any) -> None:
    async for _ in call:
        pass


async def test_oversized_request_is_resource_exhausted(start_app: StartApp, stub_for: Any) -> None:
    stub = stub_for(await start_app(setup=code_agent, max_message_bytes=4096))
    request = agent_service_pb2.GenerateRequest(agent_id="coded", prompt="x" * 10_000)
    assert (await status_of(stub.Generate(request)))[0] == Code.RESOURCE_EXHAUSTED


# --- cancellation and drain --------------------------------------------------------------------


class _Gate:
    """A tool that waits until the test opens it, and records whether it was cancelled."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def __call__(self, args: Any, ctx: Any) -> str:
        self.entered.set()
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return "opened"


async def _gated(start_app: StartApp, server: OpenAIServer, **settings: Any) -> tuple[RunningApp, _Gate]:
    gate = _Gate()
    running = await start_app(setup=lambda app: app.add_tool(Tool("gate", gate)), **settings)
    async with grpc.aio.insecure_channel(running.target) as channel:
        stub = agent_service_pb2_grpc.AgentServiceStub(channel)
        await stub.CreateAgent(agent_service_pb2.CreateAgentRequest(agent=fake_agent(server, tools=["gate"])))
    return running, gate


async def test_client_cancelling_a_stream_cancels_the_run(
    start_app: StartApp, stub_for: Any, openai_server: Any
) -> None:
    server = openai_server([Turn.call("gate", {})])
    running, gate = await _gated(start_app, server)
    call = stub_for(running).Stream(agent_service_pb2.StreamRequest(agent_id="echo", prompt="go"))
    await gate.entered.wait()
    call.cancel()
    await asyncio.wait_for(gate.cancelled.wait(), 10)
    await asyncio.wait_for(running.app.agent_service.wait_idle(), 10)


async def test_shutdown_lets_in_flight_streams_finish_and_refuses_new_ones(
    start_app: StartApp, stub_for: Any, openai_server: Any
) -> None:
    server = openai_server([Turn.call("gate", {}), Turn.say("done")])
    running, gate = await _gated(start_app, server)
    stub = stub_for(running)
    call = stub.Stream(agent_service_pb2.StreamRequest(agent_id="echo", prompt="go"))
    await gate.entered.wait()

    stopping = asyncio.create_task(running.app.stop(30))
    while not running.app.agent_service.draining:
        await asyncio.sleep(0)
    async with grpc.aio.insecure_channel(running.target) as fresh:
        # While draining the server still answers: health says NOT_SERVING, new runs are refused.
        health = health_pb2_grpc.HealthStub(fresh)
        for service in ("", "treadle.v1.AgentService"):
            status = (await health.Check(health_pb2.HealthCheckRequest(service=service))).status
            assert status == health_pb2.HealthCheckResponse.NOT_SERVING
        late = agent_service_pb2_grpc.AgentServiceStub(fresh).Generate(
            agent_service_pb2.GenerateRequest(agent_id="echo", prompt="late"), timeout=10
        )
        assert await status_of(late) == (Code.UNAVAILABLE, "server is shutting down")
    gate.release.set()
    chunks = [c async for r in call for c in r.chunks]
    assert "done" in "".join(c.text_delta.text for c in chunks)
    assert chunks[-1].HasField("finish")
    await asyncio.wait_for(stopping, 10)


@pytest.mark.parametrize("method", ["Generate", "Stream"])
async def test_runs_still_going_after_the_grace_period_end_with_unavailable(
    start_app: StartApp, stub_for: Any, openai_server: Any, method: str
) -> None:
    server = openai_server([Turn.call("gate", {})])
    running, gate = await _gated(start_app, server)
    stub = stub_for(running)
    if method == "Stream":
        call = _drain(stub.Stream(agent_service_pb2.StreamRequest(agent_id="echo", prompt="go")))
    else:
        call = stub.Generate(agent_service_pb2.GenerateRequest(agent_id="echo", prompt="go"))
    pending = asyncio.ensure_future(call)
    await gate.entered.wait()
    await running.app.stop(0.05)
    code, message = await status_of(pending)
    assert (code, message) == (Code.UNAVAILABLE, "server is shutting down")
    assert gate.cancelled.is_set()


# --- start-up ----------------------------------------------------------------------------------


async def test_config_file_agents_are_listed_as_config(
    start_app: StartApp, stub_for: Any, tmp_path: Path
) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(
        "agents:\n"
        "  - id: echo\n    name: Echo\n    instructions: You are terse.\n    model: openai/gpt-4o-mini\n"
        "  - id: poet\n    model: anthropic/claude-sonnet-4-5\n"
        "    instructionMessages:\n      messages:\n        - content: Rhyme.\n"
        "          providerOptions: {anthropic: {cacheControl: {type: ephemeral}}}\n"
        "    defaultOptions: {maxSteps: 3}\n"
    )
    stub = stub_for(await start_app(config_file=path))
    agents = (await stub.ListAgents(agent_service_pb2.ListAgentsRequest())).agents
    assert [(a.id, a.source) for a in agents] == [("echo", 1), ("poet", 1)]
    poet = agents[1]
    assert poet.instruction_messages.messages[0].provider_options["anthropic"]["cacheControl"]["type"] == "ephemeral"
    assert poet.default_options.max_steps == 3


async def test_bad_config_file_names_the_file_and_agent_index(start_app: StartApp, tmp_path: Path) -> None:
    path = tmp_path / "agents.json"
    path.write_text('{"agents": [{"id": "ok", "model": "openai/gpt-4o-mini"}, {"id": "bad", "model": "nope"}]}')
    with pytest.raises(AgentFileError, match=r"agents\.json: agents\[1\] \('bad'\): .*'nope'"):
        await start_app(config_file=path)
    path.write_text('{"agents": [{"id": "x", "colour": "red"}]}')
    with pytest.raises(AgentFileError, match=r"agents\[0\].*colour"):
        await start_app(config_file=path)


async def test_without_keys_the_example_agent_runs_on_the_local_model(
    start_app: StartApp, stub_for: Any, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="treadle"):
        running = await start_app(example_agent=True)
    assert "OPENAI_API_KEY" not in caplog.text  # nothing is missing: it needs no key
    assistant = (await stub_for(running).GetAgent(agent_service_pb2.GetAgentRequest(id="assistant"))).agent
    assert (assistant.name, assistant.model) == ("Assistant", "local/smollm2-135m-instruct")
    assert assistant.instructions == "You are a helpful, concise assistant."
    lines = running.app.start_lines("127.0.0.1:0")
    assert any("runs on the embedded model local/smollm2-135m-instruct" in line
               and "export OPENAI_API_KEY" in line for line in lines), lines


@pytest.mark.parametrize(("env", "model"), [
    ({"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, "openai/gpt-4o-mini"),
    ({"OPENAI_API_KEY": "sk-x"}, "openai/gpt-4o-mini"),
    ({"ANTHROPIC_API_KEY": "sk-ant-x"}, "anthropic/claude-haiku-4-5"),
])
async def test_with_a_key_the_example_agent_runs_on_that_provider(
    start_app: StartApp, env: dict[str, str], model: str
) -> None:
    running = await start_app(example_agent=True, env=env)
    assert running.app.registry.get_agent("assistant").model == model
    assert not any("embedded model" in line for line in running.app.start_lines("127.0.0.1:0"))


async def test_an_agent_on_a_provider_without_credentials_is_warned_about(
    start_app: StartApp, caplog: pytest.LogCaptureFixture
) -> None:
    def setup(app: Any) -> None:
        app.add_agent(Agent(id="gpt", model="openai/gpt-4o-mini"))

    with caplog.at_level(logging.WARNING, logger="treadle"):
        await start_app(setup=setup)
    assert "OPENAI_API_KEY" in caplog.text and "OPENAI_BASE_URL" in caplog.text and "'gpt'" in caplog.text


async def test_agents_naming_unregistered_processors_or_tools_are_warned_about_at_start(
    start_app: StartApp, caplog: pytest.LogCaptureFixture
) -> None:
    def setup(app: Any) -> None:
        app.add_processor(_Named("here"))
        app.add_agent(Agent(id="a", model="local/smollm2-135m-instruct",
                            input_processors=[ProcessorRef("here"), ProcessorRef("no-secrets")],
                            output_processors=[ProcessorRef("redactor")], tools=["get_time"]))
        app.add_agent(Agent(id="b", model="local/smollm2-135m-instruct", input_processors=[ProcessorRef("here")]))

    with caplog.at_level(logging.WARNING, logger="treadle"):
        await start_app(setup=setup)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING
                and r.getMessage().startswith("agent ") and "cannot call tools" not in r.getMessage()]
    assert warnings == [
        "agent 'a' names processor(s) 'no-secrets', 'redactor' that this server does not have: its runs "
        "fail until a remote processor attaches under that id",
        "agent 'a' names tool(s) 'get_time' that this server does not have: calls of it fail until a "
        "remote tool attaches under that name",
    ]


class _Named:
    def __init__(self, pid: str) -> None:
        self.id = pid

    def process_input(self, args: Any) -> Any:
        return args.messages


async def test_stream_batches_chunks_that_are_already_queued_and_never_waits_for_more() -> None:
    """A run's chunks reach ``Stream`` in batches (``AgentLoop.open``): what the model sent while
    nobody read comes at once, and a read never waits for more than the first chunk."""
    from opentelemetry.trace import NoOpTracer

    from treadle.agents import Agent, CallOptions, RunRequest
    from treadle.core.chunks import Chunk, TextDelta, TextEnd, TextStart
    from treadle.core.messages import Message, SystemMessage
    from treadle.loop import AgentLoop
    from treadle.providers.base import ModelFinish
    from treadle.registry import Registry
    from treadle.testing import ScriptedModel, ScriptedModels

    more = asyncio.Event()

    class Paused(ScriptedModel):
        async def stream(self, request: Any) -> Any:
            yield Chunk.of(TextStart("t0"))
            for text in "abc":
                yield Chunk.of(TextDelta("t0", text))
            await more.wait()
            yield Chunk.of(TextDelta("t0", "d"))
            yield Chunk.of(TextEnd("t0"))
            yield Chunk("finish", ModelFinish("stop"))

    loop = AgentLoop(Registry(), ScriptedModels(Paused()), NoOpTracer())
    agent = Agent(id="a", model="scripted/a", instructions=[SystemMessage("a")])
    handle = await loop.open(agent, RunRequest([Message.user("hi")], CallOptions()))
    texts: list[list[str]] = []
    while not texts or texts[-1][-1:] != ["c"]:  # the model is paused after "c"
        batch = await handle.batch()
        assert batch, "the run ended early"
        texts.append([c.payload.text for c in batch if c.type == "text-delta"])
    assert texts[-1] == ["a", "b", "c"], "sent while nobody read: one batch"
    waiting = asyncio.ensure_future(handle.batch())
    await asyncio.sleep(0)
    assert not waiting.done(), "nothing is ready: the read waits for the next chunk"
    more.set()
    rest = await waiting
    assert rest is not None and [c.payload.text for c in rest if c.type == "text-delta"][:1] == ["d"]
    while (batch := await handle.batch()) is not None:
        rest += batch
    assert rest[-1].type == "finish"
    await handle.close()


async def test_an_agent_on_a_local_model_that_cannot_run_is_warned_about(
    start_app: StartApp, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    missing = tmp_path / "missing.gguf"

    def setup(app: Any) -> None:
        app.add_agent(Agent(id="offline", model=f"local/{missing}"))

    with caplog.at_level(logging.WARNING, logger="treadle"):
        await start_app(setup=setup)
    assert f"local/{missing} cannot run here, so runs of 'offline' will fail: " in caplog.text
    assert "no GGUF file at" in caplog.text or "needs llama-cpp-python" in caplog.text
