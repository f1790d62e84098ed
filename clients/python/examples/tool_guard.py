"""A tool guard: a remote ``beforeToolCall`` that refuses to run ``deleteRecord``.

    python -m clients.python.examples.tool_guard HOST:PORT

Agents list it among their processors (``{"id": "tool-guard"}``). ``beforeToolCall`` is
declared only for ``deleteRecord`` (``tool_names``), so other tool calls cost no round trip;
``afterToolCall`` sees every tool's output or error and prints it. Prints ``ready`` once the
server has welcomed it; runs until stdin closes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from treadle_client import attach


class ToolGuard:
    """Refuses deleteRecord; logs every tool's outcome."""

    id = "tool-guard"
    tool_names = {"before_tool_call": ["deleteRecord"]}  # afterToolCall: every tool

    def before_tool_call(self, args: Any) -> Any:
        print("before " + json.dumps({"tool": args.tool_name, "args": args.args}), flush=True)
        return {"proceed": False, "output": f"{args.tool_name} is not allowed for this agent"}

    def after_tool_call(self, args: Any) -> None:
        print("after " + json.dumps({"tool": args.tool_name, "output": args.output, "error": args.error}), flush=True)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("target")
    opts = parser.parse_args()
    async with await attach([ToolGuard()], opts.target) as attachment:
        await attachment.ready(timeout=30)
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until stdin closes


if __name__ == "__main__":
    asyncio.run(main())
