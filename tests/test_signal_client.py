"""The Python client's signal calls as a user makes them, bad input that stores nothing, and an
agent's notification delivery policy over the API. Runs go to the loopback OpenAI server; a run
is held active by a scripted turn the test releases; waiting is on subscription events.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from tests.conftest import StartApp
from tests.support import OpenAIServer, Turn
from tests.support.databases import Database
from tests.test_thread_signals import user_texts
from treadle.agents import Agent
from treadle.v1 import agent_service_pb2, agent_service_pb2_grpc, notification_pb2, signal_pb2
from treadle_client import AgentClient

Code = grpc.StatusCode
RES, THR = "user-1", "thread-1"


def held(entered: threading.Event, release: threading.Event, turn: Turn) -> Callable[[Any], Turn]:
    def play(_: Any) -> Turn:
        entered.set()
        assert release.wait(30), "the test never released the turn"
        return turn

    return play


async def start(database: Database, start_app: StartApp, server: OpenAIServer) -> Any:
    return await start_app(setup=lambda app: app.add_agent(
        Agent(id="echo", model="openai/gpt-4o-mini", base_url=server.base_url)), **database.settings)


async def runs_ended(subscription: Any, count: int) -> list[Any]:
    """Chunks until ``count`` runs have finished on the thread."""
    chunks: list[Any] = []
    async for chunk in subscription:
        chunks.append(chunk)
        if sum(1 for c in chunks if c.HasField("finish")) == count:
            break
    return chunks


async def test_every_signal_call_of_the_python_client(
    database: Database, start_app: StartApp, openai_server: Callable[..., OpenAIServer]
) -> None:
    entered, release = threading.Event(), threading.Event()
    server = openai_server([held(entered, release, Turn.say("busy")), Turn.say("took it all in"), Turn.say("later")])
    running = await start(database, start_app, server)
    async with AgentClient(running.target) as client:
        subscription = await client.subscribe_to_thread(RES, THR)
        assert subscription.active_run_id == ""
        woke = await client.send_message("echo", {"contents": "start", "attributes": {"name": "Ada"}},
                                         resource_id=RES, thread_id=THR, if_idle={"streamOptions": {"maxSteps": 3}})
        assert woke.accepted.action == signal_pb2.SIGNAL_ACTION_WAKE
        run_id = woke.accepted.run_id
        try:
            assert await _wait(entered)
            assert await client.get_active_run(RES, THR) == run_id
            reminder = await client.send_signal("echo", {"type": "reactive", "contents": "be brief"}, run_id=run_id)
            assert (reminder.accepted.action, reminder.accepted.run_id) == (signal_pb2.SIGNAL_ACTION_DELIVER, run_id)
            assert reminder.signal.tag_name == "system-reminder"
            state = await client.send_state_signal("echo", {"id": "editor", "cacheKey": "f1", "contents": "main.py open"},
                                                   resource_id=RES, thread_id=THR)
            assert state.accepted.action == signal_pb2.SIGNAL_ACTION_DELIVER and state.version == 1
            note = await client.send_notification_signal(
                "echo", {"source": "pager", "kind": "incident", "summary": "Site down",
                         "priority": "NOTIFICATION_PRIORITY_URGENT"}, resource_id=RES, thread_id=THR)
            assert note.decision.action == notification_pb2.NOTIFICATION_ACTION_DELIVER
            assert note.run_id == run_id and note.accepted.action == signal_pb2.SIGNAL_ACTION_DELIVER
            queued = await client.queue_message("echo", "afterwards", resource_id=RES, thread_id=THR,
                                                attributes={"name": "Bo"},
                                                if_active={"attributes": {"delivery": "queued"}})
            assert queued.accepted.action == signal_pb2.SIGNAL_ACTION_PERSIST
        finally:
            release.set()
        chunks = await runs_ended(subscription, 2)
        await running.app.threads.wait_idle()
        texts = [c.text_delta.text for c in chunks if c.HasField("text_delta")]
        assert "".join(texts) == "busytook it all inlater"
        assert user_texts(server.requests[1])[1:] == [
            "<system-reminder>be brief</system-reminder>", "<state>main.py open</state>",
            user_texts(server.requests[1])[3],
        ]
        assert user_texts(server.requests[1])[3].endswith(">Site down</notification>")
        assert user_texts(server.requests[2])[-1] == '<user name="Bo" delivery="queued">afterwards</user>'
        delivered = await client.list_notifications(RES, THR, statuses=[signal_pb2.NOTIFICATION_STATUS_DELIVERED])
        assert [r.summary for r in delivered] == ["Site down"]
        assert await client.list_notifications(RES, THR, statuses=[signal_pb2.NOTIFICATION_STATUS_PENDING]) == []
        assert await client.get_active_run(RES, THR) == ""
        assert await subscription.abort() is False  # nothing is running
        subscription.unsubscribe()
        assert [c async for c in subscription] == []  # the iteration ends quietly


async def test_abort_through_the_subscription_and_by_run_id(
    database: Database, start_app: StartApp, openai_server: Callable[..., OpenAIServer]
) -> None:
    entered, release = threading.Event(), threading.Event()
    server = openai_server([held(entered, release, Turn.say("never shown"))])
    running = await start(database, start_app, server)
    async with AgentClient(running.target) as client:
        subscription = await client.subscribe_to_thread(RES, THR)
        woke = await client.send_message("echo", "go", resource_id=RES, thread_id=THR)
        try:
            assert await _wait(entered)
            assert await subscription.abort() is True
        finally:
            release.set()
        chunks = await _until_abort(subscription)
        assert chunks[-1].HasField("abort") and chunks[-1].run_id == woke.accepted.run_id
        assert await client.abort_run(woke.accepted.run_id) is False, "it has ended"
        subscription.unsubscribe()


async def test_bad_signal_input_is_invalid_argument_and_stores_nothing(
    database: Database, start_app: StartApp, openai_server: Callable[..., OpenAIServer]
) -> None:
    server = openai_server([])
    running = await start(database, start_app, server)
    thread = {"resource_id": RES, "thread_id": THR}
    async with AgentClient(running.target) as client:
        calls = [
            client.send_signal("echo", {"type": "bogus", "contents": "x"}, **thread),
            client.send_signal("echo", {"type": "notification", "tagName": "1bad", "contents": "x"}, **thread),
            client.send_message("echo", "x", attributes={"bad name": "v"}, **thread),
            client.send_message("echo", "x", resource_id=RES),  # a thread needs both ids
            client.queue_message("echo", "x", thread_id=THR),
            client.send_notification_signal("echo", {"kind": "ci", "summary": "no source"}, **thread),
            client.send_notification_signal("echo", {"source": "github", "kind": "ci"}, **thread),
            client.send_notification_signal("echo", {"source": "github", "kind": "ci", "summary": "s"},
                                            resource_id=RES, thread_id=""),
            client.list_notifications(RES, ""),
            client.get_active_run("", THR),
            client.send_state_signal("echo", {"id": "browser", "mode": "STATE_MODE_DELTA"}, **thread),
            client.send_message("echo", "x", resource_id=RES, thread_id="t" * 256),  # the store keeps 255
            client.send_notification_signal("echo", {"source": "github", "kind": "ci", "summary": "s"},
                                            resource_id="u" * 256, thread_id=THR),
        ]
        for call in calls:
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await call
            assert info.value.code() == Code.INVALID_ARGUMENT, info.value.details()
            assert info.value.details()
        assert await client.list_notifications(RES, THR) == []
        assert await client.get_active_run(RES, THR) == ""
        assert await running.app.threads.store.list_pending() == []
    assert server.requests == []


async def test_a_delivery_policy_over_the_api_round_trips_and_bad_policies_are_refused(
    database: Database, start_app: StartApp, openai_server: Callable[..., OpenAIServer]
) -> None:
    server = openai_server([])
    running = await start(database, start_app, server)
    policy = {"deliveryPolicy": {
        "default": {"action": "NOTIFICATION_ACTION_DEFER"},
        "priorities": {"urgent": {"action": "NOTIFICATION_ACTION_DELIVER"}},
        "sources": {"email": {"action": "NOTIFICATION_ACTION_SUMMARIZE", "delay": "1800s"}},
        "decide": "support",
    }}
    agent = {"id": "support", "model": "openai/gpt-4o-mini", "notifications": policy}
    async with grpc.aio.insecure_channel(running.target) as channel:
        stub = agent_service_pb2_grpc.AgentServiceStub(channel)
        await stub.CreateAgent(json_format.ParseDict({"agent": agent}, agent_service_pb2.CreateAgentRequest()))
        got = await stub.GetAgent(agent_service_pb2.GetAgentRequest(id="support"))
        assert json_format.MessageToDict(got.agent.notifications) == policy
        bad = [
            ({"priorities": {"someday": {"action": "NOTIFICATION_ACTION_DELIVER"}}}, "someday"),
            ({"sources": {"email": {}}}, "action is required"),
            ({"default": {"action": "NOTIFICATION_ACTION_DELIVER", "delay": "-5s"}}, "must not be negative"),
        ]
        for i, (rules, why) in enumerate(bad):
            request = json_format.ParseDict({"agent": {
                "id": f"bad-{i}", "model": "openai/gpt-4o-mini", "notifications": {"deliveryPolicy": rules}}},
                agent_service_pb2.CreateAgentRequest())
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await stub.CreateAgent(request)
            assert info.value.code() == Code.INVALID_ARGUMENT and why in (info.value.details() or ""), info.value.details()
        listed = await stub.ListAgents(agent_service_pb2.ListAgentsRequest())
        assert sorted(a.id for a in listed.agents) == ["echo", "support"]


async def _wait(event: threading.Event) -> bool:
    import asyncio

    return await asyncio.to_thread(event.wait, 30)


async def _until_abort(subscription: Any) -> list[Any]:
    chunks: list[Any] = []
    async for chunk in subscription:
        chunks.append(chunk)
        if chunk.HasField("abort"):
            break
    return chunks


async def test_a_retried_call_with_its_request_id_is_answered_once_and_applied_once(
    database: Database, start_app: StartApp, openai_server: Callable[..., OpenAIServer]
) -> None:
    """What a client does after UNAVAILABLE: the same call again with the same ``request_id``."""
    server = openai_server([Turn.say("hello back")])
    running = await start(database, start_app, server)
    async with AgentClient(running.target) as client:
        await client.create_thread(RES, THR, request_id="create-1")
        again = await client.create_thread(RES, THR, request_id="create-1")  # not ALREADY_EXISTS
        assert again.id == THR
        subscription = await client.subscribe_to_thread(RES, THR)
        first = await client.send_message("echo", "only once", resource_id=RES, thread_id=THR, request_id="send-1")
        assert len(await runs_ended(subscription, 1)) > 0
        retried = await client.send_message("echo", "only once", resource_id=RES, thread_id=THR, request_id="send-1")
        assert retried == first and first.accepted.action == signal_pb2.SIGNAL_ACTION_WAKE
        texts = [m.content.parts[0].text.text for m in await client.list_messages(RES, THR)]
        assert texts == ["only once", "hello back"]
        assert len(server.requests) == 1
        other = await client.send_message("echo", "only once", resource_id=RES, thread_id=THR, request_id="send-2",
                                          if_idle={"behavior": "IDLE_BEHAVIOR_PERSIST"})
        assert other.signal.id != first.signal.id  # another id is another call
