"""Processors an agent marks ``locked`` cannot be dropped or reordered by a caller's per-call
override (``options.inputProcessors``, also through ``ifIdle.streamOptions``), and a credential
without ``processorOverrides`` cannot override an agent's processors at all."""

from __future__ import annotations

from typing import Any

import grpc
from google.protobuf import json_format

from tests.security_env import CREDENTIALS, TOKENS, channel_for, md, secured  # noqa: F401
from tests.support import Turn
from treadle.app import TreadleApp
from treadle.core.messages import TextPart
from treadle.v1 import agent_pb2, agent_service_pb2, thread_service_pb2_grpc
from treadle.v1 import signal_pb2 as spb

Code = grpc.StatusCode


class Guard:
    """Counts what it saw; the stand-in for a PII guard the operator requires."""

    def __init__(self, id: str) -> None:
        self.id = id
        self.seen: list[str] = []

    def process_input(self, args: Any) -> Any:
        self.seen.extend(p.text for m in args.messages for p in m.content.parts if isinstance(p, TextPart))
        return args.messages


async def status_of(call: Any) -> tuple[grpc.StatusCode, str]:
    try:
        result = await call
    except grpc.aio.AioRpcError as e:
        return e.code(), e.details() or ""
    raise AssertionError(f"the call succeeded: {result!r}")


def options(refs: list[dict[str, Any]]) -> agent_pb2.CallOptions:
    return json_format.ParseDict({"inputProcessors": {"processors": refs}}, agent_pb2.CallOptions())


async def start(secured: Any, turns: int, creds: list[dict[str, Any]] | None = None) -> tuple[Any, Any, Guard, Guard]:
    guard, extra = Guard("pii-guard-local"), Guard("extra")

    def setup(app: TreadleApp) -> None:
        app.add_processor(guard)
        app.add_processor(extra)

    running, model = await secured([Turn.say(f"ok {i}") for i in range(turns)], setup=setup,
                                   **({"auth": {"credentials": creds}} if creds else {}))
    return running, model, guard, extra


async def create_locked_agent(channel: grpc.aio.Channel, base_url: str) -> None:
    agent = json_format.ParseDict({
        "id": "support-guarded", "model": "openai/test-model", "baseUrl": base_url,
        "inputProcessors": [{"id": "pii-guard-local", "locked": True}, {"id": "extra"}],
    }, agent_pb2.Agent())
    stub = agent_service_pb2_grpc_stub(channel)
    created = await stub.CreateAgent(agent_service_pb2.CreateAgentRequest(agent=agent), metadata=md("ops"))
    assert created.agent.input_processors[0].locked  # it reads back


def agent_service_pb2_grpc_stub(channel: grpc.aio.Channel) -> Any:
    from treadle.v1 import agent_service_pb2_grpc

    return agent_service_pb2_grpc.AgentServiceStub(channel)


async def test_a_locked_processor_cannot_be_dropped_or_reordered_per_call(secured, channel_for) -> None:
    running, model, guard, extra = await start(secured, 2)
    channel = channel_for(running)
    await create_locked_agent(channel, model.base_url)
    stub = agent_service_pb2_grpc_stub(channel)

    def generate(opts: agent_pb2.CallOptions | None, text: str) -> Any:
        request = agent_service_pb2.GenerateRequest(agent_id="support-guarded", prompt=text)
        if opts is not None:
            request.options.CopyFrom(opts)
        return stub.Generate(request, metadata=md("web-app"))

    for refs in ([], [{"id": "extra"}], [{"id": "extra"}, {"id": "extra"}]):
        code, message = await status_of(generate(options(refs), "my SSN is 078-05-1120"))
        assert code == Code.PERMISSION_DENIED, (refs, code, message)
        assert "processor 'pii-guard-local' is locked by agent 'support-guarded'" in message
    assert guard.seen == [] and model.requests == [] and extra.seen == []
    # Keeping it (with others around it) is the framework's override, and the agent's settings
    # of the locked one apply whatever the call says about it.
    answer = await generate(options([{"id": "extra"}, {"id": "pii-guard-local", "failurePolicy": "FAILURE_POLICY_FAIL_OPEN"}]),
                            "kept")
    assert answer.text == "ok 0" and guard.seen == ["kept"] and extra.seen == ["kept"]
    assert (await generate(None, "plain")).text == "ok 1" and guard.seen[-1] == "plain"
    # a call cannot lock anything of its own
    code, message = await status_of(generate(options([{"id": "pii-guard-local", "locked": True}]), "x"))
    assert code == Code.INVALID_ARGUMENT and "locked" in message


