"""One input dataclass per hook, so adding a field breaks no processor.

Every hook gets ``abort``, ``retry_count``, ``request_context``, ``tracing_context`` and
``abort_signal``; hooks that may keep per-call data get ``state``; hooks that may emit custom
chunks get ``writer``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn, Protocol

from .chunks import Chunk, FinishReason, ToolCall, ToolOutput, ToolResult, Tripwire, Usage
from .errors import TripwireError
from .message_list import MessageList
from .messages import Message, Prompt, SystemMessage


class AbortFn(Protocol):
    def __call__(
        self, reason: str = "", *, retry: bool = False, metadata: Any = None
    ) -> NoReturn: ...


def make_abort(processor_id: str) -> AbortFn:
    """The ``abort`` of ``processor_id``'s hooks: raises ``TripwireError`` naming the processor."""

    def abort(reason: str = "", *, retry: bool = False, metadata: Any = None) -> NoReturn:
        raise TripwireError(reason or f"Tripwire triggered by {processor_id}", retry=retry,
                            metadata=metadata, processor_id=processor_id)

    return abort


class ProcessorStreamWriter:
    """Emits custom ``data-*`` chunks to the client (``await writer.custom({...})``).

    In ``process_output_stream`` and ``process_output_result`` of an in-process processor the
    writer is *direct* (``can_write``): ``await writer.write(chunk)`` sends any chunk straight to
    the client, ahead of the chunk the hook returns, so a processor that held text back (by
    dropping deltas) can release it before a ``text-end``.
    """

    def __init__(
        self, emit: Callable[[Chunk], Awaitable[object]], run_id: str, *, direct: bool = False
    ) -> None:
        self._emit = emit
        self._run_id = run_id
        self._direct = direct

    @property
    def can_write(self) -> bool:
        return self._direct

    async def write(self, chunk: Chunk) -> None:
        """Send ``chunk`` (of any type) to the client as it is; only on a direct writer."""
        if not self._direct:
            raise RuntimeError("writer.write() is only available in process_output_stream and "
                               "process_output_result of an in-process processor")
        chunk.run_id = chunk.run_id or self._run_id
        await self._emit(chunk)

    async def custom(self, chunk: Chunk | dict[str, Any]) -> None:
        if isinstance(chunk, dict):
            chunk = Chunk.custom(
                str(chunk.get("type", "")),
                chunk.get("data"),
                transient=bool(chunk.get("transient", False)),
                id=str(chunk.get("id") or ""),
            )
        elif not chunk.is_data:
            raise ValueError(f"writer.custom() takes data-* chunks, got {chunk.type!r}")
        chunk.run_id = chunk.run_id or self._run_id
        await self._emit(chunk)


class ToolStreamWriter(ProcessorStreamWriter):
    """A tool's writer (the Mastra framework's ``context.writer``): ``write(chunk)`` reaches the
    client as a ``tool-output`` chunk of this tool call (a ``tool-output`` chunk nests, its path
    extended); ``custom`` and ``data-*`` chunks pass through unwrapped, as the run's own.

    ``write`` goes straight to the client: the chunks are not the run's model output, so the
    run's output processors do not see them (a sub-agent's own processors already did).
    """

    def __init__(
        self, emit: Callable[[Chunk], Awaitable[object]], send: Callable[[Chunk], Awaitable[object]],
        run_id: str, tool_call_id: str, tool_name: str,
    ) -> None:
        super().__init__(emit, run_id)
        self._send = send
        self.tool_call_id = tool_call_id
        self.tool_name = tool_name

    @property
    def can_write(self) -> bool:
        return True

    async def write(self, chunk: Chunk) -> None:
        if chunk.is_data:
            return await self.custom(chunk)
        inner = chunk.payload.path if chunk.type == "tool-output" else []
        wrapped = Chunk.of(ToolOutput(self.tool_call_id, self.tool_name, chunk, [self.tool_name, *inner]),
                           run_id=self._run_id)
        await self._send(wrapped)


@dataclass
class StepResult:
    """What one step produced (``steps`` in hook args)."""

    step_number: int
    text: str = ""
    reasoning_text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_results: list[ToolResult] = field(default_factory=list)
    finish_reason: FinishReason = "unknown"
    usage: Usage = field(default_factory=Usage)
    tripwire: Tripwire | None = None
    model_id: str = ""


@dataclass
class OutputResult:
    """``result`` of ``process_output_result``."""

    text: str
    usage: Usage
    finish_reason: FinishReason
    steps: list[StepResult]


@dataclass
class RunInfo:
    """Which run a hook invocation belongs to (remote processors receive all of it)."""

    run_id: str = ""
    agent_id: str = ""
    thread_id: str = ""
    resource_id: str = ""
    step_number: int = 0
    processor_index: int = 0


@dataclass(kw_only=True)
class _Common:
    abort: AbortFn
    retry_count: int = 0
    request_context: dict[str, Any] = field(default_factory=dict)
    tracing_context: Any = None
    """The OpenTelemetry ``Context`` of this hook's span."""
    abort_signal: Any = None
    """An ``asyncio.Event`` set when the run is cancelled."""
    run: RunInfo = field(default_factory=RunInfo)


@dataclass(kw_only=True)
class ProcessInputArgs(_Common):
    messages: list[Message]
    system_messages: list[SystemMessage]
    message_list: MessageList
    state: dict[str, Any]
    writer: ProcessorStreamWriter | None = None


@dataclass(kw_only=True)
class ProcessInputStepArgs(_Common):
    messages: list[Message]
    message_list: MessageList
    step_number: int
    steps: list[StepResult]
    system_messages: list[SystemMessage]
    model: str
    tool_choice: Any
    active_tools: list[str]
    tools: dict[str, Any]
    provider_options: dict[str, Any]
    model_settings: Any
    structured_output: dict[str, Any] | None
    state: dict[str, Any]
    writer: ProcessorStreamWriter | None = None


