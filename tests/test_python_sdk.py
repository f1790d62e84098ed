"""The Python processor and tool SDK (``treadle_client``): declaration, semantics, tracing,
reconnection. Most tests attach from this process (over real gRPC); the reconnect tests use a
separate processor process and restart the server under it."""

from __future__ import annotations

import asyncio
import re
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.remote.procs import children
from tests.support import OpenAIServer, Turn
from treadle.agents import Agent, CallOptions, ProcessorRef, RunRequest
from treadle.app import TreadleApp
from treadle.core.chunks import Chunk
from treadle.config import Settings
from treadle.core.messages import Message, SystemMessage
from treadle.v1 import processor_service_pb2 as pb
from treadle_client import AttachError, attach, serve_tools
from treadle_client._processors import declaration


# --- declaration ---------------------------------------------------------------------------


class Guard:
    """Blocks bad words."""

    id = "guard"
    observe = {"process_output_result"}
    timeouts = {"process_input": 2.5}
    stream_delivery = "windowed"
    max_window = 16
    max_in_flight = 4
    process_data_parts = True

    async def process_input(self, args: Any) -> Any: ...
    async def process_output_stream(self, args: Any) -> Any: ...
    def process_output_result(self, args: Any) -> Any: ...


def test_hooks_are_declared_from_the_methods_present() -> None:
    d = declaration(Guard())
    assert d.id == "guard" and d.description == "Blocks bad words."
    hooks = {h.hook: h for h in d.hooks}
    assert set(hooks) == {pb.HOOK_PROCESS_INPUT, pb.HOOK_PROCESS_OUTPUT_STREAM, pb.HOOK_PROCESS_OUTPUT_RESULT}
    assert hooks[pb.HOOK_PROCESS_INPUT].mode == pb.HOOK_MODE_MUTATE
    assert hooks[pb.HOOK_PROCESS_INPUT].timeout.ToMilliseconds() == 2500
    assert hooks[pb.HOOK_PROCESS_OUTPUT_RESULT].mode == pb.HOOK_MODE_OBSERVE
    stream = hooks[pb.HOOK_PROCESS_OUTPUT_STREAM]
    assert (stream.delivery, stream.max_window, stream.max_in_flight, stream.process_data_parts) == (
        pb.STREAM_DELIVERY_WINDOWED, 16, 4, True)


