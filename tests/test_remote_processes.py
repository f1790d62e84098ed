"""Remote processors in REAL child processes (``tests/remote/chaos_main.py``), killed with SIGKILL.

Each test starts a TreadleApp on a free port (spans kept in memory), agents that call the
loopback OpenAI server, and one or two processor processes attached with the Python SDK. Runs go
through ``AgentService.Stream`` with ``treadle_client.AgentClient``, so the chunks compared are
what a client receives over the wire.

What each test shows:

1. a processor process SIGKILLed while it holds a chunk (lock-step, pipelined and windowed
   delivery): ``fail_closed`` ends the run with an error naming processor and hook, after exactly
   the chunks it had answered; ``fail_open`` completes the run with every chunk exactly once;
2. two replicas of one id: the one serving the run is killed mid-run; the other finishes it,
   starting at the chunk left unanswered, with the run's state (a word count) intact;
3. an OBSERVE processor sleeping 1 s per chunk: a 50-delta run completes while it has handled
   only its first few chunks;
4. one trace: the processor process's spans (exported over OTLP/HTTP to a receiver in this test)
   share the server's trace id, each a child of the server's span for its hook (the final
   ``finish`` chunk included);
5. a processor named by an agent created over the API but never attached, under each policy.

Nothing waits on a sleep: the tests read what a child prints on stdout (``blocking``, one line
per chunk handled, ``flushed``), the chunks the client has received so far, and the server's own
state (the attached streams). A child that blocks on a chunk is killed only after it said so and
after the client has received every chunk it answered before, so what the server owes is exact.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.remote.procs import ROOT, Child
from tests.support.otlp import OtlpReceiver, otlp  # noqa: F401
from tests.support import OpenAIServer, Turn
from treadle.agents import Agent, ProcessorRef
from treadle.app import TreadleApp
from treadle.config import Settings
from treadle.core.messages import SystemMessage
from treadle.v1 import chunk_pb2
from treadle_client import AgentClient

PID = "chaos"
HEAD = ["start", "step_start", "response_metadata", "text_start"]
TAIL = ["text_end", "step_finish", "finish:FINISH_REASON_STOP"]


def words(n: int, prefix: str = "w") -> list[str]:
    """``n`` text deltas of two words each: ``["w0a w0b ", "w1a w1b ", ...]``."""
    return [f"{prefix}{i}a {prefix}{i}b " for i in range(n)]


def visible(chunks: list[chunk_pb2.Chunk]) -> list[str]:
    """Each chunk as ``kind``, ``text_delta:TEXT``, ``data:NAME`` or ``finish:REASON``."""
    out = []
    for c in chunks:
        kind = c.WhichOneof("chunk")
        if kind == "text_delta":
            out.append(f"text_delta:{c.text_delta.text}")
        elif kind == "data":
            out.append(f"data:{c.data.name}")
        elif kind == "finish":
            out.append(f"finish:{chunk_pb2.FinishReason.Name(c.finish.reason)}")
        else:
            out.append(kind)
    return out


def deltas(texts: list[str]) -> list[str]:
    return [f"text_delta:{t}" for t in texts]


async def until(predicate: Callable[[], bool], timeout: float = 10) -> None:
    """Poll server-side state until ``predicate`` holds (AssertionError after ``timeout``)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        if loop.time() > end:
            raise AssertionError(f"still false after {timeout}s: {predicate}")
        await asyncio.sleep(0.01)


# --- the server ------------------------------------------------------------------------------------


@dataclass
class Server:
    app: TreadleApp
    spans: InMemorySpanExporter
    models: list[OpenAIServer] = field(default_factory=list)

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.app.port}"

    def agent(self, agent_id: str, script: list[Any], **processors: list[ProcessorRef]) -> None:
        """A code agent that calls its own loopback OpenAI server, playing ``script``."""
        model = self.model(script)
        self.app.add_agent(Agent(id=agent_id, name=agent_id, model="openai/test-model", base_url=model.base_url,
                                 instructions=[SystemMessage("Be brief.")], **processors))

    def model(self, script: list[Any]) -> OpenAIServer:
        model = OpenAIServer(script)
        self.models.append(model)
        return model

    async def stream(self, agent_id: str, prompt: str = "hi") -> list[chunk_pb2.Chunk]:
        """The run's chunks as a client receives them over ``AgentService.Stream``."""
        return await self.start_run(agent_id, prompt).result()

    def start_run(self, agent_id: str, prompt: str = "hi") -> ClientRun:
        return ClientRun(self.target, agent_id, prompt)

    def replicas(self, processor_id: str) -> int:
        return sum(processor_id in c.declarations for c in self.app.processors.connections() if c.alive)

    def server_spans(self) -> list[ReadableSpan]:
        return list(self.spans.get_finished_spans())


