"""The live message list of one run (the Mastra framework's ``MessageList``).

Every processor of a run shares one instance; it is the source of truth for what the model sees
next and what memory stores. Domain only: imports nothing but ``messages``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, TypeAlias

from .messages import Message, SystemMessage, ToolInvocationPart, copy_message

Source: TypeAlias = Literal["memory", "input", "response", "context"]


@dataclass
class _Entry:
    message: Message
    source: Source


@dataclass(frozen=True)
class Checkpoint:
    """A copy of the list taken at a step boundary, to roll a rejected step back."""

    entries: tuple[_Entry, ...]


class MessageList:
    def __init__(self, *, thread_id: str = "", resource_id: str = "") -> None:
        self.thread_id = thread_id
        self.resource_id = resource_id
        self._entries: list[_Entry] = []
        self._by_id: dict[str, _Entry] = {}
        """The entries by message id, so adding or finding a message costs the same for any
        length (a request of 20,000 messages must not scan the list per message)."""
        self._system: list[SystemMessage] = []
        self._tagged_system: dict[str, list[SystemMessage]] = {}

    # --- views --------------------------------------------------------------------------------

    def get_all(self) -> list[Message]:
        """Every non-system message, oldest first."""
        return [e.message for e in self._entries]

    def get_input(self) -> list[Message]:
        return self._by_source("input")

    def get_response(self) -> list[Message]:
        return self._by_source("response")

    def get_remembered(self) -> list[Message]:
        return self._by_source("memory")

    def get_unsaved(self) -> list[Message]:
        """Messages this run added (input and response): what memory stores at the end."""
        return [e.message for e in self._entries if e.source in ("input", "response")]

    def source_of(self, message_id: str) -> Source | None:
        e = self._by_id.get(message_id)
        return e.source if e is not None else None

    def _by_source(self, source: Source) -> list[Message]:
        return [e.message for e in self._entries if e.source == source]

    def __len__(self) -> int:
        return len(self._entries)

    # --- edits --------------------------------------------------------------------------------

    def add(self, messages: Message | Iterable[Message], source: Source = "response") -> None:
        """Append messages; a message whose id is already present replaces it in place."""
        items = [messages] if isinstance(messages, Message) else list(messages)
        for message in items:
            if message.role == "system":
                self._system.append(SystemMessage(content=message.text))
                continue
            if not message.thread_id:
                message.thread_id = self.thread_id
            if not message.resource_id:
                message.resource_id = self.resource_id
            existing = self._by_id.get(message.id)
            if existing is not None:
                existing.message = message
            else:
                entry = _Entry(message, source)
                self._entries.append(entry)
                self._by_id[message.id] = entry

    def remove_by_ids(self, ids: Iterable[str]) -> list[Message]:
        """Remove the messages with these ids; returns the removed ones."""
        wanted = set(ids)
        if not wanted & self._by_id.keys():
            return []
        removed = [e.message for e in self._entries if e.message.id in wanted]
        self._set_entries([e for e in self._entries if e.message.id not in wanted])
        return removed

    def update_tool_invocation(self, part: ToolInvocationPart) -> bool:
        """Replace the newest tool-invocation part with the same ``tool_call_id``.

        Returns False when no message holds that tool call.
        """
        for e in reversed(self._entries):
            parts = e.message.content.parts
            for i, existing in enumerate(parts):
                if isinstance(existing, ToolInvocationPart) and (
                    existing.tool_call_id == part.tool_call_id
                ):
                    parts[i] = part
                    if e.source == "memory":
                        e.source = "response"  # edited history must be saved again
                    return True
        return False

    def find_tool_invocation(self, tool_call_id: str) -> ToolInvocationPart | None:
        for e in reversed(self._entries):
            for p in e.message.content.parts:
                if isinstance(p, ToolInvocationPart) and p.tool_call_id == tool_call_id:
                    return p
        return None

    def apply_diff(self, returned: list[Message], scope: list[Message]) -> None:
        """Reconcile a hook's returned array with the messages it was shown.

        Ids shown in ``scope`` but missing from ``returned`` are removed; returned messages
        replace those with the same id or are added; ``system`` messages become system messages.
        """
        kept = {m.id for m in returned}
        self.remove_by_ids(m.id for m in scope if m.id not in kept)
        for message in returned:
            source = self.source_of(message.id) or ("response" if message.role == "assistant" else "input")
            self.add(message, source)

    # --- system messages ----------------------------------------------------------------------

    @property
    def system_messages(self) -> list[SystemMessage]:
        """The untagged system messages (agent instructions and processor additions)."""
        return self._system

    def add_system(self, message: SystemMessage | str, tag: str | None = None) -> None:
        msg = SystemMessage(message) if isinstance(message, str) else message
        if tag is None:
            self._system.append(msg)
        else:
            self._tagged_system.setdefault(tag, []).append(msg)

    def get_system_messages(self, tag: str | None = None) -> list[SystemMessage]:
        return list(self._system if tag is None else self._tagged_system.get(tag, []))

    def get_all_system_messages(self) -> list[SystemMessage]:
        tagged = [m for msgs in self._tagged_system.values() for m in msgs]
        return [*self._system, *tagged]

    def replace_all_system_messages(self, messages: list[SystemMessage]) -> None:
        """Replace the untagged bucket only."""
        self._system = list(messages)

    def clear_system_tag(self, tag: str) -> None:
        self._tagged_system.pop(tag, None)

    # --- step boundaries ----------------------------------------------------------------------

    def checkpoint(self) -> Checkpoint:
        return Checkpoint(tuple(_Entry(copy_message(e.message), e.source) for e in self._entries))

    def restore(self, checkpoint: Checkpoint) -> None:
        self._set_entries([_Entry(copy_message(e.message), e.source) for e in checkpoint.entries])

    def _set_entries(self, entries: list[_Entry]) -> None:
        self._entries = entries
        self._by_id = {e.message.id: e for e in entries}
