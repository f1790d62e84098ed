"""Two thread runtimes in one process on one store: the replica logic (lease, forwarded signals,
chunks for another replica's subscribers, a lease that is not renewed) without PostgreSQL, on
the in-memory store and the in-process notify channel that ``treadle serve`` on SQLite uses.
A scripted model plays the runs; a tool that waits for the test holds a run active.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from pathlib import Path

import pytest
from opentelemetry.trace import NoOpTracer

from treadle.agents import Agent
from treadle.wire.data import chunk_from_proto, chunk_to_proto
from treadle.core.chunks import Chunk
from treadle.loop import AgentLoop
from treadle.memory import database_url, open_store
from treadle.memory.notify import LocalChannel, LocalGroup
from treadle.registry import Registry
from treadle.signals import InMemorySignalStore, Signal, Target, ThreadRuntime
from treadle.signals.hub import ActiveRunChanged
from treadle.signals.relay import Relay
from treadle.testing import ScriptedModel, ScriptedModels, text_response, tool_call_response
from treadle.tools import Tool
from treadle.v1 import chunk_pb2

KEY = ("u1", "t1")
TARGET = Target("echo", "", *KEY)
CODEC = (lambda c: chunk_to_proto(c).SerializeToString(), lambda b: chunk_from_proto(chunk_pb2.Chunk.FromString(b)))


class Held:
    def __init__(self) -> None:
        self.entered, self.release = asyncio.Event(), asyncio.Event()

    async def __call__(self, args: Any, ctx: Any) -> str:
        self.entered.set()
        await self.release.wait()
        return "released"


@pytest.fixture
async def replicas(tmp_path: Path) -> AsyncIterator[Any]:
    store, group = InMemorySignalStore(), LocalGroup()
    memory = await open_store(database_url(tmp_path))  # the threads themselves (runs need them)
    made: list[tuple[ThreadRuntime, Relay]] = []

    async def make(model: ScriptedModel, held: Held, ttl: float = 30.0) -> ThreadRuntime:
        registry = Registry()
        registry.add_tool(Tool("hold", held))
        registry.add_agent(Agent(id="echo", model="scripted/x", tools=["hold"]))
        loop = AgentLoop(registry, ScriptedModels(model), NoOpTracer(), memory=memory)
        runtime = ThreadRuntime(loop, registry.snapshot_agent, store, lease_ttl=ttl)
        relay = Relay(LocalChannel(group), runtime.replica, CODEC, runtime.received)
        await relay.start()
        runtime.attach(relay)
        made.append((runtime, relay))
        return runtime

    yield make
    for runtime, relay in made:
        await runtime.stop()
        await relay.close()
    await memory.close()


def user_texts(model: ScriptedModel, i: int) -> list[str]:
    return ["".join(getattr(p, "text", "") for p in m.content) for m in model.requests[i].prompt if m.role == "user"]


async def test_racing_wakes_a_forwarded_signal_and_a_subscriber_on_the_other_replica(replicas: Any) -> None:
    held = Held()
    model = ScriptedModel([tool_call_response("hold", {}), text_response("x" * 20_000)])
    a, b = await replicas(model, held), await replicas(model, held)
    watch = b.subscribe(KEY)
    woke, other = await asyncio.gather(
        a.send(TARGET, Signal("user", "user", "from a")), b.send(TARGET, Signal("user", "user", "from b")))
    assert sorted([woke.accepted.action, other.accepted.action]) == ["deliver", "wake"]
    assert woke.accepted.run_id == other.accepted.run_id
    run_id = woke.accepted.run_id
    await held.entered.wait()
    assert (await b.current_run(KEY)).run_id == run_id  # type: ignore[union-attr]
    by_id = await b.send(Target("", run_id), Signal("user", "user", "by run id"))
    assert by_id.accepted.action == "deliver" and by_id.accepted.run_id == run_id
    held.release.set()
    events = []
    async for event in watch.events():
        events.append(event)
        if isinstance(event, ActiveRunChanged) and not event.run_id:
            break
    texts = "".join(e.payload.text for e in events if isinstance(e, Chunk) and e.type == "text-delta")
    assert texts == "x" * 20_000, "the chunk crossed the channel whole"
    assert len(user_texts(model, 1)) == 3 and "by run id" in user_texts(model, 1)
    assert await a.store.list_pending() == []
    watch.close()


async def test_a_replica_that_stops_hands_its_thread_to_the_other_at_once(replicas: Any) -> None:
    held = Held()
    model = ScriptedModel([tool_call_response("hold", {}), text_response("queued ran")])
    a, b = await replicas(model, held), await replicas(model, held)
    watch = b.subscribe(KEY)
    woke = await a.send(TARGET, Signal("user", "user", "start"))
    await held.entered.wait()
    queued = await b.queue(TARGET, Signal("user", "user", "queued"))
    assert queued.accepted.action == "persist"
    await a.stop()  # SIGTERM: its run ends, its lease is released, and B hears so (no TTL wait)
    started = []
    async for event in watch.events():
        if isinstance(event, ActiveRunChanged) and event.run_id and event.run_id != woke.accepted.run_id:
            started.append(event.run_id)
        if started and isinstance(event, ActiveRunChanged) and not event.run_id:
            break
    assert b.active_run(KEY) is None and user_texts(model, 1)[-1] == "queued"
    assert await b.store.list_pending() == [] and await b.store.get_lease(KEY) is None
    watch.close()


async def test_a_signal_forwarded_to_a_run_whose_inbox_just_closed_goes_to_the_next_run_at_once(replicas: Any) -> None:
    held = Held()
    model = ScriptedModel([tool_call_response("hold", {}), text_response("first"), text_response("took it")])
    a, b = await replicas(model, held, ttl=10.0), await replicas(model, held, ttl=10.0)
    woke = await a.send(TARGET, Signal("user", "user", "start"))
    await held.entered.wait()
    run = a.active_run(KEY)
    assert run is not None
    run.inbox.close()  # the run is ending: its inbox closed, its end not yet under the thread's lock
    try:
        started = asyncio.get_running_loop().time()
        sent = await b.send(TARGET, Signal("user", "user", "just too late"))
        assert asyncio.get_running_loop().time() - started < 5.0, "the sender never waits out the lease"
        assert sent.accepted.action == "deliver" and sent.accepted.run_id == woke.accepted.run_id
        assert sent.signal.id in [p.message.id for p in await a.store.list_pending(KEY)]  # kept, not dropped
    finally:
        held.release.set()
    for _ in range(500):  # the ended run's end starts the next one with the signal
        if len(model.requests) == 3 and a.active_run(KEY) is None and b.active_run(KEY) is None:
            break
        await asyncio.sleep(0.02)
    assert user_texts(model, 2)[-1] == "just too late"
    assert await a.store.list_pending() == []


async def test_a_batch_of_messages_goes_in_few_payloads_and_arrives_whole_and_in_order() -> None:
    """A run's chunks are many small messages: they are packed into as few payloads as fit (each
    within the NOTIFY limit), a message too long for one payload is split, and the other replica
    hears every message in the order sent; a replica skips its own packed payloads."""
    from treadle.core.chunks import TextDelta
    from treadle.memory.notify import MAX_PAYLOAD
    from treadle.signals.relay import RemoteChunk

    class Channel:  # every relay hears every payload, its own too, as over NOTIFY
        heard = True

        def __init__(self) -> None:
            self.listeners: list[Any] = []
            self.payloads: list[str] = []

        async def start(self, on_message: Any) -> None:
            self.listeners.append(on_message)

        async def publish(self, payloads: list[str]) -> None:
            self.payloads += payloads
            for listener in self.listeners:
                for payload in payloads:
                    listener(payload)

    channel = Channel()
    mine: list[Any] = []
    received: list[Any] = []
    here = Relay(channel, "a", CODEC, mine.append)  # type: ignore[arg-type]
    there = Relay(channel, "b", CODEC, received.append)  # type: ignore[arg-type]
    await channel.start(here._received)
    await channel.start(there._received)
    texts = [f"token {i} " for i in range(300)]
    texts.insert(150, "x" * (3 * MAX_PAYLOAD))  # one chunk longer than a payload
    for text in texts:
        here.chunk(KEY, Chunk.of(TextDelta("t1", text), run_id="r1"))
    here.run_ended(KEY)
    await here.flush()
    assert all(len(p.encode()) <= MAX_PAYLOAD for p in channel.payloads)
    assert len(channel.payloads) < 20, len(channel.payloads)  # 302 messages
    chunks = [m.chunk for m in received if isinstance(m, RemoteChunk)]
    assert [c.payload.text for c in chunks] == texts
    assert not isinstance(received[-1], RemoteChunk)  # the run's end, after its chunks
    assert mine == []  # its own messages are not handed back to the replica that sent them
