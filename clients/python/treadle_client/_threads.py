"""Thread calls of ``AgentClient`` over ``treadle.v1.ThreadService``: memory threads, their
messages and their runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import grpc
from google.protobuf import field_mask_pb2, struct_pb2

from treadle.v1 import message_pb2, thread_service_pb2 as pb, thread_service_pb2_grpc


class ThreadCalls:
    """Mixed into ``AgentClient``; every call names the thread's resource as well as the thread."""

    _channel: grpc.aio.Channel
    _metadata: tuple[tuple[str, str], ...]
    _thread_stub: thread_service_pb2_grpc.ThreadServiceStub | None = None

    @property
    def _threads(self) -> thread_service_pb2_grpc.ThreadServiceStub:
        if self._thread_stub is None:
            self._thread_stub = thread_service_pb2_grpc.ThreadServiceStub(self._channel)
        return self._thread_stub

    async def create_thread(
        self, resource_id: str, thread_id: str, *, title: str = "",
        metadata: Mapping[str, Any] | None = None, request_id: str = "", timeout: float | None = None,
    ) -> pb.Thread:
        thread = pb.Thread(id=thread_id, resource_id=resource_id, title=title, metadata=_struct(metadata))
        response = await self._threads.CreateThread(
            pb.CreateThreadRequest(thread=thread, request_id=request_id), timeout=timeout, metadata=self._metadata
        )
        return response.thread  # type: ignore[no-any-return]

    async def get_thread(self, resource_id: str, thread_id: str, *, timeout: float | None = None) -> pb.Thread:
        response = await self._threads.GetThread(
            pb.GetThreadRequest(resource_id=resource_id, thread_id=thread_id),
            timeout=timeout, metadata=self._metadata,
        )
        return response.thread  # type: ignore[no-any-return]

    async def list_threads(
        self, resource_id: str, *, page_size: int = 0, timeout: float | None = None
    ) -> list[pb.Thread]:
        """Every thread of the resource, most recently updated first (page after page)."""
        out: list[pb.Thread] = []
        token = ""
        while True:
            response = await self._threads.ListThreads(
                pb.ListThreadsRequest(resource_id=resource_id, page_size=page_size, page_token=token),
                timeout=timeout, metadata=self._metadata,
            )
            out.extend(response.threads)
            token = response.next_page_token
            if not token:
                return out

    async def update_thread(
        self, resource_id: str, thread_id: str, *, title: str | None = None,
        metadata: Mapping[str, Any] | None = None, request_id: str = "", timeout: float | None = None,
    ) -> pb.Thread:
        """Set the title and/or the metadata (only those given)."""
        paths = [name for name, value in (("title", title), ("metadata", metadata)) if value is not None]
        request = pb.UpdateThreadRequest(
            resource_id=resource_id,
            thread=pb.Thread(id=thread_id, title=title or "", metadata=_struct(metadata)),
            update_mask=field_mask_pb2.FieldMask(paths=paths),
            request_id=request_id,
        )
        response = await self._threads.UpdateThread(request, timeout=timeout, metadata=self._metadata)
        return response.thread  # type: ignore[no-any-return]

    async def delete_thread(
        self, resource_id: str, thread_id: str, *, request_id: str = "", timeout: float | None = None,
    ) -> None:
        """Delete the thread with its messages and runs."""
        await self._threads.DeleteThread(
            pb.DeleteThreadRequest(resource_id=resource_id, thread_id=thread_id, request_id=request_id),
            timeout=timeout, metadata=self._metadata,
        )

    async def list_messages(
        self, resource_id: str, thread_id: str, *, page_size: int = 0, timeout: float | None = None
    ) -> list[message_pb2.Message]:
        """Every message of the thread, oldest first, in the stored form."""
        out: list[message_pb2.Message] = []
        token = ""
        while True:
            response = await self._threads.ListMessages(
                pb.ListMessagesRequest(resource_id=resource_id, thread_id=thread_id,
                                       page_size=page_size, page_token=token),
                timeout=timeout, metadata=self._metadata,
            )
            out.extend(response.messages)
            token = response.next_page_token
            if not token:
                return out

    async def list_runs(
        self, resource_id: str, thread_id: str, *, page_size: int = 0, timeout: float | None = None
    ) -> list[pb.Run]:
        """Every run recorded on the thread, newest first."""
        out: list[pb.Run] = []
        token = ""
        while True:
            response = await self._threads.ListRuns(
                pb.ListRunsRequest(resource_id=resource_id, thread_id=thread_id,
                                   page_size=page_size, page_token=token),
                timeout=timeout, metadata=self._metadata,
            )
            out.extend(response.runs)
            token = response.next_page_token
            if not token:
                return out


def _struct(value: Mapping[str, Any] | None) -> struct_pb2.Struct | None:
    if value is None:
        return None
    out = struct_pb2.Struct()
    out.update(dict(value))
    return out


__all__: Sequence[str] = ["ThreadCalls"]
