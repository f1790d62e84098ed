"""ThreadService over gRPC on both engines, and memory through AgentService; every bad request
gets a clear status and changes nothing stored."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from tests.conftest import StartApp
from tests.support import OpenAIServer, Turn
from tests.support.databases import Database
from treadle.agents import Agent
from treadle.core.messages import SystemMessage
from treadle.v1 import message_pb2, thread_service_pb2 as pb
from treadle_client import AgentClient

Code = grpc.StatusCode
MEMORY = {"memory": {"resource": "u1", "threadId": "t1"}}


@pytest.fixture
async def running(start_app: StartApp, openai_server: Any, database: Database) -> Any:
    server: OpenAIServer = openai_server()

    def setup(app: Any) -> None:
        app.add_agent(Agent(id="echo", model="openai/gpt-4o-mini", base_url=server.base_url,
                            instructions=[SystemMessage("You are terse.")]))

    app = await start_app(setup, **database.settings)
    app.server_fake = server
    return app


async def status_of(call: Any) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call
    return info.value.code(), info.value.details() or ""


def roles(messages: list[message_pb2.Message]) -> list[str]:
    return [message_pb2.MessageRole.Name(m.role) for m in messages]


async def test_acceptance_contract_in_process(running: Any) -> None:
    running.server_fake.add(Turn.say("Hello, Ada."), Turn.say("You are Ada."))
    async with AgentClient(running.target) as client:
        [c async for c in client.stream("echo", "My name is Ada.", options=MEMORY)]
        [c async for c in client.stream("echo", "What is my name?", options=MEMORY)]
        second = running.server_fake.requests[1]["messages"]
        assert [(m["role"], m["content"]) for m in second] == [
            ("system", "You are terse."), ("user", "My name is Ada."), ("assistant", "Hello, Ada."), ("user", "What is my name?")
        ]
        messages = await client.list_messages("u1", "t1")
        assert roles(messages) == ["MESSAGE_ROLE_USER", "MESSAGE_ROLE_ASSISTANT"] * 2
        page = await client._threads.ListMessages(
            json_format.ParseDict({"resourceId": "u1", "threadId": "t1", "pageSize": 3}, pb.ListMessagesRequest())
        )
        as_json = json_format.MessageToDict(page)
        assert len(as_json["messages"]) == 3 and as_json["nextPageToken"]
        assert as_json["messages"][0]["content"]["parts"] == [{"text": {"text": "My name is Ada."}}]
        rest = await client._threads.ListMessages(pb.ListMessagesRequest(
            resource_id="u1", thread_id="t1", page_token=page.next_page_token))
        assert [m.content.parts[-1].text.text for m in rest.messages] == ["You are Ada."]
        assert rest.next_page_token == ""

        thread = json_format.MessageToDict(await client.get_thread("u1", "t1"))
        assert {"id": "t1", "resourceId": "u1"}.items() <= thread.items()
        assert set(thread) >= {"id", "resourceId", "metadata", "createTime", "updateTime"}
        assert [t.id for t in await client.list_threads("u1")] == ["t1"]

        code, details = await status_of(
            client.generate("echo", "I am Bob", options={"memory": {"resource": "u2", "threadId": "t1"}})
        )
        assert code == Code.PERMISSION_DENIED and "another resource" in details
        stream = client.stream("echo", "I am Bob", options={"memory": {"resource": "u2", "threadId": "t1"}})
        code, _ = await status_of(stream.__anext__())
        assert code == Code.PERMISSION_DENIED
        assert len(await client.list_messages("u1", "t1")) == 4
        assert len(running.server_fake.requests) == 2


async def test_thread_crud_and_runs(running: Any) -> None:
    running.server_fake.add(Turn.say("one"), Turn.say("two"))
    async with AgentClient(running.target) as client:
        created = await client.create_thread("u1", "t9", title="Plans", metadata={"k": "v"})
        assert (created.id, created.resource_id, created.title) == ("t9", "u1", "Plans")
        await client.create_thread("u1", "t8")
        await client.generate("echo", "hi", options={"memory": {"resource": "u1", "threadId": "t9"}})
        assert [t.id for t in await client.list_threads("u1", page_size=1)] == ["t9", "t8"]

        updated = await client.update_thread("u1", "t9", title="New plans")
        assert updated.title == "New plans" and json_format.MessageToDict(updated.metadata) == {"k": "v"}
        updated = await client.update_thread("u1", "t9", metadata={"n": 1})
        assert updated.title == "New plans" and json_format.MessageToDict(updated.metadata) == {"n": 1}

        await client.generate("echo", "again", options={"memory": {"resource": "u1", "threadId": "t9"}})
        runs = await client.list_runs("u1", "t9")
        assert [pb.RunStatus.Name(r.status) for r in runs] == ["RUN_STATUS_FINISHED"] * 2
        assert runs[0].start_time.ToNanoseconds() >= runs[1].start_time.ToNanoseconds()
        assert runs[0].agent_id == "echo" and runs[0].usage.input_tokens == 10
        assert runs[0].HasField("end_time")

        await client.delete_thread("u1", "t9")
        code, _ = await status_of(client.get_thread("u1", "t9"))
        assert code == Code.NOT_FOUND
        assert [t.id for t in await client.list_threads("u1")] == ["t8"]
        assert running.app.store is not None and await running.app.store.count_messages("t9") == 0


BAD_REQUESTS = [
    ("GetThread", pb.GetThreadRequest(resource_id="u1"), Code.INVALID_ARGUMENT, "thread_id is required"),
    ("GetThread", pb.GetThreadRequest(thread_id="t1"), Code.INVALID_ARGUMENT, "resource_id is required"),
    ("GetThread", pb.GetThreadRequest(resource_id="u1", thread_id="nope"), Code.NOT_FOUND, "'nope' not found"),
    ("GetThread", pb.GetThreadRequest(resource_id="u2", thread_id="t1"), Code.PERMISSION_DENIED, "resource 'u2'"),
    ("GetThread", pb.GetThreadRequest(resource_id="u1", thread_id="x" * 256), Code.INVALID_ARGUMENT, "longer"),
    ("ListThreads", pb.ListThreadsRequest(), Code.INVALID_ARGUMENT, "resource_id is required"),
    ("ListThreads", pb.ListThreadsRequest(resource_id="u1", page_token="garbage"), Code.INVALID_ARGUMENT,
     "page_token"),
    ("ListThreads", pb.ListThreadsRequest(resource_id="u1", page_size=-1), Code.INVALID_ARGUMENT, "page_size"),
    ("ListMessages", pb.ListMessagesRequest(resource_id="u1", thread_id="t1", page_token="@@"),
     Code.INVALID_ARGUMENT, "page_token"),
    ("ListMessages", pb.ListMessagesRequest(resource_id="u2", thread_id="t1"), Code.PERMISSION_DENIED, "u2"),
    ("ListMessages", pb.ListMessagesRequest(resource_id="u1", thread_id="t0"), Code.NOT_FOUND, "t0"),
    ("ListRuns", pb.ListRunsRequest(resource_id="u2", thread_id="t1"), Code.PERMISSION_DENIED, "u2"),
    ("ListRuns", pb.ListRunsRequest(resource_id="u1", thread_id="t0"), Code.NOT_FOUND, "t0"),
    ("ListRuns", pb.ListRunsRequest(resource_id="u1", thread_id="t1", page_token="e30="),
     Code.INVALID_ARGUMENT, "page_token"),
    ("UpdateThread", pb.UpdateThreadRequest(resource_id="u2", thread=pb.Thread(id="t1", title="x")),
     Code.PERMISSION_DENIED, "u2"),
    ("UpdateThread", pb.UpdateThreadRequest(resource_id="u1", thread=pb.Thread(id="t0")), Code.NOT_FOUND, "t0"),
    ("UpdateThread", pb.UpdateThreadRequest(resource_id="u1", thread=pb.Thread(id="t1", title="x"),
                                            update_mask={"paths": ["resource_id"]}),
     Code.INVALID_ARGUMENT, "'resource_id' cannot be updated"),
    ("DeleteThread", pb.DeleteThreadRequest(resource_id="u2", thread_id="t1"), Code.PERMISSION_DENIED, "u2"),
    ("DeleteThread", pb.DeleteThreadRequest(resource_id="u1", thread_id="t0"), Code.NOT_FOUND, "t0"),
    ("CreateThread", pb.CreateThreadRequest(thread=pb.Thread(id="t1", resource_id="u2")),
     Code.ALREADY_EXISTS, "already exists"),
    ("CreateThread", pb.CreateThreadRequest(thread=pb.Thread(id="t5")), Code.INVALID_ARGUMENT,
     "thread.resource_id is required"),
]


@pytest.mark.parametrize(("method", "request_", "code", "says"), BAD_REQUESTS,
                         ids=[f"{m}-{i}" for i, (m, *_) in enumerate(BAD_REQUESTS)])
async def test_every_bad_request_gets_a_clear_status_and_changes_nothing(
    running: Any, method: str, request_: Any, code: grpc.StatusCode, says: str
) -> None:
    running.server_fake.add(Turn.say("stored answer"))
    async with AgentClient(running.target) as client:
        await client.generate("echo", "hello", options={"memory": {"resource": "u1", "threadId": "t1"}})
        before = (await client.get_thread("u1", "t1"), await client.list_messages("u1", "t1"),
                  await client.list_runs("u1", "t1"), await client.list_threads("u2"))
        got, details = await status_of(getattr(client._threads, method)(request_))
        assert got == code and says in details
        after = (await client.get_thread("u1", "t1"), await client.list_messages("u1", "t1"),
                 await client.list_runs("u1", "t1"), await client.list_threads("u2"))
        assert after == before


async def test_a_page_token_of_another_listing_is_refused(running: Any) -> None:
    running.server_fake.add(Turn.say("a"), Turn.say("b"))
    async with AgentClient(running.target) as client:
        for thread in ("t1", "t2"):
            await client.generate("echo", "hi", options={"memory": {"resource": "u1", "threadId": thread}})
        page = await client._threads.ListMessages(pb.ListMessagesRequest(resource_id="u1", thread_id="t1", page_size=1))
        code, _ = await status_of(client._threads.ListMessages(
            pb.ListMessagesRequest(resource_id="u1", thread_id="t2", page_token=page.next_page_token)))
        assert code == Code.INVALID_ARGUMENT
        code, _ = await status_of(client._threads.ListRuns(
            pb.ListRunsRequest(resource_id="u1", thread_id="t1", page_token=page.next_page_token)))
        assert code == Code.INVALID_ARGUMENT


async def test_one_huge_message_makes_a_page_of_its_own(running: Any) -> None:
    big = "x" * (1_500_000)
    running.server_fake.add(Turn.say("small"))
    async with AgentClient(running.target) as client:
        await client.generate("echo", big, options={"memory": {"resource": "u1", "threadId": "t1"}})
        first = await client._threads.ListMessages(pb.ListMessagesRequest(resource_id="u1", thread_id="t1"))
        assert [len(m.content.parts[0].text.text) for m in first.messages] == [1_500_000]
        assert first.next_page_token
        second = await client._threads.ListMessages(pb.ListMessagesRequest(
            resource_id="u1", thread_id="t1", page_token=first.next_page_token))
        assert [m.content.parts[-1].text.text for m in second.messages] == ["small"]


async def test_memory_with_only_a_resource_is_invalid(running: Any) -> None:
    async with AgentClient(running.target) as client:
        code, details = await status_of(client.generate("echo", "hi", options={"memory": {"resource": "u1"}}))
        assert code == Code.INVALID_ARGUMENT and "resource and thread" in details
        code, details = await status_of(
            client.generate("echo", "hi", options={"memory": {"resource": "u1", "threadId": "t" * 256}}))
        assert code == Code.INVALID_ARGUMENT and "at most 255" in details
        assert await client.list_threads("u1") == []


async def test_api_agents_survive_a_restart_and_config_agents_are_not_stored(
    start_app: StartApp, database: Database, tmp_path: Any
) -> None:
    config = tmp_path / "agents.yaml"
    config.write_text("agents:\n  - id: from-config\n    model: openai/gpt-4o-mini\n")
    first = await start_app(config_file=config, **database.settings)
    async with AgentClient(first.target) as client:
        await client.create_agent({"id": "kept", "model": "openai/gpt-4o-mini", "instructions": "Hi.",
                                   "memory": {"lastMessages": 3}})
        await client.create_agent({"id": "gone", "model": "openai/gpt-4o-mini"})
        await client.update_agent({"id": "kept", "instructions": "Hello."}, update_mask=["instructions"])
        await client.delete_agent("gone")
        created = await client.get_agent("kept")
    assert first.app.store is not None
    assert [a.id for a in await first.app.store.list_agents()] == ["kept"]
    await first.app.stop(0)

    second = await start_app(**database.settings)
    async with AgentClient(second.target) as client:
        assert [a.id for a in await client.list_agents()] == ["kept"]
        kept = await client.get_agent("kept")
    assert kept.instructions == "Hello." and kept.memory.last_messages == 3
    assert kept.create_time == created.create_time and kept.update_time == created.update_time
