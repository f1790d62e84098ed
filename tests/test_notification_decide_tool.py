"""A delivery policy's ``decide`` answered by a remote tool: another process (here a Python one
made with ``treadle_client``; any language's tool SDK serves the same way) gets each notification
record and answers with the decision.
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path

import grpc
import pytest

from tests.conftest import StartApp
from tests.support.databases import Database
from treadle.agents import Agent, NotificationPolicy, NotificationRule
from treadle.v1 import notification_pb2, signal_pb2
from treadle_client import AgentClient

RES, THR = "u1", "t-decide"

DECIDER = textwrap.dedent('''
    import json, sys
    from treadle_client import run_tools, tool

    seen = open(sys.argv[2], "a")

    @tool("support-decide", "Decides how a notification reaches the support agent",
          {"type": "object", "properties": {"record": {"type": "object"}}})
    def decide(args, ctx):
        r = args["record"]
        seen.write(json.dumps({"source": r["source"], "priority": r["priority"], "payload": r["payload"],
                               "active": args["active"], "thread": [ctx.resource_id, ctx.thread_id]}) + "\\n")
        seen.flush()
        if r["source"] == "spam":
            return {"action": "discard"}
        if r["priority"] == "low":
            return {"action": "summarize", "summaryAt": "2099-01-01T00:00:00Z"}
        return None  # the next rule decides

    run_tools([decide], sys.argv[1])
''')


async def _decider(target: str, seen: Path, tmp_path: Path) -> asyncio.subprocess.Process:
    script = tmp_path / "decider.py"
    script.write_text(DECIDER)
    proc = await asyncio.create_subprocess_exec(sys.executable, str(script), target, str(seen),
                                                stderr=asyncio.subprocess.PIPE)
    assert proc.stderr is not None
    while b"attached" not in (line := await asyncio.wait_for(proc.stderr.readline(), 60)):
        assert line, "the decider process exited before attaching"
    return proc


async def test_a_remote_tool_decides_how_each_notification_is_delivered(
    database: Database, start_app: StartApp, tmp_path: Path,
) -> None:
    policy = NotificationPolicy(default=NotificationRule("defer"), decide="support-decide")
    running = await start_app(setup=lambda app: app.add_agent(
        Agent(id="support", model="openai/gpt-4o-mini", notification_policy=policy)), **database.settings)
    seen = tmp_path / "seen.jsonl"
    proc = await _decider(running.target, seen, tmp_path)
    try:
        async with AgentClient(running.target) as client:
            low = await client.send_notification_signal(
                "support", {"source": "email", "kind": "digest", "summary": "3 new mails", "priority": "NOTIFICATION_PRIORITY_LOW",
                            "payload": {"count": 3}}, resource_id=RES, thread_id=THR)
            spam = await client.send_notification_signal(
                "support", {"source": "spam", "kind": "ad", "summary": "buy now"}, resource_id=RES, thread_id=THR)
            other = await client.send_notification_signal(
                "support", {"source": "github", "kind": "ci", "summary": "CI passed"}, resource_id=RES, thread_id=THR)
            stored = {n.source: n for n in await client.list_notifications(RES, THR)}
    finally:
        proc.terminate()
        await proc.wait()

    assert (low.decision.action, low.decision.rule) == (notification_pb2.NOTIFICATION_ACTION_SUMMARIZE, "decide")
    assert low.decision.summary_at.ToJsonString() == "2099-01-01T00:00:00Z"
    assert (spam.decision.action, spam.decision.rule) == (notification_pb2.NOTIFICATION_ACTION_DISCARD, "decide")
    # The tool answered null: the policy's next rule (here `default`) decided.
    assert (other.decision.action, other.decision.rule) == (notification_pb2.NOTIFICATION_ACTION_DEFER, "default")
    assert stored["spam"].status == signal_pb2.NOTIFICATION_STATUS_DISCARDED
    assert stored["email"].summary_at.ToJsonString() == "2099-01-01T00:00:00Z"
    calls = [json.loads(line) for line in seen.read_text().splitlines()]
    assert calls == [
        {"source": "email", "priority": "low", "payload": {"count": 3}, "active": False, "thread": [RES, THR]},
        {"source": "spam", "priority": "medium", "payload": None, "active": False, "thread": [RES, THR]},
        {"source": "github", "priority": "medium", "payload": None, "active": False, "thread": [RES, THR]},
    ]


async def test_a_decide_tool_that_is_not_attached_fails_the_call_and_stores_nothing(
    database: Database, start_app: StartApp,
) -> None:
    policy = NotificationPolicy(decide="support-decide")
    running = await start_app(setup=lambda app: app.add_agent(
        Agent(id="support", model="openai/gpt-4o-mini", notification_policy=policy)), **database.settings)
    async with AgentClient(running.target) as client:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await client.send_notification_signal(
                "support", {"source": "email", "kind": "digest", "summary": "3 new mails"}, resource_id=RES, thread_id=THR)
        assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert info.value.details() == (
            "notification decide tool 'support-decide' failed: tool 'support-decide' is not attached")
        assert await client.list_notifications(RES, THR) == []
