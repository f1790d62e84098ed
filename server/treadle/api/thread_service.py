"""``ThreadService``: reads and edits of memory threads, their messages and their runs.

Every request names the resource and the thread; the thread must belong to that resource.
Listings are paged by an opaque token that names the listing it belongs to, so a token from
another listing (or a made-up one) is INVALID_ARGUMENT, never a wrong page.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

import grpc

from ..core.errors import InvalidArgumentError, NotFoundError, PermissionDeniedError
from ..memory import MemoryStore, PageRequest, RunRecord, Thread
from ..v1 import chunk_pb2, thread_service_pb2 as pb, thread_service_pb2_grpc
from ..loop.payload_view import transcript_message
from .auth import require_resource, sees_raw_tool_payloads
from ..wire.data import (
    datetime_to_ts,
    dict_to_struct,
    enum_to_pb,
    message_to_proto,
    struct_to_dict,
)
from .idempotency import idempotent
from .status import unary

SERVICE_NAME = "treadle.v1.ThreadService"

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
MAX_PAGE_BYTES = 1 << 20
"""About this much stored content per page (a single larger row still makes a page)."""
MAX_ID_LENGTH = 255

_FINISH = chunk_pb2.FinishReason.DESCRIPTOR
_STATUS = {"running": pb.RUN_STATUS_RUNNING, "finished": pb.RUN_STATUS_FINISHED,
           "failed": pb.RUN_STATUS_FAILED, "aborted": pb.RUN_STATUS_ABORTED}
_UPDATABLE = ("title", "metadata")


class ThreadServicer(thread_service_pb2_grpc.ThreadServiceServicer):
    def __init__(self) -> None:
        self.store: MemoryStore | None = None
        """Set by the app once the store is open (before the server serves)."""

    def register(self, server: grpc.aio.Server) -> None:
        thread_service_pb2_grpc.add_ThreadServiceServicer_to_server(self, server)

    @property
    def _store(self) -> MemoryStore:
        if self.store is None:  # pragma: no cover - the app opens the store before serving
            raise RuntimeError("the store is not open")
        return self.store

    async def _owned(self, resource_id: str, thread_id: str) -> Thread:
        check_id("resource_id", resource_id)
        check_id("thread_id", thread_id)
        thread = await self._store.get_thread(thread_id)
        if thread is None:
            raise NotFoundError(f"thread {thread_id!r} not found")
        if thread.resource_id != resource_id:
            raise PermissionDeniedError(f"thread {thread_id!r} does not belong to resource {resource_id!r}")
        return thread

    @unary
    @idempotent(pb.CreateThreadResponse)
    async def CreateThread(
        self, request: pb.CreateThreadRequest, context: grpc.aio.ServicerContext
    ) -> pb.CreateThreadResponse:
        t = request.thread
        check_id("thread.id", t.id)
        check_id("thread.resource_id", t.resource_id)
        require_resource(t.resource_id)  # the other requests name it at the top: the gate checks those
        thread = await self._store.create_thread(
            Thread(id=t.id, resource_id=t.resource_id, title=t.title, metadata=struct_to_dict(t.metadata))
        )
        return pb.CreateThreadResponse(thread=thread_to_proto(thread))

    @unary
    async def GetThread(
        self, request: pb.GetThreadRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetThreadResponse:
        thread = await self._owned(request.resource_id, request.thread_id)
        return pb.GetThreadResponse(thread=thread_to_proto(thread))

    @unary
    async def ListThreads(
        self, request: pb.ListThreadsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListThreadsResponse:
        check_id("resource_id", request.resource_id)
        key = ("threads", request.resource_id)
        page = await self._store.list_threads(
            request.resource_id, page_request(request.page_size, request.page_token, key, (int, str))
        )
        out = pb.ListThreadsResponse(next_page_token=encode_token(key, page.next_cursor))
        for thread in page.items:
            thread_to_proto(thread, out.threads.add())
        return out

    @unary
    @idempotent(pb.UpdateThreadResponse)
    async def UpdateThread(
        self, request: pb.UpdateThreadRequest, context: grpc.aio.ServicerContext
    ) -> pb.UpdateThreadResponse:
        await self._owned(request.resource_id, request.thread.id)
        paths = list(request.update_mask.paths) if request.HasField("update_mask") else list(_UPDATABLE)
        unknown = [p for p in paths if p not in _UPDATABLE]
        if unknown or not paths:
            raise InvalidArgumentError(
                f"update_mask: {', '.join(map(repr, unknown)) or 'no field'} cannot be updated; "
                f"fields: {', '.join(_UPDATABLE)}"
            )
        thread = await self._store.update_thread(
            request.thread.id,
            title=request.thread.title if "title" in paths else None,
            metadata=struct_to_dict(request.thread.metadata) if "metadata" in paths else None,
        )
        return pb.UpdateThreadResponse(thread=thread_to_proto(thread))

    @unary
    @idempotent(pb.DeleteThreadResponse)
    async def DeleteThread(
        self, request: pb.DeleteThreadRequest, context: grpc.aio.ServicerContext
    ) -> pb.DeleteThreadResponse:
        await self._owned(request.resource_id, request.thread_id)
        await self._store.delete_thread(request.thread_id)
        return pb.DeleteThreadResponse()

    @unary
    async def ListMessages(
        self, request: pb.ListMessagesRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListMessagesResponse:
        await self._owned(request.resource_id, request.thread_id)
        key = ("messages", request.thread_id)
        page = await self._store.list_messages(
            request.thread_id, page_request(request.page_size, request.page_token, key, (int,))
        )
        out = pb.ListMessagesResponse(next_page_token=encode_token(key, page.next_cursor))
        raw = sees_raw_tool_payloads()
        for message in page.items:
            message_to_proto(message if raw else transcript_message(message), out.messages.add())
        return out

    @unary
    async def ListRuns(
        self, request: pb.ListRunsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListRunsResponse:
        await self._owned(request.resource_id, request.thread_id)
        key = ("runs", request.thread_id)
        page = await self._store.list_runs(
            request.thread_id, page_request(request.page_size, request.page_token, key, (int, str))
        )
        out = pb.ListRunsResponse(next_page_token=encode_token(key, page.next_cursor))
        for run in page.items:
            run_to_proto(run, out.runs.add())
        return out


# --- conversion ----------------------------------------------------------------------------------


def check_id(name: str, value: str) -> None:
    if not value:
        raise InvalidArgumentError(f"{name} is required")
    if len(value) > MAX_ID_LENGTH:
        raise InvalidArgumentError(f"{name} is longer than {MAX_ID_LENGTH} characters")


def thread_to_proto(thread: Thread, out: pb.Thread | None = None) -> pb.Thread:
    out = out if out is not None else pb.Thread()
    out.id, out.resource_id, out.title = thread.id, thread.resource_id, thread.title
    dict_to_struct(thread.metadata, out.metadata)
    datetime_to_ts(thread.created_at, out.create_time)
    datetime_to_ts(thread.updated_at, out.update_time)
    return out


def run_to_proto(run: RunRecord, out: pb.Run) -> pb.Run:
    out.id, out.agent_id, out.thread_id, out.resource_id = run.id, run.agent_id, run.thread_id, run.resource_id
    out.status = _STATUS[run.status]
    if run.finish_reason:
        out.finish_reason = enum_to_pb(_FINISH, run.finish_reason)
    u = run.usage
    out.usage.input_tokens, out.usage.output_tokens, out.usage.total_tokens = (
        u.input_tokens, u.output_tokens, u.total_tokens)
    out.usage.reasoning_tokens, out.usage.cached_input_tokens = u.reasoning_tokens, u.cached_input_tokens
    datetime_to_ts(run.started_at, out.start_time)
    if run.ended_at is not None:
        datetime_to_ts(run.ended_at, out.end_time)
    for step in run.detail.get("steps", ()):
        s = out.steps.add(number=step["number"], finish_reason=step["finish_reason"], model=step["model"])
        s.start_time.FromMicroseconds(step["started_us"])
        s.end_time.FromMicroseconds(step["ended_us"])
        su = step.get("usage") or {}
        s.usage.input_tokens, s.usage.output_tokens, s.usage.total_tokens = (
            su.get("input_tokens", 0), su.get("output_tokens", 0), su.get("total_tokens", 0))
        s.usage.reasoning_tokens = su.get("reasoning_tokens", 0)
        s.usage.cached_input_tokens = su.get("cached_input_tokens", 0)
    parent = run.detail.get("parent") or {}
    out.parent_run_id, out.parent_tool_call_id = parent.get("run_id", ""), parent.get("tool_call_id", "")
    for hook in run.detail.get("hooks", ()):
        h = out.hooks.add(step=hook["step"], processor_id=hook["processor_id"], hook=hook["hook"],
                          count=hook["count"])
        h.total_duration.FromNanoseconds(round(hook["seconds"] * 1e9))
        h.outcomes.update(hook["outcomes"])
    version = run.detail.get("agentVersion")
    if version:  # the stored agent version the run resolved (treadle.versions)
        out.agent_version_id, out.agent_version_number = version["id"], version["number"]
        out.agent_version_selection = version["selection"]
    resolved = run.detail.get("resolved") or {}  # per-request agents (``variants.Resolution``)
    out.resolved_model = resolved.get("model", "")
    for field, index in resolved.get("matched", ()):
        out.matched_variants.add(field=field, index=index)
    out.resolver_overrides.extend(resolved.get("overrides", ()))
    return out


# --- paging --------------------------------------------------------------------------------------


MAX_TOKEN_CHARS = 4096
"""Longer than any token this server makes (two ids of at most 255 characters and a cursor)."""


def page_request(size: int, token: str, key: tuple[str, str], types: tuple[type, ...]) -> PageRequest:
    if size < 0:
        raise InvalidArgumentError(f"page_size must be >= 0, got {size}")
    return PageRequest(min(size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE), MAX_PAGE_BYTES,
                       decode_token(token, key, types))


def encode_token(key: tuple[str, str], cursor: tuple[Any, ...] | None) -> str:
    if cursor is None:
        return ""
    data = json.dumps({"l": key[0], "k": key[1], "c": list(cursor)}, separators=(",", ":"))
    return base64.urlsafe_b64encode(data.encode()).decode("ascii")


def decode_token(token: str, key: tuple[str, str], types: tuple[type, ...]) -> tuple[Any, ...] | None:
    if not token:
        return None
    try:
        # A token this server made is short and flat: anything else is refused before parsing
        # (100,000 '[' would recurse), and a cursor number must fit the store's 64-bit columns.
        if len(token) > MAX_TOKEN_CHARS:
            raise ValueError("too long")
        data = json.loads(base64.b64decode(token.encode("ascii"), altchars=b"-_", validate=True))
        cursor = tuple(data["c"])
        ok = (data["l"], data["k"]) == key and len(cursor) == len(types) and all(
            type(v) is t and (not isinstance(v, int) or -(1 << 63) <= v < (1 << 63))
            for v, t in zip(cursor, types, strict=True)
        )
    except (binascii.Error, UnicodeError, ValueError, KeyError, TypeError, RecursionError):
        ok = False
    if not ok:
        raise InvalidArgumentError(
            "page_token is malformed or belongs to another listing; pass next_page_token unchanged"
        )
    return cursor
