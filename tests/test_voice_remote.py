"""Remote voice providers over ``VoiceProviderService.Attach`` (served with ``treadle_client.serve_voices``):
the handshake's refusals, who may attach which id, timeouts, provider errors, replicas, and the
failure policies in a conversation."""

from __future__ import annotations

import asyncio
import math
import array
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml

from tests.conftest import StartApp
from treadle.agents import Agent, VoiceProviderRef, VoiceSettings
from treadle.config.auth import token_sha256
from treadle.testing import ScriptedModel, ScriptedModels, text_response
from treadle.v1 import voice_service_pb2 as pb, voice_service_pb2_grpc as pb_grpc
from treadle_client import AttachError, serve_voices

PCM_16K = pb.AudioFormat(encoding=pb.AUDIO_ENCODING_PCM16, sample_rate_hertz=16000)


def tone(seconds: float, rate: int = 16000) -> bytes:
    return array.array("h", (int(6000 * math.sin(2 * math.pi * 330 * i / rate))
                             for i in range(int(seconds * rate)))).tobytes()


class Tone:
    """Speaks a tone whose length grows with the text; hears the length of what it got."""

    sample_rate = 16000
    speakers = ["low", ("high", {"pitch": "high"})]

    def __init__(self, provider_id: str = "tone") -> None:
        self.id = provider_id
        self.spoken: list[tuple[str, str]] = []

    async def speak(self, text: str, speaker: str) -> AsyncIterator[bytes]:
        self.spoken.append((text, speaker))
        yield tone(0.01 * len(text))
        yield tone(0.01)

    def listen(self, audio: bytes, phrases: list[str]) -> str:
        return f"{len(audio) // 2} samples; {','.join(phrases)}"


class Broken:
    id = "broken"

    def __init__(self) -> None:
        self.hang = asyncio.Event()

    async def speak(self, text: str, speaker: str) -> bytes:
        if text.startswith("Hang"):
            await self.hang.wait()
        raise RuntimeError("the synthesiser is out of order")

    def listen(self, audio: bytes, phrases: list[str]) -> str:
        raise RuntimeError("the microphone model is missing")


def voiced(agent_id: str, **voice: Any) -> Agent:
    return Agent(id=agent_id, model="openai/gpt-4o-mini", voice=VoiceSettings(**voice))


async def speak(stub: pb_grpc.VoiceServiceStub, agent: str, text: str, speaker: str = "") -> list[pb.SpeakResponse]:
    return [r async for r in stub.Speak(pb.SpeakRequest(agent_id=agent, text=text, speaker=speaker, format=PCM_16K))]


async def test_handshakes_that_are_refused_say_why(start_app: StartApp) -> None:
    running = await start_app()
    cases = [
        (pb.VoiceProviderServiceAttachRequest(audio=pb.SynthesizedAudio()), grpc.StatusCode.INVALID_ARGUMENT,
         "first message on a voice stream must be a handshake"),
        (pb.VoiceProviderHandshake(protocol_versions=[1]), grpc.StatusCode.INVALID_ARGUMENT, "declares no providers"),
        (pb.VoiceProviderHandshake(protocol_versions=[9], providers=[{"id": "x", "text_to_speech": True}]),
         grpc.StatusCode.FAILED_PRECONDITION, "no common protocol version"),
        (pb.VoiceProviderHandshake(protocol_versions=[1], providers=[{"id": "bad id", "text_to_speech": True}]),
         grpc.StatusCode.INVALID_ARGUMENT, "providers[0].id 'bad id' is invalid"),
        (pb.VoiceProviderHandshake(protocol_versions=[1], providers=[{"id": "espeak-ng", "text_to_speech": True}]),
         grpc.StatusCode.INVALID_ARGUMENT, "is a built-in provider's id"),
        (pb.VoiceProviderHandshake(protocol_versions=[1], providers=[{"id": "x", "text_to_speech": True},
                                                                       {"id": "x", "speech_to_text": True}]),
         grpc.StatusCode.INVALID_ARGUMENT, "declared twice"),
        (pb.VoiceProviderHandshake(protocol_versions=[1], providers=[{"id": "x"}]),
         grpc.StatusCode.INVALID_ARGUMENT, "does neither speech_to_text nor text_to_speech"),
        (pb.VoiceProviderHandshake(protocol_versions=[1], providers=[{"id": "x", "text_to_speech": True,
                                                                       "sample_rate_hertz": 100}]),
         grpc.StatusCode.INVALID_ARGUMENT, "providers[0].sample_rate_hertz must be between 8000 and 48000"),
    ]
    async with grpc.aio.insecure_channel(running.target) as channel:
        stub = pb_grpc.VoiceProviderServiceStub(channel)
        for first, code, words in cases:
            message = first if isinstance(first, pb.VoiceProviderServiceAttachRequest) \
                else pb.VoiceProviderServiceAttachRequest(handshake=first)

            async def requests() -> AsyncIterator[pb.VoiceProviderServiceAttachRequest]:
                yield message
                await asyncio.Event().wait()  # a process keeps its side open

            with pytest.raises(grpc.aio.AioRpcError) as info:
                async for _ in stub.Attach(requests()):
                    pass
            assert info.value.code() == code and words in info.value.details(), info.value.details()
    assert running.app.voice_hub.replicas("x") == []


