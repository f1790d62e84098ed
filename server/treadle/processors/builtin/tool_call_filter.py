"""``ToolCallFilter``: leaves earlier tool calls (all, or of the named tools) out of the prompt,
to save tokens or keep what tools returned before away from the model."""

from __future__ import annotations

from dataclasses import dataclass

from ...core.messages import PromptMessage, ToolCallPart, ToolResultPart
from ...core.args import ProcessLLMRequestArgs
from ...core.results import ProcessLLMRequestResult


@dataclass(frozen=True)
class ToolCallFilterOptions:
    exclude: tuple[str, ...] | None = None
    """Tool names whose calls are removed; unset removes every tool call."""


class ToolCallFilter:
    """Works on each call's prompt (``processLLMRequest``), so the thread keeps every call; the
    calls of the current run stay, since the model needs their results to go on."""

    name = "Tool call filter"
    description = "Removes earlier tool calls and their results from the prompt."

    def __init__(self, *, exclude: tuple[str, ...] | list[str] | None = None, id: str = "tool-call-filter") -> None:
        self.id = id
        self.options = ToolCallFilterOptions(tuple(exclude) if exclude is not None else None)

    def process_llm_request(self, args: ProcessLLMRequestArgs) -> ProcessLLMRequestResult | None:
        current = {c.tool_call_id for step in args.steps for c in step.tool_calls}
        excluded = self.options.exclude

        def drops(part: object) -> bool:
            if not isinstance(part, (ToolCallPart, ToolResultPart)) or part.tool_call_id in current:
                return False
            return excluded is None or part.tool_name in excluded

        if not any(drops(p) for m in args.prompt for p in m.content):
            return None
        prompt = []
        for message in args.prompt:
            parts = [p for p in message.content if not drops(p)]
            if parts or not message.content:
                prompt.append(PromptMessage(message.role, parts, message.provider_options))
        return ProcessLLMRequestResult(prompt=prompt)
