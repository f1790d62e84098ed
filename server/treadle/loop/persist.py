"""What one run writes to its memory thread, and when (the persistence rules of memory).

Only what remains in the message list after the processors ran is written: the input after
``processInput``, each accepted step at its boundary (so a crash loses at most the step in
progress, and a step rolled back for a retry was never written), and the final state after
``processOutputResult``. Messages are upserted by id, so the one assistant message of a response
is written again as it grows; unchanged messages are not written twice.

The loop sees storage only through ``ThreadMemory``, a protocol the memory store satisfies.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Sequence
from typing import Any, Literal, Protocol, TypeAlias

from ..chunks import Usage
from ..message_list import MessageList
from ..messages import Message

log = logging.getLogger(__name__)

RunStatus: TypeAlias = Literal["running", "finished", "failed", "aborted"]


class ThreadMemory(Protocol):
    async def open_thread(
        self, resource_id: str, thread_id: str, *, title: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Any: ...

    async def load_history(self, thread_id: str, limit: int) -> list[Message]: ...

    async def save_messages(
        self, thread_id: str, resource_id: str, messages: Sequence[Message],
        delete_ids: Sequence[str] = (),
    ) -> None: ...

    async def start_run(self, run_id: str, agent_id: str, thread_id: str, resource_id: str) -> None: ...

    async def end_run(self, run_id: str, status: RunStatus, finish_reason: str, usage: Usage) -> None: ...


class Persister:
    """One run's writes; inactive (every method a no-op) for a run without memory."""

    def __init__(self, memory: ThreadMemory | None, thread_id: str = "", resource_id: str = "") -> None:
        self._memory = memory if thread_id else None
        self.thread_id, self.resource_id = thread_id, resource_id
        self.history: list[Message] = []
        self._saved: dict[str, Message] = {}
        """Copies of what this run wrote, by id: to skip unchanged ones and to find removed ones."""
        self._run_id = ""

    @property
    def active(self) -> bool:
        return self._memory is not None

    async def open(
        self, *, run_id: str, agent_id: str, last_messages: int, title: str | None,
        metadata: dict[str, Any] | None,
    ) -> None:
        """Create or update the thread (refused for another resource), record the run, load
        the history. Runs before the first chunk, so a refusal is the call's status."""
        if self._memory is None:
            return
        await self._memory.open_thread(self.resource_id, self.thread_id, title=title, metadata=metadata)
        self.history = await self._memory.load_history(self.thread_id, last_messages)
        await self._memory.start_run(run_id, agent_id, self.thread_id, self.resource_id)
        self._run_id = run_id

    async def save(self, ml: MessageList) -> None:
        """Write the run's messages as they are now: new or changed ones, and remove those this
        run wrote that a processor has since removed from the list."""
        if self._memory is None:
            return
        current = ml.get_unsaved()
        ids = {m.id for m in current}
        changed = [m for m in current if self._saved.get(m.id) != m]
        gone = [i for i in self._saved if i not in ids]
        if not changed and not gone:
            return
        await self._memory.save_messages(self.thread_id, self.resource_id, changed, gone)
        for i in gone:
            del self._saved[i]
        for m in changed:
            self._saved[m.id] = copy.deepcopy(m)

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
            await self._memory.end_run(self._run_id, status, finish_reason, usage)
        except Exception:  # the answer is out; a failed bookkeeping write must not change it
            log.warning("could not record the end of run %s", self._run_id, exc_info=True)
