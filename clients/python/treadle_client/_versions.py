"""Version calls of ``AgentClient`` over ``treadle.v1.AgentVersionService``: stored overrides of
an agent's instructions, tools and tool descriptions (drafts, the published version, rollback).
Every call needs an admin credential."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import grpc

from treadle.v1 import agent_version_service_pb2 as pb, agent_version_service_pb2_grpc


class VersionCalls:
    """Mixed into ``AgentClient``. A version is named by its id, its number (``3`` or ``"v3"``),
    ``"published"`` or ``"draft"``."""

    _channel: grpc.aio.Channel
    _metadata: tuple[tuple[str, str], ...]
    _version_stub: agent_version_service_pb2_grpc.AgentVersionServiceStub | None = None

    @property
    def _versions(self) -> agent_version_service_pb2_grpc.AgentVersionServiceStub:
        if self._version_stub is None:
            self._version_stub = agent_version_service_pb2_grpc.AgentVersionServiceStub(self._channel)
        return self._version_stub

    async def create_version(
        self, agent_id: str, *, message: str, instructions: str | None = None,
        tools: Sequence[str] | None = None, tool_descriptions: Mapping[str, str] | None = None,
        publish: bool = False, timeout: float | None = None,
    ) -> pb.AgentVersion:
        """A new draft (or, with ``publish``, the published version) from a partial change: the
        fields given replace those of the current draft, else of the published version."""
        change = pb.AgentOverride(tool_descriptions=dict(tool_descriptions or {}))
        if instructions is not None:
            change.instructions = instructions
        if tools is not None:
            change.tools.SetInParent()
            change.tools.names.extend(tools)
        request = pb.CreateAgentVersionRequest(agent_id=agent_id, change=change, message=message, publish=publish)
        response = await self._versions.CreateAgentVersion(request, timeout=timeout, metadata=self._metadata)
        return response.version  # type: ignore[no-any-return]

    async def get_version(
        self, agent_id: str, version: str | int = "published", *, timeout: float | None = None
    ) -> pb.AgentVersion:
        request = pb.GetAgentVersionRequest(agent_id=agent_id, version=str(version))
        response = await self._versions.GetAgentVersion(request, timeout=timeout, metadata=self._metadata)
        return response.version  # type: ignore[no-any-return]

    async def list_versions(
        self, agent_id: str, *, page_size: int = 0, timeout: float | None = None
    ) -> list[pb.AgentVersion]:
        """Every version of the agent, newest first (page after page)."""
        out: list[pb.AgentVersion] = []
        token = ""
        while True:
            response = await self._versions.ListAgentVersions(
                pb.ListAgentVersionsRequest(agent_id=agent_id, page_size=page_size, page_token=token),
                timeout=timeout, metadata=self._metadata,
            )
            out.extend(response.versions)
            token = response.next_page_token
            if not token:
                return out

    async def publish_version(
        self, agent_id: str, version: str | int, *, timeout: float | None = None
    ) -> pb.AgentVersion:
        """Make ``version`` the one calls run (rollback: publish an earlier one)."""
        request = pb.PublishAgentVersionRequest(agent_id=agent_id, version=str(version))
        response = await self._versions.PublishAgentVersion(request, timeout=timeout, metadata=self._metadata)
        return response.version  # type: ignore[no-any-return]

    async def restore_version(
        self, agent_id: str, version: str | int, *, message: str = "", publish: bool = False,
        timeout: float | None = None,
    ) -> pb.AgentVersion:
        """A new version copied from an earlier one (a draft, or published with ``publish``)."""
        request = pb.RestoreAgentVersionRequest(agent_id=agent_id, version=str(version), message=message,
                                                publish=publish)
        response = await self._versions.RestoreAgentVersion(request, timeout=timeout, metadata=self._metadata)
        return response.version  # type: ignore[no-any-return]

    async def diff_versions(
        self, agent_id: str, from_version: str | int, to_version: str | int, *, timeout: float | None = None
    ) -> pb.DiffAgentVersionsResponse:
        """The fields that differ between two versions (``"definition"``: the agent as defined)."""
        request = pb.DiffAgentVersionsRequest(agent_id=agent_id, from_version=str(from_version),
                                              to_version=str(to_version))
        response: pb.DiffAgentVersionsResponse = await self._versions.DiffAgentVersions(
            request, timeout=timeout, metadata=self._metadata)
        return response
