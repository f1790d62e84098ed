"""The ``scores`` table: the durable queue of scorings and the scores it produces.

One row per scorer, run and source (``live`` or ``test``), unique: enqueueing a run twice, or
a retry, never makes a second score. A replica claims a due row with a conditional update
(``pending`` and due, or ``running`` with an expired claim), so two replicas never score the
same row at once, and a row claimed by a replica that died is claimed again once its claim
runs out. SQLite and PostgreSQL run the same statements.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import (
    BigInteger, Column, Connection, Float, Integer, MetaData, String, Table, Text, and_, func, or_, select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite

from ..memory.engine import Database

metadata = MetaData()

scores = Table(
    "scores", metadata,
    Column("id", String(255), primary_key=True),
    Column("run_id", String(255), nullable=False),
    Column("scorer_id", String(255), nullable=False),
    Column("source", String(8), nullable=False),
    Column("agent_id", String(255), nullable=False),
    Column("agent_version", String(255), nullable=False),
    Column("thread_id", String(255), nullable=False),
    Column("resource_id", String(255), nullable=False),
    Column("trace_id", String(32), nullable=False),
    Column("span_id", String(16), nullable=False),
    Column("status", String(16), nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("next_attempt_at", BigInteger, nullable=False),
    Column("claimed_by", String(255), nullable=False),
    Column("claimed_until", BigInteger, nullable=False),
    Column("scorer", Text, nullable=False),
    Column("payload", Text, nullable=False),
    Column("score", Float, nullable=True),
    Column("reason", Text, nullable=False),
    Column("details", Text, nullable=False),
    Column("error", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("scored_at", BigInteger, nullable=True),
)


def now_us() -> int:
    return time.time_ns() // 1000


def score_id(run_id: str, scorer_id: str, source: str) -> str:
    digest = hashlib.sha256(f"{source}\0{scorer_id}\0{run_id}".encode()).hexdigest()[:32]
    return f"score_{digest}"


@dataclass
class Job:
    """A row to enqueue (or a claimed row): who ran, what to score with, and what the scorer sees."""

    run_id: str
    scorer_id: str
    agent_id: str
    scorer: dict[str, Any]
    """The scorer's definition at enqueue time (``ScorerRef`` JSON)."""
    payload: dict[str, Any]
    """What the scorer sees (``ScorerInput``, output messages, request context...)."""
    source: str = "live"
    agent_version: str = ""
    thread_id: str = ""
    resource_id: str = ""
    trace_id: str = ""
    span_id: str = ""
    id: str = ""
    attempts: int = 0

    def __post_init__(self) -> None:
        self.id = self.id or score_id(self.run_id, self.scorer_id, self.source)


@dataclass
class StoredScore:
    id: str
    run_id: str
    scorer_id: str
    agent_id: str
    source: str
    status: str
    score: float | None
    reason: str
    details: dict[str, Any]
    payload: dict[str, Any]
    agent_version: str = ""
    thread_id: str = ""
    resource_id: str = ""
    trace_id: str = ""
    span_id: str = ""
    attempts: int = 0
    error: str = ""
    created_at: int = 0
    scored_at: int | None = None


@dataclass
class ScoreFilter:
    agent_id: str = ""
    scorer_id: str = ""
    run_id: str = ""
    thread_id: str = ""
    source: str = ""
    start_us: int | None = None
    end_us: int | None = None
    statuses: tuple[str, ...] = ("succeeded",)

    def where(self) -> Any:
        c = scores.c
        clauses: list[Any] = [c.status.in_(self.statuses)]
        for column, value in ((c.agent_id, self.agent_id), (c.scorer_id, self.scorer_id), (c.run_id, self.run_id),
                              (c.thread_id, self.thread_id), (c.source, self.source)):
            if value:
                clauses.append(column == value)
        when = func.coalesce(c.scored_at, c.created_at)
        if self.start_us is not None:
            clauses.append(when >= self.start_us)
        if self.end_us is not None:
            clauses.append(when < self.end_us)
        return and_(*clauses)


@dataclass
class Aggregate:
    agent_id: str
    scorer_id: str
    agent_version: str
    count: int = 0
    total: float = 0.0
    low: float = 1.0
    high: float = 0.0
    distribution: list[int] = field(default_factory=list)


def _insert(conn: Connection) -> Any:
    return (postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert)(scores)


