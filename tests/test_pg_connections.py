"""A run's single statements on PostgreSQL run on psycopg's connections directly
(``Database.one``): what they return, and what a lost connection, a failed statement and a
cancelled one leave behind, against a real PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest
from sqlalchemy.exc import DBAPIError

from tests.support.databases import Database
from treadle.memory import engine
from treadle.memory.engine import PostgresDatabase, Prepared, open_database

pytestmark = pytest.mark.asyncio

_SELECT = Prepared("SELECT %(a)s::int AS a, %(b)s::text AS b UNION ALL SELECT 2, 'two' ORDER BY a")
_BACKEND = Prepared("SELECT pg_backend_pid() AS pid")


@pytest.fixture
async def db(postgres: Database) -> AsyncIterator[PostgresDatabase]:
    made = open_database(postgres.url)
    made.test_url = postgres.url  # type: ignore[attr-defined]
    assert isinstance(made, PostgresDatabase)
    await made.one(Prepared("CREATE TABLE notes (id int PRIMARY KEY, body text)"), {}, write=True)
    yield made
    await made.dispose()


@pytest.fixture
def attempts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per attempt of a statement (``retry.py`` runs a failed one again)."""
    made: list[int] = []
    real = engine.retrying

    async def counting(attempt: Any, **kwargs: Any) -> Any:
        async def once() -> Any:
            made.append(1)
            return await attempt()
        return await real(once, **kwargs)

    monkeypatch.setattr(engine, "retrying", counting)
    return made


async def _terminate(db: PostgresDatabase, pids: list[int]) -> None:
    """The server closes these backends, as a restart or an idle timeout would (asked on a
    connection of its own: the pool's may be among them)."""
    async with await psycopg.AsyncConnection.connect(engine.conninfo(db.test_url), autocommit=True) as conn:  # type: ignore[attr-defined]
        cursor = await conn.execute("SELECT count(pg_terminate_backend(p)) FROM unnest(%s::int[]) AS p", [pids])
        assert (await cursor.fetchone()) == (len(pids),)


async def test_rows_come_back_as_named_tuples_with_the_row_count(db: PostgresDatabase) -> None:
    result = await db.one(_SELECT, {"a": 1, "b": "one"})
    assert [(r.a, r.b) for r in result.all()] == [(1, "one"), (2, "two")]
    assert result.rowcount == 2
    written = await db.one(Prepared("INSERT INTO notes VALUES (%(id)s, %(body)s)"), {"id": 1, "body": "x"}, write=True)
    assert written.rowcount == 1 and written.all() == []
    assert (await db.one(Prepared("SELECT body FROM notes WHERE id = %(id)s"), {"id": 1})).scalar() == "x"


async def test_connections_lost_while_idle_are_replaced_and_the_statement_runs_once(
    db: PostgresDatabase, attempts: list[int]
) -> None:
    # Two connections in the pool: both are taken at once, then both go back idle.
    async def held() -> int:
        result = await db.one(Prepared("SELECT pg_backend_pid() AS pid, pg_sleep(0.05)"), {})
        return int(result.all()[0].pid)

    pids = sorted(set(await asyncio.gather(held(), held())))
    assert len(pids) == 2
    await _terminate(db, pids)
    # Taken again within PING_AFTER_IDLE (no ping): the first statement meets a closed
    # connection, is retried on a new one (not on the other closed one), and writes once.
    attempts.clear()
    await db.one(Prepared("INSERT INTO notes VALUES (%(id)s, %(body)s)"), {"id": 2, "body": "after"}, write=True)
    assert len(attempts) == 2
    assert (await db.one(Prepared("SELECT count(*) FROM notes WHERE id = 2"), {})).scalar() == 1
    assert int((await db.one(_BACKEND, {})).scalar()) not in pids


async def test_a_connection_idle_past_the_ping_interval_is_checked_first(
    db: PostgresDatabase, attempts: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = int((await db.one(_BACKEND, {})).scalar())
    await _terminate(db, [first])  # on another connection: the first one is idle, closed by the server
    monkeypatch.setattr(engine, "PING_AFTER_IDLE", 0.0)  # every idle connection is pinged when taken
    attempts.clear()
    assert int((await db.one(_BACKEND, {})).scalar()) != first
    assert len(attempts) == 1  # the ping found it closed: no statement failed, nothing was retried


async def test_a_failed_statement_is_not_retried_and_its_connection_is_kept(db: PostgresDatabase) -> None:
    insert = Prepared("INSERT INTO notes VALUES (%(id)s, %(body)s)")
    await db.one(insert, {"id": 3, "body": "first"}, write=True)
    pid = int((await db.one(_BACKEND, {})).scalar())
    with pytest.raises(DBAPIError) as raised:
        await db.one(insert, {"id": 3, "body": "again"}, write=True)
    assert isinstance(raised.value.orig, psycopg.errors.UniqueViolation)
    assert not raised.value.connection_invalidated
    assert int((await db.one(_BACKEND, {})).scalar()) == pid  # still usable, and reused
    assert (await db.one(Prepared("SELECT body FROM notes WHERE id = 3"), {})).scalar() == "first"


async def test_a_statement_cancelled_midway_is_cancelled_on_the_server_too(db: PostgresDatabase) -> None:
    started = asyncio.Event()

    async def slow() -> None:
        started.set()
        await db.one(Prepared("SELECT pg_sleep(30)"), {})

    task = asyncio.create_task(slow())
    await started.wait()
    # Until the statement is on the server: its backend shows it as active.
    waiting = Prepared("SELECT pid FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)' AND state = 'active'")
    for _ in range(500):
        rows = (await db.one(waiting, {})).all()
        if rows:
            break
        await asyncio.sleep(0.01)
    assert len(rows) == 1
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # A run stopped while it waits for the database leaves no statement behind on the server
    # (psycopg cancels it there), and the connection is fit for the next one, whichever it gets.
    assert (await db.one(waiting, {})).all() == []
    assert int((await db.one(_BACKEND, {})).scalar()) > 0
