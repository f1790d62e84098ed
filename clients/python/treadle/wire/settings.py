"""Proto <-> domain for model settings, tool choice and structured output (agents and hooks)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.specs import ModelSettings
from ..core.errors import InvalidArgumentError
from ..v1 import agent_pb2
from .data import dict_to_struct, enum_to_pb, struct_to_dict

_TOOL_MODE = agent_pb2.ToolChoiceMode.DESCRIPTOR


_OPTIONAL_SETTINGS = (
    "temperature", "max_output_tokens", "top_p", "seed", "presence_penalty", "frequency_penalty", "max_retries"
)


def model_settings_from_proto(pb: agent_pb2.ModelSettings, path: str) -> ModelSettings:
    values = {name: getattr(pb, name) for name in _OPTIONAL_SETTINGS if pb.HasField(name)}
    for name in ("max_output_tokens", "max_retries"):
        if values.get(name, 0) < 0:
            raise InvalidArgumentError(f"{path}.{name} must be >= 0")
    return ModelSettings(stop_sequences=list(pb.stop_sequences), **values)


def model_settings_to_proto(settings: Any, out: agent_pb2.ModelSettings) -> None:
    """Sets ``out`` only for a ``ModelSettings`` (a processor may have put anything there)."""
    if not isinstance(settings, ModelSettings):
        return
    out.SetInParent()
    for name in _OPTIONAL_SETTINGS:
        value = getattr(settings, name)
        if value is not None:
            setattr(out, name, value)
    out.stop_sequences.extend(settings.stop_sequences)


def tool_choice_to_proto(choice: Any, out: agent_pb2.ToolChoice) -> None:
    """A mode name or ``{"tool_name": ...}``; anything else leaves ``out`` unset."""
    if isinstance(choice, str):
        out.mode = enum_to_pb(_TOOL_MODE, choice)
    elif isinstance(choice, Mapping):
        out.tool_name = str(choice.get("tool_name") or choice.get("toolName") or "")


def structured_output_to_proto(value: Mapping[str, Any] | None, out: agent_pb2.StructuredOutput) -> None:
    if value is None:
        return
    out.SetInParent()
    dict_to_struct(value.get("schema") or {}, out.schema)
    out.name = str(value.get("name") or "")


def structured_output_from_proto(msg: agent_pb2.StructuredOutput) -> dict[str, Any]:
    return {"schema": struct_to_dict(msg.schema), "name": msg.name}
