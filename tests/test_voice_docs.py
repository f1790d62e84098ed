"""docs/voice.md's examples run as written: the config file under ``treadle serve``, the
``speak``/``listen`` commands, the Converse program, and the remote voice providers in TypeScript
(a real Node process) and Python (a real Python process)."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import tempfile
import wave
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from tests.conftest import StartApp
from tests.doc_blocks import DEFAULT_ADDRESS, block
from tests.support import Turn
from tests.support.terminal import Terminal
from treadle.v1 import voice_service_pb2 as pb, voice_service_pb2_grpc as pb_grpc

ROOT = Path(__file__).resolve().parent.parent
TS_CLIENT = ROOT / "clients" / "typescript"
DOC = "docs/voice.md"
DOC_BLOCKS = {
    (DOC, "yaml", 0): "test_the_config_the_commands_and_the_conversation",
    (DOC, "sh", 0): "test_the_config_the_commands_and_the_conversation",
    (DOC, "python", 0): "test_the_config_the_commands_and_the_conversation",
    (DOC, "ts", 0): "test_a_typescript_speech_provider_speaks_for_an_agent",
    (DOC, "python", 1): "test_a_python_recognition_provider_listens_for_an_agent",
}
PCM_16K = pb.AudioFormat(encoding=pb.AUDIO_ENCODING_PCM16, sample_rate_hertz=16000)


def in_user_dir(tmp_path: Path) -> Path:
    """A directory like the user's: the repository's ``.venv`` is at ``.venv``."""
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")
    return tmp_path


def test_the_config_the_commands_and_the_conversation(terminal: Terminal, openai_server: Any, tmp_path: Path) -> None:
    fake = openai_server([Turn.say(["It is sunny", " and warm. Take ", "a hat."])])
    here = in_user_dir(tmp_path)
    (here / "agents.yaml").write_text(block(DOC, "yaml"))
    server = terminal.serve([".venv/bin/treadle", "serve", "--config", "agents.yaml"], cwd=here,
                            OPENAI_BASE_URL=fake.base_url)
    speak, listen = block(DOC, "sh").strip().splitlines()
    done = terminal.run(speak, cwd=here)
    assert done.returncode == 0, done.stderr
    with wave.open(str(here / "question.wav")) as question:
        assert question.getframerate() == 22050 and question.getnframes() > 22050  # over a second of speech
    done = terminal.run(listen, cwd=here)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "what is the weather today\n"

    (here / "talk.py").write_text(block(DOC, "python", 0).replace(DEFAULT_ADDRESS, terminal.target))
    done = terminal.run([".venv/bin/python", "talk.py"], cwd=here, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "user: what is the weather today", "assistant: It is sunny and warm.", "assistant: Take a hat."]
    assert fake.requests[0]["messages"][-1] == {"role": "user", "content": "what is the weather today"}
    with wave.open(str(here / "answer.wav")) as answer:
        assert answer.getnframes() > 16000  # the answer, spoken
    assert server.interrupt() == 0


async def speak(stub: pb_grpc.VoiceServiceStub, agent: str, text: str) -> bytes:
    return b"".join([r.audio async for r in stub.Speak(pb.SpeakRequest(agent_id=agent, text=text, format=PCM_16K))])


async def listen(stub: pb_grpc.VoiceServiceStub, agent: str, audio: bytes, phrases: list[str]) -> str:
    async def requests() -> AsyncIterator[pb.ListenRequest]:
        yield pb.ListenRequest(config=pb.ListenConfig(agent_id=agent, format=PCM_16K, phrases=phrases))
        yield pb.ListenRequest(audio=audio)

    [final] = [r async for r in stub.Listen(requests())]
    return final.text


async def start_process(args: list[str], cwd: Path, target: str) -> asyncio.subprocess.Process:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TREADLE_"))}
    return await asyncio.create_subprocess_exec(
        *args, cwd=cwd, env=env | {"TREADLE_TARGET": target}, stdin=subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)


async def stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.kill()
        await proc.wait()


async def test_a_typescript_speech_provider_speaks_for_an_agent(
    start_app: StartApp, openai_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not (TS_CLIENT / "node_modules" / ".bin" / "tsx").exists():
        pytest.fail("clients/typescript/node_modules is missing; run `npm ci --prefix clients/typescript`")
    fake = openai_server([Turn.say("The studio is closed. Come back at nine.")])
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    (tmp_path / "agents.yaml").write_text(block(DOC, "yaml"))
    running = await start_app(setup=lambda app: app.load_agents(tmp_path / "agents.yaml"))
    # The example as a file of a Node project that depends on @treadle/client (this package).
    project = Path(tempfile.mkdtemp(prefix=".voice-doc-", dir=TS_CLIENT))
    (project / "provider.ts").write_text(block(DOC, "ts"))
    node = await start_process(["node", "--import", "tsx", str(project / "provider.ts")], TS_CLIENT, running.target)
    try:
        await running.app.voice_hub.wait_attached("studio-tts", timeout=60)
        async with grpc.aio.insecure_channel(running.target) as channel:
            stub = pb_grpc.VoiceServiceStub(channel)
            speakers = await stub.GetSpeakers(pb.GetSpeakersRequest(agent_id="studio"))
            assert [s.voice_id for s in speakers.speakers] == ["en-us", "en-gb"]
            # The TypeScript process speaks; pocketsphinx (the agent's input) hears it back.
            audio = await speak(stub, "studio", "Please call my sister.")
            assert await listen(stub, "studio", audio, ["please call my sister", "what is the weather today"]) \
                == "please call my sister"

            # The process dies: Speak has nothing to give (UNAVAILABLE naming the provider), while a
            # conversation goes on as text, since the agent's output fails open.
            node.send_signal(signal.SIGKILL)
            await node.wait()
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await speak(stub, "studio", "Hello.")
            assert info.value.code() == grpc.StatusCode.UNAVAILABLE
            assert "voice provider 'studio-tts'" in info.value.details()

            async def turn() -> AsyncIterator[pb.ConverseRequest]:
                yield pb.ConverseRequest(config=pb.ConverseConfig(agent_id="studio", thread_id="t", resource_id="r"))
                yield pb.ConverseRequest(text="Is the studio open?")

            events = [e async for e in stub.Converse(turn())]
            said = [e.transcript.text for e in events if e.HasField("transcript") and e.transcript.role == "assistant"]
            assert said == ["The studio is closed.", "Come back at nine."]
            assert not [e for e in events if e.HasField("audio")]
            [error] = [e.error for e in events if e.HasField("error")]
            assert "voice provider 'studio-tts'" in error.message and "goes on as text" in error.message
    finally:
        await stop(node)
        shutil.rmtree(project, ignore_errors=True)


async def test_a_python_recognition_provider_listens_for_an_agent(start_app: StartApp, tmp_path: Path) -> None:
    from treadle.agents import Agent, VoiceProviderRef, VoiceSettings

    def setup(app: Any) -> None:
        app.add_agent(Agent(id="home", model="openai/gpt-4o-mini", base_url="http://127.0.0.1:9/v1",
                            voice=VoiceSettings(input=VoiceProviderRef("commands"), output=VoiceProviderRef("espeak-ng"))))

    running = await start_app(setup=setup)
    script = tmp_path / "commands.py"
    script.write_text(block(DOC, "python", 1).replace(DEFAULT_ADDRESS, running.target))
    proc = await start_process([str(ROOT / ".venv" / "bin" / "python"), str(script)], tmp_path, running.target)
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 60)
        assert line.decode().strip() == "serving the commands provider"
        async with grpc.aio.insecure_channel(running.target) as channel:
            stub = pb_grpc.VoiceServiceStub(channel)
            audio = await speak(stub, "home", "Stop the music.")
            assert await listen(stub, "home", audio, []) == "stop the music"
    finally:
        await stop(proc)
