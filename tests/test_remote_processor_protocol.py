"""ProcessorService.Attach over real gRPC, driven by a RAW client written with the generated
stubs (no SDK), so every message on the wire is the test's choice.

The server is a TreadleApp on 127.0.0.1:0 whose agents call the loopback OpenAI server. Tests
sequence on observable events (an invocation arrived, a stream ended), never on sleeps; the
timeout cases use a short agent cap against a client that simply never answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.support import OpenAIServer, Turn
from treadle.agents import Agent, ProcessorRef
from treadle.api.remote_processor import RemoteProcessor
from treadle.app import TreadleApp
from treadle.core.chunks import Chunk, TextDelta
from treadle.config import Settings
from treadle.core.messages import SystemMessage
from treadle.core.args import ProcessOutputStreamArgs, RunInfo
from treadle.core.message_list import MessageList
from treadle.v1 import (
    agent_service_pb2,
    agent_service_pb2_grpc,
    chunk_pb2,
    processor_service_pb2 as pb,
    processor_service_pb2_grpc,
)

Code = grpc.StatusCode
PID = "guard"
Handler = Callable[["RawProcessor", pb.Invocation], Awaitable[pb.InvocationResult | None]]

# --- the raw client ------------------------------------------------------------------------------


def hook_decl(hook: int, mode: int = pb.HOOK_MODE_MUTATE, **kw: Any) -> pb.HookDeclaration:
    return pb.HookDeclaration(hook=hook, mode=mode, **kw)


def decl(pid: str, *hooks: pb.HookDeclaration) -> pb.ProcessorDeclaration:
    return pb.ProcessorDeclaration(id=pid, hooks=list(hooks))


class RawProcessor:
    """One Attach stream. Invocations are handled one at a time by ``handler`` (None: no answer)."""

    def __init__(self, target: str, handler: Handler | None = None) -> None:
        self.channel = grpc.aio.insecure_channel(target)
        self.stub = processor_service_pb2_grpc.ProcessorServiceStub(self.channel)
        self.handler = handler
        self.received: list[pb.Invocation] = []
        self.messages: list[int] = []
        """How many invocations each message carried (protocol version 3 batches them)."""
        self.arrived = asyncio.Queue[pb.Invocation]()
        self.cancels: list[str] = []
        self.drained = asyncio.Event()
        self.drains: list[pb.Drain] = []
        self.ended = asyncio.Event()
        self.error: grpc.aio.AioRpcError | None = None
        self.call: Any = None
        self._tasks: list[asyncio.Task[Any]] = []

    async def attach(self, *processors: pb.ProcessorDeclaration, versions: tuple[int, ...] = (1,)) -> pb.ProcessorWelcome:
        return await self.open(pb.ProcessorServiceAttachRequest(
            handshake=pb.ProcessorHandshake(protocol_versions=versions, processors=processors, instance_id="raw")))

    async def open(self, first: pb.ProcessorServiceAttachRequest) -> pb.ProcessorWelcome:
        self.call = self.stub.Attach()
        await self.call.write(first)
        response = await self.call.read()
        if response is grpc.aio.EOF:
            raise AssertionError("stream ended before the welcome")
        self._tasks.append(asyncio.create_task(self._read()))
        self._tasks.append(asyncio.create_task(self._serve()))
        return response.welcome

    async def _read(self) -> None:
        try:
            while (message := await self.call.read()) is not grpc.aio.EOF:
                kind = message.WhichOneof("message")
                if kind == "invocation":
                    self.messages.append(1)
                    self.received.append(message.invocation)
                    self.arrived.put_nowait(message.invocation)
                elif kind == "invocations":
                    self.messages.append(len(message.invocations.invocations))
                    for inv in message.invocations.invocations:
                        self.received.append(inv)
                        self.arrived.put_nowait(inv)
                elif kind == "cancel":
                    self.cancels.append(message.cancel.invocation_id)
                elif kind == "drain":
                    self.drains.append(message.drain)
                    self.drained.set()
        except grpc.aio.AioRpcError as e:
            self.error = e
        finally:
            self.ended.set()

    async def _serve(self) -> None:
        while True:
            inv = await self.arrived.get()
            if self.handler is None:
                continue
            result = await self.handler(self, inv)
            if result is not None and not self.ended.is_set():
                result.invocation_id = inv.invocation_id
                await self.call.write(pb.ProcessorServiceAttachRequest(result=result))

    def disconnect(self) -> None:
        """The process dies: the stream goes away without a goodbye."""
        self.call.cancel()

    async def close(self) -> None:
        for t in self._tasks:
            t.cancel()
        await self.channel.close()


async def status_of(client: RawProcessor, first: pb.ProcessorServiceAttachRequest) -> tuple[Code, str]:
    call = client.stub.Attach()
    await call.write(first)
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call.read()
    return info.value.code(), info.value.details() or ""


def unchanged() -> pb.InvocationResult:
    return pb.InvocationResult(unchanged=pb.UnchangedOutcome())


def stream_result(*outcomes: pb.ChunkOutcome) -> pb.InvocationResult:
    return pb.InvocationResult(stream=pb.StreamOutcomes(chunks=list(outcomes)))


def keep() -> pb.ChunkOutcome:
    return pb.ChunkOutcome(unchanged=pb.UnchangedOutcome())


def delta_text(inv: pb.Invocation, i: int = 0) -> str | None:
    part = inv.process_output_stream.parts[i]
    return part.text_delta.text if part.HasField("text_delta") else None


async def shout(_: RawProcessor, inv: pb.Invocation) -> pb.InvocationResult:
    """Upper-cases text deltas and drops the delta "drop", one outcome per chunk (any window)."""
    outcomes = []
    for part in inv.process_output_stream.parts:
        if part.HasField("text_delta") and part.text_delta.text == "drop":
            outcomes.append(pb.ChunkOutcome(drop=pb.DropOutcome()))
        elif part.HasField("text_delta"):
            replaced = chunk_pb2.Chunk()
            replaced.CopyFrom(part)
            replaced.text_delta.text = part.text_delta.text.upper()
            outcomes.append(pb.ChunkOutcome(replace=replaced))
        else:
            outcomes.append(keep())
    return stream_result(*outcomes)


# --- the server ----------------------------------------------------------------------------------


@dataclass
class Env:
    app: TreadleApp
    port: int
    server: OpenAIServer
    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader
    clients: list[RawProcessor] = field(default_factory=list)

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def client(self, handler: Handler | None = None) -> RawProcessor:
        c = RawProcessor(self.target, handler)
        self.clients.append(c)
        return c

    def agent(self, *, inputs: list[ProcessorRef] = (), outputs: list[ProcessorRef] = (), agent_id: str = "echo") -> None:  # type: ignore[assignment]
        self.app.add_agent(Agent(id=agent_id, name="Echo", model="openai/test-model", base_url=self.server.base_url,
                                 instructions=[SystemMessage("You are terse.")],
                                 input_processors=list(inputs), output_processors=list(outputs)))

    async def stream(self, prompt: str = "hi", agent_id: str = "echo") -> list[chunk_pb2.Chunk]:
        async with grpc.aio.insecure_channel(self.target) as channel:
            stub = agent_service_pb2_grpc.AgentServiceStub(channel)
            call = stub.Stream(agent_service_pb2.StreamRequest(agent_id=agent_id, prompt=prompt))
            return [c async for r in call for c in r.chunks]

    def metric(self, name: str) -> list[Any]:
        data = self.metrics.get_metrics_data()
        points: list[Any] = []
        for rm in data.resource_metrics if data else []:
            for sm in rm.scope_metrics:
                for m in sm.metrics:
                    if m.name == name:
                        points.extend(m.data.data_points)
        return points

    def metric_total(self, name: str, **attrs: str) -> float:
        return sum(p.value for p in self.metric(name) if all(p.attributes.get(k) == v for k, v in attrs.items()))


@pytest.fixture
async def make_env(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Callable[..., Awaitable[Env]]]:
    made: list[Env] = []

    async def make(script: list[Any], **settings: Any) -> Env:
        settings.setdefault("data_dir", tmp_path_factory.mktemp("data"))  # a store of its own
        exporter = InMemorySpanExporter()
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
        reader = InMemoryMetricReader()
        app = TreadleApp(Settings(listen="127.0.0.1:0", example_agent=False, **settings), env={},
                         tracer_provider=tracer_provider, meter_provider=MeterProvider(metric_readers=[reader]))
        env = Env(app, 0, OpenAIServer(script), exporter, reader)
        env.port = await app.start()
        made.append(env)
        return env

    yield make
    for env in made:
        await env.app.stop(0)
        for c in env.clients:
            await c.close()
        env.server.close()


def visible(chunks: list[chunk_pb2.Chunk]) -> list[str]:
    """Each chunk as ``kind`` or ``kind:text``, for comparing whole streams."""
    out = []
    for c in chunks:
        kind = c.WhichOneof("chunk")
        if kind == "text_delta":
            out.append(f"text_delta:{c.text_delta.text}")
        elif kind == "finish":
            out.append(f"finish:{chunk_pb2.FinishReason.Name(c.finish.reason)}")
        else:
            out.append(kind)
    return out


ANSWER = ["start", "step_start", "response_metadata", "text_start", "text_delta:a", "text_delta:b", "text_delta:c", "text_end",
          "step_finish", "finish:FINISH_REASON_STOP"]

# --- handshake -----------------------------------------------------------------------------------


async def test_handshake_is_answered_with_the_effective_settings(make_env: Any) -> None:
    env = await make_env([])
    welcome = await env.client().attach(decl(
        PID,
        hook_decl(pb.HOOK_PROCESS_INPUT, timeout=duration_pb2.Duration(seconds=600), delivery=pb.STREAM_DELIVERY_WINDOWED),
        hook_decl(pb.HOOK_PROCESS_OUTPUT_STREAM, pb.HOOK_MODE_UNSPECIFIED, delivery=pb.STREAM_DELIVERY_WINDOWED,
                  max_in_flight=4, process_data_parts=True),
    ))
    assert welcome.protocol_version == 1 and welcome.server_id
    accepted = welcome.processors[0]
    assert (accepted.id, accepted.name) == (PID, PID)
    hook_input, hook_stream = accepted.hooks
    assert hook_input.timeout.seconds == 60  # the server's maximum wins over 600 s
    assert hook_input.delivery == pb.STREAM_DELIVERY_UNSPECIFIED  # stream settings elsewhere: ignored
    assert hook_stream.mode == pb.HOOK_MODE_MUTATE and hook_stream.timeout.seconds == 10
    assert (hook_stream.delivery, hook_stream.max_window, hook_stream.max_in_flight, hook_stream.process_data_parts) == (
        pb.STREAM_DELIVERY_WINDOWED, 64, 4, True)
    assert await env.app.processors.wait_attached(PID, 5)
    assert env.metric_total("treadle.processor.streams_started") == 1


def _hs(*processors: pb.ProcessorDeclaration, versions: tuple[int, ...] = (1,)) -> pb.ProcessorServiceAttachRequest:
    return pb.ProcessorServiceAttachRequest(handshake=pb.ProcessorHandshake(protocol_versions=versions, processors=processors))


@pytest.mark.parametrize(
    ("first", "code", "message"),
    [
        (_hs(decl(PID, hook_decl(pb.HOOK_PROCESS_INPUT)), versions=(4, 5)), Code.FAILED_PRECONDITION,
         "no common protocol version: the server speaks [1, 2, 3], the processor offered [4, 5]"),
        (_hs(decl("bad id", hook_decl(pb.HOOK_PROCESS_INPUT))), Code.INVALID_ARGUMENT, "processors[0].id 'bad id' is malformed"),
        (_hs(decl("-lead", hook_decl(pb.HOOK_PROCESS_INPUT))), Code.INVALID_ARGUMENT, "is malformed"),
        (_hs(decl(PID, hook_decl(pb.HOOK_PROCESS_INPUT), hook_decl(pb.HOOK_PROCESS_INPUT))), Code.INVALID_ARGUMENT,
         "processors[0] ('guard').hooks[1]: processInput is declared twice"),
        (_hs(decl(PID, hook_decl(pb.HOOK_UNSPECIFIED))), Code.INVALID_ARGUMENT, "hooks[0]: the hook is unspecified"),
        (_hs(decl(PID, hook_decl(pb.HOOK_PROCESS_INPUT)), decl(PID, hook_decl(pb.HOOK_PROCESS_INPUT_STEP))),
         Code.INVALID_ARGUMENT, "processors[1].id 'guard' is declared twice in this handshake"),
        (_hs(), Code.INVALID_ARGUMENT, "declares no processors"),
        (pb.ProcessorServiceAttachRequest(result=pb.InvocationResult(invocation_id="1")), Code.INVALID_ARGUMENT,
         "the first message must be a handshake"),
    ],
    ids=["version", "id-space", "id-start", "duplicate-hook", "unspecified-hook", "duplicate-id", "empty", "not-handshake"],
)
async def test_handshake_refusals_say_what_is_wrong(make_env: Any, first: Any, code: Code, message: str) -> None:
    env = await make_env([])
    got_code, got_message = await status_of(env.client(), first)
    assert got_code == code
    assert message in got_message
    assert env.app.processors.declaration(PID) is None
    assert env.metric_total("treadle.processor.streams_failed") == 1


# --- what is sent, and how answers apply ---------------------------------------------------------


async def test_hooks_not_declared_are_never_sent(make_env: Any) -> None:
    env = await make_env([Turn.say(["a", "b", "c"])])
    env.agent(inputs=[ProcessorRef(PID)], outputs=[ProcessorRef(PID)])
    client = env.client(lambda c, inv: _ok(unchanged()))
    await client.attach(decl(PID, hook_decl(pb.HOOK_PROCESS_OUTPUT_STEP)))
    assert visible(await env.stream()) == ANSWER
    assert [inv.hook for inv in client.received] == [pb.HOOK_PROCESS_OUTPUT_STEP]
    inv = client.received[0]
    assert inv.run_id and inv.agent_id == "echo" and inv.processor_index == 0
    assert inv.trace_context.traceparent.startswith("00-")
    assert inv.deadline.seconds > 0 and not inv.HasField("state")
    assert inv.process_output_step.text == "abc"


async def _ok(result: pb.InvocationResult) -> pb.InvocationResult:
    return result


async def test_a_mutate_process_input_replaces_the_messages_the_model_sees(make_env: Any) -> None:
    env = await make_env([Turn.say("ok")])
    env.agent(inputs=[ProcessorRef(PID)])

    async def redact(_: RawProcessor, inv: pb.Invocation) -> pb.InvocationResult:
        listed = inv.process_input.message_list.messages
        replacement = pb.MessageListReplacement()
        for item in listed:
            m = replacement.messages.add()
            m.CopyFrom(item.message)
            for part in m.content.parts:
                part.text.text = part.text.text.replace("4111-1111", "[card]")
            replacement.sources.append(item.source)
        return pb.InvocationResult(replace=pb.ReplaceOutcome(
            messages=replacement, system_messages={"messages": [{"content": "Never repeat card numbers."}]}))

    client = env.client(redact)
    await client.attach(decl(PID, hook_decl(pb.HOOK_PROCESS_INPUT)))
    assert visible(await env.stream("my card is 4111-1111")) == [
        "start", "step_start", "response_metadata", "text_start", "text_delta:ok", "text_end", "step_finish", "finish:FINISH_REASON_STOP"]
    sent = env.server.requests[0]["messages"]
    assert sent[0] == {"role": "system", "content": "Never repeat card numbers."}
    assert "my card is [card]" in str(sent[-1]["content"]) and "4111" not in str(sent)
    assert env.metric_total("treadle.processor.invocations", processor=PID, hook="processInput", outcome="replace") == 1
    latency = [p for p in env.metric("treadle.processor.latency") if p.attributes["hook"] == "processInput"]
    assert latency and latency[0].count == 1


async def test_a_run_waits_briefly_for_a_named_processor_to_attach(make_env: Any) -> None:
    env = await make_env([Turn.say("ok")], processor_attach_wait=30)
    env.agent(inputs=[ProcessorRef(PID)])
    run = asyncio.ensure_future(env.stream())
    await asyncio.wait_for(_until(lambda: env.app.processors.waiting == 1), 5)
    client = env.client(lambda c, inv: _ok(unchanged()))
    await client.attach(decl(PID, hook_decl(pb.HOOK_PROCESS_INPUT)))
    assert visible(await asyncio.wait_for(run, 5))[-1] == "finish:FINISH_REASON_STOP"
    assert [inv.hook for inv in client.received] == [pb.HOOK_PROCESS_INPUT]


@pytest.mark.parametrize(
    "stream_hook",
    [
        hook_decl(pb.HOOK_PROCESS_OUTPUT_STREAM),
        hook_decl(pb.HOOK_PROCESS_OUTPUT_STREAM, max_in_flight=8),
        hook_decl(pb.HOOK_PROCESS_OUTPUT_STREAM, delivery=pb.STREAM_DELIVERY_WINDOWED, max_window=16),
    ],
    ids=["lock-step", "pipelined", "windowed"],
)
async def test_process_output_stream_modes_give_identical_client_chunks(make_env: Any, stream_hook: Any) -> None:
    env = await make_env([Turn.say(["a", "drop", "b", "c"])])
    env.agent(outputs=[ProcessorRef(PID)])
    client = env.client(shout)
    await client.attach(decl(PID, stream_hook))
    assert visible(await env.stream()) == [
        "start", "step_start", "response_metadata", "text_start", "text_delta:A", "text_delta:B", "text_delta:C", "text_end",
        "step_finish", "finish:FINISH_REASON_STOP"]
    parts = [p for inv in client.received for p in inv.process_output_stream.parts]
    assert [p.WhichOneof("chunk") for p in parts][:4] == ["step_start", "response_metadata", "text_start", "text_delta"]


async def test_an_abort_on_a_chunk_becomes_a_tripwire_naming_the_processor(make_env: Any) -> None:
    env = await make_env([Turn.say(["a", "b", "c"])])
    env.agent(outputs=[ProcessorRef(PID)])

    async def no_b(_: RawProcessor, inv: pb.Invocation) -> pb.InvocationResult:
        if delta_text(inv) == "b":
            return stream_result(pb.ChunkOutcome(abort=pb.AbortOutcome(reason="no b please")))
        return stream_result(keep())

    await env.client(no_b).attach(decl(PID, hook_decl(pb.HOOK_PROCESS_OUTPUT_STREAM)))
    chunks = await env.stream()
    assert visible(chunks) == ["start", "step_start", "response_metadata", "text_start", "text_delta:a", "tripwire", "finish:FINISH_REASON_OTHER"]
    tripwire = chunks[-2].tripwire
    assert (tripwire.reason, tripwire.processor_id) == ("no b please", PID)


async def test_state_is_carried_across_a_runs_hooks_and_fresh_for_another_run(make_env: Any) -> None:
    env = await make_env([Turn.say("one"), Turn.say("two")])
    env.agent(inputs=[ProcessorRef(PID)], outputs=[ProcessorRef(PID)])
    local: dict[str, tuple[dict[str, Any], int]] = {}  # what an SDK keeps: run -> (state, version)
    seen: list[tuple[str, int, bool]] = []

    async def count(_: RawProcessor, inv: pb.Invocation) -> pb.InvocationResult:
        from treadle.wire.data import dict_to_struct, struct_to_dict

        state, version = local.get(inv.run_id, ({}, 0))
        if inv.HasField("state"):
            state, version = struct_to_dict(inv.state.value), inv.state.version
        n = int(state.get("n", 0))
        seen.append((inv.run_id, n, inv.HasField("state")))
        local[inv.run_id] = ({"n": n + 1}, version + 1)
        result = unchanged()
        dict_to_struct({"n": n + 1}, result.state.value)
        result.state.version = version + 1
        return result

    await env.client(count).attach(decl(PID, hook_decl(pb.HOOK_PROCESS_INPUT), hook_decl(pb.HOOK_PROCESS_OUTPUT_STEP),
                                        hook_decl(pb.HOOK_PROCESS_OUTPUT_RESULT)))
    await env.stream()
    await env.stream()
    runs = list(dict.fromkeys(r for r, _, _ in seen))
    assert len(runs) == 2
    for run in runs:
        assert [(n, sent) for r, n, sent in seen if r == run] == [(0, False), (1, False), (2, False)]


# --- failure policies ----------------------------------------------------------------------------

FAILURES = ["disconnect", "timeout", "malformed", "never-attached"]


def failing_on_b(failure: str) -> Handler:
    async def handler(client: RawProcessor, inv: pb.Invocation) -> pb.InvocationResult | None:
        if delta_text(inv) != "b":
            return stream_result(keep())
        if failure == "disconnect":
            client.disconnect()
            return None
        if failure == "timeout":
            return None  # never answers
        return stream_result(keep(), keep())  # malformed: two outcomes for one chunk

    return handler


@pytest.mark.parametrize("failure", FAILURES)
async def test_fail_closed_ends_the_run_with_an_error_naming_processor_and_hook(make_env: Any, failure: str) -> None:
    # Never attached: the run fails on the step-start chunk, before the model is called.
    env = await make_env([] if failure == "never-attached" else [Turn.say(["a", "b", "c"])])
    env.agent(outputs=[ProcessorRef(PID, "fail_closed", timeout=0.2)])
    if failure != "never-attached":
        await env.client(failing_on_b(failure)).attach(decl(PID, hook_decl(pb.HOOK_PROCESS_OUTPUT_STREAM)))
    chunks = await env.stream()
    shown = visible(chunks)
    before = ["start"] if failure == "never-attached" else ANSWER[:5]
    assert shown == [*before, "error", "finish:FINISH_REASON_ERROR"]
    error = chunks[-2].error
    assert PID in error.message and "processOutputStream" in error.message
    reason = {"disconnect": "closed", "timeout": "timed out", "malformed": "malformed", "never-attached": "not attached"}
    assert reason[failure] in error.message


@pytest.mark.parametrize("failure", FAILURES)
async def test_fail_open_skips_the_hook_and_the_run_completes(make_env: Any, failure: str) -> None:
    env = await make_env([Turn.say(["a", "b", "c"])])
    env.agent(outputs=[ProcessorRef(PID, "fail_open", timeout=0.2)])
    if failure != "never-attached":
        await env.client(failing_on_b(failure)).attach(decl(PID, hook_decl(pb.HOOK_PROCESS_OUTPUT_STREAM)))
    assert visible(await env.stream()) == ANSWER  # nothing lost, nothing twice
    skipped = [s for s in env.spans.get_finished_spans() if s.attributes.get("treadle.processor.fail_open_skip")]
    # A processor that never attached declared nothing, so each of its lane's hooks is skipped.
    hooks = ["processOutputStream"] + (["processOutputStep", "processOutputResult"] if failure == "never-attached" else [])
    assert {s.name for s in skipped} == {f"{hook} {PID}" for hook in hooks}
    assert all(s.attributes["treadle.processor.id"] == PID for s in skipped)
    reason = {"disconnect": "closed", "timeout": "timed out", "malformed": "malformed", "never-attached": "not attached"}
    reasons = [str(e.attributes["reason"]) for s in skipped for e in s.events if e.name == "treadle.processor.fail_open_skip"]
    assert any(reason[failure] in r for r in reasons)
    assert env.metric_total("treadle.processor.fail_open_skips", processor=PID, hook="processOutputStream") >= 1
    if failure == "timeout":
        assert env.metric_total("treadle.processor.timeouts") == 1
    if failure in ("timeout", "malformed"):  # that invocation failed, not the stream
        assert env.app.processors.declaration(PID) is not None
        assert "c" in [delta_text(inv) for inv in env.clients[0].received]


async def test_fail_closed_for_an_input_hook_that_never_answers(make_env: Any) -> None:
    env = await make_env([])  # the model is never called
    env.agent(inputs=[ProcessorRef(PID, timeout=0.2)])
    client = env.client(None)
    await client.attach(decl(PID, hook_decl(pb.HOOK_PROCESS_INPUT)))
    chunks = await env.stream()
    assert visible(chunks) == ["start", "error", "finish:FINISH_REASON_ERROR"]
    assert "processInput" in chunks[1].error.message and PID in chunks[1].error.message
    assert not env.server.requests  # the model was never called
    # The relative timeout beside the absolute deadline: the agent's cap, whatever the clocks say.
    assert client.received[0].timeout.ToNanoseconds() == 200_000_000
    await asyncio.wait_for(_until(lambda: len(client.cancels) == 1), 5)
    assert client.cancels == [client.received[0].invocation_id]
    # A late answer to a cancelled invocation is counted and ignored; the stream stays.
    late = unchanged()
    late.invocation_id = client.received[0].invocation_id
    await client.call.write(pb.ProcessorServiceAttachRequest(result=late))
    await asyncio.wait_for(_until(lambda: env.metric_total("treadle.processor.spurious_messages") == 1), 5)
    assert env.app.processors.declaration(PID) is not None


async def _until(predicate: Callable[[], bool]) -> None:
    while not predicate():
        await asyncio.sleep(0.01)


# --- OBSERVE -------------------------------------------------------------------------------------


async def test_an_observer_that_never_answers_does_not_slow_the_run(make_env: Any) -> None:
    env = await make_env([Turn.say(["a", "b", "c"])])
    env.agent(inputs=[ProcessorRef(PID, timeout=30)], outputs=[ProcessorRef(PID, timeout=30)])
    client = env.client(None)  # receives everything, answers nothing
    await client.attach(decl(PID, hook_decl(pb.HOOK_PROCESS_INPUT, pb.HOOK_MODE_OBSERVE),
                             hook_decl(pb.HOOK_PROCESS_OUTPUT_STREAM, pb.HOOK_MODE_OBSERVE)))
    assert visible(await asyncio.wait_for(env.stream(), 5)) == ANSWER
    await asyncio.wait_for(_until(lambda: len(client.received) >= 8), 5)
    assert client.received[0].hook == pb.HOOK_PROCESS_INPUT
    assert not client.cancels  # nothing was waited for, so nothing was cancelled


# --- replicas ------------------------------------------------------------------------------------


async def test_replicas_keep_a_run_on_one_and_move_it_with_its_state_when_it_dies(make_env: Any) -> None:
    env = await make_env([Turn.say(["a", "b", "c", "d"])])
    env.agent(outputs=[ProcessorRef(PID)])
    local: dict[int, dict[str, tuple[int, int]]] = {}  # replica -> run -> (count, version)
    serving: list[RawProcessor] = []

    def counting(n_replica: int) -> Handler:
        async def handler(client: RawProcessor, inv: pb.Invocation) -> pb.InvocationResult | None:
            from treadle.wire.data import struct_to_dict

            if not serving:
                serving.append(client)
            count, version = local.setdefault(n_replica, {}).get(inv.run_id, (0, 0))
            if inv.HasField("state"):
                count, version = int(struct_to_dict(inv.state.value).get("n", 0)), inv.state.version
            if client is serving[0] and delta_text(inv) == "c":
                client.disconnect()  # dies holding this invocation
                return None
            result = stream_result(keep())
            result.state.value.fields["n"].number_value = count + 1
            result.state.version = version + 1
            local[n_replica][inv.run_id] = (count + 1, version + 1)
            return result

        return handler

    first, second = env.client(counting(1)), env.client(counting(2))
    await first.attach(decl(PID, hook_decl(pb.HOOK_PROCESS_OUTPUT_STREAM)))
    await second.attach(decl(PID, hook_decl(pb.HOOK_PROCESS_OUTPUT_STREAM)))
    assert visible(await env.stream()) == [
        "start", "step_start", "response_metadata", "text_start", "text_delta:a", "text_delta:b", "text_delta:c",
        "text_delta:d",
        "text_end", "step_finish", "finish:FINISH_REASON_STOP"]
    dead = serving[0]
    alive = second if dead is first else first
    assert [delta_text(i) for i in dead.received] == [None, None, None, "a", "b", "c"]  # the run stayed on one
    moved = alive.received[0]
    assert delta_text(moved) == "c"  # the invocation in flight, re-sent once
    assert moved.HasField("state") and moved.state.value.fields["n"].number_value == 5  # with its state
    assert [delta_text(i) for i in alive.received] == ["c", "d", None, None, None]


# --- the pipelined interface ---------------------------------------------------------------------


async def test_submit_output_stream_windows_chunks_sent_while_one_is_in_flight(make_env: Any) -> None:
    env = await make_env([])
    gates = [asyncio.Event(), asyncio.Event()]

    async def gated(client: RawProcessor, inv: pb.Invocation) -> pb.InvocationResult:
        n = len(client.received)
        if n <= len(gates):
            await gates[n - 1].wait()
        return await shout(client, inv)

    client = env.client(gated)
    await client.attach(decl(PID, hook_decl(pb.HOOK_PROCESS_OUTPUT_STREAM, delivery=pb.STREAM_DELIVERY_WINDOWED, max_window=3)))
    proc = RemoteProcessor(ProcessorRef(PID), env.app.processors)
    assert proc.pipelined()
    signal = asyncio.Event()
    run = RunInfo("run-w", "echo")

    def args(text: str) -> ProcessOutputStreamArgs:
        return ProcessOutputStreamArgs(part=Chunk.of(TextDelta("t", text)), stream_parts=[], state={},
                                       message_list=MessageList(), abort=lambda *a, **k: None,  # type: ignore[arg-type,return-value]
                                       abort_signal=signal, run=run)

    futures = [await proc.submit_output_stream(args("a"))]
    await asyncio.wait_for(_until(lambda: len(client.received) == 1), 5)
    for text in ("b", "drop", "c"):  # "a" is in flight: these wait together, up to the window
        futures.append(await proc.submit_output_stream(args(text)))
    blocked = asyncio.ensure_future(proc.submit_output_stream(args("d")))  # the window is full
    await asyncio.sleep(0)
    assert not blocked.done()
    gates[0].set()
    futures.append(await asyncio.wait_for(blocked, 5))
    futures.append(await proc.submit_output_stream(args("e")))
    await asyncio.wait_for(_until(lambda: len(client.received) == 2), 5)
    gates[1].set()
    results = [await asyncio.wait_for(f, 5) for f in futures]
    assert [r.payload.text if r else None for r in results] == ["A", "B", None, "C", "D", "E"]
    assert [[delta_text(inv, i) for i in range(len(inv.process_output_stream.parts))] for inv in client.received] == [
        ["a"], ["b", "drop", "c"], ["d", "e"]]


@pytest.mark.parametrize(("versions", "messages"), [((1, 2), [1, 1, 1, 1, 1]), ((1, 2, 3), [5])], ids=["v2", "v3"])
async def test_invocations_ready_together_travel_together_from_version_3(
    make_env: Any, versions: tuple[int, ...], messages: list[int],
) -> None:
    env = await make_env([])
    client = env.client()  # answers below, by hand
    welcome = await client.attach(decl(PID, hook_decl(pb.HOOK_PROCESS_OUTPUT_STREAM, max_in_flight=8)), versions=versions)
    assert welcome.protocol_version == max(versions)
    proc = RemoteProcessor(ProcessorRef(PID), env.app.processors)
    signal = asyncio.Event()
    run = RunInfo("run-b", "echo")

    def args(text: str) -> ProcessOutputStreamArgs:
        return ProcessOutputStreamArgs(part=Chunk.of(TextDelta("t", text)), stream_parts=[], state={},
                                       message_list=MessageList(), abort=lambda *a, **k: None,  # type: ignore[arg-type,return-value]
                                       abort_signal=signal, run=run)

    # Submitted in one loop turn: queued before the stream's writer runs.
    futures = [await proc.submit_output_stream(args(text)) for text in ("a", "b", "drop", "c", "d")]
    await asyncio.wait_for(_until(lambda: len(client.received) == 5), 5)
    assert client.messages == messages
    assert [delta_text(inv) for inv in client.received] == ["a", "b", "drop", "c", "d"]
    answers = []
    for inv in reversed(client.received):  # any order; version 3 may send them in one message
        answer = await shout(client, inv)
        answer.invocation_id = inv.invocation_id
        answers.append(answer)
    if 3 in versions:
        await client.call.write(pb.ProcessorServiceAttachRequest(results=pb.InvocationResults(results=answers)))
    else:
        for answer in answers:
            await client.call.write(pb.ProcessorServiceAttachRequest(result=answer))
    results = [await asyncio.wait_for(f, 5) for f in futures]
    assert [r.payload.text if r else None for r in results] == ["A", "B", None, "C", "D"]


# --- drain ---------------------------------------------------------------------------------------


async def test_app_stop_drains_attached_streams_at_once_and_still_serves_the_running_run(make_env: Any) -> None:
    env = await make_env([Turn.say(["a", "b", "c"])])
    env.agent(outputs=[ProcessorRef(PID)])
    release = asyncio.Event()
    reached = asyncio.Event()

    async def held(_: RawProcessor, inv: pb.Invocation) -> pb.InvocationResult:
        if delta_text(inv) == "b":
            reached.set()
            await release.wait()
        return stream_result(keep())

    client = env.client(held)
    await client.attach(decl(PID, hook_decl(pb.HOOK_PROCESS_OUTPUT_STREAM)))
    run = asyncio.ensure_future(env.stream())
    await asyncio.wait_for(reached.wait(), 5)
    stopping = asyncio.ensure_future(env.app.stop(10))
    await asyncio.wait_for(client.drained.wait(), 5)  # while the run still waits on "b"
    assert [d.grace_ms for d in client.drains] == [10_000]  # the runs' real grace
    assert not run.done()
    sent = len(client.received)
    release.set()
    assert visible(await asyncio.wait_for(run, 5)) == ANSWER
    assert len(client.received) > sent  # the running run's later chunks still came, and were answered
    await asyncio.wait_for(stopping, 10)
    await asyncio.wait_for(client.ended.wait(), 5)
    assert len(client.drains) == 1 and client.error is None  # one Drain, then a clean end
