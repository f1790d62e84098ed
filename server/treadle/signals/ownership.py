"""Who runs a thread: the lease a run holds, its fencing, and the task that is the run.

- **One runner, fenced.** A run's lease carries an epoch (``Lease.epoch``, grown by the store
  each time the lease is taken). The run's task runs in a context holding that lease
  (``fenced``), so every write the run makes to the store is conditional on it in the same
  transaction (``memory.fence``): once another replica took the thread, the old run can store
  nothing.
- **Renewed early, stopped in time** (``keep_lease``): the lease is renewed at a third of its
  TTL; a renewal that is refused (another replica took the thread: the epoch moved on) stops the
  run at once; renewals that fail (the database is unreachable) are retried until a margin before
  the lease expires, and then the run is stopped, before another replica may take the thread.
  A lease that expired while this process stalled but that nobody took (same epoch) is simply
  renewed: taking a lease is what moves the epoch, so the run was still the only runner.
- **No model call without the thread** (``check_lease``): a model call cannot be fenced, so the
  run makes one only while its lease has time left, renewing it first when this process stalled
  past its renewals; a run whose thread was taken over stops before calling the model.
- **Every run on a thread is a task of the runtime** (``OwnedRun``), however it started: woken
  by a signal, queued, or a caller's ``Generate``/``Stream`` with memory. Cancelling the task is
  what ``AbortRun`` and a lost lease do; the caller of a ``Generate``/``Stream`` then sees the
  run end (an ``abort`` chunk, or ``ABORTED``), not a run that goes on without it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, TypeVar

from ..core.chunks import AbortPayload, Chunk
from ..core.errors import TreadleError
from ..loop.step import current_lease_check
from ..memory.fence import LeaseLostError, current_fence
from .store import Lease, SignalStore

log = logging.getLogger(__name__)

T = TypeVar("T")

RENEW_FRACTION = 3
"""Renew at a third of the TTL."""
STOP_MARGIN = 0.2
"""Stop a run that could not renew when this fraction of the TTL is left before its lease ends."""


class RunAbortedError(TreadleError):
    """A caller's run on a thread was stopped: ``AbortRun``, or its replica lost the lease."""

    def __init__(self, run_id: str, reason: str) -> None:
        super().__init__(f"run {run_id} was stopped: {reason}")
        self.run_id = run_id
        self.reason = reason


def fenced(lease: Lease | None, check: Callable[[], Awaitable[None]] | None = None) -> contextvars.Context:
    """A context whose store writes are conditional on ``lease`` and whose model calls wait for
    ``check`` (``current_lease_check``; run the run's task in it)."""
    context = contextvars.copy_context()
    context.run(current_fence.set, lease)
    context.run(current_lease_check.set, check)
    return context


async def keep_lease(
    store: SignalStore, get: Callable[[], Lease | None], put: Callable[[Lease], None], ttl: float,
    clock: Callable[[], datetime], stop: Callable[[str], None],
) -> None:
    """Renew the lease ``get()`` returns every third of its TTL until it is None; ``stop(reason)``
    the run and return when it cannot be kept: the renewal is refused (another replica took the
    thread: a new epoch), or the store cannot be reached until a margin before the lease ends."""
    retry = max(0.05, ttl / 20)
    while get() is not None:
        await asyncio.sleep(ttl / RENEW_FRACTION)
        while (lease := get()) is not None:
            renewed = replace(lease, expires_at=clock() + timedelta(seconds=ttl))
            try:
                kept = await store.renew_lease(renewed)
            except Exception:
                left = (lease.expires_at - clock()).total_seconds()
                if left <= ttl * STOP_MARGIN:
                    stop(f"its lease could not be renewed (the store is unreachable) and ends in {max(left, 0):.1f} s")
                    return
                log.warning("renewing the lease of run %s failed; retrying", lease.run_id, exc_info=True)
                await asyncio.sleep(retry)
                continue
            if not kept:
                stop("another replica has taken the thread over (its lease has a newer epoch)")
                return
            put(renewed)
            break


MODEL_CALL_MARGIN = 0.5
"""Renew before a model call when less than this fraction of the TTL is left (a lease renewed on
time has at least two thirds left)."""


