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
from typing import Any
from urllib.parse import unquote

import grpc
import pytest

from tests.support import OpenAIServer, Turn
from tests.support.databases import Database
from tests.test_cli import READY_TIMEOUT
from tests.test_signals_replicas import replicas  # noqa: F401 - a fixture
from tests.test_signals_serve import THREAD, until
from treadle.v1 import signal_pb2
from treadle_client import AgentClient


@pytest.fixture(autouse=True)
def patient_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TREADLE_STARTUP_TIMEOUT", "60")


def _terminate_listeners(postgres: Database, newest_only: bool = False, via: Any = None) -> int:
    """Terminates the replicas' LISTEN connections (each reconnects a second later); with
    ``newest_only``, the last replica's only. ``via``: a connection to do it on."""
    import psycopg

    assert postgres.database is not None
    base, _, query = postgres.database.partition("?")
    schema = unquote(dict(p.split("=", 1) for p in query.split("&"))["options"]).split("=", 1)[1]
    channel = "treadle_" + hashlib.sha256(schema.encode()).hexdigest()[:16]
    sql = ("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid IN (SELECT pid FROM "
           "pg_stat_activity WHERE query = %s ORDER BY backend_start DESC LIMIT %s)")
    args = (f"LISTEN {channel}", 1 if newest_only else 100)
    if via is not None:
        return len(via.execute(sql, args).fetchall())
    with psycopg.connect(base, autocommit=True) as conn:
        return len(conn.execute(sql, args).fetchall())


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
        for _ in stream:  # (the end of the run before may still come first)
            pass  # b may have missed what a sent: an error, at once, never a silent gap
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

    async def resume_with_the_client() -> tuple[list[str], list[tuple[str, str]], str]:
        async with AgentClient(b.proc.target) as client:
            sub = await client.subscribe_to_thread("u1", "t1", position=position)
            texts = _texts(sub.replayed_messages)
            assert sub.position == position  # nothing handled yet
            ends: list[tuple[str, str]] = []
            async for chunk in sub:  # the replayed ends come first
                ends.append((chunk.run_id, str(chunk.WhichOneof("chunk"))))
                if len(ends) == 2:
                    break
            sub.unsubscribe()
            return texts, ends

    texts, ends_seen = asyncio.run(resume_with_the_client())
    assert texts == ["while you were away", "second answer", "and now", "third answer"]
    assert ends_seen == [(missed, "finish"), (later, "finish")]


def test_a_bad_position_is_refused_and_names_the_field(replicas: Any, openai_server: Any) -> None:
    b = replicas(openai_server([]))
    with pytest.raises(grpc.RpcError) as failed:
        next(b.stub.SubscribeToThread(_request("yesterday"), timeout=READY_TIMEOUT))
    assert failed.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "position" in str(failed.value.details())


def test_subscribing_while_the_replica_reconnects_never_misses_the_next_run(
    replicas: Any, openai_server: Any, postgres: Database
) -> None:
    import psycopg

    server: OpenAIServer = openai_server([Turn.say("the answer")])
    a, b = replicas(server), replicas(server)
    early = b.stub.SubscribeToThread(_request(), timeout=READY_TIMEOUT)
    position = next(early).position
    assert postgres.database is not None
    other = postgres.database.partition("?")[0].rsplit("/", 1)[0] + "/template1"
    with psycopg.connect(other, autocommit=True) as admin:
        try:  # b's new LISTEN connection is refused until the end: b cannot hear a meanwhile
            admin.execute("ALTER DATABASE postgres WITH ALLOW_CONNECTIONS false")
            assert _terminate_listeners(postgres, newest_only=True, via=admin) == 1
            with pytest.raises(grpc.RpcError):
                next(early)  # b noticed (its subscribers were told)
            stream = b.stub.SubscribeToThread(_request(position), timeout=READY_TIMEOUT)  # subscribing now ...
            run_id = _send(a, "go")  # ... as a run starts (and ends) on a
            until(lambda: not a.active())
        finally:
            admin.execute("ALTER DATABASE postgres WITH ALLOW_CONNECTIONS true")
    try:
        responses = list(_until_finish(stream, run_id))
    except grpc.RpcError as e:  # refused while b could not hear a: the client resumes
        assert e.code() == grpc.StatusCode.UNAVAILABLE, e
        responses = list(_until_finish(b.stub.SubscribeToThread(_request(position), timeout=READY_TIMEOUT), run_id))
    chunks = [c for r in responses for c in r.chunks]
    assert any(c.HasField("finish") and c.run_id == run_id for c in chunks), "a silent gap"
    assert "the answer" in " ".join(_texts(m for r in responses for m in r.messages))


def _until_finish(stream: Any, run_id: str) -> Any:
    for response in stream:
        yield response
        if any(c.HasField("finish") and c.run_id == run_id for c in response.chunks):
            stream.cancel()
            return
