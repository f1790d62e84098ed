"""Hook invocations over the wire, processor side (for processor SDKs written in Python):
``Invocation`` -> the same args dataclass an in-process hook gets, over a LOCAL ``MessageList``
rebuilt from the snapshot; the hook's return value (and its edits of that list) ->
``InvocationResult``.

Usage, for one invocation of a non-stream hook::

    args, ml = build_args(inv, abort=abort, writer=writer, state=state)
    before = snapshot_before(inv)
    try:
        returned = await maybe_await(getattr(processor, hook)(args))
    except TripwireError as e:
        result = encode_abort(inv.invocation_id, e)
    except Exception as e:
        result = encode_error(inv.invocation_id, e)
    else:
        result = encode_result(hook, returned, args, ml, before, invocation_id=inv.invocation_id)

``process_output_stream`` invocations carry several chunks with windowed delivery: run the hook
once per ``iter_stream_args`` item and answer with ``encode_stream_result``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

from google.protobuf import json_format
from opentelemetry import propagate
from opentelemetry.context import Context

from ..core.chunks import Chunk, TextDelta, ToolCall, Usage
from ..core.errors import TripwireError
from ..core.message_list import MessageList
from ..core import args as a
from ..core.results import (
    MessagesResult,
    ProcessInputStepResult,
    apply_messages_returned,
    as_input_step_result,
    as_llm_request_result,
    wants_retry,
)
from ..core.specs import ModelSettings
from ..v1 import chunk_pb2
from ..v1 import processor_service_pb2 as pb
from .settings import (
    model_settings_from_proto,
    model_settings_to_proto,
    structured_output_from_proto,
    structured_output_to_proto,
    tool_choice_to_proto,
)
from .frames import varint
from .hook_names import HOOK_NAME
from .data import (
    build,
    chunk_to_proto,
    dict_to_struct,
    enum_to_py,
    opt_struct,
    py_to_value,
    struct_to_dict,
    system_messages_to_proto,
    value_to_py,
)
from .values import (
    api_error_from_proto,
    chunks_from_proto,
    chunks_to_proto,
    message_list_from_snapshot,
    output_result_from_proto,
    prompt_from_proto,
    prompt_to_proto,
    replacement_of,
    snapshot_of,
    steps_from_proto,
    tool_choice_from_proto,
    tools_from_proto,
)

_FINISH = chunk_pb2.FinishReason.DESCRIPTOR


def _hook_of(inv: pb.Invocation) -> str:
    hook = HOOK_NAME.get(inv.hook)
    if hook is None or inv.WhichOneof("args") != hook:
        raise ValueError(f"invocation {inv.invocation_id!r}: hook {inv.hook} does not match its args")
    return hook


def extract_trace_context(inv: pb.Invocation) -> Context:
    """The OpenTelemetry context of the server's hook span: start the processor's span in it."""
    carrier = {k: v for k, v in (
        ("traceparent", inv.trace_context.traceparent), ("tracestate", inv.trace_context.tracestate),
        ("baggage", inv.trace_context.baggage),
    ) if v}
    return propagate.extract(carrier)


def snapshot_before(inv: pb.Invocation) -> pb.MessageListSnapshot | None:
    """The invocation's message-list snapshot (pass it to ``encode_result``), if it has one."""
    branch = getattr(inv, inv.WhichOneof("args") or "process_input")
    return branch.message_list if branch.DESCRIPTOR.fields_by_name.get("message_list") else None


def _common(inv: pb.Invocation, abort: Any, writer: Any, state: dict[str, Any], abort_signal: Any,
            tracing_context: Any) -> dict[str, Any]:
    return {
        "abort": abort,
        "retry_count": inv.retry_count,
        "request_context": struct_to_dict(inv.request_context) if inv.HasField("request_context") else {},
        "tracing_context": tracing_context if tracing_context is not None else extract_trace_context(inv),
        "abort_signal": abort_signal,
        "run": a.RunInfo(inv.run_id, inv.agent_id, inv.thread_id, inv.resource_id, inv.step_number,
                         inv.processor_index),
        "state": state,
        "writer": writer,
    }


