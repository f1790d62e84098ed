"""Two ``treadle serve`` processes on one PostgreSQL: one runner per thread across replicas.

Both serve the same agent file and talk to one loopback OpenAI server, so what the model was
sent is read from its recorded requests whichever process sent it. A run is held active by a
scripted turn that blocks until the test releases it; waiting is on observable state (a
recorded request, a subscription event, an answer), never on time. The lease TTL is short
(``--thread-lease-ttl``) so that a takeover after a SIGKILL comes quickly.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from tests.support import OpenAIServer, Turn
from tests.support.databases import Database
from tests.test_cli import READY_TIMEOUT, ServeProcess, clean_env
from tests.test_memory_serve import kill
from tests.test_signals_serve import until, user_texts
from treadle.v1 import signal_pb2, thread_service_pb2, thread_service_pb2_grpc

THREAD = {"resourceId": "u1", "threadId": "t1"}
AGENTS = {"agents": [{"id": "echo", "name": "Echo", "instructions": "You are terse.", "model": "openai/gpt-4o-mini"}]}
LEASE_TTL = "5"
"""Seconds: short for a quick takeover, long enough for a first run on a busy machine (its
provider client is imported on the event loop) to renew in time."""


class Replica:
    """One server process and a ThreadService client on it."""

    def __init__(self, proc: ServeProcess) -> None:
        self.proc = proc
        self.channel = grpc.insecure_channel(proc.target)
        self.stub = thread_service_pb2_grpc.ThreadServiceStub(self.channel)

    def call(self, method: str, body: dict[str, Any]) -> dict[str, Any]:
        kind = getattr(signal_pb2, f"{method}Request", None) or getattr(thread_service_pb2, f"{method}Request")
        request = json_format.ParseDict(body, kind())
        return json_format.MessageToDict(getattr(self.stub, method)(request, timeout=READY_TIMEOUT))

    def active(self) -> str:
        return str(self.call("GetActiveRun", THREAD)["activeRun"].get("runId", ""))

    def subscribe(self) -> Watch:
        return Watch(self.stub.SubscribeToThread(json_format.ParseDict(THREAD, signal_pb2.SubscribeToThreadRequest())))


class Watch:
    """A subscription read on a thread of its own."""

    def __init__(self, call: Any) -> None:
        self.call = call
        self.responses: list[signal_pb2.SubscribeToThreadResponse] = []
        self._changed = threading.Condition()
        self._first: queue.Queue[bool] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        assert self._first.get(timeout=READY_TIMEOUT), "subscribed"

    def _read(self) -> None:
        try:
            for response in self.call:
                with self._changed:
                    self.responses.append(response)
                    self._changed.notify_all()
                if len(self.responses) == 1:
                    self._first.put(True)
        except grpc.RpcError:
            pass

    def until(self, check: Callable[[Watch], Any]) -> None:
        with self._changed:
            assert self._changed.wait_for(lambda: check(self), READY_TIMEOUT), [str(r) for r in self.responses]

    def runs(self) -> list[str]:
        return [r.active_run.run_id for r in self.responses if r.HasField("active_run")]

    def text(self, run_id: str) -> str:
        return "".join(c.text_delta.text for r in self.responses for c in r.chunks
                       if c.HasField("text_delta") and c.run_id == run_id)

    def close(self) -> None:
        self.call.cancel()


@pytest.fixture
def replicas(postgres: Database, tmp_path: Path) -> Iterator[Callable[[OpenAIServer], Replica]]:
    """``replicas(server)`` starts one more ``treadle serve`` on the test's PostgreSQL schema."""
    agents = tmp_path / "agents.json"
    agents.write_text(json.dumps(AGENTS))
    started: list[Replica] = []

    def start(server: OpenAIServer) -> Replica:
        env = clean_env(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test",
                        TREADLE_THREAD_LEASE_TTL=LEASE_TTL)
        proc = ServeProcess(*postgres.serve_args, "--config", str(agents), env=env)
        replica = Replica(proc)
        started.append(replica)
        proc.wait_ready()
        return replica

    yield start
    for replica in started:
        replica.channel.close()
        replica.proc.close()


