"""Signals against ``treadle serve`` processes, through reflection (buf curl), on both engines:
the acceptance calls as any gRPC client makes them, and a SIGKILL with persisted and queued
signals and a notification waiting, after which a restarted server delivers each exactly once.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.support import OpenAIServer, Turn
from tests.test_cli import READY_TIMEOUT
from tests.test_memory_serve import ECHO, curl, kill, ok, serve_on  # noqa: F401 - serve_on is a fixture

THREAD = {"resourceId": "u1", "threadId": "t1"}
SHORT_LEASE = {"TREADLE_THREAD_LEASE_TTL": "2"}


@pytest.fixture(autouse=True)
def patient_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """A restarted server has runs to recover besides its start: give it longer to be ready."""
    monkeypatch.setattr("tests.test_cli.READY_TIMEOUT", 120.0)


def until(check: Callable[[], Any], timeout: float = READY_TIMEOUT) -> None:
    """Wait for observable state (a recorded provider request, a stored record)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def user_texts(request: dict[str, Any]) -> list[str]:
    return [m["content"] if isinstance(m["content"], str) else "".join(p.get("text", "") for p in m["content"])
            for m in request["messages"] if m["role"] == "user"]


def idle(target: str) -> bool:
    [active] = ok(target, "ThreadService/GetActiveRun", THREAD)
    return not active["activeRun"]


def test_acceptance_calls_over_reflection(serve_on: Any, openai_server: Any) -> None:
    server: OpenAIServer = openai_server([Turn.say("Hi Devin")])
    proc = serve_on(server)
    ok(proc.target, "AgentService/CreateAgent", {"agent": ECHO})
    [answer] = ok(proc.target, "ThreadService/SendMessage", {
        "agentId": "echo", "resourceId": "u1", "threadId": "t1",
        "message": {"contents": "hello", "attributes": {"name": "Devin", "from": "slack"}},
        "ifIdle": {"behavior": "IDLE_BEHAVIOR_WAKE"},
    })
    assert answer["accepted"]["action"] == "SIGNAL_ACTION_WAKE" and answer["accepted"]["runId"]
    assert answer["signal"]["id"]
    until(lambda: idle(proc.target))
    assert user_texts(server.requests[0]) == ['<user name="Devin" from="slack">hello</user>']
    state = {"agentId": "echo", "resourceId": "u1", "threadId": "t1",
             "state": {"id": "browser", "cacheKey": "k1", "mode": "STATE_MODE_SNAPSHOT", "value": {"url": "a"}}}
    server.add(Turn.say("noted"))
    ok(proc.target, "ThreadService/SendStateSignal", state)
    until(lambda: len(server.requests) == 2 and idle(proc.target))
    [skipped] = ok(proc.target, "ThreadService/SendStateSignal", state)
    assert skipped["skipped"] is True and skipped["reason"] == "unchanged"
    code, _, err = curl(proc.target, "ThreadService/SendSignal", {
        "agentId": "echo", "resourceId": "u1", "threadId": "t1", "signal": {"type": "bogus"}})
    assert code != 0 and "invalid_argument" in err.lower()
    [messages] = ok(proc.target, "ThreadService/ListMessages", THREAD)
    assert [m["role"] for m in messages["messages"]] == ["MESSAGE_ROLE_SIGNAL", "MESSAGE_ROLE_ASSISTANT"] * 2


def test_sigkill_with_queued_persisted_and_waiting_signals_then_each_is_delivered_once(
    serve_on: Any, openai_server: Any
) -> None:
    entered, release = threading.Event(), threading.Event()

    def held(body: dict[str, Any]) -> Turn:
        entered.set()
        release.wait(READY_TIMEOUT)
        return Turn.say("never seen")

    server: OpenAIServer = openai_server([held])
    # The killed server's thread lease must expire before the next one takes the thread over.
    proc = serve_on(server, **SHORT_LEASE)
    try:
        ok(proc.target, "AgentService/CreateAgent", {"agent": ECHO})
        ok(proc.target, "ThreadService/SendMessage", {"agentId": "echo", **THREAD, "message": {"contents": "start"}})
        assert entered.wait(READY_TIMEOUT)
        [persisted] = ok(proc.target, "ThreadService/SendMessage", {
            "agentId": "echo", **THREAD, "message": {"contents": "persisted one"},
            "ifActive": {"behavior": "ACTIVE_BEHAVIOR_PERSIST"}})
        assert persisted["accepted"]["action"] == "SIGNAL_ACTION_PERSIST"
        [queued] = ok(proc.target, "ThreadService/QueueMessage", {
            "agentId": "echo", **THREAD, "message": {"contents": "queued one"}})
        assert queued["accepted"]["action"] == "SIGNAL_ACTION_PERSIST"
        [note] = ok(proc.target, "ThreadService/SendNotificationSignal", {"agentId": "echo", **THREAD, "notification": {
            "source": "github", "kind": "ci-status", "priority": "NOTIFICATION_PRIORITY_HIGH",
            "summary": "CI failed on main.", "dedupeKey": "ci"}})
        assert note["decision"]["action"] == "NOTIFICATION_ACTION_SUMMARIZE"
        kill(proc)
    finally:
        release.set()

    # The restarted server runs the queued message (the persisted one joins it), then, the thread
    # being idle, delivers the notification that waited for it: two runs, nothing twice.
    server.add(Turn.say("on it"), Turn.say("looking at CI"))
    again = serve_on(server, **SHORT_LEASE)
    until(lambda: len(server.requests) == 3 and idle(again.target)
          and ok(again.target, "ThreadService/ListNotifications", THREAD)[0]["notifications"][0]["status"]
          == "NOTIFICATION_STATUS_DELIVERED")
    texts = [user_texts(r) for r in server.requests[1:]]
    # The summary was answered DELIVER into the killed run, which never took it in: it is durable
    # from that answer on, so the next run takes it (once), with the persisted one.
    summary = '<notification-summary pending="1" priority="high">github: 1</notification-summary>'
    assert texts[0][-3:] == ["persisted one", summary, "queued one"]
    assert texts[1][-1].startswith('<notification id="') and texts[1][-1].endswith(">CI failed on main.</notification>")
    all_user = [t for r in texts for t in r]
    assert all_user.count("persisted one") == 2 and all_user.count("queued one") == 2  # as input, then as history
    [messages] = ok(again.target, "ThreadService/ListMessages", THREAD)
    contents = [json.dumps(m) for m in messages["messages"]]
    assert sum("persisted one" in c for c in contents) == 1 and sum("queued one" in c for c in contents) == 1
    assert sum("notification-summary" in c for c in contents) == 1

    kill(again)  # and once more: nothing is left to deliver
    third = serve_on(server, **SHORT_LEASE)
    until(lambda: idle(third.target))
    assert len(server.requests) == 3
    [records] = ok(third.target, "ThreadService/ListNotifications", THREAD)
    assert [r["status"] for r in records["notifications"]] == ["NOTIFICATION_STATUS_DELIVERED"]
