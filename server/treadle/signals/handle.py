"""A caller's ``Stream`` on a thread, without a task or queue between the run and the call.

``ThreadRuntime.open`` makes the caller's run the thread's active run (when the thread is idle)
and opens it with ``AgentLoop.open``, fenced by its lease; ``ThreadRunHandle`` hands the run's
batches of chunks to the caller as ``RunHandle`` does, and publishes each batch to the thread's
subscribers (and to the other replicas, as one message) on its way. The run is still a task the
runtime can stop: ``AbortRun`` and a lost lease cancel it (``stop``), and the caller then gets an
``abort`` chunk, as from any run on a thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from ..core.chunks import AbortPayload, Chunk
from ..loop.run import RunHandle
from .hub import ActiveRunChanged, ThreadHub
from .store import ThreadKey


class ThreadRunHandle:
    """A run opened by ``ThreadRuntime.open``: the interface of ``RunHandle``."""

    def __init__(self, handle: RunHandle, hub: ThreadHub, key: ThreadKey, agent_id: str, active: bool,
                 finish: Callable[[], Any] | None = None) -> None:
        self.run_id = handle.run_id
        self._handle = handle
        self._hub = hub
        self._key = key
        self._agent_id = agent_id
        self._announce = active
        """The run is the thread's active run: its start is published before its first chunk."""
        self._finish = finish
        self.reason = ""
        """Why the run was stopped from outside (empty: it was not)."""
        self._ended = False

    @property
    def task(self) -> asyncio.Task[None]:
        return self._handle.task

    def stop(self, reason: str) -> None:
        """End the run from outside (``AbortRun``, a lost lease), whether or not the caller reads."""
        task = self._handle.task
        if not task.done():
            self.reason = self.reason or reason
            task.cancel()

    async def batch(self) -> list[Chunk] | None:
        if self._ended:
            return None
        try:
            chunks = await self._handle.batch()
        except asyncio.CancelledError:
            if not (self.reason and self._handle.task.cancelled()):
                raise
            self._ended = True
            chunks = [Chunk.of(AbortPayload(self.reason), run_id=self.run_id)]
        if chunks:
            if self._announce:
                self._announce = False
                self._hub.publish(self._key, ActiveRunChanged(self.run_id, self._agent_id))
            self._hub.publish_batch(self._key, chunks)
        return chunks

    def interrupt(self) -> None:
        self._handle.interrupt()

    async def close(self) -> None:
        """Cancel the run unless it ended; then the thread's next run may start."""
        try:
            await self._handle.close()
        finally:
            finish, self._finish = self._finish, None
            if finish is not None:
                await finish()


__all__ = ["ThreadRunHandle"]
