"""Remote tool hooks: ``beforeToolCall`` / ``afterToolCall`` served by a processor in another
process (``clients/python/examples/tool_guard.py`` with the Python SDK, and its Go twin
``clients/go/internal/toolguard``), with a tool-name filter.

The guard blocks ``deleteRecord`` (the tool never runs; its output is the guard's), lets
``lookup`` run without a ``beforeToolCall`` round trip (it is not in the filter), and sees
``lookup``'s output in ``afterToolCall``. Then ``processToolResult``'s filter, in-process.
"""

from __future__ import annotations

import asyncio
import json
from contextlib import AsyncExitStack
from typing import Any

import pytest

from tests.harness import Harness, harness_factory, of_type  # noqa: F401
from tests.remote.procs import Child, children
from tests.support import Turn
from tests.support.script import ScriptedToolCall
from tests.test_remote_processes import Server, server  # noqa: F401
from treadle.agents import ProcessorRef
from treadle.tools import Tool
from treadle.v1 import processor_service_pb2 as pb


def recording_tool(name: str, value: Any, calls: list[Any]) -> Tool:
    def execute(args: Any, ctx: Any) -> Any:
        calls.append(args)
        return value

    return Tool(name=name, execute=execute, description=f"the {name} tool")


@pytest.mark.parametrize("language", ["python", "go"])
async def test_a_remote_before_tool_call_blocks_delete_record(
    server: Any, language: str, request: pytest.FixtureRequest,
) -> None:
    s: Server = await server()
    deleted: list[Any] = []
    looked_up: list[Any] = []
    s.app.add_tool(recording_tool("deleteRecord", "deleted", deleted))
    s.app.add_tool(recording_tool("lookup", {"name": "Ada"}, looked_up))
    turn = Turn(tool_calls=[ScriptedToolCall("deleteRecord", {"id": 7}, id="c1"),
                            ScriptedToolCall("lookup", {"id": 7}, id="c2")])
    s.agent("records", [turn, Turn.say("done")], input_processors=[ProcessorRef("tool-guard")],
            tools=["deleteRecord", "lookup"])  # type: ignore[arg-type]
    async with children() as start, AsyncExitStack() as stack:
        if language == "go":  # clients/go/internal/toolguard, the same guard on the Go SDK
            binary = request.getfixturevalue("go_build")("toolguard")
            guard = Child(await asyncio.create_subprocess_exec(
                str(binary), s.target, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE))
            stack.push_async_callback(guard.close)
            await guard.expect("ready")
        else:
            guard = await start("clients.python.examples.tool_guard", s.target)
        declared = s.app.processors.declaration("tool-guard")
        assert declared is not None and set(declared.hooks) == {"before_tool_call", "after_tool_call"}
        assert declared.hooks["before_tool_call"].tool_names == {"deleteRecord"}
        chunks = await s.stream("records")
        kinds = [c.WhichOneof("chunk") for c in chunks]
        results = {c.tool_result.tool_call_id: c.tool_result for c in chunks if c.WhichOneof("chunk") == "tool_result"}
        assert deleted == []  # the tool never ran
        assert looked_up == [{"id": 7}]
        assert results["c1"].result.string_value == "deleteRecord is not allowed for this agent"
        assert results["c2"].result.struct_value["name"] == "Ada"
        assert kinds[-1] == "finish"
        before = json.loads((await guard.expect("before ")).split(" ", 1)[1])
        after = json.loads((await guard.expect("after ")).split(" ", 1)[1])
        assert before == {"tool": "deleteRecord", "args": {"id": 7}}
        assert after == {"tool": "lookup", "output": {"name": "Ada"}, "error": None}  # skipped tools skip it too
        assert not any(line.startswith("before ") and "lookup" in line for line in guard.lines)


class ScanOnlySearch:
    """``processToolResult`` for the ``search`` tool only."""

    id = "scan-search"
    tool_names = {"process_tool_result"}

    def __init__(self) -> None:
        self.seen: list[str] = []

    def process_tool_result(self, args: Any) -> None:
        self.seen.append(args.tool_name)


async def test_process_tool_result_honours_a_tool_name_filter(harness_factory: Any) -> None:
    h: Harness = harness_factory([Turn(tool_calls=[ScriptedToolCall("search", {}, id="a"),
                                                   ScriptedToolCall("other", {}, id="b")]), Turn.say("ok")])
    scan = ScanOnlySearch()
    scan.tool_names = {"search"}  # type: ignore[assignment]
    h.registry.add_tool(recording_tool("search", 1, []))
    h.registry.add_tool(recording_tool("other", 2, []))
    agent = h.agent(tools=["search", "other"], output_processors=[scan])
    await h.generate(agent, "go")
    assert scan.seen == ["search"]
    assert pb.HOOK_BEFORE_TOOL_CALL and pb.HOOK_AFTER_TOOL_CALL  # declared in the protocol
