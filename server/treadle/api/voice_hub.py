"""``VoiceProviderService.Attach``: speech providers in any language, over one stream each.

The first message must be a handshake (the providers served: id, directions, rate, speakers);
a bad one ends the stream with INVALID_ARGUMENT, FAILED_PRECONDITION or PERMISSION_DENIED and a
message saying what is wrong. After the welcome, one reader task routes answers to pending
requests by invocation id, and every write goes through the stream's outbound queue.

Streams serving the same id are replicas: a call's session keeps the replica it first used
and moves to another if that one goes. A request whose stream dies or that is not answered in
time fails with ``VoiceProviderError`` (UNAVAILABLE naming the provider, or, for a fail-open
provider in a conversation, that direction stops).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import re
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc

from ..agents import VoiceProviderRef
from ..core.errors import InvalidArgumentError
from ..v1 import remote_pb2, voice_service_pb2 as pb, voice_service_pb2_grpc as pb_grpc
from ..tracing import inject_context
from ..voice.audio import check_rate
from ..voice.base import BufferedRecognition, Recognition, Speaker, VoiceProviderError
from ..voice.providers import BUILTINS
from ..wire.data import struct_to_dict
from .handshake import HandshakeError, accept, negotiate_version
from .identity import Owners

log = logging.getLogger(__name__)

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["VoiceProviderService"].full_name
PROVIDER_ID = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
DEFAULT_TIMEOUT = 30.0
"""Seconds the server waits for each answer (each piece of audio) of an attached provider."""
_END = object()


@dataclass(eq=False)
class VoiceStream:
    instance_id: str
    providers: dict[str, pb.VoiceProviderDeclaration]
    outbound: asyncio.Queue[Any] = field(default_factory=asyncio.Queue)
    pending: dict[str, asyncio.Queue[Any]] = field(default_factory=dict)
    closed: bool = False
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def next_id(self) -> str:
        return f"{self.instance_id}/{next(self._ids)}"

    def answer(self, invocation_id: str, item: Any) -> None:
        queue = self.pending.get(invocation_id)
        if queue is not None:
            queue.put_nowait(item)

    def fail_pending(self, reason: str) -> None:
        self.closed = True
        pending, self.pending = self.pending, {}
        for queue in pending.values():
            queue.put_nowait(ConnectionError(reason))


class VoiceHub:
    """Every attached voice stream, and sessions over them."""

    def __init__(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.timeout = timeout
        self.server_id = ""
        self._streams: list[VoiceStream] = []
        self._turn = itertools.count()
        self._changed = asyncio.Condition()
        self.draining = False

    async def attach(self, stream: VoiceStream) -> None:
        self._streams.append(stream)
        log.info("voice stream %s attached: %s", stream.instance_id, ", ".join(stream.providers))
        async with self._changed:
            self._changed.notify_all()

    async def detach(self, stream: VoiceStream, reason: str = "") -> None:
        if stream in self._streams:
            self._streams.remove(stream)
            stream.fail_pending(f"its process disconnected{f' ({reason})' if reason else ''}")
            log.info("voice stream %s detached", stream.instance_id)

    def replicas(self, provider_id: str) -> list[VoiceStream]:
        return [s for s in self._streams if provider_id in s.providers and not s.closed]

    async def wait_attached(self, provider_id: str, timeout: float | None = None) -> None:
        async def wait() -> None:
            async with self._changed:
                await self._changed.wait_for(lambda: bool(self.replicas(provider_id)))

        await asyncio.wait_for(wait(), timeout)

    def pick(self, provider_id: str) -> VoiceStream:
        if self.draining:
            raise VoiceProviderError(provider_id, "is unavailable: the server is shutting down")
        replicas = self.replicas(provider_id)
        if not replicas:
            raise VoiceProviderError(provider_id, "is not attached")
        return replicas[next(self._turn) % len(replicas)]

    def open(self, ref: VoiceProviderRef, direction: str, agent_id: str) -> Any:
        """A session of attached provider ``ref`` for ``direction`` (``stt`` or ``tts``)."""
        stream = self.pick(ref.id)
        declared = stream.providers[ref.id]
        if direction == "tts" and not declared.text_to_speech:
            raise VoiceProviderError(ref.id, "does not do text to speech")
        if direction == "stt" and not declared.speech_to_text:
            raise VoiceProviderError(ref.id, "does not do speech to text")
        return RemoteVoiceSession(self, ref.id, agent_id, stream)

    async def drain(self, grace: float) -> None:
        self.draining = True
        for stream in list(self._streams):
            stream.outbound.put_nowait(pb.VoiceProviderServiceAttachResponse(
                drain=remote_pb2.Drain(grace_ms=int(grace * 1000))))
            stream.fail_pending("the server is shutting down")
            stream.outbound.put_nowait(_END)


class RemoteVoiceSession:
    """One call's session of an attached provider (both directions it declared)."""

    def __init__(self, hub: VoiceHub, provider_id: str, agent_id: str, stream: VoiceStream) -> None:
        self.id = provider_id
        self._hub = hub
        self._agent_id = agent_id
        self._stream = stream
        self.sample_rate = stream.providers[provider_id].sample_rate_hertz or 16000

    def _replica(self) -> VoiceStream:
        if self._stream.closed:  # moved to a live replica for the rest of the session
            self._stream = self._hub.pick(self.id)
        return self._stream

    @contextlib.contextmanager
    def _invocation(self, stream: VoiceStream, invocation_id: str) -> Iterator[asyncio.Queue[Any]]:
        queue: asyncio.Queue[Any] = asyncio.Queue()
        stream.pending[invocation_id] = queue
        try:
            yield queue
        finally:
            if stream.pending.pop(invocation_id, None) is not None and not stream.closed:
                stream.outbound.put_nowait(pb.VoiceProviderServiceAttachResponse(
                    cancel=remote_pb2.CancelInvocation(invocation_id=invocation_id, reason="no longer awaited")))

    async def _next(self, queue: asyncio.Queue[Any]) -> Any:
        try:
            item = await asyncio.wait_for(queue.get(), self._hub.timeout)
        except TimeoutError:
            raise VoiceProviderError(self.id, f"did not answer within {self._hub.timeout:g}s") from None
        if isinstance(item, ConnectionError):
            raise VoiceProviderError(self.id, str(item))
        if isinstance(item, pb.VoiceProviderError):
            raise VoiceProviderError(self.id, f"failed: {item.message}" if item.message else "failed")
        return item

    def _deadline(self, message: Any) -> None:
        """The deadline, and the trace context of the current span (a conversation's turn)."""
        message.deadline.FromNanoseconds(time.time_ns() + int(self._hub.timeout * 1e9))
        carrier = inject_context()
        message.trace_context.traceparent = carrier.get("traceparent", "")
        message.trace_context.tracestate = carrier.get("tracestate", "")
        message.trace_context.baggage = carrier.get("baggage", "")

    async def synthesize(self, text: str, speaker: str = "") -> AsyncIterator[bytes]:
        stream = self._replica()
        invocation = pb.SynthesizeInvocation(invocation_id=stream.next_id(), provider_id=self.id, text=text,
                                             speaker=speaker, agent_id=self._agent_id)
        self._deadline(invocation)
        with self._invocation(stream, invocation.invocation_id) as queue:
            stream.outbound.put_nowait(pb.VoiceProviderServiceAttachResponse(synthesize=invocation))
            while True:
                piece: pb.SynthesizedAudio = await self._next(queue)
                if piece.audio:
                    yield piece.audio
                if piece.last:
                    return

    async def speakers(self) -> list[Speaker]:
        declared = self._replica().providers[self.id]
        return [Speaker(s.voice_id, struct_to_dict(s.metadata)) for s in declared.speakers]

    def recognize(self, phrases: Sequence[str] = ()) -> Recognition:
        return BufferedRecognition(self._transcribe, phrases)

    async def _transcribe(self, pcm: bytes, phrases: list[str]) -> str:
        stream = self._replica()
        invocation = pb.TranscribeInvocation(invocation_id=stream.next_id(), provider_id=self.id, audio=pcm,
                                             phrases=phrases, agent_id=self._agent_id)
        self._deadline(invocation)
        with self._invocation(stream, invocation.invocation_id) as queue:
            stream.outbound.put_nowait(pb.VoiceProviderServiceAttachResponse(transcribe=invocation))
            result: pb.TranscribeResult = await self._next(queue)
            return result.text

    async def close(self) -> None:
        pass


