"""Fencing: a run's writes are conditional on its thread's lease, in the same transaction.

A run holds its thread's lease (``Lease``: owner, run id, epoch). Every write the run makes (its
messages, its run record, the signals it takes in) first reads the lease row with a shared lock
(``FOR SHARE`` on PostgreSQL; SQLite writes one at a time anyway) and goes on only while the row
still names this owner, run and epoch. Another replica can run the thread only by taking the
lease, which moves the epoch on (after it expired), so a replica that lost the lease (paused past
its TTL, partitioned, slow) writes nothing: its transaction raises ``LeaseLostError`` and rolls
back. A takeover waits for a write holding the shared lock to commit, and every later write of
the old run sees the new epoch. (Expiry is when others may take the lease; the epoch is what
decides whose writes count.)

The thread runtime sets ``current_fence`` in the context of the run's task, so the memory store
fences what the agent loop writes without the loop knowing about leases.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Connection, String, bindparam, column, select, table

from ..core.errors import FailedPreconditionError
from .engine import Prepared
from .signal_records import Lease

current_fence: ContextVar[Lease | None] = ContextVar("treadle_fence", default=None)
"""The lease the writes of the current run are conditional on (None: not a thread's run)."""

_leases = table(
    "thread_leases", column("resource_id", String), column("thread_id", String), column("owner", String),
    column("run_id", String), column("epoch", BigInteger),
)


@dataclass
class LeaseClaim:
    """A thread's lease to take in the run's first write (``begin_run``), in the transaction that
    opens the run: the run is recorded only if the lease is taken, and the lease is taken only
    if the run is recorded (a run id must be new). The lease the transaction took becomes the
    fence of the run's later writes (``current_fence``)."""

    take: Callable[[Connection], Lease]
    """Takes the lease within the transaction (when free): the thread's lease after it, this
    run's or another's (the signal store's ``lease_taker``)."""
    owner: str
    run_id: str
    taken: Lease | None = None
    """The lease taken, once the transaction committed."""
    lease: Lease | None = None
    """The lease to take (its epoch the store's to set), ``now`` and the lease of this replica it
    may replace: what a store that takes it in one statement of its own needs."""
    now: datetime | None = None
    replacing: Lease | None = None


current_claim: ContextVar[LeaseClaim | None] = ContextVar("treadle_lease_claim", default=None)
"""The lease the current run's first write takes (None: none, or held already)."""


class LeaseHeldError(FailedPreconditionError):
    """The thread's lease is held by another run (on this replica or another): the transaction
    that would have taken it wrote nothing."""

    def __init__(self, lease: Lease) -> None:
        super().__init__(f"thread {lease.key[1]!r} is held by run {lease.run_id} ({lease.owner})")
        self.lease = lease


def take_claim(conn: Connection, claim: LeaseClaim) -> Lease:
    """Within a write transaction: take ``claim``'s lease, or raise ``LeaseHeldError``."""
    held = claim.take(conn)
    if (held.owner, held.run_id) != (claim.owner, claim.run_id):
        raise LeaseHeldError(held)
    return held


class LeaseLostError(FailedPreconditionError):
    """The run no longer holds its thread's lease: another replica runs the thread (or may)."""

    def __init__(self, fence: Lease) -> None:
        super().__init__(
            f"run {fence.run_id} no longer holds the lease on thread {fence.key[1]!r}: another "
            "replica has taken the thread over, or may, so this run stops and writes nothing more")
        self.fence = fence


_c = _leases.c
_FENCE = select(_c.epoch).where(
    _c.resource_id == bindparam("resource_id"), _c.thread_id == bindparam("thread_id"),
    _c.owner == bindparam("owner"), _c.run_id == bindparam("run_id"), _c.epoch == bindparam("epoch"),
)
"""Built once: every write of a run makes this check, and building a query costs more than
running it."""
_FENCE_SHARED = _FENCE.with_for_update(read=True)
_PREPARED = {"postgresql": Prepared(_FENCE_SHARED), "sqlite": Prepared(_FENCE)}


def fence_params(fence: Lease, prefix: str = "") -> dict[str, Any]:
    """The parameters of the fence check (``prefix``: of ``fenced_where``'s)."""
    return {prefix + "resource_id": fence.key[0], prefix + "thread_id": fence.key[1],
            prefix + "owner": fence.owner, prefix + "run_id": fence.run_id, prefix + "epoch": fence.epoch}


def fenced_where(dialect: str) -> Any:
    """``EXISTS`` the fence (shared-locked on PostgreSQL), for the ``WHERE`` of a run's single
    write: the lease is checked and locked by that statement, before it changes anything.
    Its parameters are ``fence_params(fence, "f_")``."""
    query = select(_c.epoch).where(
        _c.resource_id == bindparam("f_resource_id"), _c.thread_id == bindparam("f_thread_id"),
        _c.owner == bindparam("f_owner"), _c.run_id == bindparam("f_run_id"), _c.epoch == bindparam("f_epoch"),
    )
    return (query.with_for_update(read=True) if dialect == "postgresql" else query).exists()


def check_fence(conn: Connection, fence: Lease | None) -> None:
    """Within a write transaction: raise ``LeaseLostError`` unless ``fence`` is still the
    thread's lease (and keep it so until the transaction ends)."""
    if fence is None:
        return
    if _PREPARED[conn.dialect.name].first(conn, fence_params(fence)) is None:
        raise LeaseLostError(fence)


__all__ = ["LeaseClaim", "LeaseHeldError", "LeaseLostError", "check_fence", "current_claim", "current_fence",
           "fence_params", "fenced_where", "take_claim"]
