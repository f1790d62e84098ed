"""Hook invocations over the wire, server side: domain hook args -> ``Invocation``, and
``InvocationResult`` -> what an in-process processor would have done.

The processor SDK's direction (``Invocation`` -> args over a local ``MessageList``, and the
hook's return value -> ``InvocationResult``) lives in ``sdk_hooks``; the hook names both use
are in ``hook_names``, below both.

A replacement message list is the hook's *whole* list after its edits: the server makes its
live list hold exactly that (in that order, keeping the objects of unchanged messages), which is
what an in-process hook editing ``message_list`` in place achieves.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from opentelemetry import propagate
from opentelemetry.context import Context
from opentelemetry.propagators.textmap import TextMapPropagator

from ..core.chunks import Chunk, StreamResult
from ..core.errors import InvalidArgumentError, TripwireError
from ..core.message_list import Source
from ..core.messages import Message, Prompt, SystemMessage
from ..core import args as a
from ..core.results import ProcessAPIErrorResult, ProcessInputStepResult, ProcessLLMRequestResult
from ..v1 import chunk_pb2
from ..v1 import processor_service_pb2 as pb
from .settings import (
    model_settings_from_proto,
    model_settings_to_proto,
    structured_output_from_proto,
    structured_output_to_proto,
    tool_choice_to_proto,
)
from .hook_names import HOOK_ENUM, HOOK_NAME
from .frames import varint
from .data import (
    ChunkEncoder,
    chunk_from_proto,
    dict_to_struct,
    enum_to_pb,
    fill,
    py_to_value,
    struct_to_dict,
    system_messages_from_proto,
    value_to_py,
)
from .values import (
    api_error_to_proto,
    apply_replacement,
    chunks_from_proto,
    chunks_to_proto,
    output_result_to_proto,
    prompt_from_proto,
    prompt_to_proto,
    replacement_from_proto,
    snapshot_of,
    steps_to_proto,
    tool_choice_from_proto,
    tools_to_proto,
)

class MalformedResultError(Exception):
    """An answer the server cannot apply (wrong outcome for the hook, wrong count of stream
    outcomes, undecodable replacement): the invocation fails and the failure policy applies."""


class RemoteHookError(Exception):
    """The remote hook failed (``ErrorOutcome``): handled like an in-process hook's exception."""


# --- domain args -> Invocation -------------------------------------------------------------------


def encode_invocation(hook: str, args: Any, *, processor_id: str) -> pb.Invocation:
    """Everything but ``invocation_id``, ``state`` and ``deadline`` (the hub sets those)."""
    inv = _envelope(hook, args, processor_id)
    _ENCODERS[hook](args, getattr(inv, hook))
    return inv


def encode_stream_invocation(parts: Sequence[a.ProcessOutputStreamArgs], *, processor_id: str) -> pb.Invocation:
    """One ``processOutputStream`` invocation carrying several chunks (windowed delivery)."""
    inv = _envelope("process_output_stream", parts[0], processor_id)
    inv.process_output_stream.SetInParent()
    chunks_to_proto((p.part for p in parts), inv.process_output_stream.parts)
    return inv


def stream_envelope(args: a.ProcessOutputStreamArgs, *, processor_id: str) -> bytes:
    """What every ``processOutputStream`` invocation of one processor and step shares (the run's
    identity, request context, trace context), serialized: made once per step, not per chunk."""
    return _envelope("process_output_stream", args, processor_id).SerializeToString()


_STREAM_FIELD = varint(pb.Invocation.DESCRIPTOR.fields_by_name["process_output_stream"].number << 3 | 2)
_PARTS_FIELD = varint(pb.ProcessOutputStreamArgs.DESCRIPTOR.fields_by_name["parts"].number << 3 | 2)


def encode_stream_body(envelope: bytes, parts: Iterable[Chunk]) -> bytes:
    """A serialized ``processOutputStream`` invocation carrying ``parts``: ``envelope`` followed
    by the field that holds the chunks, each chunk serialized once (``chunk_bytes``; no message
    is built around it). The same bytes ``encode_stream_invocation`` serializes to."""
    serialized = [chunk_bytes(c) for c in parts]
    body = b"".join([b for c in serialized for b in (_PARTS_FIELD, varint(len(c)), c)])
    return envelope + _STREAM_FIELD + varint(len(body)) + body


