"""The Java SDK (``clients/java``) against a real server, as separate Java processes: the README's
example programs (``clients/java/src/test/java/dev/treadle/examples``) as the agent client
(stream, tripwire, thread subscription), a processor and a tool; the agent client's CRUD; a PII
guard holding and releasing text with ``TextGate``; the bearer token of ``TREADLE_TOKEN`` and
mutual TLS against a server with auth (programs under ``dev/treadle/interop``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import StartApp
from tests.java_build import JAVA_CLIENT, java, java_build  # noqa: F401
from tests.security_env import TOKENS, secured  # noqa: F401
from tests.support import OpenAIServer, Turn
from tests.support.certs import TestCA
from tests.test_hold_release import ADDRESS, answer_with_address, assert_text_parts_consistent, client_text
from tests.test_remote_processes import Server, server  # noqa: F401
from treadle.agents import Agent, ProcessorRef, RunRequest
from treadle.core.messages import Message, SystemMessage

EXAMPLES = JAVA_CLIENT / "src" / "test" / "java" / "dev" / "treadle" / "examples"
DOC_BLOCKS = {("clients/java/README.md", "java", i): "test_each_readme_example_is_a_program_the_tests_run"
              for i in range(5)}
"""The README's Java blocks are the example programs the tests below run (tests/doc_blocks.py)."""


def agent(server: OpenAIServer, agent_id: str = "assistant", **kw: Any) -> Agent:
    return Agent(id=agent_id, name=agent_id, model="openai/test-model", base_url=server.base_url,
                 instructions=[SystemMessage("You are terse.")], **kw)


def test_each_readme_example_is_a_program_the_tests_run() -> None:
    blocks = re.findall(r"```java\n(.*?)```", (JAVA_CLIENT / "README.md").read_text(), re.S)
    files = {p.name: p.read_text() for p in sorted(EXAMPLES.glob("*Example.java"))}
    assert sorted(files) == ["AgentExample.java", "ProcessorExample.java", "ThreadExample.java",
                             "ToolExample.java", "TracingExample.java"]
    bodies = [re.sub(r"^package .*?\n\n(import .*?\n)*\n", "", f, flags=re.S) for f in files.values()]
    assert sorted(b.strip() for b in blocks) == sorted(b.strip() for b in bodies)


async def test_agent_client_streams_an_answer_and_reads_a_tripwire(start_app: StartApp, java) -> None:
    model = OpenAIServer([Turn.say(["Hello ", "from ", "Treadle"])])
    try:
        running = await start_app()
        running.app.add_agent(agent(model, input_processors=[ProcessorRef("content-filter")]))
        processor = await java("dev.treadle.examples.ProcessorExample", running.target)
        await processor.expect("ready")
        assert await running.app.processors.wait_attached("content-filter", 30)
        out = await (await java("dev.treadle.examples.AgentExample", running.target)).output()
        assert out.splitlines() == [
            "Hello from Treadle",
            "blocked by content-filter: Blocked content detected in input",
        ]
        assert len(model.recorded) == 1  # the blocked prompt never reached the model
    finally:
        model.close()


async def test_agent_client_sees_the_run_a_sent_message_wakes(start_app: StartApp, java) -> None:
    model = OpenAIServer([Turn.say(["Hi ", "there"])])
    try:
        running = await start_app()
        running.app.add_agent(agent(model))
        out = await (await java("dev.treadle.examples.ThreadExample", running.target)).output()
        assert out.splitlines() == ["SIGNAL_ACTION_WAKE", "Hi there"]
        user = [m["content"] for m in model.recorded[0].body["messages"] if m["role"] == "user"]
        # The LinkedHashMap's order, not the stable order a Struct gets (name before from).
        assert user == ['<user from="slack" name="Devin">hello</user>']
    finally:
        model.close()


async def test_a_java_tool_is_called_by_an_agent(start_app: StartApp, java) -> None:
    model = OpenAIServer([Turn.call("weather", {"city": "Lisbon"}), Turn.say("Sunny in Lisbon")])
    try:
        running = await start_app()
        weather_agent = agent(model, tools=["weather"])
        running.app.add_agent(weather_agent)
        tool = await java("dev.treadle.examples.ToolExample", running.target)
        await tool.expect("ready")
        await running.app.tool_hub.wait_attached("weather", timeout=30)
        result = await running.app.loop.generate(weather_agent, RunRequest([Message.user("weather?")]))
        assert result.text == "Sunny in Lisbon"
        offered = model.recorded[0].body["tools"][0]["function"]
        assert (offered["name"], offered["description"]) == ("weather", "The weather in a city")
        assert offered["parameters"]["required"] == ["city"]
        tool_message = [m for m in model.recorded[1].body["messages"] if m["role"] == "tool"][0]
        assert json.loads(tool_message["content"]) == {"city": "Lisbon", "forecast": "sunny", "celsius": 21}
    finally:
        model.close()


