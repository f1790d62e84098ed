"""openai/<model> through the real ``openai`` SDK against a loopback Chat Completions server."""

from __future__ import annotations

import base64
import json
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

from tests.support import LOOPBACK_TRUST, HttpError, OpenAIServer, ScriptedToolCall, ScriptedUsage, Turn

KEY_ENV = {"OPENAI_API_KEY": "sk-test"}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # The developer's own keys and base URLs must not leak into these tests.
    import os

    for name in list(os.environ):
        if name.startswith(("OPENAI_", "ANTHROPIC_")):
            monkeypatch.delenv(name)


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as s:
        yield s


@pytest.fixture
async def router() -> AsyncIterator[ModelRouter]:
    r = ModelRouter(env=KEY_ENV, trust=LOOPBACK_TRUST)
    yield r
    await r.aclose()


def model_for(router: ModelRouter, server: OpenAIServer, **config: object) -> LanguageModel:
    config.setdefault("max_retries", 0)
    return router.resolve(ModelConfig("openai/gpt-test", base_url=server.base_url, **config))  # type: ignore[arg-type]


def ask(text: str = "hi", **kw: object) -> ModelRequest:
    return ModelRequest(prompt=[PromptMessage("user", [TextPart(text)])], **kw)  # type: ignore[arg-type]


async def collect(model: LanguageModel, request: ModelRequest) -> list[Chunk]:
    return [c async for c in model.stream(request)]


def types(chunks: list[Chunk]) -> list[str]:
    return [c.type for c in chunks]


async def test_text_streams_as_one_text_block_in_order(router, server) -> None:
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
    assert [c.payload.text for c in chunks if c.type == "text-delta"] == ["Hel", "lo", " world"]
    ids = {c.payload.id for c in chunks if c.type.startswith("text-")}
    assert len(ids) == 1
    meta = chunks[0].payload
    assert meta.id.startswith("chatcmpl-") and meta.model_id == "gpt-test"
    finish = chunks[-1].payload
    assert (finish.reason, finish.raw_reason) == ("stop", "stop")
    assert finish.response_id == meta.id and finish.response_model == "gpt-test"


async def test_tool_call_arguments_stream_and_parse(router, server) -> None:
    args = {"city": "Paris", "units": "metric"}
    server.add(Turn(tool_calls=[ScriptedToolCall("get_weather", args, id="call_1", chunks=4)]))
    chunks = await collect(model_for(router, server), ask())
    assert types(chunks) == [
        "response-metadata",
        "tool-call-input-streaming-start",
        *["tool-call-delta"] * 4,
        "tool-call-input-streaming-end",
        "tool-call",
        "finish",
    ]
    start = chunks[1].payload
    assert (start.tool_call_id, start.tool_name) == ("call_1", "get_weather")
    streamed = "".join(c.payload.args_text_delta for c in chunks if c.type == "tool-call-delta")
    assert json.loads(streamed) == args
    call = chunks[-2].payload
    assert (call.tool_call_id, call.tool_name, call.args) == ("call_1", "get_weather", args)
    assert chunks[-1].payload.reason == "tool-calls"


async def test_text_then_two_tool_calls(router, server) -> None:
    server.add(
        Turn(
            text="Checking.",
            tool_calls=[ScriptedToolCall("a", {"x": 1}), ScriptedToolCall("b", {"y": 2})],
        )
    )
    chunks = await collect(model_for(router, server), ask())
    calls = [c.payload for c in chunks if c.type == "tool-call"]
    assert [(c.tool_name, c.args) for c in calls] == [("a", {"x": 1}), ("b", {"y": 2})]
    assert types(chunks).index("text-end") < types(chunks).index("tool-call-input-streaming-start")


async def test_invalid_tool_arguments_are_kept_raw(router, server) -> None:
    server.add(Turn.call("a", '{"x": 1', chunks=2))
    chunks = await collect(model_for(router, server), ask())
    assert [c.payload.args for c in chunks if c.type == "tool-call"] == ['{"x": 1']


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_reasoning_from_compatible_servers(router, field) -> None:
    with OpenAIServer(
        [Turn(reasoning=["Let me ", "think."], text="42")], reasoning_field=field
    ) as s:
        chunks = await collect(model_for(router, s), ask())
    assert types(chunks)[1:-1] == [
        "reasoning-start",
        "reasoning-delta",
        "reasoning-delta",
        "reasoning-end",
        "text-start",
        "text-delta",
        "text-end",
    ]
    assert "".join(c.payload.text for c in chunks if c.type == "reasoning-delta") == "Let me think."


