"""The store protocol the loop, the servicers and the app see; engines are adapters behind it.

Nothing here knows SQL. ``MemoryStore`` is what ``treadle.loop`` needs (structurally: the loop
declares the same methods in ``loop/persist.py`` and never imports this package) plus the reads
and edits of ``ThreadService`` and the stored agents.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol, TypeAlias

from ..core.chunks import Usage
from ..core.messages import Message, utcnow

RunStatus: TypeAlias = Literal["running", "finished", "failed", "aborted"]


@dataclass
class Thread:
    id: str
    resource_id: str
    title: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)


@dataclass
class RunRecord:
    id: str
    agent_id: str
    thread_id: str
    resource_id: str
    status: RunStatus = "running"
    finish_reason: str = ""
    usage: Usage = field(default_factory=Usage)
    started_at: datetime = field(default_factory=utcnow)
    ended_at: datetime | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    """Recorded when the run ends: ``steps`` (number, ``started_us``/``ended_us``, finish reason,
    usage, model) and ``hooks`` (per step, processor and hook: count, seconds, outcomes)."""


@dataclass
class StoredAgent:
    """An agent created over the API, as its proto JSON form (the store never parses it)."""

    id: str
    definition: dict[str, Any]


@dataclass
class PageRequest:
    """A page of a listing: at most ``size`` rows and about ``max_bytes`` of them (never less
    than one row), after the row the ``cursor`` names."""

    size: int
    max_bytes: int
    cursor: tuple[Any, ...] | None = None


@dataclass
class Page:
    items: list[Any]
    next_cursor: tuple[Any, ...] | None = None


class MemoryStore(Protocol):
    # --- what the loop uses -------------------------------------------------------------------

    async def open_thread(
        self, resource_id: str, thread_id: str, *, title: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Thread:
        """The thread, created on first use; a given title or metadata replaces the stored one.
        Raises ``PermissionDeniedError`` (writing nothing) when it belongs to another resource."""
        ...

    async def begin_run(
        self, run_id: str, agent_id: str, resource_id: str, thread_id: str, *, title: str | None,
        metadata: dict[str, Any] | None, history: int, input: Sequence[Message] = (),
    ) -> list[Message]:
        """In one transaction: ``open_thread``, ``start_run``, ``load_history``, then
        ``save_messages`` of those of ``input`` that are not in that history."""
        ...

    async def load_history(self, thread_id: str, limit: int) -> list[Message]:
        """The newest ``limit`` messages of the thread, oldest first."""
        ...

    async def save_messages(
        self, thread_id: str, resource_id: str, messages: Sequence[Message],
        delete_ids: Sequence[str] = (),
    ) -> None:
        """Upsert ``messages`` by id (a new one goes after the others, a known one keeps its
        place) and delete ``delete_ids``, in one transaction; touches the thread's update time."""
        ...

    async def start_run(self, run_id: str, agent_id: str, thread_id: str, resource_id: str) -> None: ...

    async def end_run(
        self, run_id: str, status: RunStatus, finish_reason: str, usage: Usage, *,
        thread_id: str = "", resource_id: str = "", messages: Sequence[Message] = (),
        delete_ids: Sequence[str] = (), detail: dict[str, Any] | None = None,
    ) -> None:
        """Record how the run ended (with ``detail``, its steps and hook invocations), saving ``messages`` (as ``save_messages``) in the same
        transaction."""
        ...

    # --- ThreadService ------------------------------------------------------------------------

    async def create_thread(self, thread: Thread) -> Thread:
        """Raises ``AlreadyExistsError`` when the id is taken."""
        ...

    async def get_thread(self, thread_id: str) -> Thread | None: ...

    async def list_threads(self, resource_id: str, page: PageRequest) -> Page: ...

    async def update_thread(
        self, thread_id: str, *, title: str | None = None, metadata: dict[str, Any] | None = None
    ) -> Thread: ...

    async def delete_thread(self, thread_id: str) -> None:
        """The thread, its messages and its runs."""
        ...

    async def list_messages(self, thread_id: str, page: PageRequest) -> Page: ...

    async def list_runs(self, thread_id: str, page: PageRequest) -> Page: ...

    # --- agents created over the API ----------------------------------------------------------

    async def save_agent(self, agent: StoredAgent) -> None: ...

    async def delete_agent(self, agent_id: str) -> None: ...

    async def list_agents(self) -> list[StoredAgent]: ...

    async def close(self) -> None: ...
