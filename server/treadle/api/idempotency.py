"""Idempotent thread calls: a client ``request_id`` makes a retry return the first answer.

Every mutating ``ThreadService`` call takes an optional ``request_id``. The first call with an
id (per method and caller) claims it in the store (``request_ids``, one row, so every server on
the store sees it), runs, and stores its answer; a retry with the same id, on any server, within
``WINDOW`` returns that stored answer and changes nothing. While the first call still runs, a
retry waits for its answer (up to ``WAIT``; then UNAVAILABLE, retry again). A call that fails
stores nothing, so its retry runs again (it was not applied). A claim whose server died before
answering is taken over after ``STALE`` (the call may or may not have been applied: the
signal store itself keeps a signal once by its id, but a new signal id is minted then).
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import grpc
from google.protobuf.message import Message as ProtoMessage
from sqlalchemy import BigInteger, Column, Connection, LargeBinary, MetaData, String, Table, delete, select, update
from sqlalchemy.dialects import postgresql, sqlite

from ..core.errors import InvalidArgumentError, ShuttingDownError
from ..memory.engine import Database, is_postgres
from ..memory.retry import StoreUnavailableError
from . import auth

WINDOW = 24 * 3600.0
"""Seconds a request id is remembered (a retry after that runs again)."""
WAIT = 30.0
"""How long a retry waits for the first call with its id to answer."""
STALE = 120.0
"""A claim older than this without an answer belongs to a server that died: taken over."""
MAX_LEN = 255

_md = MetaData()
request_ids = Table(
    "request_ids", _md,
    Column("id", String(255), primary_key=True), Column("method", String(64), primary_key=True),
    Column("caller", String(255), primary_key=True), Column("state", String(16), nullable=False),
    Column("response", LargeBinary, nullable=True), Column("created_at", BigInteger, nullable=False),
)

M = TypeVar("M", bound=ProtoMessage)


def _now() -> int:
    return int(time.time() * 1_000_000)


class RequestIds:
    def __init__(self, db: Callable[[], Database | None]) -> None:
        self._db = db

    async def once(self, method: str, request_id: str, response: type[M], work: Callable[[], Awaitable[M]]) -> M:
        db = self._db()
        if not request_id or db is None:
            return await work()
        if len(request_id) > MAX_LEN:
            raise InvalidArgumentError(f"request_id must be at most {MAX_LEN} characters")
        cred = auth.current_credential()
        key = (request_id, method, cred.id if cred is not None else "")
        deadline = time.monotonic() + WAIT
        while True:
            state, stored = await db.write(_claim, key)
            if state == "claimed":
                break
            if state == "done":
                return response.FromString(stored or b"")
            if time.monotonic() > deadline:
                raise StoreUnavailableError("a call with this request_id is still running; retry later")
            await asyncio.sleep(0.05)
        try:
            out = await work()
        except BaseException:
            await asyncio.shield(db.write(_forget, key))  # not applied: a retry runs again
            raise
        await asyncio.shield(db.write(_answer, key, out.SerializeToString()))
        return out


def _where(key: tuple[str, str, str]) -> Any:
    c = request_ids.c
    return (c.id == key[0]) & (c.method == key[1]) & (c.caller == key[2])


def _claim(conn: Connection, key: tuple[str, str, str]) -> tuple[str, bytes | None]:
    now = _now()
    c = request_ids.c
    conn.execute(delete(request_ids).where(c.created_at < now - int(WINDOW * 1_000_000)))
    insert = (postgresql.insert if is_postgres(conn) else sqlite.insert)(request_ids)
    claimed = conn.execute(insert.values(id=key[0], method=key[1], caller=key[2], state="running",
                                         created_at=now).on_conflict_do_nothing().returning(c.id)).first()
    if claimed is not None:
        return "claimed", None
    row = conn.execute(select(c.state, c.response, c.created_at).where(_where(key))).first()
    if row is None:
        return "running", None  # forgotten meanwhile: claim again
    if row.state == "done":
        return "done", row.response
    if row.created_at < now - int(STALE * 1_000_000):
        conn.execute(update(request_ids).where(_where(key)).values(created_at=now))
        return "claimed", None
    return "running", None


def _forget(conn: Connection, key: tuple[str, str, str]) -> None:
    conn.execute(delete(request_ids).where(_where(key), request_ids.c.state == "running"))


def _answer(conn: Connection, key: tuple[str, str, str], response: bytes) -> None:
    conn.execute(update(request_ids).where(_where(key)).values(state="done", response=response))


class InFlight:
    """The mutating thread calls running now: at SIGTERM they finish (the server waits for them,
    see ``GrpcServer``) and new ones are refused with UNAVAILABLE before they change anything."""

    def __init__(self) -> None:
        self.count = 0
        self.draining = False
        self._idle = asyncio.Event()
        self._idle.set()

    def start_draining(self) -> None:
        self.draining = True

    async def wait_idle(self) -> None:
        await self._idle.wait()

    def enter(self) -> None:
        if self.draining:
            raise ShuttingDownError()  # not applied: a retry elsewhere is safe
        self.count += 1
        self._idle.clear()

    def exit(self) -> None:
        self.count -= 1
        if self.count == 0:
            self._idle.set()


def idempotent(response: type[M]) -> Callable[[Any], Any]:
    """Wrap a unary handler (under ``@unary``) of a servicer that has ``request_ids`` and
    ``inflight``: a mutating call, retried safely by its ``request_id`` and drained at SIGTERM."""
    def wrap(fn: Callable[[Any, Any, grpc.aio.ServicerContext], Awaitable[M]]) -> Any:
        @functools.wraps(fn)
        async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> M:
            inflight: InFlight | None = getattr(self, "inflight", None)
            if inflight is not None:
                inflight.enter()
            try:
                ids: RequestIds | None = getattr(self, "request_ids", None)
                if ids is None:
                    return await fn(self, request, context)
                return await ids.once(fn.__name__, request.request_id, response,
                                      lambda: fn(self, request, context))
            finally:
                if inflight is not None:
                    inflight.exit()
        return wrapper
    return wrap


__all__ = ["MAX_LEN", "STALE", "WAIT", "WINDOW", "InFlight", "RequestIds", "idempotent"]
