"""The agent's voice per call (the framework's CompositeVoice): which provider serves which
direction, and a fresh session of each for every call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from ..agents import Agent, VoiceProviderRef, VoiceSettings
from ..core.errors import FailedPreconditionError, InvalidArgumentError
from .base import SpeechToText, TextToSpeech, VoiceProviderError
from .offline import ESPEAK, POCKETSPHINX, EspeakSession, SphinxSession, check_espeak_options
from .openai_voice import OPENAI, OpenAIVoiceSession, check_openai_options

Direction = Literal["stt", "tts", "both"]
BUILTINS: dict[str, set[str]] = {ESPEAK: {"tts"}, POCKETSPHINX: {"stt"}, OPENAI: {"stt", "tts"}}
"""What each built-in provider does."""
_CHECKS: dict[str, Callable[[dict[str, Any], str], None]] = {ESPEAK: check_espeak_options,
                                                            OPENAI: check_openai_options}


def check_ref(ref: VoiceProviderRef, needs: Direction, path: str) -> None:
    """``InvalidArgumentError`` when a built-in cannot serve ``needs`` or an option is wrong.
    Other ids name attached providers, which may attach later: checked when a call uses them."""
    does = BUILTINS.get(ref.id)
    if does is None:
        if ref.options:
            raise InvalidArgumentError(f"{path}.options is only for built-in providers ({', '.join(BUILTINS)})")
        return
    wanted = {"stt", "tts"} if needs == "both" else {needs}
    if not wanted <= does:
        what = {"stt": "speech to text", "tts": "text to speech"}
        missing = ", ".join(what[w] for w in sorted(wanted - does))
        raise InvalidArgumentError(f"{path}: the built-in provider {ref.id!r} does not do {missing}")
    check = _CHECKS.get(ref.id)
    if ref.options and check is None:
        raise InvalidArgumentError(f"{path}.options: the built-in provider {ref.id!r} takes no options")
    if check is not None:
        check(ref.options or {}, f"{path}.options")


RemoteOpener = Callable[[VoiceProviderRef, str, str], Any]
"""(ref, "stt" or "tts", agent id) → a session of an attached provider, or VoiceProviderError."""


class VoiceProviders:
    """Opens sessions of the built-ins and (through ``remote``) of attached providers."""

    def __init__(self, credentials: Callable[[Any], dict[str, str]]) -> None:
        self._credentials = credentials
        self.remote: RemoteOpener | None = None

    def voice_of(self, agent: Agent) -> VoiceSettings:
        if agent.voice is None:
            raise FailedPreconditionError(f"agent {agent.id!r} has no voice (set its voice: input, output or realtime)")
        return agent.voice

    def speech_to_text(self, agent: Agent) -> SpeechToText:
        ref = self.voice_of(agent).listener
        if ref is None:
            raise FailedPreconditionError(f"agent {agent.id!r} cannot listen: its voice has no input or realtime provider")
        if ref.id == POCKETSPHINX:
            return SphinxSession()
        if ref.id == OPENAI:
            return OpenAIVoiceSession(ref.options or {}, self._credentials, speech=False)
        return self._remote(ref, "stt", agent.id)  # type: ignore[no-any-return]

    def text_to_speech(self, agent: Agent) -> TextToSpeech:
        voice = self.voice_of(agent)
        ref = voice.speaker_provider
        if ref is None:
            raise FailedPreconditionError(f"agent {agent.id!r} cannot speak: its voice has no output or realtime provider")
        if ref.id == ESPEAK:
            return EspeakSession(ref.options, voice.speaker)
        if ref.id == OPENAI:
            return OpenAIVoiceSession(ref.options or {}, self._credentials, voice.speaker)
        return self._remote(ref, "tts", agent.id)  # type: ignore[no-any-return]

    def _remote(self, ref: VoiceProviderRef, direction: str, agent_id: str) -> Any:
        if self.remote is None:
            raise VoiceProviderError(ref.id, "is not attached")
        return self.remote(ref, direction, agent_id)
