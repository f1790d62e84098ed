"""OpenAI's speech and transcription endpoints as an agent's voice, through the ``openai`` SDK,
against a loopback server that speaks their wire format."""

from __future__ import annotations

import array
import math
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from tests.conftest import StartApp
from tests.support.openai_audio_wire import OpenAIAudioServer
from treadle.agents import Agent, VoiceProviderRef, VoiceSettings
from treadle.v1 import voice_service_pb2 as pb, voice_service_pb2_grpc as pb_grpc
from treadle.voice.audio import read_wav


def tone(seconds: float, rate: int) -> bytes:
    return array.array("h", (int(8000 * math.sin(2 * math.pi * 440 * i / rate))
                             for i in range(int(seconds * rate)))).tobytes()


@pytest.fixture
def audio_server() -> Any:
    servers: list[OpenAIAudioServer] = []

    def make(**script: Any) -> OpenAIAudioServer:
        servers.append(OpenAIAudioServer(**script))
        return servers[-1]

    yield make
    for server in servers:
        server.close()
        assert not server.failures, server.failures
        assert not server.speech and not server.transcripts, "scripted audio or text never asked for"


async def test_openai_speech_and_transcription(start_app: StartApp, audio_server: Any) -> None:
    speech = tone(0.5, 24000)
    fake = audio_server(speech=[speech, speech], transcripts=["Call my sister."])

    def setup(app: Any) -> None:
        options = {"baseUrl": fake.base_url}
        app.add_agent(Agent(id="openai-voice", model="openai/gpt-4o-mini", base_url=fake.base_url,
                            voice=VoiceSettings(input=VoiceProviderRef("openai", options=options),
                                                output=VoiceProviderRef("openai", options=options | {"voice": "nova"}))))

    running = await start_app(setup=setup)
    async with grpc.aio.insecure_channel(running.target) as channel:
        stub = pb_grpc.VoiceServiceStub(channel)
        # Speak: each sentence is one speech request, answered as 24 kHz PCM and sent on as asked.
        got = [r async for r in stub.Speak(pb.SpeakRequest(agent_id="openai-voice", text="Hello there. Bye now.",
                                                           format=pb.AudioFormat()))]
        assert list(dict.fromkeys(r.text for r in got)) == ["Hello there.", "Bye now."]  # in pieces, in order
        pcm, rate = read_wav(b"".join(r.audio for r in got))
        assert rate == 24000 and pcm == speech + speech
        bodies = [r.json for r in fake.recorded]
        assert [(b["model"], b["voice"], b["input"], b["response_format"]) for b in bodies] == [
            ("gpt-4o-mini-tts", "nova", "Hello there.", "pcm"), ("gpt-4o-mini-tts", "nova", "Bye now.", "pcm")]
        # Another speaker, by name.
        speakers = (await stub.GetSpeakers(pb.GetSpeakersRequest(agent_id="openai-voice"))).speakers
        assert "alloy" in [s.voice_id for s in speakers]

        # Listen: the whole utterance goes as one WAV file; the transcript comes back final.
        heard_audio = tone(1.0, 16000)

        async def requests() -> AsyncIterator[pb.ListenRequest]:
            yield pb.ListenRequest(config=pb.ListenConfig(
                agent_id="openai-voice", phrases=["call my sister"],
                format=pb.AudioFormat(encoding=pb.AUDIO_ENCODING_PCM16, sample_rate_hertz=16000)))
            for at in range(0, len(heard_audio), 4000):
                yield pb.ListenRequest(audio=heard_audio[at:at + 4000])

        heard = [r async for r in stub.Listen(requests())]
        assert [(r.text, r.is_final) for r in heard] == [("Call my sister.", True)]
        form = fake.recorded[-1].form
        assert form["model"] == "gpt-4o-mini-transcribe" and "call my sister" in form["prompt"]
        filename, _, wav = form["file"]
        assert filename.endswith(".wav") and read_wav(wav) == (heard_audio, 16000)


async def test_openai_refusals_and_failures_become_statuses(start_app: StartApp, audio_server: Any) -> None:
    fake = audio_server()

    def setup(app: Any) -> None:
        app.add_agent(Agent(id="bad-voice", model="openai/gpt-4o-mini", base_url=fake.base_url,
                            voice=VoiceSettings(output=VoiceProviderRef(
                                "openai", options={"baseUrl": fake.base_url, "voice": "robot"}))))
        app.add_agent(Agent(id="gone", model="openai/gpt-4o-mini", base_url=fake.base_url,
                            voice=VoiceSettings(output=VoiceProviderRef(
                                "openai", options={"baseUrl": "http://127.0.0.1:9/v1"}))))

    running = await start_app(setup=setup)
    async with grpc.aio.insecure_channel(running.target) as channel:
        stub = pb_grpc.VoiceServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as info:
            async for _ in stub.Speak(pb.SpeakRequest(agent_id="bad-voice", text="Hi.")):
                pass
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "Invalid value for 'voice'" in info.value.details()
        fake.failures.clear()  # refused on purpose
        with pytest.raises(grpc.aio.AioRpcError) as info:
            async for _ in stub.Speak(pb.SpeakRequest(agent_id="gone", text="Hi.")):
                pass
        assert info.value.code() == grpc.StatusCode.UNAVAILABLE
        assert info.value.details().startswith("voice provider 'openai' speech failed")
