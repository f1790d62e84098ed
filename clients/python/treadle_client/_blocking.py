"""Blocking entry points for scripts: attach, serve until SIGTERM or Ctrl-C.

A script's user sees one line when a stream is attached and one per failed try (a dead or wrong
target is never retried silently): unless the script configured logging itself, the SDK's log
goes to stderr.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Sequence
from typing import Any

from ._attach import Attachment
from ._processors import attach
from ._scorers import serve_scorers
from ._tools import serve_tools

log = logging.getLogger("treadle_client")


def _log_to_stderr() -> None:
    if logging.getLogger().handlers or log.handlers:
        return  # the script set up logging: leave it alone
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)


async def _serve(attachment: Attachment) -> None:
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
            await stop.wait()
        else:
            ready.cancel()
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        await attachment.close()


def run_processors(processors: Sequence[Any], targets: str | Sequence[str], **options: Any) -> None:
    """``attach(processors, targets, **options)`` and serve until SIGTERM or Ctrl-C."""

    _log_to_stderr()

    async def main() -> None:
        await _serve(await attach(processors, targets, **options))

    asyncio.run(main())


def run_tools(tools: Sequence[Any], targets: str | Sequence[str], **options: Any) -> None:
    """``serve_tools(tools, targets, **options)`` and serve until SIGTERM or Ctrl-C."""

    _log_to_stderr()

    async def main() -> None:
        await _serve(await serve_tools(tools, targets, **options))

    asyncio.run(main())


def run_scorers(scorers: Sequence[Any], targets: str | Sequence[str], **options: Any) -> None:
    """``serve_scorers(scorers, targets, **options)`` and serve until SIGTERM or Ctrl-C."""

    _log_to_stderr()

    async def main() -> None:
        await _serve(await serve_scorers(scorers, targets, **options))

    asyncio.run(main())