@pytest.mark.parametrize(("attrs", "message"), [
    ({"id": ""}, "needs a non-empty string `id`"),
    ({"id": "x"}, "implements no hook"),
    ({"id": "x", "process_input": lambda self, a: None, "observe": {"process_output_step"}},
     "`observe` names hooks it does not implement: ['process_output_step']"),
    ({"id": "x", "process_input": lambda self, a: None, "stream_delivery": "bulk"},
     "stream_delivery must be"),
])
def test_bad_declarations_are_refused_before_connecting(attrs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        declaration(type("P", (), attrs)())


# --- a live server -------------------------------------------------------------------------


class Live:
    def __init__(self, app: TreadleApp, exporter: InMemorySpanExporter, target: str) -> None:
        self.app, self.exporter, self.target = app, exporter, target
        self.model: OpenAIServer | None = None

    def agent(self, script: list[Any], **kw: Any) -> Agent:
        self.model = OpenAIServer(script)
        return Agent(id="sdk-agent", model="openai/test-model", base_url=self.model.base_url,
                     instructions=[SystemMessage("be brief")], **kw)

    async def stream(self, agent: Agent, prompt: str = "hi", **options: Any) -> list[Chunk]:
        request = RunRequest(messages=[Message.user(prompt)], options=CallOptions(**options))
        return [c async for c in self.app.loop.stream(agent, request)]


@pytest.fixture
async def live() -> AsyncIterator[Any]:
    made: list[Live] = []

    async def start(port: int = 0) -> Live:
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        app = TreadleApp(Settings(listen=f"127.0.0.1:{port}", example_agent=False),
                         tracer_provider=provider, env={})
        live = Live(app, exporter, f"127.0.0.1:{await app.start()}")
        made.append(live)
        return live

    yield start
    for live in made:
        await live.app.stop(0)
        if live.model is not None:
            live.model.close()


class Stateful:
    """Counts steps and chunks in ``state`` and reports them with ``writer.custom``."""

    id = "stateful"

    async def process_input_step(self, args: Any) -> None:
        args.state["steps"] = args.state.get("steps", 0) + 1

    def process_output_stream(self, args: Any) -> Any:
        if args.part.type == "text-delta":
            args.state["deltas"] = args.state.get("deltas", 0) + 1
            if "drop" in args.part.payload.text:
                return None
        return args.part

    async def process_output_result(self, args: Any) -> None:
        await args.writer.custom({"type": "data-summary", "data": dict(args.state)})


async def test_state_is_shared_by_hooks_and_steps_and_writer_custom_works(live) -> None:
    server = await live()
    agent = server.agent([Turn.call("missing", {}), Turn.say(["a ", "drop me", " b"])],
                         output_processors=[ProcessorRef("stateful")],
                         input_processors=[ProcessorRef("stateful")])
    async with await attach([Stateful()], server.target) as attachment:
        await attachment.ready(timeout=10)
        chunks = await server.stream(agent)
        chunks_again = await server.stream(server.agent([Turn.say("x")], output_processors=[
            ProcessorRef("stateful")], input_processors=[ProcessorRef("stateful")]))
    [summary] = [c.data for c in chunks if c.type == "data-summary"]
    assert summary == {"steps": 2, "deltas": 3}
    assert "".join(c.payload.text for c in chunks if c.type == "text-delta") == "a  b"  # dropped
    assert [c.data for c in chunks_again if c.type == "data-summary"] == [{"steps": 1, "deltas": 1}]


class Strict:
    id = "strict"

    def process_output_step(self, args: Any) -> None:
        args.abort("too short", retry=True, metadata={"length": len(args.text)})

    def process_output_stream(self, args: Any) -> Any:
        raise RuntimeError("a bug in the processor")  # logged; the chunk passes unchanged


async def test_abort_raises_and_other_errors_follow_the_hook_rules(live) -> None:
    server = await live()
    agent = server.agent([Turn.say("hey")], output_processors=[ProcessorRef("strict")])
    async with await attach([Strict()], server.target) as attachment:
        await attachment.ready(timeout=10)
        chunks = await server.stream(agent)
    assert "".join(c.payload.text for c in chunks if c.type == "text-delta") == "hey"
    [tripwire] = [c.payload for c in chunks if c.type == "tripwire"]
    assert (tripwire.reason, tripwire.retry, tripwire.metadata, tripwire.processor_id) == (
        "too short", True, {"length": 3}, "strict")


class Slow:
    """Observes every chunk and never finishes on its own."""

    id = "slow"
    observe = {"process_output_stream"}

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.seen = 0

    async def process_output_stream(self, args: Any) -> Any:
        self.seen += 1
        await self.release.wait()
        return None  # ignored: OBSERVE answers are never sent


async def test_an_observe_hook_never_holds_the_run(live) -> None:
    server = await live()
    slow = Slow()
    agent = server.agent([Turn.say(["one ", "two"])], output_processors=[ProcessorRef("slow")])
    async with await attach([slow], server.target) as attachment:
        await attachment.ready(timeout=10)
        chunks = await server.stream(agent)
        assert "".join(c.payload.text for c in chunks if c.type == "text-delta") == "one two"
        # The run ended without waiting for it; it gets its first chunk (fire and forget: maybe
        # after the run ended) and sits on it.
        async def first_seen() -> None:
            while slow.seen < 1:
                await asyncio.sleep(0.01)

        await asyncio.wait_for(first_seen(), 10)
        assert slow.seen == 1  # one at a time: the next waits for the one it sits on
        slow.release.set()


class Traced:
    id = "traced"

    def process_input(self, args: Any) -> None:
        return None


async def test_the_processor_span_is_a_child_of_the_hook_span(live) -> None:
    server = await live()
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    agent = server.agent([Turn.say("ok")], input_processors=[ProcessorRef("traced")])
    async with await attach([Traced()], server.target, tracer_provider=provider) as attachment:
        await attachment.ready(timeout=10)
        await server.stream(agent)
    [hook_span] = [s for s in server.exporter.get_finished_spans() if s.name == "processInput traced"]
    [remote] = exporter.get_finished_spans()
    assert remote.name == "processInput traced"
    assert remote.context.trace_id == hook_span.context.trace_id
    assert remote.parent is not None and remote.parent.span_id == hook_span.context.span_id
    assert remote.attributes["treadle.processor.id"] == "traced"


async def test_one_call_attaches_to_several_servers(live) -> None:
    one, two = await live(), await live()
    async with await attach([Traced()], [one.target, two.target]) as attachment:
        await attachment.ready(timeout=10)
        assert await one.app.processors.wait_attached("traced", 10)
        assert await two.app.processors.wait_attached("traced", 10)
        assert attachment.attached()


async def test_a_refused_handshake_is_reported_by_ready(live) -> None:
    server = await live()
    bad = type("Bad", (), {"id": "bad id!", "process_input": lambda self, a: None})()
    async with await attach([bad], server.target) as attachment:
        with pytest.raises(AttachError) as e:
            await attachment.ready(timeout=10)
    assert e.value.code.name == "INVALID_ARGUMENT"
    assert "bad id!" in e.value.details


# --- ordering and state versions, without a server -------------------------------------------


class Recorder:
    id = "rec"

    def __init__(self) -> None:
        self.started: list[str] = []
        self.gate = asyncio.Event()

    async def process_input(self, args: Any) -> None:
        tag = f"{args.run.run_id}:{args.request_context['n']}"
        self.started.append(tag)
        if tag == "A:1":
            await self.gate.wait()
        args.state["last"] = tag


def _invocation(run: str, n: int, state: dict[str, Any] | None = None, version: int = 0) -> Any:
    inv = pb.Invocation(invocation_id=f"{run}{n}", processor_id="rec", hook=pb.HOOK_PROCESS_INPUT,
                        run_id=run, process_input=pb.ProcessInputArgs())
    inv.request_context.update({"n": n})
    if state is not None:
        inv.state.value.update(state)
        inv.state.version = version
    return pb.ProcessorServiceAttachResponse(invocation=inv)


async def test_one_run_is_sequential_other_runs_concurrent_state_versions_hold_run_ended_forgets() -> None:
    from treadle_client._processors import _Host, _ProcessorSession
    from treadle_client._tracing import tracer_from

    rec = Recorder()
    host = _Host({"rec": rec}, [declaration(rec)], "test", tracer_from(None), state_ttl=60)
    results: asyncio.Queue[Any] = asyncio.Queue()
    session = _ProcessorSession(host, lambda m: results.put_nowait(pb.InvocationResult.FromString(m)))  # answers go serialized
    session.on_message(_invocation("A", 1, {"from": "server"}, version=3))
    session.on_message(_invocation("A", 2, {"stale": True}, version=2))  # older: ignored
    session.on_message(_invocation("B", 1))
    first = await results.get()
    assert first.invocation_id == "B1" and rec.started == ["A:1", "B:1"]  # A:2 waits for A:1
    assert first.state.version == 1
    rec.gate.set()
    a1, a2 = await results.get(), await results.get()
    assert [a1.invocation_id, a2.invocation_id] == ["A1", "A2"]
    assert dict(a1.state.value) == {"from": "server", "last": "A:1"} and a1.state.version == 4
    assert dict(a2.state.value) == {"from": "server", "last": "A:2"} and a2.state.version == 5
    assert set(host.runs) == {("A", "rec"), ("B", "rec")}
    session.on_message(pb.ProcessorServiceAttachResponse(run_ended=pb.RunEnded(run_id="A")))
    assert set(host.runs) == {("B", "rec")}  # the server said run A is over
    await session.close()


async def test_a_cancel_ends_only_the_invocation_it_names_and_the_run_goes_on_in_order() -> None:
    from treadle_client._processors import _Host, _ProcessorSession
    from treadle_client._tracing import tracer_from

    rec = Recorder()
    host = _Host({"rec": rec}, [declaration(rec)], "test", tracer_from(None), state_ttl=60)
    results: asyncio.Queue[Any] = asyncio.Queue()
    session = _ProcessorSession(host, lambda m: results.put_nowait(pb.InvocationResult.FromString(m)))
    for n in (1, 2, 3, 4):
        session.on_message(_invocation("A", n))  # A:1 sits on the gate; the rest wait their turn
    while rec.started != ["A:1"]:
        await asyncio.sleep(0)
    cancel = pb.ProcessorServiceAttachResponse(cancel={"invocation_id": "A3"})  # waiting: skipped
    session.on_message(cancel)
    cancel = pb.ProcessorServiceAttachResponse(cancel={"invocation_id": "A1"})  # running: ended
    session.on_message(cancel)
    answers = [await asyncio.wait_for(results.get(), 5) for _ in range(2)]
    assert [a.invocation_id for a in answers] == ["A2", "A4"]  # the cancelled ones are not answered
    assert rec.started == ["A:1", "A:2", "A:4"]
    assert results.empty()
    await session.close()


# --- reconnection ----------------------------------------------------------------------------


async def test_the_sdk_reattaches_after_the_server_restarts(live) -> None:
    first = await live()
    port = first.app.port
    assert port is not None
    async with children() as start:
        await start("tests.remote.processor_main", first.target, "lowercase")
        await start("tests.remote.tool_main", first.target, "whoami")
        assert await first.app.processors.wait_attached("lowercase", 10)
        await first.app.stop(0)  # drains both streams; the processes reconnect with backoff
        second = await live(port)
        assert await second.app.processors.wait_attached("lowercase", 30)
        await second.app.tool_hub.wait_attached("whoami", timeout=30)
        agent = second.agent([Turn.call("whoami", {}), Turn.say("ok")],
                             input_processors=[ProcessorRef("lowercase")], tools=["whoami"])
        chunks = await second.stream(agent, "HELLO")
    assert second.model is not None
    user = [m for m in second.model.recorded[0].body["messages"] if m["role"] == "user"]
    assert user[0]["content"] in ("hello", [{"type": "text", "text": "hello"}])
    assert [c.type for c in chunks if c.type.startswith("tool-")][-1] == "tool-result"


# --- the README's examples -------------------------------------------------------------------

README = Path(__file__).resolve().parents[1] / "clients" / "python" / "README.md"
DOC_BLOCKS = {("clients/python/README.md", "python", 2): "test_readme_processor_example",
              ("clients/python/README.md", "python", 5): "test_readme_tool_example"}
"""The README's other blocks are run by tests/test_python_client_readme.py and (the text gate)
tests/test_hold_release.py."""


def readme_example(name: str) -> dict[str, Any]:
    """Run the README block marked ``# example: NAME`` as a module (not as ``__main__``)."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    [code] = [b for b in blocks if b.startswith(f"# example: {name}\n")]
    namespace: dict[str, Any] = {"__name__": f"readme_{name}"}
    exec(compile(code, f"{README}:{name}", "exec"), namespace)  # noqa: S102
    return namespace


async def test_readme_processor_example(live) -> None:
    example = readme_example("processor")
    server = await live()
    agent = server.agent([Turn.say(["Hello ", "the secret ", "is out"])],
                         output_processors=[ProcessorRef("content-filter")])
    async with await attach([example["ContentFilter"](["secret"])], server.target) as attachment:
        await attachment.ready(timeout=10)
        chunks = await server.stream(agent)
    assert "".join(c.payload.text for c in chunks if c.type == "text-delta") == "Hello "
    [tripwire] = [c.payload for c in chunks if c.type == "tripwire"]
    assert tripwire.reason == "Blocked content detected in output"


async def test_readme_tool_example(live) -> None:
    example = readme_example("tool")
    server = await live()
    agent = server.agent([Turn.call("weather", {"city": "Oslo"}), Turn.say("clear")], tools=["weather"])
    async with await serve_tools([example["weather"]], server.target) as attachment:
        await attachment.ready(timeout=10)
        chunks = await server.stream(agent)
    assert [c.data for c in chunks if c.type == "data-progress"] == [{"city": "Oslo"}]
    assert [c.payload.result for c in chunks if c.type == "tool-result"] == [{"city": "Oslo", "sky": "clear"}]


async def test_run_processors_serves_until_sigterm(live) -> None:
    server = await live()
    async with children() as start:
        child = await start("tests.remote.processor_main", server.target, "lowercase", "--blocking",
                            ready=None)
        assert await server.app.processors.wait_attached("lowercase", 30)
        child.proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(child.proc.wait(), 30) == 0
    assert server.app.processors.declaration("lowercase") is None  # it detached on the way out

