"""Voice over gRPC, offline: espeak-ng speaks, pocketsphinx listens, and a conversation runs each
spoken turn through the agent loop (the model is the OpenAI wire fake; nothing leaves the host)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from tests.conftest import RunningApp, StartApp
from tests.support import OpenAIServer, Turn
from treadle.agents import Agent, ProcessorRef, VoiceProviderRef, VoiceSettings
from treadle.core.messages import Message, TextPart
from treadle.v1 import agent_pb2, agent_service_pb2, agent_service_pb2_grpc
from treadle.v1 import voice_service_pb2 as pb, voice_service_pb2_grpc as pb_grpc
from treadle.voice.audio import mulaw_to_pcm, read_wav

PHRASES = ["what is the weather today", "my password is swordfish", "please call my sister"]
OFFLINE = VoiceSettings(input=VoiceProviderRef("pocketsphinx"), output=VoiceProviderRef("espeak-ng"))
PCM16_16K = pb.AudioFormat(encoding=pb.AUDIO_ENCODING_PCM16, sample_rate_hertz=16000)


class PasswordGuard:
    """An input guard: a turn that says a password never reaches the model."""

    id = "password-guard"

    async def process_input(self, args: Any) -> list[Message]:
        for message in args.messages:
            text = " ".join(p.text for p in message.content.parts if isinstance(p, TextPart))
            if "password" in text.lower():
                args.abort("never say a password out loud")
        return args.messages


@pytest.fixture
async def voice(start_app: StartApp) -> AsyncIterator[Callable[..., Any]]:
    channels: list[grpc.aio.Channel] = []

    async def make(setup: Callable[[Any], None] | None = None) -> tuple[RunningApp, pb_grpc.VoiceServiceStub]:
        running = await start_app(setup=setup)
        channel = grpc.aio.insecure_channel(running.target)
        channels.append(channel)
        return running, pb_grpc.VoiceServiceStub(channel)

    yield make
    for channel in channels:
        await channel.close()


def speaker_agent(app: Any) -> None:
    app.add_agent(Agent(id="speaker", model="openai/gpt-4o-mini", base_url="http://127.0.0.1:9/v1", voice=OFFLINE))


async def speak(stub: pb_grpc.VoiceServiceStub, text: str, fmt: pb.AudioFormat, agent: str = "speaker") -> list[pb.SpeakResponse]:
    return [r async for r in stub.Speak(pb.SpeakRequest(agent_id=agent, text=text, format=fmt))]


async def listen(stub: pb_grpc.VoiceServiceStub, audio: bytes, fmt: pb.AudioFormat, *, phrases: list[str],
                 interim: bool = False, agent: str = "speaker") -> list[pb.ListenResponse]:
    async def requests() -> AsyncIterator[pb.ListenRequest]:
        yield pb.ListenRequest(config=pb.ListenConfig(agent_id=agent, format=fmt, phrases=phrases,
                                                      interim_results=interim))
        for at in range(0, len(audio), 3200):  # 100 ms pieces, as a microphone sends them
            yield pb.ListenRequest(audio=audio[at:at + 3200])

    return [r async for r in stub.Listen(requests())]


async def test_speak_a_sentence_then_listen_to_it_and_get_it_back(voice: Any) -> None:
    _, stub = await voice(speaker_agent)
    wav_16k = pb.AudioFormat(encoding=pb.AUDIO_ENCODING_WAV, sample_rate_hertz=16000)
    spoken = await speak(stub, "What is the weather today?", wav_16k)
    audio = b"".join(r.audio for r in spoken)
    pcm, rate = read_wav(audio)
    assert rate == 16000 and len(pcm) > 16000  # more than half a second of speech
    heard = await listen(stub, audio, wav_16k, phrases=PHRASES, interim=True)
    assert heard[-1].is_final and heard[-1].text == "what is the weather today"
    assert [r.is_final for r in heard[:-1]] == [False] * (len(heard) - 1) and len(heard) > 1


async def test_speak_streams_sentence_by_sentence_in_the_format_asked(voice: Any) -> None:
    _, stub = await voice(speaker_agent)
    text = "It is sunny. Take a hat! Back at six?"
    mulaw = await speak(stub, text, pb.AudioFormat(encoding=pb.AUDIO_ENCODING_MULAW, sample_rate_hertz=8000))
    assert [r.text for r in mulaw] == ["It is sunny.", "Take a hat!", "Back at six?"]
    assert {(r.format.encoding, r.format.sample_rate_hertz) for r in mulaw} == {(pb.AUDIO_ENCODING_MULAW, 8000)}
    pcm = await speak(stub, text, pb.AudioFormat(encoding=pb.AUDIO_ENCODING_PCM16))
    assert pcm[0].format.sample_rate_hertz == 22050  # 0 asks for the provider's own rate
    # The same speech: μ-law at 8 kHz is one byte a sample, PCM16 at 22.05 kHz two.
    mulaw_samples = sum(len(r.audio) for r in mulaw)
    pcm_samples = sum(len(r.audio) for r in pcm) // 2
    assert abs(mulaw_samples - pcm_samples * 8000 / 22050) < 30
    decoded = mulaw_to_pcm(mulaw[0].audio)
    assert max(abs(int.from_bytes(decoded[i:i + 2], "little", signed=True)) for i in range(0, len(decoded), 2)) > 1000


async def test_speakers_and_listener(voice: Any) -> None:
    def setup(app: Any) -> None:
        speaker_agent(app)
        app.add_agent(Agent(id="mute-ears", model="openai/gpt-4o-mini", base_url="http://127.0.0.1:9/v1",
                            voice=VoiceSettings(output=VoiceProviderRef("espeak-ng"), speaker="en-us")))

    _, stub = await voice(setup)
    speakers = (await stub.GetSpeakers(pb.GetSpeakersRequest(agent_id="speaker"))).speakers
    assert "en-us" in {s.voice_id for s in speakers}
    assert (await stub.GetListener(pb.GetListenerRequest(agent_id="speaker"))).enabled
    assert not (await stub.GetListener(pb.GetListenerRequest(agent_id="mute-ears"))).enabled
    spoken = await speak(stub, "Hello.", pb.AudioFormat(), agent="mute-ears")
    assert spoken[0].audio[:4] == b"RIFF"  # unspecified output is a WAV file


# --- Converse: the agent loop between speech in and speech out -------------------------------


class Talk:
    """A Converse call driven step by step: send, then read events until a turn ends."""

    def __init__(self, stub: pb_grpc.VoiceServiceStub, config: pb.ConverseConfig) -> None:
        self._out: asyncio.Queue[pb.ConverseRequest | None] = asyncio.Queue()
        self._out.put_nowait(pb.ConverseRequest(config=config))
        self.call = stub.Converse(self._requests())
        self.events: list[pb.ConverseResponse] = []

    async def _requests(self) -> AsyncIterator[pb.ConverseRequest]:
        while (request := await self._out.get()) is not None:
            yield request

    def say_audio(self, pcm: bytes) -> None:
        for at in range(0, len(pcm), 3200):
            self._out.put_nowait(pb.ConverseRequest(audio=pcm[at:at + 3200]))
        self._out.put_nowait(pb.ConverseRequest(end_of_turn=pb.EndOfTurn()))

    async def turn(self) -> list[pb.ConverseResponse]:
        """Events up to and including the next turn's end."""
        got: list[pb.ConverseResponse] = []
        async with asyncio.timeout(60):
            while True:
                event = await self.call.read()
                assert event is not grpc.aio.EOF, f"the call ended early after {got}"
                got.append(event)
                if event.WhichOneof("event") == "turn" and event.turn.kind == pb.TURN_EVENT_KIND_ENDED:
                    self.events += got
                    return got

    async def close(self) -> None:
        self._out.put_nowait(None)
        async with asyncio.timeout(30):
            assert await self.call.read() is grpc.aio.EOF


