"""Editor overrides and versions: what operators change in an agent without a redeploy.

An agent's ``Editor`` policy says which of its fields a stored version may override (the
instructions; the tools, or only their descriptions); the id, name and model never. Versions are
stored (``VersionStore``, implemented by ``memory.version_sql``) as a whole ``Override`` each, in
one of three states: ``draft`` (at most one per agent), ``published`` (at most one: the active
version) and ``archived``.

A run resolves its version once, before it is planned (``VersionResolver.resolve``): the call's
selection (``published`` by default, ``draft``, or a version id or number) picks a stored
version, whose override is applied over the definition within what the editor allows. Every path
that runs an agent goes through ``AgentLoop.stream``/``generate``, which call it; code that runs an
agent some other way calls ``AgentLoop.resolve_version`` itself.
"""

from __future__ import annotations

import copy
import difflib
import json
import re
import time
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal, Protocol, TypeAlias

from .agents import Agent, Editor
from .core.errors import FailedPreconditionError, InvalidArgumentError, NotFoundError
from .core.messages import SystemMessage, utcnow

VersionState: TypeAlias = Literal["draft", "published", "archived"]

PUBLISHED = "published"
DRAFT = "draft"
DEFINITION = "definition"
MAX_MESSAGE = 1000
_NUMBER = re.compile(r"^[vV]?([0-9]{1,9})$")


@dataclass
class Override:
    """What a version changes: unset (None) fields keep the definition's."""

    instructions: list[SystemMessage] | None = None
    tools: list[str] | None = None
    tool_descriptions: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.instructions is not None:
            out["instructions"] = [
                {"content": s.content, **({"providerOptions": s.provider_options} if s.provider_options else {})}
                for s in self.instructions
            ]
        if self.tools is not None:
            out["tools"] = list(self.tools)
        if self.tool_descriptions:
            out["toolDescriptions"] = dict(sorted(self.tool_descriptions.items()))
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Override:
        instructions = data.get("instructions")
        return cls(
            instructions=[SystemMessage(i["content"], i.get("providerOptions")) for i in instructions]
            if instructions is not None else None,
            tools=list(data["tools"]) if data.get("tools") is not None else None,
            tool_descriptions=dict(data.get("toolDescriptions") or {}),
        )

    def merged_with(self, change: Override) -> Override:
        """``change`` over this one: its set fields replace, its descriptions merge (an empty
        description removes the entry)."""
        descriptions = {**self.tool_descriptions, **change.tool_descriptions}
        return Override(
            instructions=change.instructions if change.instructions is not None else self.instructions,
            tools=change.tools if change.tools is not None else self.tools,
            tool_descriptions={k: v for k, v in descriptions.items() if v},
        )


@dataclass
class AgentVersion:
    id: str
    agent_id: str
    number: int
    state: VersionState
    override: Override
    message: str
    author: str
    created_at: datetime = field(default_factory=utcnow)
    published_at: datetime | None = None
    restored_from: str = ""
    definition: dict[str, Any] | None = None
    """For versions recorded by ``CreateAgent``/``UpdateAgent``: the whole definition then."""


@dataclass(frozen=True)
class ResolvedVersion:
    """What a run resolved, recorded on the run and its span."""

    selection: str
    """What the call asked for: ``published``, ``draft``, or a version id or number."""
    version_id: str = ""
    """Empty: the definition as it is (no version, or a locked agent)."""
    number: int = 0

    def detail(self) -> dict[str, Any]:
        return {"selection": self.selection, "id": self.version_id, "number": self.number}


class VersionStore(Protocol):
    """Durable versions; every method is one transaction."""

    async def add_version(self, version: AgentVersion, *, publish: bool) -> AgentVersion:
        """Store ``version`` as the agent's next number: a draft (archiving the agent's draft
        before it) or, with ``publish``, the published one (archiving the one before)."""
        ...

    async def publish_version(self, agent_id: str, version_id: str) -> AgentVersion:
        """Make the version published, archiving the published one before it."""
        ...

    async def find_version(self, agent_id: str, selector: str) -> AgentVersion | None:
        """``published``, ``draft``, an id or a number (``3``, ``v3``); None when none matches."""
        ...

    async def list_versions(self, agent_id: str, limit: int, before: int | None) -> list[AgentVersion]:
        """Newest first, numbers below ``before`` when given."""
        ...

    async def delete_versions(self, agent_id: str) -> None: ...


