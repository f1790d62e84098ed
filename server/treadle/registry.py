"""Named things a run resolves: agents, processors, tools and tool hooks.

One instance per app (no module globals). Agents from the config file, from Python code and from
the API all live here and are all listed by ``list_agents``.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Callable
from typing import Any

from .agents import Agent, ProcessorRef, ToolHooksRef
from .core.errors import AlreadyExistsError, FailedPreconditionError, InvalidArgumentError, NotFoundError
from .processors import builtin
from .tools import Tool, ToolHooks

_LISTED = 20
"""How many agent ids an unknown-agent message lists."""


class Registry:
    def __init__(self) -> None:
        self._agents: dict[str, Agent] = {}
        self._processors: dict[str, Any] = {}
        self._tools: dict[str, Tool] = {}
        self._hooks: dict[str, Callable[..., Any]] = {}
        self.remote_processors: Callable[[ProcessorRef], Any] | None = None
        """Resolves ids no in-process processor has (remote processors attach by id)."""
        self.remote_tools: Callable[[str], Tool | None] | None = None
        self.remote_tool_attached: Callable[[str], bool] = lambda name: False
        """Resolves tool names no in-process tool has (remote tools attach by name)."""
        self.builtin_context = builtin.BuiltinContext()
        """What built-in processors are built with (the loop fills in its router and tracer)."""

    # --- agents -------------------------------------------------------------------------------

    def add_agent(self, agent: Agent, *, replace: bool = False) -> Agent:
        agent.validate()
        check_builtins(agent)
        if agent.id in self._agents and not replace:
            raise AlreadyExistsError(f"agent {agent.id!r} already exists")
        self._agents[agent.id] = agent
        return agent

    def get_agent(self, agent_id: str) -> Agent:
        try:
            return self._agents[agent_id]
        except KeyError:
            raise NotFoundError(self._unknown_agent(agent_id)) from None

    def _unknown_agent(self, agent_id: str) -> str:
        """``agent 'asistant' not found; did you mean 'assistant'? This server has: assistant, echo``"""
        ids = sorted(self._agents)
        if not ids:
            return f"agent {agent_id!r} not found: this server has no agents"
        near = difflib.get_close_matches(agent_id, ids, n=1, cutoff=0.6)
        shown = ", ".join(ids[:_LISTED]) + (f" and {len(ids) - _LISTED} more" if len(ids) > _LISTED else "")
        hint = f"; did you mean {near[0]!r}?" if near else "."
        return f"agent {agent_id!r} not found{hint} This server has: {shown}"

    def list_agents(self) -> list[Agent]:
        return sorted(self._agents.values(), key=lambda a: a.id)

    def replace_agent(self, agent: Agent) -> Agent:
        current = self.get_agent(agent.id)
        self.check_changeable(current, "changed")
        agent.validate()
        check_builtins(agent)
        agent.source = current.source
        agent.create_time = current.create_time
        self._agents[agent.id] = agent
        return agent

    def delete_agent(self, agent_id: str) -> None:
        self.check_changeable(self.get_agent(agent_id), "deleted")
        del self._agents[agent_id]

    @staticmethod
    def check_changeable(agent: Agent, how: str = "changed") -> None:
        """Only agents created over the API may be changed or deleted over it."""
        if agent.source != "api":
            where = "in Python code" if agent.source == "code" else "in the server's config file"
            raise FailedPreconditionError(f"agent {agent.id!r} is defined {where} and cannot be {how} over the API")

    def snapshot_agent(self, agent_id: str) -> Agent:
        """A copy a run can hold while the stored agent is updated."""
        return copy.copy(self.get_agent(agent_id))

    # --- processors, tools, hooks -------------------------------------------------------------

    def add_processor(self, processor: Any) -> None:
        pid = getattr(processor, "id", "")
        if not pid:
            raise ValueError("a processor needs a non-empty id")
        self._processors[pid] = processor

    def add_tool(self, tool: Tool) -> None:
        self._tools[tool.name] = tool

    def add_tool_hook(self, name: str, hook: Callable[..., Any]) -> None:
        self._hooks[name] = hook

    def has_processor(self, processor_id: str) -> bool:
        """Registered in this process (remote processors are not: they attach later)."""
        return processor_id in self._processors

    def has_tool(self, name: str) -> bool:
        """Registered in this process (remote tools are not: they attach later)."""
        return name in self._tools

    def has_tool_hook(self, name: str) -> bool:
        return name in self._hooks

    def resolve_processor(self, ref: Any) -> Any:
        """A processor object for a ``ProcessorRef`` or id; objects pass through."""
        if isinstance(ref, str):
            ref = ProcessorRef(ref)
        if not isinstance(ref, ProcessorRef):
            bind = getattr(ref, "bind_context", None)
            if callable(bind):  # a built-in made in Python code: give it the router and tracer
                bind(self.builtin_context)
            return ref
        if ref.builtin:
            try:
                return builtin.build(ref.builtin, ref.options, id=ref.id, context=self.builtin_context)
            except builtin.BuiltinError as e:
                raise InvalidArgumentError(str(e)) from None
        if ref.id in self._processors:
            return self._processors[ref.id]
        if self.remote_processors is not None:
            return self.remote_processors(ref)
        raise NotFoundError(f"processor {ref.id!r} is not registered")

    def resolve_tool(self, ref: Any) -> Tool:
        if isinstance(ref, Tool):
            return ref
        if ref in self._tools:
            return self._tools[ref]
        remote = self.remote_tools(ref) if self.remote_tools is not None else None
        if remote is None:
            raise NotFoundError(f"tool {ref!r} is not registered")
        return remote

    def find_tool(self, name: str) -> Tool | None:
        """A tool that can run now: registered on the server, or served by an attached remote
        tool service (``processInputStep`` adds tools by name; an unknown one is an error then,
        not a placeholder that attaches later as an agent's ``tools`` entry may)."""
        if name in self._tools:
            return self._tools[name]
        if self.remote_tools is not None and self.remote_tool_attached(name):
            return self.remote_tools(name)
        return None

    def resolve_hooks(self, ref: Any) -> ToolHooks | None:
        if ref is None or isinstance(ref, ToolHooks):
            return ref
        if isinstance(ref, ToolHooksRef):
            def get(name: str) -> Any:
                if not name:
                    return None
                if name not in self._hooks:
                    raise NotFoundError(f"tool hook {name!r} is not registered")
                return self._hooks[name]

            return ToolHooks(get(ref.before_tool_call), get(ref.after_tool_call))
        raise TypeError(f"cannot resolve tool hooks from {type(ref).__name__}")


def check_builtins(agent: Agent) -> None:
    """``InvalidArgumentError`` naming the first built-in reference with an unknown name or a
    bad option."""
    for lane in ("input_processors", "output_processors", "error_processors"):
        for i, ref in enumerate(getattr(agent, lane)):
            if isinstance(ref, ProcessorRef) and ref.builtin:
                try:
                    builtin.check(ref.builtin, ref.options)
                except builtin.BuiltinError as e:
                    raise InvalidArgumentError(f"agent {agent.id!r}: {lane}[{i}]: {e}") from None
