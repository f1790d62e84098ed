"""Proto <-> domain for an agent's voice settings (``Agent.voice``), checked on the way in."""

from __future__ import annotations

from .. import agents as a
from ..core.errors import InvalidArgumentError
from ..v1 import agent_pb2
from ..voice.providers import BUILTINS, Direction, check_ref
from ..wire.data import dict_to_struct, enum_to_pb, enum_to_py, opt_struct

_POLICY = agent_pb2.FailurePolicy.DESCRIPTOR
_DIRECTIONS: dict[str, Direction] = {"input": "stt", "output": "tts", "realtime": "both"}


def voice_settings_from_proto(pb: agent_pb2.VoiceSettings, path: str) -> a.VoiceSettings:
    refs: dict[str, a.VoiceProviderRef | None] = {}
    for name, needs in _DIRECTIONS.items():
        if not pb.HasField(name):
            refs[name] = None
            continue
        ref_pb = getattr(pb, name)
        if not ref_pb.id:
            raise InvalidArgumentError(f"{path}.{name}.id is required")
        ref = a.VoiceProviderRef(ref_pb.id, enum_to_py(_POLICY, ref_pb.failure_policy) or "fail_closed",  # type: ignore[arg-type]
                                 opt_struct(ref_pb, "options"))
        check_ref(ref, needs, f"{path}.{name}")
        refs[name] = ref
    if not any(refs.values()):
        raise InvalidArgumentError(f"{path}: name an input, output or realtime provider (or leave voice unset)")
    if len(pb.speaker) > 128:
        raise InvalidArgumentError(f"{path}.speaker is longer than 128 characters")
    return a.VoiceSettings(refs["input"], refs["output"], refs["realtime"], pb.speaker)


def voice_settings_to_proto(voice: a.VoiceSettings, out: agent_pb2.VoiceSettings) -> None:
    for name in _DIRECTIONS:
        ref = getattr(voice, name)
        if ref is None:
            continue
        pb = getattr(out, name)
        pb.id = ref.id
        # A built-in runs in the server's process: no failure policy applies, so none is shown.
        pb.failure_policy = 0 if ref.id in BUILTINS else enum_to_pb(_POLICY, ref.failure_policy)
        if ref.options is not None:
            dict_to_struct(ref.options, pb.options)
    out.speaker = voice.speaker
