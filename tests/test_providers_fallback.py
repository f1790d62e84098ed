"""FallbackModel, the ModelRouter, and one script played against both providers."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import pytest
from treadle.core.chunks import Chunk, TextDelta
from treadle.core.errors import APICallError, InvalidArgumentError
from treadle.core.messages import PromptMessage, TextPart
from treadle.providers.base import LanguageModel, ModelConfig, ModelFinish, ModelRequest
from treadle.providers.fallback import FallbackModel
from treadle.providers.router import ModelRouter

from tests.support import LOOPBACK_TRUST, AnthropicServer, HttpError, OpenAIServer, ScriptedToolCall, Turn
from tests.support.fixtures import anthropic_server, openai_server, wire_server  # noqa: F401

ENV = {"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "ANTHROPIC_")):
            monkeypatch.delenv(name)


@pytest.fixture
async def router() -> AsyncIterator[ModelRouter]:
    r = ModelRouter(env=ENV, trust=LOOPBACK_TRUST)
    yield r
    await r.aclose()


def ask(text: str = "hi") -> ModelRequest:
    return ModelRequest(prompt=[PromptMessage("user", [TextPart(text)])])


async def collect(model: LanguageModel, request: ModelRequest) -> list[Chunk]:
    return [c async for c in model.stream(request)]


def text_of(chunks: list[Chunk]) -> str:
    return "".join(c.payload.text for c in chunks if c.type == "text-delta")


def config(provider: str, server: OpenAIServer | AnthropicServer, **kw: object) -> ModelConfig:
    kw.setdefault("max_retries", 0)
    return ModelConfig(f"{provider}/m-{provider}", base_url=server.base_url, **kw)  # type: ignore[arg-type]


# --- fallback ---------------------------------------------------------------------------------


async def test_falls_back_when_the_primary_fails_before_any_chunk(
    router,
    openai_server,  # noqa: F811
    anthropic_server,  # noqa: F811
) -> None:
    primary = openai_server([Turn.fail(500)])
    backup = anthropic_server([Turn.say("from the backup")])
    model = router.resolve(config("openai", primary, fallbacks=[config("anthropic", backup)]))
    assert isinstance(model, FallbackModel)
    assert (model.provider, model.model_id) == ("openai", "m-openai")
    chunks = await collect(model, ask())
    assert text_of(chunks) == "from the backup"
    assert chunks[0].payload.model_id == "m-anthropic"  # response-metadata names who answered
    assert len(primary.requests) == 1 and len(backup.requests) == 1


async def test_the_last_error_propagates_saying_what_every_model_said(router, openai_server) -> None:  # noqa: F811
    a = openai_server([Turn.fail(500, "first down")])
    b = openai_server([Turn.fail(429, "second busy")])
    model = router.resolve(config("openai", a, fallbacks=[config("openai", b)]))
    with pytest.raises(APICallError) as info:
        await collect(model, ask())
    # The status (what error processors retry on) is the last model's; the message names both.
    assert info.value.status_code == 429
    assert info.value.message.startswith("every model failed: openai/")
    assert "(500): first down; openai/" in info.value.message and info.value.message.endswith("(429): second busy")


async def test_no_fallback_after_the_first_chunk(router, openai_server) -> None:  # noqa: F811
    a = openai_server([Turn(text="partial", stream_error=HttpError(500, "cut"))])
    b = openai_server([Turn.say("never used")])
    model = router.resolve(config("openai", a, fallbacks=[config("openai", b)]))
    with pytest.raises(APICallError, match="cut"):
        await collect(model, ask())
    assert b.requests == [] and b.remaining == 1
    b.script.clear()  # played by no one, as it should be


async def test_missing_key_falls_back(openai_server) -> None:  # noqa: F811
    router = ModelRouter(env={"OPENAI_API_KEY": "sk-test"}, trust=LOOPBACK_TRUST)
    backup = openai_server([Turn.say("openai answered")])
    model = router.resolve(ModelConfig("anthropic/claude-x", fallbacks=[config("openai", backup)]))
    chunks = await collect(model, ask())
    await router.aclose()
    assert text_of(chunks) == "openai answered"


class _Scripted:
    """A minimal in-process LanguageModel: fails or yields one text delta."""

    def __init__(self, name: str, fail: bool = False) -> None:
        self.name, self.fail, self.calls = name, fail, 0

    @property
    def provider(self) -> str:
        return "test"

    @property
    def model_id(self) -> str:
        return self.name

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        self.calls += 1
        if self.fail:
            raise APICallError(f"{self.name} failed", provider="test", model_id=self.name)
        yield Chunk.of(TextDelta(id="t", text=self.name))
        yield Chunk(type="finish", payload=ModelFinish(reason="stop"))


async def test_fallback_model_in_process() -> None:
    a, b, c = _Scripted("a", fail=True), _Scripted("b"), _Scripted("c")
    model = FallbackModel([a, b, c])
    assert text_of(await collect(model, ask())) == "b"
    assert (a.calls, b.calls, c.calls) == (1, 1, 0)
    assert model.model_id == "a"


def test_fallback_model_needs_a_model() -> None:
    with pytest.raises(ValueError):
        FallbackModel([])


# --- router -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad", ["gpt-4o", "/gpt-4o", "openai/", "openai", "", "mistral/large", "OpenAI/gpt-4o"]
)
def test_router_rejects_bad_model_strings(bad) -> None:
    router = ModelRouter(env=ENV, trust=LOOPBACK_TRUST)
    with pytest.raises(InvalidArgumentError) as info:
        router.validate(bad)
    assert "openai" in str(info.value) and "anthropic" in str(info.value)
    with pytest.raises(InvalidArgumentError):
        router.resolve(ModelConfig(bad))


def test_router_accepts_slashes_in_the_model_name() -> None:
    router = ModelRouter(env=ENV, trust=LOOPBACK_TRUST)
    router.validate("openai/meta-llama/Llama-3.1-8B-Instruct")
    model = router.resolve(ModelConfig("openai/meta-llama/Llama-3.1-8B-Instruct"))
    assert (model.provider, model.model_id) == ("openai", "meta-llama/Llama-3.1-8B-Instruct")


async def test_router_reads_env_at_resolve_time(monkeypatch) -> None:
    router = ModelRouter()
    with pytest.raises(APICallError):
        await collect(router.resolve(ModelConfig("openai/gpt-x")), ask())
    monkeypatch.setenv("OPENAI_API_KEY", "sk-late")
    model = router.resolve(ModelConfig("openai/gpt-x"))
    assert model._client.api_key == "sk-late"  # type: ignore[attr-defined]
    await router.aclose()


# --- one script, both providers ---------------------------------------------------------------


async def test_same_script_on_both_providers(router, wire_server) -> None:  # noqa: F811
    server = wire_server(
        [
            Turn(reasoning="thinking", text=["It is ", "sunny."]),
            Turn(tool_calls=[ScriptedToolCall("weather", {"city": "Oslo"}, chunks=3)]),
            lambda body: Turn.say(f"saw {len(body['messages'])} message(s)"),
        ]
    )
    model = router.resolve(config(server.provider, server))
    first = await collect(model, ask())
    kinds = [c.type for c in first]
    assert kinds.index("reasoning-end") < kinds.index("text-start")
    assert text_of(first) == "It is sunny."
    second = await collect(model, ask())
    calls = [c.payload for c in second if c.type == "tool-call"]
    assert [(c.tool_name, c.args) for c in calls] == [("weather", {"city": "Oslo"})]
    assert second[-1].payload.reason == "tool-calls"
    third = await collect(model, ask())
    assert text_of(third) == "saw 1 message(s)"
    assert server.remaining == 0 and server.failures == []


async def test_running_out_of_script_is_reported(router, wire_server) -> None:  # noqa: F811
    server = wire_server([])
    with pytest.raises(APICallError) as info:
        await collect(router.resolve(config(server.provider, server, max_retries=2)), ask())
    assert info.value.status_code == 500 and "script exhausted" in info.value.message
    assert len(server.requests) == 1  # x-should-retry: false stops the SDK retrying
    assert server.take_failures() == [
        f"scripted {server.provider} server: script exhausted: request #1 has no turn (the script has 0)"
    ]