def encode_stream_one(envelope: bytes, chunk: bytes) -> bytes:
    """``encode_stream_body`` of one chunk already serialized (``chunk_bytes``). Concatenated,
    not joined: a few hundred bytes copied cost less than a tuple the collector tracks."""
    n = varint(len(chunk))
    return envelope + _STREAM_FIELD + varint(len(chunk) + len(_PARTS_FIELD) + len(n)) + _PARTS_FIELD + n + chunk


_CHUNKS = ChunkEncoder()
"""Every chunk serialized on this event loop (the encoder remembers the last run and text part)."""


def chunk_bytes(chunk: Chunk) -> bytes:
    """``chunk_to_proto(chunk).SerializeToString()``, byte for byte (``ChunkEncoder``: a text
    delta is written from its strings, without building a message first)."""
    return _CHUNKS.encode(chunk)


def _envelope(hook: str, args: Any, processor_id: str) -> pb.Invocation:
    run: a.RunInfo = args.run
    inv = pb.Invocation(
        processor_id=processor_id, hook=pb.Hook.ValueType(HOOK_ENUM[hook]), run_id=run.run_id, agent_id=run.agent_id,
        thread_id=run.thread_id, resource_id=run.resource_id,
        step_number=getattr(args, "step_number", run.step_number), retry_count=args.retry_count,
        processor_index=run.processor_index,
    )
    if args.request_context:
        dict_to_struct(args.request_context, inv.request_context)
    tc = inv.trace_context
    tc.traceparent, tc.tracestate, tc.baggage = trace_carrier(args.tracing_context)
    return inv


_CARRIERS: dict[int, tuple[Context, TextMapPropagator, tuple[str, str, str]]] = {}
_CARRIERS_MAX = 256


def trace_carrier(ctx: Context | None) -> tuple[str, str, str]:
    """``traceparent``, ``tracestate`` and ``baggage`` of ``ctx`` (W3C), as the global propagator
    injects them. Injected once per context: a context is immutable, and every chunk of a step's
    ``processOutputStream`` carries the same one (the step's stream span), so it is not
    re-injected per chunk."""
    if ctx is None:  # the current context: not cacheable
        return _inject(None)
    textmap = propagate.get_global_textmap()
    cached = _CARRIERS.get(id(ctx))
    if cached is not None and cached[0] is ctx and cached[1] is textmap:
        return cached[2]
    value = _inject(ctx)
    if len(_CARRIERS) >= _CARRIERS_MAX:
        _CARRIERS.clear()
    _CARRIERS[id(ctx)] = (ctx, textmap, value)
    return value


def _inject(ctx: Context | None) -> tuple[str, str, str]:
    carrier: dict[str, str] = {}
    propagate.inject(carrier, context=ctx)
    return carrier.get("traceparent", ""), carrier.get("tracestate", ""), carrier.get("baggage", "")


def _input(args: a.ProcessInputArgs, out: pb.ProcessInputArgs) -> None:
    snapshot_of(args.message_list, out.message_list)


def _input_step(args: a.ProcessInputStepArgs, out: pb.ProcessInputStepArgs) -> None:
    snapshot_of(args.message_list, out.message_list)
    steps_to_proto(args.steps, out.steps)
    out.model = args.model if isinstance(args.model, str) else f"{args.model.provider}/{args.model.model_id}"
    tool_choice_to_proto(args.tool_choice, out.tool_choice)
    out.active_tools.extend(args.active_tools)
    tools_to_proto(args.tools, out.tools)
    if args.provider_options:
        dict_to_struct(args.provider_options, out.provider_options)
    model_settings_to_proto(args.model_settings, out.model_settings)
    structured_output_to_proto(args.structured_output, out.structured_output)


def _llm_request(args: a.ProcessLLMRequestArgs, out: pb.ProcessLLMRequestArgs) -> None:
    out.SetInParent()
    prompt_to_proto(args.prompt, out.prompt)
    out.model = args.model
    steps_to_proto(args.steps, out.steps)


def _llm_response(args: a.ProcessLLMResponseArgs, out: pb.ProcessLLMResponseArgs) -> None:
    out.SetInParent()
    chunks_to_proto(args.chunks, out.chunks)
    out.model, out.from_cache = args.model, args.from_cache
    steps_to_proto(args.steps, out.steps)


def _api_error(args: a.ProcessAPIErrorArgs, out: pb.ProcessAPIErrorArgs) -> None:
    api_error_to_proto(args.error, out.error)
    snapshot_of(args.message_list, out.message_list)
    steps_to_proto(args.steps, out.steps)


