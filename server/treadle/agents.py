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
from .core.tool_payload import ToolPayloadRule, check_rules

FailurePolicy: TypeAlias = Literal["fail_closed", "fail_open"]
AgentSource: TypeAlias = Literal["config", "code", "api"]
EditorTools: TypeAlias = Literal["all", "descriptions", "none"]

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


@dataclass(frozen=True)
class Editor:
    """The framework's ``editor: false | {instructions?, tools?: boolean | {description?}}``."""

    locked: bool = False
    instructions: bool | None = None
    """None: allowed (the default); True: allowed, and the editor owns the instructions of an
    agent that defines none."""
    tools: EditorTools = "all"

    @property
    def may_instructions(self) -> bool:
        return not self.locked and self.instructions is not False

    @property
    def may_tools(self) -> bool:
        return not self.locked and self.tools == "all"

    @property
    def may_descriptions(self) -> bool:
        return not self.locked and self.tools in ("all", "descriptions")

    def owns_instructions(self, agent: Agent) -> bool:
        """The agent defines no instructions and says the editor gives them."""
        return not self.locked and self.instructions is True and not agent.instructions


@dataclass
class ScorerRef:
    """A scorer that judges the agent's finished runs (``treadle.scoring``): a built-in one
    configured by ``options``, a Python one (``scorer``, or registered under ``id``), or a remote
    one attached under ``id``."""

    id: str = ""
    builtin: str = ""
    """A built-in scorer's name (``exact-match``, ``llm-judge``, ...)."""
    options: dict[str, Any] | None = None
    ratio: float | None = None
    """The share of matching runs scored, chosen by a hash of the trace id; None scores all."""
    filter: dict[str, Any] | None = None
    """A rule group over ``threadId``, ``resourceId`` and ``requestContext.*`` (``scoring.rules``)."""
    timeout: float | None = None
    """Seconds one scoring may take; None for the default."""
    failure_policy: FailurePolicy = "fail_closed"
    """When the scorer cannot answer: retry, then record the failure (closed); skip at once (open)."""
    scorer: Any = None
    """A Python scorer object (code agents): ``async score(run) -> ScoreResult``."""

    @property
    def scorer_id(self) -> str:
        return self.id or self.builtin or str(getattr(self.scorer, "id", ""))


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
class ParentRun:
    """The run, and its tool call, that delegated a call to a sub-agent."""

    run_id: str
    tool_call_id: str = ""
    agent_id: str = ""


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
    version: str | None = None
    """Which stored version the call runs: ``published`` (None), ``draft``, or an id or number."""
    prepare_step: Any = None
    """A callable run as the last ``process_input_step`` (the Mastra framework's ``prepareStep``)."""
    parent: ParentRun | None = None
    """Set for a sub-agent's run: who delegated it (recorded on the run)."""

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


SubAgentMemory: TypeAlias = Literal["fresh_thread", "stable_thread", "none"]
SubAgentFailure: TypeAlias = Literal["tool_error", "fail_run"]

_SUB_AGENT_KEY = re.compile(r"^[A-Za-z0-9_-]{1,58}$")
"""``agent-<key>`` stays within the 64 characters providers allow for a tool name."""


@dataclass
class RemoteSubAgent:
    """An agent of another Treadle server: ``target`` names a server of the config file's
    ``remoteServers`` section (endpoint, TLS, credential), ``agent_id`` the agent there."""

    target: str
    agent_id: str


@dataclass
class SubAgentRef:
    """An agent this agent may delegate to, offered to its model as the tool ``agent-<key>``."""

    key: str
    agent_id: str = ""
    """A local agent; exactly one of ``agent_id`` and ``remote`` is set."""
    remote: RemoteSubAgent | None = None
    description: str = ""
    memory: SubAgentMemory = "fresh_thread"
    max_steps: int | None = None
    """Cap on one delegation's steps; None: the sub-agent's default."""
    include_tool_results: bool = False
    """Send the whole output object back to the parent's model, not just its ``text``."""
    failure: SubAgentFailure = "tool_error"

    @property
    def tool_name(self) -> str:
        return f"agent-{self.key}"


@dataclass
class VoiceProviderRef:
    """A voice provider: a built-in (``espeak-ng``, ``pocketsphinx``, ``openai``) or the id of
    one attached over ``VoiceProviderService``."""

    id: str
    failure_policy: FailurePolicy = "fail_closed"
    options: dict[str, Any] | None = None


