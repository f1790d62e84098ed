"""Hook args and answers over the wire, both directions, without a network.

Each test plays both sides: the server encodes an invocation from the live run's args, the
processor side rebuilds args over a local ``MessageList``, runs a hook exactly as an in-process
processor would, and answers; the server decodes the answer and applies it to the live run. The
live run must end up as if the hook had run in-process.
"""

from __future__ import annotations


import dataclasses
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

from treadle.wire.sdk_hooks import (
    build_args,
    encode_abort,
    encode_error,
    encode_result,
    encode_stream_result,
    extract_trace_context,
    iter_stream_args,
    snapshot_before,
)
from treadle.wire.server_hooks import (
    MalformedResultError,
    RemoteHookError,
    apply_result,
    decode_result,
    encode_invocation,
    encode_stream_invocation,
    stream_outcomes,
)

from treadle.core.chunks import Chunk, TextDelta, ToolCall, Usage
from treadle.core.errors import APICallError, TripwireError
from treadle.core.message_list import MessageList
from treadle.core.messages import (
    Message,
    MessageContent,
    PromptMessage,
    SystemMessage,
    TextPart,
    ToolInvocationPart,
)
from treadle.core import args as a
from treadle.core.results import (
    ProcessAPIErrorResult,
    ProcessInputStepResult,
    ProcessLLMRequestResult,
)
from treadle.providers.base import ModelSettings
from treadle.tools import Tool
from treadle.v1 import processor_service_pb2 as pb

PID = "guard"


def _abort(reason: str = "", *, retry: bool = False, metadata: Any = None) -> Any:
    raise TripwireError(reason, retry=retry, metadata=metadata, processor_id=PID)


class Writer:
    def __init__(self) -> None:
        self.chunks: list[Chunk] = []

    async def custom(self, chunk: Chunk | dict[str, Any]) -> None:
        assert isinstance(chunk, Chunk)
        self.chunks.append(chunk)


def live_list() -> MessageList:
    ml = MessageList(thread_id="t1", resource_id="r1")
    ml.replace_all_system_messages([SystemMessage("Be terse.", {"anthropic": {"cacheControl": {"type": "ephemeral"}}})])
    ml.add(Message.user("remembered question", id="m-mem"), "memory")
    ml.add(Message.assistant("remembered answer", id="m-mem2"), "memory")
    ml.add(Message.user("hello", id="m-in"), "input")
    return ml


def common(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "abort": _abort, "retry_count": 1, "request_context": {"tenant": "acme", "n": 2},
        "state": {"seen": 1}, "writer": Writer(),
        "run": a.RunInfo("run-1", "agent-1", "t1", "r1", 3, 2),
    }
    base.update(kw)
    return base


def remote_side(inv: pb.Invocation, hook_fn: Any) -> pb.InvocationResult:
    """What a processor SDK does with one invocation."""
    state: dict[str, Any] = {}
    args, ml = build_args(inv, abort=_abort, state=state, writer=None)
    before = snapshot_before(inv)
    try:
        returned = hook_fn(args)
    except TripwireError as e:
        return encode_abort(inv.invocation_id, e)
    except Exception as e:
        return encode_error(inv.invocation_id, e)
    return encode_result(_hook(inv), returned, args, ml, before, invocation_id=inv.invocation_id)


def _hook(inv: pb.Invocation) -> str:
    return inv.WhichOneof("args")


async def round_trip(hook: str, args: Any, hook_fn: Any) -> Any:
    inv = encode_invocation(hook, args, processor_id=PID)
    result = remote_side(pb.Invocation.FromString(inv.SerializeToString()), hook_fn)
    decoded = decode_result(hook, pb.InvocationResult.FromString(result.SerializeToString()), processor_id=PID)
    return await apply_result(hook, decoded, args)


def view(ml: MessageList) -> list[tuple[str, str | None, str]]:
    return [(m.id, ml.source_of(m.id), m.text) for m in ml.get_all()]


# --- the envelope ------------------------------------------------------------------------------


