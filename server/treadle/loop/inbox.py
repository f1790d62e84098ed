"""Signals handed to a running loop, taken in at its next step boundary.

The thread runtime puts ``(message, chunk)`` deliveries; the loop drains them before each step
(each becomes its own turn: the message joins the list, the chunk goes to the run's stream) and,
when the model has answered, runs another step if any arrived. ``close`` ends delivery and hands
back what the loop never took, so nothing put is ever lost.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.chunks import Chunk
from ..core.messages import Message


@dataclass
class Delivery:
    message: Message
    chunk: Chunk


class Inbox:
    def __init__(self) -> None:
        self._items: list[Delivery] = []
        self._closed = False

    def put(self, message: Message, chunk: Chunk) -> bool:
        """False once the run has ended: the caller must route the signal elsewhere."""
        if self._closed:
            return False
        self._items.append(Delivery(message, chunk))
        return True

    @property
    def pending(self) -> bool:
        return bool(self._items)

    def __len__(self) -> int:
        """Deliveries the run has not taken in yet."""
        return len(self._items)

    @property
    def closed(self) -> bool:
        return self._closed

    def take(self) -> list[Delivery]:
        items, self._items = self._items, []
        return items

    def close(self) -> list[Delivery]:
        """No more deliveries; returns those the loop did not take."""
        self._closed = True
        return self.take()