def of(events: list[pb.ConverseResponse], kind: str) -> list[Any]:
    return [getattr(e, kind) for e in events if e.WhichOneof("event") == kind]


async def spoken_pcm(stub: pb_grpc.VoiceServiceStub, text: str, agent: str) -> bytes:
    return b"".join(r.audio for r in await speak(stub, text, PCM16_16K, agent))


async def test_a_spoken_question_reaches_the_model_and_the_answer_comes_back_as_audio_and_text(
    voice: Any, openai_server: Any
) -> None:
    model: OpenAIServer = openai_server([Turn.say(["It is sunny", ". Take ", "a hat."], pace=0.3)])

    def setup(app: Any) -> None:
        app.add_processor(PasswordGuard())
        app.add_agent(Agent(id="concierge", model="openai/gpt-4o-mini", base_url=model.base_url, voice=OFFLINE,
                            input_processors=[ProcessorRef("password-guard")]))

    running, stub = await voice(setup)
    question = await spoken_pcm(stub, "What is the weather today?", "concierge")
    talk = Talk(stub, pb.ConverseConfig(agent_id="concierge", thread_id="kitchen", resource_id="ada",
                                        input_format=PCM16_16K, phrases=PHRASES))
    talk.say_audio(question)
    first = await talk.turn()

    # The question was heard and reached the model as the user's message.
    users = [t for t in of(first, "transcript") if t.role == "user" and t.is_final]
    assert [t.text for t in users] == ["what is the weather today"]
    assert model.requests[0]["messages"][-1] == {"role": "user", "content": "what is the weather today"}
    # The answer came back as the run's chunks, as sentences, and as audio of each sentence.
    chunk_types = [c.WhichOneof("chunk") for c in of(first, "chunk")]
    assert chunk_types[0] == "start" and chunk_types[-1] == "finish" and "text_delta" in chunk_types
    said = [t.text for t in of(first, "transcript") if t.role == "assistant"]
    assert said == ["It is sunny.", "Take a hat."]
    audio = of(first, "audio")
    assert {a.text for a in audio} == set(said) and all(a.format.encoding == pb.AUDIO_ENCODING_PCM16 for a in audio)
    # Speech started at the first sentence, while the model was still writing the second.
    kinds = [e.WhichOneof("event") + (":" + e.chunk.WhichOneof("chunk") if e.WhichOneof("event") == "chunk" else "")
             for e in first]
    assert kinds.index("audio") < kinds.index("chunk:finish")
    assert of(first, "turn")[-1].run_id == first[-1].turn.run_id != ""

    # The next turn says a password: the input guard trips, and the model never hears it.
    talk.say_audio(await spoken_pcm(stub, "My password is swordfish.", "concierge"))
    second = await talk.turn()
    assert [t.text for t in of(second, "transcript") if t.role == "user" and t.is_final] == ["my password is swordfish"]
    [tripwire] = [c for c in of(second, "chunk") if c.WhichOneof("chunk") == "tripwire"]
    assert tripwire.tripwire.reason == "never say a password out loud"
    assert tripwire.tripwire.processor_id == "password-guard"
    assert len(model.requests) == 1 and not of(second, "audio")
    await talk.close()

    # Both turns are on the memory thread, like any Stream call on it.
    channel = grpc.aio.insecure_channel(running.target)
    try:
        from treadle.v1 import thread_service_pb2, thread_service_pb2_grpc

        threads = thread_service_pb2_grpc.ThreadServiceStub(channel)
        listed = await threads.ListMessages(thread_service_pb2.ListMessagesRequest(resource_id="ada", thread_id="kitchen"))
        texts = [json_format.MessageToDict(m) for m in listed.messages]
        assert any("what is the weather today" in str(t) for t in texts)
        assert any("Take a hat." in str(t) for t in texts)
    finally:
        await channel.close()


