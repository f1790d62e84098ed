"""``SqlVersionStore``: agent versions (``treadle.versions.VersionStore``) on SQLite and PostgreSQL.

Each write is one transaction. Numbers count up per agent (a unique constraint, retried when two
writers take the same number at once); partial unique indexes keep at most one published and one
draft version per agent, so two replicas publishing at once cannot both win.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Connection, bindparam, delete, func, select, update
from sqlalchemy.exc import IntegrityError

from ..core.errors import NotFoundError
from ..core.messages import utcnow
from ..versions import AgentVersion, Override, number_of
from . import schema as t
from .engine import Database
from .sql import from_micros, micros

_ATTEMPTS = 5
_c = t.agent_versions.c
# Built once (bound parameters): a call that reads its version pays only for running one.
_BY_STATE = select(t.agent_versions).where(_c.agent_id == bindparam("agent_id"), _c.state == bindparam("state"))
_BY_NUMBER = select(t.agent_versions).where(_c.agent_id == bindparam("agent_id"), _c.number == bindparam("number"))
_BY_ID = select(t.agent_versions).where(_c.agent_id == bindparam("agent_id"), _c.id == bindparam("id"))


class SqlVersionStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def add_version(self, version: AgentVersion, *, publish: bool) -> AgentVersion:
        def work(conn: Connection) -> AgentVersion:
            latest = conn.execute(select(func.max(_c.number)).where(_c.agent_id == version.agent_id)).scalar()
            version.number = (latest or 0) + 1
            version.state = "published" if publish else "draft"
            if publish:
                version.published_at = version.created_at
            # The one version of this state before it is superseded.
            conn.execute(update(t.agent_versions).where(
                _c.agent_id == version.agent_id, _c.state == version.state).values(state="archived"))
            conn.execute(t.agent_versions.insert().values(
                id=version.id, agent_id=version.agent_id, number=version.number, state=version.state,
                override=json.dumps(version.override.to_json()), message=version.message,
                author=version.author, restored_from=version.restored_from,
                definition=json.dumps(version.definition) if version.definition is not None else None,
                created_at=micros(version.created_at),
                published_at=micros(version.published_at) if version.published_at else None,
            ))
            return version

        for attempt in range(_ATTEMPTS):
            try:
                return await self.db.write(work)
            except IntegrityError:  # another writer took the number (or the draft) just now
                if attempt == _ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")

    async def publish_version(self, agent_id: str, version_id: str) -> AgentVersion:
        def work(conn: Connection) -> Any:
            row = conn.execute(select(t.agent_versions).where(
                _c.agent_id == agent_id, _c.id == version_id)).first()
            if row is None:
                raise NotFoundError(f"agent {agent_id!r} has no version {version_id!r}")
            if row.state != "published":
                conn.execute(update(t.agent_versions).where(
                    _c.agent_id == agent_id, _c.state == "published").values(state="archived"))
                conn.execute(update(t.agent_versions).where(_c.id == version_id).values(
                    state="published", published_at=micros_now()))
            return conn.execute(select(t.agent_versions).where(_c.id == version_id)).first()

        for attempt in range(_ATTEMPTS):
            try:
                return _version(await self.db.write(work))
            except IntegrityError:  # a concurrent publish: the later one wins
                if attempt == _ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")

    async def find_version(self, agent_id: str, selector: str) -> AgentVersion | None:
        params: dict[str, Any]
        if selector in ("published", "draft"):
            query, params = _BY_STATE, {"agent_id": agent_id, "state": selector}
        elif (number := number_of(selector)) is not None:
            query, params = _BY_NUMBER, {"agent_id": agent_id, "number": number}
        else:
            query, params = _BY_ID, {"agent_id": agent_id, "id": selector}
        row = await self.db.read(lambda conn: conn.execute(query, params).first())
        return _version(row) if row is not None else None

    async def list_versions(self, agent_id: str, limit: int, before: int | None) -> list[AgentVersion]:
        query = select(t.agent_versions).where(_c.agent_id == agent_id)
        if before is not None:
            query = query.where(_c.number < before)
        query = query.order_by(_c.number.desc()).limit(limit)
        rows = await self.db.read(lambda conn: list(conn.execute(query).all()))
        return [_version(r) for r in rows]

    async def delete_versions(self, agent_id: str) -> None:
        await self.db.write(lambda conn: conn.execute(delete(t.agent_versions).where(_c.agent_id == agent_id)))


def micros_now() -> int:
    return micros(utcnow())


def _version(row: Any) -> AgentVersion:
    return AgentVersion(
        id=row.id, agent_id=row.agent_id, number=row.number, state=row.state,
        override=Override.from_json(json.loads(row.override)), message=row.message, author=row.author,
        created_at=from_micros(row.created_at),
        published_at=from_micros(row.published_at) if row.published_at is not None else None,
        restored_from=row.restored_from,
        definition=json.loads(row.definition) if row.definition else None,
    )
