"""A remote tool: `current_time`, served by a separate Python process to a running server.

    .venv/bin/python examples/remote_tool.py [HOST:PORT]      # default $TREADLE_TARGET or 127.0.0.1:50051

Prints `tool current_time attached to HOST:PORT` once the server has accepted it. Agents name
it like any tool (examples/agents.yaml does); the model calls it when it needs the time. (The
embedded model is too small to call tools: use a provider's model for this one, e.g.
`model: openai/gpt-4o-mini` with OPENAI_API_KEY set.)
"""

import sys
from datetime import datetime, timezone

from treadle_client import Tool, default_target, run_tools


def current_time(args, ctx):
    return {"time": datetime.now(timezone.utc).isoformat(timespec="seconds"), "zone": "UTC"}


TOOL = Tool(
    "current_time",
    current_time,
    description="The current date and time, in UTC.",
    input_schema={"type": "object", "properties": {}},
)

if __name__ == "__main__":
    target = sys.argv[1] if len(sys.argv) > 1 else default_target()
    run_tools([TOOL], target)
