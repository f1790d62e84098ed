"""Voice latency on this machine: time to first audio of a spoken answer, and Listen's real-time factor.

    .venv/bin/python bench/voice.py [--rounds N]

One server in this process; its agent answers on an in-process scripted model (no provider I/O
blurs the numbers) with a three-sentence answer, and speaks with espeak-ng.

- ``Converse``: a typed turn in; the time to the first ``audio`` event (speech starts at the
  answer's first sentence) against the time to the last (the whole answer spoken), and against
  synthesising the whole answer in one piece before sending anything (what a pipeline without
  sentence streaming does before its first byte). Twice: with the model's answer there at once,
  and written at 20 words a second, as a hosted model streams it (``--words-per-second``).
- ``Speak`` of the same text: the first response against the whole stream.
- ``Listen``: about five seconds of speech (the answer, spoken by espeak-ng, at 16 kHz) sent as
  fast as the stream takes it, in 100 ms pieces; real-time factor = time to the final transcript /
  audio duration (below 1 is faster than real time), with a grammar of phrases and open speech.

Each line prints medians over ``--rounds`` rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from treadle.agents import Agent, VoiceProviderRef, VoiceSettings  # noqa: E402
from treadle.app import TreadleApp  # noqa: E402
from treadle.config import Settings  # noqa: E402
from treadle.core.chunks import Chunk  # noqa: E402
from treadle.testing import ScriptedModel, ScriptedModels, text_response  # noqa: E402
from treadle.v1 import voice_service_pb2 as pb, voice_service_pb2_grpc as pb_grpc  # noqa: E402
from treadle.voice.offline import EspeakSession  # noqa: E402

ANSWER = "It is sunny and warm in the city today. Take a hat if you go out at noon. It will rain after six."
PHRASES = ["it is sunny and warm in the city today", "take a hat if you go out at noon", "it will rain after six"]
PCM_16K = pb.AudioFormat(encoding=pb.AUDIO_ENCODING_PCM16, sample_rate_hertz=16000)


class PacedModel(ScriptedModel):
    """The scripted model, one word every ``1/rate`` seconds, as a streaming provider writes."""

    def __init__(self, rate: float) -> None:
        super().__init__()
        self.rate = rate

    async def stream(self, request: Any) -> AsyncIterator[Chunk]:
        async for chunk in super().stream(request):
            if chunk.type == "text-delta":
                await asyncio.sleep(1 / self.rate)
            yield chunk


async def converse_once(stub: pb_grpc.VoiceServiceStub, turn: int) -> tuple[float, float]:
    async def requests() -> AsyncIterator[pb.ConverseRequest]:
        yield pb.ConverseRequest(config=pb.ConverseConfig(agent_id="bench", thread_id=f"t{turn}", resource_id="r"))
        yield pb.ConverseRequest(text="What is the weather?")

    start = time.perf_counter()
    first = last = 0.0
    async for event in stub.Converse(requests()):
        if event.HasField("audio"):
            last = time.perf_counter() - start
            first = first or last
    return first, last


async def speak_once(stub: pb_grpc.VoiceServiceStub) -> tuple[float, float, bytes]:
    start = time.perf_counter()
    first, audio = 0.0, bytearray()
    async for response in stub.Speak(pb.SpeakRequest(agent_id="bench", text=ANSWER, format=PCM_16K)):
        first = first or time.perf_counter() - start
        audio += response.audio
    return first, time.perf_counter() - start, bytes(audio)


async def whole_once() -> float:
    start = time.perf_counter()
    async for _ in EspeakSession().synthesize(ANSWER):
        pass
    return time.perf_counter() - start


async def listen_once(stub: pb_grpc.VoiceServiceStub, audio: bytes, phrases: list[str]) -> tuple[float, str]:
    async def requests() -> AsyncIterator[pb.ListenRequest]:
        yield pb.ListenRequest(config=pb.ListenConfig(agent_id="bench", format=PCM_16K, phrases=phrases))
        for at in range(0, len(audio), 3200):
            yield pb.ListenRequest(audio=audio[at:at + 3200])

    start = time.perf_counter()
    text = ""
    async for response in stub.Listen(requests()):
        text = response.text
    return time.perf_counter() - start, text


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:7.0f} ms"


async def main(rounds: int, rate: float) -> None:
    logging.disable(logging.WARNING)
    model = PacedModel(rate)
    with tempfile.TemporaryDirectory() as data:
        app = TreadleApp(Settings(listen="127.0.0.1:0", example_agent=False, data_dir=Path(data)), env={})
        app.loop.models = ScriptedModels(model)  # type: ignore[assignment]
        app.add_agent(Agent(id="bench", model="openai/bench", voice=VoiceSettings(
            input=VoiceProviderRef("pocketsphinx"), output=VoiceProviderRef("espeak-ng"))))
        port = await app.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                stub = pb_grpc.VoiceServiceStub(channel)
                firsts, lasts, wholes, speak_firsts, speak_alls = [], [], [], [], []
                paced_firsts, paced_lasts = [], []
                words = [w + " " for w in ANSWER.split()]
                audio = b""
                for i in range(rounds):
                    model.add(text_response([ANSWER]))
                    first, last = await converse_once(stub, 2 * i)
                    firsts.append(first)
                    lasts.append(last)
                    model.add(text_response(words))
                    first, last = await converse_once(stub, 2 * i + 1)
                    paced_firsts.append(first)
                    paced_lasts.append(last)
                    wholes.append(await whole_once())
                    speak_first, speak_all, audio = await speak_once(stub)
                    speak_firsts.append(speak_first)
                    speak_alls.append(speak_all)
                seconds = len(audio) / 32000
                print(f"3-sentence answer ({len(ANSWER)} characters, {seconds:.1f} s of speech), "
                      f"median of {rounds} rounds:")
                print(f"  Converse: first audio {ms(firsts)}   whole answer spoken {ms(lasts)}   "
                      f"(first audio = {statistics.median(firsts) / statistics.median(lasts):.0%} of the whole)")
                print(f"  espeak-ng on the whole answer at once (before any byte could go): {ms(wholes)}")
                written = len(words) / rate
                print(f"  Converse, answer written at {rate:g} words/s ({written:.1f} s): first audio {ms(paced_firsts)}   "
                      f"whole answer spoken {ms(paced_lasts)}; without sentence streaming the first audio "
                      f"would come after the whole answer ({written * 1000:.0f} ms) plus its synthesis")
                print(f"  Speak:    first audio {ms(speak_firsts)}   whole stream {ms(speak_alls)}")
                for label, phrases in (("grammar of 3 phrases", PHRASES), ("open speech", [])):
                    times, heard = [], ""
                    for _ in range(rounds):
                        elapsed, heard = await listen_once(stub, audio, phrases)
                        times.append(elapsed)
                    rtf = statistics.median(times) / seconds
                    print(f"  Listen, {label}: {ms(times)} for {seconds:.1f} s of audio, "
                          f"real-time factor {rtf:.2f}; heard {heard!r}")
        finally:
            await app.stop(0)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--words-per-second", type=float, default=20.0)
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.words_per_second))
