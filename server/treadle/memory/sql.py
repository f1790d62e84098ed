"""``SqlStore``: the one implementation of ``MemoryStore``, for SQLite and PostgreSQL alike.

All SQL of the store is here (SQLAlchemy Core), as functions of a ``Connection`` that a
``Database`` runs as one transaction. The only engine difference in them is the upsert construct
(both dialects spell it ``ON CONFLICT``).
"""

from __future__ import annotations

import json
from collections import namedtuple
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    Connection, Table, and_, bindparam, column, delete, func, or_, select, table, tuple_, update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DBAPIError

from ..core.chunks import Usage
from ..core.errors import AlreadyExistsError, NotFoundError, PermissionDeniedError
from ..core.messages import Message, utcnow
from . import schema as t
from .base import Page, PageRequest, RunRecord, RunStatus, StoredAgent, Thread
from .codec import content_from_json, content_to_json
from .engine import Database, Prepared, is_postgres
from .fence import LeaseLostError, check_fence, current_claim, current_fence, fence_params, fenced_where, take_claim


def micros(when: datetime) -> int:
    return int(when.timestamp() * 1_000_000)


def from_micros(value: int) -> datetime:
    return datetime.fromtimestamp(value / 1_000_000, UTC)


def _now() -> int:
    return micros(utcnow())


def _insert(conn: Connection, table: Table) -> Any:
    return (postgresql.insert if is_postgres(conn) else sqlite.insert)(table)


# The statements of every run, built once (with bound parameters) so that a run pays only for
# executing them: building and compiling a statement costs more than SQLite running it.
_THREAD_BY_ID = select(t.threads).where(t.threads.c.id == bindparam("thread_id"))
SEQ_MAX = 2**63 - 1
"""No message's ``seq`` is greater (a 64-bit key)."""


def in_thread(dialect: str, thread_id: Any, after: Any = -1, through: Any = SEQ_MAX) -> Any:
    """A thread's messages with ``after < seq <= through``, read through the index by thread and
    position, ``(thread_id, seq)``; order them with ``by_position``.

    On PostgreSQL, bounds on the pair. Asked for ``thread_id = x ORDER BY seq``, PostgreSQL may
    walk the primary key (``seq``) in order and filter by thread. It does when the thread holds a
    large share of the table, and then reads every newer message of every other thread before it
    finds the thread's own: a hundred thousand rows for ten, on a thread with half of the table's
    messages and none of its newest. With bounds on the pair, only that index gives the order,
    and its scan starts at ``(thread_id, after)``.

    On SQLite, ``thread_id = x`` and bounds on ``seq``: its planner always takes that index for
    them, and it starts a scan at ``(thread_id, after)`` only when asked so. Bounds on the pair
    would start at the thread's first message."""
    m = t.messages.c
    if dialect == "postgresql":
        pair = tuple_(m.thread_id, m.seq)
        return and_(pair > tuple_(thread_id, after), pair <= tuple_(thread_id, through))
    return and_(m.thread_id == thread_id, m.seq > after, m.seq <= through)


def by_position(newest_first: bool = False) -> tuple[Any, Any]:
    """The order of ``in_thread``'s messages: by thread (one) and position."""
    m = t.messages.c
    return (m.thread_id.desc(), m.seq.desc()) if newest_first else (m.thread_id, m.seq)


_HISTORY = {d: Prepared(select(t.messages).where(in_thread(d, bindparam("thread_id")))
                        .order_by(*by_position(newest_first=True)).limit(bindparam("limit")))
            for d in ("postgresql", "sqlite")}
_INSERT_RUN = {d: Prepared(insert(t.runs).values(
    id=bindparam("b_id"), agent_id=bindparam("b_agent_id"), thread_id=bindparam("b_thread_id"),
    resource_id=bindparam("b_resource_id"), status="running", finish_reason="",
    usage=bindparam("b_usage"), started_at=bindparam("b_started_at"),
).on_conflict_do_nothing(index_elements=["id"]).returning(t.runs.c.id)) for d, insert in (
    ("postgresql", postgresql.insert), ("sqlite", sqlite.insert))}
"""A run recorded, or no row returned when its id is taken (one statement)."""
_THREAD_PREPARED = Prepared(_THREAD_BY_ID)
_TOUCH_THREAD = (update(t.threads).where(t.threads.c.id == bindparam("thread_id"))
                 .values(updated_at=bindparam("now")))