@dataclass
class VoiceSettings:
    """The framework's CompositeVoice: ``realtime``, when set, serves both directions."""

    input: VoiceProviderRef | None = None
    output: VoiceProviderRef | None = None
    realtime: VoiceProviderRef | None = None
    speaker: str = ""

    @property
    def listener(self) -> VoiceProviderRef | None:
        return self.realtime or self.input

    @property
    def speaker_provider(self) -> VoiceProviderRef | None:
        return self.realtime or self.output


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
    tool_payload_rules: list[ToolPayloadRule] = field(default_factory=list)
    """How tool payloads look to clients and in the history they read (``core/tool_payload.py``)."""
    tool_payload_processors: list[Any] = field(default_factory=list)
    """Processors serving ``transform_tool_payload`` (refs or objects), after the rules, in order."""
    memory: MemorySettings = field(default_factory=MemorySettings)
    notification_policy: NotificationPolicy | None = None
    sub_agents: list[SubAgentRef] = field(default_factory=list)
    editor: Editor = field(default_factory=Editor)
    """What stored versions may override (``treadle.versions``)."""
    tool_descriptions: dict[str, str] = field(default_factory=dict)
    """Descriptions the model sees instead of the tools' own, by tool name (set by a version)."""
    variants: dict[str, list[Any]] = field(default_factory=dict)
    """Per-request variants by field name (``model``, ``tools``, ...): ``variants.Variant`` lists
    resolved over each call's request context (``variants.resolve``)."""
    resolver: Any = None
    """A ``ProcessorRef`` (or processor object) serving ``resolveAgent``, run once per call."""
    resolution: Any = None
    """Set on the frozen snapshot a call resolved (``variants.Resolution``); None on a definition."""
    scorers: list[ScorerRef] = field(default_factory=list)
    """Scorers of the agent's finished runs, off the request path (``treadle.scoring``)."""
    voice: VoiceSettings | None = None
    """Speech in and out (``VoiceService``); None: the agent has no voice."""
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
        check_rules(self.tool_payload_rules, f"agent {self.id!r}: tool_payload_rules")
        for lane in ("input_processors", "output_processors", "error_processors"):
            refs = [] if callable(getattr(self, lane)) else list(getattr(self, lane))
            refs += [r for v in self.variants.get(lane, ()) for r in v.value]
            for ref in refs:
                if isinstance(ref, ProcessorRef) and not ref.processor_id:
                    raise InvalidArgumentError(f"agent {self.id!r}: {lane} has a processor without id")
        seen: set[str] = set()
        for i, scorer in enumerate(self.scorers):
            where = f"agent {self.id!r}: scorers[{i}]"
            if not scorer.scorer_id:
                raise InvalidArgumentError(f"{where} has no id: give an id, or a builtin name")
            if not _ID.match(scorer.scorer_id):
                raise InvalidArgumentError(f"{where}.id {scorer.scorer_id!r} is malformed: use 1-128 letters, "
                                           "digits, '_', '.', ':' or '-'")
            if scorer.scorer_id in seen:
                raise InvalidArgumentError(f"{where}.id {scorer.scorer_id!r} is listed twice: ids must be unique")
            seen.add(scorer.scorer_id)
            if scorer.ratio is not None and not 0 < scorer.ratio <= 1:
                raise InvalidArgumentError(f"{where}.sampling.ratio must be in (0, 1], got {scorer.ratio}")
            if scorer.timeout is not None and scorer.timeout <= 0:
                raise InvalidArgumentError(f"{where}.timeout must be positive")
        self._validate_sub_agents()

    def _validate_sub_agents(self) -> None:
        tools = {t if isinstance(t, str) else getattr(t, "name", "") for t in self.tools}
        seen: set[str] = set()
        for i, ref in enumerate(self.sub_agents):
            where = f"agent {self.id!r}: sub_agents[{i}]"
            if not _SUB_AGENT_KEY.match(ref.key):
                raise InvalidArgumentError(
                    f"{where}: key {ref.key!r} is malformed: use 1-58 letters, digits, '_' or '-'")
            if ref.key in seen:
                raise InvalidArgumentError(f"{where}: key {ref.key!r} is repeated")
            seen.add(ref.key)
            if ref.tool_name in tools:
                raise InvalidArgumentError(f"{where}: the tool {ref.tool_name!r} collides with a tool of the agent")
            if bool(ref.agent_id) == (ref.remote is not None):
                raise InvalidArgumentError(f"{where}: set exactly one of agentId and remote")
            if ref.remote is not None and not (ref.remote.target and ref.remote.agent_id):
                raise InvalidArgumentError(f"{where}: remote needs both target and agentId")
            if ref.max_steps is not None and ref.max_steps < 1:
                raise InvalidArgumentError(f"{where}: maxSteps must be at least 1")


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
    instructions: list[SystemMessage] = field(default_factory=list)
    """System messages appended to the agent's instructions for this run (a delegation's)."""