async def test_a_typed_turn_and_a_spoken_barge_in(voice: Any, openai_server: Any) -> None:
    model: OpenAIServer = openai_server([
        Turn.say(["One. ", "Two. ", "Three. ", "Four. ", "Five. ", "Six."], pace=0.5),
        Turn.say("Sure."),
    ])

    def setup(app: Any) -> None:
        app.add_agent(Agent(id="chatty", model="openai/gpt-4o-mini", base_url=model.base_url, voice=OFFLINE))

    _, stub = await voice(setup)
    spoken = await spoken_pcm(stub, "Please call my sister.", "chatty")
    talk = Talk(stub, pb.ConverseConfig(agent_id="chatty", thread_id="t", resource_id="r", barge_in=True,
                                        input_format=PCM16_16K, phrases=PHRASES,
                                        output_format=pb.AudioFormat(encoding=pb.AUDIO_ENCODING_MULAW,
                                                                     sample_rate_hertz=8000)))
    talk._out.put_nowait(pb.ConverseRequest(text="Count to six."))
    got: list[pb.ConverseResponse] = []
    async with asyncio.timeout(60):
        while not of(got, "audio"):
            got.append(await talk.call.read())
    # A microphone's silence while the agent speaks is no barge-in: the answer goes on.
    talk._out.put_nowait(pb.ConverseRequest(audio=bytes(3200)))
    async with asyncio.timeout(60):
        while True:
            got.append(event := await talk.call.read())
            if event.WhichOneof("event") in ("transcript", "barge_in", "turn"):
                break
    assert event.WhichOneof("event") == "transcript" and event.transcript.role == "assistant"
    talk.say_audio(spoken)  # talking over the answer
    first = got + await talk.turn()
    assert [b.turn for b in of(first, "barge_in")] == [1]
    assert "Six." not in [t.text for t in of(first, "transcript")]
    second = await talk.turn()
    assert [t.text for t in of(second, "transcript") if t.role == "assistant"] == ["Sure."]
    assert of(second, "audio")[0].format.encoding == pb.AUDIO_ENCODING_MULAW
    await talk.close()
    assert model.requests[1]["messages"][-1]["content"] == "please call my sister"


