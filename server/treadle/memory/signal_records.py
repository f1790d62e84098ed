"""What the thread runtime keeps: signals waiting for a run, state channels, the notification
inbox, and thread leases. One protocol (``SignalStore``); ``InMemorySignalStore`` here for tests
and storeless use, ``SqlSignalStore`` for SQLite and PostgreSQL.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal, Protocol, TypeAlias

from ..core.messages import Message, new_id, utcnow

ThreadKey: TypeAlias = tuple[str, str]
"""(resource id, thread id)."""

PendingKind: TypeAlias = Literal["persisted", "queued", "accepted"]
Priority: TypeAlias = Literal["low", "medium", "high", "urgent"]
PRIORITIES: tuple[Priority, ...] = ("low", "medium", "high", "urgent")
NotificationStatus: TypeAlias = Literal["pending", "delivered", "summarized", "discarded", "failed"]


@dataclass
class PendingSignal:
    """A signal stored to be taken by a later run: ``persisted`` ones join the next run on the
    thread; ``queued`` ones each start their own run, in order; ``accepted`` ones were accepted
    into a run (delivered, or the input of a wake or queued run) and stay until the step that
    took them in is stored (see ``signals/inbox.py``): a run whose runner died leaves them to
    the next one."""

    key: ThreadKey
    message: Message
    """The signal as its stored ``signal`` message (its metadata holds the signal)."""
    kind: PendingKind
    agent_id: str = ""
    options: dict[str, Any] | None = None
    """The run options (``if_idle.stream_options``) in their proto JSON form."""
    seq: int = 0


@dataclass
class StateChannel:
    id: str
    cache_key: str
    mode: str
    version: int
    last_signal_id: str


@dataclass
class Lease:
    """A replica's claim on a thread: at most one run per thread, across every replica on the
    store. ``expires_at`` moves on while the run renews it; after it, another replica may take
    the thread over."""

    key: ThreadKey
    owner: str
    """The replica (server process) holding it."""
    run_id: str
    agent_id: str
    expires_at: datetime
    epoch: int = 0
    """The fencing token: grows each time the thread's lease is taken (never goes back). Every
    write of the run is conditional on the thread's lease still having this epoch, this owner and
    run (``memory.fence``)."""

    @property
    def placeholder(self) -> bool:
        """Held by a replica taking the thread over, not by a run (its run id is no run's)."""
        return self.run_id.startswith(PLACEHOLDER_PREFIX)


PLACEHOLDER_PREFIX = "takeover_"
"""The run id of a lease a replica holds while it takes a thread over (never shown to clients)."""


@dataclass
class NotificationRecord:
    key: ThreadKey
    source: str
    kind: str
    summary: str
    priority: Priority = "medium"
    status: NotificationStatus = "pending"
    payload: Any = None
    dedupe_key: str = ""
    coalesce_key: str = ""
    coalesced_count: int = 0
    deliver_at: datetime | None = None
    summary_at: datetime | None = None
    deliver_when_idle: bool = False
    delivery_attempts: int = 0
    delivered_signal_id: str = ""
    summary_signal_id: str = ""
    attributes: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] | None = None
    agent_id: str = ""
    id: str = field(default_factory=lambda: new_id("ntf"))
    create_time: datetime = field(default_factory=utcnow)
    update_time: datetime = field(default_factory=utcnow)
    version: int = 0
    """The stored version this copy was read at (0: not stored yet); a save is a
    compare-and-set on it, so a stale copy never overwrites a newer record."""

    @property
    def mergeable(self) -> bool:
        """Still waiting to be sent in full: later notifications with its keys merge into it."""
        return self.status == "pending" or (
            self.status == "summarized" and (self.deliver_when_idle or self.deliver_at is not None)
        )

    @property
    def due_at(self) -> datetime | None:
        times = [t for t in (self.deliver_at, self.summary_at) if t is not None]
        return min(times) if times else None


