"""Voice: providers (offline built-ins, OpenAI, attached ones) and what the voice service does
with them. No protobuf here; ``api/voice_service.py`` is the edge."""

from .base import Recognition, Speaker, SpeechToText, TextToSpeech, VoiceProviderError
from .providers import BUILTINS, VoiceProviders, check_ref

__all__ = ["BUILTINS", "Recognition", "Speaker", "SpeechToText", "TextToSpeech", "VoiceProviderError",
           "VoiceProviders", "check_ref"]
