"""The store protocol the thread runtime sees (defined with the other storage in ``memory``)."""

from ..memory.signal_records import (
    PRIORITIES,
    InMemorySignalStore,
    Lease,
    NotificationRecord,
    NotificationStatus,
    PendingKind,
    PendingSignal,
    Priority,
    SignalStore,
    StateChannel,
    ThreadKey,
)

__all__ = [
    "PRIORITIES", "InMemorySignalStore", "Lease", "NotificationRecord", "NotificationStatus",
    "PendingKind", "PendingSignal", "Priority", "SignalStore", "StateChannel", "ThreadKey",
]
