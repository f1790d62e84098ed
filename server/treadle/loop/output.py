"""Where a run's chunks go: through the output processors, then to the client's queue."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from ..chunks import Chunk
from ..message_list import MessageList
from ..messages import DataPart, Message
from ..processors.runner import ChainRunner

END = object()
"""Queued after the last chunk of a run."""


class Output:
    def __init__(self, run_id: str, queue: asyncio.Queue[Any]) -> None:
        self.run_id = run_id
        self.queue = queue
        self.chain: ChainRunner | None = None
        self.processors: Sequence[Any] = ()
        self.message_list: MessageList | None = None
        self.current_message: Message | None = None
        """The assistant message of the current step: non-transient data chunks land there."""
        self._pending_data: list[DataPart] = []
        self.emitted: list[Chunk] = []

    def bind(self, chain: ChainRunner, processors: Sequence[Any], message_list: MessageList) -> None:
        self.chain, self.processors, self.message_list = chain, processors, message_list

    async def send(self, chunk: Chunk) -> None:
        """To the client as is (chunks written from output-stream hooks, tripwires, finish)."""
        chunk.run_id = chunk.run_id or self.run_id
        if chunk.is_data and not chunk.transient:
            self._keep(chunk)
        self.emitted.append(chunk)
        await self.queue.put(chunk)

    async def emit(self, chunk: Chunk) -> Chunk | None:
        """Through ``process_output_stream`` of every output processor; returns what was sent.

        Raises ``TripwireError`` when a processor aborts on this chunk.
        """
        chunk.run_id = chunk.run_id or self.run_id
        if self.chain is not None and self.processors:
            assert self.message_list is not None
            processed = await self.chain.process_output_stream(self.processors, chunk, self.message_list)
            if processed is None:
                return None
            chunk = processed
        await self.send(chunk)
        return chunk

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
