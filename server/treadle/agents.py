"""Agent definitions and per-call options, as the loop sees them (no protobuf here).

An agent names its processors and tools either by reference (``ProcessorRef`` / a tool name,
resolved through the ``Registry`` at run time: agents from config files and the API) or holds
the objects themselves (agents registered from Python code).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, TypeAlias

from .core.errors import InvalidArgumentError, PermissionDeniedError
from .core.messages import Message, SystemMessage, utcnow

FailurePolicy: TypeAlias = Literal["fail_closed", "fail_open"]
AgentSource: TypeAlias = Literal["config", "code", "api"]

DEFAULT_MAX_STEPS = 5
DEFAULT_API_ERROR_RETRIES = 3
"""Error-processor retry budget when ``max_processor_retries`` is unset."""

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")


@dataclass
class ProcessorRef:
    """A processor named by id, with what to do when it cannot answer; or, with ``builtin``,
    one of the built-in processors configured by ``options`` (its id defaults to the name)."""

    id: str = ""
    failure_policy: FailurePolicy = "fail_closed"
    timeout: float | None = None
    """The agent's cap on one hook invocation, in seconds."""
    parallel_group: str = ""
    """Input processors: consecutive refs with the same group run as parallel guardrails."""
    with_model: bool = False
    """The group's ``processInput`` also runs alongside the first provider call."""
    builtin: str = ""
    """A built-in processor's name (``pii``, ``token-limiter``, ...)."""
    options: dict[str, Any] | None = None
    """The built-in's options, in their camelCase JSON form."""
    locked: bool = False
    """Mandatory: a per-call override of the lane must keep it, in the agent's order, and the
    agent's settings of it apply (``lane_for_call``)."""

    @property
    def processor_id(self) -> str:
        return self.id or self.builtin


@dataclass
class ToolHooksRef:
    """Tool hooks named by the ids they were registered under."""

    before_tool_call: str = ""
    after_tool_call: str = ""


@dataclass
class MemoryOptions:
    resource: str
    thread: str
    thread_title: str = ""
    thread_metadata: dict[str, Any] | None = None


DEFAULT_LAST_MESSAGES = 10


@dataclass
class MemorySettings:
    """How an agent uses its memory thread."""

    last_messages: int = DEFAULT_LAST_MESSAGES
    """How many of the thread's newest messages a call loads as history; 0 loads none."""


@dataclass
class CallOptions:
    """Per-call overrides. ``None`` means "not set": the agent's value applies."""

    input_processors: list[Any] | None = None
    output_processors: list[Any] | None = None
    error_processors: list[Any] | None = None
    max_steps: int | None = None
    max_processor_retries: int | None = None
    tool_choice: Any = None
    active_tools: list[str] | None = None
    model_settings: Any = None
    provider_options: dict[str, Any] | None = None
    memory: MemoryOptions | None = None
    request_context: dict[str, Any] = field(default_factory=dict)
    structured_output: dict[str, Any] | None = None
    tool_hooks: Any = None
    """``ToolHooks`` (Python) or ``ToolHooksRef``; overrides the agent's matching hooks."""
    model: str | None = None
    prepare_step: Any = None
    """A callable run as the last ``process_input_step`` (the Mastra framework's ``prepareStep``)."""

    def merged_over(self, defaults: CallOptions | None) -> CallOptions:
        """These options with unset fields taken from ``defaults``."""
        if not isinstance(defaults, CallOptions):  # None, or a code agent's function (resolved per call)
            return self
        out = CallOptions()
        for name in self.__dataclass_fields__:
            mine, theirs = getattr(self, name), getattr(defaults, name)
            if name == "request_context":
                setattr(out, name, {**theirs, **mine})
            else:
                setattr(out, name, mine if mine is not None else theirs)
        return out


@dataclass
class NotificationRule:
    """One decision of a delivery policy: an action, sent after ``delay`` seconds."""

    action: Literal["deliver", "summarize", "defer", "discard"]
    delay: float = 0.0


@dataclass
class NotificationPolicy:
    """Overrides of the built-in priority policy, checked decide → sources → priorities → default."""

    default: NotificationRule | None = None
    priorities: dict[str, NotificationRule] = field(default_factory=dict)
    sources: dict[str, NotificationRule] = field(default_factory=dict)
    decide: Any = None
    """A callable, or the name of a decide function registered with the server."""