def _row(job: Job, now: int, status: str = "pending") -> dict[str, Any]:
    return {
        "id": job.id, "run_id": job.run_id, "scorer_id": job.scorer_id, "source": job.source,
        "agent_id": job.agent_id, "agent_version": job.agent_version, "thread_id": job.thread_id,
        "resource_id": job.resource_id, "trace_id": job.trace_id, "span_id": job.span_id,
        "status": status, "attempts": 0, "next_attempt_at": now, "claimed_by": "", "claimed_until": 0,
        "scorer": json.dumps(job.scorer), "payload": json.dumps(job.payload, default=str),
        "score": None, "reason": "", "details": "{}", "error": "", "created_at": now, "scored_at": None,
    }


def _stored(r: Any) -> StoredScore:
    return StoredScore(
        id=r.id, run_id=r.run_id, scorer_id=r.scorer_id, agent_id=r.agent_id, source=r.source,
        status=r.status, score=r.score, reason=r.reason, details=json.loads(r.details or "{}"),
        payload=json.loads(r.payload or "{}"), agent_version=r.agent_version, thread_id=r.thread_id,
        resource_id=r.resource_id, trace_id=r.trace_id, span_id=r.span_id, attempts=r.attempts,
        error=r.error, created_at=r.created_at, scored_at=r.scored_at,
    )


def _job(r: Any) -> Job:
    return Job(run_id=r.run_id, scorer_id=r.scorer_id, agent_id=r.agent_id, scorer=json.loads(r.scorer),
               payload=json.loads(r.payload), source=r.source, agent_version=r.agent_version,
               thread_id=r.thread_id, resource_id=r.resource_id, trace_id=r.trace_id, span_id=r.span_id,
               id=r.id, attempts=r.attempts)


class ScoreStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def enqueue(self, jobs: list[Job]) -> int:
        """Insert ``jobs`` as pending; rows already there (same scorer, run and source) are left
        alone. Returns how many were new."""
        now = now_us()

        def work(conn: Connection) -> int:
            new = 0
            for job in jobs:
                result = conn.execute(_insert(conn).values(_row(job, now)).on_conflict_do_nothing())
                new += max(result.rowcount, 0)
            return new

        return await self.db.write(work)

    async def take(self, job: Job, replica: str, lease_us: int) -> Job:
        """Insert or reset ``job`` as claimed by ``replica`` (an on-demand scoring, of a run
        perhaps scored before), in one write: no worker can claim the row between its reset and
        its claim. A worker scoring the row when it is taken loses its claim, so its result is
        not stored over this one. Its first attempt: should this replica die scoring it, a worker
        takes it over when the claim runs out, with the retries a queued row has."""
        now = now_us()

        row = {**_row(job, now, "running"), "claimed_by": replica, "claimed_until": now + lease_us, "attempts": 1}

        def work(conn: Connection) -> None:
            conn.execute(_insert(conn).values(row).on_conflict_do_update(
                index_elements=["id"], set_={k: v for k, v in row.items() if k != "id"}))

        await self.db.write(work)  # the job as stored, as a worker would read it back
        return replace(job, attempts=1, scorer=json.loads(row["scorer"]), payload=json.loads(row["payload"]))

    async def claim(self, replica: str, lease_us: int, limit: int) -> list[Job]:
        """Due rows now claimed by ``replica`` until ``lease_us`` from now."""
        now = now_us()
        c = scores.c
        due = or_(and_(c.status == "pending", c.next_attempt_at <= now),
                  and_(c.status == "running", c.claimed_until < now))

        def work(conn: Connection) -> list[Job]:
            candidates = conn.execute(select(c.id).where(due).order_by(c.next_attempt_at).limit(limit)).scalars().all()
            claimed = []
            for score in candidates:
                result = conn.execute(update(scores).where(and_(c.id == score, due)).values(
                    status="running", claimed_by=replica, claimed_until=now + lease_us, attempts=c.attempts + 1))
                if result.rowcount == 1:
                    claimed.append(score)
            if not claimed:
                return []
            return [_job(r) for r in conn.execute(select(scores).where(c.id.in_(claimed))).all()]

        return await self.db.write(work)

    async def succeed(self, job: Job, replica: str, score: float, reason: str, details: dict[str, Any]) -> bool:
        """Store the score; False when the claim was lost (another replica took the row over)."""
        now = now_us()
        c = scores.c

        def work(conn: Connection) -> bool:
            result = conn.execute(update(scores).where(and_(
                c.id == job.id, c.status == "running", c.claimed_by == replica)).values(
                status="succeeded", score=score, reason=reason, details=json.dumps(details, default=str),
                error="", scored_at=now, claimed_until=0))
            return bool(result.rowcount == 1)

        return await self.db.write(work)

    async def fail(self, job: Job, replica: str, error: str, retry_in_us: int | None, status: str = "failed") -> None:
        """Back to pending, due in ``retry_in_us``; or ``status`` (failed, skipped) for good when
        that is None."""
        now = now_us()
        c = scores.c
        values: dict[str, Any] = {"error": error[:2000], "claimed_until": 0}
        if retry_in_us is None:
            values.update(status=status, scored_at=now)
        else:
            values.update(status="pending", next_attempt_at=now + retry_in_us)

        def work(conn: Connection) -> None:
            conn.execute(update(scores).where(and_(
                c.id == job.id, c.status == "running", c.claimed_by == replica)).values(**values))

        await self.db.write(work)

    async def get(self, ids: list[str]) -> list[StoredScore]:
        def work(conn: Connection) -> list[StoredScore]:
            return [_stored(r) for r in conn.execute(select(scores).where(scores.c.id.in_(ids))).all()]

        return await self.db.read(work)

    async def payload_of(self, run_id: str) -> tuple[Job | None]:
        """A queued row of ``run_id`` (any scorer): what a scorer saw of it, for ``ScoreRun``."""
        def work(conn: Connection) -> tuple[Job | None]:
            row = conn.execute(select(scores).where(scores.c.run_id == run_id).order_by(scores.c.created_at)
                               .limit(1)).first()
            return (_job(row) if row is not None else None,)

        return await self.db.read(work)

    async def listing(self, where: ScoreFilter, limit: int, before: tuple[int, str] | None) -> list[StoredScore]:
        """Newest first (by scoring time, then id), after the ``before`` cursor."""
        c = scores.c
        when = func.coalesce(c.scored_at, c.created_at)

        def work(conn: Connection) -> list[StoredScore]:
            query = select(scores).where(where.where())
            if before is not None:
                query = query.where(or_(when < before[0], and_(when == before[0], c.id < before[1])))
            rows = conn.execute(query.order_by(when.desc(), c.id.desc()).limit(limit)).all()
            return [_stored(r) for r in rows]

        return await self.db.read(work)

    async def aggregate(self, where: ScoreFilter, buckets: int) -> list[Aggregate]:
        c = scores.c

        def work(conn: Connection) -> list[Any]:
            return list(conn.execute(select(c.agent_id, c.scorer_id, c.agent_version, c.score)
                                     .where(where.where())).all())

        out: dict[tuple[str, str, str], Aggregate] = {}
        for agent_id, scorer_id, version, score in await self.db.read(work):
            if score is None:
                continue
            a = out.setdefault((agent_id, scorer_id, version),
                               Aggregate(agent_id, scorer_id, version, distribution=[0] * buckets))
            a.count += 1
            a.total += score
            a.low, a.high = min(a.low, score), max(a.high, score)
            a.distribution[min(int(score * buckets), buckets - 1)] += 1
        return [out[k] for k in sorted(out)]

    async def statuses(self, run_id: str = "") -> list[StoredScore]:
        """Every row (of ``run_id``), whatever its status: for operators and tests."""
        def work(conn: Connection) -> list[StoredScore]:
            query = select(scores)
            if run_id:
                query = query.where(scores.c.run_id == run_id)
            return [_stored(r) for r in conn.execute(query.order_by(scores.c.created_at)).all()]

        return await self.db.read(work)


async def stored_run(db: Database, run_id: str, history: int) -> tuple[Any, list[Any], list[Any]] | None:
    """A run on a memory thread, as stored: ``(run row, its messages, the ``history`` messages
    before them)``, or None when there is no such run. A run's messages are those created after
    the previous run of the thread ended and before it ended (runs of a thread do not overlap)."""
    from ..memory import schema as t
    from ..memory.sql import _message, by_position, in_thread

    def work(conn: Connection) -> tuple[Any, list[Any], list[Any]] | None:
        run = conn.execute(select(t.runs).where(t.runs.c.id == run_id)).first()
        if run is None or run.status != "finished" or run.ended_at is None:
            return None
        r = t.runs.c
        before = conn.execute(select(func.max(r.ended_at)).where(and_(
            r.thread_id == run.thread_id, r.id != run.id, r.ended_at <= run.started_at))).scalar()
        m = t.messages.c
        start = before if before is not None else -1
        thread = in_thread(conn.dialect.name, run.thread_id)
        mine = conn.execute(select(t.messages).where(
            thread, m.created_at > start, m.created_at <= run.ended_at).order_by(*by_position())).all()
        earlier = conn.execute(select(t.messages).where(thread, m.created_at <= start)
                               .order_by(*by_position(newest_first=True)).limit(history)).all()
        return run, [_message(x) for x in mine], [_message(x) for x in reversed(earlier)]

    return await db.read(work)
