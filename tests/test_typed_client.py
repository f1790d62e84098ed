"""``treadle_client.typed``: the agent client with betterproto2 dataclasses, against a served agent.

Every call a user makes with it (stream, generate, agents, threads, subscribe, signals) returns
dataclasses and takes them as arguments; the server and processors never see them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import threading
from collections.abc import Callable
from typing import Any, assert_never, get_args

import betterproto2
import grpc
import pytest

from tests.conftest import StartApp
from tests.support import OpenAIServer, Turn
from tests.test_thread_signals import user_texts
from treadle.agents import Agent
from treadle.core.messages import TextPart
from treadle.tools import Tool
from treadle.v1 import agent_pb2, chunk_pb2
from treadle_client import AgentClient as PlainClient, ThreadSubscription as PlainSubscription, attach
from treadle_client import typed
from treadle_client.typed import (
    AbortChunk, AgentClient, Chunk, ChunkPayload, DataChunk, ErrorChunk, FileChunk, FinishChunk,
    ReasoningDeltaChunk, ReasoningEndChunk, ReasoningStartChunk, ResponseMetadataChunk, SourceChunk,
    StartChunk, StepFinishChunk, StepStartChunk, TextDeltaChunk, TextEndChunk, TextStartChunk,
    ToolCallChunk, ToolCallDeltaChunk, ToolCallInputStreamingEndChunk, ToolCallInputStreamingStartChunk,
    ToolErrorChunk, ToolOutputChunk, ToolResultChunk, TripwireChunk,
)
from treadle_client.typed._gen.google.protobuf import Struct

RES, THR = "user-1", "thread-1"


def describe(payload: ChunkPayload | None) -> str:
    """One line per chunk case; mypy checks that every case is here (``assert_never``)."""
    match payload:
        case StartChunk():
            return "start"
        case StepStartChunk():
            return "step-start"
        case TextStartChunk(id=id_):
            return f"text-start {id_}"
        case TextDeltaChunk(text=text):
            return f"text {text}"
        case TextEndChunk():
            return "text-end"
        case ReasoningStartChunk():
            return "reasoning-start"
        case ReasoningDeltaChunk(text=text):
            return f"reasoning {text}"
        case ReasoningEndChunk():
            return "reasoning-end"
        case ToolCallInputStreamingStartChunk(tool_name=name):
            return f"tool-input-start {name}"
        case ToolCallDeltaChunk(args_text_delta=delta):
            return f"tool-input {delta}"
        case ToolCallInputStreamingEndChunk():
            return "tool-input-end"
        case ToolCallChunk(tool_name=name, args=args):
            return f"tool-call {name} {json.dumps(args.to_dict() if args else None, sort_keys=True)}"
        case ToolResultChunk(tool_name=name, result=result):
            return f"tool-result {name} {json.dumps(result.to_dict() if result else None, sort_keys=True)}"
        case ToolErrorChunk(tool_name=name):
            return f"tool-error {name}"
        case SourceChunk():
            return "source"
        case FileChunk(mime_type=mime_type):
            return f"file {mime_type}"
        case ResponseMetadataChunk():
            return "response-metadata"
        case StepFinishChunk():
            return "step-finish"
        case FinishChunk(reason=reason):
            return f"finish {reason.name}"
        case ErrorChunk():
            return "error"
        case AbortChunk():
            return "abort"
        case TripwireChunk(reason=reason, processor_id=processor):
            return f"tripwire {processor}: {reason}"
        case DataChunk(name=name):
            return f"data {name}"
        case ToolOutputChunk(path=path):
            return f"tool-output {'>'.join(path)}"
        case None:
            return "unknown"
        case _:
            assert_never(payload)


def test_every_chunk_case_pattern_matches() -> None:
    """A chunk of every branch of the ``chunk`` oneof, as the client decodes it from the wire,
    matches its case; ``ChunkPayload`` names exactly the oneof's classes."""
    fields = Chunk._betterproto.oneof_field_by_group["chunk"]
    classes = {Chunk._cls_for(f) for f in fields}
    assert classes == set(get_args(ChunkPayload)), "ChunkPayload is not the oneof's classes"
    seen = set()
    for field in fields:
        plain = chunk_pb2.Chunk(run_id="r1")
        getattr(plain, field.name).SetInParent()
        chunk = typed.to_dataclass(Chunk, plain)
        assert isinstance(chunk.chunk, Chunk._cls_for(field)), field.name
        line = describe(chunk.chunk)
        assert line != "unknown", field.name
        seen.add(line.split()[0])
    assert len(seen) == len(fields)
    assert describe(Chunk(run_id="r1").chunk) == "unknown"  # a newer server's branch


