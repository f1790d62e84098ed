"""The signal half of ``ThreadService``: sending into threads, subscriptions, runs.

``SignalRpcs`` holds the handlers; the servicer registered for ``ThreadService`` combines it with
the memory read RPCs. Conversion is in ``signal_convert``; the work is in ``treadle.signals``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import grpc

from ..agents import lane_for_call
from ..core.chunks import Chunk
from ..config.auth import Limits
from ..core.errors import InvalidArgumentError, NotFoundError, ResourceExhaustedError
from ..memory import MemoryStore
from ..signals import ActiveRunChanged, NotificationCenter, Sent, ThreadRuntime, send_state
from ..signals.hub import CHANNEL_DOWN, Subscription, SubscriptionGapError
from ..signals.resume import Position, parse_position, position_after, position_now, replay
from ..signals.runtime import Target
from ..v1 import signal_pb2
from . import signal_convert as sc
from ..memory.base import RunRecord
from ..loop.payload_view import display_of, transcript_message
from ..v1 import chunk_pb2
from ..wire.data import chunk_to_proto, enum_to_pb, message_to_proto
from . import auth
from .idempotency import InFlight, RequestIds, idempotent
from .status import abort_with, unary
from .thread_service import SERVICE_NAME
from .thread_service import ThreadServicer as MemoryRpcs

MAX_CHUNKS_PER_RESPONSE = 256
REPLAYED_MESSAGES_PER_RESPONSE = 64
CHANNEL_WAIT = 5.0
"""Seconds a subscription waits for this replica to hear the others again (UNAVAILABLE after)."""
MAX_RESPONSE_BYTES = 256 << 10
"""About how much a subscriber takes from its backlog at a time: what is converted and waiting
to be sent stays small, the rest stays counted in the backlog it is cut off by."""


def _sent(sent: Sent, out: signal_pb2.SendSignalResponse | signal_pb2.SendMessageResponse
          | signal_pb2.QueueMessageResponse | signal_pb2.SendStateSignalResponse) -> None:
    sc.accepted_to_proto(sent.accepted, out.accepted)
    sc.created_to_proto(sent.signal, out.signal)


def _thread(resource_id: str, thread_id: str) -> tuple[str, str]:
    if not thread_id:
        raise InvalidArgumentError("thread_id is required")
    if not resource_id:
        raise InvalidArgumentError("resource_id is required with thread_id (a thread belongs to a resource)")
    return resource_id, thread_id


class SignalRpcs:
    store: MemoryStore | None = None
    """The memory store (set by the app once it is open)."""

    def __init__(self, runtime: ThreadRuntime, notifications: NotificationCenter) -> None:
        self._runtime = runtime
        self._notifications = notifications
        self.limits = Limits()
        """The server's limits (the app sets the configured ones)."""
        self._arriving: dict[tuple[tuple[str, str], bool], tuple[asyncio.Lock, int]] = {}
        """Per thread and kind: the lock its sends take turns on, and how many wait for it."""

    @contextlib.asynccontextmanager
    async def _room(self, target: Target, queued: bool) -> AsyncIterator[None]:
        """RESOURCE_EXHAUSTED naming the limit when the thread already has as many signals (or
        queued messages) waiting as one thread may: no caller can pile up work on a thread.
        The check and the send are one step per thread (a lock of this process), so a burst of
        concurrent calls cannot all pass the check before any of them is counted."""
        key: tuple[str, str] | None = (target.resource_id, target.thread_id)
        if target.run_id:
            key = await self._runtime.run_thread(target.run_id)
        if key is None or not all(key):
            yield  # the runtime answers for a target it cannot route
            return
        counted = (key, queued)
        lock, users = self._arriving.get(counted, (asyncio.Lock(), 0))
        self._arriving[counted] = (lock, users + 1)
        try:
            async with lock:
                waiting = await self._runtime.store.count_pending(key)  # a count: no rows read
                if queued:
                    count = waiting.get("queued", 0)
                    limit, name, what = self.limits.max_queued_per_thread, "maxQueuedPerThread", "queued messages"
                else:
                    run = self._runtime.active_run(key)
                    count = waiting.get("persisted", 0) + (len(run.inbox) if run is not None else 0)
                    limit, name, what = self.limits.max_signals_per_thread, "maxSignalsPerThread", "signals waiting"
                if count >= limit:
                    raise ResourceExhaustedError(
                        f"thread {key[1]!r} has {count} {what} (limits.{name}); retry once its run has taken them in"
                    )
                yield
        finally:
            lock, users = self._arriving[counted]
            if users <= 1:
                del self._arriving[counted]
            else:
                self._arriving[counted] = (lock, users - 1)

    async def _thread_exists(self, key: tuple[str, str]) -> None:
        """NOT_FOUND for a thread that does not exist, or not in this resource."""
        if self.store is None:  # pragma: no cover - the app opens the store before serving
            return
        thread = await self.store.get_thread(key[1])
        if thread is None or thread.resource_id != key[0]:
            raise NotFoundError(f"thread {key[1]!r} of resource {key[0]!r} does not exist: state "
                                "signals go to an existing thread (create it, or run on it, first)")

    async def _target(self, request: Any) -> Target:
        """The request's target; a run named by ``run_id`` must be on a resource the caller
        holds (the gate checked only the resource the request names, if any)."""
        target = sc.target_from_proto(request)
        if target.run_id and (key := await self._runtime.run_thread(target.run_id)) is not None:
            auth.require_resource(key[0])
        return target

    @unary
    @idempotent(signal_pb2.SendMessageResponse)
    async def SendMessage(
        self, request: signal_pb2.SendMessageRequest, context: grpc.aio.ServicerContext
    ) -> signal_pb2.SendMessageResponse:
        target = await self._target(request)
        async with self._room(target, queued=False):
            sent = await self._runtime.send(
                target, sc.message_signal_from_proto(request.message),
                sc.if_active_from_proto(request.if_active), sc.if_idle_from_proto(request.if_idle),
            )
        out = signal_pb2.SendMessageResponse()
        _sent(sent, out)
        return out

    @unary
    @idempotent(signal_pb2.QueueMessageResponse)
    async def QueueMessage(
        self, request: signal_pb2.QueueMessageRequest, context: grpc.aio.ServicerContext
    ) -> signal_pb2.QueueMessageResponse:
        target = await self._target(request)
        agent_id = target.agent_id
        if not agent_id:  # the queued run runs the thread's current agent: in the caller's scope?
            key = await self._runtime.run_thread(target.run_id) if target.run_id else None
            run = await self._runtime.current_run(key or (target.resource_id, target.thread_id))
            if run is not None:
                auth.require("agents", run.agent_id)
                agent_id = run.agent_id
        if_idle = sc.if_idle_from_proto(request.if_idle)
        if agent_id and if_idle.stream_options is not None:  # a locked processor is refused now, not at its run
            agent = self._runtime.agent(agent_id)
            for lane in ("input_processors", "output_processors", "error_processors"):
                lane_for_call(agent.id, lane, getattr(agent, lane), getattr(if_idle.stream_options, lane))
        async with self._room(target, queued=True):
            sent = await self._runtime.queue(
                target, sc.message_signal_from_proto(request.message),
                sc.if_active_from_proto(request.if_active), if_idle,
            )
        out = signal_pb2.QueueMessageResponse()
        _sent(sent, out)
        return out

    @unary
    @idempotent(signal_pb2.SendSignalResponse)
    async def SendSignal(
        self, request: signal_pb2.SendSignalRequest, context: grpc.aio.ServicerContext
    ) -> signal_pb2.SendSignalResponse:
        target = await self._target(request)
        async with self._room(target, queued=False):
            sent = await self._runtime.send(
                target, sc.signal_from_proto(request.signal),
                sc.if_active_from_proto(request.if_active), sc.if_idle_from_proto(request.if_idle),
            )
        out = signal_pb2.SendSignalResponse()
        _sent(sent, out)
        return out

    @unary
    @idempotent(signal_pb2.SendStateSignalResponse)
    async def SendStateSignal(
        self, request: signal_pb2.SendStateSignalRequest, context: grpc.aio.ServicerContext
    ) -> signal_pb2.SendStateSignalResponse:
        target = await self._target(request)
        async with self._room(target, queued=False):
            result = await send_state(
                self._runtime, target, sc.state_from_proto(request.state),
                sc.if_active_from_proto(request.if_active), sc.if_idle_from_proto(request.if_idle),
                check_thread=self._thread_exists,
            )
        out = signal_pb2.SendStateSignalResponse(version=result.version)
        if result.skipped:
            out.skipped, out.reason = True, result.reason
        elif result.sent is not None:
            _sent(result.sent, out)
        return out

    @unary
    @idempotent(signal_pb2.SendNotificationSignalResponse)
    async def SendNotificationSignal(
        self, request: signal_pb2.SendNotificationSignalRequest, context: grpc.aio.ServicerContext
    ) -> signal_pb2.SendNotificationSignalResponse:
        target = Target(request.agent_id, "", *_thread(request.resource_id, request.thread_id))
        async with self._room(target, queued=False):
            result = await self._notifications.send(
                target, sc.notification_from_proto(request.notification),
                sc.if_idle_from_proto(request.if_idle) if request.HasField("if_idle") else None,
            )
        out = signal_pb2.SendNotificationSignalResponse()
        sc.record_to_proto(result.record, out.record)
        sc.decision_to_proto(result.decision, out.decision)
        if result.signal is not None:
            sc.created_to_proto(result.signal, out.signal)
        if result.accepted is not None:
            sc.accepted_to_proto(result.accepted, out.accepted)
            out.run_id = out.accepted.run_id
        return out

    @unary
    async def ListNotifications(
        self, request: signal_pb2.ListNotificationsRequest, context: grpc.aio.ServicerContext
    ) -> signal_pb2.ListNotificationsResponse:
        key = _thread(request.resource_id, request.thread_id)
        records = await self._notifications.records(key, sc.statuses_from_proto(request.statuses))
        out = signal_pb2.ListNotificationsResponse()
        for r in records:
            sc.record_to_proto(r, out.notifications.add())
        return out

    async def SubscribeToThread(
        self, request: signal_pb2.SubscribeToThreadRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[signal_pb2.SubscribeToThreadResponse]:
        try:
            key = _thread(request.resource_id, request.thread_id)
            since = parse_position(request.position) if request.position else None
        except Exception as e:
            await abort_with(context, e)
        sub = await self._hearing_subscription(key, context)
        raw = auth.sees_raw_tool_payloads()
        try:
            store = self.store
            replayed: set[str] = set()
            if since is not None and store is not None:
                try:
                    missed = await replay(store, key, since)
                except Exception as e:
                    await abort_with(context, e)
                for start in range(0, len(missed.messages), REPLAYED_MESSAGES_PER_RESPONSE):
                    batch = signal_pb2.SubscribeToThreadResponse(position=since.encode())
                    for message in missed.messages[start:start + REPLAYED_MESSAGES_PER_RESPONSE]:
                        message_to_proto(message if raw else transcript_message(message), batch.messages.add())
                    yield batch
                position = missed.position
                replayed = {ended.id for ended in missed.ended}
                first = signal_pb2.SubscribeToThreadResponse()
                for ended in missed.ended:
                    _ended_chunk(ended, first.chunks.add())
            else:
                position = await position_now(store, key) if store is not None else Position()
                first = signal_pb2.SubscribeToThreadResponse()
            first.active_run.SetInParent()
            running = ""
            if (run := await self._runtime.current_run(key)) is not None:
                first.active_run.run_id, first.active_run.agent_id = run.run_id, run.agent_id
                running = run.run_id
            first.position = position.encode()
            yield first
            async for event in sub.events():
                events = [e for e in [event, *sub.batch(MAX_RESPONSE_BYTES)]
                          if not (replayed and isinstance(e, Chunk) and e.run_id in replayed)]
                for response in _responses(events, raw):
                    if response.HasField("active_run"):
                        if not response.active_run.run_id and running and store is not None:
                            # a run ended: the position moves past it when nothing is stored after it
                            position = await position_after(store, key, running) or position
                        running = response.active_run.run_id
                    elif response.chunks:
                        running = response.chunks[-1].run_id or running
                    response.position = position.encode()
                    yield response
            if sub.overflowed:
                await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, (
                    f"this subscriber fell more than {sub.max_backlog_bytes} bytes behind the thread "
                    "(limits.maxSubscriberBacklogBytes) and was cut off; read faster, or subscribe again "
                    "with the `position` of the last response you handled"))
            if sub.gap:  # never a silent gap: the subscriber resumes from its position
                await abort_with(context, SubscriptionGapError(sub.gap))
        finally:
            sub.close()

    async def _hearing_subscription(self, key: tuple[str, str], context: grpc.aio.ServicerContext) -> Subscription:
        """A subscription made while this replica hears the others (it waits up to
        ``CHANNEL_WAIT`` seconds for a reconnecting channel, then answers UNAVAILABLE): a
        subscription that could miss a run silently is never made."""
        deadline = asyncio.get_running_loop().time() + CHANNEL_WAIT
        while True:
            left = deadline - asyncio.get_running_loop().time()
            if left > 0 and await self._runtime.wait_hearing(left):
                sub = self._runtime.subscribe(key)
                if self._runtime.hearing:  # still (the channel may have dropped again meanwhile)
                    return sub
                sub.close()
                continue
            await abort_with(context, SubscriptionGapError(CHANNEL_DOWN))

    @unary
    @idempotent(signal_pb2.AbortRunResponse)
    async def AbortRun(
        self, request: signal_pb2.AbortRunRequest, context: grpc.aio.ServicerContext
    ) -> signal_pb2.AbortRunResponse:
        if not request.run_id:
            _thread(request.resource_id, request.thread_id)
        run_id = await self._runtime.abort(await self._target(_AbortTarget(request)))
        return signal_pb2.AbortRunResponse(aborted=bool(run_id), run_id=run_id)

    @unary
    async def GetActiveRun(
        self, request: signal_pb2.GetActiveRunRequest, context: grpc.aio.ServicerContext
    ) -> signal_pb2.GetActiveRunResponse:
        key = _thread(request.resource_id, request.thread_id)
        out = signal_pb2.GetActiveRunResponse()
        out.active_run.SetInParent()
        if (run := await self._runtime.current_run(key)) is not None:
            out.active_run.run_id, out.active_run.agent_id = run.run_id, run.agent_id
        return out


