"""What the processor and tool Attach streams share in their handshake."""

from __future__ import annotations

from collections.abc import Sequence

import grpc

PROTOCOL_VERSIONS = (1,)
"""The Attach protocol versions this server speaks (processor and tool streams alike)."""


class HandshakeError(Exception):
    """A refused handshake: the stream ends with ``code`` and ``message`` (what is wrong)."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def negotiate_version(offered: Sequence[int], peer: str) -> int:
    """The highest version both sides speak; ``HandshakeError`` when there is none."""
    common = [v for v in PROTOCOL_VERSIONS if v in offered]
    if not common:
        raise HandshakeError(
            grpc.StatusCode.FAILED_PRECONDITION,
            f"no common protocol version: the server speaks {list(PROTOCOL_VERSIONS)}, "
            f"the {peer} offered {list(offered)}",
        )
    return max(common)