async def test_usage_is_mapped(router, server) -> None:
    usage = ScriptedUsage(input_tokens=120, output_tokens=30, reasoning_tokens=12, cached_tokens=64)
    server.add(Turn.say("ok", usage=usage))
    chunks = await collect(model_for(router, server), ask())
    assert chunks[-1].payload.usage == Usage(
        input_tokens=120,
        output_tokens=30,
        total_tokens=150,
        reasoning_tokens=12,
        cached_input_tokens=64,
    )
    assert server.requests[0]["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("stop", "stop"),
        ("length", "length"),
        ("tool_calls", "tool-calls"),
        ("function_call", "tool-calls"),
        ("content_filter", "content-filter"),
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
        PromptMessage("system", [TextPart("Be brief.")]),
        PromptMessage("user", [TextPart("What is this?"), FilePart("image/png", data=png)]),
        PromptMessage(
            "assistant",
            [
                ReasoningPart("hidden", signature="s"),
                TextPart("Let me look."),
                ToolCallPart("call_9", "lookup", {"q": "png"}),
                ToolCallPart("call_8", "x", {}),
            ],
        ),
        PromptMessage(
            "tool",
            [
                ToolResultPart("call_9", "lookup", {"found": True}),
                ToolResultPart("call_8", "x", "plain"),
            ],
        ),
        PromptMessage("user", [FilePart("application/pdf", data=b"%PDF", filename="a.pdf")]),
    ]
    request = ModelRequest(
        prompt=prompt,
        tools=[
            ToolSpec(
                "lookup", "Look it up", {"type": "object", "properties": {"q": {"type": "string"}}}
            )
        ],
        tool_choice={"type": "tool", "tool_name": "lookup"},
        settings=ModelSettings(
            temperature=0.2,
            top_p=0.9,
            seed=7,
            stop_sequences=["END"],
            presence_penalty=0.1,
            frequency_penalty=0.3,
            max_output_tokens=99,
        ),
        structured_output={"schema": {"type": "object"}, "name": "answer"},
        provider_options={"openai": {"reasoningEffort": "low"}},
    )
    await collect(model_for(router, server), request)
    body = server.requests[0]
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is this?"},
                {
                    "type": "image_url",
                    "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode()},
                },
            ],
        },
        {
            "role": "assistant",
            "content": "Let me look.",
            "tool_calls": [
                {
                    "id": "call_9",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"q": "png"}'},
                },
                {"id": "call_8", "type": "function", "function": {"name": "x", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "call_9", "content": '{"found": true}'},
        {"role": "tool", "tool_call_id": "call_8", "content": "plain"},
        {
            "role": "user",
            "content": [
                {
                    "type": "file",
                    "file": {
                        "file_data": "data:application/pdf;base64,JVBERg==",
                        "filename": "a.pdf",
                    },
                }
            ],
        },
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "lookup",
                "description": "Look it up",
                "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
            },
        }
    ]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "lookup"}}
    assert body["stream"] is True
    # A per-agent base URL means a compatible server: they know max_tokens.
    assert body["max_tokens"] == 99 and "max_completion_tokens" not in body
    assert (body["temperature"], body["top_p"], body["seed"], body["stop"]) == (
        0.2,
        0.9,
        7,
        ["END"],
    )
    assert (body["presence_penalty"], body["frequency_penalty"]) == (0.1, 0.3)
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": {"type": "object"}},
    }
    assert body["reasoning_effort"] == "low"
    assert server.recorded[0].headers["authorization"] == "Bearer sk-test"


@pytest.mark.parametrize(
    ("choice", "sent"), [("none", "none"), ("required", "required"), ("auto", "auto")]
)
async def test_tool_choice(router, server, choice, sent) -> None:
    server.add(Turn.say("x"))
    await collect(model_for(router, server), ask(tools=[ToolSpec("t")], tool_choice=choice))
    assert server.requests[0]["tool_choice"] == sent


async def test_no_tools_sends_no_tool_fields(router, server) -> None:
    server.add(Turn.say("x"))
    await collect(model_for(router, server), ask())
    assert "tools" not in server.requests[0] and "tool_choice" not in server.requests[0]


