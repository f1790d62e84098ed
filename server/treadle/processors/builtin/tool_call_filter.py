"""``ToolCallFilter``: leaves earlier tool calls (all, or of the named tools) out of the
conversation the model sees, to save tokens or hide what tools returned before."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...messages import Message, ToolInvocationPart
from ..args import ProcessInputArgs


@dataclass(frozen=True)
class ToolCallFilterOptions:
    exclude: tuple[str, ...] | None = None
    """Tool names whose calls are removed; unset removes every tool call."""


class ToolCallFilter:
    name = "Tool call filter"
    description = "Removes earlier tool calls and their results from the conversation."

    def __init__(self, *, exclude: tuple[str, ...] | list[str] | None = None, id: str = "tool-call-filter") -> None:
        self.id = id
        self.options = ToolCallFilterOptions(tuple(exclude) if exclude is not None else None)

    def _drops(self, part: object) -> bool:
        if not isinstance(part, ToolInvocationPart):
            return False
        return self.options.exclude is None or part.tool_name in self.options.exclude

    def process_input(self, args: ProcessInputArgs) -> list[Message] | None:
        emptied = []
        for message in args.message_list.get_all():
            if message.role != "assistant" or not any(self._drops(p) for p in message.content.parts):
                continue
            parts = [p for p in message.content.parts if not self._drops(p)]
            message.content = replace(message.content, parts=parts)
            if not any(p.type in ("text", "reasoning", "file", "tool-invocation") for p in parts):
                emptied.append(message.id)
        if emptied:
            args.message_list.remove_by_ids(emptied)
        return None