async def test_a_locked_processor_stays_through_if_idle_stream_options(secured, channel_for) -> None:
    running, model, guard, _ = await start(secured, 1)
    channel = channel_for(running)
    await create_locked_agent(channel, model.base_url)
    threads = thread_service_pb2_grpc.ThreadServiceStub(channel)
    where = {"resource_id": "tenant-a/alice", "thread_id": "t1"}
    if_idle = spb.IfIdle(stream_options=options([]))
    for call in (
        threads.SendMessage(spb.SendMessageRequest(agent_id="support-guarded", **where, if_idle=if_idle,
                                                   message=spb.SignalMessage(contents="drop it")), metadata=md("web-app")),
        threads.QueueMessage(spb.QueueMessageRequest(agent_id="support-guarded", **where, if_idle=if_idle,
                                                     message=spb.SignalMessage(contents="drop it")), metadata=md("web-app")),
    ):
        code, message = await status_of(call)
        assert code == Code.PERMISSION_DENIED and "locked" in message, (code, message)
    assert guard.seen == [] and model.requests == []
    assert await running.app.threads.store.list_pending() == []
    woke = await threads.SendMessage(spb.SendMessageRequest(
        agent_id="support-guarded", **where, message=spb.SignalMessage(contents="hello")), metadata=md("web-app"))
    assert woke.accepted.action == spb.SIGNAL_ACTION_WAKE
    await running.app.threads.wait_idle()
    assert any("hello" in s for s in guard.seen)


async def test_a_credential_without_processor_overrides_runs_the_agents_processors(secured, channel_for) -> None:
    creds = [dict(c, processorOverrides=False) if c["id"] == "web-app" else c for c in CREDENTIALS]
    running, model, guard, _ = await start(secured, 2, creds)
    channel = channel_for(running)
    await create_locked_agent(channel, model.base_url)
    stub = agent_service_pb2_grpc_stub(channel)
    threads = thread_service_pb2_grpc.ThreadServiceStub(channel)
    keep = options([{"id": "pii-guard-local"}])
    for call in (
        stub.Generate(agent_service_pb2.GenerateRequest(agent_id="echo", prompt="x", options=keep), metadata=md("web-app")),
        threads.SendMessage(spb.SendMessageRequest(
            agent_id="echo", resource_id="tenant-a/alice", thread_id="t2", if_idle=spb.IfIdle(stream_options=keep),
            message=spb.SignalMessage(contents="x")), metadata=md("web-app")),
    ):
        code, message = await status_of(call)
        assert code == Code.PERMISSION_DENIED and "processorOverrides" in message, (code, message)
    assert model.requests == []
    # other options still work, and another credential keeps the framework's override
    answer = await stub.Generate(agent_service_pb2.GenerateRequest(
        agent_id="support-guarded", prompt="y", options=agent_pb2.CallOptions(max_steps=2)), metadata=md("web-app"))
    assert answer.text == "ok 0" and guard.seen == ["y"]
    answer = await stub.Generate(agent_service_pb2.GenerateRequest(agent_id="echo", prompt="z", options=keep),
                                 metadata=md("ops"))
    assert answer.text == "ok 1" and guard.seen == ["y", "z"]
