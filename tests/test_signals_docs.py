"""docs/signals.md's examples run as written."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.conftest import StartApp
from tests.support import Turn
from tests.test_thread_signals import threads  # noqa: F401 (a fixture: a server on each engine)
from treadle.agents import Agent
from treadle.api.convert import agent_from_dict
from treadle.config import load_agent_file
from treadle.signals import DecideArgs, NotificationRecord

DOC = (Path(__file__).resolve().parent.parent / "docs" / "signals.md").read_text()


DOC_BLOCKS = {
    ("docs/signals.md", "python", 0): "test_the_client_example_subscribes_sends_and_watches",
    ("docs/signals.md", "yaml", 0): "test_the_delivery_policy_example_loads_and_the_decider_answers",
    ("docs/signals.md", "python", 1): "test_the_delivery_policy_example_loads_and_the_decider_answers",
    ("docs/signals.md", "python", 2): "test_the_decide_tool_example_answers_from_its_own_process",
    **{("docs/signals.md", "json", i): "test_the_stored_message_and_chunk_shapes_are_those_shown" for i in range(4)},
}


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC, re.S)


async def test_the_client_example_subscribes_sends_and_watches(
    start_app: StartApp, openai_server: Any, tmp_path: Path
) -> None:
    import asyncio

    server = openai_server([Turn.say(["Yes", ": fewer calls."])])

    def setup(app: Any) -> None:
        app.add_agent(Agent(id="assistant", model="openai/gpt-4o-mini", base_url=server.base_url))

    running = await start_app(setup)
    script = tmp_path / "signals.py"
    script.write_text(blocks("python")[0].replace("127.0.0.1:50051", running.target))
    python = Path(__file__).resolve().parent.parent / ".venv" / "bin" / "python"
    proc = await asyncio.create_subprocess_exec(str(python), str(script), stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)
    stdout, stderr = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, stderr.decode()
    out = stdout.decode().splitlines()
    assert out[0].startswith("run run_") and " took sig_" in out[0]
    assert out[1:] == ["Yes", ": fewer calls."]
    [message] = [m for m in server.requests[0]["messages"] if m["role"] == "user"]
    assert message["content"] == '<user name="Devin" from="slack">Can we simplify the API surface?</user>'


def test_the_delivery_policy_example_loads_and_the_decider_answers(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(blocks("yaml")[0])
    [agent] = [agent_from_dict(d, source="config") for d in load_agent_file(path)]
    policy = agent.notification_policy
    assert policy is not None and policy.decide == "support"
    assert policy.priorities["urgent"].action == "deliver"
    assert (policy.sources["email"].action, policy.sources["email"].delay) == ("summarize", 1800.0)

    registered: dict[str, Any] = {}

    class App:
        def add_notification_decider(self, name: str, fn: Any) -> None:
            registered[name] = fn

    namespace: dict[str, Any] = {"app": App()}
    exec(blocks("python")[1], namespace)
    record = NotificationRecord(("u", "t"), "github", "star", "New star", priority="low")
    from treadle.core.messages import utcnow

    now = utcnow()
    decision = registered["support"](DecideArgs(record, False, now))
    assert decision["action"] == "summarize" and (decision["summaryAt"] - now).total_seconds() == 1800
    record.priority = "high"
    assert registered["support"](DecideArgs(record, False, now)) is None


async def test_the_decide_tool_example_answers_from_its_own_process(start_app: StartApp, tmp_path: Path) -> None:
    import asyncio
    import sys

    from treadle.agents import NotificationPolicy
    from treadle.v1 import notification_pb2
    from treadle_client import AgentClient

    running = await start_app(setup=lambda app: app.add_agent(
        Agent(id="support", model="openai/gpt-4o-mini", notification_policy=NotificationPolicy(decide="support"))))
    script = tmp_path / "decide_tool.py"
    script.write_text(blocks("python")[2].replace("127.0.0.1:50051", running.target))
    proc = await asyncio.create_subprocess_exec(sys.executable, str(script), stderr=asyncio.subprocess.PIPE)
    try:
        assert proc.stderr is not None
        while b"attached" not in (line := await asyncio.wait_for(proc.stderr.readline(), 60)):
            assert line, "the example exited before attaching"
        async with AgentClient(running.target) as client:
            answer = await client.send_notification_signal(
                "support", {"source": "github", "kind": "star", "summary": "New star",
                            "priority": "NOTIFICATION_PRIORITY_LOW"}, resource_id="u", thread_id="t")
    finally:
        proc.terminate()
        await proc.wait()
    assert (answer.decision.action, answer.decision.rule) == (notification_pb2.NOTIFICATION_ACTION_SUMMARIZE, "decide")
    assert answer.decision.summary_at.ToJsonString() == "2030-01-01T09:00:00Z"


def _shaped_like(doc: Any, actual: Any, path: str = "") -> None:
    """``actual`` has the documented shape: the same keys and values, where a documented string
    with "…" stands for any string starting with what comes before it (ids, times)."""
    if isinstance(doc, str) and "…" in doc:
        assert isinstance(actual, str) and actual.startswith(doc.split("…")[0]), (path, actual)
    elif isinstance(doc, dict):
        assert isinstance(actual, dict) and sorted(actual) == sorted(doc), (path, sorted(actual), sorted(doc))
        for key, value in doc.items():
            _shaped_like(value, actual[key], f"{path}.{key}")
    elif isinstance(doc, list):
        assert isinstance(actual, list) and len(actual) == len(doc), (path, actual)
        for i, (d, a) in enumerate(zip(doc, actual, strict=True)):
            _shaped_like(d, a, f"{path}[{i}]")
    else:
        assert actual == doc, (path, actual, doc)


async def test_the_stored_message_and_chunk_shapes_are_those_shown(threads: Any) -> None:
    """The JSON blocks: a stored signal message, then the data-signal chunks of a state, a
    delivered notification and a summary, as a server produces them (on SQLite and PostgreSQL)."""
    import json

    from google.protobuf import json_format
    from sqlalchemy import select

    from treadle.memory import schema
    from treadle.v1 import thread_service_pb2
    from treadle_client import AgentClient

    stored_doc, state_doc, notification_doc, summary_doc = (json.loads(b) for b in blocks("json"))
    t, _ = await threads([Turn.say("Yes."), Turn.say("Noted."), Turn.say("On it.")])
    key = {"resource_id": "user-123", "thread_id": "thread-abc"}
    watch = await t.subscribe("user-123", "thread-abc")
    async with AgentClient(t.running.target) as client:
        sent = await client.send_message("echo", "Can we simplify the API surface?", **key,
                                         attributes={"name": "Devin", "from": "slack"})
        await watch.idle_after(sent.accepted.run_id)
        state = await client.send_state_signal("echo", {
            "id": "browser", "cacheKey": "browser:3-tabs", "contents": "Browser is open. 3 open tabs.",
            "value": {"activeUrl": "https://example.com", "tabCount": 3}}, **key)
        await watch.idle_after(state.accepted.run_id)
        urgent = await client.send_notification_signal("echo", {
            "source": "github", "kind": "ci-status", "summary": "CI failed on main.",
            "priority": "NOTIFICATION_PRIORITY_URGENT"}, **key)
        await watch.idle_after(urgent.run_id)
        await client.send_notification_signal("echo", {
            "source": "github", "kind": "star", "summary": "New star", "priority": "NOTIFICATION_PRIORITY_LOW"}, **key)
        await watch.until(lambda w: sum(c.HasField("data") and c.data.name == "data-signal" for c in w.chunks) == 3)
        listed = await t.stub.ListMessages(thread_service_pb2.ListMessagesRequest(
            resource_id="user-123", thread_id="thread-abc"))
    store = t.running.app.store
    rows = await store.engine.read(lambda conn: list(conn.execute(
        select(schema.messages).where(schema.messages.c.id == listed.messages[0].id)).all()))
    [row] = rows
    _shaped_like(stored_doc, {"id": row.id, "role": row.role, "type": row.type, "content": json.loads(row.content)})
    data = [json_format.MessageToDict(c.data.data) for c in watch.chunks
            if c.HasField("data") and c.data.name == "data-signal"]
    for doc, actual in zip((state_doc, notification_doc, summary_doc), data, strict=True):
        _shaped_like(doc, actual)
