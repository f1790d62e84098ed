"""Stored messages and their parts, and the provider prompt built from them.

Domain types only: this module imports nothing from the rest of the package.
"""

from __future__ import annotations

import copy
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, TypeAlias

Role: TypeAlias = Literal["user", "assistant", "system", "signal"]
ToolInvocationState: TypeAlias = Literal["partial-call", "call", "result", "output-error"]


def new_id(prefix: str = "msg") -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass
class TextPart:
    text: str
    provider_metadata: dict[str, Any] | None = None
    type: Literal["text"] = "text"


@dataclass
class ReasoningPart:
    text: str
    signature: str = ""
    redacted_data: bytes = b""
    provider_metadata: dict[str, Any] | None = None
    type: Literal["reasoning"] = "reasoning"


@dataclass
class FilePart:
    mime_type: str
    data: bytes = b""
    url: str = ""
    filename: str = ""
    provider_metadata: dict[str, Any] | None = None
    type: Literal["file"] = "file"


@dataclass
class SourcePart:
    source_type: Literal["url", "document"]
    id: str
    url: str = ""
    title: str = ""
    mime_type: str = ""
    filename: str = ""
    provider_metadata: dict[str, Any] | None = None
    type: Literal["source"] = "source"


@dataclass
class StepStartPart:
    model: str = ""
    provider_metadata: dict[str, Any] | None = None
    type: Literal["step-start"] = "step-start"


@dataclass
class ToolInvocationPart:
    tool_call_id: str
    tool_name: str
    args: Any = None
    state: ToolInvocationState = "call"
    result: Any = None
    is_error: bool = False
    error_text: str = ""
    provider_metadata: dict[str, Any] | None = None
    type: Literal["tool-invocation"] = "tool-invocation"
    transcript: dict[str, Any] | None = None
    """Server side: how the history clients read shows this invocation (its ``args``, ``result``
    and ``errorText`` as the agent's tool payload transform projected them, and which of them are
    ``suppressed``), stored beside the raw payloads; None when no transform applied."""


@dataclass
class ErrorPart:
    name: str
    message: str
    provider_metadata: dict[str, Any] | None = None
    type: Literal["error"] = "error"


@dataclass
class DataPart:
    """A persisted custom chunk; ``name`` is the full ``data-*`` type."""

    name: str
    data: Any = None
    id: str = ""
    provider_metadata: dict[str, Any] | None = None

    @property
    def type(self) -> str:
        return self.name


Part: TypeAlias = (
    TextPart
    | ReasoningPart
    | FilePart
    | SourcePart
    | StepStartPart
    | ToolInvocationPart
    | ErrorPart
    | DataPart
)


@dataclass
class MessageContent:
    parts: list[Part] = field(default_factory=list)
    metadata: dict[str, Any] | None = None
    format: int = 2


@dataclass
class Message:
    """A stored message (the Mastra framework's ``MastraDBMessage``)."""

    id: str
    role: Role
    content: MessageContent
    created_at: datetime = field(default_factory=utcnow)
    thread_id: str = ""
    resource_id: str = ""
    type: str = ""

    @property
    def text(self) -> str:
        """The concatenated text parts."""
        return "".join(p.text for p in self.content.parts if isinstance(p, TextPart))

    @classmethod
    def user(cls, text: str, *, id: str | None = None) -> Message:
        return cls(id=id or new_id(), role="user", content=MessageContent(parts=[TextPart(text)]))

    @classmethod
    def assistant(cls, text: str, *, id: str | None = None) -> Message:
        return cls(
            id=id or new_id(), role="assistant", content=MessageContent(parts=[TextPart(text)])
        )


@dataclass
class SystemMessage:
    """A system instruction (the Mastra framework's ``CoreMessage`` with role ``system``)."""

    content: str
    provider_options: dict[str, Any] | None = None
    role: Literal["system"] = "system"


# --- the provider prompt (the Mastra framework's LanguageModelV2Prompt) -----------------------------------


@dataclass
class ToolCallPart:
    tool_call_id: str
    tool_name: str
    args: Any = None
    type: Literal["tool-call"] = "tool-call"


@dataclass
class ToolResultPart:
    tool_call_id: str
    tool_name: str
    result: Any = None
    is_error: bool = False
    type: Literal["tool-result"] = "tool-result"


PromptPart: TypeAlias = TextPart | ReasoningPart | FilePart | ToolCallPart | ToolResultPart


@dataclass
class PromptMessage:
    """One message of the prompt sent to a provider.

    ``system`` messages hold one ``TextPart``; ``tool`` messages hold ``ToolResultPart``s.
    """

    role: Literal["system", "user", "assistant", "tool"]
    content: list[PromptPart]
    provider_options: dict[str, Any] | None = None


Prompt: TypeAlias = list[PromptMessage]


_ATOMIC = (str, bytes, int, float, bool, type(None), datetime)


def copy_message(message: Message) -> Message:
    """A deep copy of a message, several times faster than ``copy.deepcopy``: messages are taken
    apart by hand (dataclasses, lists, dicts, immutable scalars kept as they are); anything else
    in them (a processor's own object in metadata) still goes through ``copy.deepcopy``."""
    return _deep(message)  # type: ignore[no-any-return]


def _deep(value: Any) -> Any:
    if isinstance(value, _ATOMIC):
        return value
    if isinstance(value, list):
        return [_deep(v) for v in value]
    if isinstance(value, dict):
        if type(value) is dict and all(isinstance(k, str) for k in value):
            return {k: _deep(v) for k, v in value.items()}
        return copy.deepcopy(value)
    if hasattr(value, "__dataclass_fields__") and hasattr(value, "__dict__") \
            and not hasattr(value, "__deepcopy__"):
        new = object.__new__(type(value))
        new.__dict__.update({k: _deep(v) for k, v in value.__dict__.items()})
        return new
    return copy.deepcopy(value)