def _output_stream(args: a.ProcessOutputStreamArgs, out: pb.ProcessOutputStreamArgs) -> None:
    out.SetInParent()
    chunks_to_proto([args.part], out.parts)


def _output_step(args: a.ProcessOutputStepArgs, out: pb.ProcessOutputStepArgs) -> None:
    snapshot_of(args.message_list, out.message_list)
    out.finish_reason = enum_to_pb(chunk_pb2.FinishReason.DESCRIPTOR, args.finish_reason)
    for call in args.tool_calls:
        fill(out.tool_calls.add(), call)
    out.text = args.text
    fill(out.usage, args.usage)
    steps_to_proto(args.steps, out.steps)
    if args.provider_metadata:
        dict_to_struct(args.provider_metadata, out.provider_metadata)


def _tool_result(args: a.ProcessToolResultArgs, out: pb.ProcessToolResultArgs) -> None:
    snapshot_of(args.message_list, out.message_list)
    out.tool_name, out.tool_call_id, out.provider_executed = args.tool_name, args.tool_call_id, args.provider_executed
    py_to_value(args.args, out.args)
    py_to_value(args.result, out.result)
    steps_to_proto(args.steps, out.steps)


def _output_result(args: a.ProcessOutputResultArgs, out: pb.ProcessOutputResultArgs) -> None:
    snapshot_of(args.message_list, out.message_list)
    output_result_to_proto(args.result, out.result)


def _before_tool_call(args: a.BeforeToolCallArgs, out: pb.BeforeToolCallArgs) -> None:
    out.tool_name, out.tool_call_id = args.tool_name, args.tool_call_id
    py_to_value(args.args, out.args)


def _after_tool_call(args: a.AfterToolCallArgs, out: pb.AfterToolCallArgs) -> None:
    out.tool_name, out.tool_call_id = args.tool_name, args.tool_call_id
    py_to_value(args.args, out.args)
    if args.error is not None:
        out.error = args.error
    else:
        py_to_value(args.output, out.output)


def _delegation_start(args: a.OnDelegationStartArgs, out: pb.OnDelegationStartArgs) -> None:
    out.key, out.sub_agent_id, out.tool_call_id = args.key, args.sub_agent_id, args.tool_call_id
    out.prompt, out.instructions = args.prompt, args.instructions
    out.max_steps, out.iteration = args.max_steps, args.iteration


def _delegation_complete(args: a.OnDelegationCompleteArgs, out: pb.OnDelegationCompleteArgs) -> None:
    out.key, out.sub_agent_id, out.tool_call_id = args.key, args.sub_agent_id, args.tool_call_id
    out.prompt, out.success, out.error = args.prompt, args.success, args.error
    if args.result is not None:
        py_to_value(args.result, out.result)
    out.duration.FromNanoseconds(int(args.duration * 1e9))


def _transform_tool_payload(args: a.TransformToolPayloadArgs, out: pb.TransformToolPayloadArgs) -> None:
    out.target, out.phase, out.tool_name, out.tool_call_id = args.target, args.phase, args.tool_name, args.tool_call_id
    py_to_value(args.payload, out.payload)


def _resolve_agent(args: a.ResolveAgentArgs, out: pb.ResolveAgentArgs) -> None:
    out.agent.CopyFrom(args.agent)  # the server passes the agent in its proto form


_ENCODERS: dict[str, Callable[[Any, Any], None]] = {
    "on_delegation_start": _delegation_start,
    "on_delegation_complete": _delegation_complete,
    "transform_tool_payload": _transform_tool_payload,
    "resolve_agent": _resolve_agent,
    "before_tool_call": _before_tool_call,
    "after_tool_call": _after_tool_call,
    "process_input": _input,
    "process_input_step": _input_step,
    "process_llm_request": _llm_request,
    "process_llm_response": _llm_response,
    "process_api_error": _api_error,
    "process_output_stream": _output_stream,
    "process_output_step": _output_step,
    "process_tool_result": _tool_result,
    "process_output_result": _output_result,
}

# --- InvocationResult -> domain ------------------------------------------------------------------

ChunkKind = Literal["unchanged", "replace", "drop", "abort", "error", "chunks"]


@dataclass
class ChunkDecision:
    """What happens to one stream chunk."""

    kind: ChunkKind
    chunk: Chunk | None = None
    tripwire: TripwireError | None = None
    message: str = ""
    chunks: list[Chunk] = field(default_factory=list)
    """``chunks`` (protocol version 2): what takes the chunk's place, in order."""