def check_handshake(request: pb.VoiceProviderServiceAttachRequest) -> int:
    if request.WhichOneof("message") != "handshake":
        raise HandshakeError(grpc.StatusCode.INVALID_ARGUMENT, "the first message on a voice stream must be a handshake")
    hs = request.handshake
    version = negotiate_version(hs.protocol_versions, "process")
    if not hs.providers:
        raise HandshakeError(grpc.StatusCode.INVALID_ARGUMENT, "handshake declares no providers")
    seen: set[str] = set()
    for i, p in enumerate(hs.providers):
        where = f"providers[{i}]"
        if not PROVIDER_ID.match(p.id):
            raise HandshakeError(grpc.StatusCode.INVALID_ARGUMENT,
                                 f"{where}.id {p.id!r} is invalid: use 1-64 letters, digits, '_', '.' or '-'")
        if p.id in BUILTINS:
            raise HandshakeError(grpc.StatusCode.INVALID_ARGUMENT, f"{where}.id {p.id!r} is a built-in provider's id")
        if p.id in seen:
            raise HandshakeError(grpc.StatusCode.INVALID_ARGUMENT, f"{where}.id: provider {p.id!r} is declared twice")
        seen.add(p.id)
        if not (p.speech_to_text or p.text_to_speech):
            raise HandshakeError(grpc.StatusCode.INVALID_ARGUMENT,
                                 f"{where}: provider {p.id!r} does neither speech_to_text nor text_to_speech")
        try:
            check_rate(p.sample_rate_hertz, f"{where}.sample_rate_hertz")
        except InvalidArgumentError as e:
            raise HandshakeError(grpc.StatusCode.INVALID_ARGUMENT, str(e)) from None
    return version


