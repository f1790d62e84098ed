"""Stream chunks.

A ``Chunk`` is an envelope (``type``, ``run_id``, ``from_``, ``metadata``) around a typed
``payload``; custom ``data-*`` chunks carry ``data`` and ``transient`` instead, as in the Mastra
framework (``part.type == "text-delta"`` / ``part.payload.text``, ``part.data``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

ChunkFrom: TypeAlias = Literal["AGENT", "USER", "SYSTEM", "WORKFLOW"]
FinishReason: TypeAlias = Literal[
    "stop", "length", "content-filter", "tool-calls", "error", "other", "unknown", "tripwire", "retry"
]


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    reasoning_tokens: int = 0
    cached_input_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.total_tokens + other.total_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            self.cached_input_tokens + other.cached_input_tokens,
        )


@dataclass
class ToolCall:
    tool_call_id: str
    tool_name: str
    args: Any = None


@dataclass
class ToolResult:
    tool_call_id: str
    tool_name: str
    args: Any = None
    result: Any = None
    is_error: bool = False


@dataclass
class Tripwire:
    reason: str
    retry: bool = False
    metadata: Any = None
    processor_id: str = ""


# --- payloads, one per chunk type -------------------------------------------------------------


@dataclass
class Start:
    agent_id: str = ""
    message_id: str = ""


@dataclass
class StepStart:
    message_id: str = ""
    step_number: int = 0
    model_id: str = ""


@dataclass
class TextStart:
    id: str = ""
    provider_metadata: dict[str, Any] | None = None


@dataclass
class TextDelta:
    id: str = ""
    text: str = ""
    provider_metadata: dict[str, Any] | None = None


@dataclass
class TextEnd:
    id: str = ""
    provider_metadata: dict[str, Any] | None = None


@dataclass
class ReasoningStart:
    id: str = ""
    provider_metadata: dict[str, Any] | None = None


@dataclass
class ReasoningDelta:
    id: str = ""
    text: str = ""
    provider_metadata: dict[str, Any] | None = None


@dataclass
class ReasoningEnd:
    id: str = ""
    signature: str = ""
    provider_metadata: dict[str, Any] | None = None


@dataclass
class ToolCallInputStreamingStart:
    tool_call_id: str
    tool_name: str
    provider_executed: bool = False


@dataclass
class ToolCallDelta:
    tool_call_id: str
    args_text_delta: str
    tool_name: str = ""


@dataclass
class ToolCallInputStreamingEnd:
    tool_call_id: str


@dataclass
class ToolCallPayload:
    tool_call_id: str
    tool_name: str
    args: Any = None
    provider_executed: bool = False


@dataclass
class ToolResultPayload:
    tool_call_id: str
    tool_name: str
    result: Any = None
    is_error: bool = False
    args: Any = None
    provider_executed: bool = False


@dataclass
class ToolErrorPayload:
    tool_call_id: str
    tool_name: str
    error: str = ""
    args: Any = None


@dataclass
class Source:
    id: str
    source_type: Literal["url", "document"] = "url"
    title: str = ""
    url: str = ""
    mime_type: str = ""
    filename: str = ""


@dataclass
class File:
    data: bytes
    mime_type: str
    filename: str = ""


@dataclass
class ResponseMetadata:
    id: str = ""
    model_id: str = ""
    timestamp: float | None = None


@dataclass
class StepFinish:
    reason: FinishReason
    usage: Usage = field(default_factory=Usage)
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    raw_reason: str = ""
    message_id: str = ""
    step_number: int = 0
    is_continued: bool = False


SkipReason: TypeAlias = Literal["timeout", "disconnect", "not_attached", "malformed", "draining"]


@dataclass
class SkippedProcessor:
    """A ``fail_open`` processor hook a run went on without: ``count`` skips for ``reason``."""

    processor_id: str
    hook: str
    """The hook's interface name (``processOutputStream``)."""
    reason: SkipReason
    count: int = 1
    message: str = ""


@dataclass
class Finish:
    reason: FinishReason
    total_usage: Usage = field(default_factory=Usage)
    skipped_processors: list[SkippedProcessor] = field(default_factory=list)


@dataclass
class ErrorPayload:
    message: str
    name: str = "Error"
    details: Any = None


@dataclass
class AbortPayload:
    reason: str = ""


