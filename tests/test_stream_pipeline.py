"""The pipelined processOutputStream path: chunks are submitted without waiting for answers,
answers are applied in chunk order, and aborts and drops behave as in lock-step mode."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.harness import Harness, harness_factory, of_type, text_of, types  # noqa: F401
from tests.support import Turn
from treadle.core.chunks import Chunk, TextDelta
from treadle.core.errors import TripwireError


class HeldAnswers:
    """A pipelining processor whose answers are released by the test, like a slow network.

    It uppercases text, drops "drop" deltas and aborts on "bad".
    """

    id = "held"
    process_data_parts = False

    def __init__(self, release_after: int) -> None:
        self.release_after = release_after
        self.pending: list[tuple[Any, asyncio.Future[Chunk | None]]] = []
        self.max_outstanding = 0
        self.submitted = 0

    def pipelined(self) -> bool:
        return True

    def process_output_stream(self, args: Any) -> Chunk | None:
        raise AssertionError("a pipelining processor is only ever submitted to")

    async def submit_output_stream(self, args: Any) -> asyncio.Future[Chunk | None]:
        fut: asyncio.Future[Chunk | None] = asyncio.get_running_loop().create_future()
        self.pending.append((args, fut))
        self.submitted += 1
        self.max_outstanding = max(self.max_outstanding, len(self.pending))
        part = args.part
        # Hold text-delta answers until enough were submitted; any other chunk (text-end closes
        # the provider stream, step-start/finish are awaited by the loop) releases them.
        if len(self.pending) >= self.release_after or part.type != "text-delta":
            self.release()
        return fut

    def release(self) -> None:
        for args, fut in self.pending:
            part = args.part
            args.state["seen"] = args.state.get("seen", 0) + 1
            if part.type == "text-delta" and part.payload.text == "bad":
                fut.set_exception(TripwireError("bad word", processor_id=self.id))
            elif part.type == "text-delta" and part.payload.text == "drop":
                fut.set_result(None)
            elif part.type == "text-delta":
                fut.set_result(Chunk.of(TextDelta(part.payload.id, part.payload.text.upper())))
            else:
                fut.set_result(part)
        self.pending.clear()


class CountInline:
    id = "count-inline"

    def __init__(self) -> None:
        self.order: list[str] = []

    def process_output_stream(self, args: Any) -> Chunk:
        if args.part.type == "text-delta":
            self.order.append(args.part.payload.text)
        return args.part


async def test_chunks_are_submitted_without_waiting_and_applied_in_order(harness_factory) -> None:
    deltas = [f"w{i} " for i in range(20)]
    h: Harness = harness_factory([Turn.say(deltas)])
    held, after = HeldAnswers(release_after=8), CountInline()
    chunks = await h.stream(h.agent(output_processors=[held, after]), "go")
    assert held.max_outstanding >= 8  # the loop went on while answers were outstanding
    assert text_of(chunks) == "".join(deltas).upper()
    assert after.order == [d.upper() for d in deltas]  # the next stage sees them in order
    assert chunks[-1].type == "finish" and chunks[-1].payload.reason == "stop"


async def test_pipelined_drop_and_abort(harness_factory) -> None:
    h: Harness = harness_factory([Turn.say(["a", "drop", "b", "bad", "c", "d"])])
    chunks = await h.stream(h.agent(output_processors=[HeldAnswers(release_after=10)]), "go")
    assert text_of(chunks) == "AB"
    assert types(chunks)[-2:] == ["tripwire", "finish"]
    assert of_type(chunks, "tripwire")[0].payload.reason == "bad word"
    assert chunks[-1].payload.reason == "other"


async def test_pipelined_and_lockstep_give_the_same_stream(harness_factory) -> None:
    class Lockstep:
        id = "held"

        def process_output_stream(self, args: Any) -> Chunk | None:
            part = args.part
            if part.type == "text-delta":
                if part.payload.text == "drop":
                    return None
                return Chunk.of(TextDelta(part.payload.id, part.payload.text.upper()))
            return part

    script = ["x", "drop", "y", "z"]
    h1: Harness = harness_factory([Turn.say(script)])
    h2: Harness = harness_factory([Turn.say(script)])
    a = await h1.stream(h1.agent(output_processors=[HeldAnswers(release_after=3)]), "go")
    b = await h2.stream(h2.agent(output_processors=[Lockstep()]), "go")
    strip = lambda cs: [(c.type, getattr(c.payload, "text", None)) for c in cs]  # noqa: E731
    assert strip(a) == strip(b)


async def test_closing_the_pipeline_while_answers_are_pending_returns() -> None:
    """A rejected step resets the pipeline while a pipelined answer is still owed: the stage
    awaiting it must end, not swallow its cancellation and wait forever."""
    from treadle.loop.pipeline import StreamPipeline
    from treadle.core.message_list import MessageList
    from treadle.processors.runner import ChainRunner, RunScope
    from opentelemetry.trace import NoOpTracer

    async def nowhere(chunk: Chunk) -> None:
        raise AssertionError("nothing is answered, so nothing reaches the client")

    scope = RunScope("run", NoOpTracer(), {}, emit_direct=nowhere, emit_processed=nowhere)
    never = HeldAnswers(release_after=10**6)
    pipeline = StreamPipeline(ChainRunner(scope), [never], MessageList(), nowhere)
    await pipeline.put(Chunk.of(TextDelta("t", "held")))
    while never.submitted == 0:  # the stage has handed the chunk over and awaits its answer
        await asyncio.sleep(0)
    stages = list(pipeline._tasks)
    closing = asyncio.ensure_future(pipeline.close())
    done, _ = await asyncio.wait({closing}, timeout=5)  # (asyncio.wait never cancels it)
    assert closing in done, "close() hung: a stage swallowed its cancellation"
    assert all(task.cancelled() for task in stages)


async def test_several_writers_into_a_full_run_queue_all_get_through_in_their_order() -> None:
    """Parallel tools may write chunks while the client is behind: every writer waits for room
    and none is forgotten."""
    from treadle.loop.output import Channel

    channel = Channel(2)

    async def write(tag: str) -> None:
        for i in range(50):
            await channel.put((tag, i))

    writers = [asyncio.create_task(write(tag)) for tag in "abc"]
    got = [await asyncio.wait_for(channel.get(), 5) for _ in range(150)]
    await asyncio.wait_for(asyncio.gather(*writers), 5)
    for tag in "abc":
        assert [i for t, i in got if t == tag] == list(range(50))
