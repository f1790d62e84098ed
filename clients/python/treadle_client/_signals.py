"""Signal calls of ``AgentClient`` over ``treadle.v1.ThreadService``: signals into threads and
thread subscriptions.

::

    async with AgentClient("127.0.0.1:50051") as client:
        subscription = await client.subscribe_to_thread("user-123", "thread-abc")
        await client.send_message("echo", "hello", resource_id="user-123", thread_id="thread-abc",
                                   attributes={"name": "Devin", "from": "slack"})
        async for chunk in subscription:
            ...

Requests take the proto's JSON forms as dicts (``if_idle={"streamOptions": {"maxSteps": 3}}``).
Attributes are sent in the order of their dict (``ordered_attributes``), the order the model
sees them in: ``{"note": "x", "n": 3}`` renders ``<user note="x" n="3">``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import grpc
from google.protobuf import json_format

from treadle.v1 import chunk_pb2, message_pb2, signal_pb2, thread_service_pb2_grpc

Json = Mapping[str, Any]


class ThreadSubscription:
    """The chunks of every run on a thread, from the moment of subscribing.

    Iterate it for chunks; ``active_run_id`` is the thread's running run ("" when idle), kept
    current as runs start and end. ``unsubscribe`` stops the stream without aborting anything.

    ``position`` is where the subscriber is: once the chunks of a response are handled it moves
    past them. If the stream ends with an error (UNAVAILABLE: the server may have missed events),
    subscribe again with ``position=subscription.position``: ``replayed_messages`` then holds the
    messages the thread stored meanwhile, and the iteration starts with the last chunk
    (``finish``, ``abort`` or ``error``) of each run that ended meanwhile.
    """

    def __init__(self, call: Any, client: SignalCalls, resource_id: str, thread_id: str) -> None:
        self._call = call
        self._client = client
        self._key = (resource_id, thread_id)
        self.active_run_id = ""
        self.position = ""
        self.replayed_messages: list[message_pb2.Message] = []
        self._replayed_chunks: list[chunk_pb2.Chunk] = []
        self._first_position = ""
        self._unsubscribed = False

    async def _first(self) -> None:
        while True:  # a resumed subscription's replayed messages come before the thread's state
            response = await self._call.read()
            if response is grpc.aio.EOF:  # (an error status is raised by read)
                return
            self.replayed_messages.extend(response.messages)
            self._replayed_chunks.extend(response.chunks)
            if response.HasField("active_run"):
                self.active_run_id = response.active_run.run_id
                if not self._replayed_chunks:
                    self.position = response.position
                self._first_position = response.position
                return

    async def __aiter__(self) -> AsyncIterator[chunk_pb2.Chunk]:
        replayed, self._replayed_chunks = self._replayed_chunks, []
        for chunk in replayed:
            yield chunk
        if replayed:
            self.position = self._first_position
        while not self._unsubscribed:
            try:
                response = await self._call.read()
            except asyncio.CancelledError:
                if self._unsubscribed:  # the iteration ends quietly after unsubscribe()
                    return
                raise
            if response is grpc.aio.EOF:
                return
            if response.HasField("active_run"):
                self.active_run_id = response.active_run.run_id
            for chunk in response.chunks:
                yield chunk
            self.position = response.position or self.position

    async def abort(self) -> bool:
        """Abort the thread's active run; True when one was running."""
        return await self._client.abort_run(resource_id=self._key[0], thread_id=self._key[1])

    def unsubscribe(self) -> None:
        self._unsubscribed = True
        self._call.cancel()


