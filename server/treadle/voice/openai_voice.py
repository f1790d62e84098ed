"""OpenAI's speech (``/audio/speech``) and transcription (``/audio/transcriptions``) endpoints,
through the ``openai`` SDK, with the same key and base-URL trust rules as OpenAI models."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Sequence
from typing import Any

from ..core.errors import InvalidArgumentError
from ..providers.base import ModelConfig
from ..providers.trust import check_base_url
from .audio import wav_file
from .base import BufferedRecognition, Recognition, Speaker, VoiceProviderError

OPENAI = "openai"
SPEECH_RATE = 24000
"""OpenAI's ``pcm`` speech format: 24 kHz mono 16-bit little-endian."""
DEFAULT_SPEECH_MODEL = "gpt-4o-mini-tts"
DEFAULT_TRANSCRIPTION_MODEL = "gpt-4o-mini-transcribe"
DEFAULT_VOICE = "alloy"
VOICES = ("alloy", "ash", "ballad", "coral", "echo", "fable", "nova", "onyx", "sage", "shimmer", "verse")
OPTIONS = ("model", "voice", "baseUrl", "instructions", "language")
PLACEHOLDER_API_KEY = "treadle-no-key"


def check_openai_options(options: dict[str, Any], path: str) -> None:
    for key, value in options.items():
        if key not in OPTIONS:
            raise InvalidArgumentError(f"{path}: unknown openai voice option {key!r}; known: {', '.join(OPTIONS)}")
        if not isinstance(value, str) or not value:
            raise InvalidArgumentError(f"{path}.{key} must be a non-empty string")
    if "baseUrl" in options:
        check_base_url(options["baseUrl"], f"{path}.baseUrl")


class OpenAIVoiceSession:
    """One session: its own SDK client (closed with the session)."""

    id = OPENAI

    def __init__(self, options: dict[str, Any], credentials: Any, default_speaker: str = "",
                 *, speech: bool = True) -> None:
        import openai

        self._options = options
        self._default = default_speaker
        self.sample_rate = SPEECH_RATE if speech else 16000
        base_url = options.get("baseUrl", "")
        model = options.get("model", DEFAULT_SPEECH_MODEL if speech else DEFAULT_TRANSCRIPTION_MODEL)
        creds = credentials(ModelConfig(id=f"openai/{model}", base_url=base_url))
        key = creds.get("api_key", "")
        if not key:
            if not (base_url or os.environ.get("OPENAI_BASE_URL")):
                raise VoiceProviderError(OPENAI, "cannot be used: the server has no OPENAI_API_KEY (or OPENAI_BASE_URL, or a baseUrl option)")
            key = PLACEHOLDER_API_KEY
        kwargs: dict[str, Any] = {"api_key": key}
        if base_url:
            kwargs["base_url"] = base_url
        self._model = model
        self._client = openai.AsyncOpenAI(**kwargs)

    async def synthesize(self, text: str, speaker: str = "") -> AsyncIterator[bytes]:
        import openai

        voice = speaker or self._default or self._options.get("voice", DEFAULT_VOICE)
        extra: dict[str, Any] = {}
        if "instructions" in self._options:
            extra["instructions"] = self._options["instructions"]
        try:
            async with self._client.audio.speech.with_streaming_response.create(
                model=self._model, voice=voice, input=text, response_format="pcm", **extra,
            ) as response:
                odd = b""
                async for piece in response.iter_bytes():
                    piece = odd + piece
                    cut = len(piece) - len(piece) % 2
                    odd = piece[cut:]
                    if cut:
                        yield piece[:cut]
        except openai.BadRequestError as e:
            raise InvalidArgumentError(f"openai speech refused the request: {e.message}") from None
        except openai.APIError as e:
            raise VoiceProviderError(OPENAI, f"speech failed: {e.message}") from None

    async def speakers(self) -> list[Speaker]:
        return [Speaker(v, {"provider": OPENAI}) for v in VOICES]

    def recognize(self, phrases: Sequence[str] = ()) -> Recognition:
        return BufferedRecognition(self._transcribe, phrases)

    async def _transcribe(self, pcm: bytes, phrases: list[str]) -> str:
        import openai

        extra: dict[str, Any] = {}
        if phrases:  # a hint, not a grammar: the endpoint has none
            extra["prompt"] = "Expected phrases: " + "; ".join(phrases)
        if "language" in self._options:
            extra["language"] = self._options["language"]
        try:
            result = await self._client.audio.transcriptions.create(
                model=self._model, file=("speech.wav", wav_file(pcm, self.sample_rate), "audio/wav"), **extra)
        except openai.BadRequestError as e:
            raise InvalidArgumentError(f"openai transcription refused the audio: {e.message}") from None
        except openai.APIError as e:
            raise VoiceProviderError(OPENAI, f"transcription failed: {e.message}") from None
        return str(result.text)

    async def close(self) -> None:
        await self._client.close()
