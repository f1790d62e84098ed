"""Who runs a thread, in one server (SQLite, then PostgreSQL): every run on a thread, however it
started, is stopped by ``AbortRun``; a run that lost its thread's lease writes nothing more.

The lease is taken from the run the way another replica would (a new epoch in
``thread_leases``), so that what the run does next is what a replica that was paused past its
lease does. The multi-process cases (SIGSTOP, SIGKILL, two replicas) are in
``test_threads_fencing_replicas.py``.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from datetime import timedelta
from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from sqlalchemy import text

from tests.support import Turn
from tests.test_thread_signals import THREAD, threads, user_texts  # noqa: F401 - threads is a fixture
from treadle.core.messages import utcnow
from treadle.memory.sql import micros
from treadle.v1 import agent_service_pb2, agent_service_pb2_grpc, thread_service_pb2

MEMORY = {"memory": {"resource": THREAD["resourceId"], "threadId": THREAD["threadId"]}}


def held(entered: threading.Event, release: threading.Event, turn: Turn) -> Any:
    def play(_: dict[str, Any]) -> Turn:
        entered.set()
        assert release.wait(30), "the test never released the turn"
        return turn

    return play


async def wait_for(event: threading.Event) -> None:
    assert await asyncio.to_thread(event.wait, 30)


async def listed(t: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """The thread's messages and its runs' statuses, through ThreadService."""
    request = thread_service_pb2.ListMessagesRequest(resource_id=THREAD["resourceId"], thread_id=THREAD["threadId"])
    messages = json_format.MessageToDict(await t.stub.ListMessages(request)).get("messages", [])
    runs = json_format.MessageToDict(await t.stub.ListRuns(thread_service_pb2.ListRunsRequest(
        resource_id=THREAD["resourceId"], thread_id=THREAD["threadId"]))).get("runs", [])
    return messages, [r["status"] for r in runs]


async def settled(t: Any) -> list[str]:
    """The run statuses once no run of the thread is recorded ``running`` (bounded)."""
    deadline = time.monotonic() + 30
    while True:
        _, statuses = await listed(t)
        if "RUN_STATUS_RUNNING" not in statuses or time.monotonic() > deadline:
            return statuses
        await asyncio.sleep(0.05)


def _stream(t: Any, prompt: str) -> Any:
    stub = agent_service_pb2_grpc.AgentServiceStub(t.channel)
    return stub.Stream(json_format.ParseDict({"agentId": "echo", "prompt": prompt, "options": MEMORY},
                                             agent_service_pb2.StreamRequest()))


def _generate(t: Any, prompt: str) -> Any:
    stub = agent_service_pb2_grpc.AgentServiceStub(t.channel)
    return stub.Generate(json_format.ParseDict({"agentId": "echo", "prompt": prompt, "options": MEMORY},
                                               agent_service_pb2.GenerateRequest()))


@pytest.mark.parametrize("by", ["thread", "run_id"])
async def test_abort_run_stops_a_generate_run_on_a_thread(threads: Any, by: str) -> None:  # noqa: F811
    entered, release = threading.Event(), threading.Event()
    t, server = await threads([held(entered, release, Turn.say("never stored")), Turn.say("next")])
    watch = await t.subscribe(**{"resource_id": THREAD["resourceId"], "thread_id": THREAD["threadId"]})
    call = _generate(t, "hi")
    try:
        await wait_for(entered)
        run_id = (await t.call("GetActiveRun", THREAD))["activeRun"]["runId"]
        target = THREAD if by == "thread" else {"runId": run_id}
        aborted = await t.call("AbortRun", target)
        assert aborted == {"aborted": True, "runId": run_id}
        with pytest.raises(grpc.aio.AioRpcError) as stopped:
            await call
        assert stopped.value.code() == grpc.StatusCode.ABORTED and "aborted" in (stopped.value.details() or "")
    finally:
        release.set()
    await watch.idle_after(run_id)
    assert any(c.HasField("abort") for c in watch.chunks if c.run_id == run_id)
    messages, _ = await listed(t)
    assert "never stored" not in json.dumps(messages)
    assert await settled(t) == ["RUN_STATUS_ABORTED"]
    assert (await t.call("GetActiveRun", THREAD)) == {"activeRun": {}}
    # The thread is free: the next message wakes a run of its own.
    woke = await t.call("SendMessage", {"agentId": "echo", **THREAD, "message": {"contents": "again"}})
    assert woke["accepted"]["action"] == "SIGNAL_ACTION_WAKE"
    await watch.idle_after(woke["accepted"]["runId"])
    assert watch.text(woke["accepted"]["runId"]) == "next"


async def test_abort_run_stops_a_stream_run_on_a_thread(threads: Any) -> None:  # noqa: F811
    entered, release = threading.Event(), threading.Event()
    t, server = await threads([held(entered, release, Turn.say("never stored"))])
    call = _stream(t, "hi")
    try:
        await wait_for(entered)
        run_id = (await t.call("GetActiveRun", THREAD))["activeRun"]["runId"]
        assert await t.call("AbortRun", {"runId": run_id}) == {"aborted": True, "runId": run_id}
        chunks = [c for response in [r async for r in call] for c in response.chunks]
    finally:
        release.set()
    assert chunks[-1].HasField("abort"), "the caller's stream ends with the abort"
    messages, _ = await listed(t)
    assert "never stored" not in json.dumps(messages)
    assert await settled(t) == ["RUN_STATUS_ABORTED"]


def steal_lease(app: Any) -> Any:
    """Take the thread's lease as another replica would (its epoch grows): what a replica sees
    after it was paused past its lease and another took the thread over."""
    far = micros(utcnow() + timedelta(minutes=5))

    def work(conn: Any) -> int:
        return int(conn.execute(text(
            "UPDATE thread_leases SET owner = 'another-replica', run_id = 'run_other', "
            "epoch = epoch + 1, expires_at = :far WHERE resource_id = :r AND thread_id = :t"),
            {"far": far, "r": THREAD["resourceId"], "t": THREAD["threadId"]}).rowcount)

    return app.store.engine.write(work)


@pytest.mark.parametrize("started", ["wake", "generate", "stream"])
async def test_a_run_that_lost_its_lease_stores_nothing_more(threads: Any, started: str) -> None:  # noqa: F811
    entered, release = threading.Event(), threading.Event()
    t, server = await threads([held(entered, release, Turn.say("the lost runner's reply"))])
    call: Any = None
    if started == "wake":
        await t.call("SendMessage", {"agentId": "echo", **THREAD, "message": {"contents": "hi"}})
    else:
        call = (_generate if started == "generate" else _stream)(t, "hi")
    try:
        await wait_for(entered)
        assert await steal_lease(t.running.app) == 1
    finally:
        release.set()
    if started == "generate":
        answer = await call
        assert "no longer holds the lease" in answer.error.message, answer
    elif started == "stream":
        chunks = [c for response in [r async for r in call] for c in response.chunks]
        errors = [c.error.message for c in chunks if c.HasField("error")]
        assert errors and "no longer holds the lease" in errors[0], chunks
    # The reply came back after the lease was lost: the write is refused, the run ends.
    deadline = time.monotonic() + 30
    while t.running.app.threads.active_run((THREAD["resourceId"], THREAD["threadId"])) is not None:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
    messages, statuses = await listed(t)
    assert "the lost runner's reply" not in json.dumps(messages)
    assert len(messages) == 1 and messages[0]["role"] != "MESSAGE_ROLE_ASSISTANT", messages
    assert statuses == ["RUN_STATUS_RUNNING"], "its end is not its to record: the new owner reconciles it"



class _Unreachable:
    """A store whose database cannot be reached: every renewal fails."""

    async def renew_lease(self, lease: Any) -> bool:
        raise OSError("connection refused")


async def test_a_runner_that_cannot_renew_stops_before_its_lease_ends() -> None:
    from treadle.signals.ownership import keep_lease
    from treadle.signals.store import Lease

    ttl = 1.0
    lease = Lease(("u1", "t1"), "replica-a", "run_1", "echo", utcnow() + timedelta(seconds=ttl), 1)
    stopped: list[Any] = []
    await asyncio.wait_for(keep_lease(
        _Unreachable(), lambda: lease, lambda _: None, ttl, utcnow,  # type: ignore[arg-type]
        lambda reason: stopped.append((utcnow(), reason))), 10)
    [(when, reason)] = stopped
    assert when < lease.expires_at, "stopped while the lease still held: before another replica may take it"
    assert "could not be renewed" in reason


async def test_a_runner_whose_lease_was_taken_stops_at_its_next_renewal() -> None:
    from treadle.signals.ownership import keep_lease
    from treadle.signals.store import InMemorySignalStore, Lease

    store, now, ttl = InMemorySignalStore(), utcnow(), 0.3
    mine = await store.acquire_lease(Lease(("u1", "t1"), "replica-a", "run_1", "echo", now + timedelta(seconds=ttl)), now)
    later = now + timedelta(seconds=ttl * 2)  # expired: another replica takes it, a new epoch
    theirs = await store.acquire_lease(Lease(("u1", "t1"), "replica-b", "run_2", "echo", later + timedelta(seconds=30)), later)
    assert theirs.owner == "replica-b" and theirs.epoch == mine.epoch + 1
    stopped: list[str] = []
    await asyncio.wait_for(keep_lease(store, lambda: mine, lambda _: None, ttl, utcnow, stopped.append), 10)
    assert len(stopped) == 1 and "another replica" in stopped[0]
    assert (await store.get_lease(("u1", "t1"))) == theirs, "the new owner's lease is untouched"


# --- no model call without the thread -----------------------------------------------------------


def expire_lease(app: Any) -> Any:
    """Make the thread's lease expire now, its epoch unchanged: what the store holds when the
    run's replica stalled past its renewals and no other replica has taken the thread yet."""
    now = micros(utcnow())

    def work(conn: Any) -> int:
        return int(conn.execute(text(
            "UPDATE thread_leases SET expires_at = :now WHERE resource_id = :r AND thread_id = :t"),
            {"now": now, "r": THREAD["resourceId"], "t": THREAD["threadId"]}).rowcount)

    return app.store.engine.write(work)


