"""The Go SDK's ``TextGate`` against a real server: protocol version 2's hold and release.

``clients/go/internal/piiguard`` (built once per session) redacts e-mail addresses split across
2, 3 and 10 deltas, with per-chunk and windowed delivery, exactly as the Python PII guard of
``tests/test_hold_release.py`` does: the client never sees a piece of the address, every delta
lands in an open text part, and the step's text and ``Generate`` agree with the stream.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.remote.procs import Child
from tests.support import Turn
from tests.support.go import GoBuild
from tests.test_hold_release import ADDRESS, answer_with_address, assert_text_parts_consistent, client_text
from tests.test_remote_processes import Server, server  # noqa: F401
from treadle.agents import ProcessorRef
from treadle_client import AgentClient

EXPECTED = "Write to [email] or call. Thanks!"


@pytest.mark.parametrize("delivery", ["per_chunk", "windowed"])
async def test_go_pii_guard_redacts_an_address_split_across_deltas(
    server: Any, go_build: GoBuild, delivery: str,
) -> None:
    s: Server = await server()
    answers = [answer_with_address(n) for n in (2, 3, 10)]
    # Each answer twice: once streamed, once for Generate.
    s.agent("support", [Turn.say(a) for a in answers for _ in range(2)], output_processors=[ProcessorRef("pii-guard")])
    proc = await asyncio.create_subprocess_exec(
        str(go_build("piiguard")), s.target, delivery,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    child = Child(proc)
    try:
        await child.expect("ready")
        assert await s.app.processors.wait_attached("pii-guard", 30)
        assert [c.version for c in s.app.processors.connections()] == [2]
        for _ in answers:
            chunks = await s.stream("support")
            assert client_text(chunks) == EXPECTED
            assert_text_parts_consistent(chunks)
            deltas = [c.text_delta.text for c in chunks if c.WhichOneof("chunk") == "text_delta"]
            assert not any(ADDRESS[:5] in d for d in deltas)
            assert [c.step_finish.text for c in chunks if c.WhichOneof("chunk") == "step_finish"] == [EXPECTED]
            async with AgentClient(s.target) as client:
                result = await client.generate("support", "hi", timeout=30)
            assert result.text == EXPECTED and result.steps[0].text == EXPECTED
    finally:
        await child.close()

