"""``AgentVersionService``: an agent's stored versions (``treadle.versions``), admin only.

Every method checks the caller is admin, then the request (INVALID_ARGUMENT naming the field),
then the agent's editor (FAILED_PRECONDITION), before anything is stored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc

from ..agents import Agent
from ..core.errors import FailedPreconditionError, InvalidArgumentError, NotFoundError
from ..core.messages import SystemMessage, new_id
from ..registry import Registry
from ..v1 import agent_version_service_pb2 as pb, agent_version_service_pb2_grpc
from ..versions import (
    DEFINITION, DRAFT, PUBLISHED, AgentVersion, Override, VersionStore, check_change, check_selection,
    definition_override, diff, number_of,
)
from ..wire.data import datetime_to_ts, dict_to_struct, system_messages_from_proto, system_messages_to_proto
from . import auth, validate
from .status import unary

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["AgentVersionService"].full_name
DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
ANONYMOUS = "anonymous"
"""The author of a version made on a server without auth."""

_STATE = {"draft": pb.AGENT_VERSION_STATE_DRAFT, "published": pb.AGENT_VERSION_STATE_PUBLISHED,
          "archived": pb.AGENT_VERSION_STATE_ARCHIVED}


def author() -> str:
    return auth.owner() or ANONYMOUS


class AgentVersionServicer(agent_version_service_pb2_grpc.AgentVersionServiceServicer):
    def __init__(self, registry: Registry) -> None:
        self._registry = registry
        self.store: VersionStore | None = None
        """Set by the app once the store is open (before the server serves)."""
        self.changed: Callable[[str], None] = lambda agent_id: None
        """Told the agent id after each change of its versions (the resolver's cache forgets it)."""

    def register(self, server: grpc.aio.Server) -> None:
        agent_version_service_pb2_grpc.add_AgentVersionServiceServicer_to_server(self, server)

    @property
    def _store(self) -> VersionStore:
        if self.store is None:  # pragma: no cover - the app opens the store before serving
            raise RuntimeError("the store is not open")
        return self.store

    def _agent(self, method: str, agent_id: str) -> Agent:
        auth.require_admin(f"AgentVersionService.{method}")
        if not agent_id:
            raise InvalidArgumentError("agent_id is required")
        return self._registry.get_agent(agent_id)

    async def _find(self, agent: Agent, selector: str, path: str = "version") -> AgentVersion:
        if not selector:
            raise InvalidArgumentError(f"{path} is required: published, draft, a version id or a number")
        check_selection(selector, path)
        version = await self._store.find_version(agent.id, selector)
        if version is None:
            raise NotFoundError(f"agent {agent.id!r} has no version {selector!r}")
        return version

    @unary
    async def CreateAgentVersion(
        self, request: pb.CreateAgentVersionRequest, context: grpc.aio.ServicerContext
    ) -> pb.CreateAgentVersionResponse:
        agent = self._agent("CreateAgentVersion", request.agent_id)
        change = override_from_proto(request.change, "change")
        base = await self._store.find_version(agent.id, DRAFT) or await self._store.find_version(agent.id, PUBLISHED)
        whole = check_change(agent, base.override if base is not None else Override(), change, request.message)
        version = AgentVersion(new_id("agv"), agent.id, 0, "draft", whole, request.message.strip(), author())
        version = await self._store.add_version(version, publish=request.publish)
        self.changed(agent.id)
        return pb.CreateAgentVersionResponse(version=version_to_proto(version))

    @unary
    async def GetAgentVersion(
        self, request: pb.GetAgentVersionRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetAgentVersionResponse:
        agent = self._agent("GetAgentVersion", request.agent_id)
        return pb.GetAgentVersionResponse(version=version_to_proto(await self._find(agent, request.version)))

    @unary
    async def ListAgentVersions(
        self, request: pb.ListAgentVersionsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListAgentVersionsResponse:
        agent = self._agent("ListAgentVersions", request.agent_id)
        if request.page_size < 0:
            raise InvalidArgumentError(f"page_size must be >= 0, got {request.page_size}")
        size = min(request.page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
        before = None
        if request.page_token:
            before = number_of(request.page_token)
            if before is None:
                raise InvalidArgumentError("page_token is not one this server made")
        versions = await self._store.list_versions(agent.id, size + 1, before)
        response = pb.ListAgentVersionsResponse(versions=[version_to_proto(v) for v in versions[:size]])
        if len(versions) > size:
            response.next_page_token = str(versions[size - 1].number)
        return response

    @unary
    async def PublishAgentVersion(
        self, request: pb.PublishAgentVersionRequest, context: grpc.aio.ServicerContext
    ) -> pb.PublishAgentVersionResponse:
        agent = self._agent("PublishAgentVersion", request.agent_id)
        if agent.editor.locked:
            raise FailedPreconditionError(f"agent {agent.id!r} is locked (editor: false): it cannot be overridden")
        version = await self._find(agent, request.version)
        published = await self._store.publish_version(agent.id, version.id)
        self.changed(agent.id)
        return pb.PublishAgentVersionResponse(version=version_to_proto(published))

    @unary
    async def RestoreAgentVersion(
        self, request: pb.RestoreAgentVersionRequest, context: grpc.aio.ServicerContext
    ) -> pb.RestoreAgentVersionResponse:
        agent = self._agent("RestoreAgentVersion", request.agent_id)
        if request.version in (PUBLISHED, DRAFT):
            raise InvalidArgumentError("version: restore an earlier version, by its id or number")
        old = await self._find(agent, request.version)
        message = request.message.strip() or f"restore of v{old.number}"
        # The old version whole, as a change over nothing, with what the editor allows now (a
        # recorded definition holds every field; runs would ignore the others anyway).
        o = old.override if not _empty(old.override) else definition_override(agent)
        editor = agent.editor
        change = Override(o.instructions if editor.may_instructions else None,
                          o.tools if editor.may_tools else None,
                          dict(o.tool_descriptions) if editor.may_descriptions else {})
        if _empty(change) and not editor.locked:
            raise FailedPreconditionError(
                f"agent {agent.id!r}: its editor allows none of what version {old.number} changes")
        whole = check_change(agent, Override(), change, message)
        version = AgentVersion(new_id("agv"), agent.id, 0, "draft", whole, message, author(), restored_from=old.id)
        version = await self._store.add_version(version, publish=request.publish)
        self.changed(agent.id)
        return pb.RestoreAgentVersionResponse(version=version_to_proto(version))

    @unary
    async def DiffAgentVersions(
        self, request: pb.DiffAgentVersionsRequest, context: grpc.aio.ServicerContext
    ) -> pb.DiffAgentVersionsResponse:
        agent = self._agent("DiffAgentVersions", request.agent_id)
        sides = []
        for path, selector in (("from_version", request.from_version), ("to_version", request.to_version)):
            if selector == DEFINITION:
                sides.append(Override())
            elif not selector and path == "from_version":
                sides.append(Override())  # from the definition, by default
            else:
                sides.append((await self._find(agent, selector, path)).override)
        changes, unified = diff(agent, sides[0], sides[1])
        return pb.DiffAgentVersionsResponse(
            changes=[pb.FieldChange(field=f, before=b, after=a) for f, b, a in changes], instructions_diff=unified)

    # --- history of agents created over the API ----------------------------------------------

    async def record(self, agent: Agent, definition: dict[str, Any], message: str) -> None:
        """``CreateAgent`` and ``UpdateAgent``: the definition becomes the published version."""
        if self.store is None:
            return
        version = AgentVersion(new_id("agv"), agent.id, 0, "published", definition_override(agent),
                               message, author(), definition=definition)
        await self.store.add_version(version, publish=True)
        self.changed(agent.id)

    async def forget(self, agent_id: str) -> None:
        """``DeleteAgent``: a new agent with the same id starts with no history."""
        if self.store is not None:
            await self.store.delete_versions(agent_id)
            self.changed(agent_id)


def _empty(o: Override) -> bool:
    return o.instructions is None and o.tools is None and not o.tool_descriptions


# --- conversion ----------------------------------------------------------------------------------


def override_from_proto(p: pb.AgentOverride, path: str) -> Override:
    kind = p.WhichOneof("instructions_kind")
    instructions: list[SystemMessage] | None = None
    if kind == "instruction_messages":
        instructions = system_messages_from_proto(p.instruction_messages.messages)
        for i, system in enumerate(instructions):
            validate.check_provider_options(
                system.provider_options, f"{path}.instruction_messages.messages[{i}].provider_options")
    elif kind == "instructions":
        instructions = [SystemMessage(p.instructions)]
    tools = list(p.tools.names) if p.HasField("tools") else None
    return Override(instructions, tools, dict(p.tool_descriptions))


def override_to_proto(o: Override, out: pb.AgentOverride) -> None:
    if o.instructions is not None:
        if len(o.instructions) == 1 and not o.instructions[0].provider_options:
            out.instructions = o.instructions[0].content
        else:
            out.instruction_messages.SetInParent()
            system_messages_to_proto(o.instructions, out.instruction_messages.messages)
    if o.tools is not None:
        out.tools.SetInParent()
        out.tools.names.extend(o.tools)
    out.tool_descriptions.update(o.tool_descriptions)


def version_to_proto(v: AgentVersion) -> pb.AgentVersion:
    out = pb.AgentVersion(id=v.id, agent_id=v.agent_id, number=v.number, state=_STATE[v.state],
                          message=v.message, author=v.author, restored_from=v.restored_from)
    override_to_proto(v.override, out.override)
    datetime_to_ts(v.created_at, out.create_time)
    if v.published_at is not None:
        datetime_to_ts(v.published_at, out.publish_time)
    if v.definition is not None:
        dict_to_struct(v.definition, out.definition)
    return out

