"""Tools: the protocol, tool hooks and execution."""

from ..core.tool import Tool, ToolContext, tool
from .hooks import ToolAfterHookContext, ToolBeforeHookResult, ToolHookContext, ToolHooks

__all__ = [
    "Tool",
    "ToolAfterHookContext",
    "ToolBeforeHookResult",
    "ToolContext",
    "ToolHookContext",
    "ToolHooks",
    "tool",
]
