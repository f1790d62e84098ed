"""Editor overrides and versions against ``treadle serve`` processes, on both engines: what the
provider sees after a version is drafted, published, restored or rolled back, on every path that
runs the agent (Generate, Stream, a signal's wake); the editor's locks; bad input storing nothing;
versions across a restart and seen by a second server on the same store; admin only."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml

from tests.support import OpenAIServer, Turn
from tests.support.databases import Database
from tests.test_cli import READY_TIMEOUT, TREADLE, ServeProcess, clean_env
from tests.test_memory_serve import kill
from treadle.config.auth import token_sha256
from treadle.v1 import agent_version_service_pb2 as vpb
from treadle_client import AgentClient
from treadle_client.typed import AgentClient as TypedClient, AgentVersionState as TypedState

MODEL = "openai/gpt-4o-mini"
AGENTS = [
    {"id": "support", "name": "Support", "instructions": "You answer as support v0.", "model": MODEL,
     "tools": ["lookup", "search"]},
    {"id": "frozen", "instructions": "You are frozen.", "model": MODEL, "editor": False},
    {"id": "described", "instructions": "You describe.", "model": MODEL, "tools": ["lookup"],
     "editor": {"tools": {"description": True}}},
    {"id": "owned", "model": MODEL, "editor": {"instructions": True}},
]
THREAD = {"resource_id": "u1", "thread_id": "t1"}
MEMORY = {"memory": {"resource": "u1", "threadId": "t1"}}


@pytest.fixture
def serve(database: Database, tmp_path: Path) -> Iterator[Callable[..., ServeProcess]]:
    """``serve(fake, **config sections)``: a ``treadle serve`` with the agents above on ``database``
    (every call uses the same store, so two calls are two replicas)."""
    procs: list[ServeProcess] = []

    def start(server: OpenAIServer, **sections: Any) -> ServeProcess:
        config = tmp_path / "server.yaml"
        config.write_text(yaml.safe_dump({"agents": AGENTS, **sections}))
        env = clean_env(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test")
        proc = ServeProcess(*database.serve_args, "--config", str(config), env=env)
        procs.append(proc)
        proc.wait_ready()
        return proc

    yield start
    for proc in procs:
        proc.close()


def system(request: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in request["messages"] if m["role"] == "system")


def tools(request: dict[str, Any]) -> dict[str, str]:
    return {t["function"]["name"]: t["function"].get("description", "") for t in request.get("tools", [])}


def until(check: Callable[[], Any], timeout: float = READY_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


async def stream_text(client: AgentClient, agent_id: str, prompt: str, **options: Any) -> str:
    return "".join([c.text_delta.text async for c in client.stream(agent_id, prompt, options=options or None)
                    if c.WhichOneof("chunk") == "text_delta"])


async def refused(call: Any) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await call
    return e.value


async def test_a_published_version_changes_every_path_and_a_draft_only_when_selected(
    serve: Any, openai_server: Any
) -> None:
    server: OpenAIServer = openai_server([Turn.say("ok")] * 12)
    proc = serve(server)
    async with AgentClient(proc.target) as client:
        await client.generate("support", "hi")
        assert system(server.requests[-1]) == "You answer as support v0."

        draft = await client.create_version("support", instructions="You answer as support v1.",
                                            message="friendlier answers")
        assert (draft.number, draft.state, draft.author) == (1, vpb.AGENT_VERSION_STATE_DRAFT, "anonymous")
        await client.generate("support", "hi")
        assert system(server.requests[-1]) == "You answer as support v0."  # not published yet
        await client.generate("support", "hi", options={"version": "draft"})
        assert system(server.requests[-1]) == "You answer as support v1."
        await stream_text(client, "support", "hi", version="draft")
        assert system(server.requests[-1]) == "You answer as support v1."

        published = await client.publish_version("support", 1)
        assert published.state == vpb.AGENT_VERSION_STATE_PUBLISHED and published.HasField("publish_time")
        await client.generate("support", "hi")
        assert system(server.requests[-1]) == "You answer as support v1."
        assert await stream_text(client, "support", "hi") == "ok"
        assert system(server.requests[-1]) == "You answer as support v1."

        # A signal's wake runs the published version too, and the run records it.
        seen = len(server.requests)
        await client.send_message("support", "wake up", **THREAD, if_idle={"behavior": "IDLE_BEHAVIOR_WAKE"})
        until(lambda: len(server.requests) > seen)
        assert system(server.requests[-1]) == "You answer as support v1."
        runs: list[Any] = []

        async def recorded() -> bool:
            runs[:] = await client.list_runs(**THREAD)
            return bool(runs) and runs[0].HasField("end_time")

        deadline = time.monotonic() + READY_TIMEOUT
        while not await recorded():
            assert time.monotonic() < deadline
        assert (runs[0].agent_version_id, runs[0].agent_version_number, runs[0].agent_version_selection) == (
            published.id, 1, "published")
        shown = subprocess.run([*TREADLE, "runs", "show", "u1", "t1", runs[0].id, "--target", proc.target],
                               capture_output=True, text=True, timeout=60, env=clean_env())
        assert shown.returncode == 0, shown.stderr
        assert f"  version:  v1 (published, {published.id})" in shown.stdout.splitlines()

        # Tools: a new version keeps the instructions it started from and changes the tool list and
        # a description; the model sees exactly that.
        v2 = await client.create_version("support", tools=["lookup"], tool_descriptions={"lookup": "Find an order by id"},
                                         message="one tool", publish=True)
        assert v2.override.instructions == "You answer as support v1." and v2.number == 2
        await client.generate("support", "hi")
        assert system(server.requests[-1]) == "You answer as support v1."
        assert tools(server.requests[-1]) == {"lookup": "Find an order by id"}

        # The draft on a wake: the thread's run takes the call's selection.
        await client.create_version("support", instructions="You answer as support v3.", message="try v3")
        seen = len(server.requests)
        await client.send_message("support", "again", **THREAD, if_idle={
            "behavior": "IDLE_BEHAVIOR_WAKE", "streamOptions": {"version": "draft"}})
        until(lambda: len(server.requests) > seen)
        assert system(server.requests[-1]) == "You answer as support v3."
        await client.generate("support", "hi")
        assert system(server.requests[-1]) == "You answer as support v1."  # published is still v2

        # Rollback: restore v1 as a new published version; the old prompt and tools come back.
        restored = await client.restore_version("support", 1, publish=True)
        assert (restored.number, restored.restored_from, restored.message) == (4, published.id, "restore of v1")
        await client.generate("support", "hi")
        assert system(server.requests[-1]) == "You answer as support v1."
        assert set(tools(server.requests[-1])) == {"lookup", "search"}

        history = await client.list_versions("support")
        assert [(v.number, vpb.AgentVersionState.Name(v.state)) for v in history] == [
            (4, "AGENT_VERSION_STATE_PUBLISHED"), (3, "AGENT_VERSION_STATE_DRAFT"),
            (2, "AGENT_VERSION_STATE_ARCHIVED"), (1, "AGENT_VERSION_STATE_ARCHIVED")]
        assert [v.message for v in history] == ["restore of v1", "try v3", "one tool", "friendlier answers"]
        diff = await client.diff_versions("support", 1, 2)
        assert [c.field for c in diff.changes] == ["tools", "tool_descriptions.lookup"]
        assert json.loads(diff.changes[0].after) == ["lookup"]
        diff = await client.diff_versions("support", "definition", 3)
        assert diff.changes[0].field == "instructions"
        assert "-You answer as support v0.\n+You answer as support v3." in diff.instructions_diff

    # The command line lists and publishes.
    listed = subprocess.run([*TREADLE, "agents", "versions", "support", "--target", proc.target],
                            capture_output=True, text=True, timeout=60, env=clean_env())
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].split() == ["VERSION", "STATE", "AUTHOR", "CREATED", "MESSAGE"]
    assert lines[1].split()[:3] == ["v4", "published", "anonymous"] and lines[1].endswith("restore of v1")
    out = subprocess.run([*TREADLE, "agents", "publish", "support", "2", "--target", proc.target],
                         capture_output=True, text=True, timeout=60, env=clean_env())
    assert out.returncode == 0, out.stderr
    assert "v2 is published" in out.stdout

    # Across a restart: the store keeps the versions and which one is published.
    kill(proc)
    again = serve(server)
    async with AgentClient(again.target) as client:
        await client.generate("support", "hi")
        assert tools(server.requests[-1]) == {"lookup": "Find an order by id"}
        assert [v.number for v in await client.list_versions("support")] == [4, 3, 2, 1]
        assert (await client.get_version("support", "published")).number == 2


async def test_the_editor_policy_refuses_what_it_does_not_allow_and_bad_input_stores_nothing(
    serve: Any, openai_server: Any
) -> None:
    server: OpenAIServer = openai_server([Turn.say("ok")] * 3)
    proc = serve(server)
    async with AgentClient(proc.target) as client:
        # editor: false locks the agent: no version, no selection.
        e = await refused(client.create_version("frozen", instructions="thaw", message="try"))
        assert e.code() == grpc.StatusCode.FAILED_PRECONDITION and "'frozen' is locked" in e.details()
        e = await refused(client.generate("frozen", "hi", options={"version": "draft"}))
        assert e.code() == grpc.StatusCode.FAILED_PRECONDITION and "'frozen'" in e.details()
        assert await client.list_versions("frozen") == []
        await client.generate("frozen", "hi")
        assert system(server.requests[-1]) == "You are frozen."

        # tools: {description: true}: descriptions change, the tool list does not.
        e = await refused(client.create_version("described", tools=["lookup", "search"], message="more tools"))
        assert e.code() == grpc.StatusCode.FAILED_PRECONDITION and "only the tool descriptions" in e.details()
        for call, code, words in [
            (client.create_version("described", tool_descriptions={"search": "no"}, message="x"),
             grpc.StatusCode.INVALID_ARGUMENT, "no tool 'search'"),
            (client.create_version("described", tool_descriptions={"lookup": "Find"}, message=" "),
             grpc.StatusCode.INVALID_ARGUMENT, "message is required"),
            (client.create_version("described", message="nothing"), grpc.StatusCode.INVALID_ARGUMENT, "change is empty"),
            (client.create_version("nobody", instructions="x", message="x"), grpc.StatusCode.NOT_FOUND, "'nobody'"),
            (client.publish_version("described", 9), grpc.StatusCode.NOT_FOUND, "no version '9'"),
            (client.generate("described", "hi", options={"version": "v9"}), grpc.StatusCode.NOT_FOUND, "no version 'v9'"),
        ]:
            e = await refused(call)
            assert e.code() == code and words in e.details(), e.details()
        assert [v.message for v in await client.list_versions("described")] == []
        # On a thread, an unknown version is refused before the run: nothing stored, the thread not held.
        e = await refused(client.generate("described", "hi", options={"version": "v9", **MEMORY}))
        assert e.code() == grpc.StatusCode.NOT_FOUND
        e = await refused(client.send_message("described", "hi", **THREAD, if_idle={
            "behavior": "IDLE_BEHAVIOR_WAKE", "streamOptions": {"version": "v9"}}))
        assert e.code() == grpc.StatusCode.NOT_FOUND and "no version 'v9'" in e.details()
        assert (await refused(client.list_messages(**THREAD))).code() == grpc.StatusCode.NOT_FOUND  # never made
        await client.create_version("described", tool_descriptions={"lookup": "Find an order"}, message="doc", publish=True)
        await client.generate("described", "hi", options=MEMORY)
        assert tools(server.requests[-1]) == {"lookup": "Find an order"}
        assert len(await client.list_messages(**THREAD)) == 2

        # The editor owns the instructions of an agent that defines none: no version, no run.
        e = await refused(client.generate("owned", "hi"))
        assert e.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "agent 'owned' has no instructions" in e.details()
        await client.create_version("owned", instructions="You are owned v1.", message="first prompt", publish=True)
        await client.generate("owned", "hi")
        assert system(server.requests[-1]) == "You are owned v1."


async def test_api_agents_get_a_history_of_their_updates(serve: Any, openai_server: Any) -> None:
    server: OpenAIServer = openai_server([Turn.say("ok")] * 3)
    proc = serve(server)
    echo = {"id": "echo", "instructions": "You are terse.", "model": MODEL}
    async with AgentClient(proc.target) as client:
        await client.create_agent(echo)
        await client.update_agent({**echo, "instructions": "You are chatty."}, update_mask=["instructions"])
        history = await client.list_versions("echo")
        assert [(v.number, v.message, v.override.instructions) for v in history] == [
            (2, "UpdateAgent (instructions)", "You are chatty."), (1, "CreateAgent", "You are terse.")]
        assert history[0].definition["instructions"] == "You are chatty."
        async with TypedClient(proc.target) as typed:  # the dataclass flavour makes the same calls
            assert [(v.number, v.state) for v in await typed.list_versions("echo")] == [
                (2, TypedState.PUBLISHED), (1, TypedState.ARCHIVED)]
        await client.generate("echo", "hi")
        assert system(server.requests[-1]) == "You are chatty."
        await client.publish_version("echo", 1)  # rollback of the update
        await client.generate("echo", "hi")
        assert system(server.requests[-1]) == "You are terse."
        await client.delete_agent("echo")
        await client.create_agent(echo)  # the same id again starts a new history
        assert [v.number for v in await client.list_versions("echo")] == [1]
        await client.generate("echo", "hi")
        assert system(server.requests[-1]) == "You are terse."


async def test_two_servers_on_one_store_run_the_same_published_version(serve: Any, openai_server: Any) -> None:
    server: OpenAIServer = openai_server([])
    first, second = serve(server), serve(server)

    async def runs(client: AgentClient) -> str:
        server.add(Turn.say("ok"))
        await client.generate("support", "hi")
        return system(server.requests[-1])

    async def eventually(client: AgentClient, expected: str) -> float:
        """Seconds until ``client``'s server runs ``expected`` (each server re-reads within a second)."""
        started = time.monotonic()
        while (seen := await runs(client)) != expected:
            assert time.monotonic() - started < 5, f"still {seen!r}"
            await asyncio.sleep(0.1)
        return time.monotonic() - started

    async with AgentClient(first.target) as a, AgentClient(second.target) as b:
        assert await runs(b) == "You answer as support v0."  # b has read that there is no version
        await a.create_version("support", instructions="You answer as support v1.", message="v1", publish=True)
        assert await runs(a) == "You answer as support v1."  # at once where it was published
        assert await eventually(b, "You answer as support v1.") < 2
        await b.create_version("support", instructions="You answer as support v2.", message="v2", publish=True)
        assert await runs(b) == "You answer as support v2."
        assert await eventually(a, "You answer as support v2.") < 2
        await a.publish_version("support", 1)
        assert await eventually(b, "You answer as support v1.") < 2


