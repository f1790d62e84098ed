"""A tool process for the tests: ``python -m tests.remote.tool_main TARGET TOOL...``.

Serves the named tools (see ``TOOLS``) to TARGET with the Python SDK, prints ``ready`` once the
server has welcomed it, and ``called NAME`` when a call starts, so tests wait on what happened
rather than on time. Runs until killed or until stdin closes.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

from treadle.tools import Tool, ToolContext, tool
from treadle_client import serve_tools

CUSTOMER = {"name": "Ann", "ssn": "123-45-6789", "email": "ann@example.com"}


def say(line: str) -> None:
    print(line, flush=True)


@tool("lookup-customer", "Look a customer up by id",
      {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]})
async def lookup_customer(args: Any, ctx: ToolContext) -> Any:
    say("called lookup-customer")
    await ctx.writer.custom({"type": "data-lookup", "data": {"id": args["id"], "run": ctx.run_id}})
    return {**CUSTOMER, "id": args["id"]}


@tool("hang", "Never answers")
async def hang(args: Any, ctx: ToolContext) -> Any:
    say("called hang")
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        say("cancelled hang")
        raise


@tool("fail", "Always fails")
async def fail(args: Any, ctx: ToolContext) -> Any:
    say("called fail")
    raise RuntimeError("database is down")


@tool("whoami", "Reports the trace context it ran in")
async def whoami(args: Any, ctx: ToolContext) -> Any:
    span = trace.get_current_span()
    parent = getattr(span, "parent", None)
    return {
        "trace_id": format(span.get_span_context().trace_id, "032x"),
        "parent_span_id": format(parent.span_id, "016x") if parent else "",
        "span_name": getattr(span, "name", ""),
        "pid": os.getpid(),
        "context": {"thread": ctx.thread_id, "resource": ctx.resource_id,
                    "agent": ctx.agent_id, "request": ctx.request_context},
    }


TOOLS: dict[str, Tool] = {t.name: t for t in (lookup_customer, hang, fail, whoami)}


async def main(target: str, names: list[str]) -> None:
    attachment = await serve_tools([TOOLS[n] for n in names], target,
                                   tracer_provider=TracerProvider(), backoff=(0.05, 0.5))
    await attachment.ready(timeout=30)
    say("ready")
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await attachment.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2:]))
