"""Built-ins over the wire: ``treadle processors serve`` gives the same results as in process,
and the agent configuration example of the Processor page runs end to end under ``treadle serve``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import StartApp
from tests.remote.procs import Child, spawn
from tests.support.otlp import otlp  # noqa: F401
from tests.support import Turn
from tests.test_cli import clean_env, serve  # noqa: F401
from treadle.agents import Agent, ProcessorRef
from treadle.core.messages import SystemMessage
from treadle.tools import Tool
from treadle_client import AgentClient

PREFILL_400 = (
    "This model does not support assistant message prefill. "
    "The conversation must end with a user message."
)


@pytest.fixture
async def processes() -> AsyncIterator[list[Child]]:
    started: list[Child] = []
    yield started
    for child in started:
        child.kill()
        await child.proc.wait()


async def serve_builtin(started: list[Child], target: str, name: str, options: dict[str, Any]) -> Child:
    child = await spawn("treadle.cli", "processors", "serve", name, "--options", json.dumps(options),
                        "--target", target)
    started.append(child)
    await child.expect(f"serving {name}", timeout=60)  # a loaded machine starts it slowly
    return child


def agent(agent_id: str, server: Any, **lanes: Any) -> Agent:
    return Agent(id=agent_id, model="openai/test-model", base_url=server.base_url,
                 instructions=[SystemMessage("You are a test agent.")], **lanes)


async def test_pii_block_served_remotely_trips_like_in_process(start_app: StartApp, openai_server, processes) -> None:
    server = openai_server([])

    def setup(app: Any) -> None:
        app.add_agent(agent("remote", server, input_processors=[ProcessorRef("pii")]))
        app.add_agent(agent("local", server, input_processors=[
            ProcessorRef(builtin="pii", options={"strategy": "block"})]))

    running = await start_app(setup=setup)
    await serve_builtin(processes, running.target, "pii", {"strategy": "block"})
    async with AgentClient(running.target) as client:
        answers = [await client.generate(a, "write to jane.doe@example.com") for a in ("remote", "local")]
    remote, local = (json.loads(json.dumps([a.tripwire.reason, a.tripwire.processor_id])) for a in answers)
    assert remote == local == ["PII detected in the input: email", "pii"]
    assert server.requests == []


async def test_pii_redaction_served_remotely_matches_in_process(start_app: StartApp, openai_server, processes) -> None:
    lookup = Tool("lookup", lambda a, c: {"owner": "Ann", "phone": "+44 20 7946 0958"})
    script = [Turn.call("lookup", {}), Turn.say(["Ann's card is 4111 1111 1111 1111 ", "and her IP 192.168.10.20."])]
    server = openai_server(script * 2)

    def setup(app: Any) -> None:
        app.add_tool(lookup)
        app.add_agent(agent("remote", server, tools=["lookup"], input_processors=[ProcessorRef("pii")],
                            output_processors=[ProcessorRef("pii")]))
        app.add_agent(agent("local", server, tools=["lookup"], input_processors=[ProcessorRef(builtin="pii")],
                            output_processors=[ProcessorRef(builtin="pii")]))

    running = await start_app(setup=setup)
    await serve_builtin(processes, running.target, "pii", {})
    results = []
    async with AgentClient(running.target) as client:
        for agent_id in ("remote", "local"):
            chunks = [c async for c in client.stream(agent_id, "mail me at me@home.example")]
            text = "".join(c.text_delta.text for c in chunks if c.HasField("text_delta"))
            [tool] = [c.tool_result for c in chunks if c.HasField("tool_result")]
            results.append((text, tool.result.struct_value.fields["phone"].string_value))
    assert results[0] == results[1] == ("Ann's card is [CARD] and her IP [IP].", "[PHONE]")
    prompts = [str(body["messages"]) for body in server.requests]
    assert all("me@home.example" not in p and "[EMAIL]" in p for p in prompts)
    assert all("7946" not in p for p in prompts[1::2])  # the model saw the redacted tool result


async def test_a_call_names_builtins_in_its_own_options(start_app: StartApp, openai_server) -> None:
    import grpc

    server = openai_server([Turn.say("hello ann@example.org")])
    running = await start_app(setup=lambda app: app.add_agent(agent("plain", server)))
    redact = {"outputProcessors": {"processors": [{"builtin": "pii"}]}}
    async with AgentClient(running.target) as client:
        answer = await client.generate("plain", "hi", options=redact)
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await client.generate("plain", "hi", options={"outputProcessors": {"processors": [
                {"builtin": "pii", "options": {"types": ["ssn"]}}]}})
    assert answer.text == "hello [EMAIL]"
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "option 'types' has unknown type 'ssn'" in (info.value.details() or "")
    assert len(server.requests) == 1


@pytest.mark.parametrize("argv, says", [
    (["nope"], "unknown built-in processor 'nope'"),
    (["pii", "--options", '{"strategy": "x"}'], "option 'strategy' must be one of"),
])
def test_processors_serve_refuses_bad_names_and_options(argv: list[str], says: str) -> None:
    import subprocess

    from tests.test_cli import READY_TIMEOUT, TREADLE

    result = subprocess.run([*TREADLE, "processors", "serve", *argv], capture_output=True, text=True,
                            env=clean_env(), timeout=READY_TIMEOUT)
    assert result.returncode == 2 and says in result.stderr


@pytest.mark.parametrize("name", ["unicode-normalizer", "moderation"])
async def test_other_builtins_served_remotely_match_in_process(
    start_app: StartApp, openai_server, processes, name: str
) -> None:
    moderated = name == "moderation"
    judge = openai_server([Turn.say('{"flagged": true, "categories": ["violence"], "reason": "x"}')] * 2 * moderated)
    server = openai_server([] if moderated else [Turn.say("ok")] * 2)
    options = {"model": "openai/judge", "baseUrl": judge.base_url} if moderated else {}

    def setup(app: Any) -> None:
        app.add_agent(agent("remote", server, input_processors=[ProcessorRef(name)]))
        app.add_agent(agent("local", server, input_processors=[ProcessorRef(builtin=name, options=options)]))

    running = await start_app(setup=setup)
    await serve_builtin(processes, running.target, name, options)
    async with AgentClient(running.target) as client:
        answers = [await client.generate(a, "  ｈｅｌｌｏ\u200b  there ") for a in ("remote", "local")]
    if name == "moderation":
        assert [(a.tripwire.processor_id, a.tripwire.reason) for a in answers] == [
            ("moderation", "Content flagged in the input: violence")] * 2
        assert server.requests == [] and len(judge.requests) == 2
    else:
        assert [a.text for a in answers] == ["ok", "ok"]
        assert [body["messages"][-1]["content"] for body in server.requests] == ["hello there"] * 2


@pytest.mark.parametrize("name, options", [
    ("token-limiter", {"maxTokens": 60}),
    ("tool-call-filter", {"exclude": ["secret-lookup"]}),
])
async def test_prompt_shaping_builtins_served_remotely_match_in_process(
    start_app: StartApp, openai_server, processes, name: str, options: dict[str, Any]
) -> None:
    from treadle.core.messages import Message, MessageContent, TextPart, ToolInvocationPart

    server = openai_server([Turn.say("ok")] * 2)

    def setup(app: Any) -> None:
        app.add_agent(agent("remote", server, input_processors=[ProcessorRef(name)]))
        app.add_agent(agent("local", server, input_processors=[ProcessorRef(builtin=name, options=options)]))

    running = await start_app(setup=setup)
    await serve_builtin(processes, running.target, name, options)
    earlier = Message(id="a1", role="assistant", content=MessageContent(parts=[
        ToolInvocationPart("c1", "secret-lookup", {}, state="result", result="s3cr3t"),
        TextPart("old answer " + "y" * 300),
    ]))
    history = [Message.user("old question " + "x" * 300), earlier, Message.user("recent question")]
    for agent_id in ("remote", "local"):
        result = await running.app.loop.generate(running.app.registry.get_agent(agent_id), _request(history, None))
        assert result.text == "ok"
    remote, local = (body["messages"] for body in server.requests)
    assert remote == local
    sent = str(local)
    assert "s3cr3t" not in sent and ("old question" not in sent) == (name == "token-limiter")


@pytest.mark.parametrize("name", ["prefill-error-handler", "stream-error-retry"])
async def test_error_builtins_served_remotely_recover_like_in_process(
    start_app: StartApp, openai_server, processes, name: str
) -> None:
    from treadle.core.messages import Message
    from treadle.providers.base import ModelSettings

    failure = (Turn.fail(400, PREFILL_400) if name == "prefill-error-handler"
               else Turn.fail(429, "slow down", retry_after=0))
    server = openai_server([failure, Turn.say("recovered")] * 2)

    def setup(app: Any) -> None:
        app.add_agent(agent("remote", server, error_processors=[ProcessorRef(name)]))
        app.add_agent(agent("local", server, error_processors=[ProcessorRef(builtin=name)]))

    running = await start_app(setup=setup)
    await serve_builtin(processes, running.target, name, {})
    results = []
    for agent_id in ("remote", "local"):
        request_agent = running.app.registry.get_agent(agent_id)
        result = await running.app.loop.generate(request_agent, _request(
            [Message.user("go on"), Message.assistant("Once")], ModelSettings(max_retries=0)))
        results.append((result.text, result.finish_reason))
    assert results == [("recovered", "stop")] * 2
    assert len(server.requests) == 4
    if name == "prefill-error-handler":
        assert [b["messages"][-1]["role"] for b in server.requests] == ["assistant", "user"] * 2


def _request(messages: Any, settings: Any) -> Any:
    from treadle.agents import CallOptions, RunRequest

    return RunRequest(messages=list(messages), options=CallOptions(model_settings=settings))


async def test_the_processor_pages_agent_configuration_under_treadle_serve(
    serve, openai_server, processes, tmp_path: Path  # noqa: F811
) -> None:
    server = openai_server([Turn.fail(400, PREFILL_400), Turn.say("Hello from the support agent")])
    config = tmp_path / "agents.yaml"
    config.write_text(f"""\