def held_turn(entered: threading.Event, release: threading.Event, turn: Turn) -> Callable[[dict[str, Any]], Turn]:
    def play(_: dict[str, Any]) -> Turn:
        entered.set()
        assert release.wait(READY_TIMEOUT), "the test never released the turn"
        return turn

    return play


def test_racing_wakes_one_runs_the_other_delivers_into_that_run(replicas: Any, openai_server: Any) -> None:
    entered, release = threading.Event(), threading.Event()
    server: OpenAIServer = openai_server([held_turn(entered, release, Turn.say("first")), Turn.say("second")])
    a, b = replicas(server), replicas(server)
    watch = b.subscribe()
    bodies = [{"agentId": "echo", **THREAD, "message": {"contents": f"from {name}", "attributes": {"name": name}}}
              for name in ("Ada", "Bo")]
    try:
        with ThreadPoolExecutor(2) as pool:
            answers = list(pool.map(lambda pair: pair[0].call("SendMessage", pair[1]), [(a, bodies[0]), (b, bodies[1])]))
        actions = sorted(x["accepted"]["action"] for x in answers)
        assert actions == ["SIGNAL_ACTION_DELIVER", "SIGNAL_ACTION_WAKE"], answers
        run_ids = {x["accepted"]["runId"] for x in answers}
        assert len(run_ids) == 1, "the deliver answer names the run the wake started"
        [run_id] = run_ids
        assert entered.wait(READY_TIMEOUT)
        assert a.active() == b.active() == run_id, "\n".join(l for l in a.proc.stderr + ["----"] + b.proc.stderr if "alembic" not in l)
    finally:
        release.set()
    watch.until(lambda w: run_id in w.runs() and w.runs()[-1] == "")
    assert len(server.requests) == 2, "one run: the delivered message was a turn of it"
    woken = next(x for x in answers if x["accepted"]["action"] == "SIGNAL_ACTION_WAKE")
    first, second = (b["message"]["contents"] for b in (bodies if woken is answers[0] else bodies[::-1]))
    names = {"from Ada": "Ada", "from Bo": "Bo"}
    assert user_texts(server.requests[0]) == [f'<user name="{names[first]}">{first}</user>']
    assert user_texts(server.requests[1]) == [f'<user name="{names[first]}">{first}</user>',
                                              f'<user name="{names[second]}">{second}</user>']
    assert watch.text(run_id) == "firstsecond"
    watch.close()


def test_a_signal_sent_to_the_other_replica_reaches_the_run_and_its_subscribers(replicas: Any, openai_server: Any) -> None:
    entered, release = threading.Event(), threading.Event()
    big = "x" * 20_000  # one chunk far over a NOTIFY payload: it reaches the other replica whole
    server: OpenAIServer = openai_server([held_turn(entered, release, Turn.say("working")), Turn.say(big)])
    a, b = replicas(server), replicas(server)
    watch = b.subscribe()
    try:
        woke = a.call("SendMessage", {"agentId": "echo", **THREAD, "message": {"contents": "start"}})
        run_id = woke["accepted"]["runId"]
        assert entered.wait(READY_TIMEOUT)
        sent = b.call("SendMessage", {"agentId": "echo", "runId": run_id, "message": {
            "contents": "hello", "attributes": {"name": "Devin", "from": "slack"}}})
        assert sent["accepted"] == {"action": "SIGNAL_ACTION_DELIVER", "runId": run_id}
        state = b.call("SendStateSignal", {"agentId": "echo", **THREAD, "state": {
            "id": "browser", "cacheKey": "k1", "mode": "STATE_MODE_SNAPSHOT", "contents": "tab open"}})
        assert state["accepted"] == {"action": "SIGNAL_ACTION_DELIVER", "runId": run_id}
    finally:
        release.set()
    watch.until(lambda w: run_id in w.runs() and w.runs()[-1] == "")
    assert user_texts(server.requests[1]) == ["start", '<user name="Devin" from="slack">hello</user>',
                                              "<state>tab open</state>"]
    assert watch.text(run_id) == "working" + big
    signals = [c.data.name for r in watch.responses for c in r.chunks if c.HasField("data")]
    assert signals == ["data-user-message", "data-user-message", "data-signal"]
    messages = a.call("ListMessages", THREAD)
    assert sum("hello" in json.dumps(m) for m in messages["messages"]) == 1
    watch.close()


