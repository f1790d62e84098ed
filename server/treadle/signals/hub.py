"""Thread subscriptions: every chunk of every run on a thread, and its active-run changes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TypeAlias

from ..core.chunks import Chunk
from .store import ThreadKey


@dataclass(frozen=True)
class ActiveRunChanged:
    """A run started (``run_id`` set) or ended (``run_id`` empty) on the thread."""

    run_id: str = ""
    agent_id: str = ""


Event: TypeAlias = Chunk | ActiveRunChanged


CHANNEL_LOST = ("this server lost its connection to the other servers and may have missed events of the "
                "thread; subscribe again with the `position` of the last response you handled: what "
                "was stored meanwhile is replayed")
CHANNEL_DOWN = ("this server cannot hear the other servers now (its connection to them is being "
                "replaced) and would miss their runs; retry, on this server or another")
DEFAULT_MAX_BACKLOG_BYTES = 8 << 20


class SubscriptionGapError(Exception):
    """This server may have missed events of the thread: the subscription ends with this
    (UNAVAILABLE) instead of going on with a silent gap."""


class Subscription:
    """One subscriber's events, from the moment it subscribed; ``close`` unsubscribes.

    What waits to be sent is bounded (``max_backlog_bytes``, estimated from the events' text):
    a subscriber that falls that far behind is cut off, its backlog freed at once, and
    ``overflowed`` set; its stream then ends, so one slow reader never holds the server's memory.
    """

    def __init__(self, hub: ThreadHub, key: ThreadKey, max_backlog_bytes: int = DEFAULT_MAX_BACKLOG_BYTES) -> None:
        self._hub = hub
        self.key = key
        self.queue: asyncio.Queue[tuple[Event, int] | None] = asyncio.Queue()
        self.max_backlog_bytes = max_backlog_bytes
        self.backlog = 0
        self.overflowed = False
        self.gap = ""
        """Set when this server may have missed events of the thread (``ThreadHub.gap``): the
        stream ends, and the subscriber is told why (never a silent gap)."""

    def put(self, event: Event) -> None:
        if self.overflowed:
            return
        size = _estimate(event)
        if self.backlog + size > self.max_backlog_bytes:
            self.overflowed = True
            self._hub._drop(self)
            self.queue = asyncio.Queue()  # the backlog goes now, not when the reader catches up
            self.backlog = 0
            self.queue.put_nowait(None)
            return
        self.backlog += size
        self.queue.put_nowait((event, size))

    def _take(self, item: tuple[Event, int]) -> Event:
        self.backlog -= item[1]
        return item[0]

    async def events(self) -> AsyncIterator[Event]:
        while (item := await self.queue.get()) is not None:
            yield self._take(item)

    def batch(self, max_bytes: int | None = None) -> list[Event]:
        """What else is already queued (to send several chunks in one response), up to about
        ``max_bytes``: the rest stays queued, counted in the backlog, until the reader asks."""
        out: list[Event] = []
        taken = 0
        while not self.queue.empty() and (max_bytes is None or taken < max_bytes):
            item = self.queue.get_nowait()
            if item is None:
                self.queue.put_nowait(None)
                break
            taken += item[1]
            out.append(self._take(item))
        return out

    def close(self) -> None:
        self._hub._drop(self)
        self.queue.put_nowait(None)


def _estimate(event: Event) -> int:
    """About how many bytes ``event`` holds: its payload's strings, plus a fixed overhead."""
    if not isinstance(event, Chunk):
        return 64
    size = 128
    payload = getattr(event.payload, "__dict__", None) or {}
    for value in payload.values():
        if isinstance(value, (str, bytes)):
            size += len(value)
        elif isinstance(value, (list, dict)):
            size += 64 * len(value)
    return size


class ThreadHub:
    """In-process fan-out. A subscriber never slows a run down: one that falls
    ``max_backlog_bytes`` behind is cut off instead (``Subscription.overflowed``).
    ``forward``, when set, also gets every event published here (for the other replicas)."""

    def __init__(self) -> None:
        self._subs: dict[ThreadKey, set[Subscription]] = {}
        self.forward: Callable[[ThreadKey, Event], None] | None = None
        self.forward_batch: Callable[[ThreadKey, list[Chunk]], None] | None = None
        """Like ``forward``, for the chunks of ``publish_batch`` (sent on as one message)."""
        self.max_backlog_bytes = DEFAULT_MAX_BACKLOG_BYTES

    def subscribe(self, key: ThreadKey) -> Subscription:
        sub = Subscription(self, key, self.max_backlog_bytes)
        self._subs.setdefault(key, set()).add(sub)
        return sub

    def publish(self, key: ThreadKey, event: Event) -> None:
        if self.forward is not None:
            self.forward(key, event)
        self.publish_local(key, event)

    def publish_batch(self, key: ThreadKey, chunks: list[Chunk]) -> None:
        """Several chunks of a run, in order, as ``publish`` would one by one."""
        if self.forward_batch is not None:
            self.forward_batch(key, chunks)
        elif self.forward is not None:
            for chunk in chunks:
                self.forward(key, chunk)
        subs = self._subs.get(key)
        if subs:
            for sub in list(subs):
                for chunk in chunks:
                    sub.put(chunk)

    def publish_local(self, key: ThreadKey, event: Event) -> None:
        """An event to this process's subscribers only (one another replica published)."""
        for sub in list(self._subs.get(key, ())):
            sub.put(event)

    def gap(self, reason: str) -> None:
        """Every subscription here may have missed events: each ends with an error."""
        for subs in list(self._subs.values()):
            for sub in list(subs):
                sub.gap = reason
                self._drop(sub)
                sub.queue.put_nowait(None)

    def subscribers(self, key: ThreadKey) -> int:
        return len(self._subs.get(key, ()))

    def _drop(self, sub: Subscription) -> None:
        subs = self._subs.get(sub.key)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self._subs[sub.key]


__all__ = ["CHANNEL_DOWN", "CHANNEL_LOST", "ActiveRunChanged", "Event", "Subscription", "SubscriptionGapError", "ThreadHub"]
