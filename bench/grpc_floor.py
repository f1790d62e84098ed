"""The floor: a bare gRPC bidirectional-stream round trip on loopback, in this process.

Every remote-processor number in ``bench/`` is printed as a ratio to this one, measured in the
same run, so results compare across machines.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import AsyncIterator

import grpc

_METHOD = "/bench.Echo/Echo"


def _identity(b: bytes) -> bytes:
    return b


async def _echo(requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
    async for message in requests:
        yield message


async def bidi_round_trip_us(rounds: int = 2000, payload: int = 64) -> float:
    """Median microseconds for one message out and its echo back, over one long-lived stream."""
    server = grpc.aio.server()
    handler = grpc.stream_stream_rpc_method_handler(
        _echo, request_deserializer=_identity, response_serializer=_identity
    )
    server.add_generic_rpc_handlers(
        [grpc.method_handlers_generic_handler("bench.Echo", {"Echo": handler})]
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            call = channel.stream_stream(
                _METHOD, request_serializer=_identity, response_deserializer=_identity
            )()
            body = b"x" * payload
            samples = []
            for i in range(rounds + 100):
                start = time.perf_counter()
                await call.write(body)
                await call.read()
                if i >= 100:  # warm-up rounds are not counted
                    samples.append((time.perf_counter() - start) * 1e6)
            await call.done_writing()
            return statistics.median(samples)
    finally:
        await server.stop(None)


if __name__ == "__main__":
    print(f"bare gRPC bidi round trip: {asyncio.run(bidi_round_trip_us()):.1f} µs (median)")
