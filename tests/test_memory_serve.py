"""The memory acceptance contract against ``treadle serve`` processes, through reflection (buf
curl), on both engines: history across calls, ThreadService reads, SIGKILL and a restart on the
same store, and a crash mid-run losing at most the step in progress."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support import OpenAIServer, Turn
from tests.support.databases import Database
from tests.test_cli import BUF, READY_TIMEOUT, ROOT, ServeProcess, clean_env

ECHO = {"id": "echo", "name": "Echo", "instructions": "You are terse.", "model": "openai/gpt-4o-mini"}
MEMORY = {"memory": {"resource": "u1", "threadId": "t1"}}


def curl(target: str, method: str, body: dict[str, Any]) -> tuple[int, list[dict[str, Any]], str]:
    """``buf curl`` one RPC by its full name; (exit code, JSON responses, stderr)."""
    result = subprocess.run(
        [str(BUF), "curl", "--protocol", "grpc", "--http2-prior-knowledge", "--data", json.dumps(body),
         f"http://{target}/treadle.v1.{method}"],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )
    decoder, text, out = json.JSONDecoder(), result.stdout.strip(), []
    while text:
        obj, end = decoder.raw_decode(text)
        out.append(obj)
        text = text[end:].strip()
    return result.returncode, out, result.stderr


def ok(target: str, method: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    code, out, err = curl(target, method, body)
    assert code == 0, err
    return out


@pytest.fixture
def serve_on(database: Database) -> Iterator[Any]:
    procs: list[ServeProcess] = []

    def start(server: OpenAIServer, **settings: str) -> ServeProcess:
        env = clean_env(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test", **settings)
        proc = ServeProcess(*database.serve_args, env=env)
        procs.append(proc)
        proc.wait_ready()
        return proc

    yield start
    for proc in procs:
        proc.close()


def kill(proc: ServeProcess) -> None:
    proc.proc.send_signal(signal.SIGKILL)
    assert proc.proc.wait(timeout=READY_TIMEOUT) == -signal.SIGKILL


def roles(messages: list[dict[str, Any]]) -> list[str]:
    return [m["role"] for m in messages]


def test_acceptance_contract_with_sigkill_and_restart(serve_on: Any, openai_server: Any) -> None:
    server: OpenAIServer = openai_server([Turn.say("Hello, Ada."), Turn.say("Your name is Ada.")])
    proc = serve_on(server)
    ok(proc.target, "AgentService/CreateAgent", {"agent": ECHO})
    ok(proc.target, "AgentService/Stream", {"agentId": "echo", "prompt": "My name is Ada.", "options": MEMORY})
    ok(proc.target, "AgentService/Stream", {"agentId": "echo", "prompt": "What is my name?", "options": MEMORY})
    second = server.requests[1]["messages"]
    assert [(m["role"], m["content"]) for m in second] == [
        ("system", "You are terse."), ("user", "My name is Ada."), ("assistant", "Hello, Ada."),
        ("user", "What is my name?"),
    ]

    thread_ref = {"resourceId": "u1", "threadId": "t1"}
    [listed] = ok(proc.target, "ThreadService/ListMessages", thread_ref)
    assert roles(listed["messages"]) == ["MESSAGE_ROLE_USER", "MESSAGE_ROLE_ASSISTANT"] * 2
    assert "nextPageToken" not in listed
    [paged] = ok(proc.target, "ThreadService/ListMessages", {**thread_ref, "pageSize": 2})
    assert len(paged["messages"]) == 2 and paged["nextPageToken"]
    [got] = ok(proc.target, "ThreadService/GetThread", thread_ref)
    assert got["thread"]["id"] == "t1" and got["thread"]["resourceId"] == "u1"
    assert {"title", "metadata"} & set(got["thread"]) == {"metadata"}  # an empty title is omitted in JSON
    [threads] = ok(proc.target, "ThreadService/ListThreads", {"resourceId": "u1"})
    assert [t["id"] for t in threads["threads"]] == ["t1"]

    kill(proc)
    again = serve_on(server)
    [after] = ok(again.target, "ThreadService/ListMessages", thread_ref)
    assert after == listed
    [agents] = ok(again.target, "AgentService/ListAgents", {})
    assert "echo" in [a["id"] for a in agents["agents"]]

    code, _, err = curl(again.target, "AgentService/Stream", {
        "agentId": "echo", "prompt": "I am Bob", "options": {"memory": {"resource": "u2", "threadId": "t1"}},
    })
    assert code != 0 and "permission_denied" in err.lower()
    [unchanged] = ok(again.target, "ThreadService/ListMessages", thread_ref)
    assert unchanged == listed


async def test_sigkill_mid_run_loses_at_most_the_step_in_progress(serve_on: Any, openai_server: Any) -> None:
    entered = threading.Event()
    release = threading.Event()

    def held(body: dict[str, Any]) -> Turn:
        entered.set()  # step 2's provider call: step 1 (tool call and result) is behind us
        release.wait(READY_TIMEOUT)
        return Turn.say("never seen")

    server: OpenAIServer = openai_server([Turn.call("lookup", {"q": "x"}), held])
    proc = serve_on(server, TREADLE_THREAD_LEASE_TTL="5")
    ok(proc.target, "AgentService/CreateAgent", {"agent": {**ECHO, "tools": ["lookup"]}})
    body = {"agentId": "echo", "prompt": "look it up", "options": MEMORY}
    run = asyncio.create_task(asyncio.to_thread(curl, proc.target, "AgentService/Stream", body))
    try:
        assert await asyncio.to_thread(entered.wait, READY_TIMEOUT)
        kill(proc)
    finally:
        release.set()
    await run

    again = serve_on(server, TREADLE_THREAD_LEASE_TTL="5")
    [listed] = ok(again.target, "ThreadService/ListMessages", {"resourceId": "u1", "threadId": "t1"})
    messages = listed["messages"]
    assert messages[0]["content"]["parts"] == [{"text": {"text": "look it up"}}]
    parts = [p for m in messages[1:] for p in m["content"]["parts"]]
    calls = [p["toolInvocation"] for p in parts if "toolInvocation" in p]
    assert [(c["toolName"], c["state"]) for c in calls] == [("lookup", "TOOL_INVOCATION_STATE_OUTPUT_ERROR")]
    assert "never seen" not in json.dumps(messages)
    # Its server died with it: the restarted server records it failed (no run stays running),
    # at once on SQLite (one process), once its lease has expired on PostgreSQL.
    def statuses() -> list[str]:
        [runs] = ok(again.target, "ThreadService/ListRuns", {"resourceId": "u1", "threadId": "t1"})
        return [r["status"] for r in runs["runs"]]

    deadline = time.monotonic() + READY_TIMEOUT
    while statuses() == ["RUN_STATUS_RUNNING"] and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert statuses() == ["RUN_STATUS_FAILED"]


def test_serve_with_an_unreachable_database_says_so_and_exits_2() -> None:
    from tests.test_cli import TREADLE, free_port

    for database, says in (
        (f"postgresql://ada:secret@127.0.0.1:{free_port()}/nowhere", "cannot open the store at"),
        ("mysql://x/y", "must be a postgresql:// URL"),
    ):
        result = subprocess.run(
            [*TREADLE, "serve", "--listen", f"127.0.0.1:{free_port()}", "--database", database],
            capture_output=True, text=True, env=clean_env(), timeout=READY_TIMEOUT * 2,
        )
        assert result.returncode == 2 and says in result.stderr, result.stderr
        assert "secret" not in result.stderr