@dataclass
class DecodedResult:
    """A validated answer; nothing has been applied yet."""

    outcome: str
    messages: list[tuple[Message, Source | None]] | None = None
    system_messages: list[SystemMessage] | None = None
    step_overrides: dict[str, Any] | None = None
    prompt: Prompt | None = None
    cached_response: list[Chunk] | None = None
    tripwire: TripwireError | None = None
    error: str = ""
    chunks: list[ChunkDecision] = field(default_factory=list)
    state: dict[str, Any] | None = None
    state_version: int = 0
    custom_chunks: list[Chunk] = field(default_factory=list)
    tool_output: Any = None
    """``skip_tool``: the output that stands for the tool's result."""
    delegation: dict[str, Any] | None = None
    """``delegation_start`` / ``delegation_complete``: the answer in the in-process hook's form."""
    payload: Any = None
    """``transformed``: the transformed tool payload (None: the hook yielded nothing)."""
    agent_overrides: pb.AgentOverrides | None = None
    """``resolveAgent``: the overrides, decoded by the server (it knows the agent's fields)."""


# Which replacements each hook accepts (the `Reply:` line of each *Args message).
_REPLACEABLE: dict[str, frozenset[str]] = {
    "process_input": frozenset({"messages", "system_messages"}),
    "process_input_step": frozenset({"messages", "system_messages", "step_overrides"}),
    "process_llm_request": frozenset({"prompt", "cached_response"}),
    "process_llm_response": frozenset(),
    "process_api_error": frozenset({"messages"}),
    "process_output_stream": frozenset(),
    "process_output_step": frozenset({"messages", "system_messages"}),
    "process_tool_result": frozenset({"messages", "system_messages"}),
    "process_output_result": frozenset({"messages", "system_messages"}),
    "before_tool_call": frozenset(),
    "after_tool_call": frozenset(),
    "on_delegation_start": frozenset(),
    "on_delegation_complete": frozenset(),
    "transform_tool_payload": frozenset(),
    "resolve_agent": frozenset(),
}


def decode_result(
    hook: str, result: pb.InvocationResult, *, processor_id: str, parts: int = 1, version: int = 1,
) -> DecodedResult:
    """Validate and decode an answer (``version``: the stream's protocol version); raises
    ``MalformedResultError`` saying what is wrong."""
    try:
        return _decode(hook, result, processor_id, parts, version)
    except InvalidArgumentError as e:
        raise MalformedResultError(str(e)) from None


def _decode(hook: str, result: pb.InvocationResult, processor_id: str, parts: int, version: int) -> DecodedResult:
    kind = result.WhichOneof("outcome")
    if kind is None:
        raise MalformedResultError("the result has no outcome")
    out = DecodedResult(outcome=kind)
    if result.HasField("state"):
        out.state, out.state_version = struct_to_dict(result.state.value), result.state.version
    for i, c in enumerate(result.custom_chunks):
        if not c.name.startswith("data-"):
            raise MalformedResultError(f"custom_chunks[{i}].name must start with 'data-', got {c.name!r}")
        out.custom_chunks.append(Chunk.custom(
            c.name, value_to_py(c.data) if c.HasField("data") else None, transient=c.transient, id=c.id
        ))
    stream = hook == "process_output_stream"
    if kind == "unchanged":
        out.chunks = [ChunkDecision("unchanged") for _ in range(parts)] if stream else []
    elif kind == "abort":
        out.tripwire = _tripwire(result.abort, processor_id)
        if stream:
            out.chunks = [ChunkDecision("abort", tripwire=out.tripwire)]
    elif kind == "error":
        out.error = result.error.message or "the remote hook failed"
        if stream:
            out.chunks = [ChunkDecision("error", message=out.error) for _ in range(parts)]
    elif kind == "retry":
        if hook != "process_api_error":
            raise MalformedResultError(f"a retry outcome is only valid for processAPIError, not {hook}")
        if result.retry.HasField("messages"):
            out.messages = replacement_from_proto(result.retry.messages, "retry.messages")
    elif kind == "stream":
        if not stream:
            raise MalformedResultError(f"a stream outcome is only valid for processOutputStream, not {hook}")
        out.chunks = _decode_stream(result.stream, processor_id, parts, version)
    elif kind == "replace":
        _decode_replace(hook, result.replace, out)
    elif kind == "agent_overrides":
        if hook != "resolve_agent":
            raise MalformedResultError(f"an agent_overrides outcome is only valid for resolveAgent, not {hook}")
        out.agent_overrides = result.agent_overrides
    elif kind == "skip_tool":
        if hook != "before_tool_call":
            raise MalformedResultError(f"a skip_tool outcome is only valid for beforeToolCall, not {hook}")
        out.tool_output = value_to_py(result.skip_tool.output) if result.skip_tool.HasField("output") else None
    elif kind == "delegation_start":
        if hook != "on_delegation_start":
            raise MalformedResultError(f"a delegation_start outcome is only valid for onDelegationStart, not {hook}")
        d = result.delegation_start
        out.delegation = {"proceed": not d.reject, "rejectionReason": d.rejection_reason}
        for field_name, key in (("modified_prompt", "modifiedPrompt"), ("modified_instructions", "modifiedInstructions"),
                                ("modified_max_steps", "modifiedMaxSteps")):
            if d.HasField(field_name):
                out.delegation[key] = getattr(d, field_name)
    elif kind == "delegation_complete":
        if hook != "on_delegation_complete":
            raise MalformedResultError(
                f"a delegation_complete outcome is only valid for onDelegationComplete, not {hook}")
        c = result.delegation_complete
        out.delegation = {"feedback": c.feedback, "bail": c.bail}
    elif kind == "transformed":
        if hook != "transform_tool_payload":
            raise MalformedResultError(f"a transformed outcome is only valid for transformToolPayload, not {hook}")
        out.payload = value_to_py(result.transformed.payload) if result.transformed.HasField("payload") else None
    return out


