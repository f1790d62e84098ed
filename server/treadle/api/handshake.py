"""What the Attach streams (processors, tools, scorers, voice providers) share in their handshake."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import TypeVar

import grpc

from ..core.errors import PermissionDeniedError
from .identity import Owners

M = TypeVar("M")

PROTOCOL_VERSIONS = (1,)
"""The Attach protocol versions the tool streams speak."""
PROCESSOR_PROTOCOL_VERSIONS = (1, 2, 3)
"""The processor stream's versions: 2 lets a stream outcome replace a chunk by several; 3 lets
invocations and answers travel in batches."""


class HandshakeError(Exception):
    """A refused handshake: the stream ends with ``code`` and ``message`` (what is wrong)."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def negotiate_version(offered: Sequence[int], peer: str, supported: Sequence[int] = PROTOCOL_VERSIONS) -> int:
    """The highest version both sides speak; ``HandshakeError`` when there is none."""
    common = [v for v in supported if v in offered]
    if not common:
        raise HandshakeError(
            grpc.StatusCode.FAILED_PRECONDITION,
            f"no common protocol version: the server speaks {list(supported)}, "
            f"the {peer} offered {list(offered)}",
        )
    return max(common)


async def accept(
    requests: AsyncIterator[M],
    context: grpc.aio.ServicerContext,
    owners: Owners,
    *,
    draining: bool,
    check: Callable[[M], int],
    names: Callable[[M], Iterable[str]],
    refused: Callable[[], None] | None = None,
) -> tuple[M, int, str | None] | None:
    """Read an Attach stream's first message and accept it: ``(first, version, owner)``, or None
    when the peer closed without a word. A draining server, a bad handshake (``check`` raises
    ``HandshakeError``) and names the caller may not attach (``owners.claim``) end the stream
    with the status that says so (``refused`` is told first); ``owner`` goes back to
    ``owners.release`` when the stream ends."""
    first = await anext(requests, None)
    if first is None:
        return None
    if draining:
        await context.abort(grpc.StatusCode.UNAVAILABLE, "server is shutting down")
    try:
        version = check(first)
        owner = owners.claim(names(first))
    except (HandshakeError, PermissionDeniedError) as e:
        if refused is not None:
            refused()
        code = e.code if isinstance(e, HandshakeError) else grpc.StatusCode.PERMISSION_DENIED
        await context.abort(code, str(e))
    return first, version, owner