def test_the_typed_client_mirrors_every_call_of_the_plain_one() -> None:
    """Same calls, same parameters: a parameter added to the plain client needs adding here."""
    def calls(cls: type) -> dict[str, list[str]]:
        return {name: list(inspect.signature(fn).parameters) for name, fn in inspect.getmembers(cls)
                if callable(fn) and (not name.startswith("_") or name in ("__aiter__", "__aenter__", "__aexit__"))}

    assert calls(AgentClient) == calls(PlainClient)
    assert calls(typed.ThreadSubscription) == calls(PlainSubscription)


def test_dataclasses_and_protobuf_messages_share_the_wire_form() -> None:
    agent = typed.Agent(id="a", name="A", model="openai/gpt-4o-mini", instructions="Be brief.",
                        metadata=Struct.from_dict({"team": "x"}))
    plain = typed.to_proto(agent_pb2.Agent, agent)
    assert (plain.id, plain.instructions, plain.metadata["team"]) == ("a", "Be brief.", "x")
    assert typed.to_dataclass(typed.Agent, plain) == agent
    assert agent.to_dict() == {"id": "a", "name": "A", "model": "openai/gpt-4o-mini",
                               "instructions": "Be brief.", "metadata": {"team": "x"}}


class NoSecrets:
    """A remote processor: it sees the framework's objects, not the dataclasses."""

    id = "no-secrets"
    seen: list[type] = []

    async def process_input(self, args: Any) -> Any:
        for msg in args.messages:
            type(self).seen.append(type(msg))
            text = " ".join(p.text for p in msg.content.parts if isinstance(p, TextPart))
            if "password" in text:
                args.abort("no passwords here")
        return args.messages


async def test_stream_generate_and_agents_with_dataclasses(
    start_app: StartApp, openai_server: Callable[..., OpenAIServer]
) -> None:
    model = openai_server([Turn.call("get_weather", {"city": "Oslo"}), Turn.say(["Clear ", "skies."]),
                           Turn.say("Hello again.")])
    running = await start_app(setup=lambda app: app.add_tool(
        Tool("get_weather", lambda args, ctx: {"city": args["city"], "sky": "clear"})))
    async with await attach([NoSecrets()], running.target) as attachment:
        await attachment.ready(timeout=10)
        async with AgentClient(running.target) as client:
            created = await client.create_agent(typed.Agent(
                id="weather", name="Weather", model="openai/gpt-4o-mini", base_url=model.base_url,
                instructions="Be brief.", tools=["get_weather"],
                input_processors=[typed.ProcessorRef(id="no-secrets")]))
            assert isinstance(created, typed.Agent) and created.tools == ["get_weather"]
            assert created.source == typed.AgentSource.API

            lines = [describe(chunk.chunk) async for chunk in client.stream(
                "weather", "Weather in Oslo?", options=typed.CallOptions(max_steps=3))]
            assert lines[0] == "start" and lines[-1] == "finish STOP"
            assert 'tool-call get_weather {"city": "Oslo"}' in lines
            assert 'tool-result get_weather {"city": "Oslo", "sky": "clear"}' in lines
            assert [line for line in lines if line.startswith("text ")] == ["text Clear ", "text skies."]

            response = await client.generate("weather", messages=[
                typed.Message(role=typed.MessageRole.USER, content=typed.MessageContent(parts=[typed.Part(
                    text=typed.TextPart(text="hi"))]))])
            assert isinstance(response, typed.GenerateResponse)
            assert (response.text, response.finish_reason) == ("Hello again.", typed.FinishReason.STOP)
            assert response.usage is not None and response.usage.total_tokens > 0

            blocked = await client.generate("weather", "my password is hunter2")
            assert blocked.tripwire is not None
            assert (blocked.tripwire.reason, blocked.tripwire.processor_id) == ("no passwords here", "no-secrets")

            updated = await client.update_agent(typed.Agent(id="weather", instructions="Be terse."),
                                                update_mask=["instructions"])
            assert (updated.instructions, updated.tools) == ("Be terse.", ["get_weather"])
            assert [a.id for a in await client.list_agents()] == ["weather"]
            assert (await client.get_agent("weather")).instructions == "Be terse."
            await client.delete_agent("weather")
            assert await client.list_agents() == []
    assert len(model.recorded) == 3  # the blocked prompt never reached the model
    assert NoSecrets.seen and not any(issubclass(t, betterproto2.Message) for t in NoSecrets.seen)