class ClientRun:
    """A client streaming one run in the background; ``chunks`` grows as they arrive."""

    def __init__(self, target: str, agent_id: str, prompt: str) -> None:
        self.chunks: list[chunk_pb2.Chunk] = []
        self._task = asyncio.ensure_future(self._read(target, agent_id, prompt))

    async def _read(self, target: str, agent_id: str, prompt: str) -> None:
        async with AgentClient(target) as client:
            async for chunk in client.stream(agent_id, prompt, timeout=30):
                self.chunks.append(chunk)

    async def received(self, texts: list[str]) -> None:
        """Wait until the client has received these text deltas (all, in this order)."""
        await until(lambda: visible(self.chunks)[len(HEAD):len(HEAD) + len(texts)] == deltas(texts) or self._task.done())
        assert visible(self.chunks)[len(HEAD):len(HEAD) + len(texts)] == deltas(texts), visible(self.chunks)

    async def result(self, timeout: float = 20) -> list[chunk_pb2.Chunk]:
        await asyncio.wait_for(asyncio.shield(self._task), timeout)
        return self.chunks


@pytest.fixture
async def server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Callable[[], Awaitable[Server]]]:
    made: list[Server] = []

    async def start() -> Server:
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        settings = Settings(listen="127.0.0.1:0", example_agent=False, data_dir=tmp_path_factory.mktemp("data"))
        app = TreadleApp(settings, env={}, tracer_provider=provider)
        made.append(s := Server(app, exporter))
        await app.start()
        return s

    yield start
    for s in made:
        await s.app.stop(0)
        for model in s.models:
            model.close()


# --- the processor processes -----------------------------------------------------------------------


class Processor(Child):
    """A ``tests.remote.chaos_main`` process; ``reports(kind)`` parses the lines read so far."""

    def reports(self, kind: str) -> list[dict[str, Any]]:
        return [json.loads(line.split(" ", 1)[1]) for line in self.lines if line.startswith(f"{kind} ")]

    def deltas(self) -> list[str]:
        """The text deltas this process handled (began handling), in order."""
        return [r["text"] for r in self.reports("chunk") if r["type"] == "text-delta"]

    def kill(self) -> None:
        self.proc.kill()  # SIGKILL: no goodbye on the stream, no flush, nothing

    async def finish(self) -> None:
        """End the process (stdin closed, or already dead) and read what it printed to the end."""
        await self.close()
        assert self.proc.stdout is not None
        self.lines.extend((await self.proc.stdout.read()).decode().splitlines())


Spawn = Callable[..., Awaitable[Processor]]


@pytest.fixture
async def processor() -> AsyncIterator[Spawn]:
    """``await processor(server, *args, env={...})``: a chaos process, attached (it said ``ready``)."""
    started: list[Processor] = []

    async def spawn(s: Server, *args: str, env: dict[str, str] | None = None) -> Processor:
        base = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        base["PYTHONPATH"] = f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tests.remote.chaos_main", s.target, *args, cwd=ROOT, env={**base, **(env or {})},
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        )
        child = Processor(proc)
        started.append(child)
        await child.expect("ready")
        return child

    yield spawn
    for child in started:
        await child.close()


# --- 1. killed mid-stream, under each failure policy -----------------------------------------------

ANSWER = words(8)
BLOCK_AT = 4


@pytest.mark.parametrize("delivery", ["per_chunk", "pipelined", "windowed"])
@pytest.mark.parametrize("policy", ["fail_closed", "fail_open"])
async def test_a_processor_killed_mid_stream_follows_the_failure_policy_without_losing_a_chunk(
    server: Any, processor: Spawn, policy: str, delivery: str,
) -> None:
    s: Server = await server()
    s.agent("guarded", [Turn.say(ANSWER)], output_processors=[ProcessorRef(PID, policy)])
    child = await processor(s, "--delivery", delivery, "--block-at", str(BLOCK_AT))
    run = s.start_run("guarded")
    blocked = json.loads((await child.expect("blocking")).split(" ", 1)[1])  # it never answers
    # The chunks of the invocation it blocks in (just the 4th delta, unless windowed) get no
    # answer; those before did, and once the client has them, the server has every answer sent.
    unanswered = [r["text"] for r in child.reports("chunk") if r["inv"] == blocked["inv"] and r["text"]]
    answered = ANSWER[:ANSWER.index(unanswered[0])]
    if delivery != "windowed":
        assert unanswered == [ANSWER[BLOCK_AT - 1]]
    await run.received(answered)
    child.kill()
    chunks = await run.result()
    await child.finish()
    assert child.deltas() == ANSWER[:BLOCK_AT]  # it got as far as the 4th delta, and no further

    if policy == "fail_closed":
        # The answered deltas, each once; then the run ends naming the processor and hook.
        assert visible(chunks) == [*HEAD, *deltas(answered), "error", "finish:FINISH_REASON_ERROR"]
        message = chunks[-2].error.message
        assert PID in message and "processOutputStream" in message and "closed" in message
    else:
        # The whole answer, each delta once: the answered ones, then the rest skipped.
        assert visible(chunks) == [*HEAD, *deltas(ANSWER), *TAIL]
        skips = [str((e.attributes or {}).get("reason")) for span in s.server_spans() for e in span.events
                 if e.name == "treadle.processor.fail_open_skip"]
        assert skips and any("closed" in r for r in skips), skips


