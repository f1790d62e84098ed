"""A remote processor for the benchmark: passes every chunk through unchanged.

    python bench/echo_processor.py MODE TARGET

MODE is ``lockstep`` (one chunk per invocation, one in flight), ``pipelined`` (one chunk per
invocation, 64 in flight), ``windowed`` (up to 64 chunks per invocation, 4 in flight) or
``observe`` (per chunk, OBSERVE mode: the run never waits for it) or ``default`` (the SDK's
defaults).
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from treadle_client import attach

MODES: dict[str, dict[str, Any]] = {
    "lockstep": {"stream_delivery": "per_chunk", "max_in_flight": 1},
    "pipelined": {"stream_delivery": "per_chunk", "max_in_flight": 64},
    "windowed": {"stream_delivery": "windowed", "max_window": 64, "max_in_flight": 4},
    "observe": {"stream_delivery": "per_chunk", "max_in_flight": 64, "observe": {"process_output_stream"}},
    "default": {},
}


def make(mode: str) -> Any:
    class Echo:
        id = "bench-echo"

        async def process_output_stream(self, args: Any) -> Any:
            return args.part

    for key, value in MODES[mode].items():
        setattr(Echo, key, value)
    return Echo()


async def main(mode: str, target: str) -> None:
    attachment = await attach([make(mode)], target)
    await attachment.ready(timeout=30)
    print("ready", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