async def test_a_run_that_stalled_past_its_lease_renews_it_before_its_next_model_call(threads: Any) -> None:  # noqa: F811
    """A model call is the one thing a run does that no fence can take back: a run whose lease
    expired while its replica stalled (nobody has taken the thread yet) renews it before it asks
    the model again, so that no other replica can start a run on the thread during that call."""
    from dataclasses import replace as copied

    from treadle.tools import Tool

    key = (THREAD["resourceId"], THREAD["threadId"])
    loop = asyncio.get_running_loop()
    entered, release = threading.Event(), threading.Event()
    at_call: list[tuple[Any, Any]] = []

    async def gate(args: Any, ctx: Any) -> dict[str, Any]:
        entered.set()
        assert await asyncio.to_thread(release.wait, 30), "the test never released the tool"
        return {"ok": True}

    def second_call(_: dict[str, Any]) -> Turn:
        # The thread's lease as every replica sees it, when the model is asked.
        lease = asyncio.run_coroutine_threadsafe(t.running.app.threads.store.get_lease(key), loop).result(10)
        at_call.append((utcnow(), lease))
        return Turn.say("the second step's reply")

    t, server = await threads([Turn.call("gate", {}), second_call],
                              setup=lambda app: app.add_tool(Tool("gate", gate)), tools=["gate"])
    responses = asyncio.ensure_future(_all(_stream(t, "hi")))
    try:
        await wait_for(entered)
        run = t.running.app.threads.active_run(key)
        assert run is not None and run.lease is not None
        assert await expire_lease(t.running.app) == 1
        run.lease = copied(run.lease, expires_at=utcnow())  # its renewals did not run: a stall
    finally:
        release.set()
    chunks = [c for response in await responses for c in response.chunks]
    assert not [c for c in chunks if c.HasField("error")], chunks
    [(when, lease)] = at_call
    assert lease is not None and lease.run_id == run.run_id and lease.expires_at > when, (
        "the lease was live while the model was asked: no other replica could take the thread")
    messages, _ = await listed(t)
    assert "the second step's reply" in json.dumps(messages)
    assert await settled(t) == ["RUN_STATUS_FINISHED"]


