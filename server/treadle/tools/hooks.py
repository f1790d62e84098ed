"""Tool hooks: ``before_tool_call`` may skip a tool, ``after_tool_call`` sees output or error.

Per-call hooks override the agent's matching hook, one hook at a time.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any


@dataclass
class ToolHookContext:
    tool_name: str
    input: Any
    context: dict[str, Any] = field(default_factory=dict)
    """``tool_call_id``, ``run_id`` and the request context."""
    metadata: dict[str, Any] = field(default_factory=dict)
    """``agent_id`` and ``agent_name``."""


@dataclass
class ToolAfterHookContext(ToolHookContext):
    output: Any = None
    error: BaseException | None = None


@dataclass
class ToolBeforeHookResult:
    """``proceed=False`` skips the tool and ``output`` becomes its result."""

    proceed: bool = True
    output: Any = None


BeforeHook = Callable[[ToolHookContext], Any | Awaitable[Any]]
AfterHook = Callable[[ToolAfterHookContext], Any | Awaitable[Any]]


@dataclass
class ToolHooks:
    before_tool_call: BeforeHook | None = None
    after_tool_call: AfterHook | None = None

    def overridden_by(self, per_call: ToolHooks | None) -> ToolHooks:
        if per_call is None:
            return self
        return replace(
            self,
            before_tool_call=per_call.before_tool_call or self.before_tool_call,
            after_tool_call=per_call.after_tool_call or self.after_tool_call,
        )


async def call_hook(hook: Callable[[Any], Any] | None, ctx: Any) -> Any:
    if hook is None:
        return None
    result = hook(ctx)
    if inspect.isawaitable(result):
        result = await result
    return result


def as_before_result(value: Any) -> ToolBeforeHookResult | None:
    """Accept ``ToolBeforeHookResult`` or the Mastra framework's ``{"proceed": False, "output": ...}``."""
    if value is None or isinstance(value, ToolBeforeHookResult):
        return value
    if isinstance(value, dict) and "proceed" in value:
        return ToolBeforeHookResult(bool(value["proceed"]), value.get("output"))
    return None
