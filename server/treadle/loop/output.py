"""Where a run's chunks go: through the output processors, then to the client's queue.

Processors may hold text back and release it later, as new deltas; ``send`` keeps the client's
text parts consistent: a released delta without an id gets the id of the text part it lands in,
and one released after its part ended lands in a part the server opens (and closes before the
next chunk that is not one of its deltas).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from ..core.chunks import Chunk, TextEnd, TextStart
from ..core.message_list import MessageList
from ..core.messages import DataPart, Message, new_id
from ..processors.runner import ChainRunner
from .payload_view import NESTED, PayloadView, carry_nested
from .pipeline import StreamPipeline

END = object()
"""Queued after the last chunk of a run."""


class Channel:
    """The run's chunks on their way to its consumer: a bounded deque. The producer waits only
    when it is full, the consumer only when it is empty; neither pays for a queue's bookkeeping
    per chunk, and a consumer that wakes up takes everything there is (``items``)."""

    __slots__ = ("items", "size", "_getter", "_putters")

    def __init__(self, size: int) -> None:
        self.items: deque[Any] = deque()
        self.size = size
        self._getter: asyncio.Future[None] | None = None
        """The one consumer, waiting."""
        self._putters: list[asyncio.Future[None]] = []
        """Producers waiting for room (several tasks of a run may write: parallel tools)."""

    def full(self) -> bool:
        return len(self.items) >= self.size

    def put_nowait(self, item: Any) -> None:
        self.items.append(item)
        getter = self._getter
        if getter is not None:
            self._getter = None
            if not getter.done():
                getter.set_result(None)

    async def put(self, item: Any) -> None:
        while len(self.items) >= self.size:
            putter = asyncio.get_running_loop().create_future()
            self._putters.append(putter)
            try:
                await putter
            finally:
                if putter in self._putters:
                    self._putters.remove(putter)
        self.put_nowait(item)

    def pop(self) -> Any:
        """The next item; there must be one (``items`` is not empty)."""
        item = self.items.popleft()
        if self._putters and len(self.items) < self.size:
            putters, self._putters = self._putters, []
            for putter in putters:  # each checks for room again
                if not putter.done():
                    putter.set_result(None)
        return item

    def take_all(self) -> list[Any]:
        """Every item there is, in order (``pop`` for each, at once)."""
        items = list(self.items)
        self.items.clear()
        if self._putters:
            putters, self._putters = self._putters, []
            for putter in putters:  # each checks for room again
                if not putter.done():
                    putter.set_result(None)
        return items

    async def wait(self) -> None:
        """Until there is an item, or ``wake`` was called (check ``items``)."""
        if self.items:
            return
        getter = self._getter = asyncio.get_running_loop().create_future()
        try:
            await getter
        finally:
            if self._getter is getter:
                self._getter = None

    def wake(self) -> None:
        """End the consumer's ``wait`` now, with or without an item."""
        getter = self._getter
        if getter is not None:
            self._getter = None
            if not getter.done():
                getter.set_result(None)

    async def get(self) -> Any:
        while not self.items:
            await self.wait()
        return self.pop()