def test_run_identity_retry_count_request_context_and_trace_context_travel() -> None:
    provider = TracerProvider()
    with provider.get_tracer("t").start_as_current_span("hook") as span:
        ctx = trace.set_span_in_context(span)
        ml = live_list()
        args = a.ProcessInputArgs(messages=ml.get_input(), system_messages=list(ml.system_messages),
                                  message_list=ml, **common(tracing_context=ctx))
        inv = encode_invocation("process_input", args, processor_id=PID)
    assert (inv.run_id, inv.agent_id, inv.thread_id, inv.resource_id) == ("run-1", "agent-1", "t1", "r1")
    assert (inv.step_number, inv.retry_count, inv.processor_index) == (3, 1, 2)
    assert inv.hook == pb.HOOK_PROCESS_INPUT and inv.processor_id == PID
    assert inv.trace_context.traceparent.startswith("00-")
    remote_ctx = extract_trace_context(inv)
    assert trace.get_current_span(remote_ctx).get_span_context().trace_id == span.get_span_context().trace_id
    rebuilt, _ = build_args(inv, abort=_abort, state={})
    assert rebuilt.request_context == {"tenant": "acme", "n": 2}
    assert rebuilt.run == a.RunInfo("run-1", "agent-1", "t1", "r1", 3, 2)
    assert rebuilt.retry_count == 1


# --- message hooks -----------------------------------------------------------------------------


async def test_process_input_shows_the_input_view_and_edits_apply_as_in_process() -> None:
    ml = live_list()
    args = a.ProcessInputArgs(messages=ml.get_input(), system_messages=list(ml.system_messages),
                              message_list=ml, **common())
    kept = ml.get_all()[1]

    def hook(x: a.ProcessInputArgs) -> Any:
        assert [m.id for m in x.messages] == ["m-in"]
        assert [m.id for m in x.message_list.get_all()] == ["m-mem", "m-mem2", "m-in"]
        assert x.system_messages[0].provider_options == {"anthropic": {"cacheControl": {"type": "ephemeral"}}}
        x.message_list.remove_by_ids(["m-mem"])
        x.message_list.add(Message.user("retrieved context", id="m-ctx"), "context")
        x.message_list.add_system("Added by the processor.")
        return x.message_list

    result = await round_trip("process_input", args, hook)
    assert result is ml  # edited in place
    assert view(ml) == [("m-mem2", "memory", "remembered answer"), ("m-in", "input", "hello"),
                        ("m-ctx", "context", "retrieved context")]
    assert ml.get_all()[0] is kept  # unchanged messages keep their identity
    assert [s.content for s in ml.system_messages] == ["Be terse.", "Added by the processor."]
    assert ml.get_unsaved() == [ml.get_all()[1]]  # context messages are never saved


async def test_returning_an_array_is_a_diff_over_the_shown_view_and_empty_means_no_change() -> None:
    ml = live_list()
    args = a.ProcessInputArgs(messages=ml.get_input(), system_messages=list(ml.system_messages),
                              message_list=ml, **common())
    assert await round_trip("process_input", args, lambda x: []) is None
    assert [m.id for m in ml.get_all()] == ["m-mem", "m-mem2", "m-in"]

    args = a.ProcessInputArgs(messages=ml.get_input(), system_messages=list(ml.system_messages),
                              message_list=ml, **common())
    await round_trip("process_input", args, lambda x: [Message.user("HELLO", id="m-in2")])
    assert view(ml) == [("m-mem", "memory", "remembered question"),
                        ("m-mem2", "memory", "remembered answer"), ("m-in2", "input", "HELLO")]


async def test_process_tool_result_update_tool_invocation_updates_the_live_message_in_place() -> None:
    ml = live_list()
    step_message = Message("m-asst", "assistant", MessageContent([
        TextPart("checking"), ToolInvocationPart("call-1", "weather", {"city": "Paris"}, "call")]))
    ml.add(step_message, "response")
    args = a.ProcessToolResultArgs(
        messages=ml.get_all(), message_list=ml, step_number=0, tool_name="weather", tool_call_id="call-1",
        args={"city": "Paris"}, result={"temp": 21.5, "ok": True}, system_messages=list(ml.system_messages),
        steps=[], **common(),
    )

    def hook(x: a.ProcessToolResultArgs) -> None:
        assert x.result == {"temp": 21.5, "ok": True} and x.args == {"city": "Paris"}
        part = x.message_list.find_tool_invocation("call-1")
        assert part is not None
        x.message_list.update_tool_invocation(dataclasses.replace(part, state="result", result="[redacted]"))

    await round_trip("process_tool_result", args, hook)
    assert ml.get_all()[-1] is step_message  # the loop's reference still sees the change
    part = ml.find_tool_invocation("call-1")
    assert part is not None and (part.state, part.result) == ("result", "[redacted]")
    assert ml.source_of("m-asst") == "response"


