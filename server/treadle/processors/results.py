"""What hooks may return, besides ``None`` (no change), the same ``MessageList`` (edited in
place) and a ``list[Message]`` (applied as a diff by id).

An empty list means *no change* (SPEC §3a.1): delete messages with ``message_list.remove_by_ids``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from ..chunks import Chunk
from ..messages import Message, Prompt, SystemMessage


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


@dataclass
class MessagesResult:
    """``{messages, systemMessages}``: ``system_messages`` replaces the untagged system bucket."""

    messages: list[Message] | None = None
    system_messages: list[SystemMessage] | None = None


@dataclass
class ProcessInputStepResult:
    """Overrides for this step only; fields left ``UNSET`` keep the previous processor's value.

    A plain ``dict`` with these keys is accepted too (``{"model": "openai/gpt-5-mini"}``).
    """

    model: Any = UNSET
    tool_choice: Any = UNSET
    active_tools: Any = UNSET
    tools: Any = UNSET
    messages: Any = UNSET
    system_messages: Any = UNSET
    provider_options: Any = UNSET
    model_settings: Any = UNSET
    structured_output: Any = UNSET

    def set_fields(self) -> dict[str, Any]:
        return {f.name: v for f in fields(self) if (v := getattr(self, f.name)) is not UNSET}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ProcessInputStepResult:
        aliases = {
            "toolChoice": "tool_choice",
            "activeTools": "active_tools",
            "systemMessages": "system_messages",
            "providerOptions": "provider_options",
            "modelSettings": "model_settings",
            "structuredOutput": "structured_output",
        }
        names = {f.name for f in fields(cls)}
        out = cls()
        for key, value in data.items():
            name = aliases.get(key, key)
            if name not in names:
                raise ValueError(f"processInputStep returned unknown key {key!r}")
            setattr(out, name, value)
        return out


@dataclass
class ProcessLLMRequestResult:
    """Replace this call's prompt (never persisted) and/or replay a cached response."""

    prompt: Prompt | None = None
    response: list[Chunk] | None = None


@dataclass
class ProcessAPIErrorResult:
    retry: bool = False