class Output:
    def __init__(self, run_id: str, queue: Channel) -> None:
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
        self._text_id: str | None = None
        """Id of the text part the client has open (between its text-start and text-end)."""
        self._opened = False
        """True when the server opened that part for deltas released after their own ended."""
        self._guards: list[asyncio.Task[None]] = []
        self._held: list[Chunk] = []
        """Chunks kept from the client while parallel guardrails (``with_model``) still run."""
        self.view: PayloadView | None = None
        """Marks each chunk with its display projection (the agent's tool payload rules)."""

    def bind(self, chain: ChainRunner, processors: Sequence[Any], message_list: MessageList) -> None:
        self._bound = (chain, processors, message_list)

    @property
    def pipeline(self) -> StreamPipeline | None:
        if self._pipeline is None and self._bound is not None and self._bound[1]:  # none: no pipeline
            self._pipeline = StreamPipeline(*self._bound, sink=self._from_processors)
        return self._pipeline

    def hold(self, guards: list[asyncio.Task[None]]) -> None:
        """Keep what is sent from the client until every guard passed (``settle``)."""
        self._guards = list(guards)

    async def settle(self) -> None:
        """Wait for the guards: when all passed the held chunks go out; else they are discarded
        and the first failure (a ``TripwireError``) is raised."""
        if not self._guards:
            return
        guards, self._guards = self._guards, []
        try:
            await asyncio.gather(*guards)
        except BaseException:
            self._held.clear()
            for g in guards:
                g.cancel()
            raise
        held, self._held = self._held, []
        for chunk in held:
            await self.queue.put(chunk)

    def _guard_failure(self) -> BaseException | None:
        for g in self._guards:
            if g.done() and not g.cancelled() and g.exception() is not None:
                return g.exception()
        return None

    async def reset(self) -> None:
        """A fresh pipeline (after a rejected step, or at the end of the run)."""
        for g in self._guards:
            g.cancel()
        self._guards, self._held = [], []
        if self._pipeline is not None:
            await self._pipeline.close()
            self._pipeline = None

    async def send(self, chunk: Chunk) -> None:
        """To the client as is (chunks written from output-stream hooks, tripwires, finish)."""
        t = chunk.type
        if t == "text-delta":
            if self._text_id is None:
                self._text_id, self._opened = chunk.payload.id or new_id("text"), True
                await self._deliver(Chunk.of(TextStart(self._text_id)))
            if not chunk.payload.id:
                chunk.payload.id = self._text_id
        elif self._opened:
            opened, self._text_id, self._opened = self._text_id or "", None, False
            await self._deliver(Chunk.of(TextEnd(opened)))
        if t == "text-start":
            self._text_id = chunk.payload.id
        elif t == "text-end":
            self._text_id = None
        await self._deliver(chunk)

    async def _deliver(self, chunk: Chunk) -> None:
        chunk.run_id = chunk.run_id or self.run_id
        if chunk.type == "tool-output":
            carry_nested(chunk)
        if self.view:
            if chunk.type == "tool-call-delta":
                self.view.mark_delta(chunk)
            elif self.view.marks(chunk):
                await self.view.mark(chunk)
        if chunk.is_data and not chunk.transient:
            self._keep(chunk)
        if self.on_sent is not None:
            self.on_sent(chunk)
        self.sent_count += 1
        if self._guards:
            failure = self._guard_failure()
            if failure is not None:  # a guardrail blocked: stop the provider call now
                await self.settle()
            elif not all(g.done() for g in self._guards):
                self._held.append(chunk)
                return
            else:
                await self.settle()
        if self.queue.full():
            await self.queue.put(chunk)  # the client is behind: wait for room
        else:
            self.queue.put_nowait(chunk)

    def _now(self, chunk: Chunk) -> bool:
        """The common case of ``send``, done without a coroutine: a text delta inside the text
        part the client has open, with nothing held back and room in the queue. False (and
        nothing done): ``send`` must handle the chunk."""
        if (chunk.type != "text-delta" or self._text_id is None or self._guards
                or len(self.queue.items) >= self.queue.size or ("text-delta" in NESTED and self.view)):
            return False
        payload = chunk.payload
        if not payload.id:
            payload.id = self._text_id
        if not chunk.run_id:
            chunk.run_id = self.run_id
        if self.on_sent is not None:
            self.on_sent(chunk)
        self.sent_count += 1
        self.queue.put_nowait(chunk)
        return True

    def direct(self) -> Callable[[Chunk], bool] | None:
        """With no output processors: a synchronous ``stream`` for the chunks it can deliver at
        once (it returns False for the others, which go through ``stream``)."""
        pipeline = self.pipeline
        return self._now if pipeline is None or not pipeline.processors else None

    async def stream(self, chunk: Chunk) -> None:
        """The hot path: through the output processors without waiting for pipelined answers.

        Raises ``TripwireError`` (or an unavailable processor's error) seen on any earlier chunk.
        """
        if not chunk.run_id:
            chunk.run_id = self.run_id
        pipeline = self._pipeline if self._pipeline is not None else self.pipeline
        if pipeline is None or not pipeline.processors:
            if not self._now(chunk):
                await self._from_processors(chunk)
        elif pipeline.staged or pipeline.failure is not None:
            await pipeline.put(chunk)
        else:  # in-process processors only: the chain inline (``StreamPipeline.put``, unstaged)
            out = await pipeline.chain.process_output_stream(pipeline.processors, chunk, pipeline.message_list)
            if out.__class__ is Chunk:
                if not self._now(out):  # type: ignore[arg-type]
                    await self._from_processors(out)  # type: ignore[arg-type]
            elif out is not None:
                for c in out:  # type: ignore[union-attr]
                    await self._from_processors(c)

    async def _from_processors(self, chunk: Chunk) -> None:
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
