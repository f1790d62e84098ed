"""Proto <-> domain for agents, call options, requests and results.

Everything from a client is checked here, before anything is stored or run: a failure raises
``InvalidArgumentError`` whose message starts with the field path (``agent.fallback_models[1].model
...``), so the caller sees what to fix. Messages and chunks live in ``treadle.wire.data``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from google.protobuf import json_format, timestamp_pb2

from .. import agents as a
from ..core.errors import InvalidArgumentError
from ..loop import GenerateResult
from ..core.messages import Message, SystemMessage, utcnow
from ..core.tool_payload import ToolPayloadRule, check_rules
from ..processors import StepResult, builtin
from ..providers.base import ModelConfig, ModelSettings
from ..providers.trust import check_base_url
from ..tools import Tool, ToolHooks
from ..v1 import agent_pb2, agent_service_pb2, chunk_pb2
from ..versions import check_selection
from . import validate, variant_convert
from .notification_convert import policy_from_proto, policy_to_proto
from .scorer_convert import filter_config_shape, scorers_from_proto, scorers_to_proto
from .voice_convert import voice_settings_from_proto, voice_settings_to_proto
from ..wire.settings import (
    model_settings_from_proto,
    model_settings_to_proto,
    structured_output_from_proto,
    structured_output_to_proto,
    tool_choice_to_proto,
)
from ..wire.data import (
    chunk_from_proto,
    chunk_to_proto,
    datetime_to_ts,
    dict_to_struct,
    enum_to_pb,
    enum_to_py,
    fill,
    message_from_proto,
    message_to_proto,
    opt_struct,
    struct_to_dict,
    system_messages_from_proto,
    system_messages_to_proto,
)

__all__ = [
    "agent_from_dict",
    "agent_from_proto",
    "agent_to_proto",
    "call_options_from_proto",
    "call_options_to_proto",
    "chunk_from_proto",
    "chunk_to_proto",
    "generate_result_to_proto",
    "message_from_proto",
    "message_to_proto",
    "run_request_from_proto",
    "step_result_to_proto",
]

_POLICY = agent_pb2.FailurePolicy.DESCRIPTOR
_SOURCE = agent_pb2.AgentSource.DESCRIPTOR
_TOOL_MODE = agent_pb2.ToolChoiceMode.DESCRIPTOR
_FINISH = chunk_pb2.FinishReason.DESCRIPTOR

# --- agents ------------------------------------------------------------------------------------


def parse_time(text: str) -> datetime:
    """A proto JSON timestamp (RFC 3339) as an aware datetime."""
    ts = timestamp_pb2.Timestamp()
    ts.FromJsonString(text)
    return ts.ToDatetime(tzinfo=UTC)


def agent_from_dict(data: dict[str, Any], *, source: a.AgentSource) -> a.Agent:
    """An agent from its proto JSON form (the config file format)."""
    pb = agent_pb2.Agent()
    data = variant_convert.config_shape(data)
    if isinstance(data, dict) and "agents" in data:  # the Mastra Agent's name for ``subAgents``
        if "subAgents" in data:
            raise InvalidArgumentError("agent: give its sub-agents as agents or as subAgents, not both")
        data = {("subAgents" if k == "agents" else k): v for k, v in data.items()}
    if isinstance(data, dict) and isinstance(data.get("scorers"), list):  # variants' rule form too
        data = {**data, "scorers": [{**s, "filter": filter_config_shape(s["filter"])}
                                    if isinstance(s, dict) and "filter" in s else s for s in data["scorers"]]}
    _check_processor_entries(data)
    if isinstance(data, dict) and "editor" in data:
        data = {**data, "editor": editor_from_config(data["editor"])}
    try:
        json_format.ParseDict(data, pb)
    except json_format.ParseError as e:
        raise InvalidArgumentError(f"not a valid Agent in proto JSON form: {e}") from None
    return agent_from_proto(pb, source=source)


_EDITOR_TOOLS = agent_pb2.EditorTools.DESCRIPTOR


def editor_from_config(value: Any) -> Any:
    """The framework's ``editor: false | {instructions?: bool, tools?: bool | {description?:
    bool}}`` in proto JSON form (``{locked: true}``, ``tools: EDITOR_TOOLS_DESCRIPTIONS``);
    the proto JSON form passes through."""
    if value is False:
        return {"locked": True}
    if value is True:
        return {}
    if not isinstance(value, dict):
        return value  # the parser names what is wrong
    out = dict(value)
    tools = out.get("tools")
    if tools is True:
        out["tools"] = "EDITOR_TOOLS_ALL"
    elif tools is False:
        out["tools"] = "EDITOR_TOOLS_NONE"
    elif isinstance(tools, dict):
        unknown = set(tools) - {"description"}
        if unknown:
            raise InvalidArgumentError(f"editor.tools: unknown key {sorted(unknown)[0]!r} (only description)")
        out["tools"] = "EDITOR_TOOLS_DESCRIPTIONS" if tools.get("description") else "EDITOR_TOOLS_NONE"
    return out


def _editor(pb: agent_pb2.AgentEditor) -> a.Editor:
    tools = enum_to_py(_EDITOR_TOOLS, pb.tools) or "all"
    return a.Editor(locked=pb.locked, instructions=pb.instructions if pb.HasField("instructions") else None,
                    tools=tools)  # type: ignore[arg-type]


def _editor_to_proto(editor: a.Editor, out: agent_pb2.AgentEditor) -> None:
    if editor == a.Editor():
        return
    out.locked = editor.locked
    if editor.instructions is not None:
        out.instructions = editor.instructions
    out.tools = enum_to_pb(_EDITOR_TOOLS, editor.tools)


def _check_processor_entries(data: dict[str, Any]) -> None:
    """A processor list entry written as a bare name (``inputProcessors: [pii]``) gets a message
    that says how to write it, instead of the JSON parser's ``ProcessorRef has no field named "p"``."""
    for key, value in data.items() if isinstance(data, dict) else ():
        if not (key.endswith("Processors") or key.endswith("_processors")) or not isinstance(value, list):
            continue
        for i, entry in enumerate(value):
            if isinstance(entry, str):
                shapes = [f"{{builtin: {entry}}} for the built-in processor"] if entry in builtin.NAMES else []
                shapes.append(f"{{id: {entry}}} for a processor registered or attached under that id")
                raise InvalidArgumentError(
                    f"{key}[{i}]: a processor entry is an object, not the bare name {entry!r}: write "
                    + " or ".join(shapes))