def test_a_replica_killed_mid_run_its_thread_is_taken_over_and_each_signal_delivered_once(
    replicas: Any, openai_server: Any
) -> None:
    entered, release = threading.Event(), threading.Event()
    server: OpenAIServer = openai_server([held_turn(entered, release, Turn.say("never seen")), Turn.say("took over"),
                                          Turn.say("looking at CI")])
    a, b = replicas(server), replicas(server)
    watch = b.subscribe()
    try:
        woke = a.call("SendMessage", {"agentId": "echo", **THREAD, "message": {"contents": "start"}})
        run_id = woke["accepted"]["runId"]
        assert entered.wait(READY_TIMEOUT)
        persisted = b.call("SendMessage", {"agentId": "echo", **THREAD, "message": {"contents": "persisted one"},
                                           "ifActive": {"behavior": "ACTIVE_BEHAVIOR_PERSIST"}})
        assert persisted["accepted"] == {"action": "SIGNAL_ACTION_PERSIST"}
        queued = a.call("QueueMessage", {"agentId": "echo", **THREAD, "message": {"contents": "queued one"}})
        assert queued["accepted"] == {"action": "SIGNAL_ACTION_PERSIST"}
        note = b.call("SendNotificationSignal", {"agentId": "echo", **THREAD, "notification": {
            "source": "github", "kind": "ci-status", "priority": "NOTIFICATION_PRIORITY_HIGH",
            "summary": "CI failed on main.", "dedupeKey": "ci"}})
        assert note["decision"]["action"] == "NOTIFICATION_ACTION_SUMMARIZE"  # the full record once idle
        kill(a.proc)
        # Sent before A's lease expired: accepted for A's run, which never takes it in; the
        # answer comes when the run that takes the thread over has taken it in, and names it.
        late = b.call("SendMessage", {"agentId": "echo", **THREAD, "message": {"contents": "after the kill"}})
        assert late["accepted"]["action"] == "SIGNAL_ACTION_DELIVER"
    finally:
        release.set()
    # B hears no end of A's run: A's lease expires, B takes the thread over and runs the queued
    # message with the persisted one before it.
    # Then, the thread idle, B delivers the notification that waited for it: one more run.
    watch.until(lambda w: len([r for r in w.runs() if r]) == 3 and w.runs()[-1] == "")
    taken = [r for r in watch.runs() if r][1]
    assert taken != run_id and watch.text(taken) == "took over"
    assert late["accepted"]["runId"] == taken, (late, run_id, watch.runs())
    # The summary answered DELIVER into A's run, which never took it in, is durable: it joins too.
    summary = '<notification-summary pending="1" priority="high">github: 1</notification-summary>'
    assert user_texts(server.requests[1])[-4:] == ["persisted one", summary, "after the kill", "queued one"]
    assert user_texts(server.requests[2])[-1].endswith(">CI failed on main.</notification>")
    records = b.call("ListNotifications", THREAD)["notifications"]
    assert [r["status"] for r in records] == ["NOTIFICATION_STATUS_DELIVERED"]
    messages = b.call("ListMessages", THREAD)
    contents = [json.dumps(m) for m in messages["messages"]]
    for text in ("persisted one", "after the kill", "queued one"):
        assert sum(text in c for c in contents) == 1, text
    assert b.active() == ""
    c = replicas(server)  # a further replica finds nothing left to run
    until(lambda: c.active() == "" and b.active() == "")
    assert len(server.requests) == 3
    watch.close()
