"""``ToolService.Attach``: a tool process serves its tools over one bidirectional stream.

The first message must be a handshake; a bad one ends the stream with INVALID_ARGUMENT or
FAILED_PRECONDITION and a message saying what is wrong. After the welcome, one reader task
resolves pending calls by invocation id while every write goes through the stream's outbound
queue, so a slow tool never blocks the others on the same stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator
from typing import Any

import grpc

from ..v1 import tool_service_pb2, tool_service_pb2_grpc
from ..wire.data import struct_to_dict
from ..core.errors import InvalidArgumentError
from .handshake import HandshakeError, accept, negotiate_version
from .identity import Owners
from .validate import check_schema
from .tool_hub import ToolHub, ToolStream, is_end

log = logging.getLogger(__name__)

TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
SERVICE_NAME = tool_service_pb2.DESCRIPTOR.services_by_name["ToolService"].full_name


def check_handshake(request: tool_service_pb2.ToolServiceAttachRequest) -> int:
    """The protocol version to speak, or ``HandshakeError`` saying what is wrong."""
    if request.WhichOneof("message") != "handshake":
        raise HandshakeError(grpc.StatusCode.INVALID_ARGUMENT,
                             "the first message on a tool stream must be a handshake")
    hs = request.handshake
    version = negotiate_version(hs.protocol_versions, "process")
    if not hs.tools:
        raise HandshakeError(grpc.StatusCode.INVALID_ARGUMENT, "handshake declares no tools")
    seen: set[str] = set()
    for i, t in enumerate(hs.tools):
        where = f"tools[{i}]"
        if not TOOL_NAME.match(t.name):
            raise HandshakeError(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"{where}.name {t.name!r} is invalid: use 1-64 letters, digits, '_', '.' or '-'",
            )
        if t.name in seen:
            raise HandshakeError(grpc.StatusCode.INVALID_ARGUMENT,
                                 f"{where}.name: tool {t.name!r} is declared twice")
        seen.add(t.name)
        _check_schema(t, "input_schema", where, required=False)
        _check_schema(t, "output_schema", where, required=False)
    return version


def _check_schema(t: Any, field: str, where: str, *, required: bool) -> None:
    if not t.HasField(field):
        if required:
            raise HandshakeError(grpc.StatusCode.INVALID_ARGUMENT, f"{where}.{field} is required")
        return
    schema = struct_to_dict(getattr(t, field))
    if field == "input_schema" and schema.get("type") != "object":
        raise HandshakeError(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"{where}.{field} of tool {t.name!r} must be a JSON schema with \"type\": \"object\" "
            f"(models pass tool arguments as an object), got type {schema.get('type')!r}",
        )
    try:
        check_schema(schema, f"{where}.{field} of tool {t.name!r}")
    except InvalidArgumentError as e:
        raise HandshakeError(grpc.StatusCode.INVALID_ARGUMENT, str(e)) from None


class ToolServicer(tool_service_pb2_grpc.ToolServiceServicer):
    def __init__(self, hub: ToolHub) -> None:
        self.hub = hub
        self.owners = Owners("tools")

    def register(self, server: grpc.aio.Server) -> None:
        tool_service_pb2_grpc.add_ToolServiceServicer_to_server(self, server)

    async def Attach(  # noqa: N802 (gRPC method name)
        self,
        request_iterator: AsyncIterator[tool_service_pb2.ToolServiceAttachRequest],
        context: grpc.aio.ServicerContext,
    ) -> AsyncIterator[tool_service_pb2.ToolServiceAttachResponse]:
        requests = aiter(request_iterator)
        accepted = await accept(requests, context, self.owners, draining=self.hub.draining, check=check_handshake,
                                names=lambda m: (t.name for t in m.handshake.tools), refused=self.hub.record_refused)
        if accepted is None:
            return
        first, version, owner = accepted
        hs = first.handshake
        stream = ToolStream(hs.instance_id or context.peer(), {t.name: t for t in hs.tools})
        await self.hub.attach(stream)
        reader = asyncio.create_task(self._read(requests, stream))
        try:
            yield tool_service_pb2.ToolServiceAttachResponse(
                welcome=tool_service_pb2.ToolWelcome(
                    protocol_version=version, tools=list(stream.tools), server_id=self.hub.server_id
                )
            )
            while True:
                message = await stream.outbound.get()
                if is_end(message):
                    break
                yield message
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
            await self.hub.detach(stream)
            self.owners.release(stream.tools, owner)

    async def _read(
        self,
        requests: AsyncIterator[tool_service_pb2.ToolServiceAttachRequest],
        stream: ToolStream,
    ) -> None:
        reason = "stream closed"
        try:
            async for request in requests:
                if request.WhichOneof("message") == "result":
                    stream.resolve(request.result)
                else:
                    log.warning("tool stream %s sent a second handshake; ignored", stream.instance_id)
        except grpc.aio.AioRpcError as e:  # pragma: no cover - depends on how the peer died
            reason = e.details() or str(e.code())
        except asyncio.CancelledError:
            raise
        except Exception as e:  # the peer vanished (reset, SIGKILL)
            reason = f"{type(e).__name__}: {e}"
        # The process hung up: fail its calls now, and end the response stream.
        await self.hub.detach(stream, reason)
        stream.end()


__all__ = ["SERVICE_NAME", "TOOL_NAME", "ToolServicer", "check_handshake"]