@dataclass
class ToolOutput:
    """A chunk of a sub-agent (or a tool's ``writer.write``) inside the tool call
    ``tool_call_id``: ``output`` is the inner chunk as it was produced (a delta), ``path`` the
    tool names from this run's down to the innermost (``["agent-research", "agent-write"]``)."""

    tool_call_id: str
    tool_name: str
    output: Chunk | None = None
    path: list[str] = field(default_factory=list)

    @property
    def innermost(self) -> Chunk | None:
        """The chunk at the end of the nesting (unwrapping every ``tool-output``)."""
        chunk = self.output
        while chunk is not None and chunk.type == "tool-output":
            chunk = chunk.payload.output
        return chunk


Payload: TypeAlias = (
    Start
    | StepStart
    | TextStart
    | TextDelta
    | TextEnd
    | ReasoningStart
    | ReasoningDelta
    | ReasoningEnd
    | ToolCallInputStreamingStart
    | ToolCallDelta
    | ToolCallInputStreamingEnd
    | ToolCallPayload
    | ToolResultPayload
    | ToolErrorPayload
    | Source
    | File
    | ResponseMetadata
    | StepFinish
    | Finish
    | ErrorPayload
    | AbortPayload
    | Tripwire
    | ToolOutput
)

PAYLOAD_TYPES: dict[str, type] = {
    "start": Start,
    "step-start": StepStart,
    "text-start": TextStart,
    "text-delta": TextDelta,
    "text-end": TextEnd,
    "reasoning-start": ReasoningStart,
    "reasoning-delta": ReasoningDelta,
    "reasoning-end": ReasoningEnd,
    "tool-call-input-streaming-start": ToolCallInputStreamingStart,
    "tool-call-delta": ToolCallDelta,
    "tool-call-input-streaming-end": ToolCallInputStreamingEnd,
    "tool-call": ToolCallPayload,
    "tool-result": ToolResultPayload,
    "tool-error": ToolErrorPayload,
    "source": Source,
    "file": File,
    "response-metadata": ResponseMetadata,
    "step-finish": StepFinish,
    "finish": Finish,
    "error": ErrorPayload,
    "abort": AbortPayload,
    "tripwire": Tripwire,
    "tool-output": ToolOutput,
}
"""Chunk type name -> payload class; ``data-*`` chunks have no payload."""


@dataclass
class Chunk:
    type: str
    payload: Any = None
    run_id: str = ""
    from_: ChunkFrom = "AGENT"
    metadata: dict[str, Any] | None = None
    # Custom chunks (type "data-*") only.
    data: Any = None
    transient: bool = False
    id: str = ""

    @property
    def is_data(self) -> bool:
        return self.type.startswith("data-")

    @classmethod
    def of(cls, payload: Payload, *, run_id: str = "") -> Chunk:
        """Build a chunk from a payload, deriving its type name."""
        return cls(type=_TYPE_OF[type(payload)], payload=payload, run_id=run_id)

    @classmethod
    def custom(cls, type: str, data: Any = None, *, transient: bool = False, id: str = "") -> Chunk:
        if not type.startswith("data-"):
            raise ValueError(f"custom chunk type must start with 'data-', got {type!r}")
        return cls(type=type, data=data, transient=transient, id=id)


_TYPE_OF: dict[type, str] = {v: k for k, v in PAYLOAD_TYPES.items()}


StreamResult: TypeAlias = "Chunk | list[Chunk] | None"
"""What ``process_output_stream`` returns for one chunk: the chunk (or a replacement), None
(dropped), or the chunks that take its place, in order (none: held back, released later)."""


def as_chunks(result: Chunk | list[Chunk] | None) -> list[Chunk]:
    """``result`` as a list of chunks; ``TypeError`` for anything that is not chunks."""
    if result is None:
        return []
    if isinstance(result, Chunk):
        return [result]
    if isinstance(result, (list, tuple)) and all(isinstance(c, Chunk) for c in result):
        return list(result)
    raise TypeError(f"process_output_stream must return a chunk, None or a list of chunks, not {type(result).__name__}")


def one_or_many(chunks: list[Chunk]) -> Chunk | list[Chunk] | None:
    """The cheapest ``StreamResult`` for ``chunks``."""
    if not chunks:
        return None
    return chunks[0] if len(chunks) == 1 else chunks
