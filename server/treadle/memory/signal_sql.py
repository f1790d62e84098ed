"""``SqlSignalStore``: the ``SignalStore`` protocol on SQLite and PostgreSQL (SQLAlchemy Core).

Tables come from migrations ``0002_signals``, ``0003_thread_leases`` and ``0004_lease_epoch``. Times are integer microseconds, JSON is text, as in
the memory store.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger, Boolean, Column, Connection, Integer, MetaData, String, Table, Text, and_, bindparam, column,
    delete, exists, func, literal, or_, select, table, true, update,
)
from sqlalchemy.dialects import postgresql, sqlite

from ..core.messages import Message
from .codec import content_from_json, content_to_json
from .engine import Database, Prepared
from .fence import check_fence
from .signal_records import Lease, NotificationRecord, PendingSignal, StateChannel, ThreadKey
from .sql import from_micros, micros

_md = MetaData()
ID = String(255)

pending_signals = Table(
    "pending_signals", _md,
    Column("seq", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True),
    Column("id", ID, nullable=False), Column("resource_id", ID, nullable=False),
    Column("thread_id", ID, nullable=False), Column("kind", String(16), nullable=False),
    Column("agent_id", ID, nullable=False), Column("type", String(255), nullable=False),
    Column("content", Text, nullable=False), Column("options", Text, nullable=True),
    Column("created_at", BigInteger, nullable=False),
)
state_channels = Table(
    "state_channels", _md,
    Column("resource_id", ID, primary_key=True), Column("thread_id", ID, primary_key=True),
    Column("channel", ID, primary_key=True), Column("cache_key", Text, nullable=False),
    Column("mode", String(16), nullable=False), Column("version", BigInteger, nullable=False),
    Column("last_signal_id", ID, nullable=False),
)
notifications = Table(
    "notifications", _md,
    Column("id", ID, primary_key=True), Column("resource_id", ID), Column("thread_id", ID),
    Column("agent_id", ID), Column("source", ID), Column("kind", ID), Column("priority", String(16)),
    Column("status", String(16)), Column("summary", Text), Column("payload", Text),
    Column("dedupe_key", Text), Column("coalesce_key", Text), Column("coalesced_count", Integer),
    Column("deliver_at", BigInteger), Column("summary_at", BigInteger),
    Column("deliver_when_idle", Boolean), Column("delivery_attempts", Integer),
    Column("delivered_signal_id", ID), Column("summary_signal_id", ID), Column("attributes", Text),
    Column("metadata", Text), Column("created_at", BigInteger), Column("updated_at", BigInteger),
    Column("version", BigInteger, nullable=False, default=0),
)
thread_leases = Table(
    "thread_leases", _md,
    Column("resource_id", ID, primary_key=True), Column("thread_id", ID, primary_key=True),
    Column("owner", ID, nullable=False), Column("run_id", ID, nullable=False),
    Column("agent_id", ID, nullable=False), Column("expires_at", BigInteger, nullable=False),
    Column("epoch", BigInteger, nullable=False, default=0),
)
_runs = table("runs", column("id", String), column("thread_id", String), column("resource_id", String),
              column("status", String), column("finish_reason", String), column("ended_at", BigInteger))
_messages = table("messages", column("thread_id"), column("id"))
"""The memory store's messages (``schema.messages``): a signal stored there is consumed."""
_MERGEABLE = or_(
    notifications.c.status == "pending",
    (notifications.c.status == "summarized")
    & (notifications.c.deliver_when_idle.is_(True) | notifications.c.deliver_at.is_not(None)),
)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _opt_micros(when: datetime | None) -> int | None:
    return micros(when) if when is not None else None


def _opt_time(value: int | None) -> datetime | None:
    return from_micros(value) if value is not None else None