def agent_from_proto(pb: agent_pb2.Agent, *, source: a.AgentSource, path: str = "agent") -> a.Agent:
    """A validated domain agent. Output-only fields in ``pb`` are ignored; times are now."""
    kind = pb.WhichOneof("instructions_kind")
    if kind == "instruction_messages":
        instructions = system_messages_from_proto(pb.instruction_messages.messages)
    else:
        instructions = [SystemMessage(pb.instructions)] if pb.instructions else []
    fallbacks: list[Any] = []
    for i, f in enumerate(pb.fallback_models):
        if not f.model:
            raise InvalidArgumentError(f"{path}.fallback_models[{i}].model is required")
        retries = f.max_retries if f.HasField("max_retries") else None
        check_base_url(f.base_url, f"{path}.fallback_models[{i}].base_url")
        fallbacks.append(ModelConfig(id=f.model, base_url=f.base_url, max_retries=retries,
                                     credential=f.provider_credential))
    check_base_url(pb.base_url, f"{path}.base_url")
    schema = opt_struct(pb, "request_context_schema")
    if schema is not None:
        validate.check_schema(schema, f"{path}.request_context_schema")
    for i, system in enumerate(instructions):
        validate.check_provider_options(system.provider_options, f"{path}.instruction_messages[{i}].provider_options")
    rules = tool_payload_rules_from_proto(pb.tool_payload_rules)
    check_rules(rules, f"{path}.tool_payload_rules")
    retries = pb.max_processor_retries if pb.HasField("max_processor_retries") else None
    defaults = pb.error_processor_defaults if pb.HasField("error_processor_defaults") else None
    now = utcnow()
    agent = a.Agent(
        id=pb.id,
        name=pb.name,
        model=pb.model,
        instructions=instructions,
        description=pb.description,
        metadata=opt_struct(pb, "metadata") or {},
        base_url=pb.base_url,
        provider_credential=pb.provider_credential,
        fallback_models=fallbacks,
        tools=_names(pb.tools, f"{path}.tools"),
        input_processors=_refs(pb.input_processors, f"{path}.input_processors"),
        output_processors=_refs(pb.output_processors, f"{path}.output_processors"),
        error_processors=_refs(pb.error_processors, f"{path}.error_processors"),
        max_processor_retries=retries,
        error_processor_defaults=defaults,
        default_options=(
            call_options_from_proto(pb.default_options, f"{path}.default_options")
            if pb.HasField("default_options")
            else None
        ),
        request_context_schema=schema,
        tool_hooks=_hooks_ref(pb.tool_hooks) if pb.HasField("tool_hooks") else None,
        tool_payload_rules=rules,
        tool_payload_processors=_refs(pb.tool_payload_processors, f"{path}.tool_payload_processors"),
        memory=_memory_settings(pb.memory, f"{path}.memory"),
        variants=variant_convert.variants_from_proto(pb, path, _refs, _names, call_options_from_proto),
        resolver=_refs([pb.resolver], f"{path}.resolver")[0] if pb.HasField("resolver") else None,
        notification_policy=policy_from_proto(pb.notifications, f"{path}.notifications"),
        sub_agents=[_sub_agent_from_proto(r) for r in pb.sub_agents],
        editor=_editor(pb.editor),
        scorers=scorers_from_proto(pb.scorers, f"{path}.scorers"),
        voice=voice_settings_from_proto(pb.voice, f"{path}.voice") if pb.HasField("voice") else None,
        source=source,
        create_time=now,
        update_time=now,
    )
    if agent.default_options is not None:
        agent.default_options.parent = None  # only a delegating call says who delegated
    agent.validate()
    validate.check_attachable(agent, path)
    return agent