_TOUCH_PREPARED = Prepared(_TOUCH_THREAD)
_END_RUN_STMT = update(t.runs).where(t.runs.c.id == bindparam("run_id")).values(
    status=bindparam("status"), finish_reason=bindparam("finish_reason"), usage=bindparam("usage"),
    ended_at=bindparam("ended_at"), detail=bindparam("detail"),
)
_END_RUN = Prepared(_END_RUN_STMT)
_END_RUN_FENCED = {d: Prepared(_END_RUN_STMT.where(fenced_where(d))) for d in ("postgresql", "sqlite")}
"""The run's end when it writes nothing else: the fence checked in the same statement."""
_PENDING = table("pending_signals", column("id"), column("thread_id"))
_CONSUME = delete(_PENDING).where(_PENDING.c.thread_id == bindparam("thread_id"),
                                  _PENDING.c.id.in_(bindparam("ids", expanding=True)))
"""A signal waiting in the durable inbox is consumed by storing its message: one transaction."""
_upserts: dict[str, Any] = {}


def _saving(guard: str, skip: str = "") -> str:
    """The ``WITH`` entries of a save on PostgreSQL, each only when ``guard`` has a row: the
    messages (``_rows_params``) upserted in order (but those whose ids ``skip`` selects), the
    thread touched."""
    skipped = f" AND m.id NOT IN ({skip})" if skip else ""
    return f"""saved AS (
    INSERT INTO messages (thread_id, id, resource_id, role, type, created_at, content)
    SELECT %(thread_id)s, m.id, %(resource_id)s, m.role, m.type, m.created_at, m.content
    FROM unnest(CAST(%(ids)s AS text[]), CAST(%(roles)s AS text[]), CAST(%(types)s AS text[]),
                CAST(%(created)s AS bigint[]), CAST(%(contents)s AS text[])) WITH ORDINALITY
         AS m(id, role, type, created_at, content, n)
    WHERE EXISTS (SELECT 1 FROM {guard}){skipped}
    ORDER BY m.n
    ON CONFLICT (thread_id, id) DO UPDATE
    SET content = excluded.content, role = excluded.role, type = excluded.type
), touched AS (
    UPDATE threads SET updated_at = %(touched_at)s WHERE id = %(thread_id)s AND EXISTS (SELECT 1 FROM {guard})
)"""


_FENCE_PG = """fence AS (
    SELECT 1 FROM thread_leases
    WHERE resource_id = %(f_resource_id)s AND thread_id = %(f_thread_id)s AND owner = %(f_owner)s
      AND run_id = %(f_run_id)s AND epoch = %(f_epoch)s
    FOR SHARE
)"""
_SAVE_FENCED_PG = Prepared(f"""
WITH {_FENCE_PG}, {_saving("fence")}
SELECT count(*) FROM fence
""")
"""A run's save on PostgreSQL as one statement (no ``BEGIN``/``COMMIT``, one round trip): the
fence checked and share-locked, the messages upserted in order, the thread touched, each only
while the run holds its lease; the row tells whether it did."""
_SAVE_END_FENCED_PG = Prepared(f"""
WITH {_FENCE_PG}, {_saving("fence")}, ended AS (
    UPDATE runs SET status = %(status)s, finish_reason = %(finish_reason)s, usage = %(usage)s,
                    ended_at = %(ended_at)s, detail = %(detail)s
    WHERE id = %(run_id)s AND EXISTS (SELECT 1 FROM fence)
)
SELECT count(*) FROM fence
""")
"""A run's last save and its end on PostgreSQL in one statement, as ``_SAVE_FENCED_PG``."""


def _has_signal(rows: list[dict[str, Any]]) -> bool:
    """A signal's message is stored with its pending row consumed: a transaction of its own."""
    return any(r["role"] == "signal" for r in rows)


