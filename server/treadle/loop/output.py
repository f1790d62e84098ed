"""Where a run's chunks go: through the output processors, then to the client's queue."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from ..chunks import Chunk
from ..message_list import MessageList
from ..messages import DataPart, Message
from ..processors.runner import ChainRunner
from .pipeline import StreamPipeline

END = object()
"""Queued after the last chunk of a run."""


class Output:
    def __init__(self, run_id: str, queue: asyncio.Queue[Any]) -> None:
        self.run_id = run_id
        self.queue = queue
        self.current_message: Message | None = None
        """The assistant message of the current step: non-transient data chunks land there."""
        self.on_sent: Callable[[Chunk], None] | None = None
        """Called with every chunk that reaches the client (the step's collector)."""
        self._pending_data: list[DataPart] = []
        self._pipeline: StreamPipeline | None = None
        self._bound: tuple[ChainRunner, Sequence[Any], MessageList] | None = None
        self.sent_count = 0

    def bind(self, chain: ChainRunner, processors: Sequence[Any], message_list: MessageList) -> None:
        self._bound = (chain, processors, message_list)

    @property
    def pipeline(self) -> StreamPipeline | None:
        if self._pipeline is None and self._bound is not None:
            self._pipeline = StreamPipeline(*self._bound, sink=self._deliver)
        return self._pipeline

    async def reset(self) -> None:
        """A fresh pipeline (after a rejected step, or at the end of the run)."""
        if self._pipeline is not None:
            await self._pipeline.close()
            self._pipeline = None

    async def send(self, chunk: Chunk) -> None:
        """To the client as is (chunks written from output-stream hooks, tripwires, finish)."""
        chunk.run_id = chunk.run_id or self.run_id
        if chunk.is_data and not chunk.transient:
            self._keep(chunk)
        if self.on_sent is not None:
            self.on_sent(chunk)
        self.sent_count += 1
        await self.queue.put(chunk)

    async def stream(self, chunk: Chunk) -> None:
        """The hot path: through the output processors without waiting for pipelined answers.

        Raises ``TripwireError`` (or an unavailable processor's error) seen on any earlier chunk.
        """
        chunk.run_id = chunk.run_id or self.run_id
        pipeline = self.pipeline
        if pipeline is None:
            await self._deliver(chunk)
        else:
            await pipeline.put(chunk)

    async def _deliver(self, chunk: Chunk) -> None:
        """What comes out of the output processors goes to the client, but for a step's model
        ``finish``: processors see it, the client gets the run's ``finish`` last (``send``)."""
        if chunk.type != "finish":
            await self.send(chunk)

    async def flush(self) -> None:
        if self._pipeline is not None:
            await self._pipeline.flush()

    async def emit(self, chunk: Chunk) -> bool:
        """Through the output processors, in order after everything streamed before it.

        Returns whether a chunk reached the client (processors may drop it).
        """
        before = self.sent_count
        await self.stream(chunk)
        await self.flush()
        return self.sent_count > before

    def start_message(self, message: Message) -> None:
        self.current_message = message
        if self._pending_data:
            message.content.parts.extend(self._pending_data)
            self._pending_data.clear()

    def _keep(self, chunk: Chunk) -> None:
        part = DataPart(name=chunk.type, data=chunk.data, id=chunk.id)
        if self.current_message is not None:
            self.current_message.content.parts.append(part)
        else:
            self._pending_data.append(part)
