"""The per-chunk fast paths of remote processors: what they send is what the general path sends.

- the server serializes a plain text delta directly (``chunk_bytes``) and an OBSERVE
  ``processOutputStream`` invocation from the step's envelope (``encode_stream_one``);
- the Python SDK writes the all-unchanged stream answer directly (``encode_unchanged_stream``);
- an OBSERVE stream processor still receives every chunk, in order, one invocation each, and
  the step's route to its replica gives way to the ordinary path when the replica goes.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from treadle.agents import ProcessorRef
from treadle.api.processor_hub import (
    Connection,
    Declaration,
    HookSettings,
    ProcessorHub,
)
from treadle.core.chunks import Chunk, TextDelta, TextStart
from treadle.v1 import processor_service_pb2 as pb
from treadle.wire import sdk_hooks
from treadle.wire.data import chunk_to_proto
from treadle.wire.server_hooks import chunk_bytes, encode_stream_body, encode_stream_one

from tests.support import Turn
from tests.test_remote_processor_protocol import (  # noqa: F401
    ANSWER,
    PID,
    decl,
    delta_text,
    hook_decl,
    make_env,
    visible,
)


@pytest.mark.parametrize("chunk", [
    Chunk(type="text-delta", payload=TextDelta("t1", "hello wörld "), run_id="run-1"),
    Chunk(type="text-delta", payload=TextDelta("", ""), run_id=""),
    Chunk(type="text-delta", payload=TextDelta("x", "y" * 300), run_id="r", from_="USER"),
    Chunk(type="text-delta", payload=TextDelta("x", "y", provider_metadata={"p": {"k": 1}}), run_id="r"),
    Chunk(type="text-delta", payload=TextDelta("x", "y"), run_id="r", metadata={"m": True}),
    Chunk(type="text-start", payload=TextStart("x"), run_id="r"),
    Chunk.custom("data-progress", {"n": 1}),
], ids=["plain", "empty", "user-long", "provider-metadata", "metadata", "text-start", "data"])
def test_a_chunk_serializes_to_the_same_bytes_on_every_path(chunk: Chunk) -> None:
    assert chunk_bytes(chunk) == chunk_to_proto(chunk).SerializeToString()
    envelope = pb.Invocation(processor_id="p", run_id="r", hook=pb.HOOK_PROCESS_OUTPUT_STREAM).SerializeToString()
    assert encode_stream_one(envelope, chunk_bytes(chunk)) == encode_stream_body(envelope, [chunk])


@pytest.mark.parametrize("parts", [1, 3])
def test_the_unchanged_stream_answer_is_the_one_the_general_encoder_builds(parts: int) -> None:
    chunks = [Chunk(type="text-delta", payload=TextDelta("a", str(i))) for i in range(parts)]
    built = sdk_hooks.encode_stream_result("7.12", chunks, chunks, version=3)
    assert sdk_hooks.encode_unchanged_stream("7.12", parts) == built.SerializeToString()


async def test_an_observer_receives_every_chunk_in_order_one_invocation_each(make_env: Any) -> None:  # noqa: F811
    env = await make_env([Turn.say(["a", "b", "c"]), Turn.say(["d", "e"])])
    env.agent(outputs=[ProcessorRef(PID)])
    client = env.client(None)  # never answers
    await client.attach(decl(PID, hook_decl(pb.HOOK_PROCESS_OUTPUT_STREAM, pb.HOOK_MODE_OBSERVE)), versions=(3,))
    assert visible(await asyncio.wait_for(env.stream(), 5)) == ANSWER
    second = await asyncio.wait_for(env.stream(), 5)
    assert [c.text_delta.text for c in second if c.HasField("text_delta")] == ["d", "e"]
    # Every chunk but `start` passes the output processors: 9 of the first run, 8 of the second.
    await asyncio.wait_for(_until(lambda: len(client.received) >= 17), 5)
    received = client.received
    assert len(received) == 17
    assert [delta_text(i) for i in received if delta_text(i) is not None] == ["a", "b", "c", "d", "e"]
    assert len({i.invocation_id for i in received}) == len(received)
    for inv in received:
        assert len(inv.process_output_stream.parts) == 1
        assert inv.HasField("deadline") and inv.HasField("timeout") and inv.processor_id == PID
    assert len({i.run_id for i in received}) == 2
    assert env.metric_total("treadle.processor.invocations", processor=PID, outcome="observed") == 17


async def test_an_observe_route_gives_way_when_its_replica_goes_or_state_must_travel() -> None:
    hub = ProcessorHub()
    hooks = {"process_output_stream": HookSettings(mode="observe")}
    conn = Connection({PID: Declaration(PID, PID, "", hooks)}, version=3)
    hub.register(conn)
    send = hub.observe_route(PID, "process_output_stream", run_id="r", state={}, timeout=2.0)
    assert send is not None
    body = pb.Invocation(processor_id=PID, run_id="r").SerializeToString()
    assert send(body) is True and send(body) is True
    sent = [pb.Invocation.FromString(b) for b in await conn.outbound.take()]
    assert [i.invocation_id for i in sent] == [f"{conn.number}.1", f"{conn.number}.2"]
    assert all(i.run_id == "r" and i.HasField("deadline") and i.timeout.seconds == 2 for i in sent)
    # A state to send, the replica gone: the route no longer holds (the ordinary path decides).
    assert hub.observe_route(PID, "process_output_stream", run_id="r", state={"n": 1}, timeout=2.0) is None
    hub.unregister(conn, failed=True)
    assert send(body) is None
    assert hub.observe_route(PID, "process_output_stream", run_id="r", state={}, timeout=2.0) is None


async def _until(predicate: Any) -> None:
    while not predicate():
        await asyncio.sleep(0.01)