async def test_versions_need_an_admin_credential(serve: Any, openai_server: Any) -> None:
    server: OpenAIServer = openai_server([])
    auth = {"credentials": [
        {"id": "web-app", "tokenSha256": token_sha256("tok-web"), "agents": ["*"]},
        {"id": "ops", "tokenSha256": token_sha256("tok-ops"), "admin": True},
    ]}
    proc = serve(server, auth=auth)
    async with AgentClient(proc.target, token="tok-web") as web, AgentClient(proc.target, token="tok-ops") as ops:
        for call in (web.create_version("support", instructions="x", message="x"), web.list_versions("support"),
                     web.publish_version("support", 1), web.diff_versions("support", "definition", 1)):
            e = await refused(call)
            assert e.code() == grpc.StatusCode.PERMISSION_DENIED and "admin" in e.details()
        made = await ops.create_version("support", instructions="You answer as support v1.", message="by ops")
        assert made.author == "ops"
        assert [v.author for v in await ops.list_versions("support")] == ["ops"]


async def test_score_run_over_stored_runs_of_two_versions_compares_them(serve: Any, openai_server: Any) -> None:
    # Yesterday's traffic ran version 1, today's version 2; scoring the stored runs on demand
    # gives one aggregate per version.
    from treadle.v1 import score_service_pb2 as spb, score_service_pb2_grpc

    grader = {"id": "grader", "model": MODEL, "scorers": [{"builtin": "exact-match", "options": {"expected": "Paris"}}]}
    server: OpenAIServer = openai_server([Turn.say("Lyon"), Turn.say("Lyon"), Turn.say("Paris"), Turn.say("Paris")])
    proc = serve(server, agents=[*AGENTS, grader])
    async with AgentClient(proc.target) as client, grpc.aio.insecure_channel(proc.target) as channel:
        runs: dict[int, list[str]] = {}
        for number, instructions in ((1, "Name the city."), (2, "Name the capital.")):
            await client.create_version("support", instructions=instructions, message=f"try {number}")
            await client.publish_version("support", number)
            runs[number] = [(await client.generate("support", "Capital of France?", options=MEMORY)).run_id
                            for _ in range(2)]
        scores = score_service_pb2_grpc.ScoreServiceStub(channel)
        for run_id in runs[1] + runs[2]:
            [score] = (await scores.ScoreRun(spb.ScoreRunRequest(run_id=run_id, agent_id="grader"))).scores
            assert score.source == spb.SCORE_SOURCE_TEST
        versions = {v.number: v.id for v in await client.list_versions("support")}
        aggregates = (await scores.AggregateScores(spb.AggregateScoresRequest(scorer_id="exact-match"))).aggregates
        by_version = {a.agent_version: (a.count, a.mean) for a in aggregates}
        assert by_version == {versions[1]: (2, 0.0), versions[2]: (2, 1.0)}
