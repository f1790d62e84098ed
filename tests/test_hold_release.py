"""Hold and release (protocol version 2): a stream outcome replaces one chunk by zero or more.

1. The PII guard example (``clients/python/examples/pii_guard.py``, a real process using the
   SDK's ``TextGate``) redacts e-mail addresses split across 2, 3 and 10 deltas, with per-chunk
   and windowed delivery: in the client's stream, in ``Generate.text``, in the step's text and in
   the response message. Every delta the client gets belongs to an open text part.
2. The same power in-process: ``process_output_stream`` returning a list of chunks.
3. ``TextGate`` releases at once what cannot be part of a match (no added latency there).
4. A version-1 stream may not answer with several chunks (the answer is malformed), and a
   version-1 processor keeps working unchanged.
5. The same guard in TypeScript, on the TypeScript SDK's ``TextGate`` (``tests/remote/ts/pii_guard.ts``).
6. The SDK page's ``TextGate`` example, run.
7. With memory, the stored message holds the redacted text too.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format

from tests.harness import Harness, harness_factory, text_of, types  # noqa: F401
from tests.remote.procs import Child, children
from tests.support import Turn
from tests.test_remote_processes import Server, server  # noqa: F401
from tests.test_remote_processor_protocol import decl, hook_decl, make_env, shout  # noqa: F401
from treadle.v1 import processor_service_pb2 as pb
from treadle.agents import ProcessorRef
from treadle.core.chunks import Chunk, TextDelta
from treadle.v1 import chunk_pb2
from treadle_client import AgentClient, TextGate

ADDRESS = "jane.doe@example.com"


def split(text: str, n: int) -> list[str]:
    size = -(-len(text) // n)
    return [text[i:i + size] for i in range(0, len(text), size)]


def answer_with_address(pieces: int) -> list[str]:
    """An answer whose address is split across ``pieces`` deltas (with text around it)."""
    return ["Write to ", *split(ADDRESS, pieces), " or call. ", "Thanks!"]


def client_text(chunks: list[chunk_pb2.Chunk]) -> str:
    return "".join(c.text_delta.text for c in chunks if c.WhichOneof("chunk") == "text_delta")


def assert_text_parts_consistent(chunks: list[chunk_pb2.Chunk]) -> None:
    """Every delta lands inside an open text part, with that part's id."""
    open_id: str | None = None
    for c in chunks:
        kind = c.WhichOneof("chunk")
        if kind == "text_start":
            assert open_id is None
            open_id = c.text_start.id
        elif kind == "text_delta":
            assert open_id is not None and c.text_delta.id == open_id, c
        elif kind == "text_end":
            assert c.text_end.id == open_id
            open_id = None
    assert open_id is None


# --- 1. the PII guard example, a real process --------------------------------------------------


@pytest.mark.parametrize("delivery", ["per_chunk", "windowed"])
@pytest.mark.parametrize("pieces", [2, 3, 10])
async def test_pii_guard_redacts_an_address_split_across_deltas(server: Any, delivery: str, pieces: int) -> None:
    s: Server = await server()
    deltas = answer_with_address(pieces)
    s.agent("support", [Turn.say(deltas), Turn.say(deltas)], output_processors=[ProcessorRef("pii-guard")])
    async with children() as start:
        await start("clients.python.examples.pii_guard", s.target, "--delivery", delivery)
        expected = "Write to [email] or call. Thanks!"

        chunks = await s.stream("support")
        assert client_text(chunks) == expected
        assert_text_parts_consistent(chunks)
        assert not any(ADDRESS[:5] in c.text_delta.text for c in chunks if c.WhichOneof("chunk") == "text_delta")
        step_finish = [c for c in chunks if c.WhichOneof("chunk") == "step_finish"]
        assert step_finish[0].step_finish.text == expected

        async with AgentClient(s.target) as client:
            result = await client.generate("support", "hi", timeout=30)
        assert result.text == expected
        assert result.steps[0].text == expected
        stored = "".join(p.text.text for m in result.messages for p in m.content.parts if p.WhichOneof("part") == "text")
        assert stored == expected


# --- 2. in-process processors return lists too ---------------------------------------------------


class HoldUntilEnd:
    """Holds every delta and releases the whole text, upper-cased, as one delta before text-end."""

    id = "hold-until-end"

    def __init__(self) -> None:
        self.held: list[str] = []

    def process_output_stream(self, args: Any) -> Any:
        part = args.part
        if part.type == "text-delta":
            self.held.append(part.payload.text)
            return []
        if part.type == "text-end" and self.held:
            text, self.held = "".join(self.held).upper(), []
            return [Chunk.of(TextDelta(text=text)), part]
        return part


