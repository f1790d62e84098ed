"""``AgentClient``: run agents and manage them over ``treadle.v1.AgentService``."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any

import grpc
from google.protobuf import field_mask_pb2, json_format

from treadle.v1 import agent_pb2, agent_service_pb2, agent_service_pb2_grpc, chunk_pb2, message_pb2

from ._connect import Connect, TLSConfig
from ._signals import SignalCalls
from ._threads import ThreadCalls
from ._versions import VersionCalls

DEFAULT_TARGET = "127.0.0.1:50051"
TARGET_VARIABLE = "TREADLE_TARGET"


def default_target() -> str:
    """``$TREADLE_TARGET`` when set, else ``127.0.0.1:50051``: where the command-line tools and
    the examples look for a server when given no address."""
    return os.environ.get(TARGET_VARIABLE) or DEFAULT_TARGET


AgentLike = agent_pb2.Agent | Mapping[str, Any]
"""An ``Agent`` message, or a dict in its proto JSON form (``{"id": ..., "model": ...}``)."""
OptionsLike = agent_pb2.CallOptions | Mapping[str, Any]
MessageLike = message_pb2.Message | Mapping[str, Any]


class AgentClient(ThreadCalls, SignalCalls, VersionCalls):
    """An async client for one Treadle server: agents, runs, memory threads (``ThreadCalls``),
    signals into threads (``SignalCalls``) and agent versions (``VersionCalls``).

    ``token`` (default: ``TREADLE_TOKEN``) is sent as a bearer token; ``tls`` connects over TLS.
    ``channel`` lets you bring your own (interceptors); the client then leaves closing it to
    you. Every call takes an optional ``timeout`` in seconds.
    """

    def __init__(
        self,
        target: str = DEFAULT_TARGET,
        *,
        channel: grpc.aio.Channel | None = None,
        metadata: Sequence[tuple[str, str]] = (),
        token: str | None = None,
        tls: TLSConfig | None = None,
    ) -> None:
        connect = Connect(tls, token)
        self._owns_channel = channel is None
        self._channel = channel or connect.channel(target)
        self._stub = agent_service_pb2_grpc.AgentServiceStub(self._channel)
        self._metadata = connect.metadata + tuple(metadata)

    # --- runs ---------------------------------------------------------------------------------

    async def generate(
        self,
        agent_id: str,
        prompt: str | None = None,
        *,
        messages: Iterable[MessageLike] | None = None,
        options: OptionsLike | None = None,
        run_id: str = "",
        timeout: float | None = None,
    ) -> agent_service_pb2.GenerateResponse:
        """Run the agent to the end: text, finish reason, usage, steps, tripwire, messages."""
        request = agent_service_pb2.GenerateRequest()
        _fill_run_request(request, agent_id, prompt, messages, options, run_id)
        response: agent_service_pb2.GenerateResponse = await self._stub.Generate(
            request, timeout=timeout, metadata=self._metadata
        )
        return response

    async def stream(
        self,
        agent_id: str,
        prompt: str | None = None,
        *,
        messages: Iterable[MessageLike] | None = None,
        options: OptionsLike | None = None,
        run_id: str = "",
        timeout: float | None = None,
    ) -> AsyncIterator[chunk_pb2.Chunk]:
        """The run's chunks one by one, as they arrive. Leaving the loop early cancels the run."""
        request = agent_service_pb2.StreamRequest()
        _fill_run_request(request, agent_id, prompt, messages, options, run_id)
        call = self._stub.Stream(request, timeout=timeout, metadata=self._metadata)
        try:
            async for response in call:
                # The server batches chunks that were ready together; callers see single chunks.
                for chunk in response.chunks:
                    yield chunk
        finally:
            call.cancel()  # no-op when the call already ended

    # --- agents -------------------------------------------------------------------------------

    async def create_agent(self, agent: AgentLike, *, timeout: float | None = None) -> agent_pb2.Agent:
        request = agent_service_pb2.CreateAgentRequest(agent=_agent(agent))
        response = await self._stub.CreateAgent(request, timeout=timeout, metadata=self._metadata)
        return response.agent  # type: ignore[no-any-return]

    async def get_agent(self, agent_id: str, *, timeout: float | None = None) -> agent_pb2.Agent:
        request = agent_service_pb2.GetAgentRequest(id=agent_id)
        response = await self._stub.GetAgent(request, timeout=timeout, metadata=self._metadata)
        return response.agent  # type: ignore[no-any-return]

    async def list_agents(self, *, page_size: int = 0, timeout: float | None = None) -> list[agent_pb2.Agent]:
        """Every agent (config, code and API ones), fetching page after page."""
        agents: list[agent_pb2.Agent] = []
        token = ""
        while True:
            request = agent_service_pb2.ListAgentsRequest(page_size=page_size, page_token=token)
            response = await self._stub.ListAgents(request, timeout=timeout, metadata=self._metadata)
            agents.extend(response.agents)
            token = response.next_page_token
            if not token:
                return agents

    async def update_agent(
        self,
        agent: AgentLike,
        *,
        update_mask: Sequence[str] | None = None,
        timeout: float | None = None,
    ) -> agent_pb2.Agent:
        """Update the agent with ``agent``'s id: only the fields in ``update_mask`` (proto field
        names such as ``"instructions"``), or every field when it is None."""
        request = agent_service_pb2.UpdateAgentRequest(agent=_agent(agent))
        if update_mask is not None:
            request.update_mask.CopyFrom(field_mask_pb2.FieldMask(paths=list(update_mask)))
        response = await self._stub.UpdateAgent(request, timeout=timeout, metadata=self._metadata)
        return response.agent  # type: ignore[no-any-return]

    async def delete_agent(self, agent_id: str, *, timeout: float | None = None) -> None:
        request = agent_service_pb2.DeleteAgentRequest(id=agent_id)
        await self._stub.DeleteAgent(request, timeout=timeout, metadata=self._metadata)

    # --- lifecycle ----------------------------------------------------------------------------

    async def close(self) -> None:
        if self._owns_channel:
            await self._channel.close()

    async def __aenter__(self) -> AgentClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


def _agent(agent: AgentLike) -> agent_pb2.Agent:
    if isinstance(agent, agent_pb2.Agent):
        return agent
    return json_format.ParseDict(dict(agent), agent_pb2.Agent())


def _fill_run_request(
    request: agent_service_pb2.GenerateRequest | agent_service_pb2.StreamRequest,
    agent_id: str,
    prompt: str | None,
    messages: Iterable[MessageLike] | None,
    options: OptionsLike | None,
    run_id: str,
) -> None:
    request.agent_id = agent_id
    request.run_id = run_id
    if prompt is not None:
        request.prompt = prompt
    for message in messages or ():
        if isinstance(message, message_pb2.Message):
            request.messages.append(message)
        else:
            json_format.ParseDict(dict(message), request.messages.add())
    if options is not None:
        if isinstance(options, agent_pb2.CallOptions):
            request.options.CopyFrom(options)
        else:
            json_format.ParseDict(dict(options), request.options)