# --- bad input ---------------------------------------------------------------------------------


async def _status(call: Any) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        if hasattr(call, "__aiter__"):
            async for _ in call:
                pass
        else:
            await call
    return info.value


async def test_bad_input_gets_a_status_that_says_what_is_wrong(voice: Any) -> None:
    def setup(app: Any) -> None:
        speaker_agent(app)
        app.add_agent(Agent(id="silent", model="openai/gpt-4o-mini", base_url="http://127.0.0.1:9/v1"))
        app.add_agent(Agent(id="remote-voiced", model="openai/gpt-4o-mini", base_url="http://127.0.0.1:9/v1",
                            voice=VoiceSettings(output=VoiceProviderRef("studio-tts"))))

    running, stub = await voice(setup)
    cases = [
        (stub.Speak(pb.SpeakRequest(agent_id="nobody", text="hi")), grpc.StatusCode.NOT_FOUND, "nobody"),
        (stub.Speak(pb.SpeakRequest(agent_id="silent", text="hi")), grpc.StatusCode.FAILED_PRECONDITION, "no voice"),
        (stub.Speak(pb.SpeakRequest(agent_id="speaker", text="  ")), grpc.StatusCode.INVALID_ARGUMENT, "text"),
        (stub.Speak(pb.SpeakRequest(agent_id="speaker", text="hi", format=pb.AudioFormat(sample_rate_hertz=1000))),
         grpc.StatusCode.INVALID_ARGUMENT, "format.sample_rate_hertz"),
        (stub.Speak(pb.SpeakRequest(agent_id="speaker", text="hi", speaker="no such voice!")),
         grpc.StatusCode.INVALID_ARGUMENT, "speaker"),
        (stub.Speak(pb.SpeakRequest(agent_id="remote-voiced", text="hi")), grpc.StatusCode.UNAVAILABLE,
         "'studio-tts' is not attached"),
        (stub.GetListener(pb.GetListenerRequest()), grpc.StatusCode.INVALID_ARGUMENT, "agent_id"),
    ]
    for call, code, words in cases:
        error = await _status(call)
        assert error.code() == code and words in error.details(), (code, error.details())

    async def listen_with(*messages: pb.ListenRequest) -> grpc.aio.AioRpcError:
        async def requests() -> AsyncIterator[pb.ListenRequest]:
            for m in messages:
                yield m
        return await _status(stub.Listen(requests()))

    error = await listen_with(pb.ListenRequest(audio=b"\0\0"))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT and "config" in error.details()
    wav = pb.AudioFormat(encoding=pb.AUDIO_ENCODING_WAV)
    error = await listen_with(pb.ListenRequest(config=pb.ListenConfig(agent_id="speaker", format=wav)),
                              pb.ListenRequest(audio=b"this is not a wav file at all"))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT and "not a WAV file" in error.details()
    error = await listen_with(pb.ListenRequest(config=pb.ListenConfig(agent_id="speaker", phrases=["?!"])))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT and "phrases" in error.details()

    async def converse_with(config: pb.ConverseConfig) -> grpc.aio.AioRpcError:
        async def requests() -> AsyncIterator[pb.ConverseRequest]:
            yield pb.ConverseRequest(config=config)
        return await _status(stub.Converse(requests()))

    error = await converse_with(pb.ConverseConfig(agent_id="speaker"))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT and "thread_id" in error.details()
    error = await converse_with(pb.ConverseConfig(agent_id="speaker", thread_id="t", resource_id="r",
                                                  output_format=pb.AudioFormat(encoding=pb.AUDIO_ENCODING_WAV)))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT and "output_format" in error.details()

    # An agent whose voice cannot work is refused whole, and nothing is stored.
    channel = grpc.aio.insecure_channel(running.target)
    agents = agent_service_pb2_grpc.AgentServiceStub(channel)
    try:
        for voice_json, words in [
            ({"output": {"id": "pocketsphinx"}}, "agent.voice.output: the built-in provider 'pocketsphinx' does not "
                                                 "do text to speech"),
            ({"realtime": {"id": "espeak-ng"}}, "does not do speech to text"),
            ({"output": {"id": "espeak-ng", "options": {"volume": 3}}}, "unknown espeak-ng option 'volume'"),
            ({"output": {"id": "espeak-ng", "options": {"rate": 9000}}}, "agent.voice.output.options.rate"),
            ({"input": {"id": "my-stt", "options": {"x": 1}}}, "only for built-in providers"),
            ({"speaker": "en-us"}, "name an input, output or realtime provider"),
            ({"output": {}}, "agent.voice.output.id is required"),
        ]:
            agent = json_format.ParseDict({"id": "voiced", "model": "openai/gpt-4o-mini", "voice": voice_json},
                                          agent_pb2.Agent())
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await agents.CreateAgent(agent_service_pb2.CreateAgentRequest(agent=agent))
            assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT and words in info.value.details()
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await agents.GetAgent(agent_service_pb2.GetAgentRequest(id="voiced"))
            assert info.value.code() == grpc.StatusCode.NOT_FOUND
        good = json_format.ParseDict({"id": "voiced", "model": "openai/gpt-4o-mini", "voice": {
            "input": {"id": "pocketsphinx"}, "output": {"id": "espeak-ng", "options": {"rate": 150}},
            "speaker": "en-us"}}, agent_pb2.Agent())
        created = (await agents.CreateAgent(agent_service_pb2.CreateAgentRequest(agent=good))).agent
        assert json_format.MessageToDict(created.voice) == {
            "input": {"id": "pocketsphinx"}, "output": {"id": "espeak-ng", "options": {"rate": 150.0}},
            "speaker": "en-us"}
    finally:
        await channel.close()