@dataclass
class Agent:
    id: str
    name: str = ""
    model: str = ""
    instructions: list[SystemMessage] = field(default_factory=list)
    description: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    base_url: str = ""
    provider_credential: str = ""
    """An operator-configured provider credential for ``base_url`` (see ``providers/trust.py``)."""
    fallback_models: list[Any] = field(default_factory=list)
    """``ModelConfig``s tried in order when the primary model's call fails."""
    tools: list[Any] = field(default_factory=list)
    """Tool names (resolved through the registry) or ``Tool`` objects."""
    input_processors: list[Any] = field(default_factory=list)
    output_processors: list[Any] = field(default_factory=list)
    error_processors: list[Any] = field(default_factory=list)
    max_processor_retries: int | None = None
    error_processor_defaults: bool | None = None
    """``False`` opts out of the default error-recovery stack (used when ``error_processors`` is
    empty and the call gives none)."""
    default_options: CallOptions | None = None
    request_context_schema: dict[str, Any] | None = None
    tool_hooks: Any = None
    memory: MemorySettings = field(default_factory=MemorySettings)
    notification_policy: NotificationPolicy | None = None
    variants: dict[str, list[Any]] = field(default_factory=dict)
    """Per-request variants by field name (``model``, ``tools``, ...): ``variants.Variant`` lists
    resolved over each call's request context (``variants.resolve``)."""
    resolver: Any = None
    """A ``ProcessorRef`` (or processor object) serving ``resolveAgent``, run once per call."""
    resolution: Any = None
    """Set on the frozen snapshot a call resolved (``variants.Resolution``); None on a definition."""
    source: AgentSource = "code"
    create_time: datetime = field(default_factory=utcnow)
    update_time: datetime = field(default_factory=utcnow)

    def validate(self) -> None:
        """Raise ``InvalidArgumentError`` naming the first malformed field."""
        if not self.id:
            raise InvalidArgumentError("agent.id is required")
        if not _ID.match(self.id):
            raise InvalidArgumentError(
                f"agent.id {self.id!r} is malformed: use 1-128 letters, digits, '_', '.', ':' or '-'"
            )
        dynamic_model = bool(self.variants.get("model")) or callable(self.model)
        if not self.model and not dynamic_model:
            raise InvalidArgumentError(f"agent {self.id!r}: model is required (e.g. 'openai/gpt-4o-mini')")
        for i, variant in enumerate(self.variants.get("model", ())):
            _check_model(self.id, variant.value, f"model_variants[{i}].value")
        if isinstance(self.model, str) and self.model:
            _check_model(self.id, self.model, "model")
        if self.max_processor_retries is not None and self.max_processor_retries < 0:
            raise InvalidArgumentError(f"agent {self.id!r}: max_processor_retries must be >= 0")
        if self.memory.last_messages < 0:
            raise InvalidArgumentError(f"agent {self.id!r}: memory.last_messages must be >= 0")
        for lane in ("input_processors", "output_processors", "error_processors"):
            refs = [] if callable(getattr(self, lane)) else list(getattr(self, lane))
            refs += [r for v in self.variants.get(lane, ()) for r in v.value]
            for ref in refs:
                if isinstance(ref, ProcessorRef) and not ref.processor_id:
                    raise InvalidArgumentError(f"agent {self.id!r}: {lane} has a processor without id")


def _check_model(agent_id: str, model: Any, path: str) -> None:
    if not isinstance(model, str) or "/" not in model or model.startswith("/") or model.endswith("/"):
        raise InvalidArgumentError(
            f"agent {agent_id!r}: {path} {model!r} must be 'provider/model', e.g. 'openai/gpt-4o-mini'")


def known_models(agent: Agent) -> list[str]:
    """The models an agent names: its plain model and its model variants (a Python function's
    model is known only per call)."""
    plain = [agent.model] if isinstance(agent.model, str) and agent.model else []
    return plain + [v.value for v in agent.variants.get("model", ()) if v.value not in plain]


def known_tools(agent: Agent) -> list[Any]:
    """The tools an agent names: its plain tools and those of its tool variants."""
    plain = [] if callable(agent.tools) else list(agent.tools)
    return plain + [t for v in agent.variants.get("tools", ()) for t in v.value]


def lane_for_call(agent_id: str, lane: str, agent_lane: list[Any], per_call: list[Any] | None) -> list[Any]:
    """The processors a call runs in ``lane``: the call's override, if any, with the agent's
    locked processors kept. An override that drops or reorders one is refused
    (``PermissionDeniedError`` naming it); a locked processor runs with the agent's settings."""
    if per_call is None:
        return agent_lane
    locked = [r for r in agent_lane if isinstance(r, ProcessorRef) and r.locked]
    if not locked:
        return per_call
    out = list(per_call)
    ids = [_processor_id(r) for r in out]
    at = -1
    for ref in locked:
        where = next((i for i in range(at + 1, len(ids)) if ids[i] == ref.processor_id), None)
        if where is None:
            how = "in the agent's order" if ref.processor_id in ids else "it cannot be removed"
            raise PermissionDeniedError(
                f"processor {ref.processor_id!r} is locked by agent {agent_id!r}: a per-call {lane} "
                f"override must list it ({how})"
            )
        out[where], at = ref, where
    return out


def _processor_id(ref: Any) -> str:
    if isinstance(ref, ProcessorRef):
        return ref.processor_id
    if isinstance(ref, str):
        return ref
    return str(getattr(ref, "id", ""))


def overrides_processors(options: CallOptions | None) -> bool:
    """True when ``options`` replace any processor lane of the agent."""
    return options is not None and any(
        getattr(options, lane) is not None for lane in ("input_processors", "output_processors", "error_processors"))


@dataclass
class RunRequest:
    """One ``Generate``/``Stream`` call."""

    messages: list[Message]
    options: CallOptions = field(default_factory=CallOptions)
    run_id: str = ""
    inbox: Any = None
    """A ``loop.inbox.Inbox`` of signals the run takes in at each step boundary (threads only)."""
