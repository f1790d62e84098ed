"""SIGTERM during a run of a real ``treadle serve`` process: the attached processor gets ``drain``
at once, with the server's real grace, while the run still waits on it; it finishes that
invocation, the run completes, and the server exits 0.

The processor is the raw protocol client of ``tests/test_remote_processor_protocol.py``; it holds
its answer until the drain has arrived, so the order is observable rather than timed.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from tests.support import Turn
from tests.support.fixtures import openai_server  # noqa: F401
from tests.test_cli import READY_TIMEOUT, clean_env, serve  # noqa: F401
from tests.test_remote_processor_protocol import RawProcessor, decl, hook_decl, unchanged
from treadle.v1 import chunk_pb2
from treadle.v1 import processor_service_pb2 as pb
from treadle_client import AgentClient

GRACE = 45


async def test_sigterm_sends_drain_at_once_with_the_real_grace(serve: Any, openai_server: Any) -> None:
    model = openai_server([Turn.say(["finished ", "after drain"])])
    proc = serve("--grace", str(GRACE), env=clean_env(OPENAI_BASE_URL=model.base_url, OPENAI_API_KEY="sk-test"))
    asked = asyncio.Event()
    terminated_at: list[float] = []
    drained_at: list[float] = []

    async def hold_until_drained(client: RawProcessor, inv: pb.Invocation) -> pb.InvocationResult:
        asked.set()
        await client.drained.wait()
        drained_at.append(time.monotonic())
        return unchanged()  # an invocation in flight is still answered after the drain

    guard = RawProcessor(proc.target, hold_until_drained)
    try:
        await guard.attach(decl("guard", hook_decl(pb.HOOK_PROCESS_INPUT)))
        async with AgentClient(proc.target) as client:
            await client.create_agent({"id": "echo", "model": "openai/gpt-4o-mini", "input_processors": [{"id": "guard"}]})
            chunks = client.stream("echo", "hello", timeout=READY_TIMEOUT)
            first = await chunks.__anext__()
            assert first.HasField("start")
            await asyncio.wait_for(asked.wait(), READY_TIMEOUT)

            terminated_at.append(time.monotonic())
            proc.proc.terminate()  # SIGTERM
            await asyncio.wait_for(guard.drained.wait(), READY_TIMEOUT)
            rest = [c async for c in chunks]
        assert [d.grace_ms for d in guard.drains] == [GRACE * 1000]
        assert "".join(c.text_delta.text for c in rest if c.HasField("text_delta")) == "finished after drain"
        assert rest[-1].finish.reason == chunk_pb2.FINISH_REASON_STOP
        assert await asyncio.to_thread(proc.proc.wait, READY_TIMEOUT) == 0
        await asyncio.wait_for(guard.ended.wait(), READY_TIMEOUT)
        assert guard.error is None  # the server ended the stream cleanly
        # How long the drain took to arrive (for the record; bench/ measures, tests do not).
        print(f"drain arrived {1000 * (drained_at[0] - terminated_at[0]):.1f} ms after SIGTERM")
    finally:
        await guard.close()
