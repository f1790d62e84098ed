"""One ``Converse`` call: user turns in (speech or text), the agent loop in the middle, speech out.

Three tasks share the call: the reader takes the client's messages (audio goes to the
recogniser as it arrives; ``end_of_turn`` or ``text`` queues a turn; audio or ``interrupt``
while the agent speaks is a barge-in), the worker answers queued turns one at a time, and each
answer's speaker turns its sentences into audio while the run is still writing the next ones.
Every event goes out through one queue, in order.

A turn is a ``Stream`` run: ``AgentServicer.open_stream`` with the turn's text on the
conversation's memory thread, so processors, tripwires, memory, signals, tools and tracing apply
as they do to any run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from ..agents import Agent, VoiceProviderRef
from ..core.errors import InvalidArgumentError
from ..v1 import agent_service_pb2, voice_service_pb2 as pb
from ..voice import Recognition, SpeechToText, TextToSpeech, VoiceProviderError
from ..voice.audio import AudioFormat, Decoder, Encoder, level
from ..voice.sentences import Sentences
from . import auth, convert
from .status import ShuttingDownError

log = logging.getLogger(__name__)

_STARTED, _ENDED = pb.TURN_EVENT_KIND_STARTED, pb.TURN_EVENT_KIND_ENDED
_END = object()
MAX_TURN_TEXT = 10_000
BARGE_IN_LEVEL = 0.01
"""User audio at least this loud (RMS, full scale 1.0) while the agent speaks is a barge-in; a
client that streams its microphone's silence all along does not cut every answer short."""