class Splitter:
    """Splits each delta into one delta per character (a processor after the holder sees each)."""

    id = "splitter"
    seen: list[str] = []

    def process_output_stream(self, args: Any) -> Any:
        part = args.part
        if part.type != "text-delta":
            return part
        self.seen.append(part.payload.text)
        return [Chunk.of(TextDelta(id=part.payload.id, text=ch)) for ch in part.payload.text]


async def test_in_process_processors_hold_release_and_split(harness_factory: Any) -> None:
    h: Harness = harness_factory([Turn.say(["ab", "c", "de"])])
    splitter = Splitter()
    splitter.seen = []
    agent = h.agent(output_processors=[HoldUntilEnd(), splitter])
    chunks = await h.stream(agent, "hi")
    deltas = [c for c in chunks if c.type == "text-delta"]
    assert [d.payload.text for d in deltas] == ["A", "B", "C", "D", "E"]
    start = next(c for c in chunks if c.type == "text-start")
    assert {d.payload.id for d in deltas} == {start.payload.id}  # the released delta got the part's id
    assert types(chunks).index("text-end") > types(chunks).index("text-delta")
    assert splitter.seen == ["ABCDE"]  # the released delta went through the processor after
    h.server.add(Turn.say(["x", "y"]))
    result = await h.generate(h.agent(output_processors=[HoldUntilEnd()]), "hi")
    assert result.text == "XY" and result.steps[0].text == "XY"


# --- 3. the text gate holds only while a match is possible ---------------------------------------


class _Args:
    def __init__(self, part: Chunk) -> None:
        self.part = part
        self.run = type("Run", (), {"run_id": "r1"})()


async def gate_run(gate: TextGate, texts: list[str]) -> list[list[str]]:
    """What the gate released for each delta, then for text-end."""
    out: list[list[str]] = []
    for t in [*texts, None]:
        part = Chunk.of(TextDelta(id="t1", text=t)) if t is not None else Chunk("text-end", type("E", (), {"id": "t1"})())
        result = await gate.process(_Args(part))
        chunks = result if isinstance(result, list) else [result]
        out.append([c.payload.text if c.type == "text-delta" else "<end>" for c in chunks])
    return out


async def test_text_gate_releases_at_once_what_cannot_match() -> None:
    email = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
    gate = TextGate(lambda s: s, boundary=email)
    # Spaces and punctuation close every possible address: nothing is held past them.
    assert await gate_run(gate, ["Hello, ", "world! ", "Bye. "]) == [["Hello, "], ["world! "], ["Bye. "], ["<end>"]]
    # A word could still become an address: held until the next delta shows it does not.
    assert await gate_run(gate, ["Hi th", "ere. "]) == [["Hi "], ["there. "], ["<end>"]]


async def test_text_gate_word_and_sentence_boundaries_guard_whole_spans() -> None:
    spans: list[str] = []

    def guard(s: str) -> str:
        spans.append(s)
        return s.replace("darn", "****")

    words = TextGate(guard, boundary="word")
    assert await gate_run(words, ["oh da", "rn it"]) == [["oh "], ["**** "], ["it", "<end>"]]
    assert spans == ["oh ", "darn ", "it"]
    sentences = TextGate(lambda s: s.upper() if "bad" in s else s, boundary="sentence")
    assert await gate_run(sentences, ["A good one. A b", "ad one. Ok"]) == [
        ["A good one."], [" A BAD ONE."], [" Ok", "<end>"]]


# --- 4. version 1 ----------------------------------------------------------------------------------


async def test_a_version_1_stream_cannot_answer_with_several_chunks() -> None:
    from treadle.wire.server_hooks import MalformedResultError, decode_result
    from treadle.v1 import processor_service_pb2 as pb

    result = pb.InvocationResult(invocation_id="1")
    result.stream.chunks.add().chunks.SetInParent()
    with pytest.raises(MalformedResultError, match="needs protocol version 2; this stream speaks 1"):
        decode_result("process_output_stream", result, processor_id="p", version=1)
    assert decode_result("process_output_stream", result, processor_id="p", version=2).chunks[0].kind == "chunks"


async def test_the_sdk_negotiates_version_3(server: Any) -> None:
    """Version 3 keeps version 2's chunk lists and adds batches. (Version-1 processes:
    ``tests/test_remote_processor_protocol.py`` speaks only version 1.)"""
    s: Server = await server()
    s.agent("support", [Turn.say(answer_with_address(3))], output_processors=[ProcessorRef("pii-guard")])
    async with children() as start:
        await start("clients.python.examples.pii_guard", s.target)
        assert [c.version for c in s.app.processors.connections()] == [3]
        chunks = await s.stream("support")
    assert client_text(chunks) == "Write to [email] or call. Thanks!"