class SqlSignalStore:
    """Each method is one transaction (``Database.write``) or one read (``Database.read``)."""

    consumes_with_messages = True
    """The memory store on the same database deletes a pending signal in the transaction that
    stores its message (``sql._save``): the durable inbox's exactly-once."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._insert = postgresql.insert if db.dialect == "postgresql" else sqlite.insert

    # --- pending signals ----------------------------------------------------------------------

    async def add_pending(self, pending: PendingSignal) -> None:
        pending.seq = await self.db.write(_add_pending, pending)

    async def list_pending(self, key: ThreadKey | None = None) -> list[PendingSignal]:
        if key is None:
            rows = await self.db.read(_rows, _ALL_PENDING)
        else:  # at every run's end: built once
            rows = (await self.db.one(_THREAD_PENDING, {"resource_id": key[0], "thread_id": key[1]})).all()
        return [_pending(r) for r in rows]

    async def count_pending(self, key: ThreadKey) -> dict[str, int]:
        c = pending_signals.c
        query = (select(c.kind, func.count()).where(c.resource_id == key[0], c.thread_id == key[1])
                 .group_by(c.kind))
        return {kind: int(n) for kind, n in await self.db.read(_rows, query)}

    async def remove_pending(self, ids: Iterable[str], fence: Lease | None = None) -> None:
        wanted = list(ids)
        if wanted:
            stmt = delete(pending_signals).where(pending_signals.c.id.in_(wanted))

            def work(conn: Connection) -> None:
                check_fence(conn, fence)
                conn.execute(stmt)

            await self.db.write(work)

    async def get_pending(self, key: ThreadKey, id: str) -> PendingSignal | None:
        c = pending_signals.c
        rows = await self.db.read(_rows, select(pending_signals).where(
            c.thread_id == key[1], c.id == id, c.resource_id == key[0]).limit(1))
        return _pending(rows[0]) if rows else None

    async def take_pending(self, ids: Iterable[str], fence: Lease | None = None) -> list[PendingSignal]:
        wanted = list(ids)
        if not wanted:
            return []
        c = pending_signals.c
        stmt = delete(pending_signals).where(c.id.in_(wanted)).returning(*pending_signals.c)

        def work(conn: Connection) -> list[Any]:
            check_fence(conn, fence)
            return list(conn.execute(stmt).all())

        rows = await self.db.write(work)
        return [_pending(r) for r in sorted(rows, key=lambda r: r.seq)]

    # --- thread leases ------------------------------------------------------------------------

    async def acquire_lease(self, lease: Lease, now: datetime, replacing: Lease | None = None) -> Lease:
        return await self.db.write(self.lease_taker(lease, now, replacing))

    def lease_taker(self, lease: Lease, now: datetime, replacing: Lease | None = None) -> Callable[[Connection], Lease]:
        """``acquire_lease`` as a function of a connection, for a transaction that does more
        (``fence.LeaseClaim``: the run's first write): the thread's lease after it."""
        upsert = _acquire_statement(self.db.dialect, replacing is not None)
        params = {"b_resource_id": lease.key[0], "b_thread_id": lease.key[1], "b_owner": lease.owner,
                  "b_run_id": lease.run_id, "b_agent_id": lease.agent_id, "b_expires_at": micros(lease.expires_at),
                  "b_now": micros(now)}
        if replacing is not None:
            params.update(_held_params(replacing, "r_"))

        def take(conn: Connection) -> Lease:
            if (row := upsert.first(conn, params)) is not None:
                return Lease(lease.key, lease.owner, lease.run_id, lease.agent_id, lease.expires_at, int(row[0]))
            return _lease(conn.execute(_LEASE_ROW, params).one())

        return take

    async def renew_lease(self, lease: Lease) -> bool:
        params = {**_held_params(lease), "b_expires_at": micros(lease.expires_at)}
        return bool((await self.db.one(_SET_EXPIRY, params, write=True)).rowcount)

    async def release_lease(self, lease: Lease) -> None:
        # The row stays (expired) with its epoch: the next lease on the thread has a higher one.
        await self.db.one(_SET_EXPIRY, {**_held_params(lease), "b_expires_at": 0}, write=True)

    async def release_lease_unless(
        self, lease: Lease, keep: Callable[[list[PendingSignal]], bool],
    ) -> tuple[list[PendingSignal], bool]:
        """At a run's end: the thread's pending signals read, the lease released unless ``keep``
        says the next run takes it over (a queued message waits). On SQLite one transaction; on
        PostgreSQL one statement that releases the lease when nothing is pending, and a second
        one only when something is but ``keep`` lets it go (under READ COMMITTED a transaction
        would not make them atomic either: what is stored after the read is looked at by
        whoever stored it, or told to this replica, which looks again once the run has ended).
        ``keep([])`` is asked first: when it holds, the pending signals are read alone."""
        read = {"resource_id": lease.key[0], "thread_id": lease.key[1]}
        release = {**_held_params(lease), "b_expires_at": 0}

        def work(conn: Connection) -> tuple[list[PendingSignal], bool]:
            pending = [_pending(r) for r in _THREAD_PENDING.all(conn, read)]
            if keep(pending):
                return pending, False
            _SET_EXPIRY.rowcount(conn, release)
            return pending, True

        if self.db.dialect != "postgresql":
            return await self.db.write(work)
        if not keep([]):  # the usual end of a run: one statement when nothing is pending
            rows = (await self.db.one(_RELEASE_UNLESS_PENDING_PG, {**read, **_held_params(lease)}, write=True)).all()
            pending = [_pending(r) for r in rows if r.seq is not None]
            if not pending:
                return pending, True  # released (or no longer this run's: nothing to release)
        else:
            pending = [_pending(r) for r in (await self.db.one(_THREAD_PENDING, read)).all()]
        if keep(pending):
            return pending, False
        await self.db.one(_SET_EXPIRY, release, write=True)
        return pending, True

    async def list_leases(self) -> list[Lease]:
        query = select(thread_leases).where(thread_leases.c.expires_at > 0)
        return [_lease(r) for r in await self.db.read(_rows, query)]

    async def end_lost_runs(self, run_ids: Iterable[str] | None, now: datetime) -> list[str]:
        r = _runs.c
        gone: Any
        if run_ids is not None:
            wanted = list(run_ids)
            if not wanted:
                return []
            gone = r.id.in_(wanted)
        elif self.db.dialect == "sqlite":
            gone = true()  # one server process: when it starts, no run of it is running yet
        else:
            return []  # replicas: a run's lease may be another live replica's (takeovers reconcile)
        stmt = update(_runs).where(and_(r.status == "running", gone)).values(
            status="failed", finish_reason="error", ended_at=micros(now)).returning(r.id)
        return await self.db.write(lambda conn: [row[0] for row in conn.execute(stmt).all()])

    async def get_lease(self, key: ThreadKey | None = None, run_id: str = "") -> Lease | None:
        c = thread_leases.c
        query = select(thread_leases).where(c.expires_at > 0)  # a released lease is no lease
        if key is not None:
            query = query.where(c.resource_id == key[0], c.thread_id == key[1])
        if run_id:
            query = query.where(c.run_id == run_id)
        rows = await self.db.read(_rows, query.limit(1))
        return _lease(rows[0]) if rows else None

    # --- state channels -----------------------------------------------------------------------

    async def get_state(self, key: ThreadKey, channel: str) -> StateChannel | None:
        c = state_channels.c
        rows = await self.db.read(_rows, select(state_channels).where(
            c.resource_id == key[0], c.thread_id == key[1], c.channel == channel))
        row = rows[0] if rows else None
        return StateChannel(row.channel, row.cache_key, row.mode, row.version, row.last_signal_id) if row else None

    async def put_state(self, key: ThreadKey, state: StateChannel, expected_version: int | None = None) -> bool:
        c = state_channels.c
        values = {"cache_key": state.cache_key, "mode": state.mode, "version": state.version,
                  "last_signal_id": state.last_signal_id}
        stmt = self._insert(state_channels).values(
            resource_id=key[0], thread_id=key[1], channel=state.id, **values)
        if expected_version is None:
            upsert = stmt.on_conflict_do_update(index_elements=["resource_id", "thread_id", "channel"], set_=values)
            await self.db.write(lambda conn: conn.execute(upsert))
            return True
        if expected_version == 0:
            first = stmt.on_conflict_do_update(  # none yet, or one put back to version 0
                index_elements=["resource_id", "thread_id", "channel"], set_=values, where=c.version == 0,
            ).returning(c.channel)
            return bool(await self.db.write(lambda conn: conn.execute(first).first() is not None))
        cas = state_channels.update().where(
            c.resource_id == key[0], c.thread_id == key[1], c.channel == state.id,
            c.version == expected_version).values(**values)
        return bool(await self.db.write(lambda conn: conn.execute(cas).rowcount == 1))

    # --- notifications ------------------------------------------------------------------------

    async def find_mergeable(
        self, key: ThreadKey, source: str, kind: str, dedupe_key: str, coalesce_key: str
    ) -> NotificationRecord | None:
        keys = []
        if dedupe_key:
            keys.append(notifications.c.dedupe_key == dedupe_key)
        if coalesce_key:
            keys.append(notifications.c.coalesce_key == coalesce_key)
        if not keys:
            return None
        c = notifications.c
        query = select(notifications).where(
            c.resource_id == key[0], c.thread_id == key[1], c.source == source, c.kind == kind,
            _MERGEABLE, or_(*keys),
        ).order_by(c.created_at).limit(1)
        rows = await self.db.read(_rows, query)
        return _record(rows[0]) if rows else None

    async def save_notification(self, record: NotificationRecord, pending: PendingSignal | None = None) -> bool:
        values = {
            "resource_id": record.key[0], "thread_id": record.key[1], "agent_id": record.agent_id,
            "source": record.source, "kind": record.kind, "priority": record.priority,
            "status": record.status, "summary": record.summary,
            "payload": _json(record.payload) if record.payload is not None else None,
            "dedupe_key": record.dedupe_key, "coalesce_key": record.coalesce_key,
            "coalesced_count": record.coalesced_count, "deliver_at": _opt_micros(record.deliver_at),
            "summary_at": _opt_micros(record.summary_at), "deliver_when_idle": record.deliver_when_idle,
            "delivery_attempts": record.delivery_attempts,
            "delivered_signal_id": record.delivered_signal_id, "summary_signal_id": record.summary_signal_id,
            "attributes": _json(record.attributes),
            "metadata": _json(record.metadata) if record.metadata is not None else None,
            "created_at": micros(record.create_time), "updated_at": micros(record.update_time),
        }
        c = notifications.c
        expected, values["version"] = record.version, record.version + 1
        cas = notifications.update().where(c.id == record.id, c.version == expected).values(**values)
        insert = self._insert(notifications).values(id=record.id, **values).on_conflict_do_nothing(
            index_elements=["id"]).returning(c.id)

        def work(conn: Connection) -> bool:
            if expected == 0 and conn.execute(insert).first() is not None:
                written = True
            else:
                written = conn.execute(cas).rowcount == 1
            if written and pending is not None:
                _add_pending(conn, pending)
            return written

        written = await self.db.write(work)
        if written:
            record.version += 1
        return bool(written)

    async def list_notifications(
        self, key: ThreadKey | None = None, statuses: Iterable[str] = ()
    ) -> list[NotificationRecord]:
        wanted = list(statuses)
        if key is not None and wanted:  # at every run's end (what waits for the thread to be idle)
            params = {"resource_id": key[0], "thread_id": key[1], **{f"s{i}": s for i, s in enumerate(wanted)}}
            return [_record(r) for r in (await self.db.one(_thread_notifications(len(wanted)), params)).all()]
        c = notifications.c
        query = select(notifications).order_by(c.created_at, c.id)
        if key is not None:
            query = query.where(c.resource_id == key[0], c.thread_id == key[1])
        if wanted:
            query = query.where(c.status.in_(wanted))
        return [_record(r) for r in await self.db.read(_rows, query)]


def _add_pending(conn: Connection, pending: PendingSignal) -> int:
    """Idempotent by message id (see ``SignalStore.add_pending``); returns the row's seq. A new
    signal is one statement: inserted unless a row or a stored message of that id exists."""
    m = pending.message
    c = pending_signals.c
    mine = (c.id == m.id, c.resource_id == pending.key[0], c.thread_id == pending.key[1])
    values = {"id": m.id, "resource_id": pending.key[0], "thread_id": pending.key[1], "kind": pending.kind,
              "agent_id": pending.agent_id, "type": m.type, "content": content_to_json(m.content),
              "options": _json(pending.options) if pending.options is not None else None,
              "created_at": micros(m.created_at)}
    fresh = ~exists().where(*mine) & ~exists().where(_messages.c.thread_id == pending.key[1],
                                                    _messages.c.id == m.id)
    row = select(*(literal(v, pending_signals.c[k].type) for k, v in values.items())).where(fresh)
    inserted = conn.execute(pending_signals.insert().from_select(list(values), row).returning(c.seq)).first()
    if inserted is not None:
        return int(inserted[0])
    held = conn.execute(select(c.seq, c.kind, c.agent_id).where(*mine)).first()
    if held is None:
        return 0  # consumed: the thread holds it
    if pending.kind == "accepted" and held.kind != "accepted":  # a retry, a leftover: upgraded
        conn.execute(pending_signals.update().where(*mine).values(
            kind="accepted", agent_id=held.agent_id or pending.agent_id))
    return int(held.seq)


def _rows(conn: Connection, query: Any, params: dict[str, Any] | None = None) -> list[Any]:
    return list(conn.execute(query, params).all())


def _pending(r: Any) -> PendingSignal:
    return PendingSignal(
        (r.resource_id, r.thread_id),
        Message(id=r.id, role="signal", type=r.type, content=content_from_json(r.content),
                created_at=from_micros(r.created_at), thread_id=r.thread_id, resource_id=r.resource_id),
        r.kind, agent_id=r.agent_id, options=json.loads(r.options) if r.options else None, seq=r.seq,
    )


def held_lease(conn: Connection, key: ThreadKey) -> Lease:
    """The thread's lease row (within a statement or transaction that found it held)."""
    return _lease(conn.execute(_LEASE_ROW, {"b_resource_id": key[0], "b_thread_id": key[1]}).one())


def _lease(r: Any) -> Lease:
    return Lease((r.resource_id, r.thread_id), r.owner, r.run_id, r.agent_id, from_micros(r.expires_at), r.epoch)


# The statements of every run on a thread, built once with bound parameters: building a
# statement (and its cache key) costs more than SQLite running it.
_lc = thread_leases.c
_pc = pending_signals.c
_nc = notifications.c
_ALL_PENDING = select(pending_signals).order_by(_pc.seq)
_THREAD_PENDING = Prepared(_ALL_PENDING.where(_pc.resource_id == bindparam("resource_id"),
                                              _pc.thread_id == bindparam("thread_id")))
_notification_statements: dict[int, Prepared] = {}


def _thread_notifications(statuses: int) -> Prepared:
    """A thread's notifications in ``statuses`` (parameters ``s0``, ``s1``, ...)."""
    stmt = _notification_statements.get(statuses)
    if stmt is None:
        stmt = _notification_statements[statuses] = Prepared(select(notifications).where(
            _nc.resource_id == bindparam("resource_id"), _nc.thread_id == bindparam("thread_id"),
            or_(*(_nc.status == bindparam(f"s{i}") for i in range(statuses))),
        ).order_by(_nc.created_at, _nc.id))
    return stmt


_LEASE_ROW = select(thread_leases).where(_lc.resource_id == bindparam("b_resource_id"),
                                         _lc.thread_id == bindparam("b_thread_id"))


def _held_where(prefix: str = "h_") -> Any:
    return ((_lc.resource_id == bindparam(prefix + "resource_id")) & (_lc.thread_id == bindparam(prefix + "thread_id"))
            & (_lc.owner == bindparam(prefix + "owner")) & (_lc.run_id == bindparam(prefix + "run_id"))
            & (_lc.epoch == bindparam(prefix + "epoch")))


def _held_params(lease: Lease, prefix: str = "h_") -> dict[str, Any]:
    return {prefix + "resource_id": lease.key[0], prefix + "thread_id": lease.key[1], prefix + "owner": lease.owner,
            prefix + "run_id": lease.run_id, prefix + "epoch": lease.epoch}


_SET_EXPIRY = Prepared(thread_leases.update().where(_held_where()).values(expires_at=bindparam("b_expires_at")))
_acquire_statements: dict[tuple[str, bool], Prepared] = {}


def _release_unless_pending_pg() -> Prepared:
    """PostgreSQL: the thread's pending signals read, and the lease released in the same
    statement when there are none. One row at least: ``released`` (0 or 1) and a pending
    signal's columns (``seq`` NULL when nothing is pending)."""
    pending = select(pending_signals).where(
        _pc.resource_id == bindparam("resource_id"), _pc.thread_id == bindparam("thread_id")).cte("pending")
    released = (thread_leases.update().where(_held_where(), ~exists(select(pending.c.seq)))
                .values(expires_at=0).returning(_lc.epoch).cte("released"))
    count = select(func.count().label("released")).select_from(released).subquery("r")
    return Prepared(select(count.c.released, *pending.c).select_from(count.outerjoin(pending, true()))
                    .order_by(pending.c.seq))


_RELEASE_UNLESS_PENDING_PG = _release_unless_pending_pg()


def _acquire_statement(dialect: str, replacing: bool) -> Prepared:
    """Take the lease when it is free (expired or released), or in place of ``r_*`` (a lease of
    this replica handed over): one upsert returning the new epoch, none when it is held."""
    key = (dialect, replacing)
    stmt = _acquire_statements.get(key)
    if stmt is None:
        insert = (postgresql.insert if dialect == "postgresql" else sqlite.insert)(thread_leases)
        values: dict[str, Any] = {"owner": bindparam("b_owner"), "run_id": bindparam("b_run_id"),
                  "agent_id": bindparam("b_agent_id"), "expires_at": bindparam("b_expires_at")}
        free = _lc.expires_at < bindparam("b_now")
        if replacing:
            free = free | _held_where("r_")
        stmt = _acquire_statements[key] = Prepared(insert.values(
            resource_id=bindparam("b_resource_id"), thread_id=bindparam("b_thread_id"), epoch=bindparam("b_epoch", 1),
            **values,
        ).on_conflict_do_update(
            index_elements=["resource_id", "thread_id"], set_={**values, "epoch": _lc.epoch + 1}, where=free,
        ).returning(_lc.epoch))
    return stmt


def _record(r: Any) -> NotificationRecord:
    return NotificationRecord(
        (r.resource_id, r.thread_id), r.source, r.kind, r.summary, priority=r.priority,
        status=r.status, payload=json.loads(r.payload) if r.payload is not None else None,
        dedupe_key=r.dedupe_key, coalesce_key=r.coalesce_key, coalesced_count=r.coalesced_count,
        deliver_at=_opt_time(r.deliver_at), summary_at=_opt_time(r.summary_at),
        deliver_when_idle=bool(r.deliver_when_idle), delivery_attempts=r.delivery_attempts,
        delivered_signal_id=r.delivered_signal_id, summary_signal_id=r.summary_signal_id,
        attributes=json.loads(r.attributes), metadata=json.loads(r.metadata) if r.metadata else None,
        agent_id=r.agent_id, id=r.id, create_time=from_micros(r.created_at),
        update_time=from_micros(r.updated_at), version=r.version,
    )


__all__ = ["SqlSignalStore"]