def build_args(
    inv: pb.Invocation, *, abort: Any, state: dict[str, Any], writer: Any = None,
    abort_signal: Any = None, tracing_context: Context | None = None,
) -> tuple[Any, MessageList]:
    """The hook's args dataclass and the local message list it edits (empty for hooks that have
    none). Raises ``ValueError`` for ``process_output_stream`` (use ``iter_stream_args``) and
    ``InvalidArgumentError`` for an undecodable invocation."""
    hook = _hook_of(inv)
    if hook == "process_output_stream":
        raise ValueError("process_output_stream invocations carry several chunks: use iter_stream_args")
    c = _common(inv, abort, writer, state, abort_signal, tracing_context)
    x = getattr(inv, hook)
    n = inv.step_number
    snap = getattr(x, "message_list", None)
    ml = (message_list_from_snapshot(snap, thread_id=inv.thread_id, resource_id=inv.resource_id)
          if snap is not None else MessageList(thread_id=inv.thread_id, resource_id=inv.resource_id))
    steps = steps_from_proto(x.steps) if hasattr(x, "steps") else []
    system = list(ml.system_messages)
    args: Any
    if hook == "process_input":
        args = a.ProcessInputArgs(messages=ml.get_input(), system_messages=system, message_list=ml, **c)
    elif hook == "process_input_step":
        args = a.ProcessInputStepArgs(
            messages=ml.get_all(), message_list=ml, step_number=n, steps=steps, system_messages=system,
            model=x.model, tool_choice=tool_choice_from_proto(x.tool_choice), active_tools=list(x.active_tools),
            tools=tools_from_proto(x.tools), provider_options=struct_to_dict(x.provider_options),
            model_settings=(model_settings_from_proto(x.model_settings, "model_settings")
                            if x.HasField("model_settings") else ModelSettings()),
            structured_output=structured_output_from_proto(x.structured_output) if x.HasField("structured_output") else None,
            **c,
        )
    elif hook == "process_llm_request":
        args = a.ProcessLLMRequestArgs(prompt=prompt_from_proto(x.prompt, "prompt"), model=x.model,
                                       step_number=n, steps=steps, **c)
    elif hook == "process_llm_response":
        args = a.ProcessLLMResponseArgs(chunks=chunks_from_proto(x.chunks, "chunks"), model=x.model,
                                        step_number=n, steps=steps, from_cache=x.from_cache, **c)
    elif hook == "process_api_error":
        args = a.ProcessAPIErrorArgs(error=api_error_from_proto(x.error), messages=ml.get_all(),
                                     message_list=ml, step_number=n, steps=steps, **c)
    elif hook == "process_output_step":
        args = a.ProcessOutputStepArgs(
            messages=ml.get_all(), message_list=ml, step_number=n,
            finish_reason=enum_to_py(_FINISH, x.finish_reason) or "unknown",  # type: ignore[arg-type]
            tool_calls=[build(ToolCall, t, f"tool_calls[{i}]") for i, t in enumerate(x.tool_calls)],
            text=x.text, usage=build(Usage, x.usage, "usage"), system_messages=system, steps=steps,
            provider_metadata=opt_struct(x, "provider_metadata"), **c,
        )
    elif hook == "before_tool_call":
        args = a.BeforeToolCallArgs(tool_name=x.tool_name, tool_call_id=x.tool_call_id,
                                    args=value_to_py(x.args), **c)
    elif hook == "after_tool_call":
        args = a.AfterToolCallArgs(
            tool_name=x.tool_name, tool_call_id=x.tool_call_id, args=value_to_py(x.args),
            output=value_to_py(x.output) if x.HasField("output") else None, error=x.error or None, **c,
        )
    elif hook == "on_delegation_start":
        args = a.OnDelegationStartArgs(
            key=x.key, sub_agent_id=x.sub_agent_id, tool_call_id=x.tool_call_id, prompt=x.prompt,
            instructions=x.instructions, max_steps=x.max_steps, iteration=x.iteration, **c,
        )
    elif hook == "on_delegation_complete":
        args = a.OnDelegationCompleteArgs(
            key=x.key, sub_agent_id=x.sub_agent_id, tool_call_id=x.tool_call_id, prompt=x.prompt,
            result=value_to_py(x.result) if x.HasField("result") else None, success=x.success, error=x.error,
            duration=x.duration.ToNanoseconds() / 1e9, **c,
        )
    elif hook == "transform_tool_payload":
        args = a.TransformToolPayloadArgs(
            target=x.target, phase=x.phase, tool_name=x.tool_name, tool_call_id=x.tool_call_id,
            payload=value_to_py(x.payload) if x.HasField("payload") else None, **c,
        )
    elif hook == "process_tool_result":
        args = a.ProcessToolResultArgs(
            messages=ml.get_all(), message_list=ml, step_number=n, tool_name=x.tool_name,
            tool_call_id=x.tool_call_id, args=value_to_py(x.args), result=value_to_py(x.result),
            system_messages=system, steps=steps, provider_executed=x.provider_executed, **c,
        )
    elif hook == "resolve_agent":
        args = a.ResolveAgentArgs(agent=json_format.MessageToDict(x.agent), **c)
    else:
        args = a.ProcessOutputResultArgs(messages=ml.get_response(), message_list=ml,
                                         result=output_result_from_proto(x.result), **c)
    return args, ml


