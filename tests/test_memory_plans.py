"""PostgreSQL reads a thread's messages through the index by thread and position, whatever the
shape of the table: every statement the server runs that reads ``messages`` for a thread, each
executed for real and, just before, under ``EXPLAIN ANALYZE`` (rolled back), visits the thread's
own rows only, never the other threads' newer ones.

The shape that goes wrong otherwise: one thread holds a large share of the table and none of its
newest rows. Asked for ``thread_id = x ORDER BY seq``, the planner may then walk the primary key
from the newest row, filtering by thread, through every message of every other thread stored
since (on this table it did so for a subscription's replay).

On both engines, a page late in a long thread and a subscription resuming near its end start
reading at their cursor: each costs what the thread's first page costs.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import psycopg
import pytest
from opentelemetry.trace import NoOpTracer
from sqlalchemy import event
from sqlalchemy.engine import Engine, make_url

from tests.support.claims import open_claimed
from tests.support.databases import Database
from treadle.agents import Agent, CallOptions, MemoryOptions, RunRequest
from treadle.core.messages import Message, SystemMessage, utcnow
from treadle.loop import AgentLoop
from treadle.memory import PageRequest, SqlStore, open_store
from treadle.memory.codec import content_to_json
from treadle.memory.engine import conninfo
from treadle.registry import Registry
from treadle.scoring.store import stored_run
from treadle.signals.resume import Position, position_now, replay
from treadle.testing import ScriptedModel, ScriptedModels, text_response

OWN, OTHERS, OTHER_THREADS = 3000, 6000, 6
"""The thread's messages, then the other threads' (stored after them, spread over several)."""
VISITED_AT_MOST = OWN + 100
"""Rows of ``messages`` a statement may visit: the thread's, and the runs' own."""


@pytest.fixture
async def store(postgres: Database) -> AsyncIterator[SqlStore]:
    s = await open_store(postgres.url)
    yield s
    await s.close()


@pytest.fixture
def explained(postgres: Database, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, int]]]:
    """``(statement, rows of messages it visited)`` for each statement that reads ``messages``."""
    seen: list[tuple[str, int]] = []
    with psycopg.connect(conninfo(postgres.url), autocommit=True) as side:
        _explain_each(monkeypatch, side, seen)
        yield seen


def _explain_each(monkeypatch: pytest.MonkeyPatch, side: psycopg.Connection, seen: list[tuple[str, int]]) -> None:
    """From now on, each statement that reads ``messages`` is run first under ``EXPLAIN
    ANALYZE`` on ``side``, in a transaction rolled back (it may write), and ``(statement, rows
    of messages it visited)`` appended to ``seen``."""
    execute = psycopg.AsyncCursor.execute

    async def explaining(self: Any, query: Any, params: Any = None, **kwargs: Any) -> Any:
        if isinstance(query, str) and "FROM messages" in query:
            with side.transaction(force_rollback=True):
                plan = side.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + query, params).fetchone()[0]
            seen.append((query, _visited(plan[0]["Plan"])))
        return await execute(self, query, params, **kwargs)

    monkeypatch.setattr(psycopg.AsyncCursor, "execute", explaining)


def _visited(node: dict[str, Any]) -> int:
    """Rows of ``messages`` the plan's scans read: those they returned and those they filtered out."""
    own = 0
    if node.get("Relation Name") == "messages":
        own = (node["Actual Rows"] + node.get("Rows Removed by Filter", 0)) * node["Actual Loops"]
    return own + sum(_visited(child) for child in node.get("Plans", ()))