async def test_tokens_from_treadle_token_for_processors_and_the_agent_client(secured, java) -> None:  # noqa: F811
    running, model = await secured([Turn.say("hello")])
    # Without a token the handshake is refused, reported, and not retried.
    refused = await (await java("dev.treadle.interop.Secured", running.target, "guard", running.target,
                                "pii-guard")).output()
    assert refused.split() == ["refused", "UNAUTHENTICATED", "1"]
    guard = await java("dev.treadle.interop.Secured", running.target, "guard", running.target, "pii-guard",
                       TREADLE_TOKEN=TOKENS["guard-team"])
    await guard.expect("ready")
    assert await running.app.processors.wait_attached("pii-guard", 30)

    async def call(prompt: str, **env: str) -> str:
        program = await java("dev.treadle.interop.Secured", running.target, "call", running.target, "guarded",
                             prompt, **env)
        return (await program.output()).strip()

    assert await call("my secret is 42", TREADLE_TOKEN=TOKENS["web-app"]) == "blocked by pii-guard: no secrets"
    assert await call("hi", TREADLE_TOKEN=TOKENS["web-app"]) == "hello"
    assert await call("hi") == "UNAUTHENTICATED"


async def test_the_java_sdk_over_mutual_tls_with_a_token(secured, java, tmp_path: Path) -> None:  # noqa: F811
    ca = TestCA(tmp_path)
    server, guard_pair, client_pair = ca.issue("localhost", server=True), ca.issue("guard-host"), ca.issue("web-app")
    running, model = await secured([Turn.say("over mtls")], tls_cert=server.cert, tls_key=server.key,
                                   tls_client_ca=ca.cert)
    target = f"localhost:{running.port}"
    guard = await java("dev.treadle.interop.Secured", target, "guard", target, "pii-guard",
                       str(ca.cert), str(guard_pair.cert), str(guard_pair.key), TREADLE_TOKEN=TOKENS["guard-team"])
    await guard.expect("ready")
    assert await running.app.processors.wait_attached("pii-guard", 30)
    call = await java("dev.treadle.interop.Secured", target, "call", target, "guarded", "hi",
                      str(ca.cert), str(client_pair.cert), str(client_pair.key), TREADLE_TOKEN=TOKENS["web-app"])
    assert (await call.output()).strip() == "over mtls"
    # Without TLS the server is not reachable at all.
    plain = await java("dev.treadle.interop.Secured", target, "call", target, "guarded", "hi",
                       TREADLE_TOKEN=TOKENS["web-app"])
    assert (await plain.output()).strip() == "UNAVAILABLE"
    assert len(model.requests) == 1


async def test_agent_client_crud(start_app: StartApp, java) -> None:
    running = await start_app()
    out = await (await java("dev.treadle.interop.AgentCrud", running.target, running.target)).output()
    assert json.loads(out) == {
        "createdFromApi": True,
        "listed": ["echo", "more-0", "more-1", "more-2"],
        "updated": ["Echo v2", "openai/gpt-4o-mini"],
        "fetched": "Echo v2",
        "missing": "NOT_FOUND",
        "bad": "INVALID_ARGUMENT",  # the server says what is wrong, and stores nothing:
        "after": ["more-0", "more-1", "more-2"],
    }


@pytest.mark.parametrize("delivery", ["per_chunk", "windowed"])
async def test_the_java_pii_guard_holds_and_releases_text(server: Any, java, delivery: str) -> None:  # noqa: F811
    s: Server = await server()
    answers = [answer_with_address(n) for n in (2, 3, 10)]
    s.agent("support", [Turn.say(a) for a in answers], output_processors=[ProcessorRef("pii-guard")])
    guard = await java("dev.treadle.interop.PiiGuard", s.target, s.target, delivery)
    await guard.expect("ready")
    assert await s.app.processors.wait_attached("pii-guard", 30)
    assert [c.version for c in s.app.processors.connections()] == [2]  # the SDK offers 1 and 2
    for _ in answers:
        chunks = await s.stream("support")
        assert client_text(chunks) == "Write to [email] or call. Thanks!"
        assert_text_parts_consistent(chunks)
        assert not any(ADDRESS[:5] in c.text_delta.text for c in chunks if c.WhichOneof("chunk") == "text_delta")
