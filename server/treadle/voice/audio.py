"""Audio as the voice service moves it: mono 16-bit PCM inside, converted at the edges.

Encodings: raw PCM16 (little-endian), WAV (RIFF header + PCM16) and G.711 μ-law. Rates are
converted by linear interpolation, which is plenty for speech between 8 and 48 kHz.
"""

from __future__ import annotations

import array
import math
import struct
import sys
from dataclasses import dataclass
from typing import Literal, TypeAlias

from ..core.errors import InvalidArgumentError

Encoding: TypeAlias = Literal["pcm16", "wav", "mulaw"]

MIN_RATE, MAX_RATE = 8000, 48000
STREAMING_SIZE = 0xFFFFFFFF
"""The RIFF and data sizes of a WAV whose length is not known when its header is sent."""


class AudioError(ValueError):
    """Audio that cannot be read as its format says."""


@dataclass(frozen=True)
class AudioFormat:
    encoding: Encoding
    sample_rate: int
    """0: the provider's own rate (output) or 16000 (input)."""


def _samples(pcm: bytes) -> array.array[int]:
    out = array.array("h")
    out.frombytes(pcm[: len(pcm) - len(pcm) % 2])
    if sys.byteorder == "big":
        out.byteswap()
    return out


def _bytes(samples: array.array[int]) -> bytes:
    if sys.byteorder == "big":
        samples = array.array("h", samples)
        samples.byteswap()
    return samples.tobytes()


def resample(pcm: bytes, rate_in: int, rate_out: int) -> bytes:
    """PCM16 at ``rate_in`` as PCM16 at ``rate_out`` (linear interpolation)."""
    if rate_in == rate_out or not pcm:
        return pcm
    src = _samples(pcm)
    n = len(src)
    count = max(1, int(n * rate_out / rate_in))
    step = rate_in / rate_out
    out = array.array("h", bytes(2 * count))
    last = n - 1
    for i in range(count):
        pos = i * step
        j = int(pos)
        if j >= last:
            out[i] = src[last]
            continue
        frac = pos - j
        a, b = src[j], src[j + 1]
        out[i] = int(a + (b - a) * frac)
    return _bytes(out)


def level(pcm: bytes) -> float:
    """Root mean square of PCM16 samples, 0.0 (silence) to 1.0 (full scale)."""
    samples = _samples(pcm)
    if not samples:
        return 0.0
    return math.sqrt(sum(x * x for x in samples) / len(samples)) / 32768


# --- μ-law (G.711) -------------------------------------------------------------------------------

_BIAS, _CLIP = 0x84, 32635


def _encode_mulaw_sample(sample: int) -> int:
    sign = 0x80 if sample < 0 else 0
    if sample < 0:
        sample = -sample
    sample = min(sample, _CLIP) + _BIAS
    exponent, mask = 7, 0x4000
    while exponent > 0 and not sample & mask:
        exponent -= 1
        mask >>= 1
    mantissa = (sample >> (exponent + 3)) & 0x0F
    return ~(sign | (exponent << 4) | mantissa) & 0xFF


def _decode_mulaw_byte(byte: int) -> int:
    byte = ~byte & 0xFF
    sign, exponent, mantissa = byte & 0x80, (byte >> 4) & 0x07, byte & 0x0F
    sample = (((mantissa << 3) + _BIAS) << exponent) - _BIAS
    return -sample if sign else sample


_MULAW_DECODE = array.array("h", (_decode_mulaw_byte(b) for b in range(256)))
_MULAW_ENCODE: bytes | None = None


def pcm_to_mulaw(pcm: bytes) -> bytes:
    global _MULAW_ENCODE
    if _MULAW_ENCODE is None:  # 64 KiB, built on first use
        _MULAW_ENCODE = bytes(_encode_mulaw_sample(s) for s in range(-32768, 32768))
    table = _MULAW_ENCODE
    return bytes(table[s + 32768] for s in _samples(pcm))


def mulaw_to_pcm(data: bytes) -> bytes:
    return _bytes(array.array("h", (_MULAW_DECODE[b] for b in data)))


# --- WAV ----------------------------------------------------------------------------------------


def wav_header(sample_rate: int, data_bytes: int = STREAMING_SIZE) -> bytes:
    """A RIFF/WAVE header for mono PCM16; without ``data_bytes``, the streaming placeholder."""
    riff = STREAMING_SIZE if data_bytes == STREAMING_SIZE else 36 + data_bytes
    return struct.pack("<4sI4s4sIHHIIHH4sI", b"RIFF", riff, b"WAVE", b"fmt ", 16, 1, 1, sample_rate,
                       sample_rate * 2, 2, 16, b"data", data_bytes)


def wav_file(pcm: bytes, sample_rate: int) -> bytes:
    return wav_header(sample_rate, len(pcm)) + pcm


