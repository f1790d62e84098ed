"""The agent client with typed dataclasses for messages (``pip install 'treadle-client[dataclasses]'``).

::

    from treadle_client.typed import AgentClient, TextDeltaChunk

    async with AgentClient("127.0.0.1:50051") as client:
        async for chunk in client.stream("assistant", "hello"):
            match chunk.chunk:
                case TextDeltaChunk(text=text):
                    print(text, end="", flush=True)

Every message and enum of ``treadle.v1`` is here as a betterproto2 dataclass (generated into
``treadle_client.typed._gen``): typed fields, enums as Python enums, ``to_dict()``/``to_json()``
in the proto3 JSON form, and the same wire form as the protobuf messages of ``treadle.v1``.
``Chunk`` is the generated one with ``chunk``, its payload, added for pattern matching.
"""

try:
    import betterproto2  # noqa: F401
except ImportError as exc:  # a plain install: the extra is missing
    raise ImportError(
        "treadle_client.typed needs betterproto2: pip install 'treadle-client[dataclasses]'"
    ) from exc

from ._gen.treadle.v1 import *  # noqa: F403
from ._gen.treadle.v1 import __all__ as _messages
from ._client import (  # noqa: F811
    AgentClient,
    Chunk,
    ChunkPayload,
    ThreadSubscription,
    to_dataclass,
    to_proto,
)

__all__ = [
    *(name for name in _messages if name != "Chunk"),
    "AgentClient",
    "Chunk",
    "ChunkPayload",
    "ThreadSubscription",
    "to_dataclass",
    "to_proto",
]
