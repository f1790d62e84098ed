"""A run's opening as the thread runtime makes it: with the thread's lease taken in the same
write (``begin_run`` under a ``LeaseClaim``), which on PostgreSQL is one statement."""

from __future__ import annotations

from datetime import datetime, timedelta

from treadle.core.messages import Message
from treadle.memory import SqlStore
from treadle.memory.fence import LeaseClaim, current_claim, current_fence
from treadle.memory.signal_records import Lease
from treadle.memory.signal_sql import SqlSignalStore


def claim(store: SqlStore, thread: str, run_id: str, now: datetime, replica: str = "replica-a",
          resource: str = "u1") -> LeaseClaim:
    """The lease a run's opening takes, as the thread runtime hands it to ``begin_run``."""
    lease = Lease((resource, thread), replica, run_id, "agent", now + timedelta(seconds=30))
    return LeaseClaim(SqlSignalStore(store.engine).lease_taker(lease, now), replica, run_id, lease=lease, now=now)


async def open_claimed(store: SqlStore, thread: str, run_id: str, now: datetime, input: list[Message],
                       resource: str = "u1", history: int = 10) -> list[Message]:
    """``begin_run`` with ``claim``'s lease: the history it read (the lease is taken, or this raises)."""
    taking = claim(store, thread, run_id, now, resource=resource)
    claimed, fence = current_claim.set(taking), current_fence.set(None)
    try:
        read = await store.begin_run(run_id, "agent", resource, thread, title=None, metadata=None,
                                     history=history, input=input)
    finally:
        current_claim.reset(claimed)
        current_fence.reset(fence)
    assert taking.taken is not None and taking.taken.run_id == run_id
    return read