@dataclass(kw_only=True)
class ProcessLLMRequestArgs(_Common):
    prompt: Prompt
    model: str
    step_number: int
    steps: list[StepResult]
    state: dict[str, Any]
    writer: ProcessorStreamWriter | None = None


@dataclass(kw_only=True)
class ProcessLLMResponseArgs(_Common):
    chunks: list[Chunk]
    model: str
    step_number: int
    steps: list[StepResult]
    state: dict[str, Any]
    from_cache: bool = False
    warnings: list[Any] = field(default_factory=list)
    request: Any = None
    raw_response: Any = None
    writer: ProcessorStreamWriter | None = None


@dataclass(kw_only=True)
class ProcessAPIErrorArgs(_Common):
    error: Exception
    messages: list[Message]
    message_list: MessageList
    step_number: int
    steps: list[StepResult]
    state: dict[str, Any]
    writer: ProcessorStreamWriter | None = None


@dataclass(kw_only=True)
class ProcessOutputStreamArgs(_Common):
    part: Chunk
    stream_parts: list[Chunk]
    state: dict[str, Any]
    message_list: MessageList
    writer: ProcessorStreamWriter | None = None


@dataclass(kw_only=True)
class ProcessOutputStepArgs(_Common):
    messages: list[Message]
    message_list: MessageList
    step_number: int
    finish_reason: FinishReason
    tool_calls: list[ToolCall]
    text: str
    usage: Usage
    system_messages: list[SystemMessage]
    steps: list[StepResult]
    state: dict[str, Any]
    provider_metadata: dict[str, Any] | None = None
    writer: ProcessorStreamWriter | None = None


@dataclass(kw_only=True)
class ProcessToolResultArgs(_Common):
    messages: list[Message]
    message_list: MessageList
    step_number: int
    tool_name: str
    tool_call_id: str
    args: Any
    result: Any
    system_messages: list[SystemMessage]
    steps: list[StepResult]
    state: dict[str, Any]
    provider_executed: bool = False
    writer: ProcessorStreamWriter | None = None


@dataclass(kw_only=True)
class BeforeToolCallArgs(_Common):
    """``beforeToolCall`` served by a processor: return ``{"proceed": False, "output": ...}`` (or
    a ``ToolBeforeHookResult``) to skip the tool, None to let it run."""

    tool_name: str
    tool_call_id: str
    args: Any
    state: dict[str, Any]
    writer: ProcessorStreamWriter | None = None


@dataclass(kw_only=True)
class AfterToolCallArgs(_Common):
    """``afterToolCall`` served by a processor: sees the tool's ``output`` or ``error``."""

    tool_name: str
    tool_call_id: str
    args: Any
    state: dict[str, Any]
    output: Any = None
    error: str | None = None
    writer: ProcessorStreamWriter | None = None


@dataclass(kw_only=True)
class TransformToolPayloadArgs(_Common):
    """``transformToolPayload`` (the Mastra Agent's ``hooks.transform``): return ``payload`` as
    ``target`` (``display`` or ``transcript``) shows it in ``phase`` (``input``, ``output`` or
    ``error``). Returning None shows ``{"message": "Tool <phase> payload unavailable"}``."""

    target: str
    phase: str
    tool_name: str
    tool_call_id: str
    payload: Any
    state: dict[str, Any]
    writer: ProcessorStreamWriter | None = None


@dataclass(kw_only=True)
class ProcessOutputResultArgs(_Common):
    messages: list[Message]
    message_list: MessageList
    state: dict[str, Any]
    result: OutputResult
    writer: ProcessorStreamWriter | None = None


@dataclass(kw_only=True)
class OnDelegationStartArgs(_Common):
    """``onDelegationStart``: the model called the sub-agent tool ``agent-<key>``. Return None to
    let it run as asked, ``{"proceed": False, "rejectionReason": ...}`` to reject it (the tool
    returns ``[Delegation Rejected] <reason>``), or ``{"modifiedPrompt" | "modifiedInstructions" |
    "modifiedMaxSteps": ...}`` to change it."""

    key: str
    sub_agent_id: str
    tool_call_id: str
    prompt: str
    instructions: str
    max_steps: int
    iteration: int
    state: dict[str, Any]
    writer: ProcessorStreamWriter | None = None


@dataclass(kw_only=True)
class OnDelegationCompleteArgs(_Common):
    """``onDelegationComplete``: the sub-agent tool ended. Return ``{"feedback": ...}`` to add an
    assistant message to the parent's memory, ``{"bail": True}`` to end the parent's run after
    this step."""

    key: str
    sub_agent_id: str
    tool_call_id: str
    prompt: str
    result: Any = None
    success: bool = True
    error: str = ""
    duration: float = 0.0
    state: dict[str, Any]
    writer: ProcessorStreamWriter | None = None

@dataclass(kw_only=True)
class ResolveAgentArgs(_Common):
    """``resolveAgent``: the agent as its variants resolved it for this call. In a processor
    process ``agent`` is the agent's proto JSON form (a dict: ``agent["model"]``,
    ``agent["tools"]``, ...); in the server's own process it is the ``Agent`` itself. Return
    ``None`` (no change) or a dict of overrides: ``model``, ``instructions`` (a string or a list
    of them), ``tools`` (names), ``input_processors`` / ``output_processors`` /
    ``error_processors`` (ids), ``default_options``."""

    agent: Any
    state: dict[str, Any] = field(default_factory=dict)
    writer: ProcessorStreamWriter | None = None