class SignalStore(Protocol):
    """Every method is atomic on its own; the runtime orders them."""

    async def add_pending(self, pending: PendingSignal) -> None:
        """Store it; idempotent by message id: a row of that id already stored is kept (an
        ``accepted`` one turns ``accepted``), and a signal already stored in its thread as a
        message (consumed) is not stored again."""
        ...

    async def list_pending(self, key: ThreadKey | None = None) -> list[PendingSignal]:
        """Oldest first; every thread's when ``key`` is None (recovery after a restart)."""
        ...

    async def count_pending(self, key: ThreadKey) -> dict[str, int]:
        """How many signals of each kind the thread has waiting (the per-thread limits)."""
        ...

    async def remove_pending(self, ids: Iterable[str], fence: Lease | None = None) -> None:
        """The signals were taken by a run (refused with ``LeaseLostError``, removing nothing,
        when ``fence`` is no longer the thread's live lease)."""
        ...

    async def get_pending(self, key: ThreadKey, id: str) -> PendingSignal | None:
        """The thread's pending signal ``id`` (None: consumed, or never stored)."""
        ...

    async def take_pending(self, ids: Iterable[str], fence: Lease | None = None) -> list[PendingSignal]:
        """Remove and return those of ``ids`` still stored (a signal taken once, by one taker);
        fenced as ``remove_pending``."""
        ...

    async def acquire_lease(self, lease: Lease, now: datetime, replacing: Lease | None = None) -> Lease:
        """Take the thread for ``lease.run_id`` when it has no lease, an expired or released
        one, or the lease ``replacing`` (this owner's, same run and epoch: handed to the next
        run), in one statement, so two replicas never both get it; the epoch grows by one.
        Returns the lease that holds the thread afterwards: ``lease`` with its new epoch, or
        the one that holds it."""
        ...

    async def renew_lease(self, lease: Lease) -> bool:
        """Move ``expires_at`` on; False when the lease is no longer this owner's, run's and
        epoch's (one that expired but that nobody took is renewed: the run was the only one)."""
        ...

    async def release_lease(self, lease: Lease) -> None:
        """The run ended (a lease since re-taken for another run is left alone). The epoch stays."""
        ...

    async def release_lease_unless(
        self, lease: Lease, keep: Callable[[list[PendingSignal]], bool],
    ) -> tuple[list[PendingSignal], bool]:
        """At a run's end, in one transaction: the thread's pending signals, and the lease
        released unless ``keep(pending)`` (the next run takes it over). Returns the pending
        signals and whether the lease was released."""
        ...

    async def list_leases(self) -> list[Lease]:
        """Every thread's lease that was not released (a replica starting looks at them)."""
        ...

    async def end_lost_runs(self, run_ids: Iterable[str] | None, now: datetime) -> list[str]:
        """Record as failed the ``running`` runs whose runner is gone: those of ``run_ids``
        (a takeover names the dead run), or, given None, on SQLite (one server process) every
        one when the server starts, on PostgreSQL none (a takeover names them). Returns the ids
        it ended."""
        ...

    async def get_lease(self, key: ThreadKey | None = None, run_id: str = "") -> Lease | None:
        """The thread's lease, or the one of run ``run_id``, expired or not."""
        ...

    async def get_state(self, key: ThreadKey, channel: str) -> StateChannel | None: ...

    async def put_state(self, key: ThreadKey, state: StateChannel, expected_version: int | None = None) -> bool:
        """Store the channel's state; with ``expected_version``, only when the stored version is
        still that (0: no state stored yet), a compare-and-set: False when another sender moved
        the channel first (nothing written)."""
        ...

    async def find_mergeable(
        self, key: ThreadKey, source: str, kind: str, dedupe_key: str, coalesce_key: str
    ) -> NotificationRecord | None:
        """A ``mergeable`` record of the same thread, source and kind sharing a dedupe or
        coalesce key."""
        ...

    async def save_notification(self, record: NotificationRecord, pending: PendingSignal | None = None) -> bool:
        """Compare-and-set: store ``record`` when the stored one is still at ``record.version``
        (or absent, for version 0), then ``record.version`` grows by one; False (nothing
        written) when another writer changed it first. ``pending`` is stored in the same
        transaction (a delivery claimed with its signal: one cannot be without the other)."""
        ...

    async def list_notifications(
        self, key: ThreadKey | None = None, statuses: Iterable[str] = ()
    ) -> list[NotificationRecord]:
        """Oldest first."""
        ...