async def test_a_remote_provider_speaks_and_listens_with_replicas(start_app: StartApp) -> None:
    running = await start_app(setup=lambda app: app.add_agent(voiced(
        "toned", realtime=VoiceProviderRef("tone"), speaker="low")))
    first, second = Tone(), Tone()
    async with await serve_voices([first], running.target) as a, await serve_voices([second], running.target) as b:
        await a.ready(30)
        await b.ready(30)
        async with grpc.aio.insecure_channel(running.target) as channel:
            stub = pb_grpc.VoiceServiceStub(channel)
            speakers = (await stub.GetSpeakers(pb.GetSpeakersRequest(agent_id="toned"))).speakers
            assert [(s.voice_id, dict(s.metadata)) for s in speakers] == [("low", {}), ("high", {"pitch": "high"})]
            assert (await stub.GetListener(pb.GetListenerRequest(agent_id="toned"))).enabled  # realtime listens
            for text in ("One.", "Two.", "Three.", "Four."):
                got = await speak(stub, "toned", text, speaker="high" if text == "Four." else "")
                assert sum(len(r.audio) for r in got) == len(tone(0.01 * len(text))) + len(tone(0.01))
            # The calls were shared between the replicas, each with the agent's default speaker
            # unless the call named one.
            assert first.spoken and second.spoken
            assert sorted(first.spoken + second.spoken) == [
                ("Four.", "high"), ("One.", "low"), ("Three.", "low"), ("Two.", "low")]

            async def requests() -> AsyncIterator[pb.ListenRequest]:
                yield pb.ListenRequest(config=pb.ListenConfig(
                    agent_id="toned", phrases=["stop"], format=pb.AudioFormat(
                        encoding=pb.AUDIO_ENCODING_MULAW, sample_rate_hertz=8000)))
                yield pb.ListenRequest(audio=bytes(4000))
                yield pb.ListenRequest(audio=bytes(4000))

            # One second of μ-law at 8 kHz reaches the provider as one second at its 16 kHz.
            heard = [r async for r in stub.Listen(requests())]
            assert [(r.text, r.is_final) for r in heard] == [("16000 samples; stop", True)]
        await a.close()
        async with grpc.aio.insecure_channel(running.target) as channel:  # the other replica serves on
            await running.app.voice_hub.wait_attached("tone", 10)
            assert await speak(pb_grpc.VoiceServiceStub(channel), "toned", "Five.")


async def test_provider_errors_timeouts_and_the_failure_policies(start_app: StartApp) -> None:
    model = ScriptedModel([text_response("Fine. Thanks."), text_response("Fine. Thanks."), text_response("Good.")])

    def setup(app: Any) -> None:
        app.loop.models = ScriptedModels(model)
        app.add_agent(voiced("closed", input=VoiceProviderRef("broken"), output=VoiceProviderRef("broken")))
        app.add_agent(voiced("open", output=VoiceProviderRef("broken", failure_policy="fail_open")))
        app.add_agent(voiced("listen-only-tone", output=VoiceProviderRef("tone-stt")))
        app.add_agent(voiced("hard-of-hearing", input=VoiceProviderRef("gone-stt", failure_policy="fail_open")))

    running = await start_app(setup=setup)
    running.app.voice_hub.timeout = 1.0
    broken = Broken()

    class Ears:
        id = "tone-stt"

        def listen(self, audio: bytes, phrases: list[str]) -> str:
            return ""

    async with await serve_voices([broken, Ears()], running.target) as attachment:
        await attachment.ready(30)
        async with grpc.aio.insecure_channel(running.target) as channel:
            stub = pb_grpc.VoiceServiceStub(channel)
            for agent, text, words in [
                ("closed", "Hello.", "voice provider 'broken' failed: the synthesiser is out of order"),
                ("closed", "Hang on.", "voice provider 'broken' did not answer within 1s"),
                ("listen-only-tone", "Hello.", "voice provider 'tone-stt' does not do text to speech"),
            ]:
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    await speak(stub, agent, text)
                assert info.value.code() == grpc.StatusCode.UNAVAILABLE and info.value.details() == words

            async def listen() -> AsyncIterator[pb.ListenRequest]:
                yield pb.ListenRequest(config=pb.ListenConfig(agent_id="closed", format=PCM_16K))
                yield pb.ListenRequest(audio=tone(0.2))

            with pytest.raises(grpc.aio.AioRpcError) as info:
                async for _ in stub.Listen(listen()):
                    pass
            assert info.value.code() == grpc.StatusCode.UNAVAILABLE
            assert info.value.details() == "voice provider 'broken' failed: the microphone model is missing"

            async def turn(agent: str) -> AsyncIterator[pb.ConverseRequest]:
                yield pb.ConverseRequest(config=pb.ConverseConfig(agent_id=agent, thread_id=agent, resource_id="r"))
                yield pb.ConverseRequest(text="How are you?")

            # Fail closed: the conversation ends, naming the provider.
            with pytest.raises(grpc.aio.AioRpcError) as info:
                async for _ in stub.Converse(turn("closed")):
                    pass
            assert info.value.code() == grpc.StatusCode.UNAVAILABLE and "'broken' failed" in info.value.details()
            # Fail open: the answer comes as text, with one error event saying speech stopped.
            events = [e async for e in stub.Converse(turn("open"))]
            said = [e.transcript.text for e in events if e.HasField("transcript") and e.transcript.role == "assistant"]
            assert said == ["Fine.", "Thanks."]
            assert len([e for e in events if e.HasField("error")]) == 1
            assert events[-1].turn.kind == pb.TURN_EVENT_KIND_ENDED

            # A listener that fails open: spoken turns are said to be unheard, once; text turns go on.
            async def spoken_then_typed() -> AsyncIterator[pb.ConverseRequest]:
                yield pb.ConverseRequest(config=pb.ConverseConfig(agent_id="hard-of-hearing", thread_id="h",
                                                                  resource_id="r", input_format=PCM_16K))
                for _ in range(3):
                    yield pb.ConverseRequest(audio=tone(0.1))
                yield pb.ConverseRequest(end_of_turn=pb.EndOfTurn())
                yield pb.ConverseRequest(text="How are you?")

            events = [e async for e in stub.Converse(spoken_then_typed())]
            [error] = [e.error.message for e in events if e.HasField("error")]
            assert error == "voice provider 'gone-stt' is not attached; send text turns"
            assert [e.transcript.text for e in events if e.HasField("transcript") and e.transcript.role == "user"] \
                == ["How are you?"]
    broken.hang.set()


