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
                "thread; subscribe again (ListMessages has what was stored meanwhile)")


class SubscriptionGapError(Exception):
    """This server may have missed events of the thread: the subscription ends with this
    (UNAVAILABLE) instead of going on with a silent gap."""


class Gap:
    """Queued to a subscription that may have missed events (see ``ThreadHub.gap``)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


class Subscription:
    """One subscriber's events, from the moment it subscribed; ``close`` unsubscribes."""

    def __init__(self, hub: ThreadHub, key: ThreadKey) -> None:
        self._hub = hub
        self.key = key
        self.queue: asyncio.Queue[Event | None] = asyncio.Queue()

    async def events(self) -> AsyncIterator[Event]:
        while (event := await self.queue.get()) is not None:
            if isinstance(event, Gap):
                raise SubscriptionGapError(event.reason)
            yield event

    def batch(self) -> list[Event]:
        """Whatever else is already queued (to send several chunks in one response)."""
        out: list[Event] = []
        while not self.queue.empty():
            event = self.queue.get_nowait()
            if event is None:
                self.queue.put_nowait(None)
                break
            out.append(event)
        return out

    def close(self) -> None:
        self._hub._drop(self)
        self.queue.put_nowait(None)


class ThreadHub:
    """In-process fan-out. Queues are unbounded: a subscriber never slows a run down.
    ``forward``, when set, also gets every event published here (for the other replicas)."""

    def __init__(self) -> None:
        self._subs: dict[ThreadKey, set[Subscription]] = {}
        self.forward: Callable[[ThreadKey, Event], None] | None = None

    def subscribe(self, key: ThreadKey) -> Subscription:
        sub = Subscription(self, key)
        self._subs.setdefault(key, set()).add(sub)
        return sub

    def publish(self, key: ThreadKey, event: Event) -> None:
        if self.forward is not None:
            self.forward(key, event)
        self.publish_local(key, event)

    def publish_local(self, key: ThreadKey, event: Event) -> None:
        """An event to this process's subscribers only (one another replica published)."""
        for sub in self._subs.get(key, ()):
            sub.queue.put_nowait(event)

    def gap(self, reason: str) -> None:
        """Every subscription here may have missed events: each ends with an error."""
        for subs in list(self._subs.values()):
            for sub in list(subs):
                sub.queue.put_nowait(Gap(reason))  # type: ignore[arg-type]

    def subscribers(self, key: ThreadKey) -> int:
        return len(self._subs.get(key, ()))

    def _drop(self, sub: Subscription) -> None:
        subs = self._subs.get(sub.key)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self._subs[sub.key]


__all__ = ["CHANNEL_LOST", "ActiveRunChanged", "Event", "Gap", "Subscription", "SubscriptionGapError", "ThreadHub"]