class Conversation:
    def __init__(self, service: Any, config: pb.ConverseConfig, agent: Agent, input_format: AudioFormat,
                 output_format: AudioFormat, phrases: list[str]) -> None:
        self._service = service
        self.config = config
        self.agent = agent
        self._input_format = input_format
        self._output_format = output_format
        self._phrases = phrases
        voice = service.providers.voice_of(agent)
        self._listener_ref: VoiceProviderRef | None = voice.listener
        self._speaker_ref: VoiceProviderRef | None = voice.speaker_provider
        self._speaker = config.speaker or voice.speaker
        self._stt: SpeechToText | None = None
        self._tts: TextToSpeech | None = None
        self._tts_failed = False
        self._stt_failed = False
        self._out: asyncio.Queue[Any] = asyncio.Queue()
        self._turns: asyncio.Queue[Any] = asyncio.Queue()
        self._recognition: Recognition | None = None
        self._decoder: Decoder | None = None
        self._turn = 0
        self._answering: asyncio.Task[None] | None = None
        self._answering_turn = 0
        self._tasks: list[asyncio.Task[Any]] = []

    @classmethod
    def open(cls, service: Any, config: pb.ConverseConfig) -> Conversation:
        """Check the config (INVALID_ARGUMENT / NOT_FOUND / PERMISSION_DENIED / FAILED_PRECONDITION)."""
        from .voice_service import audio_format, check_phrases  # noqa: PLC0415 (they import this module)

        agent = service.agent(config.agent_id, "config.agent_id")
        service.providers.voice_of(agent)
        if not config.thread_id or not config.resource_id:
            raise InvalidArgumentError("config.thread_id and config.resource_id are required: each turn runs on "
                                       "that memory thread")
        auth.require_resource(config.resource_id)
        input_format = audio_format(config.input_format, "config.input_format", "pcm16")
        output_format = audio_format(config.output_format, "config.output_format", "pcm16")
        if output_format.encoding == "wav":
            raise InvalidArgumentError("config.output_format: a conversation's audio is a stream of turns, not one "
                                       "WAV file; use PCM16 or MULAW")
        phrases = check_phrases(config.phrases, "config.phrases")
        conversation = cls(service, config, agent, input_format, output_format, phrases)
        convert.run_request_from_proto(conversation._request("check"))  # the run's options, checked now
        return conversation

    # --- the call -----------------------------------------------------------------------------

    async def run(self, requests: AsyncIterator[pb.ConverseRequest]) -> AsyncIterator[pb.ConverseResponse]:
        self._tasks = [asyncio.create_task(self._read(requests)), asyncio.create_task(self._work())]
        while (event := await self._out.get()) is not _END:
            if isinstance(event, Exception):
                raise event
            yield event

    def stop(self) -> None:
        """The server is draining past its grace: end the call."""
        self._out.put_nowait(ShuttingDownError())

    async def close(self) -> None:
        for task in [*self._tasks, *([self._answering] if self._answering else [])]:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(BaseException):
                await task
        for session in (self._stt, self._tts):
            if session is not None:
                with contextlib.suppress(Exception):
                    await session.close()

    def _emit(self, **event: Any) -> None:
        self._out.put_nowait(pb.ConverseResponse(**event))

    # --- reading the client -------------------------------------------------------------------

    async def _read(self, requests: AsyncIterator[pb.ConverseRequest]) -> None:
        try:
            async for request in requests:
                kind = request.WhichOneof("message")
                if kind == "config":
                    raise InvalidArgumentError("config may be sent only once, first")
                if kind == "audio":
                    await self._audio(request.audio)
                elif kind == "end_of_turn":
                    await self._end_of_turn()
                elif kind == "text":
                    if not request.text.strip() or len(request.text) > MAX_TURN_TEXT:
                        raise InvalidArgumentError(f"text must be 1-{MAX_TURN_TEXT} characters")
                    self._barge_in()
                    self._recognition = None  # a typed turn replaces unfinished speech
                    self._turns.put_nowait(request.text)
                elif kind == "interrupt":
                    self._barge_in(always=True)
            self._turns.put_nowait(_END)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            self._out.put_nowait(e)

    async def _audio(self, data: bytes) -> None:
        if self._listener_ref is None:
            raise InvalidArgumentError(f"agent {self.agent.id!r} cannot listen (its voice has no input provider): "
                                       "send text turns")
        if self._recognition is None:
            stt = self._speech_to_text()
            if stt is None:
                return
            if self._decoder is None:  # one audio stream for the whole call (a WAV header comes once)
                self._decoder = Decoder(self._input_format, stt.sample_rate)
            self._recognition = stt.recognize(self._phrases)
        assert self._decoder is not None
        pcm = self._decoder.decode(data)
        if level(pcm) >= BARGE_IN_LEVEL:  # speech, not a microphone's silence
            self._barge_in()
        interim = await self._recognition.feed(pcm)
        if interim:
            self._emit(transcript=pb.Transcript(role="user", text=interim, is_final=False, turn=self._turn + 1))

    async def _end_of_turn(self) -> None:
        recognition, self._recognition = self._recognition, None
        if recognition is None and self._stt_failed:
            return  # the audio had no listener (said once, when it failed)
        if recognition is None:
            raise InvalidArgumentError("end_of_turn without audio: send the turn's audio first (or a text turn)")
        try:
            text = await recognition.finish()
        except VoiceProviderError as e:
            assert self._listener_ref is not None
            if self._listener_ref.failure_policy != "fail_open":
                raise
            self._emit(error=pb.VoiceError(turn=self._turn + 1, message=f"{e}; the turn was not heard"))
            return
        if not text.strip():
            self._emit(error=pb.VoiceError(turn=self._turn + 1, message="nothing was heard in that turn"))
            return
        self._turns.put_nowait(text)

    def _speech_to_text(self) -> SpeechToText | None:
        if self._stt is None and not self._stt_failed:
            try:
                self._stt = self._service.providers.speech_to_text(self.agent)
            except VoiceProviderError as e:
                assert self._listener_ref is not None
                if self._listener_ref.failure_policy != "fail_open":
                    raise
                self._stt_failed = True  # fail open: the rest of the conversation takes text turns only
                self._emit(error=pb.VoiceError(turn=self._turn + 1, message=f"{e}; send text turns"))
        return self._stt

    def _barge_in(self, *, always: bool = False) -> None:
        answering = self._answering
        if answering is None or answering.done() or not (always or self.config.barge_in):
            return
        answering.cancel()
        self._answering = None  # once per answer, however many messages of speech follow
        self._emit(barge_in=pb.BargeIn(turn=self._answering_turn))

    # --- answering ----------------------------------------------------------------------------

    async def _work(self) -> None:
        try:
            while (text := await self._turns.get()) is not _END:
                self._turn += 1
                self._answering_turn = self._turn
                answering = self._answering = asyncio.create_task(self._answer(self._turn, text))
                await asyncio.wait({answering})  # a barge-in cancels the answer, not this loop
                self._answering = None
                if answering.cancelled():
                    self._emit(turn=pb.TurnEvent(kind=_ENDED, turn=self._turn))
                else:
                    answering.result()  # a provider that failed closed ends the call
            self._out.put_nowait(_END)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            self._out.put_nowait(e)

    def _request(self, text: str) -> agent_service_pb2.StreamRequest:
        request = agent_service_pb2.StreamRequest(agent_id=self.agent.id, prompt=text)
        memory = request.options.memory
        memory.resource, memory.thread_id = self.config.resource_id, self.config.thread_id
        if self.config.HasField("request_context"):
            request.options.request_context.CopyFrom(self.config.request_context)
        return request

    async def _answer(self, turn: int, text: str) -> None:
        self._emit(turn=pb.TurnEvent(kind=_STARTED, turn=turn))
        self._emit(transcript=pb.Transcript(role="user", text=text, is_final=True, turn=turn))
        release = self._service.gate.take_run(auth.owner())
        sentences: asyncio.Queue[Any] = asyncio.Queue()
        speaker = asyncio.create_task(self._speak(turn, sentences))
        run_id = ""
        try:
            splitter = Sentences()
            stream = self._service.runs.open_stream(self._request(text))
            async with contextlib.aclosing(stream) as chunks:
                async for chunk in chunks:
                    run_id = run_id or chunk.run_id
                    self._emit(chunk=convert.chunk_to_proto(chunk))
                    if chunk.type == "text-delta":
                        for sentence in splitter.feed(chunk.payload.text):
                            sentences.put_nowait(sentence)
                    elif chunk.type == "text-end":  # a text block's last words end a sentence
                        for sentence in splitter.flush():
                            sentences.put_nowait(sentence)
            for sentence in splitter.flush():
                sentences.put_nowait(sentence)
            sentences.put_nowait(_END)
            await speaker
        finally:
            release()
            if not speaker.done():
                speaker.cancel()
                with contextlib.suppress(BaseException):
                    await speaker
        self._emit(turn=pb.TurnEvent(kind=_ENDED, turn=turn, run_id=run_id))

    async def _speak(self, turn: int, sentences: asyncio.Queue[Any]) -> None:
        from .voice_service import format_to_pb  # noqa: PLC0415

        encoder: Encoder | None = None
        while (sentence := await sentences.get()) is not _END:
            self._emit(transcript=pb.Transcript(role="assistant", text=sentence, is_final=True, turn=turn))
            tts = self._text_to_speech(turn)
            if tts is None:
                continue
            try:
                async for pcm in tts.synthesize(sentence, self._speaker):
                    if encoder is None:
                        encoder = Encoder(self._output_format, tts.sample_rate)
                    self._emit(audio=pb.ConverseAudio(audio=encoder.encode(pcm), text=sentence, turn=turn,
                                                      format=format_to_pb(self._output_format.encoding, encoder.rate)))
            except VoiceProviderError as e:
                self._speech_failed(turn, e)

    def _text_to_speech(self, turn: int) -> TextToSpeech | None:
        if self._speaker_ref is None or self._tts_failed:
            return None
        if self._tts is None:
            try:
                self._tts = self._service.providers.text_to_speech(self.agent)
            except VoiceProviderError as e:
                self._speech_failed(turn, e)
                return None
        return self._tts

    def _speech_failed(self, turn: int, error: VoiceProviderError) -> None:
        assert self._speaker_ref is not None
        if self._speaker_ref.failure_policy != "fail_open":
            raise error
        self._tts_failed = True  # fail open: the rest of the conversation is text only
        log.warning("conversation with %r goes on without speech: %s", self.agent.id, error)
        self._emit(error=pb.VoiceError(turn=turn, message=f"{error}; the conversation goes on as text"))