def agent_to_proto(agent: a.Agent, out: agent_pb2.Agent | None = None) -> agent_pb2.Agent:
    """The proto form. Objects of code agents (processors, tools, hooks) appear by id or name."""
    out = out if out is not None else agent_pb2.Agent()
    out.id, out.name, out.description = agent.id, agent.name, agent.description
    if agent.metadata:
        dict_to_struct(agent.metadata, out.metadata)
    # A code agent's field may be a function of the request context: shown empty (it resolves per call).
    instructions = [] if callable(agent.instructions) else agent.instructions
    if len(instructions) == 1 and not instructions[0].provider_options:
        out.instructions = instructions[0].content
    elif instructions:
        system_messages_to_proto(instructions, out.instruction_messages.messages)
    out.model = agent.model if isinstance(agent.model, str) else ""
    out.base_url = agent.base_url
    out.provider_credential = agent.provider_credential
    for f in agent.fallback_models:
        fb = out.fallback_models.add(model=f.id, base_url=f.base_url, provider_credential=f.credential)
        if f.max_retries is not None:
            fb.max_retries = f.max_retries
    out.tools.extend(t.name if isinstance(t, Tool) else str(t) for t in _listed(agent.tools))
    for lane in ("input_processors", "output_processors", "error_processors"):
        _refs_to_proto(_listed(getattr(agent, lane)), getattr(out, lane))
    if agent.max_processor_retries is not None:
        out.max_processor_retries = agent.max_processor_retries
    if agent.error_processor_defaults is not None:
        out.error_processor_defaults = agent.error_processor_defaults
    if agent.default_options is not None and not callable(agent.default_options):
        call_options_to_proto(agent.default_options, out.default_options)
    if agent.request_context_schema is not None:
        dict_to_struct(agent.request_context_schema, out.request_context_schema)
    if agent.tool_hooks is not None:
        _hooks_to_proto(agent.tool_hooks, out.tool_hooks)
    tool_payload_rules_to_proto(agent.tool_payload_rules, out.tool_payload_rules)
    _refs_to_proto(agent.tool_payload_processors, out.tool_payload_processors)
    if agent.memory != a.MemorySettings():
        out.memory.last_messages = agent.memory.last_messages
    policy_to_proto(agent.notification_policy, out.notifications)
    for ref in agent.sub_agents:
        _sub_agent_to_proto(ref, out.sub_agents.add())
    _editor_to_proto(agent.editor, out.editor)
    variant_convert.variants_to_proto(agent, out, _refs_to_proto, call_options_to_proto)
    if agent.resolver is not None:
        _refs_to_proto([agent.resolver], _One(out.resolver))
    scorers_to_proto(agent.scorers, out.scorers)
    if agent.voice is not None:
        voice_settings_to_proto(agent.voice, out.voice)
    out.source = enum_to_pb(_SOURCE, agent.source)
    datetime_to_ts(agent.create_time, out.create_time)
    datetime_to_ts(agent.update_time, out.update_time)
    return out


