"""The offline providers that ship with the install: espeak-ng speaks, pocketsphinx listens.

espeak-ng runs as its command-line program (Debian's ``espeak-ng``), once per sentence, so a
long text is heard from its first sentence on. pocketsphinx (the PyPI package, with its bundled
US English model) decodes in a worker thread as audio arrives; a list of phrases becomes a JSGF
grammar, which makes it reliable for commands and short answers.
"""

from __future__ import annotations

import asyncio
import re
import shutil
from collections.abc import AsyncIterator, Sequence
from typing import Any

from ..core.errors import InvalidArgumentError
from .audio import AudioError, read_wav
from .base import Recognition, Speaker, VoiceProviderError

ESPEAK = "espeak-ng"
POCKETSPHINX = "pocketsphinx"
ESPEAK_RATE = 22050
POCKETSPHINX_RATE = 16000
ESPEAK_OPTIONS = {"rate": (80, 450), "pitch": (0, 99)}
"""Words per minute and pitch, with their allowed ranges."""
_VOICE_ID = re.compile(r"^[A-Za-z0-9_+-]{1,64}(/[A-Za-z0-9_+-]{1,64})?$")


def check_espeak_options(options: dict[str, Any], path: str) -> None:
    for key, value in options.items():
        if key not in ESPEAK_OPTIONS:
            raise InvalidArgumentError(f"{path}: unknown espeak-ng option {key!r}; known: {', '.join(ESPEAK_OPTIONS)}")
        low, high = ESPEAK_OPTIONS[key]
        if not isinstance(value, (int, float)) or not low <= value <= high:
            raise InvalidArgumentError(f"{path}.{key} must be a number from {low} to {high}, got {value!r}")


class EspeakSession:
    id = ESPEAK
    sample_rate = ESPEAK_RATE

    def __init__(self, options: dict[str, Any] | None = None, default_speaker: str = "") -> None:
        self._options = options or {}
        self._default = default_speaker

    async def synthesize(self, text: str, speaker: str = "") -> AsyncIterator[bytes]:
        program = shutil.which("espeak-ng")
        if program is None:
            raise VoiceProviderError(ESPEAK, "cannot run: the espeak-ng program is not installed (apt-get install espeak-ng)")
        voice = speaker or self._default
        if voice and not _VOICE_ID.match(voice):
            raise InvalidArgumentError(f"speaker {voice!r} is not an espeak-ng voice name (see GetSpeakers)")
        args = [program, "--stdout"]
        if voice:
            args += ["-v", voice]
        if "rate" in self._options:
            args += ["-s", str(int(self._options["rate"]))]
        if "pitch" in self._options:
            args += ["-p", str(int(self._options["pitch"]))]
        # Text on stdin: never parsed as options, whatever it starts with.
        proc = await asyncio.create_subprocess_exec(
            *args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        try:
            out, err = await proc.communicate(text.encode())
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        if proc.returncode != 0 or not out:
            raise VoiceProviderError(ESPEAK, "failed: " + (err.decode(errors="replace").strip() or f"exit {proc.returncode}"))
        if b"Voice does not exist" in err or b"Failed to read voice" in err:
            raise InvalidArgumentError(f"speaker {voice!r} is not an espeak-ng voice (see GetSpeakers)")
        try:
            pcm, rate = read_wav(out)
        except AudioError as e:
            raise VoiceProviderError(ESPEAK, f"gave unreadable output: {e}") from None
        self.sample_rate = rate
        yield pcm

    async def speakers(self) -> list[Speaker]:
        program = shutil.which("espeak-ng")
        if program is None:
            return []
        proc = await asyncio.create_subprocess_exec(
            program, "--voices", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
        out, _ = await proc.communicate()
        speakers = []
        for line in out.decode(errors="replace").splitlines()[1:]:
            cols = line.split()
            if len(cols) >= 4:
                gender = cols[2].split("/")[-1]
                speakers.append(Speaker(cols[1], {"language": cols[1], "name": cols[3].replace("_", " "),
                                                  "gender": {"M": "male", "F": "female"}.get(gender, "")}))
        return speakers

    async def close(self) -> None:
        pass


def _jsgf(phrases: Sequence[str]) -> str:
    words = []
    for phrase in phrases:
        clean = " ".join(re.sub(r"[^a-z' ]", " ", phrase.lower()).split())
        if clean:
            words.append(clean)
    if not words:
        raise InvalidArgumentError("phrases: none has a word the recogniser can hear (letters a-z)")
    return "#JSGF V1.0;\ngrammar phrases;\npublic <phrases> = ( " + " | ".join(f"( {w} )" for w in words) + " )+;\n"


class _SphinxRecognition:
    """One utterance: a decoder of its own, fed in a worker thread."""

    def __init__(self, phrases: Sequence[str]) -> None:
        self._phrases = list(phrases)
        self._decoder: Any = None
        self._last = ""
        self._lock = asyncio.Lock()

    def _open(self) -> Any:
        try:
            from pocketsphinx import Decoder
        except ImportError:
            raise VoiceProviderError(POCKETSPHINX, "cannot run: the pocketsphinx package is not installed") from None
        decoder = Decoder(samprate=POCKETSPHINX_RATE, loglevel="FATAL")
        if self._phrases:
            grammar = _jsgf(self._phrases)
            try:
                decoder.add_jsgf_string("phrases", grammar)
                decoder.activate_search("phrases")
            except RuntimeError as e:
                raise InvalidArgumentError(f"phrases: the recogniser cannot use them ({e}); a word may be "
                                           "missing from its dictionary") from None
        decoder.start_utt()
        return decoder

    def _feed(self, pcm: bytes) -> str | None:
        if self._decoder is None:
            self._decoder = self._open()
        self._decoder.process_raw(pcm, False, False)
        hyp = self._decoder.hyp()
        text = hyp.hypstr if hyp is not None else ""
        if text != self._last:
            self._last = text
            return text
        return None

    def _finish(self) -> str:
        if self._decoder is None:
            self._decoder = self._open()
        self._decoder.end_utt()
        hyp = self._decoder.hyp()
        return hyp.hypstr if hyp is not None else ""

    async def feed(self, pcm: bytes) -> str | None:
        async with self._lock:  # one decoder call at a time, in order
            return await asyncio.to_thread(self._feed, pcm)

    async def finish(self) -> str:
        async with self._lock:
            return await asyncio.to_thread(self._finish)


class SphinxSession:
    id = POCKETSPHINX
    sample_rate = POCKETSPHINX_RATE

    def recognize(self, phrases: Sequence[str] = ()) -> Recognition:
        if phrases:
            _jsgf(phrases)  # bad phrases are the caller's error, said before any audio
        return _SphinxRecognition(phrases)

    async def close(self) -> None:
        pass