agents:
  - id: support-agent
    name: support-agent
    model: openai/gpt-5
    baseUrl: {server.base_url}
    instructions: You help customers.
    inputProcessors: [{{id: content-filter}}]
    outputProcessors: [{{id: word-counter}}]
    errorProcessors: [{{builtin: prefill-error-handler}}]
    maxProcessorRetries: 3
""")
    proc = serve("--config", str(config), env=clean_env(TREADLE_PROCESSOR_ATTACH_WAIT="30"))
    custom = await spawn("tests.remote.processor_main", proc.target, "content-filter", "word-counter")
    processes.append(custom)
    await custom.expect("ready", timeout=60)
    async with AgentClient(proc.target) as client:
        answer = await client.generate("support-agent", "Hi, I need help")
        blocked = await client.generate("support-agent", "tell me the secret")
    assert answer.text == "Hello from the support agent"
    first, second = server.requests
    assert first["messages"][-1]["role"] == "user" and "continue" in str(second["messages"][-1])
    assert blocked.tripwire.processor_id == "content-filter" and len(server.requests) == 2
    await custom.send("sync")
    report = json.loads((await custom.expect("sync ")).removeprefix("sync "))
    # WordCounter counted the answer's five words at its finish; the blocked run had no answer.
    assert report["mirror"][1] == {"attr:totals": [5]}


async def test_a_remote_judges_model_call_is_traced_in_the_runs_trace(
    start_app: StartApp, openai_server, otlp  # noqa: F811
) -> None:
    import os
    import signal

    judge = openai_server([Turn.say('{"flagged": false, "categories": [], "reason": ""}')])
    server = openai_server([Turn.say("ok")])
    otel = {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": otlp.endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}
    running = await start_app(setup=lambda app: app.add_agent(
        agent("guarded", server, input_processors=[ProcessorRef("moderation")])), env=otel)
    os.environ.update(otel)
    try:
        child = await spawn("treadle.cli", "processors", "serve", "moderation", "--options",
                            json.dumps({"model": "openai/judge", "baseUrl": judge.base_url}),
                            "--target", running.target)
    finally:
        for key in otel:
            del os.environ[key]
    try:
        await child.expect("serving moderation", timeout=60)
        async with AgentClient(running.target) as client:
            assert (await client.generate("guarded", "hello")).text == "ok"
    finally:
        child.proc.send_signal(signal.SIGTERM)  # a clean exit flushes its spans
        await child.proc.wait()
    running.app.tracer_provider.force_flush()
    spans = {s.name: s for s in otlp.spans()}
    agent_span, chat = spans["invoke_agent guarded"], spans["chat judge"]
    hook = next(s for s in otlp.spans() if s.span_id == chat.parent_span_id)
    assert chat.trace_id == agent_span.trace_id and "moderation" in hook.name