def iter_stream_args(
    inv: pb.Invocation, *, abort: Any, state: dict[str, Any], stream_parts: list[Chunk],
    writer: Any = None, abort_signal: Any = None, tracing_context: Context | None = None,
    message_list: MessageList | None = None,
) -> Iterator[a.ProcessOutputStreamArgs]:
    """One args per chunk, in order; each chunk joins ``stream_parts`` (keep one list per run)
    just before its args are yielded. The message list is not sent on this hot path: pass the
    run's last known one, or an empty list is used."""
    if _hook_of(inv) != "process_output_stream":
        raise ValueError("iter_stream_args is for process_output_stream invocations")
    c = _common(inv, abort, writer, state, abort_signal, tracing_context)
    ml = message_list if message_list is not None else MessageList(thread_id=inv.thread_id,
                                                                   resource_id=inv.resource_id)
    for part in _parts(inv.process_output_stream.parts):
        stream_parts.append(part)
        yield a.ProcessOutputStreamArgs(part=part, stream_parts=stream_parts, message_list=ml, **c)


_AGENT = chunk_pb2.CHUNK_FROM_AGENT


def _parts(parts: Sequence[chunk_pb2.Chunk]) -> list[Chunk]:
    """``chunks_from_proto(parts, "parts")``, with the stream's common case, a plain text delta
    from the agent, read directly rather than through the descriptor walk."""
    out: list[Chunk] = []
    for i, c in enumerate(parts):
        if (c.WhichOneof("chunk") == "text_delta" and getattr(c, "from") == _AGENT and not c.HasField("metadata")
                and not c.text_delta.HasField("provider_metadata")):
            d = c.text_delta
            out.append(Chunk(type="text-delta", payload=TextDelta(d.id, d.text), run_id=c.run_id, from_="AGENT"))
        else:
            out.extend(chunks_from_proto([c], f"parts[{i}]"))
    return out


# --- return value -> InvocationResult ------------------------------------------------------------


MAX_STATE_LEVELS = 96
"""The most Struct levels a state may take inside a result and still decode on the server."""


def _struct_levels(obj: Mapping[str, Any]) -> int:
    """Message levels of ``obj`` as a Struct: the Struct, each map entry, each nested Value."""

    def value(v: Any) -> int:
        if isinstance(v, Mapping):
            return 1 + _struct_levels(v)
        if isinstance(v, (list, tuple)):
            return 2 + max((value(x) for x in v), default=0)
        return 1

    return 1 + max((1 + value(v) for v in obj.values()), default=0)


def check_state_depth(state: Mapping[str, Any]) -> None:
    """``ValueError`` saying so when ``state`` nests too deep for the server to decode.

    Protobuf stops decoding at 100 levels, and the server would have to end the stream; refused
    here, only this call fails, with a message that says why.
    """
    levels = _struct_levels(state)
    if levels > MAX_STATE_LEVELS:
        raise ValueError(
            f"processor state is nested too deep to send ({levels} protobuf levels, at most "
            f"{MAX_STATE_LEVELS}: about {MAX_STATE_LEVELS // 3} levels of nested objects)"
        )


def _envelope(invocation_id: str, state: Mapping[str, Any] | None, state_version: int,
              custom_chunks: Iterable[Chunk]) -> pb.InvocationResult:
    out = pb.InvocationResult(invocation_id=invocation_id)
    if state is not None:
        check_state_depth(state)
        dict_to_struct(state, out.state.value)
        out.state.version = state_version
    for chunk in custom_chunks:
        out.custom_chunks.add().CopyFrom(chunk_to_proto(chunk).data)
    return out


def encode_abort(
    invocation_id: str, error: TripwireError, *, state: Mapping[str, Any] | None = None,
    state_version: int = 0, custom_chunks: Iterable[Chunk] = (),
) -> pb.InvocationResult:
    """``abort()`` was called."""
    out = _envelope(invocation_id, state, state_version, custom_chunks)
    _abort_to_proto(error, out.abort)
    return out


