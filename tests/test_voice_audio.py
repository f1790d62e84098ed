"""The voice's audio conversions and sentence cutting, on their own."""

from __future__ import annotations

import array
import math

import pytest

from treadle.voice.audio import (
    AudioError, AudioFormat, Decoder, Encoder, level, mulaw_to_pcm, pcm_to_mulaw, read_wav, resample, wav_file,
)
from treadle.voice.sentences import Sentences, split


def sine(n: int, rate: int, amplitude: int = 10000) -> bytes:
    return array.array("h", (int(amplitude * math.sin(2 * math.pi * 440 * i / rate)) for i in range(n))).tobytes()


def samples(pcm: bytes) -> list[int]:
    return list(array.array("h", pcm))


def test_mulaw_round_trip_keeps_speech_within_its_quantisation() -> None:
    pcm = sine(800, 8000)
    back = samples(mulaw_to_pcm(pcm_to_mulaw(pcm)))
    assert len(back) == 800
    assert all(abs(a - b) <= max(16, abs(a) // 16) for a, b in zip(samples(pcm), back))
    assert pcm_to_mulaw(array.array("h", [0, 32767, -32768]).tobytes()) == bytes([0xFF, 0x80, 0x00])


def test_resample_keeps_duration_and_level() -> None:
    pcm = sine(22050, 22050)
    out = resample(pcm, 22050, 16000)
    assert len(out) == 2 * 16000
    assert abs(level(out) - level(pcm)) < 0.01
    assert resample(pcm, 16000, 16000) is pcm


def test_wav_in_and_out() -> None:
    pcm = sine(1600, 16000)
    assert read_wav(wav_file(pcm, 16000)) == (pcm, 16000)
    with pytest.raises(AudioError, match="not a WAV file"):
        read_wav(b"OggS" + bytes(40))
    encoder = Encoder(AudioFormat("wav", 8000), 16000)
    header = encoder.header()
    assert header[:4] == b"RIFF" and header[4:8] == b"\xff\xff\xff\xff" and encoder.header() == b""
    assert len(encoder.encode(pcm)) == 1600  # 800 samples at 8 kHz


def test_a_wav_stream_may_split_its_header_over_messages() -> None:
    data = wav_file(sine(3200, 8000), 8000)
    decoder = Decoder(AudioFormat("wav", 0), 16000)
    out = b"".join(decoder.decode(data[i:i + 7]) for i in range(0, len(data), 7))
    assert abs(len(out) - 2 * 6400) <= 4  # 8 kHz in, 16 kHz out
    with pytest.raises(AudioError, match="mono 16-bit PCM"):
        Decoder(AudioFormat("wav", 0), 16000).decode(wav_file(b"", 8000)[:22] + b"\x02\x00" + wav_file(b"", 8000)[24:])


def test_sentences_come_out_as_soon_as_they_end() -> None:
    s = Sentences()
    assert s.feed("It is sun") == []
    assert s.feed("ny. Take a") == ["It is sunny."]
    assert s.feed(" hat!\n\nOK") == ["Take a hat!"]
    assert s.flush() == ["OK"]
    assert split("Version 1.5 is out. Really?") == ["Version 1.5 is out.", "Really?"]
    assert split("“Quoted.” Next one.") == ["“Quoted.”", "Next one."]
    long = " ".join(["word"] * 200)
    parts = split(long)
    assert len(parts) > 1 and " ".join(parts) == long