class SignalCalls:
    """Mixed into ``AgentClient``."""

    _channel: grpc.aio.Channel
    _metadata: tuple[tuple[str, str], ...]
    _signal_stub: thread_service_pb2_grpc.ThreadServiceStub | None = None

    @property
    def _stub_signals(self) -> thread_service_pb2_grpc.ThreadServiceStub:
        if self._signal_stub is None:
            self._signal_stub = thread_service_pb2_grpc.ThreadServiceStub(self._channel)
        return self._signal_stub

    async def subscribe_to_thread(self, resource_id: str, thread_id: str, *, position: str = "") -> ThreadSubscription:
        """Subscribed once this returns: call it before sending, to see the whole reaction.
        ``position`` (an earlier subscription's ``position``) resumes it: what was missed is
        replayed first."""
        call = self._stub_signals.SubscribeToThread(
            signal_pb2.SubscribeToThreadRequest(resource_id=resource_id, thread_id=thread_id, position=position),
            metadata=self._metadata,
        )
        subscription = ThreadSubscription(call, self, resource_id, thread_id)
        subscription.position = position
        await subscription._first()
        return subscription

    async def send_message(
        self, agent_id: str, message: str | Json, *, resource_id: str = "", thread_id: str = "",
        run_id: str = "", attributes: Json | None = None, if_active: Json | None = None,
        if_idle: Json | None = None, request_id: str = "",
        timeout: float | None = None,
    ) -> signal_pb2.SendMessageResponse:
        """A user message (``SendMessage``); ``message`` is text or a ``SignalMessage`` dict."""
        request = signal_pb2.SendMessageRequest()
        _target(request, agent_id, resource_id, thread_id, run_id, if_active, if_idle, request_id)
        _message(request.message, message, attributes)
        return await self._stub_signals.SendMessage(request, timeout=timeout, metadata=self._metadata)  # type: ignore[no-any-return]

    async def queue_message(
        self, agent_id: str, message: str | Json, *, resource_id: str = "", thread_id: str = "",
        run_id: str = "", attributes: Json | None = None, if_active: Json | None = None,
        if_idle: Json | None = None, request_id: str = "",
        timeout: float | None = None,
    ) -> signal_pb2.QueueMessageResponse:
        """A user message run after the thread's active run (``QueueMessage``)."""
        request = signal_pb2.QueueMessageRequest()
        _target(request, agent_id, resource_id, thread_id, run_id, if_active, if_idle, request_id)
        _message(request.message, message, attributes)
        return await self._stub_signals.QueueMessage(request, timeout=timeout, metadata=self._metadata)  # type: ignore[no-any-return]

    async def send_signal(
        self, agent_id: str, signal: Json, *, resource_id: str = "", thread_id: str = "",
        run_id: str = "", if_active: Json | None = None, if_idle: Json | None = None,
        request_id: str = "", timeout: float | None = None,
    ) -> signal_pb2.SendSignalResponse:
        """A signal: ``{"type": "notification", "tagName": "github-review", "contents": ...}``."""
        request = signal_pb2.SendSignalRequest()
        _target(request, agent_id, resource_id, thread_id, run_id, if_active, if_idle, request_id)
        json_format.ParseDict(_ordered(signal), request.signal)
        return await self._stub_signals.SendSignal(request, timeout=timeout, metadata=self._metadata)  # type: ignore[no-any-return]

    async def send_state_signal(
        self, agent_id: str, state: Json, *, resource_id: str, thread_id: str,
        if_active: Json | None = None, if_idle: Json | None = None, request_id: str = "", timeout: float | None = None,
    ) -> signal_pb2.SendStateSignalResponse:
        """Named thread state (``{"id": "browser", "cacheKey": ..., "contents": ...}``)."""
        request = signal_pb2.SendStateSignalRequest()
        _target(request, agent_id, resource_id, thread_id, "", if_active, if_idle, request_id)
        json_format.ParseDict(_ordered(state), request.state)
        return await self._stub_signals.SendStateSignal(request, timeout=timeout, metadata=self._metadata)  # type: ignore[no-any-return]

    async def send_notification_signal(
        self, agent_id: str, notification: Json, *, resource_id: str, thread_id: str,
        if_idle: Json | None = None, request_id: str = "",
        timeout: float | None = None,
    ) -> signal_pb2.SendNotificationSignalResponse:
        """An inbox record (``{"source": "github", "kind": "ci-status", "summary": ...}``)."""
        request = signal_pb2.SendNotificationSignalRequest(
            agent_id=agent_id, resource_id=resource_id, thread_id=thread_id, request_id=request_id)
        json_format.ParseDict(_ordered(notification), request.notification)
        if if_idle is not None:
            json_format.ParseDict(_ordered(if_idle), request.if_idle)
        return await self._stub_signals.SendNotificationSignal(request, timeout=timeout, metadata=self._metadata)  # type: ignore[no-any-return]

    async def list_notifications(
        self, resource_id: str, thread_id: str, *, statuses: Sequence[int] = (), timeout: float | None = None,
    ) -> list[signal_pb2.NotificationRecord]:
        request = signal_pb2.ListNotificationsRequest(
            resource_id=resource_id, thread_id=thread_id, statuses=list(statuses))  # type: ignore[arg-type]
        response = await self._stub_signals.ListNotifications(request, timeout=timeout, metadata=self._metadata)
        return list(response.notifications)

    async def abort_run(
        self, run_id: str = "", *, resource_id: str = "", thread_id: str = "", request_id: str = "",
        timeout: float | None = None,
    ) -> bool:
        request = signal_pb2.AbortRunRequest(run_id=run_id, resource_id=resource_id, thread_id=thread_id,
                                             request_id=request_id)
        response = await self._stub_signals.AbortRun(request, timeout=timeout, metadata=self._metadata)
        return bool(response.aborted)

    async def get_active_run(self, resource_id: str, thread_id: str, *, timeout: float | None = None) -> str:
        """The thread's running run id, or "" when it is idle."""
        request = signal_pb2.GetActiveRunRequest(resource_id=resource_id, thread_id=thread_id)
        response = await self._stub_signals.GetActiveRun(request, timeout=timeout, metadata=self._metadata)
        return str(response.active_run.run_id)


def _target(request: Any, agent_id: str, resource_id: str, thread_id: str, run_id: str,
            if_active: Json | None, if_idle: Json | None, request_id: str = "") -> None:
    request.agent_id, request.resource_id, request.thread_id = agent_id, resource_id, thread_id
    request.request_id = request_id  # a retry with the same id is answered once, applied once
    if run_id:
        request.run_id = run_id
    if if_active is not None:
        json_format.ParseDict(_ordered(if_active), request.if_active)
    if if_idle is not None:
        json_format.ParseDict(_ordered(if_idle), request.if_idle)


def _ordered(body: Json, attributes: Json | None = None) -> dict[str, Any]:
    """``body`` (a proto JSON dict) with its ``attributes`` (and then ``attributes``) as
    ``orderedAttributes``: a Struct has no order, the list keeps the dict's."""
    out = dict(body)
    merged = {**(out.pop("attributes", None) or {}), **(attributes or {})}
    if merged:
        out["orderedAttributes"] = [
            *out.get("orderedAttributes", []), *({"name": k, "value": v} for k, v in merged.items()),
        ]
    return out


def _message(out: signal_pb2.SignalMessage, message: str | Json, attributes: Json | None) -> None:
    body: Json = {"contents": message} if isinstance(message, str) else message
    json_format.ParseDict(_ordered(body, attributes), out)


__all__ = ["SignalCalls", "ThreadSubscription"]