def _decode_replace(hook: str, r: pb.ReplaceOutcome, out: DecodedResult) -> None:
    present = {f.name for f, _ in r.ListFields()}
    allowed = _REPLACEABLE[hook]
    if not allowed:
        raise MalformedResultError(f"a replace outcome is not valid for {hook}")
    bad = sorted(present - allowed)
    if bad:
        raise MalformedResultError(f"replace.{bad[0]} is not valid for {hook} (allowed: {', '.join(sorted(allowed))})")
    if r.HasField("messages"):
        out.messages = replacement_from_proto(r.messages, "replace.messages")
    if r.HasField("system_messages"):
        out.system_messages = system_messages_from_proto(r.system_messages.messages)
    if r.HasField("prompt"):
        out.prompt = prompt_from_proto(r.prompt.messages, "replace.prompt.messages")
    if r.HasField("cached_response"):
        out.cached_response = chunks_from_proto(r.cached_response.chunks, "replace.cached_response.chunks")
    if r.HasField("step_overrides"):
        out.step_overrides = _step_overrides(r.step_overrides)


def _step_overrides(s: pb.StepOverrides) -> dict[str, Any]:
    o: dict[str, Any] = {}
    if s.model:
        if "/" not in s.model:
            raise MalformedResultError(f"step_overrides.model {s.model!r} must be 'provider/model'")
        o["model"] = s.model
    if s.HasField("tool_choice"):
        o["tool_choice"] = tool_choice_from_proto(s.tool_choice)
    if s.HasField("active_tools"):
        o["active_tools"] = list(s.active_tools.names)
    if s.HasField("provider_options"):
        o["provider_options"] = struct_to_dict(s.provider_options)
    if s.HasField("model_settings"):
        o["model_settings"] = model_settings_from_proto(s.model_settings, "step_overrides.model_settings")
    if s.HasField("structured_output"):
        o["structured_output"] = structured_output_from_proto(s.structured_output)
    if s.HasField("tools"):
        names = list(s.tools.names)
        for i, name in enumerate(names):
            if not name:
                raise MalformedResultError(f"step_overrides.tools.names[{i}] is empty")
        o["tools"] = names  # names; the run resolves them against the step's tools and the registry
    return o


def _decode_stream(s: pb.StreamOutcomes, processor_id: str, parts: int, version: int) -> list[ChunkDecision]:
    decisions: list[ChunkDecision] = []
    for i, c in enumerate(s.chunks):
        kind = c.WhichOneof("outcome")
        if kind == "abort":  # the rest is ignored, and may be missing
            decisions.append(ChunkDecision("abort", tripwire=_tripwire(c.abort, processor_id)))
            return decisions
        if kind is None:
            raise MalformedResultError(f"stream.chunks[{i}] has no outcome")
        if kind == "replace":
            decisions.append(ChunkDecision("replace", chunk=chunk_from_proto(c.replace, f"stream.chunks[{i}].replace")))
        elif kind == "chunks":
            if version < 2:
                raise MalformedResultError(
                    f"stream.chunks[{i}].chunks needs protocol version 2; this stream speaks {version}")
            decisions.append(ChunkDecision("chunks", chunks=chunks_from_proto(
                c.chunks.chunks, f"stream.chunks[{i}].chunks.chunks")))
        else:
            decisions.append(ChunkDecision(kind, message=c.error.message if kind == "error" else ""))  # type: ignore[arg-type]
    if len(decisions) != parts:
        raise MalformedResultError(f"stream has {len(decisions)} outcome(s) for {parts} chunk(s)")
    return decisions


