"""What one tenant can do to the others with requests its scope allows: every path that starts a
run (wakes, queued messages, notification deliveries) is held to the agents scope and the run
limits, counted against the credential that caused it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from tests.security_env import TOKENS, channel_for, md, secured  # noqa: F401
from tests.support import Turn
from treadle.v1 import signal_pb2 as spb
from treadle.v1 import thread_service_pb2 as tpb
from treadle.v1 import agent_service_pb2, thread_service_pb2_grpc
from treadle_client import AgentClient

Code = grpc.StatusCode


async def status_of(call: Any) -> tuple[grpc.StatusCode, str]:
    try:
        result = await call
    except grpc.aio.AioRpcError as e:
        return e.code(), e.details() or ""
    raise AssertionError(f"the call succeeded: {result!r}")


def gates(n: int) -> tuple[list[threading.Event], list[threading.Event], list[Callable[[Any], Turn]]]:
    """``n`` model turns, each answering only when its release is set (entered is set first)."""
    entered = [threading.Event() for _ in range(n)]
    release = [threading.Event() for _ in range(n)]

    def turn(i: int) -> Callable[[Any], Turn]:
        def held(_: Any) -> Turn:
            entered[i].set()
            assert release[i].wait(30)
            return Turn.say(f"done {i}")
        return held

    return entered, release, [turn(i) for i in range(n)]


def thread(name: str) -> dict[str, str]:
    return {"resource_id": "tenant-a/alice", "thread_id": name}


def wakes(agent_id: str, where: dict[str, str], text: str = "hi") -> dict[str, Any]:
    """One request per method that can start a run, in proto form."""
    return {
        "SendMessage": spb.SendMessageRequest(agent_id=agent_id, **where, message=spb.SignalMessage(contents=text)),
        "QueueMessage": spb.QueueMessageRequest(agent_id=agent_id, **where, message=spb.SignalMessage(contents=text)),
        "SendSignal": spb.SendSignalRequest(agent_id=agent_id, **where,
                                            signal=spb.Signal(type="user", contents=text)),
        "SendStateSignal": spb.SendStateSignalRequest(agent_id=agent_id, **where,
                                                      state=spb.StateSignal(id="browser", cache_key=text, contents=text)),
        "SendNotificationSignal": spb.SendNotificationSignalRequest(
            agent_id=agent_id, **where, notification=spb.Notification(
                source="ci", kind="build", summary=text, priority=spb.NOTIFICATION_PRIORITY_URGENT)),
    }


async def test_every_signal_path_that_wakes_a_run_needs_the_agent_in_scope(secured, channel_for) -> None:
    running, model = await secured()
    stub = thread_service_pb2_grpc.ThreadServiceStub(channel_for(running))
    for method, request in wakes("secret", thread("t1")).items():
        code, message = await status_of(getattr(stub, method)(request, metadata=md("web-app")))
        assert code == Code.PERMISSION_DENIED and "agent 'secret'" in message, (method, code, message)
    code, _ = await status_of(stub.ListRuns(tpb.ListRunsRequest(**thread("t1")), metadata=md("ops")))
    assert code == Code.NOT_FOUND and model.requests == []  # not even the thread was made
    assert await running.app.threads.store.list_pending() == []


async def test_queueing_onto_another_agents_run_needs_that_agent(secured, channel_for) -> None:
    entered, release, turns = gates(1)
    running, model = await secured(turns)
    stub = thread_service_pb2_grpc.ThreadServiceStub(channel_for(running))
    await stub.SendMessage(wakes("secret", thread("t1"))["SendMessage"], metadata=md("ops"))
    try:
        assert await asyncio.to_thread(entered[0].wait, 30)
        code, message = await status_of(stub.QueueMessage(spb.QueueMessageRequest(
            **thread("t1"), message=spb.SignalMessage(contents="again")), metadata=md("web-app")))
        assert code == Code.PERMISSION_DENIED and "agent 'secret'" in message
    finally:
        release[0].set()
    await running.app.threads.wait_idle()
    assert len(model.requests) == 1 and await running.app.threads.store.list_pending() == []


@pytest.mark.parametrize("method", ["SendMessage", "QueueMessage", "SendSignal", "SendStateSignal",
                                    "SendNotificationSignal"])
async def test_wakes_count_against_the_waking_credentials_run_limit(secured, channel_for, method: str) -> None:
    entered, release, turns = gates(2)
    running, model = await secured(turns, limits={"maxConcurrentRunsPerCredential": 1, "maxConcurrentRuns": 2})
    stub = thread_service_pb2_grpc.ThreadServiceStub(channel_for(running))
    state_signal = method == "SendStateSignal"
    if state_signal:  # a state signal goes to an existing thread only (the others create theirs)
        for name in ("t1", "t2", "t3", "t4"):
            await stub.CreateThread(tpb.CreateThreadRequest(thread=tpb.Thread(id=name, **{
                k: v for k, v in thread(name).items() if k == "resource_id"})), metadata=md("ops"))
    try:
        first = await getattr(stub, method)(wakes("echo", thread("t1"))[method], metadata=md("web-app"))
        assert await asyncio.to_thread(entered[0].wait, 30), first
        # the credential's one run is busy: another wake, or a Generate, is refused, nothing stored
        code, message = await status_of(getattr(stub, method)(wakes("echo", thread("t2"))[method],
                                                               metadata=md("web-app")))
        assert code == Code.RESOURCE_EXHAUSTED and "maxConcurrentRunsPerCredential" in message, (code, message)
        async with AgentClient(running.target, token=TOKENS["web-app"]) as web:
            code, message = await status_of(web.generate("echo", "hi"))
            assert code == Code.RESOURCE_EXHAUSTED and "maxConcurrentRunsPerCredential" in message
        if state_signal:
            listed = await stub.ListMessages(tpb.ListMessagesRequest(**thread("t2")), metadata=md("ops"))
            assert list(listed.messages) == []
        else:
            code, _ = await status_of(stub.ListMessages(tpb.ListMessagesRequest(**thread("t2")),
                                                        metadata=md("ops")))
            assert code == Code.NOT_FOUND
        # another credential has its own share, up to the server's total
        await getattr(stub, method)(wakes("echo", thread("t3"))[method], metadata=md("ops"))
        assert await asyncio.to_thread(entered[1].wait, 30)
        code, message = await status_of(getattr(stub, method)(wakes("echo", thread("t4"))[method],
                                                               metadata=md("ops")))
        assert code == Code.RESOURCE_EXHAUSTED and "maxConcurrentRuns)" in message, (code, message)
    finally:
        for event in release:
            event.set()
    await running.app.threads.wait_idle()
    assert len(model.requests) == 2
    assert running.app.gate.runs_in_flight == 0


async def test_a_queued_run_waits_for_its_credentials_slot_and_then_runs(secured, channel_for) -> None:
    entered, release, turns = gates(3)
    running, model = await secured(turns, limits={"maxConcurrentRunsPerCredential": 1})
    stub = thread_service_pb2_grpc.ThreadServiceStub(channel_for(running))
    runtime = running.app.threads
    try:
        await stub.SendMessage(wakes("echo", thread("t1"))["SendMessage"], metadata=md("ops"))
        assert await asyncio.to_thread(entered[0].wait, 30)
        await stub.SendMessage(wakes("echo", thread("t2"))["SendMessage"], metadata=md("web-app"))
        assert await asyncio.to_thread(entered[1].wait, 30)
        queued = await stub.QueueMessage(wakes("echo", thread("t1"), "queued by web-app")["QueueMessage"],
                                         metadata=md("web-app"))
        assert queued.accepted.action == spb.SIGNAL_ACTION_PERSIST
        release[0].set()  # ops' run on t1 ends; web-app's queued run would be its second
        for _ in range(300):
            if (await stub.GetActiveRun(spb.GetActiveRunRequest(**thread("t1")), metadata=md("ops"))
                    ).active_run.run_id == "":
                break
            await asyncio.sleep(0.05)
        async with runtime._locks[("tenant-a/alice", "t1")]:  # the ended run's hand-over is done
            pass
        assert running.app.gate.runs["web-app"] == 1 and not entered[2].is_set()
        assert [p.kind for p in await runtime.store.list_pending()] == ["queued"]
        release[1].set()  # web-app's slot frees: its queued run starts
        assert await asyncio.to_thread(entered[2].wait, 30)
    finally:
        for event in release:
            event.set()
    await runtime.wait_idle()
    for _ in range(300):
        if running.app.gate.runs_in_flight == 0 and not await runtime.store.list_pending():
            break
        await asyncio.sleep(0.05)
    assert "queued by web-app" in str(model.requests[2])
    assert await runtime.store.list_pending() == []


async def test_a_subscriber_that_does_not_read_is_cut_off_and_its_backlog_freed(secured, channel_for) -> None:
    deltas = ["y" * 10_000] * 800  # 8 MB of text, far past the transport's own buffers
    running, model = await secured([Turn.say(deltas), Turn.say("second")],
                                   limits={"maxSubscriberBacklogBytes": 256 << 10})
    stub = thread_service_pb2_grpc.ThreadServiceStub(channel_for(running))
    key = ("tenant-a/alice", "t1")
    slow = stub.SubscribeToThread(spb.SubscribeToThreadRequest(**thread("t1")), metadata=md("web-app"))
    assert (await slow.read()).HasField("active_run")  # subscribed; from now on it reads nothing
    assert running.app.threads.hub.subscribers(key) == 1
    first = await stub.SendMessage(wakes("echo", thread("t1"))["SendMessage"], metadata=md("web-app"))
    await running.app.threads.wait_idle()
    assert running.app.threads.hub.subscribers(key) == 0  # cut off: its backlog is gone with it
    code = details = None
    try:
        while await slow.read() is not grpc.aio.EOF:
            pass
    except grpc.aio.AioRpcError as e:
        code, details = e.code(), e.details()
    assert code == Code.RESOURCE_EXHAUSTED and "limits.maxSubscriberBacklogBytes" in (details or "")
    # the run itself was not slowed or failed by its slow subscriber
    runs = await stub.ListRuns(tpb.ListRunsRequest(**thread("t1")), metadata=md("web-app"))
    assert [(r.id, r.status) for r in runs.runs] == [(first.accepted.run_id, tpb.RUN_STATUS_FINISHED)]
    # a subscriber that keeps up gets its thread's chunks
    reader = stub.SubscribeToThread(spb.SubscribeToThreadRequest(**thread("t1")), metadata=md("web-app"))
    await reader.read()
    await stub.SendMessage(wakes("echo", thread("t1"), "again")["SendMessage"], metadata=md("web-app"))
    text = ""
    while "second" not in text:
        response = await asyncio.wait_for(reader.read(), 30)
        text += "".join(c.text_delta.text for c in response.chunks if c.HasField("text_delta"))
    reader.cancel()
    await running.app.threads.wait_idle()