def _rows_params(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """``_message_rows`` as the arrays of ``_saving``."""
    return {"ids": [r["id"] for r in rows], "roles": [r["role"] for r in rows],
            "types": [r["type"] for r in rows], "created": [r["created_at"] for r in rows],
            "contents": [r["content"] for r in rows]}


def _message_upsert(conn: Connection) -> Any:
    """The messages upsert, built once per dialect: building ``excluded`` costs more than
    running the statement, and a statement built once is compiled once."""
    stmt = _upserts.get(conn.dialect.name)
    if stmt is None:
        insert = _insert(conn, t.messages)
        stmt = _upserts[conn.dialect.name] = insert.on_conflict_do_update(
            index_elements=["thread_id", "id"],
            set_={"content": insert.excluded.content, "role": insert.excluded.role,
                  "type": insert.excluded.type},
        )
    return stmt


_MESSAGE_COLUMNS = ["thread_id", "id", "resource_id", "role", "type", "created_at", "content"]
_upserts_prepared: dict[str, Prepared] = {}


def _message_upsert_prepared(conn: Connection) -> Prepared:
    """The messages upsert on the driver's cursor (``Prepared``): a step's save runs it for
    every new message of the step, and SQLAlchemy's execution cost more than SQLite's."""
    prepared = _upserts_prepared.get(conn.dialect.name)
    if prepared is None:
        prepared = _upserts_prepared[conn.dialect.name] = Prepared(_message_upsert(conn), _MESSAGE_COLUMNS)
    return prepared


class SqlStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    @property
    def engine(self) -> Database:
        """The engine adapter, for the stores of other features that share this database."""
        return self.db

    async def close(self) -> None:
        await self.db.dispose()

    # --- what a run does ----------------------------------------------------------------------

    async def open_thread(
        self, resource_id: str, thread_id: str, *, title: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Thread:
        return await self.db.write(_open_thread, resource_id, thread_id, title, metadata)

    async def begin_run(
        self, run_id: str, agent_id: str, resource_id: str, thread_id: str, *, title: str | None,
        metadata: dict[str, Any] | None, history: int, input: Sequence[Message] = (),
    ) -> list[Message]:
        """One transaction: open the thread (refused for another resource, writing nothing),
        record the run, read the newest ``history`` messages, then save those of ``input`` that
        are not among them (the message list keeps a resent message where the history has it).
        Like every write of a run on a thread, conditional on the run's lease
        (``fence.current_fence``); or, with a ``fence.current_claim``, taking the lease first in
        the same transaction (then the lease taken is the fence of the run's later writes)."""
        fence, claim = current_fence.get(), current_claim.get()
        rows = _message_rows(thread_id, resource_id, input)
        if (claim is not None and claim.lease is not None and claim.now is not None and history > 0
                and title is None and metadata is None and self.db.dialect == "postgresql"
                and not _has_signal(rows)):
            params = _begin_claimed_params(claim, run_id, agent_id, resource_id, thread_id, history)
            if rows:
                params.update(_rows_params(rows), touched_at=params["started_at"])
            try:
                found = (await self.db.one(_BEGIN_CLAIMED_SAVING_PG if rows else _BEGIN_CLAIMED_PG,
                                           params, write=True)).all()
            except DBAPIError as e:
                if getattr(e.orig, "sqlstate", None) == "23505":  # unique violation: the run id is taken
                    raise AlreadyExistsError(
                        f"run id {run_id!r} is taken: choose another, or leave run_id empty") from None
                raise
            epoch, threads = found[0][0], found[0][1]
            if threads:
                if epoch is None:  # held: by whom (the statement that would have taken it wrote nothing)
                    from .fence import LeaseHeldError
                    from .signal_sql import held_lease
                    raise LeaseHeldError(await self.db.read(held_lease, (resource_id, thread_id)))
                claim.taken = type(claim.lease)(claim.lease.key, claim.lease.owner, run_id, agent_id,
                                                claim.lease.expires_at, int(epoch))
                current_claim.set(None)
                current_fence.set(claim.taken)
                return [_message(_HistoryRow(*r[2:])) for r in reversed(found) if r[2] is not None]
            # A new thread, or another resource's: the transaction below says which.

        def work(conn: Connection) -> tuple[list[Message], Any]:
            taken = None
            if claim is not None:
                taken = take_claim(conn, claim)  # or LeaseHeldError, writing nothing
            else:
                check_fence(conn, fence)
            _open_thread(conn, resource_id, thread_id, title, metadata)
            _insert_run(conn, run_id, agent_id, thread_id, resource_id)
            messages = _history(conn, thread_id, history)
            known = {m.id for m in messages}
            if fresh := [r for r in rows if r["id"] not in known]:
                _save(conn, thread_id, fresh, [])
            return messages, taken

        messages, taken = await self.db.write(work)
        if claim is not None:
            claim.taken = taken
            current_claim.set(None)  # taken: no later write of the run (or its sub-runs) takes it
            current_fence.set(taken)  # in the caller's context, where the run's task is made
        return messages

    async def load_history(self, thread_id: str, limit: int) -> list[Message]:
        return await self.db.read(_history, thread_id, limit)

    async def save_messages(
        self, thread_id: str, resource_id: str, messages: Sequence[Message],
        delete_ids: Sequence[str] = (),
    ) -> None:
        if not messages and not delete_ids:
            return
        rows = _message_rows(thread_id, resource_id, messages)  # now, while the run waits
        fence = current_fence.get()
        if fence is None:
            await self.db.write(_save, thread_id, rows, list(delete_ids))
            return

        if self.db.dialect == "postgresql" and not delete_ids and not _has_signal(rows):
            params = {**fence_params(fence, "f_"), "thread_id": thread_id, "resource_id": resource_id,
                      "touched_at": _now(), **_rows_params(rows)}

            if not (await self.db.one(_SAVE_FENCED_PG, params, write=True)).scalar():
                raise LeaseLostError(fence)
            return

        def work(conn: Connection) -> None:
            check_fence(conn, fence)
            _save(conn, thread_id, rows, list(delete_ids))

        await self.db.write(work)

    async def start_run(self, run_id: str, agent_id: str, thread_id: str, resource_id: str) -> None:
        await self.db.write(_insert_run, run_id, agent_id, thread_id, resource_id)

    async def end_run(
        self, run_id: str, status: RunStatus, finish_reason: str, usage: Usage, *,
        thread_id: str = "", resource_id: str = "", messages: Sequence[Message] = (),
        delete_ids: Sequence[str] = (), detail: dict[str, Any] | None = None,
    ) -> None:
        """Record how the run ended, with a last save of messages in the same transaction."""
        rows = _message_rows(thread_id, resource_id, messages)
        values = {"run_id": run_id, "status": status, "finish_reason": finish_reason,
                  "usage": _usage_json(usage), "ended_at": _now(),
                  "detail": json.dumps(detail) if detail is not None else None}
        fence = current_fence.get()

        if fence is not None and not rows and not delete_ids:  # one statement, one round trip
            ended = await self.db.one(_END_RUN_FENCED[self.db.dialect], {**values, **fence_params(fence, "f_")},
                                      write=True)
            if ended.rowcount == 0:
                await self.db.read(check_fence, fence)  # why nothing was written: a lost lease raises
            return
        if (fence is not None and self.db.dialect == "postgresql" and not delete_ids
                and not _has_signal(rows)):
            params = {**values, **fence_params(fence, "f_"), "thread_id": thread_id,
                      "resource_id": resource_id, "touched_at": values["ended_at"], **_rows_params(rows)}
            if not (await self.db.one(_SAVE_END_FENCED_PG, params, write=True)).scalar():
                raise LeaseLostError(fence)
            return

        def work(conn: Connection) -> None:
            check_fence(conn, fence)
            if rows or delete_ids:
                _save(conn, thread_id, rows, list(delete_ids))
            _END_RUN.rowcount(conn, values)

        await self.db.write(work)

    # --- ThreadService ------------------------------------------------------------------------

    async def create_thread(self, thread: Thread) -> Thread:
        now = _now()

        def work(conn: Connection) -> None:
            _ensure_resource(conn, thread.resource_id, now)
            inserted = conn.execute(_insert(conn, t.threads).values(
                id=thread.id, resource_id=thread.resource_id, title=thread.title,
                metadata=json.dumps(thread.metadata), created_at=now, updated_at=now,
            ).on_conflict_do_nothing(index_elements=["id"]).returning(t.threads.c.id)).first()
            if inserted is None:
                raise AlreadyExistsError(f"thread {thread.id!r} already exists")

        await self.db.write(work)
        thread.created_at = thread.updated_at = from_micros(now)
        return thread

    async def get_thread(self, thread_id: str) -> Thread | None:
        row = await self.db.read(_thread_row, thread_id)
        return _thread(row) if row is not None else None

    async def list_threads(self, resource_id: str, page: PageRequest) -> Page:
        c = t.threads.c
        query = select(t.threads).where(c.resource_id == resource_id)
        if page.cursor is not None:
            query = query.where(tuple_(c.updated_at, c.id) < tuple_(*page.cursor))
        query = query.order_by(c.updated_at.desc(), c.id.desc()).limit(page.size + 1)
        rows = await self.db.read(_all, query)
        return _page(rows, page, lambda r: len(r.title) + len(r.metadata), _thread,
                     lambda r: (r.updated_at, r.id))

    async def update_thread(
        self, thread_id: str, *, title: str | None = None, metadata: dict[str, Any] | None = None
    ) -> Thread:
        values: dict[str, Any] = {"updated_at": _now()}
        if title is not None:
            values["title"] = title
        if metadata is not None:
            values["metadata"] = json.dumps(metadata)

        def work(conn: Connection) -> Any:
            result = conn.execute(update(t.threads).where(t.threads.c.id == thread_id).values(**values))
            if result.rowcount == 0:
                raise NotFoundError(f"thread {thread_id!r} not found")
            return _thread_row(conn, thread_id)

        return _thread(await self.db.write(work))

    async def delete_thread(self, thread_id: str) -> None:
        def work(conn: Connection) -> None:
            conn.execute(delete(t.messages).where(t.messages.c.thread_id == thread_id))
            conn.execute(delete(t.runs).where(t.runs.c.thread_id == thread_id))
            if conn.execute(delete(t.threads).where(t.threads.c.id == thread_id)).rowcount == 0:
                raise NotFoundError(f"thread {thread_id!r} not found")

        await self.db.write(work)

    async def list_messages(self, thread_id: str, page: PageRequest) -> Page:
        after = page.cursor[0] if page.cursor is not None else -1
        query = (select(t.messages).where(in_thread(self.db.dialect, thread_id, after))
                 .order_by(*by_position()).limit(page.size + 1))
        rows = await self.db.read(_all, query)
        return _page(rows, page, lambda r: len(r.content), _message, lambda r: (r.seq,))

    async def count_messages(self, thread_id: str) -> int:
        query = select(func.count()).select_from(t.messages).where(t.messages.c.thread_id == thread_id)
        return int(await self.db.read(lambda conn: conn.execute(query).scalar_one()))

    async def list_runs(self, thread_id: str, page: PageRequest) -> Page:
        c = t.runs.c
        query = select(t.runs).where(c.thread_id == thread_id)
        if page.cursor is not None:
            s, i = page.cursor
            query = query.where(or_(c.started_at < s, and_(c.started_at == s, c.id < i)))
        query = query.order_by(c.started_at.desc(), c.id.desc()).limit(page.size + 1)
        rows = await self.db.read(_all, query)
        return _page(rows, page, lambda r: 200 + len(r.detail or ""), _run, lambda r: (r.started_at, r.id))

    # --- agents -------------------------------------------------------------------------------

    async def save_agent(self, agent: StoredAgent) -> None:
        now, definition = _now(), json.dumps(agent.definition)

        def work(conn: Connection) -> None:
            stmt = _insert(conn, t.agents).values(id=agent.id, definition=definition,
                                                  created_at=now, updated_at=now)
            conn.execute(stmt.on_conflict_do_update(
                index_elements=["id"],
                set_={"definition": stmt.excluded.definition, "updated_at": stmt.excluded.updated_at},
            ))

        await self.db.write(work)

    async def delete_agent(self, agent_id: str) -> None:
        await self.db.write(lambda conn: conn.execute(delete(t.agents).where(t.agents.c.id == agent_id)))

    async def list_agents(self) -> list[StoredAgent]:
        rows = await self.db.read(_all, select(t.agents).order_by(t.agents.c.id))
        return [StoredAgent(r.id, json.loads(r.definition)) for r in rows]


# --- the SQL, one function per unit of work -----------------------------------------------------


def _all(conn: Connection, query: Any) -> list[Any]:
    return list(conn.execute(query).all())


def _thread_row(conn: Connection, thread_id: str) -> Any:
    rows = _THREAD_PREPARED.all(conn, {"thread_id": thread_id})
    return rows[0] if rows else None


def _ensure_resource(conn: Connection, resource_id: str, now: int) -> None:
    conn.execute(_insert(conn, t.resources).values(id=resource_id, created_at=now)
                 .on_conflict_do_nothing(index_elements=["id"]))


def _open_thread(
    conn: Connection, resource_id: str, thread_id: str, title: str | None, metadata: dict[str, Any] | None
) -> Thread:
    row = _thread_row(conn, thread_id)
    if row is None:
        now = _now()
        _ensure_resource(conn, resource_id, now)
        conn.execute(_insert(conn, t.threads).values(
            id=thread_id, resource_id=resource_id, title=title or "",
            metadata=json.dumps(metadata or {}), created_at=now, updated_at=now,
        ).on_conflict_do_nothing(index_elements=["id"]))
        row = _thread_row(conn, thread_id)
    thread = _thread(row)
    if thread.resource_id != resource_id:
        raise PermissionDeniedError(f"thread {thread_id!r} belongs to another resource than {resource_id!r}")
    changes: dict[str, Any] = {}
    if title is not None and title != thread.title:
        changes["title"] = thread.title = title
    if metadata is not None and metadata != thread.metadata:
        thread.metadata = metadata
        changes["metadata"] = json.dumps(metadata)
    if changes:
        changes["updated_at"] = _now()
        thread.updated_at = from_micros(changes["updated_at"])
        conn.execute(update(t.threads).where(t.threads.c.id == thread_id).values(**changes))
    return thread


def _history(conn: Connection, thread_id: str, limit: int) -> list[Message]:
    if limit <= 0:
        return []
    rows = _HISTORY[conn.dialect.name].all(conn, {"thread_id": thread_id, "limit": limit})
    return [_message(r) for r in reversed(rows)]


def _insert_run(conn: Connection, run_id: str, agent_id: str, thread_id: str, resource_id: str) -> None:
    inserted = _INSERT_RUN[conn.dialect.name].first(conn, {
        "b_id": run_id, "b_agent_id": agent_id, "b_thread_id": thread_id, "b_resource_id": resource_id,
        "b_usage": _usage_json(Usage()), "b_started_at": _now(),
    })
    if inserted is None:
        raise AlreadyExistsError(f"run id {run_id!r} is taken: choose another, or leave run_id empty")


_BEGIN_CLAIMED_WITH = f"""
WITH thread AS (
    SELECT id FROM threads WHERE id = %(thread_id)s AND resource_id = %(resource_id)s
), history AS (
    SELECT * FROM messages  -- a range of (thread_id, seq): see in_thread
    WHERE (thread_id, seq) > (%(thread_id)s, -1) AND (thread_id, seq) <= (%(thread_id)s, {SEQ_MAX})
    ORDER BY thread_id DESC, seq DESC LIMIT %(limit)s
), lease AS (
    INSERT INTO thread_leases AS l (resource_id, thread_id, owner, run_id, agent_id, expires_at, epoch)
    SELECT %(resource_id)s, %(thread_id)s, %(owner)s, %(run_id)s, %(agent_id)s, %(expires_at)s, 1 FROM thread
    ON CONFLICT (resource_id, thread_id) DO UPDATE
    SET owner = excluded.owner, run_id = excluded.run_id, agent_id = excluded.agent_id,
        expires_at = excluded.expires_at, epoch = l.epoch + 1
    WHERE l.expires_at < %(now)s OR (l.owner = %(r_owner)s AND l.run_id = %(r_run_id)s AND l.epoch = %(r_epoch)s)
    RETURNING l.epoch
), run AS (
    INSERT INTO runs (id, agent_id, thread_id, resource_id, status, finish_reason, usage, started_at)
    SELECT %(run_id)s, %(agent_id)s, %(thread_id)s, %(resource_id)s, 'running', '', %(usage)s, %(started_at)s
    FROM lease
    RETURNING id
)"""
_BEGIN_CLAIMED_SELECT = """
SELECT (SELECT epoch FROM lease) AS epoch, (SELECT count(*) FROM thread) AS threads,
       m.seq, m.thread_id, m.id, m.resource_id, m.role, m.type, m.created_at, m.content
FROM (SELECT 1) AS one LEFT JOIN history AS m ON true
ORDER BY m.seq DESC
"""
_BEGIN_CLAIMED_PG = Prepared(_BEGIN_CLAIMED_WITH + _BEGIN_CLAIMED_SELECT)
"""A run's opening on PostgreSQL in one statement (one round trip, no ``BEGIN``/``COMMIT``), for
a thread that exists and is the resource's: the lease taken (when free, or in place of the lease
this replica hands over), the run recorded only with it (an id that is taken fails the whole
statement: nothing is written), and the history read. No thread row for the resource: nothing is
written (the transaction of ``begin_run`` creates it, or refuses another resource's)."""
_BEGIN_CLAIMED_SAVING_PG = Prepared(
    _BEGIN_CLAIMED_WITH + ", " + _saving("run", "SELECT id FROM history") + _BEGIN_CLAIMED_SELECT)
"""The same, with the run's input saved but for the messages in the history it reads (a statement
reads the rows as they were before it)."""


def _begin_claimed_params(
    claim: Any, run_id: str, agent_id: str, resource_id: str, thread_id: str, limit: int,
) -> dict[str, Any]:
    lease, replacing = claim.lease, claim.replacing
    return {"thread_id": thread_id, "resource_id": resource_id, "owner": lease.owner, "run_id": run_id,
            "agent_id": agent_id, "expires_at": micros(lease.expires_at), "now": micros(claim.now),
            "r_owner": replacing.owner if replacing is not None else None,
            "r_run_id": replacing.run_id if replacing is not None else None,
            "r_epoch": replacing.epoch if replacing is not None else None,
            "usage": _usage_json(Usage()), "started_at": _now(), "limit": limit}


_HistoryRow = namedtuple("_HistoryRow", "seq thread_id id resource_id role type created_at content")


def _message_rows(thread_id: str, resource_id: str, messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [{
        "thread_id": thread_id, "id": m.id, "resource_id": resource_id, "role": m.role,
        "type": m.type, "created_at": micros(m.created_at), "content": content_to_json(m.content),
    } for m in messages]


def _save(conn: Connection, thread_id: str, rows: list[dict[str, Any]], delete_ids: list[str]) -> None:
    """Upsert by (thread, id): a new message goes after the others, a known one keeps its place."""
    if delete_ids:
        conn.execute(delete(t.messages).where(t.messages.c.thread_id == thread_id,
                                              t.messages.c.id.in_(delete_ids)))
    if rows:
        _message_upsert_prepared(conn).executemany(conn, rows)
        signals = [r["id"] for r in rows if r["role"] == "signal"]
        if signals:
            conn.execute(_CONSUME, {"thread_id": thread_id, "ids": signals})
    _TOUCH_PREPARED.rowcount(conn, {"thread_id": thread_id, "now": _now()})


# --- rows -> domain ------------------------------------------------------------------------------


def _thread(row: Any) -> Thread:
    return Thread(id=row.id, resource_id=row.resource_id, title=row.title,
                  metadata=json.loads(row.metadata), created_at=from_micros(row.created_at),
                  updated_at=from_micros(row.updated_at))


def _message(row: Any) -> Message:
    return Message(id=row.id, role=row.role, content=content_from_json(row.content),
                   created_at=from_micros(row.created_at), thread_id=row.thread_id,
                   resource_id=row.resource_id, type=row.type)


def _run(row: Any) -> RunRecord:
    return RunRecord(
        id=row.id, agent_id=row.agent_id, thread_id=row.thread_id, resource_id=row.resource_id,
        status=row.status, finish_reason=row.finish_reason, usage=Usage(**json.loads(row.usage)),
        started_at=from_micros(row.started_at),
        ended_at=from_micros(row.ended_at) if row.ended_at is not None else None,
        detail=json.loads(row.detail) if row.detail else {},
    )


def _usage_json(usage: Usage) -> str:
    return json.dumps(usage.__dict__)


def _page(rows: Sequence[Any], page: PageRequest, size_of: Any, convert: Any, cursor_of: Any) -> Page:
    """At most ``page.size`` rows and about ``page.max_bytes`` of them, never fewer than one."""
    items: list[Any] = []
    used = 0
    for i, row in enumerate(rows[: page.size]):
        used += size_of(row)
        if items and used > page.max_bytes:
            return Page(items, cursor_of(rows[i - 1]))
        items.append(convert(row))
    more = len(rows) > page.size
    return Page(items, cursor_of(rows[page.size - 1]) if more else None)