async def _all(call: Any) -> list[Any]:
    return [r async for r in call]


async def test_the_lease_check_before_a_model_call() -> None:
    from treadle.memory.fence import LeaseLostError
    from treadle.signals.ownership import check_lease
    from treadle.signals.store import InMemorySignalStore, Lease

    store, now, ttl = InMemorySignalStore(), utcnow(), 30.0
    key = ("u1", "t1")
    held = await store.acquire_lease(Lease(key, "replica-a", "run_1", "echo", now + timedelta(seconds=ttl)), now)
    kept: list[Any] = []
    # Renewed on time: nothing to do, nothing asked of the store.
    await check_lease(store, lambda: held, kept.append, ttl, utcnow)
    assert kept == [] and await store.get_lease(key) == held
    # Stalled past its end, nobody took it: renewed first (the same epoch), then the call goes on.
    stale = held
    await check_lease(store, lambda: stale, kept.append, ttl, lambda: now + timedelta(seconds=ttl + 1))
    [renewed] = kept
    assert renewed.epoch == held.epoch and renewed.expires_at > held.expires_at
    assert (await store.get_lease(key)).expires_at == renewed.expires_at
    # Taken by another replica meanwhile (a new epoch): no model call.
    later = renewed.expires_at + timedelta(seconds=1)
    theirs = await store.acquire_lease(Lease(key, "replica-b", "run_2", "echo", later + timedelta(seconds=ttl)), later)
    with pytest.raises(LeaseLostError):
        await check_lease(store, lambda: renewed, kept.append, ttl, lambda: later)
    assert await store.get_lease(key) == theirs, "the new owner's lease is untouched"
