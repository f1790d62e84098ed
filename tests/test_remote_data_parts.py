"""``data-*`` chunks reach a REAL remote processor only when it asks for them (``process_data_parts``).

A tool writes a ``data-progress`` chunk, which goes through the output processors like any
chunk written outside them; the ``tests.remote.chaos_main`` process prints every chunk it is
handed. Without ``process_data_parts`` it is never handed the data chunk (yet the client gets
it); with it, it is handed it once, in every delivery mode.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support import Turn
from tests.test_remote_processes import PID, Processor, Server, Spawn, processor, server, visible  # noqa: F401
from treadle.agents import Agent, ProcessorRef
from treadle.tools import Tool


async def search(args: Any, ctx: Any) -> dict[str, Any]:
    await ctx.writer.custom({"type": "data-progress", "data": {"searched": args["q"]}})
    return {"hits": 1}


@pytest.mark.parametrize("delivery", ["per_chunk", "pipelined", "windowed"])
@pytest.mark.parametrize("data_parts", [False, True])
async def test_a_remote_processor_gets_data_chunks_only_when_it_asks(
    server: Any, processor: Spawn, delivery: str, data_parts: bool,
) -> None:
    s: Server = await server()
    s.app.add_tool(Tool("search", search))
    model = s.model([Turn.call("search", {"q": "oslo"}), Turn.say("found")])
    s.app.add_agent(Agent(id="searcher", model="openai/test-model", base_url=model.base_url, tools=["search"],
                          output_processors=[ProcessorRef(PID)]))
    flags = ["--data-parts"] if data_parts else []
    child: Processor = await processor(s, "--delivery", delivery, *flags)
    chunks = await s.stream("searcher", "find oslo")
    await child.finish()

    assert visible(chunks).count("data:data-progress") == 1  # the client gets it either way
    handled = [r["type"] for r in child.reports("chunk")]
    expected = [
        "step-start", "response-metadata", "tool-call-input-streaming-start", "tool-call-delta",
        "tool-call-input-streaming-end",
        "tool-call", *(["data-progress"] if data_parts else []), "tool-result", "step-finish",
        "step-start", "response-metadata", "text-start", "text-delta", "text-end", "finish", "step-finish",
    ]
    assert handled == expected