# --- 2. replicas -----------------------------------------------------------------------------------

LONG_ANSWER = words(10)  # 20 words
REPLICA_BLOCK_AT = 6  # the survivor handles deltas 6..10, five of them: it never reaches its 6th


@pytest.mark.parametrize("delivery", ["per_chunk", "pipelined"])
async def test_a_run_moves_with_its_state_when_the_replica_serving_it_is_killed(
    server: Any, processor: Spawn, delivery: str,
) -> None:
    s: Server = await server()
    s.agent("counted", [Turn.say(LONG_ANSWER)], output_processors=[ProcessorRef(PID)])  # fail_closed
    replicas = [await processor(s, "--delivery", delivery, "--block-at", str(REPLICA_BLOCK_AT)) for _ in range(2)]
    await until(lambda: s.replicas(PID) == 2)
    run = s.start_run("counted")

    waits = {asyncio.ensure_future(r.expect("blocking")): r for r in replicas}
    done, waiting = await asyncio.wait(waits, timeout=20, return_when=asyncio.FIRST_COMPLETED)
    for w in waiting:
        w.cancel()
    await asyncio.gather(*waiting, return_exceptions=True)
    assert done, "no replica reached the 6th delta"
    serving = waits[done.pop()]
    survivor = next(r for r in replicas if r is not serving)
    # Once the client has deltas 1..5, their answers (and the state they carry) are in the
    # server: only the 6th and later are owed by the replica about to die.
    await run.received(LONG_ANSWER[:REPLICA_BLOCK_AT - 1])
    serving.kill()
    chunks = await run.result()
    await serving.finish()
    await survivor.finish()

    # The client saw the whole answer once, and the count of all 20 words, from the survivor.
    # (It writes the count on the step's model finish: before step-finish.)
    assert visible(chunks) == [*HEAD, *deltas(LONG_ANSWER), "text_end", "data:data-word-count", "step_finish",
                               "finish:FINISH_REASON_STOP"]
    [count] = [json_format.MessageToDict(c.data.data) for c in chunks if c.WhichOneof("chunk") == "data"]
    assert count == {"words": 20, "pid": survivor.pid}
    # The first served deltas 1..6 (and died on the 6th); the other took over at the 6th, re-sent
    # once, with the state of deltas 1..5 (10 words) it had never seen.
    assert serving.deltas() == LONG_ANSWER[:REPLICA_BLOCK_AT]
    assert survivor.deltas() == LONG_ANSWER[REPLICA_BLOCK_AT - 1:]
    assert [r["type"] for r in survivor.reports("chunk")][-3:] == ["text-end", "finish", "step-finish"]
    assert len({r["run"] for r in serving.reports("chunk") + survivor.reports("chunk")}) == 1


# --- 3. OBSERVE ------------------------------------------------------------------------------------


async def test_an_observer_sleeping_one_second_per_chunk_does_not_hold_the_stream(
    server: Any, processor: Spawn,
) -> None:
    s: Server = await server()
    answer = [f"d{i} " for i in range(50)]
    s.agent("observed", [Turn.say(answer)], output_processors=[ProcessorRef(PID)])
    observer = await processor(s, "--observe", "--sleep", "1")
    chunks = await asyncio.wait_for(s.stream("observed"), 20)
    assert visible(chunks) == [*HEAD, *deltas(answer), *TAIL]
    # Only now ask how far it got: every chunk line before "flushed" was printed before the
    # question was read. Had the run waited for it, it would have handled all 50 deltas (and
    # the run would have taken 50 s).
    await observer.expect("chunk")  # it did receive the stream ...
    await observer.send("flush")
    await observer.expect("flushed")
    handled = observer.reports("chunk")
    assert 1 <= len(handled) <= 5, handled  # ... and is still on its first chunks (of 50+)