def _tripwire(abort: pb.AbortOutcome, processor_id: str) -> TripwireError:
    return TripwireError(
        abort.reason or f"Tripwire triggered by {processor_id}", retry=abort.retry,
        metadata=value_to_py(abort.metadata) if abort.HasField("metadata") else None,
        processor_id=processor_id,
    )


async def emit_custom_chunks(decoded: DecodedResult, args: Any) -> None:
    writer = getattr(args, "writer", None)
    if writer is not None:
        for chunk in decoded.custom_chunks:
            await writer.custom(chunk)


async def apply_result(hook: str, decoded: DecodedResult, args: Any) -> Any:
    """Emit the custom chunks, apply the outcome to the live run, and return what an in-process
    hook would have returned. Raises ``TripwireError`` (abort) or ``RemoteHookError`` (error).

    Not for ``process_output_stream`` (see ``stream_outcomes``); state is the caller's.
    """
    await emit_custom_chunks(decoded, args)
    if decoded.tripwire is not None:
        raise decoded.tripwire
    if decoded.outcome == "error":
        raise RemoteHookError(decoded.error)
    ml = getattr(args, "message_list", None)
    if decoded.messages is not None and ml is not None:
        apply_replacement(ml, decoded.messages)
    if decoded.system_messages is not None and ml is not None:
        ml.replace_all_system_messages(decoded.system_messages)
    if hook == "process_input_step":
        return ProcessInputStepResult(**decoded.step_overrides) if decoded.step_overrides else None
    if hook == "process_llm_request":
        if decoded.prompt is None and decoded.cached_response is None:
            return None
        return ProcessLLMRequestResult(decoded.prompt, decoded.cached_response)
    if hook == "process_api_error":
        return ProcessAPIErrorResult(retry=True) if decoded.outcome == "retry" else None
    if hook == "before_tool_call":
        return {"proceed": False, "output": decoded.tool_output} if decoded.outcome == "skip_tool" else None
    if hook == "after_tool_call":
        return None
    if hook in ("on_delegation_start", "on_delegation_complete"):
        return decoded.delegation
    if hook == "transform_tool_payload":
        return decoded.payload if decoded.outcome == "transformed" else args.payload
    if hook == "resolve_agent":
        return decoded.agent_overrides
    return ml if decoded.messages is not None else None  # edited in place, as the Mastra framework allows


def stream_outcomes(decoded: DecodedResult, parts: Sequence[Chunk]) -> list[StreamResult | BaseException]:
    """Per chunk: the chunk to pass on (the same object when unchanged), None when dropped, the
    list of chunks that take its place (version 2), or the exception (``TripwireError`` /
    ``RemoteHookError``). Chunks after an abort get the abort."""
    out: list[StreamResult | BaseException] = []
    tripwire: TripwireError | None = None
    for part, d in zip(parts, decoded.chunks + [ChunkDecision("abort")] * (len(parts) - len(decoded.chunks))):
        if tripwire is not None or d.kind == "abort":
            tripwire = tripwire or d.tripwire
            out.append(tripwire)
        elif d.kind == "replace":
            out.append(d.chunk)
        elif d.kind == "drop":
            out.append(None)
        elif d.kind == "chunks":
            out.append(list(d.chunks))
        elif d.kind == "error":
            out.append(RemoteHookError(d.message or "the remote hook failed"))
        else:
            out.append(part)
    return out


__all__ = [
    "HOOK_ENUM",
    "HOOK_NAME",
    "ChunkDecision",
    "DecodedResult",
    "MalformedResultError",
    "RemoteHookError",
    "apply_result",
    "chunk_bytes",
    "decode_result",
    "emit_custom_chunks",
    "encode_invocation",
    "encode_stream_body",
    "encode_stream_invocation",
    "encode_stream_one",
    "stream_envelope",
    "stream_outcomes",
]