def read_wav(data: bytes) -> tuple[bytes, int]:
    """(PCM16 mono samples, rate) from a WAV file; ``AudioError`` saying what is wrong."""
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise AudioError("not a WAV file (no RIFF/WAVE header)")
    at, rate, channels, bits = 12, 0, 0, 0
    while at + 8 <= len(data):
        tag, size = struct.unpack_from("<4sI", data, at)
        body = at + 8
        if tag == b"fmt ":
            if size < 16:
                raise AudioError("WAV fmt chunk is too short")
            fmt, channels, rate, _, _, bits = struct.unpack_from("<HHIIHH", data, body)
            if fmt not in (1, 0xFFFE) or bits != 16:
                raise AudioError(f"WAV must be 16-bit PCM (format {fmt}, {bits} bits given)")
        elif tag == b"data":
            if not rate:
                raise AudioError("WAV data chunk comes before its fmt chunk")
            end = len(data) if size == STREAMING_SIZE else min(len(data), body + size)
            pcm = data[body:end]
            if channels > 1:
                pcm = _downmix(pcm, channels)
            return pcm, rate
        at = body + size + (size & 1)
    raise AudioError("WAV file has no data chunk")


def _downmix(pcm: bytes, channels: int) -> bytes:
    src = _samples(pcm)
    frames = len(src) // channels
    return _bytes(array.array("h", (sum(src[i * channels:(i + 1) * channels]) // channels
                                    for i in range(frames))))


def check_rate(rate: int, field: str) -> None:
    if rate and not MIN_RATE <= rate <= MAX_RATE:
        raise InvalidArgumentError(f"{field} must be between {MIN_RATE} and {MAX_RATE} Hz (or 0), got {rate}")


class Encoder:
    """PCM16 at the provider's rate → the format a caller asked for, piece by piece."""

    def __init__(self, wanted: AudioFormat, provider_rate: int) -> None:
        self.rate = wanted.sample_rate or provider_rate
        self.encoding = wanted.encoding
        self._provider_rate = provider_rate
        self._header_sent = False

    def header(self) -> bytes:
        """The bytes that go before the first audio (a WAV header), once."""
        if self.encoding != "wav" or self._header_sent:
            return b""
        self._header_sent = True
        return wav_header(self.rate)

    def encode(self, pcm: bytes) -> bytes:
        pcm = resample(pcm, self._provider_rate, self.rate)
        if self.encoding == "mulaw":
            return pcm_to_mulaw(pcm)
        return pcm


class Decoder:
    """Audio a caller sends, in its format → PCM16 at ``rate`` (the recogniser's), piece by piece.

    A WAV stream's header may arrive split over messages: bytes wait until the header is whole.
    """

    def __init__(self, given: AudioFormat, rate: int) -> None:
        self.given = given
        self.rate = rate
        self._source_rate = given.sample_rate or 16000
        self._pending = b""
        self._in_header = given.encoding == "wav"
        self._odd = b""

    def decode(self, data: bytes) -> bytes:
        if self._in_header:
            self._pending += data
            found = _wav_data_start(self._pending)
            if found is None:
                if len(self._pending) > 1 << 16:
                    raise AudioError("no WAV data chunk in the first 64 KiB")
                return b""
            start, self._source_rate = found
            data, self._pending, self._in_header = self._pending[start:], b"", False
        if self.given.encoding == "mulaw":
            pcm = mulaw_to_pcm(data)
        else:
            data = self._odd + data
            cut = len(data) - len(data) % 2
            pcm, self._odd = data[:cut], data[cut:]
        return resample(pcm, self._source_rate, self.rate)


def _wav_data_start(data: bytes) -> tuple[int, int] | None:
    if len(data) >= 12 and (data[:4] != b"RIFF" or data[8:12] != b"WAVE"):
        raise AudioError("the audio is not a WAV file (no RIFF/WAVE header); set the format's encoding")
    at, rate = 12, 0
    while at + 8 <= len(data):
        tag, size = struct.unpack_from("<4sI", data, at)
        if tag == b"fmt ":
            if at + 8 + 16 > len(data):
                return None
            fmt, channels, rate, _, _, bits = struct.unpack_from("<HHIIHH", data, at + 8)
            if fmt not in (1, 0xFFFE) or bits != 16 or channels != 1:
                raise AudioError(f"WAV input must be mono 16-bit PCM (format {fmt}, {channels} channel(s), "
                                 f"{bits} bits given)")
            check_rate(rate, "the WAV file's sample rate")
        elif tag == b"data":
            if not rate:
                raise AudioError("WAV data chunk comes before its fmt chunk")
            return at + 8, rate
        at += 8 + size + (size & 1)
    return None
