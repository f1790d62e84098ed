"""``SqlStore``: the one implementation of ``MemoryStore``, for SQLite and PostgreSQL alike.

All SQL of the store is here (SQLAlchemy Core). The only engine differences are the upsert
construct (both dialects spell it ``ON CONFLICT``) and how a write transaction starts
(``engine.writing``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, delete, func, or_, select, tuple_, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from ..chunks import Usage
from ..errors import AlreadyExistsError, NotFoundError, PermissionDeniedError
from ..messages import Message, utcnow
from . import schema as t
from .base import Page, PageRequest, RunRecord, RunStatus, StoredAgent, Thread
from .codec import content_from_json, content_to_json
from .engine import reading, writing


def micros(when: datetime) -> int:
    return int(when.timestamp() * 1_000_000)


def from_micros(value: int) -> datetime:
    return datetime.fromtimestamp(value / 1_000_000, UTC)


def _now() -> int:
    return micros(utcnow())


class SqlStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self._insert = postgresql.insert if engine.dialect.name == "postgresql" else sqlite.insert

    async def close(self) -> None:
        await self.engine.dispose()

    # --- threads ------------------------------------------------------------------------------

    async def open_thread(
        self, resource_id: str, thread_id: str, *, title: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Thread:
        async with writing(self.engine) as conn:
            row = (await conn.execute(select(t.threads).where(t.threads.c.id == thread_id))).first()
            if row is None:
                now = _now()
                await self._ensure_resource(conn, resource_id, now)
                await conn.execute(self._insert(t.threads).values(
                    id=thread_id, resource_id=resource_id, title=title or "",
                    metadata=json.dumps(metadata or {}), created_at=now, updated_at=now,
                ).on_conflict_do_nothing(index_elements=["id"]))
                row = (await conn.execute(select(t.threads).where(t.threads.c.id == thread_id))).one()
            thread = _thread(row)
            if thread.resource_id != resource_id:
                raise PermissionDeniedError(
                    f"thread {thread_id!r} belongs to another resource than {resource_id!r}"
                )
            changes: dict[str, Any] = {}
            if title is not None and title != thread.title:
                changes["title"] = thread.title = title
            if metadata is not None and metadata != thread.metadata:
                thread.metadata = metadata
                changes["metadata"] = json.dumps(metadata)
            if changes:
                changes["updated_at"] = _now()
                thread.updated_at = from_micros(changes["updated_at"])
                await conn.execute(update(t.threads).where(t.threads.c.id == thread_id).values(**changes))
            return thread

    async def _ensure_resource(self, conn: AsyncConnection, resource_id: str, now: int) -> None:
        await conn.execute(self._insert(t.resources).values(id=resource_id, created_at=now)
                           .on_conflict_do_nothing(index_elements=["id"]))

    async def create_thread(self, thread: Thread) -> Thread:
        async with writing(self.engine) as conn:
            now = _now()
            await self._ensure_resource(conn, thread.resource_id, now)
            result = await conn.execute(self._insert(t.threads).values(
                id=thread.id, resource_id=thread.resource_id, title=thread.title,
                metadata=json.dumps(thread.metadata), created_at=now, updated_at=now,
            ).on_conflict_do_nothing(index_elements=["id"]).returning(t.threads.c.id))
            if result.first() is None:
                raise AlreadyExistsError(f"thread {thread.id!r} already exists")
        thread.created_at = thread.updated_at = from_micros(now)
        return thread

    async def get_thread(self, thread_id: str) -> Thread | None:
        async with reading(self.engine) as conn:
            row = (await conn.execute(select(t.threads).where(t.threads.c.id == thread_id))).first()
        return _thread(row) if row is not None else None

    async def list_threads(self, resource_id: str, page: PageRequest) -> Page:
        c = t.threads.c
        query = select(t.threads).where(c.resource_id == resource_id)
        if page.cursor is not None:
            query = query.where(tuple_(c.updated_at, c.id) < tuple_(*page.cursor))
        query = query.order_by(c.updated_at.desc(), c.id.desc()).limit(page.size + 1)
        async with reading(self.engine) as conn:
            rows = (await conn.execute(query)).all()
        return _page(rows, page, lambda r: len(r.title) + len(r.metadata),
                     _thread, lambda r: (r.updated_at, r.id))

    async def update_thread(
        self, thread_id: str, *, title: str | None = None, metadata: dict[str, Any] | None = None
    ) -> Thread:
        async with writing(self.engine) as conn:
            values: dict[str, Any] = {"updated_at": _now()}
            if title is not None:
                values["title"] = title
            if metadata is not None:
                values["metadata"] = json.dumps(metadata)
            result = await conn.execute(update(t.threads).where(t.threads.c.id == thread_id).values(**values))
            if result.rowcount == 0:
                raise NotFoundError(f"thread {thread_id!r} not found")
            row = (await conn.execute(select(t.threads).where(t.threads.c.id == thread_id))).one()
        return _thread(row)

    async def delete_thread(self, thread_id: str) -> None:
        async with writing(self.engine) as conn:
            await conn.execute(delete(t.messages).where(t.messages.c.thread_id == thread_id))
            await conn.execute(delete(t.runs).where(t.runs.c.thread_id == thread_id))
            result = await conn.execute(delete(t.threads).where(t.threads.c.id == thread_id))
            if result.rowcount == 0:
                raise NotFoundError(f"thread {thread_id!r} not found")

    # --- messages -----------------------------------------------------------------------------

    async def load_history(self, thread_id: str, limit: int) -> list[Message]:
        if limit <= 0:
            return []
        c = t.messages.c
        query = select(t.messages).where(c.thread_id == thread_id).order_by(c.seq.desc()).limit(limit)
        async with reading(self.engine) as conn:
            rows = (await conn.execute(query)).all()
        return [_message(r) for r in reversed(rows)]

    async def save_messages(
        self, thread_id: str, resource_id: str, messages: Sequence[Message],
        delete_ids: Sequence[str] = (),
    ) -> None:
        if not messages and not delete_ids:
            return
        async with writing(self.engine) as conn:
            if delete_ids:
                await conn.execute(delete(t.messages).where(
                    t.messages.c.thread_id == thread_id, t.messages.c.id.in_(list(delete_ids))
                ))
            if messages:
                rows = [{
                    "thread_id": thread_id, "id": m.id, "resource_id": resource_id, "role": m.role,
                    "type": m.type, "created_at": micros(m.created_at),
                    "content": content_to_json(m.content),
                } for m in messages]
                stmt = self._insert(t.messages).values(rows)
                await conn.execute(stmt.on_conflict_do_update(
                    index_elements=["thread_id", "id"],
                    set_={"content": stmt.excluded.content, "role": stmt.excluded.role,
                          "type": stmt.excluded.type},
                ))
            await conn.execute(update(t.threads).where(t.threads.c.id == thread_id).values(updated_at=_now()))

    async def list_messages(self, thread_id: str, page: PageRequest) -> Page:
        c = t.messages.c
        query = select(t.messages).where(c.thread_id == thread_id)
        if page.cursor is not None:
            query = query.where(c.seq > page.cursor[0])
        query = query.order_by(c.seq).limit(page.size + 1)
        async with reading(self.engine) as conn:
            rows = (await conn.execute(query)).all()
        return _page(rows, page, lambda r: len(r.content), _message, lambda r: (r.seq,))

    async def count_messages(self, thread_id: str) -> int:
        async with reading(self.engine) as conn:
            query = select(func.count()).select_from(t.messages).where(t.messages.c.thread_id == thread_id)
            return int((await conn.execute(query)).scalar_one())

    # --- runs ---------------------------------------------------------------------------------

    async def start_run(self, run_id: str, agent_id: str, thread_id: str, resource_id: str) -> None:
        async with writing(self.engine) as conn:
            await conn.execute(t.runs.insert().values(
                id=run_id, agent_id=agent_id, thread_id=thread_id, resource_id=resource_id,
                status="running", finish_reason="", usage=_usage_json(Usage()), started_at=_now(),
            ))

    async def end_run(self, run_id: str, status: RunStatus, finish_reason: str, usage: Usage) -> None:
        async with writing(self.engine) as conn:
            await conn.execute(update(t.runs).where(t.runs.c.id == run_id).values(
                status=status, finish_reason=finish_reason, usage=_usage_json(usage), ended_at=_now(),
            ))

    async def list_runs(self, thread_id: str, page: PageRequest) -> Page:
        c = t.runs.c
        query = select(t.runs).where(c.thread_id == thread_id)
        if page.cursor is not None:
            s, i = page.cursor
            query = query.where(or_(c.started_at < s, and_(c.started_at == s, c.id < i)))
        query = query.order_by(c.started_at.desc(), c.id.desc()).limit(page.size + 1)
        async with reading(self.engine) as conn:
            rows = (await conn.execute(query)).all()
        return _page(rows, page, lambda r: 200, _run, lambda r: (r.started_at, r.id))

    # --- agents -------------------------------------------------------------------------------

    async def save_agent(self, agent: StoredAgent) -> None:
        now = _now()
        async with writing(self.engine) as conn:
            stmt = self._insert(t.agents).values(
                id=agent.id, definition=json.dumps(agent.definition), created_at=now, updated_at=now
            )
            await conn.execute(stmt.on_conflict_do_update(
                index_elements=["id"],
                set_={"definition": stmt.excluded.definition, "updated_at": stmt.excluded.updated_at},
            ))

    async def delete_agent(self, agent_id: str) -> None:
        async with writing(self.engine) as conn:
            await conn.execute(delete(t.agents).where(t.agents.c.id == agent_id))

    async def list_agents(self) -> list[StoredAgent]:
        async with reading(self.engine) as conn:
            rows = (await conn.execute(select(t.agents).order_by(t.agents.c.id))).all()
        return [StoredAgent(r.id, json.loads(r.definition)) for r in rows]


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
    u = json.loads(row.usage)
    return RunRecord(
        id=row.id, agent_id=row.agent_id, thread_id=row.thread_id, resource_id=row.resource_id,
        status=row.status, finish_reason=row.finish_reason, usage=Usage(**u),
        started_at=from_micros(row.started_at),
        ended_at=from_micros(row.ended_at) if row.ended_at is not None else None,
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
