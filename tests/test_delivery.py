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
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import OpenAIServer, Turn
from tests.support.databases import Database
from tests.test_cli import READY_TIMEOUT, ServeProcess, clean_env
from tests.test_memory_serve import ECHO, curl, kill, ok, serve_on  # noqa: F401 - serve_on is a fixture
from tests.test_signals_serve import SHORT_LEASE, THREAD, idle, until, user_texts
from treadle.memory import open_database
from treadle.memory.migrate import upgrade
from treadle.memory.signal_sql import SqlSignalStore
from treadle.signals import InMemorySignalStore, NotificationRecord, SignalStore

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