async def test_subscribe_signal_and_threads_with_dataclasses(
    start_app: StartApp, openai_server: Callable[..., OpenAIServer]
) -> None:
    entered, release = threading.Event(), threading.Event()

    def held(_: Any) -> Turn:
        entered.set()
        assert release.wait(30), "the test never released the turn"
        return Turn.say("busy")

    model = openai_server([held, Turn.say("noted")])
    running = await start_app(setup=lambda app: app.add_agent(
        Agent(id="echo", model="openai/gpt-4o-mini", base_url=model.base_url)))
    async with AgentClient(running.target) as client:
        thread = await client.create_thread(RES, THR, title="Typed", metadata={"k": 1})
        assert isinstance(thread, typed.Thread) and thread.title == "Typed"
        subscription = await client.subscribe_to_thread(RES, THR)
        assert subscription.active_run_id == ""
        woke = await client.send_message(
            "echo", typed.SignalMessage(contents="start"), attributes={"name": "Ada"},
            resource_id=RES, thread_id=THR, if_idle=typed.IfIdle(stream_options=typed.CallOptions(max_steps=2)))
        assert isinstance(woke, typed.SendMessageResponse) and woke.accepted is not None
        assert woke.accepted.action == typed.SignalAction.WAKE
        run_id = woke.accepted.run_id
        try:
            assert await _wait(entered)
            reminder = await client.send_signal("echo", typed.Signal(type="reactive", contents="be brief"),
                                                run_id=run_id)
            assert reminder.accepted is not None and reminder.signal is not None
            assert (reminder.accepted.action, reminder.signal.tag_name) == (typed.SignalAction.DELIVER,
                                                                           "system-reminder")
            assert await client.get_active_run(RES, THR) == run_id
        finally:
            release.set()
        chunks: list[Chunk] = []
        async with asyncio.timeout(30):
            async for chunk in subscription:  # the run, which took the signal in before its next step
                chunks.append(chunk)
                if isinstance(chunk.chunk, FinishChunk):
                    break
        subscription.unsubscribe()
        await running.app.threads.wait_idle()
        texts = [c.chunk.text for c in chunks if isinstance(c.chunk, TextDeltaChunk)]
        assert "".join(texts) == "busynoted"
        assert user_texts(model.requests[0]) == ['<user name="Ada">start</user>']
        assert "<system-reminder>be brief</system-reminder>" in user_texts(model.requests[1])
        assert {c.run_id for c in chunks} >= {run_id}
        messages = await client.list_messages(RES, THR)
        assert all(isinstance(m, typed.Message) for m in messages)
        assert messages[0].role == typed.MessageRole.SIGNAL  # the message sent, stored as a signal
        assert typed.MessageRole.ASSISTANT in {m.role for m in messages}
        runs = await client.list_runs(RES, THR)
        assert [r.id for r in runs] == [run_id] and runs[0].status == typed.RunStatus.FINISHED
        assert [t.id for t in await client.list_threads(RES)] == [THR]
        await client.delete_thread(RES, THR)
        assert await client.list_threads(RES) == []


async def _wait(event: threading.Event) -> bool:
    return await asyncio.to_thread(event.wait, 30)


def test_the_generated_messages_are_dataclasses() -> None:
    assert dataclasses.is_dataclass(typed.TextDeltaChunk)
    assert issubclass(typed.FinishReason, int)
    assert "Chunk" in typed.__all__ and typed.Chunk is Chunk
    with pytest.raises(AttributeError):
        Chunk().chunk = None  # type: ignore[misc]


async def test_leaving_a_typed_stream_early_cancels_the_run_and_errors_pass_through(
    start_app: StartApp, openai_server: Callable[..., OpenAIServer]
) -> None:
    entered, cancelled = asyncio.Event(), asyncio.Event()

    async def wait_forever(args: Any, ctx: Any) -> None:
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    model = openai_server([Turn.call("wait", {})])
    running = await start_app(setup=lambda app: app.add_tool(Tool("wait", wait_forever)))
    async with AgentClient(running.target) as client:
        await client.create_agent({"id": "w", "model": "openai/test", "baseUrl": model.base_url, "tools": ["wait"]})
        async for chunk in client.stream("w", "go"):
            if isinstance(chunk.chunk, ToolCallChunk):
                break
        await asyncio.wait_for(entered.wait(), 10)
        await asyncio.wait_for(cancelled.wait(), 10)
        with pytest.raises(grpc.aio.AioRpcError) as info:
            async for _ in client.stream("ghost", "hi"):
                pass
        assert info.value.code() == grpc.StatusCode.NOT_FOUND