def check_selection(selection: str, path: str = "options.version") -> str:
    """The selection, normalized; ``InvalidArgumentError`` naming ``path`` when malformed."""
    selection = selection.strip()
    if len(selection) > 255:
        raise InvalidArgumentError(f"{path} is longer than 255 characters")
    if not selection.isprintable():
        raise InvalidArgumentError(f"{path} holds a control character")
    if selection.lower() in (PUBLISHED, DRAFT):
        selection = selection.lower()
    return selection or PUBLISHED


def number_of(selector: str) -> int | None:
    match = _NUMBER.match(selector)
    return int(match.group(1)) if match else None


CACHE_SECONDS = 1.0
"""How long a server reuses what it read of an agent's versions: a change made on another server
of the same database applies within this time; this server's own changes apply at once."""
_CACHE_ENTRIES = 10_000


class VersionResolver:
    """Resolves a call's version against the store. What it reads is reused for
    ``cache_seconds`` (a call costs no read in the common case); ``forget`` drops an agent's
    entries when this server changes its versions."""

    def __init__(self, store: VersionStore, cache_seconds: float = CACHE_SECONDS) -> None:
        self.store = store
        self.cache_seconds = cache_seconds
        self._cache: dict[tuple[str, str], tuple[float, AgentVersion | None]] = {}
        self._generation: dict[str, int] = {}

    def forget(self, agent_id: str) -> None:
        """This server changed the agent's versions: the next call reads them again."""
        self._generation[agent_id] = self._generation.get(agent_id, 0) + 1
        for key in [k for k in self._cache if k[0] == agent_id]:
            del self._cache[key]

    async def find(self, agent_id: str, selector: str) -> AgentVersion | None:
        key, now = (agent_id, selector), time.monotonic()
        hit = self._cache.get(key)
        if hit is not None and now - hit[0] < self.cache_seconds:
            return hit[1]
        generation = self._generation.get(agent_id, 0)
        version = await self.store.find_version(agent_id, selector)
        if self._generation.get(agent_id, 0) == generation:  # no change of ours while it was read
            if len(self._cache) >= _CACHE_ENTRIES:
                self._cache.clear()
            self._cache[key] = (now, version)
        return version

    async def resolve(self, agent: Agent, selection: str) -> tuple[Agent, ResolvedVersion]:
        selection = check_selection(selection)
        editor = agent.editor
        if editor.locked:
            if selection != PUBLISHED:
                raise FailedPreconditionError(
                    f"agent {agent.id!r} is locked (editor: false): it has no versions to select "
                    f"(options.version {selection!r})")
            return agent, ResolvedVersion(selection)
        version = await self.find(agent.id, selection)
        if version is None and selection != PUBLISHED:
            what = "no draft" if selection == DRAFT else f"no version {selection!r}"
            raise NotFoundError(f"agent {agent.id!r} has {what} (options.version)")
        resolved = agent if version is None else apply_override(agent, version.override)
        if editor.owns_instructions(agent) and not resolved.instructions:
            which = "no published version" if version is None else f"version {version.number}"
            raise FailedPreconditionError(
                f"agent {agent.id!r} has no instructions: its editor owns them and {which} gives them")
        if version is None:
            return agent, ResolvedVersion(selection)
        return resolved, ResolvedVersion(selection, version.id, version.number)


def apply_override(agent: Agent, override: Override) -> Agent:
    """A copy of ``agent`` with what its editor allows of ``override`` (the rest is dropped)."""
    editor = agent.editor
    out = copy.copy(agent)
    if editor.may_instructions and override.instructions is not None:
        out.instructions = list(override.instructions)
    if editor.may_tools and override.tools is not None:
        own = {_tool_name(t): t for t in agent.tools}
        out.tools = [own.get(name, name) for name in override.tools]
    if editor.may_descriptions and override.tool_descriptions:
        names = {_tool_name(t) for t in out.tools}
        out.tool_descriptions = {**agent.tool_descriptions,
                                 **{k: v for k, v in override.tool_descriptions.items() if k in names}}
    return out


def _tool_name(tool: Any) -> str:
    return tool if isinstance(tool, str) else str(getattr(tool, "name", tool))


