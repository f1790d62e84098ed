"""Proto <-> domain conversion: round trips for every chunk, part and agent field; error paths."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from google.protobuf import json_format

from treadle.core import chunks as ch
from treadle.core import messages as m
from treadle.agents import CallOptions, MemoryOptions, ProcessorRef, ToolHooksRef
from treadle.api import convert
from treadle.core.errors import InvalidArgumentError
from treadle.loop import GenerateResult
from treadle.processors import StepResult
from treadle.providers.base import ModelConfig, ModelSettings
from treadle.v1 import agent_pb2, agent_service_pb2, message_pb2

JSON = {"n": 3, "x": 1.5, "ok": True, "none": None, "list": [1, "two", {"three": []}], "empty": {}}
META = {"openai": {"itemId": "abc"}}

SAMPLES: dict[str, Any] = {
    "start": ch.Start("agent-1", "msg-1"),
    "step-start": ch.StepStart("msg-1", 2, "openai/gpt-4o-mini"),
    "text-start": ch.TextStart("t1", META),
    "text-delta": ch.TextDelta("t1", "Hello", META),
    "text-end": ch.TextEnd("t1"),
    "reasoning-start": ch.ReasoningStart("r1"),
    "reasoning-delta": ch.ReasoningDelta("r1", "hmm"),
    "reasoning-end": ch.ReasoningEnd("r1", "sig", META),
    "tool-call-input-streaming-start": ch.ToolCallInputStreamingStart("c1", "weather", True),
    "tool-call-delta": ch.ToolCallDelta("c1", '{"ci', "weather"),
    "tool-call-input-streaming-end": ch.ToolCallInputStreamingEnd("c1"),
    "tool-call": ch.ToolCallPayload("c1", "weather", JSON),
    "tool-result": ch.ToolResultPayload("c1", "weather", JSON, True, {"city": "Paris"}, False),
    "tool-error": ch.ToolErrorPayload("c1", "weather", "boom", {"city": "Paris"}),
    "source": ch.Source("s1", "document", "Doc", "", "application/pdf", "a.pdf"),
    "file": ch.File(b"\x00\x01", "image/png", "a.png"),
    "response-metadata": ch.ResponseMetadata("resp-1", "gpt-4o-mini-2024", 1_700_000_000.5),
    "step-finish": ch.StepFinish(
        "tool-calls", ch.Usage(1, 2, 3, 4, 5), "text", [ch.ToolCall("c1", "weather", {"a": 1})],
        "tool_calls", "msg-1", 1, True,
    ),
    "finish": ch.Finish("content-filter", ch.Usage(10, 20, 30)),
    "error": ch.ErrorPayload("it broke", "APICallError", {"status": 500}),
    "abort": ch.AbortPayload("user left"),
    "tripwire": ch.Tripwire("blocked", True, {"score": 0.9}, "guard"),
    "tool-output": ch.ToolOutput("c1", "agent-research", ch.Chunk.of(ch.ToolOutput(
        "c9", "agent-write", ch.Chunk("text-delta", ch.TextDelta("t1", "Hi"), run_id="run-3"), ["agent-write"],
    ), run_id="run-2"), ["agent-research", "agent-write"]),
}


def test_every_payload_type_has_a_sample() -> None:
    assert set(SAMPLES) == set(ch.PAYLOAD_TYPES)


@pytest.mark.parametrize("type_name", sorted(SAMPLES))
def test_chunk_round_trip_and_json_name(type_name: str) -> None:
    chunk = ch.Chunk(type=type_name, payload=SAMPLES[type_name], run_id="run-1", from_="SYSTEM", metadata=META)
    pb = convert.chunk_to_proto(chunk)
    assert convert.chunk_from_proto(pb) == chunk
    # The JSON name of the oneof branch is the seed's type name in lower camel case.
    camel = type_name.split("-")[0] + "".join(w.title() for w in type_name.split("-")[1:])
    as_json = json_format.MessageToDict(pb)
    assert camel in as_json and as_json["from"] == "CHUNK_FROM_SYSTEM"


def test_all_default_payload_still_selects_its_branch() -> None:
    pb = convert.chunk_to_proto(ch.Chunk.of(ch.AbortPayload()))
    assert pb.WhichOneof("chunk") == "abort"


def test_data_chunk_round_trip() -> None:
    chunk = ch.Chunk.custom("data-moderation", {"flagged": False, "scores": [0.1]}, transient=True, id="m1")
    chunk.run_id = "run-1"
    pb = convert.chunk_to_proto(chunk)
    assert (pb.data.name, pb.data.transient, pb.data.id) == ("data-moderation", True, "m1")
    assert convert.chunk_from_proto(pb) == chunk


def test_values_that_json_cannot_hold_become_json_like() -> None:
    when = datetime(2024, 1, 2, tzinfo=UTC)
    chunk = ch.Chunk.of(ch.ToolResultPayload("c1", "t", {"when": when, "raw": b"hi", "usage": ch.Usage(1)}))
    result = convert.chunk_from_proto(convert.chunk_to_proto(chunk)).payload.result
    assert result["when"] == when.isoformat() and result["raw"] == "aGk="
    assert result["usage"]["input_tokens"] == 1


def test_message_with_every_part_kind_round_trips() -> None:
    parts: list[m.Part] = [
        m.TextPart("hi", provider_metadata=META),
        m.ReasoningPart("think", "sig", b"\x01"),
        m.FilePart("image/png", data=b"\x89PNG", filename="a.png"),
        m.FilePart("image/png", url="https://example.invalid/a.png"),
        m.SourcePart("url", "s1", url="https://example.invalid", title="Ex"),
        m.StepStartPart("openai/gpt-4o-mini"),
        m.ToolInvocationPart("c1", "weather", {"city": "Paris"}, "output-error", None, True, "boom"),
        m.ToolInvocationPart("c2", "weather", {}, "result", {"sky": "blue"}),
        m.ErrorPart("APICallError", "nope"),
        m.DataPart("data-note", {"k": [1, 2]}, "n1"),
    ]
    msg = m.Message(
        id="msg-1", role="assistant", content=m.MessageContent(parts=parts, metadata={"k": "v"}),
        created_at=datetime(2025, 5, 6, 7, 8, 9, 123000, tzinfo=UTC), thread_id="t", resource_id="r",
    )
    assert convert.message_from_proto(convert.message_to_proto(msg)) == msg


def test_message_from_client_gets_id_and_time() -> None:
    pb = message_pb2.Message(role=message_pb2.MESSAGE_ROLE_USER)
    pb.content.parts.add().text.text = "hi"
    msg = convert.message_from_proto(pb)
    assert msg.id.startswith("msg_") and msg.created_at.tzinfo is not None and msg.text == "hi"


@pytest.mark.parametrize(
    ("build", "says"),
    [
        (lambda pb: setattr(pb, "role", 0), "messages[3].role is required"),
        (lambda pb: setattr(pb.content, "format", 3), "messages[3].content.format must be 2"),
        (lambda pb: pb.content.parts.add(), "messages[3].content.parts[1]: exactly one part kind"),
        (lambda pb: pb.content.parts.add().data.SetInParent(), "messages[3].content.parts[1].data.name"),
        (lambda pb: pb.content.parts.add().tool_invocation.SetInParent(), "parts[1].tool_invocation needs"),
        (lambda pb: pb.content.parts.add().file.SetInParent(), "parts[1].file.mime_type is required"),
    ],
)
def test_malformed_messages_name_the_field(build: Any, says: str) -> None:
    pb = message_pb2.Message(role=message_pb2.MESSAGE_ROLE_USER)
    pb.content.parts.add().text.text = "hi"
    build(pb)
    with pytest.raises(InvalidArgumentError) as info:
        convert.message_from_proto(pb, "messages[3]")
    assert says in str(info.value)


FULL_AGENT = {
    "id": "full",
    "name": "Full",
    "description": "Every field.",
    "metadata": {"team": "a", "n": 1},
    "instructionMessages": {"messages": [
        {"content": "One.", "providerOptions": {"anthropic": {"cacheControl": {"type": "ephemeral"}}}},
        {"content": "Two."},
    ]},
    "model": "openai/gpt-4o-mini",
    "baseUrl": "http://127.0.0.1:9/v1",
    "fallbackModels": [{"model": "anthropic/claude-sonnet-4-5", "maxRetries": 1}, {"model": "openai/x", "baseUrl": "http://u.example/v1"}],
    "tools": ["weather", "search"],
    "inputProcessors": [{"id": "guard", "failurePolicy": "FAILURE_POLICY_FAIL_OPEN", "timeout": "1.500s"}],
    "outputProcessors": [{"id": "redact", "failurePolicy": "FAILURE_POLICY_FAIL_CLOSED"}],
    "errorProcessors": [{"id": "recover", "failurePolicy": "FAILURE_POLICY_FAIL_CLOSED"}],
    "maxProcessorRetries": 0,
    "defaultOptions": {
        "inputProcessors": {},
        "outputProcessors": {"processors": [{"id": "redact", "failurePolicy": "FAILURE_POLICY_FAIL_CLOSED"}]},
        "maxSteps": 3,
        "maxProcessorRetries": 2,
        "toolChoice": {"toolName": "weather"},
        "activeTools": ["weather"],
        "modelSettings": {"temperature": 0.0, "maxOutputTokens": 10, "stopSequences": ["END"], "seed": "7"},
        "providerOptions": {"openai": {"user": "u1"}},
        "memory": {"resource": "user-1", "thread": {"id": "t1", "title": "Chat", "metadata": {"k": "v"}}},
        "requestContext": {"tenant": "acme"},
        "structuredOutput": {"schema": {"type": "object"}, "name": "out"},
        "toolHooks": {"beforeToolCall": "audit"},
        "model": "openai/gpt-4o",
    },
    "requestContextSchema": {"type": "object", "properties": {"tenant": {"type": "string"}}},
    "toolHooks": {"beforeToolCall": "audit", "afterToolCall": "log"},
}


def test_agent_round_trips_through_the_domain() -> None:
    agent = convert.agent_from_dict(FULL_AGENT, source="config")
    assert agent.fallback_models == [
        ModelConfig("anthropic/claude-sonnet-4-5", max_retries=1), ModelConfig("openai/x", base_url="http://u.example/v1"),
    ]
    assert agent.input_processors == [ProcessorRef("guard", "fail_open", 1.5)]
    assert agent.tool_hooks == ToolHooksRef("audit", "log")
    opts = agent.default_options
    assert opts is not None
    assert opts.input_processors == [] and opts.output_processors == [ProcessorRef("redact")]
    assert opts.tool_choice == {"type": "tool", "tool_name": "weather"}
    assert opts.model_settings == ModelSettings(temperature=0.0, max_output_tokens=10, seed=7, stop_sequences=["END"])
    assert opts.memory == MemoryOptions("user-1", "t1", "Chat", {"k": "v"})
    assert opts.structured_output == {"schema": {"type": "object"}, "name": "out"}
    back = json_format.MessageToDict(convert.agent_to_proto(agent))
    for output_only in ("source", "createTime", "updateTime"):
        back.pop(output_only)
    assert back == FULL_AGENT


def test_single_plain_instruction_comes_back_as_a_string() -> None:
    agent = convert.agent_from_dict({"id": "a", "model": "openai/x", "instructions": "Be brief."}, source="api")
    assert [s.content for s in agent.instructions] == ["Be brief."]
    assert convert.agent_to_proto(agent).instructions == "Be brief."


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ({"id": "a", "model": "openai/x", "fallbackModels": [{}]}, "agent.fallback_models[0].model is required"),
        ({"id": "a", "model": "openai/x", "outputProcessors": [{}]}, "agent.output_processors[0].id is required"),
        ({"id": "a", "model": "openai/x", "tools": [""]}, "agent.tools[0] is empty"),
        ({"id": "a", "model": "openai/x", "requestContextSchema": {"type": 5}}, "agent.request_context_schema"),
        ({"id": "a", "model": "openai/x", "defaultOptions": {"maxSteps": 0}}, "agent.default_options.max_steps"),
        ({"id": "a", "model": "openai/x", "defaultOptions": {"memory": {"resource": "r"}}},
         "agent.default_options.memory: resource and thread"),
        ({"id": "a", "model": "openai/x", "colour": "red"}, "colour"),
        ({"id": "a"}, "model is required"),
    ],
)
def test_malformed_agents_name_the_field(data: dict[str, Any], says: str) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        convert.agent_from_dict(data, source="api")
    assert says in str(info.value)


def test_call_options_round_trip() -> None:
    opts = CallOptions(
        input_processors=[ProcessorRef("a", "fail_open")], max_steps=4, tool_choice="none",
        model_settings=ModelSettings(top_p=0.5), memory=MemoryOptions("r", "t"),
        request_context={"k": 1}, model="anthropic/claude",
    )
    pb = agent_pb2.CallOptions()
    convert.call_options_to_proto(opts, pb)
    assert pb.memory.thread_id == "t" and pb.tool_choice.mode == agent_pb2.TOOL_CHOICE_MODE_NONE
    assert convert.call_options_from_proto(pb) == opts


def test_run_request_prompt_is_one_user_message() -> None:
    agent_id, request = convert.run_request_from_proto(
        agent_service_pb2.StreamRequest(agent_id="a", prompt="hello", run_id="r1")
    )
    assert agent_id == "a" and request.run_id == "r1"
    assert [(msg.role, msg.text) for msg in request.messages] == [("user", "hello")]
    assert request.options == CallOptions()


def test_generate_result_to_proto() -> None:
    step = StepResult(0, "Hi", "hmm", [ch.ToolCall("c1", "t", {})], [ch.ToolResult("c1", "t", {}, "ok")],
                      "stop", ch.Usage(1, 2, 3), None, "openai/x")
    result = GenerateResult(
        "run-1", "Hi", "other", ch.Usage(1, 2, 3), [step], ch.Tripwire("no", metadata={"a": 1}, processor_id="p"),
        [m.Message.assistant("Hi", id="msg-1")], ch.ErrorPayload("bad", "E"),
    )
    pb = convert.generate_result_to_proto(result)
    as_json = json_format.MessageToDict(pb)
    assert as_json["finishReason"] == "FINISH_REASON_OTHER"
    assert as_json["steps"][0]["toolResults"][0]["result"] == "ok"
    assert as_json["steps"][0]["finishReason"] == "FINISH_REASON_STOP"
    assert as_json["tripwire"] == {"reason": "no", "metadata": {"a": 1.0}, "processorId": "p"}
    assert as_json["messages"][0]["id"] == "msg-1" and as_json["error"]["message"] == "bad"
    assert pb.usage.total_tokens == 3 and pb.steps[0].model_id == "openai/x"