async def check_lease(
    store: SignalStore, get: Callable[[], Lease | None], put: Callable[[Lease], None], ttl: float,
    clock: Callable[[], datetime],
) -> None:
    """Return when the lease ``get()`` returns has time left for a model call to start under it:
    as is (the renewals kept up), or renewed now (this process stalled, so its renewals did not:
    a lease that expired but that nobody took is renewed, as ``keep_lease`` does). Raise
    ``LeaseLostError`` when another replica has taken the thread (a new epoch), or when the store
    cannot be reached and the lease is about to end: the model is then not called."""
    lease = get()
    if lease is None:
        return
    left = (lease.expires_at - clock()).total_seconds()
    if left > ttl * MODEL_CALL_MARGIN:
        return
    renewed = replace(lease, expires_at=clock() + timedelta(seconds=ttl))
    try:
        kept = await store.renew_lease(renewed)
    except Exception:
        if left > ttl * STOP_MARGIN:
            return  # still held for a while; the renewer keeps trying
        raise LeaseLostError(lease) from None
    if not kept:
        raise LeaseLostError(lease)
    if get() is not None:
        put(renewed)


class OwnedRun:
    """A caller's run (``Generate``/``Stream``) as a task of the runtime: the chunks reach the
    caller through a queue, and cancelling the task (``AbortRun``, a lost lease) ends the run
    whether or not the caller is still reading."""

    def __init__(self, run_id: str, lease: Lease | None, check: Callable[[], Awaitable[None]] | None = None) -> None:
        self.run_id = run_id
        self.context = fenced(lease, check)
        self.reason = ""
        """Why the run was stopped from outside (empty: it was not)."""
        self.task: asyncio.Task[Any] | None = None

    def stop(self, reason: str) -> None:
        if self.task is not None and not self.task.done():
            self.reason = self.reason or reason
            self.task.cancel()

    def start(self, work: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        task: asyncio.Task[T] = asyncio.get_running_loop().create_task(
            work, name=f"run {self.run_id}", context=self.context)
        self.task = task
        return task

    async def result(self, work: Coroutine[Any, Any, T], publish: Callable[[Chunk], None]) -> T:
        """Run ``work`` as the task; a stop from outside raises ``RunAbortedError`` (and
        publishes an ``abort`` chunk to the thread's subscribers), a caller that goes away
        cancels it."""
        task = self.start(work)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.cancelled() and self.reason:
                publish(Chunk.of(AbortPayload(self.reason), run_id=self.run_id))
                raise RunAbortedError(self.run_id, self.reason) from None
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
            raise

    async def stream(
        self, chunks: AsyncIterator[Chunk], publish: Callable[[Chunk], None],
    ) -> AsyncIterator[Chunk]:
        """The run's chunks, produced by the task; a stop from outside ends them with an
        ``abort`` chunk (also published to the thread's subscribers)."""
        queue: asyncio.Queue[Chunk | BaseException | None] = asyncio.Queue()

        async def produce() -> None:
            try:
                async with contextlib.aclosing(chunks) as source:  # type: ignore[type-var]
                    async for chunk in source:
                        publish(chunk)
                        queue.put_nowait(chunk)
            except asyncio.CancelledError:
                if self.reason:
                    abort = Chunk.of(AbortPayload(self.reason), run_id=self.run_id)
                    publish(abort)
                    queue.put_nowait(abort)
                queue.put_nowait(None)
                raise
            except BaseException as e:
                queue.put_nowait(e)
                return
            queue.put_nowait(None)

        task = self.start(produce())
        try:
            while (item := await queue.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            if not task.done():  # the caller went away: the run ends with it
                task.cancel()
            with contextlib.suppress(BaseException):
                await task


async def stopped(task: asyncio.Task[Any] | None, wait: Callable[[], Awaitable[Any]] | None = None) -> None:
    """Wait for a cancelled task to end (its own cancellation is not an error here)."""
    if task is not None:
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(task)
    if wait is not None:
        await wait()


__all__ = ["OwnedRun", "RunAbortedError", "fenced", "keep_lease", "stopped"]
