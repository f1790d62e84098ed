"""A guard that holds text and then hangs, for the killed-guard tests.

    python -m tests.remote.holding_guard TARGET [--delivery per_chunk|windowed]

``processOutputStream`` holds back text from the first delta that does not end a word (answers
it and every delta after it with no chunks, as a text gate does while a match is still
possible). At the text part's end it prints ``holding`` and never answers: the test SIGKILLs the
process then, with text held. Prints ``ready`` once the server has welcomed it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from treadle_client import attach


class HoldingGuard:
    id = "holding-guard"

    def __init__(self, delivery: str) -> None:
        self.stream_delivery = delivery
        self.holding = False

    async def process_output_stream(self, args: Any) -> Any:
        part = args.part
        if self.holding and part.type == "text-end":
            print("holding", flush=True)
            await asyncio.Event().wait()  # never answers: killed here
        if part.type == "text-delta" and (self.holding or not part.payload.text.endswith(" ")):
            self.holding = True
            return []
        return part


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("target")
    parser.add_argument("--delivery", choices=["per_chunk", "windowed"], default="per_chunk")
    opts = parser.parse_args()
    async with await attach([HoldingGuard(opts.delivery)], opts.target) as attachment:
        await attachment.ready(timeout=30)
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)


if __name__ == "__main__":
    asyncio.run(main())
