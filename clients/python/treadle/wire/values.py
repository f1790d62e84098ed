"""Proto <-> domain for the values hook arguments carry: message-list snapshots, prompts, steps,
tool choice and tool specs, API errors. ``server_hooks`` and ``sdk_hooks`` assemble them per hook.

Messages, chunks, JSON values and enums go through ``data`` (one converter for each);
model settings, tool choice and structured output through ``convert``, as in call options.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..core.chunks import Chunk
from ..core.errors import APICallError, InvalidArgumentError
from ..core.message_list import MessageList, Source
from ..core.messages import (
    FilePart,
    Message,
    Prompt,
    PromptMessage,
    PromptPart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from ..core.args import OutputResult, StepResult
from ..core.specs import ToolSpec
from ..v1 import agent_pb2, chunk_pb2, processor_service_pb2, prompt_pb2
from .data import (
    build,
    chunk_from_proto,
    chunk_to_proto,
    dict_to_struct,
    enum_to_pb,
    enum_to_py,
    fill,
    message_from_proto,
    message_to_proto,
    opt_struct,
    py_to_value,
    struct_to_dict,
    system_messages_from_proto,
    system_messages_to_proto,
    value_to_py,
)

pb = processor_service_pb2
_SOURCE = pb.MessageSource.DESCRIPTOR
_TOOL_MODE = agent_pb2.ToolChoiceMode.DESCRIPTOR
_ROLE = prompt_pb2.PromptRole.DESCRIPTOR

# --- the message list ----------------------------------------------------------------------------


def sources_of(message_list: MessageList) -> dict[str, Source]:
    """Message id -> source, in one pass over the list's views."""
    out: dict[str, Source] = {m.id: "context" for m in message_list.get_all()}
    for source, view in (
        ("memory", message_list.get_remembered()),
        ("input", message_list.get_input()),
        ("response", message_list.get_response()),
    ):
        for m in view:
            out[m.id] = source  # type: ignore[assignment]
    return out


def snapshot_of(message_list: MessageList, out: pb.MessageListSnapshot | None = None) -> pb.MessageListSnapshot:
    """Every non-system message with its source, and the untagged system messages.

    Tagged system messages (retry feedback) are the loop's own and are not sent.
    """
    out = out if out is not None else pb.MessageListSnapshot()
    out.SetInParent()
    sources = sources_of(message_list)
    for message in message_list.get_all():
        listed = out.messages.add(source=enum_to_pb(_SOURCE, sources[message.id]))
        message_to_proto(message, listed.message)
    system_messages_to_proto(message_list.system_messages, out.system_messages)
    return out


def message_list_from_snapshot(
    snapshot: pb.MessageListSnapshot, *, thread_id: str = "", resource_id: str = ""
) -> MessageList:
    """A local ``MessageList`` that behaves as the server's did when the hook was invoked."""
    ml = MessageList(thread_id=thread_id, resource_id=resource_id)
    for i, listed in enumerate(snapshot.messages):
        source = enum_to_py(_SOURCE, listed.source) or "input"
        ml.add(message_from_proto(listed.message, f"message_list.messages[{i}]"), source)  # type: ignore[arg-type]
    ml.replace_all_system_messages(system_messages_from_proto(snapshot.system_messages))
    return ml


def replacement_of(message_list: MessageList, out: pb.MessageListReplacement) -> None:
    """The whole list after a hook's edits, with sources."""
    out.SetInParent()
    sources = sources_of(message_list)
    for message in message_list.get_all():
        message_to_proto(message, out.messages.add())
        out.sources.append(enum_to_pb(_SOURCE, sources[message.id]))


def replacement_from_proto(
    repl: pb.MessageListReplacement, path: str
) -> list[tuple[Message, Source | None]]:
    """Decoded messages with their sources (None: keep or derive). Raises InvalidArgumentError."""
    if len(repl.sources) > len(repl.messages):
        raise InvalidArgumentError(f"{path}.sources has more entries than messages")
    out: list[tuple[Message, Source | None]] = []
    seen: set[str] = set()
    for i, m in enumerate(repl.messages):
        if not m.id:
            raise InvalidArgumentError(f"{path}.messages[{i}].id is required")
        if m.id in seen:
            raise InvalidArgumentError(f"{path}.messages[{i}].id {m.id!r} appears twice")
        seen.add(m.id)
        source = enum_to_py(_SOURCE, repl.sources[i]) if i < len(repl.sources) else None
        out.append((message_from_proto(m, f"{path}.messages[{i}]"), source))  # type: ignore[arg-type]
    return out


def apply_replacement(message_list: MessageList, items: Sequence[tuple[Message, Source | None]]) -> None:
    """Make ``message_list`` hold exactly ``items``, in that order.

    Messages already in the list keep their object identity (the loop holds references, e.g. to
    the current step's assistant message): a changed one is updated in place.
    """
    current = {m.id: m for m in message_list.get_all()}
    sources = sources_of(message_list)
    message_list.remove_by_ids(list(current))
    for message, source in items:
        existing = current.get(message.id)
        if existing is not None:
            if existing != message:
                for name in ("role", "content", "created_at", "thread_id", "resource_id", "type"):
                    setattr(existing, name, getattr(message, name))
            message = existing
        derived = sources.get(message.id) or ("response" if message.role == "assistant" else "input")
        message_list.add(message, source or derived)


