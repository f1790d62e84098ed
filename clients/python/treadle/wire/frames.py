"""Attach-stream messages framed from already serialized parts, without building them again.

A gRPC write costs far more than building a message, so both ends of a processor stream send
what is ready at once: from protocol version 3 on, consecutive invocations (server) or answers
(process) travel as one batch message. The parts are queued serialized; this module frames them
into the bytes of the stream's message (the oneof field holding one part, or the batch field
holding several), which the stream's serializer passes through unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

BATCH_VERSION = 3
"""The protocol version from which invocations and answers may travel in batches."""
MAX_BATCH = 1024
"""Parts in one batch at most."""


def _varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_SMALL = [_varint(n) for n in range(1 << 14)]
"""The varints of lengths below 16 KiB (one or two bytes), looked up rather than computed."""


def varint(n: int) -> bytes:
    """``n`` (not negative) as a protobuf varint."""
    return _SMALL[n] if n < 16384 else _varint(n)


def _tag(field_number: int) -> bytes:
    return varint(field_number << 3 | 2)  # length-delimited


_BATCH_ITEM = _tag(1)
"""``Invocations.invocations`` / ``InvocationResults.results``."""


class Framer:
    """Frames serialized parts of one kind: ``one`` is the oneof field that carries a single part
    (``invocation`` = 2, ``result`` = 2), ``many`` the batch field (``invocations`` /
    ``results`` = 101)."""

    def __init__(self, one: int, many: int) -> None:
        self._one = _tag(one)
        self._many = _tag(many)

    def single(self, part: bytes) -> bytes:
        return self._one + varint(len(part)) + part

    def batch(self, parts: list[bytes]) -> bytes:
        if len(parts) == 1:
            return self.single(parts[0])
        body = b"".join([_BATCH_ITEM + varint(len(p)) + p for p in parts])
        return self._many + varint(len(body)) + body

    def frames(self, items: Iterable[Any], batch: bool, max_bytes: int) -> Iterator[Any]:
        """The messages to write for ``items``, in order: each ``bytes`` item (a serialized part)
        framed alone, or, with ``batch``, consecutive ones together (at most ``MAX_BATCH`` and
        about ``max_bytes``); anything else passes as it is."""
        group: list[bytes] = []
        size = 0
        for item in items:
            if type(item) is bytes:
                if not batch:
                    yield self.single(item)
                    continue
                if group and (len(group) >= MAX_BATCH or size + len(item) > max_bytes):
                    yield self.batch(group)
                    group, size = [], 0
                group.append(item)
                size += len(item) + 8
                continue
            if group:
                yield self.batch(group)
                group, size = [], 0
            yield item
        if group:
            yield self.batch(group)


def passthrough(serialize: Any) -> Any:
    """A stream serializer that sends framed ``bytes`` as they are and serializes the rest."""

    def serializer(message: Any) -> bytes:
        return message if type(message) is bytes else serialize(message)

    return serializer


INVOCATIONS = Framer(one=2, many=101)
"""``ProcessorServiceAttachResponse``: ``invocation`` / ``invocations``."""
RESULTS = Framer(one=2, many=101)
"""``ProcessorServiceAttachRequest``: ``result`` / ``results``."""

__all__ = ["BATCH_VERSION", "INVOCATIONS", "MAX_BATCH", "RESULTS", "Framer", "passthrough", "varint"]
