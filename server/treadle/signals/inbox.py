"""The durable inbox: a signal accepted into a run is stored before the run sees it, and stays
stored until the step that took it in is stored.

A delivered signal is first written as a pending row of kind ``accepted`` (its id is the id of
the message it becomes in the thread), then put into the run's in-memory ``Inbox``. The memory
store deletes the row in the same transaction that stores the message (``SqlStore`` saves), so:

- a replica that dies after taking the signal in but before storing the step leaves the row:
  whoever runs the thread next (takeover, restart) delivers it;
- a signal is never stored twice (the row and the message never both exist after a commit), and
  re-adding a signal whose message is stored already changes nothing;
- an inbox that closed while a signal was on its way (the run just ended) leaves the row, and
  the thread's next run takes it.

``DurableInbox`` puts each signal once per run (a second put of the same id is a no-op) and
remembers what its run took in, so the run's end can tell what it saw from what it left.
"""

from __future__ import annotations

from ..core.chunks import Chunk
from ..core.messages import Message, utcnow
from ..loop.inbox import Delivery, Inbox
from .signal import Signal
from .store import PendingSignal, SignalStore, ThreadKey


class DurableInbox(Inbox):
    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()
        """Ids of every signal put (taken or not): a second put of one is a no-op."""
        self.taken: set[str] = set()
        """Ids of the signals the loop took in (the model saw them)."""

    def put(self, message: Message, chunk: Chunk) -> bool:
        if self.closed:
            return False
        if message.id in self.seen:
            return True
        self.seen.add(message.id)
        return super().put(message, chunk)

    def take(self) -> list[Delivery]:
        items = super().take()
        self.taken.update(d.message.id for d in items)
        return items

    def close(self) -> list[Delivery]:
        taken = set(self.taken)
        items = super().close()  # hands back what the loop never took: not taken
        self.taken = taken
        return items


def is_accepted(pending: PendingSignal) -> bool:
    """A signal accepted for delivery into a run (not one stored for the next run only)."""
    if pending.kind == "accepted":
        return True
    meta = pending.message.content.metadata or {}
    return pending.kind == "persisted" and bool(meta.get("signal", {}).get("acceptedAt"))


async def accept(store: SignalStore, key: ThreadKey, agent_id: str, signal: Signal) -> None:
    """Store ``signal`` as accepted for a run on ``key`` (before any run sees it)."""
    if signal.accepted_at is None:
        signal.accepted_at = utcnow()
    message = signal.to_message(thread_id=key[1], resource_id=key[0])
    await store.add_pending(PendingSignal(key, message, "accepted", agent_id=agent_id))


__all__ = ["DurableInbox", "accept", "is_accepted"]
