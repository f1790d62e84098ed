"""Replicas on one PostgreSQL store know whether another one listens: a lone replica stops
sending its runs' chunks through the database once it is sure it is alone, and sends them again
as soon as another replica says hello, until that one says goodbye. The channel is the real
``LISTEN``/``NOTIFY`` one; what is asserted is what reaches the database and the other replica.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import psycopg
import pytest

from tests.support.databases import Database
from treadle.core.chunks import Chunk, TextDelta
from treadle.memory import database_url
from treadle.memory.notify import PostgresChannel
from treadle.signals.hub import ActiveRunChanged
from treadle.signals.relay import Relay, RemoteChunks, RunStarted
from treadle.wire.data import chunk_from_proto, chunk_to_proto
from treadle.v1 import chunk_pb2

KEY = ("u1", "t1")
CODEC = (lambda c: chunk_to_proto(c).SerializeToString(), lambda b: chunk_from_proto(chunk_pb2.Chunk.FromString(b)))
WAIT = 15.0


async def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        await asyncio.sleep(0.01)


class Replica:
    def __init__(self, url: str, name: str, **timing: float) -> None:
        self.channel = PostgresChannel(url)
        self.received: list[Any] = []
        self.relay = Relay(self.channel, name, CODEC, self.received.append, **timing)
        self.sent: list[str] = []
        publish = self.channel.publish

        async def recorded(payloads: list[str]) -> None:
            self.sent.extend(payloads)
            await publish(payloads)

        self.channel.publish = recorded  # type: ignore[method-assign]

    def chunks_sent(self) -> list[str]:
        return [p for p in self.sent if '"chunks"' in p or '"chunk"' in p]

    def chunks_received(self) -> list[str]:
        return [c.payload.text for m in self.received if isinstance(m, RemoteChunks) for c in m.chunks]


@pytest.fixture
async def replicas(postgres: Database) -> AsyncIterator[Callable[..., Any]]:
    url = database_url(postgres.data_dir, postgres.database)
    made: list[Replica] = []

    async def make(name: str, **timing: float) -> Replica:
        replica = Replica(url, name, **timing)
        await replica.relay.start()
        made.append(replica)
        return replica

    yield make
    for replica in made:
        await replica.relay.close()


def run_chunks(run: str, n: int = 3) -> list[Chunk]:
    return [Chunk.of(TextDelta("t", f"{run} {i}"), run_id=run) for i in range(n)]


async def test_a_lone_replica_stops_sending_its_chunks_once_it_knows_it_is_alone(replicas: Any) -> None:
    a = await replicas("a", reply_window=0.1)
    assert a.relay.watched  # unsure at first: it sends
    a.relay.chunks(KEY, run_chunks("r1"))
    await a.relay.flush()
    assert len(a.chunks_sent()) == 1

    await until(lambda: not a.relay.watched, "the lone replica knows it is alone")
    a.relay.event(KEY, ActiveRunChanged("r2", "echo"), None)
    a.relay.chunks(KEY, run_chunks("r2"))
    a.relay.event(KEY, Chunk.of(TextDelta("t", "single"), run_id="r2"), None)
    a.relay.forwarded(KEY, "elsewhere", "r9", "")
    await a.relay.flush()
    assert len(a.chunks_sent()) == 1, "no chunk of r2 went to the database"
    # The run's start still goes (a replica that says no hello watches the lease by it), and
    # so does a signal for another replica's run.
    assert any('"run":"r2"' in p for p in a.sent) and any('"signal"' in p for p in a.sent)


async def test_a_replica_that_says_no_hello_is_heard_by_what_it_sends(replicas: Any, postgres: Database) -> None:
    a = await replicas("a", reply_window=0.1)
    await until(lambda: not a.relay.watched, "a is alone")
    # A replica of a version that says no hello: its messages are all a knows of it.
    silent = Replica(database_url(postgres.data_dir, postgres.database), "old")
    await silent.channel.start(lambda payload: None)
    try:
        silent.relay.run_started(("u2", "t2"), "r0", "echo", None)
        await silent.relay.flush()
        await until(lambda: a.relay.peers == {"old"} and a.relay.watched, "a heard the old replica")
    finally:
        await silent.channel.close()


async def test_a_replica_that_starts_is_heard_and_both_send_each_other_their_chunks(replicas: Any) -> None:
    a = await replicas("a", reply_window=0.1)
    await until(lambda: not a.relay.watched, "a is alone")
    b = await replicas("b", reply_window=0.1)
    await until(lambda: a.relay.watched, "a heard b's hello")
    await until(lambda: b.relay.peers == {"a"}, "b heard a's answer")
    assert a.relay.peers == {"b"} and b.relay.watched

    a.relay.event(KEY, ActiveRunChanged("r1", "echo"), None)
    a.relay.chunks(KEY, run_chunks("r1"))
    await a.relay.flush()
    await until(lambda: len(b.chunks_received()) == 3, "b got a's chunks")
    assert b.chunks_received() == ["r1 0", "r1 1", "r1 2"]
    assert any(isinstance(m, RunStarted) and m.run_id == "r1" for m in b.received)

    b.relay.chunks(KEY, run_chunks("r2", 2))
    await b.relay.flush()
    await until(lambda: a.chunks_received() == ["r2 0", "r2 1"], "a got b's chunks")

    # Every message carries a thread key: a replica of a version that says no hello reads the
    # key of each message before it skips a kind it does not know.
    messages = [json.loads(line) for p in a.sent + b.sent
                for line in (p[1:].split("\n") if p[0] == "=" else p.partition(" ")[2].split("\n"))]
    assert {m["t"] for m in messages} >= {"hi", "run", "chunks"}
    assert all(len(m["k"]) == 2 for m in messages)


async def test_a_replica_that_says_goodbye_is_no_longer_sent_chunks(replicas: Any) -> None:
    a = await replicas("a", reply_window=0.1)
    b = await replicas("b", reply_window=0.1)
    await until(lambda: a.relay.peers == {"b"}, "a heard b")
    await b.relay.close()
    await until(lambda: not a.relay.watched, "a forgot b, which said goodbye")
    assert a.relay.peers == set()
    before = len(a.chunks_sent())
    a.relay.chunks(KEY, run_chunks("r1"))
    await a.relay.flush()
    assert len(a.chunks_sent()) == before


async def test_a_replica_whose_listening_connection_was_replaced_sends_until_it_asked_again(
    replicas: Any, postgres: Database,
) -> None:
    a = await replicas("a", reply_window=1.0, hello_every=0.1)
    await until(lambda: not a.relay.watched, "a is alone")
    pid = a.channel._listen.info.backend_pid
    with psycopg.connect(postgres.database.replace("postgresql+psycopg", "postgresql"), autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
    # Whoever started while it was not listening was not heard: it sends again, at once.
    await until(lambda: a.channel.connections == 2 and a.channel.listening, "a listens again")
    assert a.relay.watched
    before = len(a.chunks_sent())
    a.relay.chunks(KEY, run_chunks("r1"))
    await a.relay.flush()
    assert len(a.chunks_sent()) == before + 1
    # It asks the others to answer, hears its own question back, and is sure again.
    await until(lambda: not a.relay.watched, "a asked again and is alone")
