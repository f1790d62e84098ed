"""Sub-agents on other Treadle servers: a delegation is a ``Stream`` call to that server.

The server is one of the config file's ``remoteServers`` (endpoint, TLS, bearer token from an
environment variable); an agent only names it. The call carries the trace context (W3C
``traceparent`` metadata, so both servers' spans form one trace) and the delegation's run id, so
the child's thread (``<parentThread>-<runId>``) is known before it starts. Closing the stream
cancels the call, and the other server ends the run (as it does for any client that goes away).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping

import grpc

from ..agents import RunRequest, SubAgentRef
from ..config.remote_servers import RemoteServer
from ..core.chunks import Chunk
from ..core.errors import NotFoundError
from ..core.messages import Message, MessageContent, TextPart, new_id
from ..tracing.spans import inject_context
from ..v1 import agent_service_pb2, agent_service_pb2_grpc
from ..wire.data import chunk_from_proto, message_to_proto
from .convert import call_options_to_proto

_OPTIONS: list[tuple[str, int | str]] = [("grpc.max_receive_message_length", 64 << 20), ("grpc.max_send_message_length", 64 << 20)]


class RemoteAgents:
    """A ``ChildRunner`` for ``remote`` sub-agents; one channel per configured server."""

    def __init__(self, servers: Mapping[str, RemoteServer], env: Mapping[str, str] | None = None) -> None:
        self.servers = dict(servers)
        self._env = os.environ if env is None else env
        self._channels: dict[str, grpc.aio.Channel] = {}

    def describe(self, ref: SubAgentRef) -> tuple[str, int]:
        return "", 0  # the other server's agent is not known here without a call

    def _stub(self, name: str) -> tuple[agent_service_pb2_grpc.AgentServiceStub, list[tuple[str, str]]]:
        server = self.servers.get(name)
        if server is None:
            raise NotFoundError(f"remote server {name!r} is not configured (remoteServers)")
        channel = self._channels.get(name)
        if channel is None:
            channel = self._channels[name] = _channel(server)
        metadata = []
        token = self._env.get(server.token_env, "") if server.token_env else ""
        if token:
            metadata.append(("authorization", f"Bearer {token}"))
        return agent_service_pb2_grpc.AgentServiceStub(channel), metadata

    async def stream(self, ref: SubAgentRef, request: RunRequest) -> AsyncIterator[Chunk]:
        assert ref.remote is not None
        stub, metadata = self._stub(ref.remote.target)
        pb = agent_service_pb2.StreamRequest(agent_id=ref.remote.agent_id, run_id=request.run_id)
        messages = [Message(new_id(), "system", MessageContent(parts=[TextPart(s.content)]))
                    for s in request.instructions] + request.messages
        for message in messages:
            message_to_proto(message, pb.messages.add())
        call_options_to_proto(request.options, pb.options)
        metadata += list(inject_context().items())
        call = stub.Stream(pb, metadata=metadata)
        try:
            async for response in call:
                for chunk in response.chunks:
                    yield chunk_from_proto(chunk)
        except grpc.aio.AioRpcError as e:
            raise RemoteAgentError(f"server {ref.remote.target!r}: {e.code().name}: {e.details()}") from None
        finally:
            call.cancel()  # a no-op once it ended; otherwise the other server ends the run

    async def aclose(self) -> None:
        for channel in self._channels.values():
            await channel.close()
        self._channels.clear()


class RemoteAgentError(OSError):
    """The other server refused or lost the delegation's ``Stream`` call."""


def _channel(server: RemoteServer) -> grpc.aio.Channel:
    if not server.tls:
        return grpc.aio.insecure_channel(server.endpoint, options=_OPTIONS)

    def read(path: object) -> bytes | None:
        return path.read_bytes() if path is not None else None  # type: ignore[attr-defined]

    creds = grpc.ssl_channel_credentials(read(server.ca_file), read(server.key_file), read(server.cert_file))
    options = list(_OPTIONS)
    if server.server_name:
        options.append(("grpc.ssl_target_name_override", server.server_name))
    return grpc.aio.secure_channel(server.endpoint, creds, options=options)
