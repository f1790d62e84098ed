"""The built-in processors by name and options, from a config file, CreateAgent and Python; the
error processors and the default error stack, through the wire-level provider fakes. The guards
are in ``test_builtin_guards.py``."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import Harness, harness_factory  # noqa: F401
from tests.support import HttpError, Turn
from treadle.agents import ProcessorRef
from treadle.api.convert import agent_from_dict
from treadle.core.errors import InvalidArgumentError
from treadle.core.messages import Message, MessageContent, ReasoningPart, TextPart
from treadle.processors.builtin import PII, FakeClock, PrefillErrorHandler, StreamErrorRetry
from treadle.providers.base import ModelSettings

NO_SDK_RETRIES = ModelSettings(max_retries=0)
"""The provider SDKs retry 429/5xx themselves; these tests look at what the processors do."""

PREFILL_400 = (
    "This model does not support assistant message prefill. "
    "The conversation must end with a user message."
)


def user_texts(body: dict[str, Any]) -> list[str]:
    out = []
    for m in body["messages"]:
        if m["role"] == "user":
            c = m["content"]
            out.append(c if isinstance(c, str) else "".join(b.get("text", "") for b in c if b.get("type") == "text"))
    return out


# --- by name and options ----------------------------------------------------------------------


def test_a_builtin_by_name_defaults_its_id_to_the_name() -> None:
    agent = agent_from_dict({
        "id": "a", "model": "openai/m",
        "inputProcessors": [{"builtin": "pii", "options": {"strategy": "block"}}],
    }, source="api")
    assert agent.input_processors == [ProcessorRef("", builtin="pii", options={"strategy": "block"})]
    assert agent.input_processors[0].processor_id == "pii"


def test_builtin_refs_and_the_defaults_switch_round_trip_through_the_proto() -> None:
    from google.protobuf import json_format

    from treadle.api.convert import agent_to_proto

    data = {
        "id": "a", "model": "openai/m", "errorProcessorDefaults": False,
        "outputProcessors": [{"id": "strict-pii", "builtin": "pii", "options": {"types": ["email"]}}],
    }
    agent = agent_from_dict(data, source="api")
    assert agent.error_processor_defaults is False
    out = json_format.MessageToDict(agent_to_proto(agent))
    assert out["errorProcessorDefaults"] is False
    # No failure policy: a built-in runs in the server's process, so none applies (docs/processors.md).
    assert out["outputProcessors"] == [{"id": "strict-pii", "builtin": "pii", "options": {"types": ["email"]}}]


@pytest.mark.parametrize("entry, says", [
    ({"builtin": "piii"}, "unknown built-in processor 'piii'"),
    ({"builtin": "pii", "options": {"strategy": "shout"}}, "option 'strategy' must be one of"),
    ({"builtin": "pii", "options": {"stratgy": "block"}}, "unknown option 'stratgy'"),
    ({"builtin": "token-limiter", "options": {"maxTokens": -1}}, "option 'maxTokens' must be > 0"),
    ({"builtin": "pii", "options": {"replacement": "<{kind}>"}}, "may only use the placeholder {type}"),
    ({"builtin": "stream-error-retry", "options": {"maxRetries": 1.5}}, "option 'maxRetries' must be a whole number"),
    ({"builtin": "moderation"}, "option 'model' is required"),
    ({"id": "x", "options": {"a": 1}}, "options is only for built-in processors"),
])
def test_unknown_names_and_bad_options_are_invalid_arguments_naming_them(entry: Any, says: str) -> None:
    with pytest.raises(InvalidArgumentError, match="agent.input_processors\\[0\\]") as info:
        agent_from_dict({"id": "a", "model": "openai/m", "inputProcessors": [entry]}, source="api")
    assert says in str(info.value)


def test_a_code_agent_naming_an_unknown_builtin_is_refused() -> None:
    from treadle.agents import Agent
    from treadle.registry import Registry

    bad = Agent(id="a", model="openai/m", output_processors=[ProcessorRef(builtin="nope")])
    with pytest.raises(InvalidArgumentError, match=r"agent 'a': output_processors\[0\]: unknown built-in processor 'nope'"):
        Registry().add_agent(bad)


async def test_pii_block_by_name_trips_with_processor_id_pii(harness_factory) -> None:
    h: Harness = harness_factory([])
    agent = h.agent(input_processors=[ProcessorRef(builtin="pii", options={"strategy": "block"})])
    result = await h.generate(agent, "mail me at jane.doe@example.com")
    assert result.tripwire is not None and result.tripwire.processor_id == "pii"
    assert "email" in result.tripwire.reason and h.bodies() == []


async def test_pii_block_as_a_python_object(harness_factory) -> None:
    h: Harness = harness_factory([Turn.say("ok")])
    result = await h.generate(h.agent(input_processors=[PII(strategy="block")]), "no personal data here")
    assert result.tripwire is None and result.text == "ok"


# --- the error processors ---------------------------------------------------------------------


@pytest.mark.parametrize("message", [
    PREFILL_400, "messages: final assistant content cannot end with trailing whitespace",
])
async def test_prefill_400_in_anthropics_shape_is_recovered_in_one_retry(harness_factory, message) -> None:
    h: Harness = harness_factory(
        [Turn.fail(400, message, type="invalid_request_error"), Turn.say("Here is the rest.")],
        "anthropic",
    )
    agent = h.agent(error_processors=[PrefillErrorHandler()])
    prompt = [Message.user("Write a haiku"), Message.assistant("Autumn moon")]
    result = await h.generate(agent, prompt)
    assert result.text == "Here is the rest." and result.error is None
    first, second = h.bodies()
    assert first["messages"][-1]["role"] == "assistant"
    assert second["messages"][-1]["role"] == "user"  # the prompt now ends with a user turn
    assert "continue" in user_texts(second)[-1]


async def test_prefill_handler_retries_only_once(harness_factory) -> None:
    h: Harness = harness_factory([Turn.fail(400, PREFILL_400)] * 2, "anthropic")
    result = await h.generate(h.agent(error_processors=[PrefillErrorHandler()]),
                              [Message.user("hi"), Message.assistant("Hel")])
    assert len(h.bodies()) == 2 and result.finish_reason == "error"


async def test_429_with_retry_after_is_retried_after_that_delay(harness_factory) -> None:
    clock = FakeClock()
    h: Harness = harness_factory([Turn.fail(429, "slow down", retry_after=7), Turn.say("made it")])
    agent = h.agent(error_processors=[StreamErrorRetry(clock=clock)])
    result = await h.generate(agent, "hi", model_settings=NO_SDK_RETRIES)
    assert result.text == "made it"
    assert clock.sleeps == [7.0] and len(h.bodies()) == 2


async def test_transient_errors_back_off_exponentially_within_max_retries(harness_factory) -> None:
    clock = FakeClock()
    h: Harness = harness_factory([Turn.fail(503), Turn.fail(500), Turn.fail(502)])
    agent = h.agent(error_processors=[StreamErrorRetry(max_retries=2, base_delay=0.5, clock=clock)])
    result = await h.generate(agent, "hi", model_settings=NO_SDK_RETRIES)
    assert result.finish_reason == "error" and result.error.details["statusCode"] == 502
    assert clock.sleeps == [0.5, 1.0] and len(h.bodies()) == 3


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_a_stream_broken_mid_way_is_retried(harness_factory, provider) -> None:
    clock = FakeClock()
    status = 529 if provider == "anthropic" else 500
    h: Harness = harness_factory(
        [Turn(text=["Hel", "lo"], stream_error=HttpError(status, "Overloaded")), Turn.say("Hello again")],
        provider,
    )
    result = await h.generate(h.agent(error_processors=[StreamErrorRetry(clock=clock)]), "hi")
    assert result.text == "Hello again" and len(clock.sleeps) == 1


async def test_a_refused_connection_is_retried(harness_factory) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    clock = FakeClock()
    h: Harness = harness_factory([])
    agent = h.agent(base_url=dead, error_processors=[StreamErrorRetry(clock=clock)])
    result = await h.generate(agent, "hi", model_settings=NO_SDK_RETRIES)
    assert result.finish_reason == "error" and result.error.details["statusCode"] is None
    assert clock.sleeps == [1.0]  # one retry after the base delay, then the budget of 1 is spent


async def test_client_errors_are_not_retried(harness_factory) -> None:
    clock = FakeClock()
    h: Harness = harness_factory([Turn.fail(400, "bad request")])
    result = await h.generate(h.agent(error_processors=[StreamErrorRetry(clock=clock)]), "hi")
    assert result.finish_reason == "error" and clock.sleeps == [] and len(h.bodies()) == 1


async def test_every_agent_gets_the_default_error_stack(harness_factory) -> None:
    h: Harness = harness_factory([Turn.fail(400, PREFILL_400), Turn.say("recovered")], "anthropic")
    result = await h.generate(h.agent(), [Message.user("hi"), Message.assistant("Hel")])
    assert result.text == "recovered"


async def test_the_default_stack_retries_transient_errors_twice(harness_factory) -> None:
    clock = FakeClock()
    h: Harness = harness_factory([Turn.fail(503)] * 3)
    h.registry.builtin_context.clock = clock
    result = await h.generate(h.agent(), "hi", model_settings=NO_SDK_RETRIES)
    assert result.finish_reason == "error" and len(h.bodies()) == 3 and len(clock.sleeps) == 2


async def test_error_processor_defaults_false_opts_out(harness_factory) -> None:
    h: Harness = harness_factory([Turn.fail(400, PREFILL_400)], "anthropic")
    result = await h.generate(h.agent(error_processor_defaults=False),
                              [Message.user("hi"), Message.assistant("Hel")])
    assert result.finish_reason == "error" and len(h.bodies()) == 1


async def test_an_agents_own_error_list_replaces_the_defaults(harness_factory) -> None:
    class Watch:
        id = "watch"
        seen: list[int] = []

        def process_api_error(self, args: Any) -> None:
            self.seen.append(args.error.status_code)

    h: Harness = harness_factory([Turn.fail(400, PREFILL_400)], "anthropic")
    result = await h.generate(h.agent(error_processors=[Watch()]), [Message.user("hi"), Message.assistant("x")])
    assert result.finish_reason == "error" and Watch.seen == [400] and len(h.bodies()) == 1


async def test_history_repair_drops_a_signature_the_provider_rejects(harness_factory) -> None:
    h: Harness = harness_factory([
        Turn.fail(400, "messages.1.content.0: Invalid `signature` in `thinking` block"),
        Turn.say("fine"),
    ], "anthropic")
    foreign = Message(id="m1", role="assistant", content=MessageContent(parts=[
        ReasoningPart("thinking elsewhere", signature="sig-from-another-provider"), TextPart("earlier"),
    ]))
    result = await h.generate(h.agent(), [Message.user("q"), foreign, Message.user("again")])
    assert result.text == "fine"
    first, second = h.bodies()
    kinds = lambda body: [b["type"] for m in body["messages"] for b in (m["content"] if isinstance(m["content"], list) else [])]  # noqa: E731
    assert "thinking" in kinds(first) and "thinking" not in kinds(second)


# --- from a config file, CreateAgent and the docs ---------------------------------------------


async def test_a_bad_builtin_in_a_config_file_names_the_file_and_the_agent(tmp_path) -> None:
    from treadle.app import TreadleApp
    from treadle.config import AgentFileError, Settings

    path = tmp_path / "agents.yaml"
    path.write_text("agents:\n  - id: ok\n    model: openai/x\n  - id: guarded\n    model: openai/x\n"
                    "    inputProcessors: [{builtin: pii, options: {strategy: shout}}]\n")
    app = TreadleApp(Settings(example_agent=False), env={})
    with pytest.raises(AgentFileError) as info:
        app.load_agents(path)
    message = str(info.value)
    assert f"{path}: agents[1] ('guarded')" in message and "option 'strategy'" in message
    assert app.registry.list_agents() == []
    await app.stop(0)


async def test_create_agent_with_an_unknown_builtin_is_invalid_argument(start_app, openai_server) -> None:
    import grpc
    from google.protobuf import json_format

    from treadle.v1 import agent_pb2, agent_service_pb2, agent_service_pb2_grpc

    running = await start_app()
    good = {"id": "g", "model": "openai/m", "outputProcessors": [{"builtin": "batch-parts", "options": {"batchSize": 3}}]}
    bad = {"id": "b", "model": "openai/m", "inputProcessors": [{"builtin": "profanity"}]}
    async with grpc.aio.insecure_channel(running.target) as channel:
        stub = agent_service_pb2_grpc.AgentServiceStub(channel)
        created = (await stub.CreateAgent(agent_service_pb2.CreateAgentRequest(
            agent=json_format.ParseDict(good, agent_pb2.Agent())))).agent
        assert created.output_processors[0].builtin == "batch-parts"
        assert json_format.MessageToDict(created.output_processors[0].options) == {"batchSize": 3}
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await stub.CreateAgent(agent_service_pb2.CreateAgentRequest(agent=json_format.ParseDict(bad, agent_pb2.Agent())))
        listed = await stub.ListAgents(agent_service_pb2.ListAgentsRequest())
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "unknown built-in processor 'profanity'" in (info.value.details() or "")
    assert [a.id for a in listed.agents] == ["g"]


DOCS = (__import__("pathlib").Path(__file__).resolve().parents[1] / "docs" / "processors.md").read_text()
DOC_BLOCKS = {("docs/processors.md", "yaml", i): "test_every_yaml_example_in_the_docs_names_builtins_with_valid_options"
              for i in range(10)}
"""The Python block and the remote built-in are run by tests/test_doc_blocks.py."""


def test_every_yaml_example_in_the_docs_names_builtins_with_valid_options() -> None:
    import re

    import yaml

    from treadle.processors import builtin

    checked = 0
    for block in re.findall(r"```yaml\n(.*?)```", DOCS, re.S):
        data = yaml.safe_load(block)
        if "agents" in data:
            for a in data["agents"]:
                agent_from_dict(a, source="config")
            lanes = [e for a in data["agents"] for k, v in a.items() if k.endswith("Processors") for e in v]
        else:
            lanes = [e for v in data.values() for e in v]
        for entry in lanes:
            if "builtin" in entry:
                builtin.check(entry["builtin"], entry.get("options"))
                checked += 1
    assert checked >= 15


def test_the_python_example_in_the_docs_runs() -> None:
    import re

    [block] = re.findall(r"```python\n(.*?)```", DOCS, re.S)
    namespace: dict[str, Any] = {}
    exec(compile(block, "docs/processors.md", "exec"), namespace)
    agent = namespace["agent"]
    assert isinstance(agent.input_processors[0], PII) and agent.input_processors[0].options.strategy == "block"


def test_the_builtin_package_surface() -> None:
    from treadle.processors import builtin

    assert builtin.NAMES == (
        "prefill-error-handler", "provider-history-compat", "stream-error-retry", "unicode-normalizer",
        "token-limiter", "tool-call-filter", "batch-parts", "pii", "moderation", "prompt-injection",
    )
    for name in builtin.__all__:
        assert hasattr(builtin, name), name