@pytest.mark.parametrize(
    ("status", "retryable"), [(400, False), (401, False), (429, True), (500, True)]
)
async def test_http_errors_raise_before_any_chunk(router, server, status, retryable) -> None:
    server.add(Turn.fail(status, f"boom {status}"))
    stream = model_for(router, server).stream(ask())
    with pytest.raises(APICallError) as info:
        await stream.__anext__()  # the very first chunk already fails
    e = info.value
    assert (e.provider, e.model_id, e.status_code, e.is_retryable) == (
        "openai",
        "gpt-test",
        status,
        retryable,
    )
    assert e.message == f"boom {status}"
    assert e.body["error"]["message"] == f"boom {status}"
    assert len(server.requests) == 1  # max_retries=0


async def test_context_length_error(router, server) -> None:
    server.add(Turn.context_length_exceeded())
    with pytest.raises(APICallError) as info:
        await collect(model_for(router, server), ask())
    e = info.value
    assert e.status_code == 400 and not e.is_retryable
    assert "context length exceeded" in e.message
    assert "maximum context length" in e.message
    assert e.body["error"]["code"] == "context_length_exceeded"


async def test_error_inside_the_stream(router, server) -> None:
    server.add(Turn(text="partial", stream_error=HttpError(500, "stream broke")))
    seen: list[str] = []
    with pytest.raises(APICallError) as info:
        async for chunk in model_for(router, server).stream(ask()):
            seen.append(chunk.type)
    assert "text-delta" in seen
    assert info.value.message == "stream broke" and info.value.status_code is None


async def test_sdk_retries_500_when_allowed(router, server) -> None:
    server.add(Turn.fail(500, retry_after_ms=1), Turn.say("second time"))
    chunks = await collect(model_for(router, server, max_retries=1), ask())
    assert "".join(c.payload.text for c in chunks if c.type == "text-delta") == "second time"
    assert len(server.requests) == 2


async def test_settings_max_retries_overrides_client(router, server) -> None:
    server.add(Turn.fail(429, retry_after_ms=1), Turn.say("ok"))
    request = ask(settings=ModelSettings(max_retries=1))
    chunks = await collect(model_for(router, server), request)
    assert chunks[-1].payload.reason == "stop" and len(server.requests) == 2


async def test_connection_error_is_retryable(router) -> None:
    with OpenAIServer() as s:
        base_url = s.base_url
    model = router.resolve(ModelConfig("openai/gpt-test", base_url=base_url, max_retries=0))
    with pytest.raises(APICallError) as info:
        await collect(model, ask())
    assert info.value.status_code is None and info.value.is_retryable


async def test_missing_api_key() -> None:
    router = ModelRouter(env={})
    model = router.resolve(ModelConfig("openai/gpt-test"))
    with pytest.raises(APICallError) as info:
        await collect(model, ask())
    assert info.value.status_code is None
    # The user reads this in the client's terminal: it must say where the key is missing.
    assert info.value.message == (
        "the server has no OPENAI_API_KEY: set it (or OPENAI_BASE_URL) in the environment "
        "where the server runs and restart it, or give the agent a base_url of an "
        "OpenAI-compatible server"
    )


async def test_base_url_without_key_uses_placeholder(server) -> None:
    router = ModelRouter(env={})
    server.add(Turn.say("local"))
    chunks = await collect(model_for(router, server), ask())
    await router.aclose()
    assert chunks[-1].payload.reason == "stop"
    assert server.recorded[0].headers["authorization"].startswith("Bearer ")


async def test_openai_base_url_env_is_honoured(monkeypatch, server) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    server.add(Turn.say("via env"))
    router = ModelRouter()
    model = router.resolve(ModelConfig("openai/gpt-env", max_retries=0))
    chunks = await collect(model, ask(settings=ModelSettings(max_output_tokens=5)))
    await router.aclose()
    assert chunks[-1].payload.response_model == "gpt-env"
    body = server.requests[0]
    # OpenAI's own API (no per-agent base URL) takes max_completion_tokens.
    assert body["max_completion_tokens"] == 5 and "max_tokens" not in body
    assert server.recorded[0].headers["authorization"] == "Bearer sk-env"


async def test_per_agent_base_url_wins_over_env(monkeypatch, router, server) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    server.add(Turn.say("agent url"))
    chunks = await collect(model_for(router, server), ask())
    assert chunks[-1].payload.reason == "stop" and len(server.requests) == 1


async def test_clients_are_cached_per_base_url_and_key(router, server) -> None:
    a = model_for(router, server)
    b = model_for(router, server)
    assert a._client is b._client  # type: ignore[attr-defined]
    c = model_for(router, server, max_retries=3)
    assert c._client is not a._client  # type: ignore[attr-defined]