class _AbortTarget:
    def __init__(self, pb: signal_pb2.AbortRunRequest) -> None:
        self.agent_id, self.run_id = "", pb.run_id
        self.resource_id, self.thread_id = pb.resource_id, pb.thread_id


def _responses(events: list[Chunk | ActiveRunChanged], raw: bool) -> list[signal_pb2.SubscribeToThreadResponse]:
    """Chunks in order, batched (as the agent's tool payload rules show them, unless ``raw``);
    an active-run change is a response of its own."""
    out: list[signal_pb2.SubscribeToThreadResponse] = []
    current: signal_pb2.SubscribeToThreadResponse | None = None
    for event in events:
        if isinstance(event, ActiveRunChanged):
            change = signal_pb2.SubscribeToThreadResponse()
            change.active_run.run_id, change.active_run.agent_id = event.run_id, event.agent_id
            change.active_run.SetInParent()
            out.append(change)
            current = None
            continue
        shown = event if raw else display_of(event)
        if shown is None:
            continue
        if current is None or len(current.chunks) >= MAX_CHUNKS_PER_RESPONSE:
            current = signal_pb2.SubscribeToThreadResponse()
            out.append(current)
        chunk_to_proto(shown, current.chunks.add())
    return out


def _ended_chunk(run: RunRecord, out: chunk_pb2.Chunk) -> None:
    """The last chunk of a replayed run: ``finish`` (its reason and usage), ``abort`` or ``error``."""
    out.run_id = run.id
    if run.status == "aborted":
        out.abort.reason = run.finish_reason or "aborted"
    elif run.status == "failed":
        out.error.name, out.error.message = "RunFailed", "the run failed (its stored messages are above)"
    else:
        out.finish.reason = enum_to_pb(chunk_pb2.FinishReason.DESCRIPTOR, run.finish_reason)
        u, total = run.usage, out.finish.total_usage
        total.input_tokens, total.output_tokens, total.total_tokens = u.input_tokens, u.output_tokens, u.total_tokens


class ThreadServicer(SignalRpcs, MemoryRpcs):
    """``ThreadService``: the memory reads and edits, and the signal RPCs."""

    def __init__(self, runtime: ThreadRuntime, notifications: NotificationCenter) -> None:
        MemoryRpcs.__init__(self)
        SignalRpcs.__init__(self, runtime, notifications)
        self.request_ids = RequestIds(lambda: getattr(self.store, "engine", None))
        self.inflight = InFlight()
        """Mutating calls running now (drained at SIGTERM)."""
        """Answers of calls that carried a ``request_id``, in the store (see ``idempotency``)."""


__all__ = ["SERVICE_NAME", "SignalRpcs", "ThreadServicer"]