class InMemorySignalStore:
    """For tests and single-process use without persistence."""

    def __init__(self) -> None:
        self._pending: dict[str, PendingSignal] = {}
        self._states: dict[tuple[ThreadKey, str], StateChannel] = {}
        self._notifications: dict[str, NotificationRecord] = {}
        self._leases: dict[ThreadKey, Lease] = {}
        self._epochs: dict[ThreadKey, int] = {}
        """The epoch of each thread's last released lease."""
        self._seq = 0
        self._lock = asyncio.Lock()

    async def add_pending(self, pending: PendingSignal) -> None:
        held = self._pending.get(pending.message.id)
        if held is not None:
            if pending.kind == "accepted":
                held.kind = "accepted"
                held.agent_id = held.agent_id or pending.agent_id
            pending.seq = held.seq
            return
        self._seq += 1
        pending.seq = self._seq
        self._pending[pending.message.id] = pending

    async def list_pending(self, key: ThreadKey | None = None) -> list[PendingSignal]:
        out = [p for p in self._pending.values() if key is None or p.key == key]
        return sorted(out, key=lambda p: p.seq)

    async def count_pending(self, key: ThreadKey) -> dict[str, int]:
        counts: dict[str, int] = {}
        for p in self._pending.values():
            if p.key == key:
                counts[p.kind] = counts.get(p.kind, 0) + 1
        return counts

    def _fenced(self, fence: Lease | None) -> None:
        if fence is not None:
            held = self._leases.get(fence.key)
            if held is None or not _same(held, fence):
                raise _lease_lost(fence)

    async def remove_pending(self, ids: Iterable[str], fence: Lease | None = None) -> None:
        self._fenced(fence)
        for i in ids:
            self._pending.pop(i, None)

    async def get_pending(self, key: ThreadKey, id: str) -> PendingSignal | None:
        held = self._pending.get(id)
        return held if held is not None and held.key == key else None

    async def take_pending(self, ids: Iterable[str], fence: Lease | None = None) -> list[PendingSignal]:
        self._fenced(fence)
        return [p for i in ids if (p := self._pending.pop(i, None)) is not None]

    async def acquire_lease(self, lease: Lease, now: datetime, replacing: Lease | None = None) -> Lease:
        held = self._leases.get(lease.key)
        if held is None or held.expires_at < now or (replacing is not None and _same(held, replacing)):
            taken = replace(lease, epoch=(held.epoch if held is not None else self._epochs.get(lease.key, 0)) + 1)
            self._leases[lease.key] = taken
            return replace(taken)
        return replace(held)

    async def renew_lease(self, lease: Lease) -> bool:
        held = self._leases.get(lease.key)
        if held is None or not _same(held, lease):
            return False
        held.expires_at = lease.expires_at
        return True

    async def release_lease(self, lease: Lease) -> None:
        held = self._leases.get(lease.key)
        if held is not None and _same(held, lease):
            self._epochs[lease.key] = held.epoch  # the next lease's epoch is higher
            del self._leases[lease.key]

    async def release_lease_unless(
        self, lease: Lease, keep: Callable[[list[PendingSignal]], bool],
    ) -> tuple[list[PendingSignal], bool]:
        pending = await self.list_pending(lease.key)
        if keep(pending):
            return pending, False
        await self.release_lease(lease)
        return pending, True

    async def list_leases(self) -> list[Lease]:
        return [replace(held) for held in self._leases.values()]

    async def end_lost_runs(self, run_ids: Iterable[str] | None, now: datetime) -> list[str]:
        return []  # no run records here (the memory store keeps them)

    async def get_lease(self, key: ThreadKey | None = None, run_id: str = "") -> Lease | None:
        for held in self._leases.values():
            if (key is None or held.key == key) and (not run_id or held.run_id == run_id):
                return replace(held)
        return None

    async def get_state(self, key: ThreadKey, channel: str) -> StateChannel | None:
        state = self._states.get((key, channel))
        return replace(state) if state else None

    async def put_state(self, key: ThreadKey, state: StateChannel, expected_version: int | None = None) -> bool:
        held = self._states.get((key, state.id))
        if expected_version is not None and (held.version if held is not None else 0) != expected_version:
            return False
        self._states[(key, state.id)] = replace(state)
        return True

    async def find_mergeable(
        self, key: ThreadKey, source: str, kind: str, dedupe_key: str, coalesce_key: str
    ) -> NotificationRecord | None:
        for r in self._notifications.values():
            if r.key != key or r.source != source or r.kind != kind or not r.mergeable:
                continue
            if (dedupe_key and r.dedupe_key == dedupe_key) or (
                coalesce_key and r.coalesce_key == coalesce_key
            ):
                return replace(r)
        return None

    async def save_notification(self, record: NotificationRecord, pending: PendingSignal | None = None) -> bool:
        held = self._notifications.get(record.id)
        if (held.version if held is not None else 0) != record.version:
            return False
        record.version += 1
        self._notifications[record.id] = replace(record)
        if pending is not None:
            await self.add_pending(pending)
        return True

    async def list_notifications(
        self, key: ThreadKey | None = None, statuses: Iterable[str] = ()
    ) -> list[NotificationRecord]:
        wanted = set(statuses)
        out = [
            replace(r) for r in self._notifications.values()
            if (key is None or r.key == key) and (not wanted or r.status in wanted)
        ]
        return sorted(out, key=lambda r: r.create_time)


def _same(held: Lease, lease: Lease) -> bool:
    return (held.owner, held.run_id, held.epoch) == (lease.owner, lease.run_id, lease.epoch)


def _lease_lost(fence: Lease) -> Exception:
    from .fence import LeaseLostError

    return LeaseLostError(fence)


__all__ = [
    "PLACEHOLDER_PREFIX", "PRIORITIES", "InMemorySignalStore", "Lease", "NotificationRecord", "NotificationStatus",
    "PendingKind", "PendingSignal", "Priority", "SignalStore", "StateChannel", "ThreadKey",
]