async def test_who_may_attach_which_voice_provider(start_app: StartApp, tmp_path: Path) -> None:
    tokens = {"voice-team": "tok-voice", "rival": "tok-rival", "web": "tok-web"}
    config = {"auth": {"credentials": [
        {"id": "voice-team", "tokenSha256": token_sha256(tokens["voice-team"]), "voices": ["studio-tts"]},
        {"id": "rival", "tokenSha256": token_sha256(tokens["rival"]), "voices": ["*"]},
        {"id": "web", "tokenSha256": token_sha256(tokens["web"]), "agents": ["public"]},
    ]}}
    path = tmp_path / "server.yaml"
    path.write_text(yaml.safe_dump(config))

    def setup(app: Any) -> None:
        app.add_agent(voiced("public", output=VoiceProviderRef("espeak-ng")))
        app.add_agent(voiced("private", output=VoiceProviderRef("espeak-ng")))

    running = await start_app(config_file=path, setup=setup)
    target = running.target

    async def refused(provider_id: str, who: str) -> AttachError:
        attachment = await serve_voices([Tone(provider_id)], target, token=tokens[who])
        try:
            with pytest.raises(AttachError) as info:
                await attachment.ready(30)
            return info.value
        finally:
            await attachment.close()

    error = await refused("studio-tts", "web")
    assert error.code == grpc.StatusCode.PERMISSION_DENIED
    assert "credential 'web' may not use voice provider id 'studio-tts'" in str(error)
    # Named exactly for voice-team: no wildcard takes it, even while voice-team is away.
    error = await refused("studio-tts", "rival")
    assert error.code == grpc.StatusCode.PERMISSION_DENIED and "is named for credential 'voice-team'" in str(error)
    async with await serve_voices([Tone("studio-tts")], target, token=tokens["voice-team"]) as owned:
        await owned.ready(30)
        async with await serve_voices([Tone("backup-tts")], target, token=tokens["rival"]) as rival:
            await rival.ready(30)
            error = await refused("backup-tts", "voice-team")  # voice-team's scope does not have it
            assert error.code == grpc.StatusCode.PERMISSION_DENIED

    async with grpc.aio.insecure_channel(target) as channel:
        stub = pb_grpc.VoiceServiceStub(channel)
        web = (("authorization", f"Bearer {tokens['web']}"),)
        assert [r async for r in stub.Speak(pb.SpeakRequest(agent_id="public", text="Hi."), metadata=web)]
        with pytest.raises(grpc.aio.AioRpcError) as info:
            async for _ in stub.Speak(pb.SpeakRequest(agent_id="private", text="Hi."), metadata=web):
                pass
        assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert "may not use agent 'private'" in info.value.details()
        with pytest.raises(grpc.aio.AioRpcError) as info:
            async for _ in stub.Speak(pb.SpeakRequest(agent_id="public", text="Hi.")):
                pass
        assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
