"""Blocking entry points for scripts: attach, log when ready, serve until SIGTERM or Ctrl-C."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Sequence
from typing import Any

from ._attach import Attachment
from ._processors import attach
from ._tools import serve_tools

log = logging.getLogger("treadle_client")


async def _serve(attachment: Attachment, what: str) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        ready = asyncio.ensure_future(attachment.ready())
        done, _ = await asyncio.wait([ready, asyncio.ensure_future(stop.wait())],
                                     return_when=asyncio.FIRST_COMPLETED)
        if ready in done:
            ready.result()  # raises AttachError when a server refused the handshake
            log.info("%s attached to %s", what, ", ".join(attachment.targets))
            await stop.wait()
        else:
            ready.cancel()
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        await attachment.close()


def run_processors(processors: Sequence[Any], targets: str | Sequence[str], **options: Any) -> None:
    """``attach(processors, targets, **options)`` and serve until SIGTERM or Ctrl-C."""

    async def main() -> None:
        await _serve(await attach(processors, targets, **options), "processors")

    asyncio.run(main())


def run_tools(tools: Sequence[Any], targets: str | Sequence[str], **options: Any) -> None:
    """``serve_tools(tools, targets, **options)`` and serve until SIGTERM or Ctrl-C."""

    async def main() -> None:
        await _serve(await serve_tools(tools, targets, **options), "tools")

    asyncio.run(main())