def encode_error(
    invocation_id: str, error: BaseException, *, state: Mapping[str, Any] | None = None,
    state_version: int = 0, custom_chunks: Iterable[Chunk] = (),
) -> pb.InvocationResult:
    """The hook raised something other than an abort."""
    out = _envelope(invocation_id, state, state_version, custom_chunks)
    out.error.message = str(error) or type(error).__name__
    return out


def _abort_to_proto(error: TripwireError, out: pb.AbortOutcome) -> None:
    out.reason, out.retry = error.reason, error.retry
    if error.metadata is not None:
        py_to_value(error.metadata, out.metadata)


def encode_result(
    hook: str, returned: Any, args: Any, message_list: MessageList,
    snapshot_before: pb.MessageListSnapshot | None, *, invocation_id: str = "",
    state: Mapping[str, Any] | None = None, state_version: int = 0, custom_chunks: Iterable[Chunk] = (),
) -> pb.InvocationResult:
    """The answer for a hook that returned ``returned``, applying it to the local list as the
    server's chain runner would, then sending the whole list if it changed (likewise the system
    messages). Raises ``ValueError`` for a return value the hook may not give (send
    ``encode_error``). Set ``state`` (with ``state_version`` = the last version + 1) only when
    the hook changed it."""
    out = _envelope(invocation_id, state, state_version, custom_chunks)
    if hook == "transform_tool_payload":
        out.transformed.SetInParent()
        if returned is not None:
            py_to_value(returned, out.transformed.payload)
        return out
    if hook == "resolve_agent":
        if returned is None:
            out.unchanged.SetInParent()
        else:
            agent_overrides_to_proto(returned, out.agent_overrides)
        return out
    if hook in ("before_tool_call", "after_tool_call"):
        skip = _skip_of(returned) if hook == "before_tool_call" else None
        if skip is not None:
            out.skip_tool.SetInParent()
            if skip[0] is not None:
                py_to_value(skip[0], out.skip_tool.output)
        else:
            out.unchanged.SetInParent()
        return out
    if hook in ("on_delegation_start", "on_delegation_complete"):
        _delegation_outcome(hook, returned, out)
        return out
    replace = pb.ReplaceOutcome()
    if hook == "process_input_step":
        returned = _input_step_result(returned, replace)
    elif hook == "process_llm_request":
        _llm_request_result(returned, replace)
        returned = None
    elif hook == "process_api_error":
        if wants_retry(returned):
            out.retry.SetInParent()
        returned = None
    elif hook in ("process_llm_response", "process_output_stream"):
        returned = None
    _apply_returned(hook, returned, message_list, snapshot_before)
    if snapshot_before is not None:
        _diff_list(hook, message_list, snapshot_before, replace, out)
    if out.HasField("retry"):
        return out
    if replace.ListFields():
        out.replace.CopyFrom(replace)
    else:
        out.unchanged.SetInParent()
    return out


def _delegation_outcome(hook: str, returned: Any, out: pb.InvocationResult) -> None:
    """A delegation hook's dict (or dataclass) answer, in the framework's camelCase or snake_case."""
    if returned is None:
        out.unchanged.SetInParent()
        return
    r = returned if isinstance(returned, Mapping) else vars(returned)

    def get(camel: str) -> Any:
        snake = "".join(f"_{ch.lower()}" if ch.isupper() else ch for ch in camel)
        return r.get(camel, r.get(snake))

    if hook == "on_delegation_start":
        d = out.delegation_start
        d.reject = get("proceed") is False
        d.rejection_reason = str(get("rejectionReason") or "")
        if get("modifiedPrompt") is not None:
            d.modified_prompt = str(get("modifiedPrompt"))
        if get("modifiedInstructions") is not None:
            d.modified_instructions = str(get("modifiedInstructions"))
        if get("modifiedMaxSteps") is not None:
            d.modified_max_steps = int(get("modifiedMaxSteps"))
    else:
        out.delegation_complete.feedback = str(get("feedback") or "")
        out.delegation_complete.bail = bool(get("bail"))


_OVERRIDE_KEYS = {
    "model": "model", "instructions": "instructions", "tools": "tools",
    "input_processors": "inputProcessors", "inputProcessors": "inputProcessors",
    "output_processors": "outputProcessors", "outputProcessors": "outputProcessors",
    "error_processors": "errorProcessors", "errorProcessors": "errorProcessors",
    "default_options": "defaultOptions", "defaultOptions": "defaultOptions",
}