_SUB_MEMORY = {agent_pb2.SUB_AGENT_MEMORY_UNSPECIFIED: "fresh_thread",
               agent_pb2.SUB_AGENT_MEMORY_FRESH_THREAD: "fresh_thread",
               agent_pb2.SUB_AGENT_MEMORY_STABLE_THREAD: "stable_thread",
               agent_pb2.SUB_AGENT_MEMORY_NONE: "none"}
_SUB_FAILURE = {agent_pb2.SUB_AGENT_FAILURE_UNSPECIFIED: "tool_error",
                agent_pb2.SUB_AGENT_FAILURE_TOOL_ERROR: "tool_error",
                agent_pb2.SUB_AGENT_FAILURE_FAIL_RUN: "fail_run"}


def _sub_agent_from_proto(pb: agent_pb2.SubAgentRef) -> a.SubAgentRef:
    remote = a.RemoteSubAgent(pb.remote.target, pb.remote.agent_id) if pb.HasField("remote") else None
    return a.SubAgentRef(
        key=pb.key, agent_id=pb.agent_id, remote=remote, description=pb.description,
        memory=_SUB_MEMORY.get(pb.memory, "fresh_thread"),  # type: ignore[arg-type]
        max_steps=pb.max_steps if pb.HasField("max_steps") else None,
        include_tool_results=pb.include_tool_results,
        failure=_SUB_FAILURE.get(pb.failure, "tool_error"),  # type: ignore[arg-type]
    )


def _sub_agent_to_proto(ref: a.SubAgentRef, out: agent_pb2.SubAgentRef) -> None:
    out.key, out.description, out.include_tool_results = ref.key, ref.description, ref.include_tool_results
    if ref.remote is not None:
        out.remote.target, out.remote.agent_id = ref.remote.target, ref.remote.agent_id
    else:
        out.agent_id = ref.agent_id
    out.memory = {"fresh_thread": agent_pb2.SUB_AGENT_MEMORY_FRESH_THREAD,
                  "stable_thread": agent_pb2.SUB_AGENT_MEMORY_STABLE_THREAD,
                  "none": agent_pb2.SUB_AGENT_MEMORY_NONE}[ref.memory]
    if ref.max_steps is not None:
        out.max_steps = ref.max_steps
    if ref.failure == "fail_run":
        out.failure = agent_pb2.SUB_AGENT_FAILURE_FAIL_RUN