async def test_process_output_result_sees_the_response_view_and_the_result() -> None:
    ml = live_list()
    ml.add(Message.assistant("the answer", id="m-out"), "response")
    result = a.OutputResult("the answer", Usage(3, 4, 7), "stop",
                            [a.StepResult(0, "the answer", finish_reason="stop", usage=Usage(3, 4, 7),
                                          tool_calls=[ToolCall("c", "t", {"x": 1})])])
    args = a.ProcessOutputResultArgs(messages=ml.get_response(), message_list=ml, result=result, **common())
    seen: list[Any] = []
    assert await round_trip("process_output_result", args, lambda x: seen.append(x)) is None
    x = seen[0]
    assert [m.id for m in x.messages] == ["m-out"]
    assert x.result == result


# --- step hooks --------------------------------------------------------------------------------


async def test_process_input_step_overrides_and_its_view_of_the_step() -> None:
    ml = live_list()
    tool = Tool("weather", lambda a, c: None, "Weather now", {"type": "object", "properties": {"city": {"type": "string"}}})
    args = a.ProcessInputStepArgs(
        messages=ml.get_all(), message_list=ml, step_number=1, steps=[a.StepResult(0, "hi", finish_reason="stop")],
        system_messages=list(ml.system_messages), model="openai/gpt-4o", tool_choice={"type": "tool", "tool_name": "weather"},
        active_tools=["weather"], tools={"weather": tool}, provider_options={"openai": {"user": "u"}},
        model_settings=ModelSettings(temperature=0.0, stop_sequences=["END"]),
        structured_output={"schema": {"type": "object"}, "name": "out"}, **common(),
    )

    def hook(x: a.ProcessInputStepArgs) -> Any:
        assert x.model == "openai/gpt-4o" and x.step_number == 1
        assert x.tool_choice == {"type": "tool", "tool_name": "weather"}
        assert x.tools["weather"].input_schema["properties"]["city"] == {"type": "string"}
        assert x.model_settings.temperature == 0.0 and x.model_settings.stop_sequences == ["END"]
        assert x.structured_output == {"schema": {"type": "object"}, "name": "out"}
        assert x.steps[0].text == "hi"
        return {"model": "openai/gpt-5-mini", "toolChoice": "none", "activeTools": [],
                "modelSettings": ModelSettings(temperature=0.0), "systemMessages": [SystemMessage("Only this.")]}

    out = await round_trip("process_input_step", args, hook)
    assert isinstance(out, ProcessInputStepResult)
    assert out.set_fields() == {"model": "openai/gpt-5-mini", "tool_choice": "none", "active_tools": [],
                                "model_settings": ModelSettings(temperature=0.0)}
    assert [s.content for s in ml.system_messages] == ["Only this."]


async def test_process_llm_request_replaces_the_prompt_and_replays_a_cached_response() -> None:
    prompt = [PromptMessage("system", [TextPart("Be terse.")]), PromptMessage("user", [TextPart("hello")])]
    args = a.ProcessLLMRequestArgs(prompt=prompt, model="openai/gpt-4o", step_number=0, steps=[], **common())
    cached = [Chunk.of(TextDelta("t1", "from cache"))]

    def hook(x: a.ProcessLLMRequestArgs) -> Any:
        assert x.prompt == prompt
        return ProcessLLMRequestResult(prompt=[*x.prompt, PromptMessage("user", [TextPart("(be kind)")])],
                                       response=cached)

    out = await round_trip("process_llm_request", args, hook)
    assert isinstance(out, ProcessLLMRequestResult)
    assert out.prompt is not None and out.prompt[-1].content == [TextPart("(be kind)")]
    assert out.response is not None and [c.payload.text for c in out.response] == ["from cache"]


