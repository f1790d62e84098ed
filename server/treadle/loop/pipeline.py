"""``process_output_stream`` over the output processors, pipelined across remote stages.

In-process processors run inline, chunk after chunk. A processor that can pipeline (a remote one
whose stream hook is windowed or allows several invocations in flight) becomes a stage of its
own: the chunk is submitted and the next chunk goes on without waiting for the answer, so a
slow network adds latency, not a throughput ceiling. Answers are applied in chunk order.

A processor may answer one chunk with several (or none: held back until a later chunk releases
it); each goes on through the processors after it, in order.

With no pipelining processor there are no stages and no tasks: ``put`` runs the chain inline.

The stage tasks outlive a step, so each chunk is handled in the trace context ``put`` was called
in (a step's, or the run's for the final ``finish``), not the one the tasks were started in: the
stream span a stage opens belongs to the step of the chunk. (Chunks of one step are flushed
before the next step puts any.)
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from opentelemetry import context as otel_context

from ..core.chunks import Chunk, as_chunks
from ..core.message_list import MessageList
from ..processors.runner import ChainRunner

Sink = Callable[[Chunk], Awaitable[None]]


@dataclass
class _Marker:
    """Passes through every stage behind the chunks put before it."""

    done: asyncio.Future[None]


_STOP = object()


def _pipelines(processor: Any) -> bool:
    check = getattr(processor, "pipelined", None)
    return bool(check()) if callable(check) else False


class StreamPipeline:
    def __init__(
        self, chain: ChainRunner, processors: Sequence[Any], message_list: MessageList, sink: Sink
    ) -> None:
        self.chain = chain
        self.processors = list(processors)
        self.message_list = message_list
        self.sink = sink
        self.failure: BaseException | None = None
        self._segments = self._split()
        self._staged = any(pipelined for _, _, pipelined in self._segments)
        self._queues: list[asyncio.Queue[Any]] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._context = otel_context.get_current()
        """The trace context of the latest ``put``: the stages handle chunks in it."""

    def _split(self) -> list[tuple[int, list[Any], bool]]:
        """(first index, processors, pipelined) runs; inline processors are grouped."""
        segments: list[tuple[int, list[Any], bool]] = []
        for index, p in enumerate(self.processors):
            if _pipelines(p):
                segments.append((index, [p], True))
            elif segments and not segments[-1][2]:
                segments[-1][1].append(p)
            else:
                segments.append((index, [p], False))
        return segments

    @property
    def staged(self) -> bool:
        return self._staged  # the segments are fixed: decided once, not per chunk

    # --- input side ---------------------------------------------------------------------------

    async def put(self, chunk: Chunk) -> None:
        """Process and send ``chunk``; with stages, returns once it is queued.

        Raises the first failure (a tripwire or an unavailable processor) seen so far.
        """
        if self.failure is not None:
            raise self.failure
        if not self.staged:
            if not self.processors:  # nothing to run: straight to the sink
                await self.sink(chunk)
                return
            out = await self.chain.process_output_stream(self.processors, chunk, self.message_list)
            if isinstance(out, Chunk):
                await self.sink(out)
            elif out is not None:
                for c in out:
                    await self.sink(c)
            return
        self._start()
        self._context = otel_context.get_current()
        await self._queues[0].put(chunk)

    async def flush(self) -> None:
        """Wait until everything put so far reached the sink (or was dropped)."""
        if self.failure is not None:
            raise self.failure
        if not self._tasks:
            return
        marker = _Marker(asyncio.get_running_loop().create_future())
        await self._queues[0].put(marker)
        await marker.done
        if self.failure is not None:
            raise self.failure

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()

    # --- stages -------------------------------------------------------------------------------

    def _start(self) -> None:
        if self._tasks:
            return
        self._queues = [asyncio.Queue() for _ in range(len(self._segments) + 1)]
        for i, (first, processors, pipelined) in enumerate(self._segments):
            self._tasks.append(asyncio.create_task(
                self._stage(first, processors, pipelined, self._queues[i], self._queues[i + 1])
            ))
        self._tasks.append(asyncio.create_task(self._sink_stage(self._queues[-1])))

    async def _resolve(self, item: Any) -> Any:
        """A chunk, a list of chunks, a marker, None (dropped) or _STOP (the pipeline failed)."""
        if isinstance(item, (Chunk, _Marker, list)) or item is None:
            return item
        try:
            return await item  # a pending answer of a pipelined stage
        except asyncio.CancelledError as e:
            # Our own cancellation (``close``) must end the stage; an answer that was cancelled
            # (its stream went away) is a failure of the run like any other.
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            self._fail(RuntimeError(f"a pipelined processor's answer was cancelled: {e}"))
            return _STOP
        except Exception as e:
            self._fail(e)
            return _STOP

    def _fail(self, e: BaseException) -> None:
        if self.failure is None:
            self.failure = e

    async def _stage(
        self, first: int, processors: list[Any], pipelined: bool,
        inbox: asyncio.Queue[Any], outbox: asyncio.Queue[Any],
    ) -> None:
        """One segment: inline processors run the chunk through; a pipelined one is handed the
        chunk and passes its pending answer on, for the next stage to await in order."""
        while True:
            item = await self._resolve(await inbox.get())
            if item is None or item is _STOP or (self.failure and not isinstance(item, _Marker)):
                continue
            if isinstance(item, _Marker):
                await outbox.put(item)
                continue
            for chunk in (item,) if isinstance(item, Chunk) else item:
                out: Any  # a pending answer (pipelined) or what the chain made of the chunk
                token = otel_context.attach(self._context)
                try:
                    if pipelined:
                        out = await self.chain.submit_output_stream(
                            processors[0], first, chunk, self.message_list
                        )
                    else:
                        out = await self.chain.process_output_stream(
                            processors, chunk, self.message_list, offset=first
                        )
                except Exception as e:
                    self._fail(e)
                    break
                finally:
                    otel_context.detach(token)
                await outbox.put(out)

    async def _sink_stage(self, inbox: asyncio.Queue[Any]) -> None:
        while True:
            item = await self._resolve(await inbox.get())
            if isinstance(item, _Marker):
                item.done.set_result(None)
            elif item is not None and item is not _STOP and self.failure is None:
                try:
                    for chunk in as_chunks(item):
                        await self.sink(chunk)
                except Exception as e:
                    self._fail(e)