# --- 4. one trace across processes -----------------------------------------------------------------


@dataclass
class Trace:
    local: list[ReadableSpan]
    """The server's spans."""
    remote: list[Any]
    """The processor process's spans, as the OTLP receiver got them."""
    chunk_of: dict[int, str]
    """The remote ``processOutputStream`` span id -> the type of the chunk it handled."""

    def server(self, name: str) -> list[ReadableSpan]:
        return [sp for sp in self.local if sp.name == name]

    def processor(self, name: str) -> list[Any]:
        return [sp for sp in self.remote if sp.name == name]


def _id(raw: bytes) -> int:
    return int.from_bytes(raw, "big")


async def traced_run(server: Any, processor: Spawn, otlp: OtlpReceiver) -> Trace:
    """One run with the chaos processor as input and output processor, exporting its spans."""
    s: Server = await server()
    s.agent("traced", [Turn.say(["a ", "b ", "c"])], input_processors=[ProcessorRef(PID)],
            output_processors=[ProcessorRef(PID)])
    child = await processor(s, "--with-input", env={"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": otlp.endpoint})
    await s.stream("traced")
    await until(lambda: any(sp.name == "invoke_agent traced" for sp in s.server_spans()))
    await child.send("flush")  # the child exports what it has, and says so once the receiver has it
    await child.expect("flushed")
    return Trace(s.server_spans(), otlp.spans(), {int(r["inv"], 16): r["type"] for r in child.reports("chunk")})


async def test_server_and_remote_processor_spans_form_one_trace(server: Any, processor: Spawn, otlp: OtlpReceiver) -> None:
    t = await traced_run(server, processor, otlp)
    assert len({sp.context.trace_id for sp in t.local} | {_id(sp.trace_id) for sp in t.remote}) == 1

    [server_input] = t.server(f"processInput {PID}")
    [remote_input] = t.processor(f"processInput {PID}")
    assert _id(remote_input.parent_span_id) == server_input.context.span_id

    # processOutputStream: one server span per step; one processor span per chunk, its child.
    [step] = t.server("step 0")
    [server_stream] = [sp for sp in t.server(f"processOutputStream {PID}")
                       if sp.parent is not None and sp.parent.span_id == step.context.span_id]
    remote_stream = t.processor(f"processOutputStream {PID}")
    assert len(t.remote) == 1 + len(remote_stream)
    assert sorted(t.chunk_of[_id(sp.span_id)] for sp in remote_stream) == sorted(
        ["step-start", "response-metadata", "text-start", "text-delta", "text-delta", "text-delta", "text-end",
         "step-finish", "finish"])
    in_step = [sp for sp in remote_stream if t.chunk_of[_id(sp.span_id)] != "finish"]
    assert {_id(sp.parent_span_id) for sp in in_step} == {server_stream.context.span_id}


async def test_the_remote_span_of_the_final_finish_chunk_has_its_parent_in_the_trace(
    server: Any, processor: Spawn, otlp: OtlpReceiver,
) -> None:
    t = await traced_run(server, processor, otlp)
    [remote_finish] = [sp for sp in t.processor(f"processOutputStream {PID}") if t.chunk_of[_id(sp.span_id)] == "finish"]
    assert _id(remote_finish.parent_span_id) in {sp.context.span_id for sp in t.server(f"processOutputStream {PID}")}


# --- 5. never attached, with an agent made over the API --------------------------------------------


@pytest.mark.parametrize("policy", ["FAILURE_POLICY_FAIL_CLOSED", "FAILURE_POLICY_FAIL_OPEN"])
async def test_a_processor_never_attached_follows_the_policy_of_an_agent_created_over_the_api(
    server: Any, policy: str,
) -> None:
    s: Server = await server()
    # Fail closed, the run ends on the step-start chunk, before the model is called.
    model = s.model([] if policy == "FAILURE_POLICY_FAIL_CLOSED" else [Turn.say(["x ", "y"])])
    async with AgentClient(s.target) as client:
        await client.create_agent({
            "id": "api-agent", "model": "openai/test-model", "baseUrl": model.base_url,
            "outputProcessors": [{"id": "absent", "failurePolicy": policy}],
        })
        chunks = [c async for c in client.stream("api-agent", "hi", timeout=30)]
    if policy == "FAILURE_POLICY_FAIL_CLOSED":
        assert visible(chunks) == ["start", "error", "finish:FINISH_REASON_ERROR"]
        message = chunks[1].error.message
        assert "absent" in message and "processOutputStream" in message and "not attached" in message
    else:
        assert visible(chunks) == [*HEAD, *deltas(["x ", "y"]), *TAIL]