def test_a_config_file_with_a_voice_that_cannot_work_names_the_agent_and_the_field(tmp_path: Any) -> None:
    from treadle.app import TreadleApp
    from treadle.config import AgentFileError, Settings

    path = tmp_path / "agents.yaml"
    path.write_text("agents:\n  - id: ok\n    model: openai/gpt-4o-mini\n    voice: {output: {id: espeak-ng}}\n"
                    "  - id: deaf\n    model: openai/gpt-4o-mini\n    voice: {input: {id: espeak-ng}}\n")
    app = TreadleApp(Settings(listen="127.0.0.1:0", example_agent=False, data_dir=tmp_path), env={})
    with pytest.raises(AgentFileError) as info:
        app.load_agents(path)
    assert str(info.value) == (f"{path}: agents[1] ('deaf'): agent.voice.input: the built-in provider 'espeak-ng' "
                               "does not do speech to text")
    assert app.registry.list_agents() == []  # all or nothing


async def test_a_conversation_turn_is_traced_like_any_run(tmp_path: Any) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from treadle.app import TreadleApp
    from treadle.config import Settings
    from treadle.testing import ScriptedModel, ScriptedModels, text_response

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    app = TreadleApp(Settings(listen="127.0.0.1:0", example_agent=False, data_dir=tmp_path), env={},
                     tracer_provider=provider)
    app.loop.models = ScriptedModels(ScriptedModel([text_response("Hello there.")]))  # type: ignore[assignment]
    app.add_agent(Agent(id="traced", model="openai/gpt-4o-mini", voice=OFFLINE))
    port = await app.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            talk = Talk(pb_grpc.VoiceServiceStub(channel), pb.ConverseConfig(agent_id="traced", thread_id="t",
                                                                             resource_id="r"))
            talk._out.put_nowait(pb.ConverseRequest(text="Hi."))
            events = await talk.turn()
            await talk.close()
    finally:
        await app.stop(0)
    run_id = events[-1].turn.run_id
    [span] = [s for s in exporter.get_finished_spans() if s.name == "invoke_agent traced"]
    assert span.attributes is not None and run_id in str(dict(span.attributes).values())
    assert any(s.name.startswith("chat ") and s.context.trace_id == span.context.trace_id
               for s in exporter.get_finished_spans())