class VoiceProviderServicer(pb_grpc.VoiceProviderServiceServicer):
    def __init__(self, hub: VoiceHub) -> None:
        self.hub = hub
        self.owners = Owners("voices")

    def register(self, server: grpc.aio.Server) -> None:
        pb_grpc.add_VoiceProviderServiceServicer_to_server(self, server)

    async def Attach(
        self, request_iterator: AsyncIterator[pb.VoiceProviderServiceAttachRequest], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.VoiceProviderServiceAttachResponse]:
        requests = aiter(request_iterator)
        accepted = await accept(requests, context, self.owners, draining=self.hub.draining, check=check_handshake,
                                names=lambda m: (p.id for p in m.handshake.providers))
        if accepted is None:
            return
        first, version, owner = accepted
        hs = first.handshake
        stream = VoiceStream(hs.instance_id or context.peer(), {p.id: p for p in hs.providers})
        await self.hub.attach(stream)
        reader = asyncio.create_task(self._read(requests, stream))
        try:
            yield pb.VoiceProviderServiceAttachResponse(welcome=pb.VoiceProviderWelcome(
                protocol_version=version, providers=list(stream.providers), server_id=self.hub.server_id))
            while (message := await stream.outbound.get()) is not _END:
                yield message
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
            await self.hub.detach(stream)
            self.owners.release(stream.providers, owner)

    async def _read(self, requests: AsyncIterator[pb.VoiceProviderServiceAttachRequest], stream: VoiceStream) -> None:
        reason = "stream closed"
        try:
            async for request in requests:
                kind = request.WhichOneof("message")
                if kind == "audio":
                    stream.answer(request.audio.invocation_id, request.audio)
                elif kind == "transcript":
                    stream.answer(request.transcript.invocation_id, request.transcript)
                elif kind == "error":
                    stream.answer(request.error.invocation_id, request.error)
                else:
                    log.warning("voice stream %s sent a second handshake; ignored", stream.instance_id)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # the peer vanished (reset, SIGKILL)
            reason = f"{type(e).__name__}: {e}"
        await self.hub.detach(stream, reason)
        stream.outbound.put_nowait(_END)