async def test_process_api_error_retry_carries_the_processors_message_edits() -> None:
    ml = live_list()
    err = APICallError("context too long", provider="openai", model_id="gpt-4o", status_code=400,
                       body={"error": {"code": "context_length_exceeded"}})
    args = a.ProcessAPIErrorArgs(error=err, messages=ml.get_all(), message_list=ml, step_number=0, steps=[], **common())

    def hook(x: a.ProcessAPIErrorArgs) -> Any:
        assert isinstance(x.error, APICallError)
        assert (x.error.status_code, x.error.body) == (400, {"error": {"code": "context_length_exceeded"}})
        x.message_list.remove_by_ids(["m-mem", "m-mem2"])
        return ProcessAPIErrorResult(retry=True)

    out = await round_trip("process_api_error", args, hook)
    assert out == ProcessAPIErrorResult(retry=True)
    assert [m.id for m in ml.get_all()] == ["m-in"]


async def test_process_output_step_args_and_abort_with_retry() -> None:
    ml = live_list()
    args = a.ProcessOutputStepArgs(
        messages=ml.get_all(), message_list=ml, step_number=0, finish_reason="tool-calls",
        tool_calls=[ToolCall("c1", "weather", {"city": "Oslo"})], text="Let me check", usage=Usage(1, 2, 3),
        system_messages=list(ml.system_messages), steps=[], provider_metadata={"openai": {"id": "x"}}, **common(),
    )

    def hook(x: a.ProcessOutputStepArgs) -> Any:
        assert (x.finish_reason, x.text, x.usage) == ("tool-calls", "Let me check", Usage(1, 2, 3))
        assert x.tool_calls == [ToolCall("c1", "weather", {"city": "Oslo"})]
        assert x.provider_metadata == {"openai": {"id": "x"}}
        x.abort("too vague", retry=True, metadata={"score": 0.2})

    with pytest.raises(TripwireError) as info:
        await round_trip("process_output_step", args, hook)
    assert (info.value.reason, info.value.retry, info.value.metadata, info.value.processor_id) == (
        "too vague", True, {"score": 0.2}, PID)


async def test_a_hook_that_raises_becomes_an_ordinary_error() -> None:
    ml = live_list()
    args = a.ProcessInputArgs(messages=ml.get_input(), system_messages=[], message_list=ml, **common())

    def hook(x: Any) -> None:
        raise KeyError("boom")

    with pytest.raises(RemoteHookError, match="boom"):
        await round_trip("process_input", args, hook)


async def test_process_llm_response_gets_chunks_and_from_cache() -> None:
    chunks = [Chunk.of(TextDelta("t", "hi"))]
    args = a.ProcessLLMResponseArgs(chunks=chunks, model="openai/m", step_number=2, steps=[], from_cache=True, **common())
    seen: list[Any] = []
    assert await round_trip("process_llm_response", args, lambda x: seen.append(x)) is None
    assert seen[0].from_cache and seen[0].chunks[0].payload.text == "hi" and seen[0].step_number == 2


# --- custom chunks and state -------------------------------------------------------------------


async def test_custom_chunks_are_emitted_before_the_outcome_applies_and_state_is_decoded() -> None:
    ml = live_list()
    writer = Writer()
    args = a.ProcessInputArgs(messages=ml.get_input(), system_messages=[], message_list=ml, **common(writer=writer))
    inv = encode_invocation("process_input", args, processor_id=PID)
    result = encode_result("process_input", None, args, ml, snapshot_before(inv), invocation_id="1",
                           state={"count": 2}, state_version=4,
                           custom_chunks=[Chunk.custom("data-progress", {"pct": 50}, transient=True)])
    decoded = decode_result("process_input", result, processor_id=PID)
    assert decoded.outcome == "unchanged" and (decoded.state, decoded.state_version) == ({"count": 2}, 4)
    await apply_result("process_input", decoded, args)
    assert [(c.type, c.data, c.transient) for c in writer.chunks] == [("data-progress", {"pct": 50}, True)]


# --- processOutputStream -----------------------------------------------------------------------


def stream_args(text: str) -> a.ProcessOutputStreamArgs:
    return a.ProcessOutputStreamArgs(part=Chunk.of(TextDelta("t", text), run_id="run-1"), stream_parts=[],
                                     message_list=MessageList(), **common())


