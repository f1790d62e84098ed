"""``ProcessorService.Attach``: the handshake, then one reader task and one writer per stream.

The reader resolves pending invocations by id; everything the server sends goes through the
connection's one outbound queue, written here. It is not a lock-step read/reply loop: several
invocations may be in flight, answered in any order.

A gRPC write costs far more than building a message (each is a round through gRPC's core and,
across processes, a wake-up of the peer), so the writer takes everything queued at once and, on
a version-3 stream, sends consecutive invocations as one ``invocations`` message; it never waits
to fill a batch. Invocations are queued already serialized and framed into the response here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from typing import Any, Literal

import grpc

from ..core.processor import SEED_NAMES
from ..v1 import processor_service_pb2 as pb
from ..v1 import processor_service_pb2_grpc
from ..core.errors import PermissionDeniedError
from .handshake import PROCESSOR_PROTOCOL_VERSIONS as PROTOCOL_VERSIONS
from .handshake import HandshakeError, negotiate_version
from ..wire.hook_names import HOOK_NAME
from .identity import Owners
from ..wire.frames import BATCH_VERSION, INVOCATIONS, passthrough
from .processor_hub import Connection, Declaration, HookSettings, ProcessorHub

log = logging.getLogger(__name__)

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["ProcessorService"].full_name
DEFAULT_MAX_WINDOW = 64
MAX_WINDOW = 1024
MAX_IN_FLIGHT = 256
_TOOL_FILTERED = frozenset({"before_tool_call", "after_tool_call", "process_tool_result", "transform_tool_payload"})
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")


def accept_handshake(
    handshake: pb.ProcessorHandshake, hub: ProcessorHub
) -> tuple[dict[str, Declaration], pb.ProcessorWelcome]:
    """The accepted declarations and the welcome; raises ``HandshakeError`` saying what is wrong."""
    version = negotiate_version(handshake.protocol_versions, "processor", PROTOCOL_VERSIONS)
    if not handshake.processors:
        raise HandshakeError(grpc.StatusCode.INVALID_ARGUMENT, "the handshake declares no processors")
    welcome = pb.ProcessorWelcome(protocol_version=version, server_id=hub.server_id)
    accepted: dict[str, Declaration] = {}
    for i, d in enumerate(handshake.processors):
        where = f"processors[{i}]"
        if not _ID.match(d.id):
            raise HandshakeError(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"{where}.id {d.id!r} is malformed: use 1-128 letters, digits, '_', '.', ':' or '-', "
                "starting with a letter or digit",
            )
        if d.id in accepted:
            raise HandshakeError(grpc.StatusCode.INVALID_ARGUMENT,
                                 f"{where}.id {d.id!r} is declared twice in this handshake")
        out = welcome.processors.add(id=d.id, name=d.name or d.id, description=d.description)
        hooks: dict[str, HookSettings] = {}
        for j, h in enumerate(d.hooks):
            hooks_where = f"{where} ({d.id!r}).hooks[{j}]"
            name = HOOK_NAME.get(h.hook)
            if name is None:
                what = "is unspecified" if h.hook == pb.HOOK_UNSPECIFIED else f"{h.hook} is unknown"
                raise HandshakeError(grpc.StatusCode.INVALID_ARGUMENT, f"{hooks_where}: the hook {what}")
            if name in hooks:
                raise HandshakeError(grpc.StatusCode.INVALID_ARGUMENT,
                                     f"{hooks_where}: {SEED_NAMES[name]} is declared twice")
            settings = _hook_settings(name, h, hooks_where, hub)
            hooks[name] = settings
            _echo(out.hooks.add(), h.hook, settings, name == "process_output_stream")
        accepted[d.id] = Declaration(d.id, d.name or d.id, d.description, hooks)
    return accepted, welcome


def _hook_settings(name: str, h: pb.HookDeclaration, where: str, hub: ProcessorHub) -> HookSettings:
    if h.mode not in (pb.HOOK_MODE_UNSPECIFIED, pb.HOOK_MODE_MUTATE, pb.HOOK_MODE_OBSERVE):
        raise HandshakeError(grpc.StatusCode.INVALID_ARGUMENT, f"{where}: unknown mode {h.mode}")
    requested = h.timeout.ToNanoseconds() / 1e9 if h.HasField("timeout") else None
    if requested is not None and requested < 0:
        raise HandshakeError(grpc.StatusCode.INVALID_ARGUMENT, f"{where}.timeout must not be negative")
    mode: Literal["mutate", "observe"] = "observe" if h.mode == pb.HOOK_MODE_OBSERVE else "mutate"
    if mode == "observe" and name == "transform_tool_payload":
        raise HandshakeError(grpc.StatusCode.INVALID_ARGUMENT,
                             f"{where}: transformToolPayload must be MUTATE (its answer is what clients see)")
    timeout = hub.effective_timeout(requested)
    if name in _TOOL_FILTERED:
        return HookSettings(mode=mode, timeout=timeout, tool_names=frozenset(h.tool_names))
    if name != "process_output_stream":  # stream-only settings elsewhere are ignored, not refused
        return HookSettings(mode=mode, timeout=timeout)
    if h.delivery not in (pb.STREAM_DELIVERY_UNSPECIFIED, pb.STREAM_DELIVERY_PER_CHUNK, pb.STREAM_DELIVERY_WINDOWED):
        raise HandshakeError(grpc.StatusCode.INVALID_ARGUMENT, f"{where}: unknown delivery {h.delivery}")
    windowed = h.delivery == pb.STREAM_DELIVERY_WINDOWED
    return HookSettings(
        mode=mode, timeout=timeout, process_data_parts=h.process_data_parts, windowed=windowed,
        max_window=min(h.max_window or DEFAULT_MAX_WINDOW, MAX_WINDOW) if windowed else 1,
        max_in_flight=min(max(h.max_in_flight, 1), MAX_IN_FLIGHT),
    )


def _echo(out: pb.HookDeclaration, hook: int, s: HookSettings, stream: bool) -> None:
    out.hook = pb.Hook.ValueType(hook)
    out.mode = pb.HOOK_MODE_OBSERVE if s.mode == "observe" else pb.HOOK_MODE_MUTATE
    out.timeout.FromNanoseconds(int(s.timeout * 1e9))
    out.tool_names.extend(sorted(s.tool_names))
    if stream:
        out.process_data_parts = s.process_data_parts
        out.delivery = pb.STREAM_DELIVERY_WINDOWED if s.windowed else pb.STREAM_DELIVERY_PER_CHUNK
        out.max_window = s.max_window
        out.max_in_flight = s.max_in_flight


class ProcessorServicer(processor_service_pb2_grpc.ProcessorServiceServicer):
    def __init__(self, hub: ProcessorHub) -> None:
        self.hub = hub
        self.owners = Owners("processors")

    def register(self, server: grpc.aio.Server) -> None:
        # As the generated ``add_ProcessorServiceServicer_to_server``, with a serializer that
        # passes through responses the writer framed itself (``bytes``).
        handlers = {"Attach": grpc.stream_stream_rpc_method_handler(
            self.Attach, request_deserializer=pb.ProcessorServiceAttachRequest.FromString,
            response_serializer=passthrough(pb.ProcessorServiceAttachResponse.SerializeToString),
        )}
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, handlers),))
        server.add_registered_method_handlers(SERVICE_NAME, handlers)

    async def Attach(self, request_iterator: Any, context: grpc.aio.ServicerContext) -> None:  # noqa: N802
        first = await context.read()
        if first is grpc.aio.EOF:
            return
        if self.hub.draining:
            await self._refuse(context, grpc.StatusCode.UNAVAILABLE, "the server is shutting down")
        if first.WhichOneof("message") != "handshake":
            await self._refuse(context, grpc.StatusCode.INVALID_ARGUMENT, "the first message must be a handshake")
        try:
            declarations, welcome = accept_handshake(first.handshake, self.hub)
        except HandshakeError as e:
            await self._refuse(context, e.code, e.message)
        try:
            owner = self.owners.claim(declarations)
        except PermissionDeniedError as e:
            await self._refuse(context, grpc.StatusCode.PERMISSION_DENIED, str(e))
        conn = Connection(declarations, first.handshake.instance_id, welcome.protocol_version)
        # Registered before the welcome goes out, so a process that has its welcome is routable;
        # invocations queued meanwhile wait in ``outbound`` behind the welcome.
        self.hub.register(conn)
        log.info("processor stream %s attached: %s", conn.instance_id, ", ".join(declarations))
        failed = asyncio.Event()
        reader = asyncio.create_task(self._read(context, conn, failed))
        try:
            await context.write(pb.ProcessorServiceAttachResponse(welcome=welcome))
            await self._write(context, conn)
        except (asyncio.CancelledError, grpc.aio.AioRpcError, grpc.RpcError):
            failed.set()
            raise
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
            self.hub.unregister(conn, failed=failed.is_set())
            self.owners.release(declarations, owner)
            conn.finished.set()
            log.info("processor stream %s detached", conn.instance_id)

    async def _refuse(self, context: grpc.aio.ServicerContext, code: grpc.StatusCode, message: str) -> None:
        self.hub.m_streams_failed.add(1)
        await context.abort(code, message)

    async def _write(self, context: grpc.aio.ServicerContext, conn: Connection) -> None:
        """The one writer: everything queued, in order, until the stream is closed."""
        batch = conn.version >= BATCH_VERSION
        while True:
            for message in INVOCATIONS.frames(await conn.outbound.take(), batch, self.hub.max_invocation_bytes):
                if message is None:
                    return
                await context.write(message)

    async def _read(self, context: grpc.aio.ServicerContext, conn: Connection, failed: asyncio.Event) -> None:
        """The one reader: answers resolve pending invocations; anything else is spurious."""
        try:
            while True:
                message = await context.read()
                if message is grpc.aio.EOF:
                    break
                kind = message.WhichOneof("message")
                if kind == "result":
                    self.hub.resolve(conn, message.result)
                elif kind == "results" and conn.version >= BATCH_VERSION:
                    for result in message.results.results:
                        self.hub.resolve(conn, result)
                else:
                    self.hub.m_spurious.add(1)
        except asyncio.CancelledError:
            raise
        except Exception:  # the peer went away mid-read
            failed.set()
        # Nothing more can be answered on this stream: move what it owed right away.
        self.hub.unregister(conn, failed=failed.is_set())
        conn.close()


__all__ = ["PROTOCOL_VERSIONS", "SERVICE_NAME", "HandshakeError", "ProcessorServicer", "accept_handshake"]
