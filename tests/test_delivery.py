"""Nothing accepted is lost, nothing is applied twice, faults answer clearly: real server
processes on SQLite and PostgreSQL, a real PostgreSQL restarted under a running server.

- A signal the run took in at a step boundary, whose replica is SIGKILLed before that step is
  stored, reaches the model again in the next run and is stored once (the durable inbox).
- A stale copy of a notification record never overwrites a newer one (compare-and-set).
- A PostgreSQL restart under a running server: calls after it succeed (pooled connections are
  checked, transient faults retried); with the database down, calls answer UNAVAILABLE with a
  message that names no SQL, host or port.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import grpc
import pytest

from tests.support import OpenAIServer, Turn
from tests.support.databases import Database
from tests.test_cli import READY_TIMEOUT, ServeProcess, clean_env
from tests.test_memory_serve import ECHO, curl, kill, ok, serve_on  # noqa: F401 - serve_on is a fixture
from tests.test_signals_replicas import held_turn, replicas  # noqa: F401 - a fixture
from tests.test_signals_serve import SHORT_LEASE, THREAD, idle, until, user_texts
from treadle.memory import open_database
from treadle.memory.migrate import upgrade
from treadle.memory.signal_sql import SqlSignalStore
from treadle.signals import InMemorySignalStore, NotificationRecord, SignalStore, StateChannel

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def patient_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TREADLE_STARTUP_TIMEOUT", "60")


def test_a_signal_taken_in_by_a_run_killed_before_its_step_is_stored_reaches_the_next_run_once(
    serve_on: Any, openai_server: Any
) -> None:
    first, release_first = threading.Event(), threading.Event()
    second = threading.Event()
    hold_second = threading.Event()

    def held_first(body: dict[str, Any]) -> Turn:
        first.set()
        release_first.wait(READY_TIMEOUT)
        return Turn.say("first answer")

    def held_second(body: dict[str, Any]) -> Turn:
        second.set()
        hold_second.wait(READY_TIMEOUT)  # the replica is killed while the model answers
        return Turn.say("never seen")

    server: OpenAIServer = openai_server([held_first, held_second])
    proc = serve_on(server, **SHORT_LEASE)
    try:
        ok(proc.target, "AgentService/CreateAgent", {"agent": ECHO})
        ok(proc.target, "ThreadService/SendMessage", {"agentId": "echo", **THREAD, "message": {"contents": "start"}})
        assert first.wait(READY_TIMEOUT)
        [sent] = ok(proc.target, "ThreadService/SendMessage", {"agentId": "echo", **THREAD,
                                                               "message": {"contents": "the marker"}})
        assert sent["accepted"]["action"] == "SIGNAL_ACTION_DELIVER"
        release_first.set()
        assert second.wait(READY_TIMEOUT)  # the marker was taken in at the step boundary ...
        assert user_texts(server.requests[1])[-1] == "the marker"
        kill(proc)  # ... and the step that took it in was never stored
    finally:
        release_first.set()
        hold_second.set()

    server.add(Turn.say("understood"))
    again = serve_on(server, **SHORT_LEASE)
    until(lambda: len(server.requests) == 3 and idle(again.target))
    assert user_texts(server.requests[2]).count("the marker") == 1
    [messages] = ok(again.target, "ThreadService/ListMessages", THREAD)
    contents = [json.dumps(m) for m in messages["messages"]]
    assert sum("the marker" in c for c in contents) == 1
    assert sum("understood" in c for c in contents) == 1

    kill(again)  # nothing is left to deliver: a further restart runs nothing
    third = serve_on(server, **SHORT_LEASE)
    until(lambda: idle(third.target))
    assert len(server.requests) == 3


@pytest.fixture(params=["memory", "sql"])
async def signal_store(request: pytest.FixtureRequest, database: Database) -> Any:
    if request.param == "memory":
        yield InMemorySignalStore()
        return
    db = open_database(database.url)
    await upgrade(db)
    yield SqlSignalStore(db)
    await db.dispose()


async def test_a_stale_copy_of_a_notification_record_never_overwrites_a_newer_one(signal_store: SignalStore) -> None:
    record = NotificationRecord(("u1", "t1"), "github", "ci", "CI failed", priority="high", deliver_when_idle=True)
    assert await signal_store.save_notification(record)
    [sender] = await signal_store.list_notifications(("u1", "t1"))
    [idle_hook] = await signal_store.list_notifications(("u1", "t1"))
    idle_hook.status, idle_hook.deliver_when_idle = "delivered", False
    assert await signal_store.save_notification(idle_hook)  # the idle hook delivers it
    sender.status = "summarized"  # the sender's copy, read before, is stale now
    assert not await signal_store.save_notification(sender)
    [stored] = await signal_store.list_notifications(("u1", "t1"))
    assert (stored.status, stored.deliver_when_idle) == ("delivered", False)
    twin = NotificationRecord(("u1", "t1"), "github", "ci", "again", id=record.id)
    assert not await signal_store.save_notification(twin)  # a second create of one id loses too


async def test_a_state_channel_version_is_claimed_once(signal_store: SignalStore) -> None:
    key = ("u1", "t1")
    assert await signal_store.put_state(key, StateChannel("browser", "page-1", "snapshot", 1, "sig_a"), 0)
    assert not await signal_store.put_state(key, StateChannel("browser", "page-2", "snapshot", 1, "sig_b"), 0)
    assert await signal_store.put_state(key, StateChannel("browser", "page-2", "snapshot", 2, "sig_b"), 1)
    assert not await signal_store.put_state(key, StateChannel("browser", "page-3", "snapshot", 2, "sig_c"), 1)
    stored = await signal_store.get_state(key, "browser")
    assert stored is not None and (stored.cache_key, stored.version) == ("page-2", 2)


# --- a real PostgreSQL restarted under a running server -----------------------------------------


def _pg_ctl() -> str:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), key=lambda p: p.parts[-3])
    return str(found[-1]) if found else "pg_ctl"


class Cluster:
    """A cluster of this test's own (a restart must not disturb other tests' connections)."""

    def __init__(self) -> None:
        out = subprocess.run([str(ROOT / ".ci" / "postgres"), "start"], capture_output=True, text=True, check=True)
        values = dict(line.split("=", 1) for line in out.stdout.split() if "=" in line)
        self.url, self.dir = values["TREADLE_TEST_DATABASE_URL"], values["TREADLE_PG_DIR"]

    def pg_ctl(self, *args: str) -> None:
        cmd = [_pg_ctl(), "-D", f"{self.dir}/data", "-l", f"{self.dir}/server.log", "-w", "-t", "60", *args]
        if os.getuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        # No pipes: the restarted postmaster would hold them open.
        subprocess.run(cmd, check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=90)

    def close(self) -> None:
        subprocess.run([str(ROOT / ".ci" / "postgres"), "stop", self.dir], check=False, capture_output=True)


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    made = Cluster()
    yield made
    made.close()


def test_a_postgresql_restart_under_a_running_server_is_retried_and_a_database_down_is_unavailable(
    cluster: Cluster, openai_server: Any, tmp_path: Path
) -> None:
    server: OpenAIServer = openai_server([Turn.say("before"), Turn.say("after")])
    env = clean_env(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test")
    proc = ServeProcess("--data-dir", str(tmp_path / "data"), "--database", cluster.url, env=env)
    try:
        proc.wait_ready()
        ok(proc.target, "AgentService/CreateAgent", {"agent": ECHO})
        ok(proc.target, "ThreadService/SendMessage", {"agentId": "echo", **THREAD, "message": {"contents": "one"}})
        until(lambda: idle(proc.target) and len(server.requests) == 1)
        cluster.pg_ctl("-m", "fast", "restart")  # every pooled connection is closed by the server
        [sent] = ok(proc.target, "ThreadService/SendMessage", {"agentId": "echo", **THREAD,
                                                               "message": {"contents": "two"}})
        assert sent["accepted"]["action"] == "SIGNAL_ACTION_WAKE"
        until(lambda: idle(proc.target) and len(server.requests) == 2)
        [messages] = ok(proc.target, "ThreadService/ListMessages", THREAD)
        assert [m["role"] for m in messages["messages"]].count("MESSAGE_ROLE_ASSISTANT") == 2

        cluster.pg_ctl("-m", "fast", "stop")
        code, _, err = curl(proc.target, "ThreadService/ListMessages", THREAD)
        assert code != 0 and '"code": "unavailable"' in err, err
        port = cluster.url.rsplit(":", 1)[1].split("/")[0]
        for leak in ("SELECT", "127.0.0.1", port, "psycopg", "postgres"):
            assert leak not in err, (leak, err)
    finally:
        proc.close()


# --- request ids: a retry returns the first answer and changes nothing ---------------------------


def test_a_retry_with_the_same_request_id_returns_the_first_answer_and_changes_nothing(
    serve_on: Any, openai_server: Any
) -> None:
    server: OpenAIServer = openai_server([Turn.say("hi"), Turn.say("queued ran")])
    proc = serve_on(server)
    ok(proc.target, "AgentService/CreateAgent", {"agent": ECHO})
    send = {"agentId": "echo", **THREAD, "message": {"contents": "hello once"}, "requestId": "req-1"}
    [first] = ok(proc.target, "ThreadService/SendMessage", send)
    assert first["accepted"]["action"] == "SIGNAL_ACTION_WAKE"
    until(lambda: idle(proc.target))
    [again] = ok(proc.target, "ThreadService/SendMessage", send)  # the retry of a call that was applied
    assert again == first
    [created] = ok(proc.target, "ThreadService/CreateThread", {"thread": {"id": "t2", "resourceId": "u1"},
                                                               "requestId": "req-2"})
    assert ok(proc.target, "ThreadService/CreateThread", {"thread": {"id": "t2", "resourceId": "u1"},
                                                          "requestId": "req-2"}) == [created]  # not ALREADY_EXISTS
    # A call that failed was not applied: its retry runs (and is then remembered).
    queue = {"agentId": "nobody", **THREAD, "message": {"contents": "queued once"}, "requestId": "req-3"}
    code, _, err = curl(proc.target, "ThreadService/QueueMessage", queue)
    assert code != 0 and '"code": "not_found"' in err, err
    [queued] = ok(proc.target, "ThreadService/QueueMessage", {**queue, "agentId": "echo"})
    assert ok(proc.target, "ThreadService/QueueMessage", {**queue, "agentId": "echo"}) == [queued]
    until(lambda: idle(proc.target) and len(server.requests) == 2)
    code, _, err = curl(proc.target, "ThreadService/SendMessage", {**send, "requestId": "x" * 256})
    assert code != 0 and '"code": "invalid_argument"' in err and "request_id" in err, err

    [messages] = ok(proc.target, "ThreadService/ListMessages", THREAD)
    contents = [json.dumps(m) for m in messages["messages"]]
    assert sum("hello once" in c for c in contents) == 1 and sum("queued once" in c for c in contents) == 1
    assert len(server.requests) == 2


# --- two replicas on one PostgreSQL -----------------------------------------------------------


def test_a_retry_on_another_replica_returns_the_first_answer(replicas: Any, openai_server: Any) -> None:
    server: OpenAIServer = openai_server([Turn.say("hi")])
    a, b = replicas(server), replicas(server)
    send = {"agentId": "echo", **THREAD, "message": {"contents": "hello once"}, "requestId": "r-1"}
    first = a.call("SendMessage", send)
    assert b.call("SendMessage", send) == first
    until(lambda: a.active() == "" and b.active() == "" and len(server.requests) == 1)
    contents = [json.dumps(m) for m in b.call("ListMessages", THREAD)["messages"]]
    assert sum("hello once" in c for c in contents) == 1


def test_sigterm_lets_a_signal_call_in_flight_finish_with_its_answer(
    replicas: Any, openai_server: Any, postgres: Database
) -> None:
    entered, release = threading.Event(), threading.Event()
    server: OpenAIServer = openai_server([held_turn(entered, release, Turn.say("first")), Turn.say("took it")])
    a, b = replicas(server), replicas(server)
    answers: list[Any] = []
    try:
        woke = a.call("SendMessage", {"agentId": "echo", **THREAD, "message": {"contents": "start"}})
        assert entered.wait(READY_TIMEOUT)
        os.kill(a.proc.proc.pid, signal.SIGSTOP)  # A's run never answers B's relay ...

        def send() -> None:
            try:
                answers.append(b.call("SendMessage", {"agentId": "echo", **THREAD,
                                                      "message": {"contents": "in flight"}}))
            except grpc.RpcError as e:
                answers.append(e)

        sender = threading.Thread(target=send)
        sender.start()
        until(lambda: any(p["kind"] == "accepted" for p in _pending(postgres)))  # ... so B's call waits for it
        b.proc.proc.send_signal(signal.SIGTERM)
        sender.join(READY_TIMEOUT)
        assert b.proc.proc.wait(timeout=READY_TIMEOUT) == 0
    finally:
        os.kill(a.proc.proc.pid, signal.SIGCONT)
        release.set()
    [answer] = answers
    assert not isinstance(answer, grpc.RpcError), answer  # applied, so answered: never UNAVAILABLE
    assert answer["accepted"] == {"action": "SIGNAL_ACTION_DELIVER", "runId": woke["accepted"]["runId"]}
    until(lambda: len(server.requests) == 2 and a.active() == "")
    assert user_texts(server.requests[1])[-1] == "in flight"


def _pending(db: Database) -> list[dict[str, Any]]:
    """The pending signal rows, read from the test's PostgreSQL schema."""
    import psycopg

    assert db.database is not None
    base, _, query = db.database.partition("?")
    options = dict(p.split("=", 1) for p in query.split("&") if p)
    with psycopg.connect(base, options=unquote(options.get("options", ""))) as conn:
        return [{"id": r[0], "kind": r[1]} for r in conn.execute("SELECT id, kind FROM pending_signals")]