def check_change(agent: Agent, base: Override, change: Override, message: str) -> Override:
    """The new version's whole override, or the error naming what the agent's editor or the
    request does not allow."""
    editor = agent.editor
    if editor.locked:
        raise FailedPreconditionError(f"agent {agent.id!r} is locked (editor: false): it cannot be overridden")
    if not message.strip():
        raise InvalidArgumentError("message is required: say what the change does")
    if len(message) > MAX_MESSAGE:
        raise InvalidArgumentError(f"message is longer than {MAX_MESSAGE} characters")
    if "\x00" in message:
        raise InvalidArgumentError("message holds a NUL character")
    if change.instructions is None and change.tools is None and not change.tool_descriptions:
        raise InvalidArgumentError("change is empty: set instructions, tools or tool_descriptions")
    if change.instructions is not None:
        if not editor.may_instructions:
            raise FailedPreconditionError(
                f"agent {agent.id!r}: its editor does not allow overriding the instructions")
        if not any(s.content.strip() for s in change.instructions):
            raise InvalidArgumentError("change.instructions is empty")
    if change.tools is not None:
        if not editor.may_tools:
            allowed = "only the tool descriptions" if editor.may_descriptions else "no tool changes"
            raise FailedPreconditionError(
                f"agent {agent.id!r}: its editor allows {allowed}; change.tools cannot change the tool list")
        for i, name in enumerate(change.tools):
            if not name:
                raise InvalidArgumentError(f"change.tools.names[{i}] is empty")
        if len(set(change.tools)) != len(change.tools):
            raise InvalidArgumentError("change.tools.names lists a tool twice")
    if change.tool_descriptions and not editor.may_descriptions:
        raise FailedPreconditionError(f"agent {agent.id!r}: its editor does not allow overriding tool descriptions")
    merged = base.merged_with(change)
    tools = merged.tools if merged.tools is not None else [_tool_name(t) for t in agent.tools]
    for name in change.tool_descriptions:
        if not name:
            raise InvalidArgumentError("change.tool_descriptions has an empty tool name")
        if name not in tools:
            raise InvalidArgumentError(
                f"change.tool_descriptions[{name!r}]: agent {agent.id!r} has no tool {name!r} in this version "
                f"(its tools: {', '.join(tools) or 'none'})")
    merged.tool_descriptions = {k: v for k, v in merged.tool_descriptions.items() if k in tools}
    return merged


def definition_override(agent: Agent) -> Override:
    """The agent's own values of the fields a version may override."""
    return Override(instructions=list(agent.instructions), tools=[_tool_name(t) for t in agent.tools],
                    tool_descriptions=dict(agent.tool_descriptions))


def diff(agent: Agent, before: Override, after: Override) -> tuple[list[tuple[str, str, str]], str]:
    """``([(field, before JSON, after JSON)], unified diff of the instructions)``, each side
    as it applies to ``agent`` (unset fields show the definition's)."""
    left = apply_override(_unlocked(agent), before)
    right = apply_override(_unlocked(agent), after)
    changes: list[tuple[str, str, str]] = []
    text_l = _instructions_text(left.instructions)
    text_r = _instructions_text(right.instructions)
    if [(_s.content, _s.provider_options) for _s in left.instructions] != \
            [(_s.content, _s.provider_options) for _s in right.instructions]:
        changes.append(("instructions", json.dumps(text_l), json.dumps(text_r)))
    tools_l, tools_r = [_tool_name(t) for t in left.tools], [_tool_name(t) for t in right.tools]
    if tools_l != tools_r:
        changes.append(("tools", json.dumps(tools_l), json.dumps(tools_r)))
    for name in sorted(set(left.tool_descriptions) | set(right.tool_descriptions)):
        a, b = left.tool_descriptions.get(name), right.tool_descriptions.get(name)
        if a != b:
            changes.append((f"tool_descriptions.{name}", json.dumps(a), json.dumps(b)))
    unified = "" if text_l == text_r else "".join(difflib.unified_diff(
        (text_l + "\n").splitlines(keepends=True), (text_r + "\n").splitlines(keepends=True), "before", "after"))
    return changes, unified


def _unlocked(agent: Agent) -> Agent:
    """For a diff: every field a version holds is shown, whatever the editor allows now."""
    return replace(agent, editor=Editor())


def _instructions_text(instructions: list[SystemMessage]) -> str:
    return "\n\n".join(s.content for s in instructions)
