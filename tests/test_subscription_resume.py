"""Subscribers never miss a run silently: two real server processes on one PostgreSQL, the
subscriber's replica losing its connection to the other (its LISTEN connection terminated).

- A subscriber whose stream ended with UNAVAILABLE subscribes again with the position of the last
  response it handled, and gets what it missed: the messages stored meanwhile and the end of the
  run that started and finished meanwhile on the other replica.
- A subscriber that (re)subscribes while its replica is reconnecting, just before a run starts on
  the other replica, sees that run: live, or on resuming after an error; never nothing.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from typing import Any
from urllib.parse import unquote

import grpc
import pytest

from tests.support import OpenAIServer, Turn
from tests.support.databases import Database
from tests.test_cli import READY_TIMEOUT
from tests.test_signals_replicas import held_turn, replicas  # noqa: F401 - a fixture
from tests.test_signals_serve import THREAD, until
from treadle.v1 import signal_pb2
from treadle_client import AgentClient


@pytest.fixture(autouse=True)
def patient_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TREADLE_STARTUP_TIMEOUT", "60")


def _terminate_listeners(postgres: Database) -> int:
    """Terminates the replicas' LISTEN connections (each reconnects a second later)."""
    import psycopg

    assert postgres.database is not None
    base, _, query = postgres.database.partition("?")
    schema = unquote(dict(p.split("=", 1) for p in query.split("&"))["options"]).split("=", 1)[1]
    channel = "treadle_" + hashlib.sha256(schema.encode()).hexdigest()[:16]
    with psycopg.connect(base, autocommit=True) as conn:
        return len(conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = %s",
                                (f"LISTEN {channel}",)).fetchall())


def _request(position: str = "") -> signal_pb2.SubscribeToThreadRequest:
    return signal_pb2.SubscribeToThreadRequest(resource_id=THREAD["resourceId"], thread_id=THREAD["threadId"],
                                               position=position)


def _send(replica: Any, text: str) -> str:
    sent = replica.call("SendMessage", {"agentId": "echo", **THREAD, "message": {"contents": text}})
    return str(sent["accepted"]["runId"])


def _texts(messages: Any) -> list[str]:
    return [part.text.text for m in messages for part in m.content.parts if part.HasField("text")]


def test_a_subscriber_resumes_from_its_position_and_gets_the_run_it_missed(
    replicas: Any, openai_server: Any, postgres: Database
) -> None:
    server: OpenAIServer = openai_server([Turn.say("first answer"), Turn.say("second answer"),
                                          Turn.say("third answer")])
    a, b = replicas(server), replicas(server)
    first_run = _send(a, "before")  # a run the subscriber never asked about: not replayed
    until(lambda: not a.active())
    stream = b.stub.SubscribeToThread(_request(), timeout=READY_TIMEOUT)
    first = next(stream)
    assert first.HasField("active_run") and first.position
    position = first.position

    assert _terminate_listeners(postgres) == 2
    with pytest.raises(grpc.RpcError) as failed:
        next(stream)  # b may have missed what a sent: an error, at once, never a silent gap
    assert failed.value.code() == grpc.StatusCode.UNAVAILABLE
    assert "position" in str(failed.value.details())

    missed = _send(a, "while you were away")  # a whole run while b cannot hear a
    until(lambda: not a.active())

    resumed = b.stub.SubscribeToThread(_request(position), timeout=READY_TIMEOUT)
    replayed: list[signal_pb2.SubscribeToThreadResponse] = []
    for response in resumed:
        replayed.append(response)
        if response.HasField("active_run"):
            break
    messages = [m for r in replayed for m in r.messages]
    assert _texts(messages) == ["while you were away", "second answer"]
    ends = [c for r in replayed for c in r.chunks]
    assert [(c.run_id, c.WhichOneof("chunk")) for c in ends] == [(missed, "finish")]
    assert first_run != missed
    state = replayed[-1]
    assert state.active_run.run_id == "" and state.position and state.position != position

    # the resumed stream goes on live: a's next run reaches it (b hears a again)
    later = _send(a, "and now")
    seen: list[Any] = []
    for response in resumed:  # until the run's end (its position moves past the run)
        seen.extend(response.chunks)
        ended = response.HasField("active_run") and not response.active_run.run_id
        if ended and any(c.HasField("finish") and c.run_id == later for c in seen):
            break
    assert "third answer" in "".join(c.text_delta.text for c in seen if c.HasField("text_delta"))
    resumed.cancel()

    # resuming from the last position replays nothing more (nothing was missed)
    again = b.stub.SubscribeToThread(_request(response.position), timeout=READY_TIMEOUT)
    response = next(again)
    assert response.HasField("active_run") and not response.messages and not response.chunks
    again.cancel()


def test_a_bad_position_is_refused_and_names_the_field(replicas: Any, openai_server: Any) -> None:
    b = replicas(openai_server([]))
    with pytest.raises(grpc.RpcError) as failed:
        next(b.stub.SubscribeToThread(_request("yesterday"), timeout=READY_TIMEOUT))
    assert failed.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "position" in str(failed.value.details())


def test_subscribing_while_the_replica_reconnects_never_misses_the_next_run(
    replicas: Any, openai_server: Any, postgres: Database
) -> None:
    entered, release = threading.Event(), threading.Event()
    server: OpenAIServer = openai_server([held_turn(entered, release, Turn.say("the answer"))])
    a, b = replicas(server), replicas(server)

    async def watch(started: threading.Event, run_ids: list[str]) -> tuple[str, int]:
        """A client that resubscribes with its position on every error, until it saw the run."""
        async with AgentClient(b.proc.target) as client:
            position, errors, text = "", 0, ""
            assert _terminate_listeners(postgres) == 2  # b is reconnecting as we subscribe
            while True:
                try:
                    sub = await client.subscribe_to_thread("u1", "t1", position=position)
                    started.set()  # the run starts on a right after this subscription
                    text += "".join(m.content.parts[0].text.text for m in sub.replayed_messages
                                    if m.role == 2 and m.content.parts and m.content.parts[0].HasField("text"))
                    async for chunk in sub:
                        if chunk.HasField("text_delta"):
                            text += chunk.text_delta.text
                        if chunk.HasField("finish") and run_ids and chunk.run_id == run_ids[0]:
                            return text, errors
                        position = sub.position
                except grpc.aio.AioRpcError as e:
                    assert e.code() == grpc.StatusCode.UNAVAILABLE, e
                    errors += 1
                    if sub_position := locals().get("sub"):
                        position = sub_position.position or position

    started, run_ids = threading.Event(), []
    result: list[tuple[str, int]] = []
    watcher = threading.Thread(target=lambda: result.append(asyncio.run(watch(started, run_ids))), daemon=True)
    watcher.start()
    assert started.wait(READY_TIMEOUT)
    run_ids.append(_send(a, "go"))
    assert entered.wait(READY_TIMEOUT)
    release.set()
    watcher.join(READY_TIMEOUT)
    assert result, "the subscriber never saw the run end: a silent gap"
    text, errors = result[0]
    assert "the answer" in text