def test_a_subscriber_whose_server_lost_its_replica_channel_gets_an_error_not_a_silent_gap(
    replicas: Any, openai_server: Any, postgres: Database
) -> None:
    import hashlib

    import psycopg

    from treadle.v1 import signal_pb2

    a = replicas(openai_server([]))
    stream = a.stub.SubscribeToThread(signal_pb2.SubscribeToThreadRequest(resource_id="u1", thread_id="t1"),
                                      timeout=READY_TIMEOUT)  # on a silent gap: DEADLINE_EXCEEDED
    first = next(stream)
    assert first.HasField("active_run")
    assert postgres.database is not None
    base, _, query = postgres.database.partition("?")
    schema = unquote(dict(p.split("=", 1) for p in query.split("&"))["options"]).split("=", 1)[1]
    channel = "treadle_" + hashlib.sha256(schema.encode()).hexdigest()[:16]
    with psycopg.connect(base, autocommit=True) as conn:  # the server's LISTEN connection drops
        killed = conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = %s",
                              (f"LISTEN {channel}",)).fetchall()
    assert killed == [(True,)]
    with pytest.raises(grpc.RpcError) as failed:
        next(stream)  # whatever the other replicas sent meanwhile was not heard: an error, at once
    assert failed.value.code() == grpc.StatusCode.UNAVAILABLE
    assert "subscribe again" in str(failed.value.details())
    stream.cancel()
