"""Per-run fixed dependencies (``RunPlan``) kept apart from per-run mutable state (``RunState``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Callable
from typing import Any

from opentelemetry.trace import Tracer

from ..agents import Agent, CallOptions
from ..core.chunks import Usage
from ..core.message_list import MessageList
from ..core.messages import SystemMessage
from ..core.tool_payload import ToolPayloadPolicy
from ..core.args import StepResult
from ..processors.runner import ChainRunner, RunScope
from ..providers.base import ModelConfig, ModelSettings
from ..tools import Tool, ToolHooks
from .payload_view import PayloadView


@dataclass
class RunPlan:
    """Everything a run needs that does not change while it runs."""

    run_id: str
    agent: Agent
    options: CallOptions
    input_processors: list[Any]
    output_processors: list[Any]
    error_processors: list[Any]
    tools: dict[str, Tool]
    tool_hooks: ToolHooks
    model: ModelConfig
    model_settings: ModelSettings
    max_steps: int
    max_processor_retries: int | None
    instructions: list[SystemMessage]
    tracer: Tracer
    find_tool: Callable[[str], Tool | None] | None = None
    """Finds a tool by name for a ``processInputStep`` that adds one (``Registry.find_tool``)."""
    version: Any = None
    """The agent version the run resolved (``versions.ResolvedVersion``), None without versions."""
    view: PayloadView = field(default_factory=lambda: PayloadView(ToolPayloadPolicy()))
    """How the run's tool payloads look to clients (the agent's tool payload rules)."""

    def retry_budget_for_tripwire(self) -> int:
        """Tripwire retries need an explicit ``max_processor_retries``."""
        return self.max_processor_retries or 0

    def retry_budget_for_api_errors(self) -> int:
        from ..agents import DEFAULT_API_ERROR_RETRIES

        if self.max_processor_retries is None:
            return DEFAULT_API_ERROR_RETRIES
        return self.max_processor_retries


@dataclass
class RunState:
    """What changes as the run goes."""

    message_list: MessageList
    scope: RunScope
    chain: ChainRunner
    steps: list[StepResult] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    step_number: int = 0
    completed_steps: int = 0
    feedback: str | None = None
    response_id: str = ""
    """The id of the response's current assistant message (every step adds its parts to it);
    cleared when a signal is taken in, so that the answer after it starts a new message."""
    step_tools: dict[str, Tool] = field(default_factory=dict)
    """The current step's tools, after ``processInputStep``: a tool call runs the one named here."""
    bailed: bool = False
    """A delegation-complete hook bailed: the run ends after this step's tools."""
    finish_streamed: bool = False
    """The current step's model ``finish`` went through the output processors."""

    @property
    def retry_count(self) -> int:
        return self.scope.retry_count

    def count_retry(self) -> None:
        self.scope.retry_count += 1