async def test_a_threads_messages_are_read_by_its_index_when_it_holds_a_large_share_of_the_table(
    store: SqlStore, postgres: Database, explained: list[tuple[str, int]],
) -> None:
    others = [f"busy-{i}" for i in range(OTHER_THREADS)]
    for thread in ("big", *others):
        await store.open_thread("u1", thread)
    content = content_to_json(Message.user("x").content)
    with psycopg.connect(conninfo(postgres.url), autocommit=True) as conn:
        for thread, n in (("big", OWN), *((other, OTHERS // OTHER_THREADS) for other in others)):
            conn.execute("INSERT INTO messages (thread_id, id, resource_id, role, type, created_at, content) "
                         "SELECT %s, %s || g, 'u1', 'user', '', g, %s FROM generate_series(1, %s) AS g",
                         (thread, f"{thread}-", content, n))
        conn.execute("ANALYZE messages")
    before = await position_now(store, ("u1", "big"))

    history = await store.load_history("big", 10)
    first = await store.list_messages("big", PageRequest(5, 1 << 20))
    second = await store.list_messages("big", PageRequest(5, 1 << 20, first.next_cursor))
    model = ScriptedModel()
    model.add(text_response(["an ", "answer"]), text_response(["another"]))
    loop = AgentLoop(Registry(), ScriptedModels(model), NoOpTracer(), memory=store)
    agent = Agent(id="a", model="scripted/a", instructions=[SystemMessage("be brief")])
    on_thread = CallOptions(memory=MemoryOptions("u1", "big"))
    await loop.generate(agent, RunRequest([Message.user("a question")], on_thread))
    since = await replay(store, ("u1", "big"), before)
    result = await loop.generate(agent, RunRequest([Message.user("and then?")], on_thread))
    scored = await stored_run(store.db, result.run_id, 10)
    # As the server opens a run on a thread (the lease taken with it): one statement here.
    opened = await open_claimed(store, "big", "run-claimed", utcnow(), [Message.user("one more")])

    # What each read returned: the thread's own messages, in order.
    assert [m.id for m in history] == [f"big-{i}" for i in range(OWN - 9, OWN + 1)]
    assert [m.id for m in first.items + second.items] == [f"big-{i}" for i in range(1, 11)]
    assert [(m.role, m.text) for m in since.messages] == [("user", "a question"), ("assistant", "an answer")]
    assert scored is not None and [m.text for m in scored[1]] == ["and then?", "another"]
    assert [m.text for m in scored[2]][-3:] == ["x", "a question", "an answer"]
    assert [m.text for m in opened] == ["x"] * 6 + ["a question", "an answer", "and then?", "another"]

    # How: none of those statements visited another thread's messages.
    assert len(explained) >= 7, [text for text, _ in explained]
    too_many = [(visited, " ".join(text.split())[:160]) for text, visited in explained if visited > VISITED_AT_MOST]
    assert not too_many, too_many


LONG = 3000
"""Messages on the thread whose late pages are read."""


@pytest.fixture
def costed(database: Database, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], list[int]]]:
    """The statements that read ``messages`` from now on are recorded; the function returns
    what each cost, run alone on a connection of its own, and forgets them. On PostgreSQL the
    rows of ``messages`` it visited (``EXPLAIN ANALYZE``), on SQLite the hundreds of
    virtual-machine instructions it took (``sqlite3``'s progress handler)."""
    if database.engine == "postgresql":
        seen: list[tuple[str, int]] = []
        with psycopg.connect(conninfo(database.url), autocommit=True) as side:
            _explain_each(monkeypatch, side, seen)

            def visited() -> list[int]:
                out = [rows for _, rows in seen]
                seen.clear()
                return out

            yield visited
        return

    recorded: list[str] = []

    def trace(dbapi_connection: Any, record: Any) -> None:
        dbapi_connection.set_trace_callback(lambda sql: recorded.append(sql) if "FROM messages" in sql else None)

    def steps(sql: str) -> int:
        count = [0]

        def step() -> int:
            count[0] += 1
            return 0

        side.set_progress_handler(step, 100)
        side.execute(sql).fetchall()
        side.set_progress_handler(None, 0)
        return count[0]

    def instructions() -> list[int]:
        out = [steps(sql) for sql in recorded]  # the trace gives each with its parameters in place
        recorded.clear()
        return out

    event.listen(Engine, "connect", trace)
    side = sqlite3.connect(make_url(database.url).database)
    try:
        yield instructions
    finally:
        event.remove(Engine, "connect", trace)
        side.close()


async def test_a_late_page_and_a_late_replay_cost_what_the_first_page_costs(
    database: Database, costed: Callable[[], list[int]],
) -> None:
    """Paging to the end of a long thread (``ListMessages`` with a cursor), and a subscription
    resuming near its end, start reading at the cursor: each costs what the thread's first page
    costs, not a read of every message before the cursor."""
    store = await open_store(database.url)
    try:
        await store.open_thread("u1", "long")
        await store.save_messages("long", "u1", [Message.user(f"m{i}") for i in range(LONG)])
        newest = (await position_now(store, ("u1", "long"))).seq
        costed()

        first = await store.list_messages("long", PageRequest(10, 1 << 20))
        [first_cost] = costed()
        late = await store.list_messages("long", PageRequest(10, 1 << 20, (newest - 10,)))
        [late_cost] = costed()
        resumed = await replay(store, ("u1", "long"), Position(newest - 10, 0))
        replay_costs = costed()
    finally:
        await store.close()

    assert [m.text for m in first.items] == [f"m{i}" for i in range(10)]
    assert [m.text for m in late.items] == [f"m{i}" for i in range(LONG - 10, LONG)]
    assert [m.text for m in resumed.messages] == [f"m{i}" for i in range(LONG - 10, LONG)]
    assert late_cost <= 2 * first_cost + 2, (late_cost, first_cost)
    assert max(replay_costs) <= 2 * first_cost + 2, (replay_costs, first_cost)