def tool_payload_rules_from_proto(items: Any) -> list[ToolPayloadRule]:
    rules = []
    for pb in items:
        extra: dict[str, Any] = {}
        if pb.HasField("replace"):
            extra["replace"] = json_format.MessageToDict(pb.replace)
        rules.append(ToolPayloadRule(
            phase=pb.phase, tools=tuple(pb.tools), targets=tuple(pb.targets), drop=tuple(pb.drop),
            mask=tuple(pb.mask), mask_with=pb.mask_with, suppress=pb.suppress, **extra,
        ))
    return rules


def tool_payload_rules_to_proto(rules: list[ToolPayloadRule], out: Any) -> None:
    for rule in rules:
        pb = out.add(phase=rule.phase, tools=rule.tools, targets=rule.targets, drop=rule.drop,
                     mask=rule.mask, mask_with=rule.mask_with, suppress=rule.suppress)
        if rule.replaces:
            json_format.ParseDict(rule.replace, pb.replace)


def _listed(value: Any) -> list[Any]:
    return [] if callable(value) else list(value)


class _One:
    """``add()`` into a singular message field, for ``_refs_to_proto``."""

    def __init__(self, target: Any) -> None:
        self._target = target

    def add(self, **fields: Any) -> Any:
        self._target.SetInParent()
        for k, v in fields.items():
            setattr(self._target, k, v)
        return self._target


def _memory_settings(pb: agent_pb2.MemorySettings, path: str) -> a.MemorySettings:
    if not pb.HasField("last_messages"):
        return a.MemorySettings()
    if pb.last_messages < 0:
        raise InvalidArgumentError(f"{path}.last_messages must be >= 0, got {pb.last_messages}")
    return a.MemorySettings(last_messages=pb.last_messages)


def _names(names: Any, path: str) -> list[Any]:
    for i, name in enumerate(names):
        if not name:
            raise InvalidArgumentError(f"{path}[{i}] is empty")
    return list(names)


def _refs(refs: Any, path: str) -> list[Any]:
    out: list[Any] = []
    for i, r in enumerate(refs):
        if not r.id and not r.builtin:
            raise InvalidArgumentError(f"{path}[{i}].id is required (or builtin, to name a built-in processor)")
        timeout = r.timeout.ToNanoseconds() / 1e9 if r.HasField("timeout") else None
        if timeout is not None and timeout <= 0:
            raise InvalidArgumentError(f"{path}[{i}].timeout must be positive")
        policy = enum_to_py(_POLICY, r.failure_policy) or "fail_closed"
        if (r.parallel_group or r.with_model) and not path.endswith("input_processors") \
                and not path.endswith("input_processors.processors"):
            raise InvalidArgumentError(f"{path}[{i}]: parallel_group and with_model are for input processors only")
        if r.with_model and not r.parallel_group:
            raise InvalidArgumentError(f"{path}[{i}].with_model needs a parallel_group")
        options = opt_struct(r, "options")
        if r.builtin:
            try:
                builtin.check(r.builtin, options)
            except builtin.BuiltinError as e:
                raise InvalidArgumentError(f"{path}[{i}]: {e}") from None
        elif options is not None:
            raise InvalidArgumentError(f"{path}[{i}].options is only for built-in processors (set builtin)")
        if r.locked and path.endswith(".processors"):  # a call's own list: locking is the agent's
            raise InvalidArgumentError(f"{path}[{i}].locked is for an agent's processors, not a call's")
        out.append(a.ProcessorRef(r.id, policy, timeout, builtin=r.builtin,  # type: ignore[arg-type]
                                  options=options, parallel_group=r.parallel_group, with_model=r.with_model,
                                  locked=r.locked))
    return out


