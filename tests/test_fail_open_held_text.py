"""A guard killed while it holds text back (protocol version 2).

A real guard process (``tests/remote/holding_guard.py``, the Python SDK) holds "s0 s1 s2 ..."
back from the delta "s" on and hangs at the text's end; the test SIGKILLs it then. Under ``fail_open`` the
client, ``Generate`` and the stored message get the whole text, in order (the held delta passes
on unprocessed ahead of the chunks that follow it), and the finish chunk's skip record counts
every chunk that passed unprocessed, the held one included; the server logs one WARNING for the
run and processor. Under ``fail_closed`` the run ends with the error.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tests.remote.procs import children
from tests.support import Turn
from tests.test_hold_release import assert_text_parts_consistent, client_text
from tests.test_remote_processes import Server, server  # noqa: F401
from treadle.agents import ProcessorRef
from treadle.v1 import chunk_pb2, fail_open_pb2

DELTAS = ["s0 ", "s1 ", "s", "2 ", "s3 ", "s4 ", "s5 ", "s6 ", "s7 ", "s8 ", "s9"]
TEXT = "".join(DELTAS)
GUARD = "holding-guard"


async def killed_while_holding(s: Server, delivery: str) -> list[Any]:
    async with children() as start:
        guard = await start("tests.remote.holding_guard", s.target, "--delivery", delivery)
        run = s.start_run("support")
        await guard.expect("holding")
        guard.kill()
        return await run.result()


@pytest.mark.parametrize("delivery", ["per_chunk", "windowed"])
async def test_fail_open_passes_held_text_on_in_order_and_counts_it(
    server: Any, delivery: str, caplog: pytest.LogCaptureFixture,
) -> None:
    s: Server = await server()
    s.agent("support", [Turn.say(DELTAS)], output_processors=[ProcessorRef(GUARD, "fail_open", timeout=30)])
    with caplog.at_level(logging.WARNING, logger="treadle.api.remote_processor"):
        chunks = await killed_while_holding(s, delivery)

    assert client_text(chunks) == TEXT
    assert_text_parts_consistent(chunks)
    finish = chunks[-1].finish
    assert finish.reason == chunk_pb2.FINISH_REASON_STOP
    # The chunks in flight when the stream closed were skipped for the disconnect, the ones after
    # it because the guard was no longer attached.
    skips = {s.reason: s.count for s in finish.skipped_processors
             if (s.processor_id, s.hook) == (GUARD, "processOutputStream")}
    assert len(finish.skipped_processors) == len(skips)
    assert fail_open_pb2.FAIL_OPEN_REASON_DISCONNECT in skips
    assert set(skips) <= {fail_open_pb2.FAIL_OPEN_REASON_DISCONNECT, fail_open_pb2.FAIL_OPEN_REASON_NOT_ATTACHED}
    # Every chunk from the held delta on passed unprocessed and is counted: the held "s" and each
    # one after it, to the finish chunk (the processor sees every chunk of the run). Windowed, the
    # window the guard hung on may hold chunks before "s" too: unanswered, they count as well.
    held_at = next(i for i, c in enumerate(chunks) if c.WhichOneof("chunk") == "text_delta" and c.text_delta.text == "s")
    kinds = " ".join(c.WhichOneof("chunk") for c in chunks)
    if delivery == "per_chunk":
        assert sum(skips.values()) == len(chunks) - held_at, (skips, kinds)
    else:
        assert len(chunks) - held_at <= sum(skips.values()) <= len(chunks), (skips, kinds)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and GUARD in r.getMessage()]
    assert len(warnings) == 1, warnings  # one line for the run, not one per chunk
    assert all(f"skipped {n}x" in warnings[0] for n in skips.values())


async def test_fail_closed_ends_the_run_with_the_error(server: Any) -> None:
    s: Server = await server()
    s.agent("support", [Turn.say(DELTAS)], output_processors=[ProcessorRef(GUARD, "fail_closed", timeout=30)])
    chunks = await killed_while_holding(s, "per_chunk")

    kinds = [c.WhichOneof("chunk") for c in chunks]
    assert kinds[-2:] == ["error", "finish"], kinds
    assert GUARD in chunks[-2].error.message
    assert client_text(chunks) == "s0 s1 "  # nothing the guard had not passed, as before
    assert not chunks[-1].finish.skipped_processors
