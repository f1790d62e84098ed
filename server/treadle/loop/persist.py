"""What one run writes to its memory thread, and when (the persistence rules of memory).

Only what remains in the message list after the processors ran is written: the input after
``processInput``, each accepted step at its boundary (so a crash loses at most the step in
progress, and a step rolled back for a retry was never written), and the final state after
``processOutputResult``. Messages are upserted by id, so the one assistant message of a response
is written again as it grows; unchanged messages are not written twice.

Where no processor can change what is written, writes that would follow each other share one
transaction: a run without input processors saves its input with its opening, and a last step
that no ``processOutputResult`` follows is saved with the run's end.

The loop sees storage only through ``ThreadMemory``, a protocol the memory store satisfies.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Literal, Protocol, TypeAlias

from ..core.chunks import Usage
from ..core.message_list import MessageList
from ..core.messages import Message, copy_message
from ..processors.stats import RunStats
from .payload_view import PayloadView

log = logging.getLogger(__name__)

RunStatus: TypeAlias = Literal["running", "finished", "failed", "aborted"]


class ThreadMemory(Protocol):
    async def begin_run(
        self, run_id: str, agent_id: str, resource_id: str, thread_id: str, *, title: str | None,
        metadata: dict[str, Any] | None, history: int, input: Sequence[Message] = (),
    ) -> list[Message]:
        """Open the thread (PermissionDeniedError for another resource), record the run, return
        the newest ``history`` messages, and save ``input`` after them, in one transaction."""
        ...

    async def save_messages(
        self, thread_id: str, resource_id: str, messages: Sequence[Message],
        delete_ids: Sequence[str] = (),
    ) -> None: ...

    async def end_run(
        self, run_id: str, status: RunStatus, finish_reason: str, usage: Usage, *,
        thread_id: str = "", resource_id: str = "", messages: Sequence[Message] = (),
        delete_ids: Sequence[str] = (), detail: dict[str, Any] | None = None,
    ) -> None: ...


class Persister:
    """One run's writes; inactive (every method a no-op) for a run without memory."""

    def __init__(self, memory: ThreadMemory | None, thread_id: str = "", resource_id: str = "") -> None:
        self._memory = memory if thread_id else None
        self.thread_id, self.resource_id = thread_id, resource_id
        self.history: list[Message] = []
        self._saved: dict[str, Message] = {}
        """Copies of what this run wrote, by id: to skip unchanged ones and to find removed ones."""
        self._run_id = ""
        self.stats: RunStats | None = None
        """The run's steps and hook invocations, stored with its end."""
        self.extra: dict[str, Any] = {}
        """More of the run's detail, stored with its end (the agent version it ran)."""
        self.view: PayloadView | None = None
        """Stores each tool invocation's transcript projection beside its raw payloads."""
        self.resolved: dict[str, Any] | None = None
        """What the call resolved of a per-request agent (``variants.Resolution.detail``)."""
        self.parent: dict[str, str] | None = None
        """A sub-agent's run: who delegated it (``run_id``, ``tool_call_id``, ``agent_id``)."""

    def _detail(self) -> dict[str, Any] | None:
        detail = self.stats.detail() if self.stats is not None else None
        if self.resolved is not None:
            detail = {**(detail or {}), "resolved": self.resolved}
        if self.parent is not None:
            detail = {**(detail or {}), "parent": self.parent}
        if self.extra:
            detail = {**(detail or {}), **self.extra}
        return detail

    @property
    def active(self) -> bool:
        return self._memory is not None

    async def open(
        self, *, run_id: str, agent_id: str, last_messages: int, title: str | None,
        metadata: dict[str, Any] | None, input: Sequence[Message] = (),
    ) -> None:
        """Create or update the thread (refused for another resource), record the run, load
        the history. Runs before the first chunk, so a refusal is the call's status. ``input``:
        the run's input as it will be stored (no processor changes it), saved with all that."""
        if self._memory is None:
            return
        for m in input:  # as the message list sets them, so that the saved copy compares equal
            m.thread_id = m.thread_id or self.thread_id
            m.resource_id = m.resource_id or self.resource_id
        if input and self.view:
            await self.view.annotate(list(input))
        self.history = await self._memory.begin_run(
            run_id, agent_id, self.resource_id, self.thread_id, title=title, metadata=metadata,
            history=last_messages, input=input,
        )
        self._run_id = run_id
        known = {m.id for m in self.history}  # resent: kept where the history has it, not written
        self._written([m for m in input if m.id not in known], [])

    def _changes(self, ml: MessageList) -> tuple[list[Message], list[str]]:
        """New or changed messages of this run, and those it wrote that a processor removed."""
        current = ml.get_unsaved()
        ids = {m.id for m in current}
        return [m for m in current if self._saved.get(m.id) != m], [i for i in self._saved if i not in ids]

    def _written(self, changed: list[Message], gone: list[str]) -> None:
        for i in gone:
            del self._saved[i]
        for m in changed:
            self._saved[m.id] = copy_message(m)

    async def save(self, ml: MessageList) -> None:
        """Write the run's messages as they are now (only what changed)."""
        if self._memory is None:
            return
        changed, gone = self._changes(ml)
        if self.view:
            await self.view.annotate(changed)
        if changed or gone:
            await self._memory.save_messages(self.thread_id, self.resource_id, changed, gone)
            self._written(changed, gone)

    async def finish(self, ml: MessageList, finish_reason: str, usage: Usage) -> None:
        """The final state after ``processOutputResult``, and the run's end, in one write."""
        if self._memory is None or not self._run_id:
            return
        changed, gone = self._changes(ml)
        if self.view:
            await self.view.annotate(changed)
        await self._memory.end_run(
            self._run_id, "finished", finish_reason, usage, thread_id=self.thread_id,
            resource_id=self.resource_id, messages=changed, delete_ids=gone, detail=self._detail(),
        )
        self._written(changed, gone)
        self._run_id = ""  # ended

    async def drop_response(self, ml: MessageList) -> None:
        """A final answer was rejected: remove what this run wrote of it."""
        if self._memory is None:
            return
        response = [m.id for m in ml.get_response() if m.id in self._saved]
        if response:
            await self._memory.save_messages(self.thread_id, self.resource_id, [], response)
            for i in response:
                del self._saved[i]

    async def end(self, status: RunStatus, finish_reason: str, usage: Usage) -> None:
        if self._memory is None or not self._run_id:
            return
        try:
            await self._memory.end_run(self._run_id, status, finish_reason, usage, detail=self._detail())
        except Exception:  # the answer is out; a failed bookkeeping write must not change it
            log.warning("could not record the end of run %s", self._run_id, exc_info=True)
