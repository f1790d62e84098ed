"""The Python agent client against an in-process server and the loopback OpenAI server."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

import treadle_client
from tests.conftest import StartApp
from tests.support import Turn
from treadle.tools import Tool
from treadle.v1 import agent_pb2, chunk_pb2, message_pb2
from treadle_client import AgentClient


def test_public_surface_is_pinned() -> None:
    assert treadle_client.__all__ == [
        "DEFAULT_TARGET", "AgentClient", "AttachError", "Attachment", "TextGate", "attach", "default_target", "nested",
        "run_processors", "run_scorers", "run_tools", "Score", "Scorer", "ScorerRun", "scorer", "serve_scorers",
        "serve_tools", "serve_voices", "TLSConfig", "TOKEN_ENV", "ThreadSubscription",
        "Tool", "ToolContext", "tool",
    ]
    assert treadle_client.DEFAULT_TARGET == "127.0.0.1:50051"


def test_default_target_follows_treadle_target(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TREADLE_TARGET", raising=False)
    assert treadle_client.default_target() == "127.0.0.1:50051"
    monkeypatch.setenv("TREADLE_TARGET", "127.0.0.9:6000")
    assert treadle_client.default_target() == "127.0.0.9:6000"


async def test_agent_crud_with_dicts_and_messages(start_app: StartApp) -> None:
    running = await start_app()
    async with AgentClient(running.target) as client:
        created = await client.create_agent({"id": "echo", "name": "Echo", "model": "openai/gpt-4o-mini"})
        assert isinstance(created, agent_pb2.Agent) and created.source == agent_pb2.AGENT_SOURCE_API
        for i in range(3):
            await client.create_agent(agent_pb2.Agent(id=f"more-{i}", model="openai/gpt-4o-mini"))
        # page_size=1 makes the client walk four pages.
        assert [a.id for a in await client.list_agents(page_size=1)] == ["echo", "more-0", "more-1", "more-2"]

        updated = await client.update_agent({"id": "echo", "name": "Echo v2"}, update_mask=["name"])
        assert (updated.name, updated.model) == ("Echo v2", "openai/gpt-4o-mini")
        assert (await client.get_agent("echo")).name == "Echo v2"

        await client.delete_agent("echo")
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await client.get_agent("echo")
        assert info.value.code() == grpc.StatusCode.NOT_FOUND


async def test_generate_with_messages_and_options(start_app: StartApp, openai_server: Any) -> None:
    server = openai_server([Turn.say("Bonjour.")])
    running = await start_app()
    async with AgentClient(running.target) as client:
        await client.create_agent({"id": "fr", "model": "openai/test", "baseUrl": server.base_url,
                                   "instructions": "Answer in French."})
        response = await client.generate(
            "fr",
            messages=[
                {"role": "MESSAGE_ROLE_USER", "content": {"parts": [{"text": {"text": "Hello"}}]}},
                {"role": "MESSAGE_ROLE_ASSISTANT", "content": {"parts": [{"text": {"text": "Salut"}}]}},
                {"role": "MESSAGE_ROLE_USER", "content": {"parts": [{"text": {"text": "Again"}}]}},
            ],
            options={"modelSettings": {"temperature": 0.25, "maxOutputTokens": 64}, "maxSteps": 2},
            run_id="run-fixed",
        )
    assert (response.text, response.run_id) == ("Bonjour.", "run-fixed")
    assert response.finish_reason == chunk_pb2.FINISH_REASON_STOP
    body = server.requests[0]
    assert body["temperature"] == 0.25 and body["max_tokens"] == 64
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "user"]
    assert response.messages[0].role == message_pb2.MESSAGE_ROLE_ASSISTANT


async def test_stream_yields_single_chunks_in_order(start_app: StartApp, openai_server: Any) -> None:
    server = openai_server([Turn.say(["one ", "two ", "three"])])
    running = await start_app()
    async with AgentClient(running.target) as client:
        await client.create_agent({"id": "echo", "model": "openai/test", "baseUrl": server.base_url})
        chunks = [c async for c in client.stream("echo", "count")]
    assert all(isinstance(c, chunk_pb2.Chunk) for c in chunks)
    kinds = [c.WhichOneof("chunk") for c in chunks]
    assert kinds[0] == "start" and kinds[-1] == "finish"
    assert "".join(c.text_delta.text for c in chunks if c.HasField("text_delta")) == "one two three"


async def test_leaving_a_stream_early_cancels_the_run(start_app: StartApp, openai_server: Any) -> None:
    entered, cancelled = asyncio.Event(), asyncio.Event()

    async def wait_forever(args: Any, ctx: Any) -> None:
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    server = openai_server([Turn.call("wait", {})])
    running = await start_app(setup=lambda app: app.add_tool(Tool("wait", wait_forever)))
    async with AgentClient(running.target) as client:
        await client.create_agent({"id": "w", "model": "openai/test", "baseUrl": server.base_url, "tools": ["wait"]})
        async for chunk in client.stream("w", "go"):
            if chunk.HasField("tool_call"):
                break
        await asyncio.wait_for(entered.wait(), 10)
        await asyncio.wait_for(cancelled.wait(), 10)


async def test_errors_carry_the_status_and_message(start_app: StartApp) -> None:
    running = await start_app()
    async with AgentClient(running.target) as client:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await client.create_agent({"id": "x", "model": "gpt-4o"})
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "provider/model" in (info.value.details() or "")
        with pytest.raises(grpc.aio.AioRpcError) as info:
            async for _ in client.stream("ghost", "hi"):
                pass
        assert info.value.code() == grpc.StatusCode.NOT_FOUND


async def test_a_channel_passed_in_stays_open(start_app: StartApp) -> None:
    running = await start_app()
    channel = grpc.aio.insecure_channel(running.target)
    async with AgentClient(channel=channel) as client:
        assert await client.list_agents() == []
    # Still usable: the caller owns it.
    async with AgentClient(channel=channel) as again:
        assert await again.list_agents() == []
    await channel.close()