def agent_overrides_to_proto(returned: Any, out: pb.AgentOverrides) -> None:
    """What ``resolve_agent`` returned (a dict; snake_case or camelCase keys) as
    ``AgentOverrides``: ``instructions`` a string or a list of strings, ``tools`` names,
    processors ids (or ``ProcessorRef`` dicts), ``default_options`` call options in proto JSON
    form. ``ValueError`` names an unknown key."""
    if not isinstance(returned, Mapping):
        raise ValueError(f"resolve_agent returns None or a dict of overrides, not {type(returned).__name__}")
    data: dict[str, Any] = {}
    for key, value in returned.items():
        name = _OVERRIDE_KEYS.get(key)
        if name is None:
            raise ValueError(f"resolve_agent returned an unknown override {key!r}: use "
                             "model, instructions, tools, input_processors, output_processors, "
                             "error_processors or default_options")
        if name == "instructions":
            items = [value] if isinstance(value, str) else list(value)
            value = {"messages": [{"content": v} if isinstance(v, str) else v for v in items]}
        elif name == "tools":
            value = {"names": list(value)}
        elif name.endswith("Processors"):
            value = {"processors": [{"id": v} if isinstance(v, str) else v for v in value]}
        data[name] = value
    try:
        json_format.ParseDict(data, out)
    except json_format.ParseError as e:
        raise ValueError(f"resolve_agent returned overrides that do not fit AgentOverrides: {e}") from None
    out.SetInParent()


def _skip_of(returned: Any) -> tuple[Any] | None:
    """``(output,)`` when ``beforeToolCall`` returned ``{"proceed": False, "output": ...}`` (or an
    object with ``proceed`` and ``output``), else None (the tool runs)."""
    if isinstance(returned, dict) and "proceed" in returned:
        return None if returned["proceed"] else (returned.get("output"),)
    if returned is not None and hasattr(returned, "proceed"):
        return None if returned.proceed else (getattr(returned, "output", None),)
    return None


def _input_step_result(returned: Any, replace: pb.ReplaceOutcome) -> Any:
    returned = as_input_step_result(returned)
    if not isinstance(returned, ProcessInputStepResult):
        return returned
    changes = returned.set_fields()
    s = replace.step_overrides
    if "tools" in changes:
        s.tools.SetInParent()
        s.tools.names.extend(step_tool_names(changes["tools"]))
    if "model" in changes:
        model = changes["model"]
        s.model = model if isinstance(model, str) else f"{model.provider}/{model.model_id}"
    if "tool_choice" in changes:
        tool_choice_to_proto(changes["tool_choice"], s.tool_choice)
    if "active_tools" in changes:
        s.active_tools.names.extend(changes["active_tools"] or [])
    if "provider_options" in changes:
        dict_to_struct(changes["provider_options"] or {}, s.provider_options)
    if "model_settings" in changes:
        s.model_settings.SetInParent()
        model_settings_to_proto(changes["model_settings"], s.model_settings)
    if "structured_output" in changes:
        structured_output_to_proto(changes["structured_output"], s.structured_output)
    messages, system = changes.get("messages"), changes.get("system_messages")
    return MessagesResult(messages, system) if messages is not None or system is not None else None


def step_tool_names(tools: Any) -> list[str]:
    """The names of a ``processInputStep`` ``tools`` result: a mapping's keys (``{**tools, "lookup":
    ...}``), or a list of names or of tools with a ``name``."""
    if tools is None:
        return []
    if isinstance(tools, Mapping):
        return [str(k) for k in tools]
    if isinstance(tools, str):
        raise ValueError("processInputStep tools must be a mapping or a list of names, not a string")
    return [t if isinstance(t, str) else str(getattr(t, "name")) for t in tools]


def _llm_request_result(returned: Any, replace: pb.ReplaceOutcome) -> None:
    try:
        result = as_llm_request_result(returned)
    except ValueError as e:
        raise ValueError(f"processLLMRequest {e}") from None
    if result is None:
        return
    if result.prompt is not None:
        prompt_to_proto(returned.prompt, replace.prompt.messages)
        replace.prompt.SetInParent()
    if returned.response is not None:
        replace.cached_response.SetInParent()
        chunks_to_proto(returned.response, replace.cached_response.chunks)


def _shown_ids(hook: str, snapshot: pb.MessageListSnapshot | None) -> list[str]:
    if snapshot is None:
        return []
    view = {"process_input": pb.MESSAGE_SOURCE_INPUT, "process_output_result": pb.MESSAGE_SOURCE_RESPONSE}.get(hook)
    return [m.message.id for m in snapshot.messages if view is None or m.source == view]