def _refs_to_proto(items: list[Any], out: Any) -> None:
    for item in items:
        ref = item if isinstance(item, a.ProcessorRef) else a.ProcessorRef(getattr(item, "id", str(item)))
        # A built-in runs in the server's process: no failure policy applies, so none is shown.
        policy = 0 if ref.builtin else enum_to_pb(_POLICY, ref.failure_policy)
        pb = out.add(id=ref.id, failure_policy=policy, builtin=ref.builtin)
        if ref.timeout is not None:
            pb.timeout.FromNanoseconds(int(ref.timeout * 1e9))
        if ref.options is not None:
            dict_to_struct(ref.options, pb.options)
        pb.parallel_group, pb.with_model, pb.locked = ref.parallel_group, ref.with_model, ref.locked


def _hooks_ref(pb: agent_pb2.ToolHooksRef) -> a.ToolHooksRef:
    return a.ToolHooksRef(pb.before_tool_call, pb.after_tool_call)


def _hooks_to_proto(hooks: Any, out: agent_pb2.ToolHooksRef) -> None:
    out.SetInParent()
    if isinstance(hooks, a.ToolHooksRef):
        out.before_tool_call, out.after_tool_call = hooks.before_tool_call, hooks.after_tool_call
    elif isinstance(hooks, ToolHooks):  # Python callables: show their names, for information
        out.before_tool_call = getattr(hooks.before_tool_call, "__name__", "")
        out.after_tool_call = getattr(hooks.after_tool_call, "__name__", "")


# --- call options ------------------------------------------------------------------------------


def call_options_from_proto(pb: agent_pb2.CallOptions, path: str = "options") -> a.CallOptions:
    opts = a.CallOptions()
    for lane in ("input_processors", "output_processors", "error_processors"):
        if pb.HasField(lane):
            setattr(opts, lane, _refs(getattr(pb, lane).processors, f"{path}.{lane}.processors"))
    if pb.HasField("max_steps"):
        if pb.max_steps < 1:
            raise InvalidArgumentError(f"{path}.max_steps must be at least 1, got {pb.max_steps}")
        opts.max_steps = pb.max_steps
    if pb.HasField("max_processor_retries"):
        if pb.max_processor_retries < 0:
            raise InvalidArgumentError(f"{path}.max_processor_retries must be >= 0")
        opts.max_processor_retries = pb.max_processor_retries
    choice = pb.tool_choice.WhichOneof("choice")
    if choice == "mode":
        opts.tool_choice = enum_to_py(_TOOL_MODE, pb.tool_choice.mode)
    elif choice == "tool_name":
        if not pb.tool_choice.tool_name:
            raise InvalidArgumentError(f"{path}.tool_choice.tool_name is empty")
        opts.tool_choice = {"type": "tool", "tool_name": pb.tool_choice.tool_name}
    opts.active_tools = _names(pb.active_tools, f"{path}.active_tools") or None
    if pb.HasField("model_settings"):
        opts.model_settings = model_settings_from_proto(pb.model_settings, f"{path}.model_settings")
    opts.provider_options = opt_struct(pb, "provider_options")
    if pb.HasField("memory"):
        opts.memory = _memory_from_proto(pb.memory, f"{path}.memory")
    opts.request_context = opt_struct(pb, "request_context") or {}
    if pb.HasField("structured_output"):
        so = pb.structured_output
        if not so.HasField("schema"):
            raise InvalidArgumentError(f"{path}.structured_output.schema is required")
        opts.structured_output = structured_output_from_proto(so)
    if pb.HasField("tool_hooks"):
        opts.tool_hooks = _hooks_ref(pb.tool_hooks)
    opts.model = pb.model or None
    opts.version = check_selection(pb.version, f"{path}.version") if pb.version else None
    if pb.HasField("parent"):
        opts.parent = a.ParentRun(pb.parent.run_id, pb.parent.tool_call_id, pb.parent.agent_id)
    validate.check_call_options(opts, path)
    return opts


