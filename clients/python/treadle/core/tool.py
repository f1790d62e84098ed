"""A tool: name, description, JSON schemas and an executor."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from .specs import ToolSpec


@dataclass
class ToolContext:
    """Passed to ``execute``: who is calling, and a writer for custom chunks."""

    tool_call_id: str
    run_id: str
    agent_id: str
    request_context: dict[str, Any] = field(default_factory=dict)
    writer: Any = None
    thread_id: str = ""
    """The run's memory thread, when it has one (remote tools receive it)."""
    resource_id: str = ""
    delegation: Any = None
    """For a sub-agent tool: the parent's delegation hooks (the server sets it)."""


@dataclass
class Tool:
    name: str
    execute: Callable[[Any, ToolContext], Any | Awaitable[Any]]
    description: str = ""
    input_schema: dict[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    output_schema: dict[str, Any] | None = None
    to_model_output: Callable[[Any], Any] | None = None
    """What of the output goes back to the model (the Mastra framework's ``toModelOutput``);
    the client's ``tool-result`` chunk still holds the whole output."""

    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.input_schema)

    async def run(self, args: Any, ctx: ToolContext) -> Any:
        result = self.execute(args, ctx)
        if inspect.isawaitable(result):
            result = await result
        return result


def tool(
    name: str, description: str = "", input_schema: dict[str, Any] | None = None
) -> Callable[[Callable[..., Any]], Tool]:
    """Decorator: ``@tool("weather", "Current weather", {...})`` over ``async def f(args, ctx)``."""

    def wrap(fn: Callable[..., Any]) -> Tool:
        return Tool(
            name=name,
            execute=fn,
            description=description or (fn.__doc__ or "").strip(),
            input_schema=input_schema or {"type": "object", "properties": {}},
        )

    return wrap
