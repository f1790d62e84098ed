"""Serving voice providers to Treadle servers over ``VoiceProviderService.Attach``.

A provider is any object with an ``id`` and one or both of::

    async def speak(self, text: str, speaker: str) -> bytes | AsyncIterator[bytes]  # 16-bit PCM
    async def listen(self, audio: bytes, phrases: list[str]) -> str               # 16-bit PCM in

and optionally ``sample_rate`` (default 16000: the PCM it makes and wants) and ``speakers``
(voice ids, or ``(voice_id, metadata)`` pairs). Agents name it by ``id`` in their voice.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Sequence
from typing import Any

import grpc
from opentelemetry.trace import TracerProvider

from treadle.v1 import voice_service_pb2 as pb, voice_service_pb2_grpc as pb_grpc
from treadle.wire.data import dict_to_struct

from ._attach import PROTOCOL_VERSION, Attachment, Send, as_targets, cancel_all, default_instance_id
from ._connect import Connect, TLSConfig
from ._tracing import ParentContexts, invocation_span, mark_error, tracer_from

log = logging.getLogger("treadle_client")


def _declaration(provider: Any) -> pb.VoiceProviderDeclaration:
    out = pb.VoiceProviderDeclaration(
        id=provider.id, speech_to_text=callable(getattr(provider, "listen", None)),
        text_to_speech=callable(getattr(provider, "speak", None)),
        sample_rate_hertz=int(getattr(provider, "sample_rate", 16000)))
    for speaker in getattr(provider, "speakers", ()) or ():
        voice_id, metadata = (speaker, {}) if isinstance(speaker, str) else speaker
        dict_to_struct(metadata, out.speakers.add(voice_id=voice_id).metadata)
    return out


class _VoiceSession:
    def __init__(self, providers: dict[str, Any], instance_id: str, tracer: Any, send: Send) -> None:
        self._providers = providers
        self._instance_id = instance_id
        self._tracer = tracer
        self._parents = ParentContexts()
        self._send = send
        self._running: dict[str, asyncio.Task[None]] = {}

    def handshake(self) -> pb.VoiceProviderServiceAttachRequest:
        return pb.VoiceProviderServiceAttachRequest(handshake=pb.VoiceProviderHandshake(
            protocol_versions=[PROTOCOL_VERSION], instance_id=self._instance_id,
            providers=[_declaration(p) for p in self._providers.values()]))

    def on_message(self, message: pb.VoiceProviderServiceAttachResponse) -> bool:
        kind = message.WhichOneof("message")
        if kind in ("synthesize", "transcribe"):
            call = getattr(message, kind)
            task = asyncio.create_task(self._run(kind, call))
            self._running[call.invocation_id] = task
            task.add_done_callback(lambda _: self._running.pop(call.invocation_id, None))
        elif kind == "cancel":
            running = self._running.get(message.cancel.invocation_id)
            if running is not None:
                running.cancel()
        elif kind == "drain":
            log.info("server is draining; will reconnect when it closes the stream")
        return kind == "welcome"

    async def close(self) -> None:
        await cancel_all(self._running.values())

    async def _run(self, kind: str, call: Any) -> None:
        attributes = {"treadle.voice.provider": call.provider_id, "treadle.agent.id": call.agent_id}
        with invocation_span(self._tracer, f"voice.{kind} {call.provider_id}", call.trace_context,
                             attributes, self._parents) as span:
            try:
                provider = self._providers[call.provider_id]
                if kind == "synthesize":
                    made = provider.speak(call.text, call.speaker)
                    if inspect.isawaitable(made):
                        made = await made
                    pieces = [made] if isinstance(made, (bytes, bytearray)) else made
                    if hasattr(pieces, "__aiter__"):
                        async for piece in pieces:
                            self._audio(call.invocation_id, bytes(piece))
                    else:
                        for piece in pieces:
                            self._audio(call.invocation_id, bytes(piece))
                    self._send(pb.VoiceProviderServiceAttachRequest(
                        audio=pb.SynthesizedAudio(invocation_id=call.invocation_id, last=True)))
                else:
                    text = provider.listen(call.audio, list(call.phrases))
                    if inspect.isawaitable(text):
                        text = await text
                    self._send(pb.VoiceProviderServiceAttachRequest(
                        transcript=pb.TranscribeResult(invocation_id=call.invocation_id, text=str(text))))
            except Exception as e:  # the caller gets the message, naming the provider
                mark_error(span, e)
                self._send(pb.VoiceProviderServiceAttachRequest(error=pb.VoiceProviderError(
                    invocation_id=call.invocation_id, message=str(e) or type(e).__name__)))

    def _audio(self, invocation_id: str, audio: bytes) -> None:
        if audio:
            self._send(pb.VoiceProviderServiceAttachRequest(
                audio=pb.SynthesizedAudio(invocation_id=invocation_id, audio=audio)))


def _open(channel: grpc.aio.Channel, requests: Any, metadata: Any) -> Any:
    return pb_grpc.VoiceProviderServiceStub(channel).Attach(requests, metadata=metadata)


async def serve_voices(
    providers: Sequence[Any],
    targets: str | Sequence[str],
    *,
    instance_id: str | None = None,
    tracer_provider: TracerProvider | None = None,
    backoff: tuple[float, float] = (0.1, 5.0),
    token: str | None = None,
    tls: TLSConfig | None = None,
) -> Attachment:
    """Serve voice ``providers`` to every server in ``targets`` until ``await attachment.close()``."""
    by_id: dict[str, Any] = {}
    for p in providers:
        pid = getattr(p, "id", None)
        if not isinstance(pid, str) or not pid:
            raise TypeError(f"a voice provider needs a non-empty string id, got {type(p).__name__}")
        if not (callable(getattr(p, "speak", None)) or callable(getattr(p, "listen", None))):
            raise TypeError(f"voice provider {pid!r} needs a speak or a listen method")
        if pid in by_id:
            raise ValueError(f"voice provider {pid!r} is given twice")
        by_id[pid] = p
    if not by_id:
        raise ValueError("give at least one voice provider")
    tracer = tracer_from(tracer_provider)
    iid = instance_id or default_instance_id()
    return Attachment(
        as_targets(targets), _open, lambda send: _VoiceSession(by_id, iid, tracer, send), backoff,
        Connect(tls, token), "voice " + ", ".join(by_id),
    )