def _apply_returned(hook: str, returned: Any, ml: MessageList, snapshot: pb.MessageListSnapshot | None) -> None:
    """The chain runner's rules for message hooks, applied to the local list."""
    shown = [SimpleNamespace(id=i) for i in _shown_ids(hook, snapshot)]
    apply_messages_returned(returned, ml, shown)  # type: ignore[arg-type]  # apply_diff reads only ids


def _diff_list(hook: str, ml: MessageList, before: pb.MessageListSnapshot, replace: pb.ReplaceOutcome,
               out: pb.InvocationResult) -> None:
    after = snapshot_of(ml)
    if list(after.messages) != list(before.messages):
        target = out.retry.messages if out.HasField("retry") else replace.messages
        replacement_of(ml, target)
    if list(after.system_messages) != list(before.system_messages) and not out.HasField("retry"):
        replace.system_messages.SetInParent()
        system_messages_to_proto(ml.system_messages, replace.system_messages.messages)


def encode_stream_result(
    invocation_id: str, returns: Sequence[Any], parts: Sequence[Chunk], *,
    state: Mapping[str, Any] | None = None, state_version: int = 0, custom_chunks: Iterable[Chunk] = (),
    version: int = 2,
) -> pb.InvocationResult:
    """One outcome per chunk: ``returns[i]`` is what the hook returned for ``parts[i]``, or the
    exception it raised.

    A returned chunk that ``is`` the part means unchanged; ``None`` drops the chunk (the Mastra framework's
    ``return null``); a list of chunks replaces it by those (protocol ``version`` 2; on a
    version-1 stream only lists of at most one chunk can be sent); a ``TripwireError`` aborts
    (later chunks are not answered); any other exception is an error for that chunk (it passes
    unchanged).
    """
    out = _envelope(invocation_id, state, state_version, custom_chunks)
    out.stream.SetInParent()
    for part, returned in zip(parts, returns, strict=True):
        c = out.stream.chunks.add()
        if isinstance(returned, TripwireError):
            _abort_to_proto(returned, c.abort)
            break
        if isinstance(returned, BaseException):
            c.error.message = str(returned) or type(returned).__name__
        elif isinstance(returned, (list, tuple)):
            _chunk_list(returned, part, c, version)
        elif returned is None:
            c.drop.SetInParent()
        elif returned is part:
            c.unchanged.SetInParent()
        else:
            chunk_to_proto(returned, c.replace)
    return out


_UNCHANGED_CHUNK = b"".join((
    varint(pb.StreamOutcomes.DESCRIPTOR.fields_by_name["chunks"].number << 3 | 2), b"\x02",
    varint(pb.ChunkOutcome.DESCRIPTOR.fields_by_name["unchanged"].number << 3 | 2), b"\x00"))
_STREAM_OUTCOMES = varint(pb.InvocationResult.DESCRIPTOR.fields_by_name["stream"].number << 3 | 2)
_INVOCATION_ID = varint(pb.InvocationResult.DESCRIPTOR.fields_by_name["invocation_id"].number << 3 | 2)


def encode_unchanged_stream(invocation_id: str, parts: int) -> bytes:
    """``encode_stream_result`` serialized, for the common answer: each of ``parts`` chunks
    unchanged, no state, no custom chunks (written directly: the answer of nearly every chunk)."""
    ident = invocation_id.encode()
    outcomes = _UNCHANGED_CHUNK * parts
    return b"".join((_INVOCATION_ID, varint(len(ident)), ident, _STREAM_OUTCOMES, varint(len(outcomes)), outcomes))


def _chunk_list(returned: Sequence[Any], part: Chunk, c: pb.ChunkOutcome, version: int) -> None:
    """A hook's list of chunks as one outcome (``chunks`` with version 2)."""
    if not all(isinstance(x, Chunk) for x in returned):
        c.error.message = "process_output_stream returned a list that holds something other than chunks"
    elif version >= 2:
        c.chunks.SetInParent()
        for x in returned:
            chunk_to_proto(x, c.chunks.chunks.add())
    elif not returned:
        c.drop.SetInParent()
    elif len(returned) == 1:
        if returned[0] is part:
            c.unchanged.SetInParent()
        else:
            chunk_to_proto(returned[0], c.replace)
    else:
        c.error.message = "several chunks for one need protocol version 2; the server speaks 1"