# --- prompts -------------------------------------------------------------------------------------

_PROMPT_PART_FIELD: dict[type, str] = {
    TextPart: "text",
    ReasoningPart: "reasoning",
    FilePart: "file",
    ToolCallPart: "tool_call",
    ToolResultPart: "tool_result",
}
_PROMPT_PART_CLASS = {v: k for k, v in _PROMPT_PART_FIELD.items()}


def prompt_to_proto(prompt: Prompt, out: Any) -> None:
    for message in prompt:
        item = out.add(role=enum_to_pb(_ROLE, message.role))
        for part in message.content:
            fill(getattr(item.content.add(), _PROMPT_PART_FIELD[type(part)]), part)
        if message.provider_options:
            dict_to_struct(message.provider_options, item.provider_options)


def prompt_from_proto(items: Iterable[prompt_pb2.PromptMessage], path: str) -> Prompt:
    prompt: Prompt = []
    for i, item in enumerate(items):
        role = enum_to_py(_ROLE, item.role)
        if role is None:
            raise InvalidArgumentError(f"{path}[{i}].role is required")
        parts: list[PromptPart] = []
        for j, part in enumerate(item.content):
            kind = part.WhichOneof("part")
            if kind is None:
                raise InvalidArgumentError(f"{path}[{i}].content[{j}]: no part kind is set")
            parts.append(build(_PROMPT_PART_CLASS[kind], getattr(part, kind), f"{path}[{i}].content[{j}]"))
        prompt.append(PromptMessage(role, parts, opt_struct(item, "provider_options")))  # type: ignore[arg-type]
    return prompt


# --- steps, results, chunks ----------------------------------------------------------------------


def steps_to_proto(steps: Iterable[StepResult], out: Any) -> None:
    for step in steps:
        fill(out.add(), step)


def steps_from_proto(items: Iterable[chunk_pb2.StepResult], path: str = "steps") -> list[StepResult]:
    return [build(StepResult, s, f"{path}[{i}]") for i, s in enumerate(items)]


def chunks_to_proto(chunks: Iterable[Chunk], out: Any) -> None:
    for chunk in chunks:
        chunk_to_proto(chunk, out.add())


def chunks_from_proto(items: Iterable[chunk_pb2.Chunk], path: str) -> list[Chunk]:
    return [chunk_from_proto(c, f"{path}[{i}]") for i, c in enumerate(items)]


def output_result_to_proto(result: OutputResult, out: pb.OutputResult) -> None:
    out.text = result.text
    fill(out.usage, result.usage)
    out.finish_reason = enum_to_pb(chunk_pb2.FinishReason.DESCRIPTOR, result.finish_reason)
    steps_to_proto(result.steps, out.steps)


def output_result_from_proto(msg: pb.OutputResult) -> OutputResult:
    from ..core.chunks import Usage

    return OutputResult(
        text=msg.text,
        usage=build(Usage, msg.usage, "result.usage"),
        finish_reason=enum_to_py(chunk_pb2.FinishReason.DESCRIPTOR, msg.finish_reason) or "unknown",  # type: ignore[arg-type]
        steps=steps_from_proto(msg.steps, "result.steps"),
    )


# --- step configuration --------------------------------------------------------------------------


def tool_choice_from_proto(msg: agent_pb2.ToolChoice) -> Any:
    kind = msg.WhichOneof("choice")
    if kind == "mode":
        return enum_to_py(_TOOL_MODE, msg.mode) or "auto"
    if kind == "tool_name":
        return {"type": "tool", "tool_name": msg.tool_name}
    return "auto"


def tools_to_proto(tools: Mapping[str, Any], out: Any) -> None:
    for name, t in tools.items():
        item = out.add(name=name, description=getattr(t, "description", "") or "")
        schema = getattr(t, "input_schema", None)
        if schema is not None:
            dict_to_struct(schema, item.input_schema)
        output_schema = getattr(t, "output_schema", None)
        if output_schema is not None:
            dict_to_struct(output_schema, item.output_schema)


def tools_from_proto(items: Iterable[prompt_pb2.ToolDefinition]) -> dict[str, ToolSpec]:
    """Remote processors see tools as specs (name, description, schema): never executable."""
    return {
        t.name: ToolSpec(t.name, t.description, opt_struct(t, "input_schema") or {"type": "object", "properties": {}})
        for t in items
    }


# --- API errors ----------------------------------------------------------------------------------


def api_error_to_proto(error: BaseException, out: pb.APIError) -> None:
    out.SetInParent()
    if isinstance(error, APICallError):
        out.message = error.message
        out.status_code = error.status_code or 0
        if error.body is not None:
            py_to_value(error.body, out.body)
        out.provider, out.model_id, out.is_retryable = error.provider, error.model_id, error.is_retryable
    else:
        out.message = str(error) or type(error).__name__


def api_error_from_proto(msg: pb.APIError) -> APICallError:
    return APICallError(
        msg.message,
        provider=msg.provider,
        model_id=msg.model_id,
        status_code=msg.status_code or None,
        body=value_to_py(msg.body) if msg.HasField("body") else None,
        is_retryable=msg.is_retryable,
    )
