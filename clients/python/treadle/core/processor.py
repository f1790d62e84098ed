"""The Processor protocol and hook names."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

HOOKS: tuple[str, ...] = (
    "process_input",
    "process_input_step",
    "process_llm_request",
    "process_llm_response",
    "process_api_error",
    "process_output_stream",
    "process_output_step",
    "process_tool_result",
    "process_output_result",
)
"""Hook method names, in the Mastra framework's order (``processInput`` -> ``process_input`` ...)."""

AGENT_HOOKS: tuple[str, ...] = ("resolve_agent",)
"""Hooks a processor serves for the agent rather than for a step: ``resolve_agent`` runs once per
call, for the processor an agent names as its ``resolver``."""

TOOL_HOOKS: tuple[str, ...] = ("before_tool_call", "after_tool_call", "transform_tool_payload")
"""The agent's tool hooks, which a processor may also serve (a remote one: in any language).
A processor's optional ``tool_names`` (a set of names, or a dict hook -> names) limits these
hooks, and ``process_tool_result``, to those tools. ``transform_tool_payload`` (how a tool payload
looks to clients) runs only for agents that list the processor in ``tool_payload_processors``."""
DELEGATION_HOOKS: tuple[str, ...] = ("on_delegation_start", "on_delegation_complete")
"""Around a sub-agent tool call (``agent-<key>``) of the agent's model; served like tool hooks."""

SEED_NAMES: dict[str, str] = {
    "process_input": "processInput",
    "process_input_step": "processInputStep",
    "process_llm_request": "processLLMRequest",
    "process_llm_response": "processLLMResponse",
    "process_api_error": "processAPIError",
    "process_output_stream": "processOutputStream",
    "process_output_step": "processOutputStep",
    "process_tool_result": "processToolResult",
    "process_output_result": "processOutputResult",
    "before_tool_call": "beforeToolCall",
    "after_tool_call": "afterToolCall",
    "on_violation": "onViolation",
    "on_delegation_start": "onDelegationStart",
    "on_delegation_complete": "onDelegationComplete",
    "transform_tool_payload": "transformToolPayload",
    "resolve_agent": "resolveAgent",
}


@dataclass
class ProcessorViolation:
    """Passed to ``on_violation`` on every abort."""

    processor_id: str
    message: str
    detail: Any = None
    hook: str = ""


@runtime_checkable
class Processor(Protocol):
    """Implement ``id`` and any subset of the hook methods in ``HOOKS``.

    Optional attributes: ``name``, ``description``, ``process_data_parts`` (bool: see ``data-*``
    chunks in ``process_output_stream``) and ``on_violation(violation)``.
    """

    id: str


def wants_tool(processor: object, hook: str, tool_name: str) -> bool:
    """Whether the processor's ``hook`` (a tool hook or ``process_tool_result``) is for this tool."""
    check = getattr(processor, "wants_tool", None)
    if callable(check):
        return bool(check(hook, tool_name))
    names = getattr(processor, "tool_names", None)
    if isinstance(names, dict):
        names = names.get(hook)
    return not names or tool_name in names


def implements(processor: object, hook: str) -> Callable[[Any], Any] | None:
    """The processor's bound hook method, or None when it does not implement ``hook``.

    A processor whose hooks are only known at run time (a remote one) answers through an
    optional ``implements_hook(hook) -> bool`` method.
    """
    check = getattr(processor, "implements_hook", None)
    if check is not None and not check(hook):
        return None
    method = getattr(processor, hook, None)
    return method if callable(method) else None