def call_options_to_proto(opts: a.CallOptions, out: agent_pb2.CallOptions) -> None:
    out.SetInParent()
    for lane in ("input_processors", "output_processors", "error_processors"):
        items = getattr(opts, lane)
        if items is not None:
            target = getattr(out, lane)
            target.SetInParent()
            _refs_to_proto(items, target.processors)
    if opts.max_steps is not None:
        out.max_steps = opts.max_steps
    if opts.max_processor_retries is not None:
        out.max_processor_retries = opts.max_processor_retries
    tool_choice_to_proto(opts.tool_choice, out.tool_choice)
    out.active_tools.extend(opts.active_tools or [])
    model_settings_to_proto(opts.model_settings, out.model_settings)
    if opts.provider_options is not None:
        dict_to_struct(opts.provider_options, out.provider_options)
    if opts.memory is not None:
        mem = opts.memory
        out.memory.resource = mem.resource
        if mem.thread_title or mem.thread_metadata:
            out.memory.thread.id, out.memory.thread.title = mem.thread, mem.thread_title
            if mem.thread_metadata:
                dict_to_struct(mem.thread_metadata, out.memory.thread.metadata)
        else:
            out.memory.thread_id = mem.thread
    if opts.request_context:
        dict_to_struct(opts.request_context, out.request_context)
    structured_output_to_proto(opts.structured_output, out.structured_output)
    if opts.tool_hooks is not None:
        _hooks_to_proto(opts.tool_hooks, out.tool_hooks)
    out.model = opts.model or ""
    out.version = opts.version or ""
    if opts.parent is not None:
        out.parent.run_id, out.parent.tool_call_id = opts.parent.run_id, opts.parent.tool_call_id
        out.parent.agent_id = opts.parent.agent_id


def _memory_from_proto(pb: agent_pb2.MemoryOptions, path: str) -> a.MemoryOptions:
    kind = pb.WhichOneof("thread_ref")
    thread = pb.thread.id if kind == "thread" else pb.thread_id
    if not pb.resource or not thread:
        raise InvalidArgumentError(f"{path}: resource and thread must be set together")
    if kind == "thread":
        return a.MemoryOptions(pb.resource, thread, pb.thread.title, opt_struct(pb.thread, "metadata"))
    return a.MemoryOptions(pb.resource, thread)


# --- requests and results ----------------------------------------------------------------------

RunRequestProto = agent_service_pb2.GenerateRequest | agent_service_pb2.StreamRequest


def run_request_from_proto(pb: RunRequestProto) -> tuple[str, a.RunRequest]:
    """``(agent_id, request)``; ``prompt`` and ``messages`` are mutually exclusive."""
    if not pb.agent_id:
        raise InvalidArgumentError("agent_id is required")
    if pb.prompt and pb.messages:
        raise InvalidArgumentError("set either prompt or messages, not both")
    if not pb.prompt and not pb.messages:
        raise InvalidArgumentError("prompt or messages is required")
    if pb.prompt:
        messages = [Message.user(pb.prompt)]
    else:
        messages = [message_from_proto(msg, f"messages[{i}]") for i, msg in enumerate(pb.messages)]
    options = call_options_from_proto(pb.options) if pb.HasField("options") else a.CallOptions()
    return pb.agent_id, a.RunRequest(messages=messages, options=options, run_id=pb.run_id)


def step_result_to_proto(step: StepResult, out: chunk_pb2.StepResult) -> None:
    fill(out, step)


def generate_result_to_proto(result: GenerateResult) -> agent_service_pb2.GenerateResponse:
    out = agent_service_pb2.GenerateResponse(run_id=result.run_id, text=result.text)
    out.finish_reason = enum_to_pb(_FINISH, result.finish_reason)
    fill(out.usage, result.usage)
    for step in result.steps:
        step_result_to_proto(step, out.steps.add())
    if result.tripwire is not None:
        fill(out.tripwire, result.tripwire)
    for msg in result.messages:
        message_to_proto(msg, out.messages.add())
    if result.error is not None:
        fill(out.error, result.error)
    for skipped in result.skipped_processors:
        fill(out.skipped_processors.add(), skipped)
    return out
