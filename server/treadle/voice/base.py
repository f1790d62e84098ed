"""What a voice provider is: speech to text, text to speech, or both.

A provider is a factory of sessions: each ``Speak``, ``Listen`` and ``Converse`` call opens its
own, so no state is shared between callers (the framework's voice once was one shared mutable
object; here it never is). All audio inside is mono PCM16 at the session's ``sample_rate``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..core.errors import InvalidArgumentError


class VoiceProviderError(Exception):
    """A provider could not answer (not attached, process gone, timeout, engine failure)."""

    def __init__(self, provider_id: str, message: str) -> None:
        super().__init__(f"voice provider {provider_id!r} {message}")
        self.provider_id = provider_id


@dataclass(frozen=True)
class Speaker:
    voice_id: str
    metadata: dict[str, Any] = field(default_factory=dict)


class Recognition(Protocol):
    """One utterance being heard."""

    async def feed(self, pcm: bytes) -> str | None:
        """Take more audio; returns the interim text when it changed (None otherwise)."""
        ...

    async def finish(self) -> str:
        """The final text of everything fed."""
        ...


class SpeechToText(Protocol):
    """A session of a speech-to-text provider."""

    id: str
    sample_rate: int

    def recognize(self, phrases: Sequence[str] = ()) -> Recognition:
        """Start hearing one utterance; ``phrases`` (when given) are all it may hear."""
        ...

    async def close(self) -> None: ...


class TextToSpeech(Protocol):
    """A session of a text-to-speech provider."""

    id: str
    sample_rate: int

    def synthesize(self, text: str, speaker: str = "") -> AsyncIterator[bytes]:
        """PCM16 pieces of ``text`` spoken by ``speaker`` (empty: the default)."""
        ...

    async def speakers(self) -> list[Speaker]: ...

    async def close(self) -> None: ...


MAX_BUFFERED_BYTES = 300 * 32000
"""Five minutes of 16 kHz PCM16: what a provider that hears a whole utterance at once may be sent."""


class BufferedRecognition:
    """A recognition for providers that hear a whole utterance at once (no interim text)."""

    def __init__(self, transcribe: Any, phrases: Sequence[str]) -> None:
        self._transcribe = transcribe
        self._phrases = list(phrases)
        self._audio = bytearray()

    async def feed(self, pcm: bytes) -> str | None:
        if len(self._audio) + len(pcm) > MAX_BUFFERED_BYTES:
            raise InvalidArgumentError(
                f"an utterance may be at most {MAX_BUFFERED_BYTES // 32000} seconds of 16 kHz audio for this provider")
        self._audio += pcm
        return None

    async def finish(self) -> str:
        if not self._audio:
            return ""
        text: str = await self._transcribe(bytes(self._audio), self._phrases)
        return text
