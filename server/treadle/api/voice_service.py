"""``VoiceService``: Speak, Listen, GetSpeakers, GetListener, and Converse (``api/converse.py``).

A thin edge over ``voice/``: requests are checked here (INVALID_ARGUMENT naming the field), the
agent's voice opens fresh provider sessions for each call, and sessions close with the call.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import grpc

from ..agents import Agent
from ..core.errors import InvalidArgumentError
from ..registry import Registry
from ..v1 import voice_service_pb2 as pb, voice_service_pb2_grpc as pb_grpc
from ..voice import VoiceProviders
from ..voice.audio import AudioFormat, Decoder, Encoder, check_rate
from ..voice.sentences import split
from ..wire.data import dict_to_struct
from . import auth
from .converse import Conversation
from .status import abort_with, unary

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["VoiceService"].full_name
MAX_TEXT = 10_000
MAX_PHRASES = 1000
MAX_PHRASE = 200
_ENCODINGS = {pb.AUDIO_ENCODING_PCM16: "pcm16", pb.AUDIO_ENCODING_WAV: "wav", pb.AUDIO_ENCODING_MULAW: "mulaw"}
_TO_PB = {v: k for k, v in _ENCODINGS.items()}


def audio_format(fmt: pb.AudioFormat, path: str, default: str) -> AudioFormat:
    check_rate(fmt.sample_rate_hertz, f"{path}.sample_rate_hertz")
    return AudioFormat(_ENCODINGS.get(fmt.encoding, default), fmt.sample_rate_hertz)  # type: ignore[arg-type]


def format_to_pb(encoding: str, rate: int) -> pb.AudioFormat:
    return pb.AudioFormat(encoding=_TO_PB[encoding], sample_rate_hertz=rate)


def check_phrases(phrases: Any, path: str) -> list[str]:
    if len(phrases) > MAX_PHRASES:
        raise InvalidArgumentError(f"{path} has {len(phrases)} phrases; at most {MAX_PHRASES}")
    for i, phrase in enumerate(phrases):
        if not phrase.strip() or len(phrase) > MAX_PHRASE:
            raise InvalidArgumentError(f"{path}[{i}] must be 1-{MAX_PHRASE} characters")
    return list(phrases)


class VoiceServicer(pb_grpc.VoiceServiceServicer):
    def __init__(self, registry: Registry, providers: VoiceProviders, runs: Any, gate: Any) -> None:
        self._registry = registry
        self.providers = providers
        self._runs = runs
        """The ``AgentServicer``: Converse runs each turn through its ``open_stream``."""
        self._gate = gate

    def register(self, server: grpc.aio.Server) -> None:
        pb_grpc.add_VoiceServiceServicer_to_server(self, server)

    def agent(self, agent_id: str, path: str = "agent_id") -> Agent:
        if not agent_id:
            raise InvalidArgumentError(f"{path} is required")
        auth.require("agents", agent_id)
        return self._registry.snapshot_agent(agent_id)

    async def Speak(self, request: pb.SpeakRequest, context: grpc.aio.ServicerContext) -> AsyncIterator[pb.SpeakResponse]:
        try:
            agent = self.agent(request.agent_id)
            if not request.text.strip():
                raise InvalidArgumentError("text is required")
            if len(request.text) > MAX_TEXT:
                raise InvalidArgumentError(f"text has {len(request.text)} characters; at most {MAX_TEXT}")
            wanted = audio_format(request.format, "format", "wav")
            tts = self.providers.text_to_speech(agent)
            speaker = request.speaker or self.providers.voice_of(agent).speaker
        except Exception as e:
            await abort_with(context, e)
        # Synthesis runs one sentence ahead of the network: the next sentence is being made
        # while this one is sent.
        queue: asyncio.Queue[tuple[str, bytes] | None] = asyncio.Queue(maxsize=2)

        async def produce() -> None:
            for sentence in split(request.text):
                async for pcm in tts.synthesize(sentence, speaker):
                    await queue.put((sentence, pcm))
            await queue.put(None)

        producer = asyncio.create_task(produce())
        encoder: Encoder | None = None
        try:
            while True:
                getter = asyncio.ensure_future(queue.get())
                await asyncio.wait({getter, producer}, return_when=asyncio.FIRST_COMPLETED)
                if not getter.done():
                    getter.cancel()
                    producer.result()  # raises the provider's error
                    continue
                item = getter.result()
                if item is None:
                    break
                sentence, pcm = item
                if encoder is None:
                    encoder = Encoder(wanted, tts.sample_rate)
                yield pb.SpeakResponse(audio=encoder.header() + encoder.encode(pcm), text=sentence,
                                       format=format_to_pb(wanted.encoding, encoder.rate))
        except Exception as e:
            await abort_with(context, e)
        finally:
            if not producer.done():
                producer.cancel()
            with contextlib.suppress(BaseException):
                await producer
            await tts.close()

    async def Listen(
        self, request_iterator: AsyncIterator[pb.ListenRequest], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.ListenResponse]:
        requests = aiter(request_iterator)
        try:
            first = await anext(requests, None)
            if first is None or first.WhichOneof("message") != "config":
                raise InvalidArgumentError("the first Listen message must be the config")
            config = first.config
            agent = self.agent(config.agent_id, "config.agent_id")
            given = audio_format(config.format, "config.format", "pcm16")
            phrases = check_phrases(config.phrases, "config.phrases")
            stt = self.providers.speech_to_text(agent)
        except Exception as e:
            await abort_with(context, e)
        try:
            decoder = Decoder(given, stt.sample_rate)
            recognition = stt.recognize(phrases)
            async for request in requests:
                if request.WhichOneof("message") != "audio":
                    raise InvalidArgumentError("config may be sent only once, first")
                interim = await recognition.feed(decoder.decode(request.audio))
                if interim is not None and config.interim_results:
                    yield pb.ListenResponse(text=interim)
            yield pb.ListenResponse(text=await recognition.finish(), is_final=True)
        except Exception as e:
            await abort_with(context, e)
        finally:
            await stt.close()

    @unary
    async def GetSpeakers(self, request: pb.GetSpeakersRequest, context: grpc.aio.ServicerContext) -> pb.GetSpeakersResponse:
        agent = self.agent(request.agent_id)
        tts = self.providers.text_to_speech(agent)
        try:
            speakers = await tts.speakers()
        finally:
            await tts.close()
        out = pb.GetSpeakersResponse()
        for s in speakers:
            dict_to_struct(s.metadata, out.speakers.add(voice_id=s.voice_id).metadata)
        return out

    @unary
    async def GetListener(self, request: pb.GetListenerRequest, context: grpc.aio.ServicerContext) -> pb.GetListenerResponse:
        agent = self.agent(request.agent_id)
        return pb.GetListenerResponse(enabled=agent.voice is not None and agent.voice.listener is not None)

    async def Converse(
        self, request_iterator: AsyncIterator[pb.ConverseRequest], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.ConverseResponse]:
        requests = aiter(request_iterator)
        try:
            first = await anext(requests, None)
            if first is None or first.WhichOneof("message") != "config":
                raise InvalidArgumentError("the first Converse message must be the config")
            conversation = Conversation.open(self, first.config)
        except Exception as e:
            await abort_with(context, e)
        try:
            with self._runs.track(conversation.stop):
                async for event in conversation.run(requests):
                    yield event
        except Exception as e:
            await abort_with(context, e)
        finally:
            await conversation.close()

    # --- what Conversation uses ---------------------------------------------------------------

    @property
    def runs(self) -> Any:
        return self._runs

    @property
    def gate(self) -> Any:
        return self._gate