# --- 5. the same guard in TypeScript, on the TypeScript SDK -----------------------------------------

TS_GUARD = Path(__file__).resolve().parent / "remote" / "ts" / "pii_guard.ts"


@pytest.mark.parametrize("delivery", ["per_chunk", "windowed"])
async def test_the_typescript_pii_guard_redacts_the_same(server: Any, delivery: str) -> None:
    from tests.test_typescript_processor import TS_CLIENT, TSX

    s: Server = await server()
    answers = [answer_with_address(n) for n in (2, 3, 10)]
    s.agent("support", [Turn.say(a) for a in answers], output_processors=[ProcessorRef("pii-guard")])
    proc = await asyncio.create_subprocess_exec(
        str(TSX), str(TS_GUARD), s.target, delivery, cwd=TS_CLIENT,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )
    child = Child(proc)
    try:
        await child.expect("ready")
        assert await s.app.processors.wait_attached("pii-guard", 30)
        assert [c.version for c in s.app.processors.connections()] == [2]
        for _ in answers:
            chunks = await s.stream("support")
            assert client_text(chunks) == "Write to [email] or call. Thanks!"
            assert_text_parts_consistent(chunks)
            # The guard got the run's context: state counts the run's addresses, writer reports.
            reports = [json_format.MessageToDict(c.data.data) for c in chunks
                       if c.WhichOneof("chunk") == "data" and c.data.name == "data-redacted"]
            assert reports == [{"count": 1, "total": 1}]
    finally:
        await child.close()


# --- 6. the SDK page's example ---------------------------------------------------------------------

DOC_BLOCKS = {("clients/python/README.md", "python", 3): "test_the_sdk_pages_text_gate_example"}


async def test_the_sdk_pages_text_gate_example(server: Any) -> None:
    from tests.test_python_sdk import readme_example
    from treadle_client import attach

    example = readme_example("text gate")
    s: Server = await server()
    s.agent("support", [Turn.say(answer_with_address(3))], output_processors=[ProcessorRef("pii-guard")])
    async with await attach([example["PiiGuard"]()], s.target) as attachment:
        await attachment.ready(timeout=10)
        chunks = await s.stream("support")
    assert client_text(chunks) == "Write to [email] or call. Thanks!"


async def test_a_version_1_processor_still_works_unchanged(make_env: Any) -> None:
    """A process that offers only version 1 gets version 1 and the same stream as before."""
    env = await make_env([Turn.say(["a", "b", "c"])])
    env.agent(outputs=[ProcessorRef("v1-shout")])
    welcome = await env.client(shout).attach(decl("v1-shout", hook_decl(pb.HOOK_PROCESS_OUTPUT_STREAM)), versions=(1,))
    assert welcome.protocol_version == 1
    assert [c.version for c in env.app.processors.connections()] == [1]
    chunks = await env.stream()
    assert client_text(chunks) == "ABC"
    assert_text_parts_consistent(chunks)


# --- 7. the stored message -----------------------------------------------------------------------


async def test_the_stored_message_holds_the_redacted_text(tmp_path: Path) -> None:
    from tests.support import OpenAIServer
    from treadle.agents import Agent
    from treadle.app import TreadleApp
    from treadle.config import Settings
    from treadle.core.messages import SystemMessage

    app = TreadleApp(Settings(listen="127.0.0.1:0", example_agent=False, data_dir=tmp_path), env={})
    model = OpenAIServer([Turn.say(answer_with_address(10))])
    app.add_agent(Agent(id="support", name="support", model="openai/test-model", base_url=model.base_url,
                        instructions=[SystemMessage("Be brief.")], output_processors=[ProcessorRef("pii-guard")]))
    target = f"127.0.0.1:{await app.start()}"
    try:
        async with children() as start:
            await start("clients.python.examples.pii_guard", target)
            async with AgentClient(target) as client:
                result = await client.generate("support", "hi", options={"memory": {"resource": "u1", "thread_id": "t1"}},
                                               timeout=30)
                stored = await client.list_messages("u1", "t1")
    finally:
        await app.stop(0)
        model.close()
    assert result.text == "Write to [email] or call. Thanks!"
    texts = ["".join(p.text.text for p in m.content.parts if p.WhichOneof("part") == "text") for m in stored]
    assert texts[-1] == "Write to [email] or call. Thanks!"
    assert not any(ADDRESS in t or "jane" in t for t in texts[1:])