def test_windowed_stream_each_chunk_gets_its_own_outcome_in_order() -> None:
    parts = [stream_args(t) for t in ("keep", "secret", "drop", "more")]
    inv = encode_stream_invocation(parts, processor_id=PID)
    assert len(inv.process_output_stream.parts) == 4
    stream_parts: list[Chunk] = []
    returns: list[Any] = []
    remote_parts: list[Chunk] = []
    for x in iter_stream_args(inv, abort=_abort, state={}, stream_parts=stream_parts):
        remote_parts.append(x.part)
        assert x.stream_parts[-1] is x.part and len(x.stream_parts) == len(remote_parts)
        text = x.part.payload.text
        if text == "secret":
            returns.append(Chunk.of(TextDelta("t", "******")))
        elif text == "drop":
            returns.append(None)
        else:
            returns.append(x.part)
    result = encode_stream_result("1", returns, remote_parts)
    decoded = decode_result("process_output_stream", result, processor_id=PID, parts=4)
    out = stream_outcomes(decoded, [p.part for p in parts])
    assert out[0] is parts[0].part and out[3] is parts[3].part
    assert isinstance(out[1], Chunk) and out[1].payload.text == "******"
    assert out[2] is None


def test_an_abort_mid_window_ends_the_stream_at_that_chunk() -> None:
    parts = [Chunk.of(TextDelta("t", t)) for t in ("a", "b", "c")]
    result = encode_stream_result("1", [parts[0], TripwireError("no b", processor_id=PID), parts[2]], parts)
    assert len(result.stream.chunks) == 2  # nothing after the abort
    out = stream_outcomes(decode_result("process_output_stream", result, processor_id=PID, parts=3), parts)
    assert out[0] is parts[0]
    assert isinstance(out[1], TripwireError) and out[1].reason == "no b" and out[2] is out[1]


def test_an_error_on_one_chunk_passes_that_chunk() -> None:
    parts = [Chunk.of(TextDelta("t", "a"))]
    result = encode_stream_result("1", [ValueError("bad")], parts)
    out = stream_outcomes(decode_result("process_output_stream", result, processor_id=PID), parts)
    assert isinstance(out[0], RemoteHookError)


# --- malformed answers -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hook", "result", "parts", "message"),
    [
        ("process_output_stream", pb.InvocationResult(stream=pb.StreamOutcomes(chunks=[pb.ChunkOutcome(drop=pb.DropOutcome())])), 2,
         "1 outcome(s) for 2 chunk(s)"),
        ("process_input", pb.InvocationResult(replace=pb.ReplaceOutcome(prompt=pb.PromptReplacement())), 1,
         "replace.prompt is not valid for process_input"),
        ("process_input", pb.InvocationResult(retry=pb.RetryOutcome()), 1, "only valid for processAPIError"),
        ("process_input", pb.InvocationResult(stream=pb.StreamOutcomes()), 1, "only valid for processOutputStream"),
        ("process_input", pb.InvocationResult(), 1, "no outcome"),
        ("process_llm_response", pb.InvocationResult(replace=pb.ReplaceOutcome()), 1, "not valid for process_llm_response"),
        ("process_input", pb.InvocationResult(unchanged=pb.UnchangedOutcome(),
                                              custom_chunks=[{"name": "progress"}]), 1, "must start with 'data-'"),
        ("process_input", pb.InvocationResult(replace=pb.ReplaceOutcome(messages=pb.MessageListReplacement(
            messages=[{"id": "x"}]))), 1, "role is required"),
    ],
)
def test_malformed_answers_are_refused_with_a_reason(hook: str, result: pb.InvocationResult, parts: int, message: str) -> None:
    with pytest.raises(MalformedResultError, match=message.replace("(", r"\(").replace(")", r"\)")):
        decode_result(hook, result, processor_id=PID, parts=parts)


def test_an_unsupported_return_value_is_refused_on_the_processor_side() -> None:
    ml = live_list()
    args = a.ProcessInputArgs(messages=ml.get_input(), system_messages=[], message_list=ml, **common())
    inv = encode_invocation("process_input", args, processor_id=PID)
    rebuilt, local = build_args(inv, abort=_abort, state={})
    with pytest.raises(ValueError, match="different MessageList"):
        encode_result("process_input", MessageList(), rebuilt, local, snapshot_before(inv))
    with pytest.raises(ValueError, match="unsupported int"):
        encode_result("process_input", 3, rebuilt, local, snapshot_before(inv))


def test_build_args_refuses_a_stream_invocation() -> None:
    inv = encode_stream_invocation([stream_args("a")], processor_id=PID)
    with pytest.raises(ValueError, match="iter_stream_args"):
        build_args(inv, abort=_abort, state={})

