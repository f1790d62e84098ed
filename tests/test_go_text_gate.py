"""The Go SDK's ``TextGate`` against a real server: protocol version 2's hold and release; and
the Go processor's spans in the server's trace.

``clients/go/internal/piiguard`` (built once per session) redacts e-mail addresses split across
2, 3 and 10 deltas, with per-chunk and windowed delivery, exactly as the Python PII guard of
``tests/test_hold_release.py`` does: the client never sees a piece of the address, every delta
lands in an open text part, and the step's text and ``Generate`` agree with the stream.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from google.protobuf import json_format

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
            # The guard got the run's context: its state counts the run's addresses, its writer
            # reports each redaction.
            reports = [json_format.MessageToDict(c.data.data) for c in chunks
                       if c.WhichOneof("chunk") == "data" and c.data.name == "data-redacted"]
            assert reports == [{"count": 1, "total": 1}]
            async with AgentClient(s.target) as client:
                result = await client.generate("support", "hi", timeout=30)
            assert result.text == EXPECTED and result.steps[0].text == EXPECTED
    finally:
        await child.close()



async def test_go_processor_spans_join_the_servers_trace(server: Any, go_build: GoBuild) -> None:
    s: Server = await server()
    s.agent("support", [Turn.say(answer_with_address(3))], output_processors=[ProcessorRef("pii-guard")])
    proc = await asyncio.create_subprocess_exec(
        str(go_build("piiguard")), s.target, "per_chunk", "--print-spans",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    child = Child(proc)
    try:
        await child.expect("ready")
        assert await s.app.processors.wait_attached("pii-guard", 30)
        chunks = await s.stream("support")
    finally:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()  # the guard exits; every span it ended has been printed
        rest = (await asyncio.wait_for(proc.stdout.read(), 30)).decode().splitlines()
        await proc.wait()
    spans = [json.loads(line.removeprefix("span ")) for line in [*child.lines, *rest] if line.startswith("span ")]
    assert spans and client_text(chunks) == EXPECTED
    server_spans = s.server_spans()
    [trace_id] = {format(sp.context.trace_id, "032x") for sp in server_spans}
    assert {sp["trace_id"] for sp in spans} == {trace_id}
    assert {sp["name"] for sp in spans} == {"processOutputStream pii-guard"}
    parents = {format(sp.context.span_id, "016x") for sp in server_spans if sp.name == "processOutputStream pii-guard"}
    assert {sp["parent_span_id"] for sp in spans} <= parents
