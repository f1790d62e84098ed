"""A PII guard: redacts e-mail addresses from the answer as it streams, with ``TextGate``.

    python -m clients.python.examples.pii_guard HOST:PORT [--delivery per_chunk|windowed]

An address may arrive split across any number of deltas ("jo", "hn@exa", "mple.com"). The gate
holds text only from where an address could be starting, redacts complete spans and releases
them at once, so text that cannot be an address streams through unheld. Prints ``ready`` once
the server has welcomed it; runs until SIGTERM, Ctrl-C or stdin closes.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

import regex

from treadle_client import TextGate, attach

EMAIL = regex.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def redact(text: str) -> str:
    return EMAIL.sub("[email]", text)


class PiiGuard:
    """Redacts e-mail addresses from the streamed answer."""

    id = "pii-guard"

    def __init__(self, delivery: str = "windowed") -> None:
        self.stream_delivery = delivery
        self.gate = TextGate(redact, boundary=EMAIL)

    async def process_output_stream(self, args):  # type: ignore[no-untyped-def]
        return await self.gate.process(args)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("target")
    parser.add_argument("--delivery", choices=["per_chunk", "windowed"], default="windowed")
    opts = parser.parse_args()
    async with await attach([PiiGuard(opts.delivery)], opts.target) as attachment:
        await attachment.ready(timeout=30)
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until stdin closes


if __name__ == "__main__":
    asyncio.run(main())
