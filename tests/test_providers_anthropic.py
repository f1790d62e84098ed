"""anthropic/<model> through the real ``anthropic`` SDK against a loopback Messages API server."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import AsyncIterator, Iterator

import pytest
from treadle.core.chunks import Chunk, Usage
from treadle.core.errors import APICallError
from treadle.core.messages import (
    FilePart,
    PromptMessage,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from treadle.providers.base import LanguageModel, ModelConfig, ModelRequest, ModelSettings, ToolSpec
from treadle.providers.router import ModelRouter

from tests.support import LOOPBACK_TRUST, AnthropicServer, HttpError, ScriptedToolCall, ScriptedUsage, Turn

KEY_ENV = {"ANTHROPIC_API_KEY": "sk-ant-test"}
EPHEMERAL = {"anthropic": {"cacheControl": {"type": "ephemeral"}}}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # The developer's own keys and base URLs must not leak into these tests.
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "ANTHROPIC_")):
            monkeypatch.delenv(name)


@pytest.fixture
def server() -> Iterator[AnthropicServer]:
    with AnthropicServer() as s:
        yield s


@pytest.fixture
async def router() -> AsyncIterator[ModelRouter]:
    r = ModelRouter(env=KEY_ENV, trust=LOOPBACK_TRUST)
    yield r
    await r.aclose()


def model_for(router: ModelRouter, server: AnthropicServer, **config: object) -> LanguageModel:
    config.setdefault("max_retries", 0)
    return router.resolve(ModelConfig("anthropic/claude-test", base_url=server.base_url, **config))  # type: ignore[arg-type]


def ask(text: str = "hi", **kw: object) -> ModelRequest:
    return ModelRequest(prompt=[PromptMessage("user", [TextPart(text)])], **kw)  # type: ignore[arg-type]


async def collect(model: LanguageModel, request: ModelRequest) -> list[Chunk]:
    return [c async for c in model.stream(request)]


def credential(server: AnthropicServer) -> str:
    # SDK 2.x sends an API key as a bearer token; older ones used x-api-key.
    headers = server.recorded[0].headers
    return headers.get("x-api-key") or headers.get("authorization", "")


def types(chunks: list[Chunk]) -> list[str]:
    return [c.type for c in chunks]


async def test_text_streams_in_order(router, server) -> None:
    server.add(Turn.say(["Hel", "lo", " world"]))
    chunks = await collect(model_for(router, server), ask())
    assert types(chunks) == [
        "response-metadata",
        "text-start",
        "text-delta",
        "text-delta",
        "text-delta",
        "text-end",
        "finish",
    ]
    assert "".join(c.payload.text for c in chunks if c.type == "text-delta") == "Hello world"
    assert len({c.payload.id for c in chunks if c.type.startswith("text-")}) == 1
    meta, finish = chunks[0].payload, chunks[-1].payload
    assert meta.id.startswith("msg_") and meta.model_id == "claude-test"
    assert (finish.reason, finish.raw_reason, finish.response_id) == ("stop", "end_turn", meta.id)


async def test_tool_use_streams_arguments(router, server) -> None:
    args = {"city": "Paris", "days": 3}
    server.add(
        Turn(
            text="Checking.",
            tool_calls=[ScriptedToolCall("get_weather", args, id="toolu_1", chunks=3)],
        )
    )
    chunks = await collect(model_for(router, server), ask())
    assert types(chunks) == [
        "response-metadata",
        "text-start",
        "text-delta",
        "text-end",
        "tool-call-input-streaming-start",
        *["tool-call-delta"] * 3,
        "tool-call-input-streaming-end",
        "tool-call",
        "finish",
    ]
    streamed = "".join(c.payload.args_text_delta for c in chunks if c.type == "tool-call-delta")
    assert json.loads(streamed) == args
    call = chunks[-2].payload
    assert (call.tool_call_id, call.tool_name, call.args) == ("toolu_1", "get_weather", args)
    assert (chunks[-1].payload.reason, chunks[-1].payload.raw_reason) == ("tool-calls", "tool_use")


async def test_tool_use_without_arguments_parses_to_empty_object(router, server) -> None:
    server.add(Turn.call("now", ""))
    chunks = await collect(model_for(router, server), ask())
    assert [c.payload.args for c in chunks if c.type == "tool-call"] == [{}]


async def test_thinking_streams_as_reasoning_with_signature(router, server) -> None:
    server.add(Turn(reasoning=["Hmm, ", "six times seven."], signature="sig-abc", text="42"))
    chunks = await collect(model_for(router, server), ask())
    assert types(chunks)[1:-1] == [
        "reasoning-start",
        "reasoning-delta",
        "reasoning-delta",
        "reasoning-end",
        "text-start",
        "text-delta",
        "text-end",
    ]
    end = chunks[4].payload
    assert end.signature == "sig-abc"
    assert end.provider_metadata == {"anthropic": {"signature": "sig-abc"}}
    text = "".join(c.payload.text for c in chunks if c.type == "reasoning-delta")
    assert text == "Hmm, six times seven."


async def test_redacted_thinking(router, server) -> None:
    server.add(Turn(redacted_reasoning="EncRyPtEd", text="ok"))
    chunks = await collect(model_for(router, server), ask())
    assert types(chunks)[1:3] == ["reasoning-start", "reasoning-end"]
    for chunk in chunks[1:3]:
        assert chunk.payload.provider_metadata == {"anthropic": {"redactedData": "EncRyPtEd"}}


async def test_usage_adds_cache_reads_and_writes_to_input(router, server) -> None:
    usage = ScriptedUsage(
        input_tokens=1000,
        output_tokens=40,
        reasoning_tokens=25,
        cached_tokens=800,
        cache_write_tokens=150,
    )
    server.add(Turn.say("ok", usage=usage))
    chunks = await collect(model_for(router, server), ask())
    assert chunks[-1].payload.usage == Usage(
        input_tokens=1000,
        output_tokens=40,
        total_tokens=1040,
        reasoning_tokens=25,
        cached_input_tokens=800,
    )


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("tool_use", "tool-calls"),
        ("refusal", "content-filter"),
        ("pause_turn", "other"),
        ("something_new", "unknown"),
    ],
)
async def test_finish_reasons(router, server, raw, reason) -> None:
    server.add(Turn.say("x", finish_reason=raw))
    finish = (await collect(model_for(router, server), ask()))[-1].payload
    assert (finish.reason, finish.raw_reason) == (reason, raw)


async def test_prompt_conversion(router, server) -> None:
    server.add(Turn.say("done"))
    png = b"\x89PNG fake"
    prompt = [
        PromptMessage("system", [TextPart("You are terse.")], provider_options=EPHEMERAL),
        PromptMessage(
            "system",
            [TextPart("Second.")],
            provider_options={"anthropic": {"cache_control": {"type": "ephemeral"}}},
        ),
        PromptMessage("user", [TextPart("Look:"), FilePart("image/png", data=png)]),
        PromptMessage("user", [TextPart("Please.")], provider_options=EPHEMERAL),
        PromptMessage(
            "assistant",
            [
                ReasoningPart("thinking it over", signature="sig-1"),
                ReasoningPart("", redacted_data=b"REDACTED"),
                ReasoningPart("no signature: dropped"),
                TextPart("Let me check."),
                ToolCallPart("toolu_9", "lookup", {"q": "png"}),
                ToolCallPart("toolu_8", "other", {}),
            ],
        ),
        PromptMessage(
            "tool",
            [
                ToolResultPart("toolu_9", "lookup", {"found": True}),
                ToolResultPart("toolu_8", "other", "bad input", is_error=True),
            ],
        ),
        PromptMessage("user", [TextPart("And?")]),
    ]
    request = ModelRequest(
        prompt=prompt,
        tools=[
            ToolSpec(
                "lookup", "Look it up", {"type": "object", "properties": {"q": {"type": "string"}}}
            )
        ],
        tool_choice="auto",  # Anthropic refuses thinking with a forced choice (see below)
        settings=ModelSettings(stop_sequences=["END"], temperature=0.5),
        provider_options={"anthropic": {"thinking": {"type": "enabled", "budgetTokens": 2048}}},
    )
    await collect(model_for(router, server), request)
    body = server.requests[0]
    assert body["system"] == [
        {"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "Second.", "cache_control": {"type": "ephemeral"}},
    ]
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Look:"},
                {
                    "type": "image",
                    "source": {
                        "type": "base64",
                        "media_type": "image/png",
                        "data": base64.b64encode(png).decode(),
                    },
                },
                {"type": "text", "text": "Please.", "cache_control": {"type": "ephemeral"}},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "thinking it over", "signature": "sig-1"},
                {"type": "redacted_thinking", "data": "REDACTED"},
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": "toolu_9", "name": "lookup", "input": {"q": "png"}},
                {"type": "tool_use", "id": "toolu_8", "name": "other", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_9", "content": '{"found": true}'},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_8",
                    "content": "bad input",
                    "is_error": True,
                },
                {"type": "text", "text": "And?"},
            ],
        },
    ]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] == 2048 + 4096  # the thinking budget must fit below max_tokens
    assert body["tools"] == [
        {
            "name": "lookup",
            "description": "Look it up",
            "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
        }
    ]
    assert body["tool_choice"] == {"type": "auto"}
    assert body["stop_sequences"] == ["END"]
    assert body["stream"] is True
    assert "temperature" not in body  # SDK 2.x has no sampling parameters
    assert "sk-ant-test" in credential(server)


async def test_max_tokens_defaults_to_4096(router, server) -> None:
    server.add(Turn.say("x"), Turn.say("y"))
    model = model_for(router, server)
    await collect(model, ask())
    await collect(model, ask(settings=ModelSettings(max_output_tokens=100)))
    assert [r["max_tokens"] for r in server.requests] == [4096, 100]
    assert "system" not in server.requests[0]


@pytest.mark.parametrize(
    ("choice", "sent"),
    [
        ("auto", {"type": "auto"}),
        ("none", {"type": "none"}),
        ({"type": "tool", "tool_name": "t"}, {"type": "tool", "name": "t"}),
    ],
)
async def test_tool_choice(router, server, choice, sent) -> None:
    server.add(Turn.say("x"))
    await collect(model_for(router, server), ask(tools=[ToolSpec("t")], tool_choice=choice))
    assert server.requests[0]["tool_choice"] == sent


async def test_structured_output(router, server) -> None:
    server.add(Turn.say("{}"))
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    await collect(model_for(router, server), ask(structured_output={"schema": schema}))
    assert server.requests[0]["output_config"] == {
        "format": {"type": "json_schema", "schema": schema}
    }


@pytest.mark.parametrize(
    ("status", "retryable"), [(400, False), (401, False), (429, True), (500, True), (529, True)]
)
async def test_http_errors_raise_before_any_chunk(router, server, status, retryable) -> None:
    server.add(Turn.fail(status, f"boom {status}"))
    stream = model_for(router, server).stream(ask())
    with pytest.raises(APICallError) as info:
        await stream.__anext__()
    e = info.value
    assert (e.provider, e.model_id, e.status_code, e.is_retryable) == (
        "anthropic",
        "claude-test",
        status,
        retryable,
    )
    assert e.message == f"boom {status}"
    assert e.body["type"] == "error" and e.body["error"]["message"] == f"boom {status}"
    assert len(server.requests) == 1


async def test_context_length_error(router, server) -> None:
    server.add(Turn.context_length_exceeded())
    with pytest.raises(APICallError) as info:
        await collect(model_for(router, server), ask())
    e = info.value
    assert e.status_code == 400 and "context length exceeded" in e.message
    assert e.body["error"]["type"] == "invalid_request_error"
    assert e.message.startswith("prompt is too long")


async def test_error_event_inside_the_stream(router, server) -> None:
    server.add(Turn(text="partial", stream_error=HttpError(529, "Overloaded")))
    seen: list[str] = []
    with pytest.raises(APICallError) as info:
        async for chunk in model_for(router, server).stream(ask()):
            seen.append(chunk.type)
    assert "text-delta" in seen
    e = info.value
    assert e.status_code == 529 and e.is_retryable
    assert e.message == "Overloaded (overloaded_error)"
    assert e.body["error"]["type"] == "overloaded_error"


async def test_sdk_retries_500_when_allowed(router, server) -> None:
    server.add(Turn.fail(500, retry_after_ms=1), Turn.say("second time"))
    chunks = await collect(model_for(router, server, max_retries=1), ask())
    assert "".join(c.payload.text for c in chunks if c.type == "text-delta") == "second time"
    assert len(server.requests) == 2


async def test_missing_api_key() -> None:
    router = ModelRouter(env={})
    with pytest.raises(APICallError) as info:
        await collect(router.resolve(ModelConfig("anthropic/claude-test")), ask())
    assert info.value.status_code is None
    assert info.value.message.startswith("the server has no ANTHROPIC_API_KEY: set it")


async def test_anthropic_base_url_env_is_honoured(monkeypatch, server) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    server.add(Turn.say("via env"))
    router = ModelRouter()
    chunks = await collect(
        router.resolve(ModelConfig("anthropic/claude-env", max_retries=0)), ask()
    )
    await router.aclose()
    assert chunks[-1].payload.response_model == "claude-env"
    assert "sk-ant-env" in credential(server)


async def test_per_agent_base_url_wins_over_env(monkeypatch, router, server) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # nothing listens there
    server.add(Turn.say("agent url"))
    chunks = await collect(model_for(router, server), ask())
    assert chunks[-1].payload.reason == "stop"
