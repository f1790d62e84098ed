"""What the processor and tool Attach streams share in their handshake."""

from __future__ import annotations

from collections.abc import Sequence

import grpc

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