async def test_a_spoken_turn_may_call_tools_and_only_the_answer_is_spoken(voice: Any, openai_server: Any) -> None:
    from treadle.core.tool import Tool

    model: OpenAIServer = openai_server([Turn.call("call_contact", {"name": "sister"}), Turn.say("Calling her now.")])
    calls: list[Any] = []

    async def call_contact(args: Any, ctx: Any) -> dict[str, str]:
        calls.append(args)
        return {"status": "ringing"}

    def setup(app: Any) -> None:
        app.add_tool(Tool("call_contact", call_contact, "Call a contact by name",
                          {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}))
        app.add_agent(Agent(id="phone", model="openai/gpt-4o-mini", base_url=model.base_url, voice=OFFLINE,
                            tools=["call_contact"]))

    _, stub = await voice(setup)
    talk = Talk(stub, pb.ConverseConfig(agent_id="phone", thread_id="p", resource_id="r", input_format=PCM16_16K,
                                        phrases=PHRASES))
    talk.say_audio(await spoken_pcm(stub, "Please call my sister.", "phone"))
    events = await talk.turn()
    await talk.close()
    assert calls == [{"name": "sister"}]
    kinds = [c.WhichOneof("chunk") for c in of(events, "chunk")]
    assert "tool_call" in kinds and "tool_result" in kinds
    assert [t.text for t in of(events, "transcript") if t.is_final] == ["please call my sister", "Calling her now."]
    assert {a.text for a in of(events, "audio")} == {"Calling her now."}


async def test_a_message_sent_to_the_thread_reaches_the_turn_being_answered(voice: Any, openai_server: Any) -> None:
    from treadle.v1 import signal_pb2, thread_service_pb2_grpc

    model: OpenAIServer = openai_server([
        Turn.say(["Let me ", "think. ", "Hmm."], pace=0.5), Turn.say("Tea, then."),
    ])

    def setup(app: Any) -> None:
        app.add_agent(Agent(id="barista", model="openai/gpt-4o-mini", base_url=model.base_url, voice=OFFLINE))

    running, stub = await voice(setup)
    talk = Talk(stub, pb.ConverseConfig(agent_id="barista", thread_id="cafe", resource_id="r"))
    talk._out.put_nowait(pb.ConverseRequest(text="Coffee or tea?"))
    got: list[pb.ConverseResponse] = []
    async with asyncio.timeout(60):
        while not of(got, "audio"):
            got.append(await talk.call.read())
    async with grpc.aio.insecure_channel(running.target) as channel:
        threads = thread_service_pb2_grpc.ThreadServiceStub(channel)
        await threads.SendMessage(signal_pb2.SendMessageRequest(
            agent_id="barista", resource_id="r", thread_id="cafe",
            message=signal_pb2.SignalMessage(contents="Make it tea.")))
    events = got + await talk.turn()
    await talk.close()
    # The run took the message in at its next step and answered it, in the same turn, spoken.
    assert "Make it tea." in str(model.requests[1]["messages"])
    assert [t.text for t in of(events, "transcript") if t.role == "assistant"][-1] == "Tea, then."
    assert "Tea, then." in {a.text for a in of(events, "audio")}
    assert len(of(events, "turn")) == 2  # one turn: started, ended
