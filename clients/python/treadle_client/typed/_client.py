"""``treadle_client.typed.AgentClient``: the agent client with betterproto2 dataclasses for messages.

It wraps the plain ``treadle_client.AgentClient`` and converts at its edge only: arguments given as
dataclasses are encoded and decoded into the generated protobuf messages the plain client sends,
and every response is decoded from the protobuf wire form into its dataclass. Nothing else sees
the dataclasses: not the server, not processors (they keep the framework's objects of
``treadle.core``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, TypeAlias, TypeVar

import betterproto2
import grpc
from google.protobuf.message import Message as ProtoMessage

from treadle.v1 import agent_pb2, message_pb2

from .. import _agents, _signals
from .._connect import TLSConfig
from ._gen.treadle import v1

M = TypeVar("M", bound=betterproto2.Message)
P = TypeVar("P", bound=ProtoMessage)

ChunkPayload: TypeAlias = (
    v1.StartChunk | v1.StepStartChunk | v1.TextStartChunk | v1.TextDeltaChunk | v1.TextEndChunk
    | v1.ReasoningStartChunk | v1.ReasoningDeltaChunk | v1.ReasoningEndChunk
    | v1.ToolCallInputStreamingStartChunk | v1.ToolCallDeltaChunk | v1.ToolCallInputStreamingEndChunk
    | v1.ToolCallChunk | v1.ToolResultChunk | v1.ToolErrorChunk | v1.SourceChunk | v1.FileChunk
    | v1.ResponseMetadataChunk | v1.StepFinishChunk | v1.FinishChunk | v1.ErrorChunk | v1.AbortChunk
    | v1.TripwireChunk | v1.DataChunk | v1.ToolOutputChunk
)  # fmt: skip
"""The payload of a ``Chunk``: one class per branch of its ``chunk`` oneof."""


class Chunk(v1.Chunk):
    """The generated ``Chunk`` dataclass, plus ``chunk``: its payload, whichever branch is set.

    ::

        match chunk.chunk:
            case TextDeltaChunk(text=text): ...
            case ToolCallChunk(tool_name=name, args=args): ...
    """

    @property
    def chunk(self) -> ChunkPayload | None:
        """The set branch of the ``chunk`` oneof; None only for a branch this client does not
        know (a newer server's)."""
        value: ChunkPayload | None = betterproto2.which_one_of(self, "chunk")[1]
        return value

    @classmethod
    def _type_hints(cls) -> dict[str, type]:
        # betterproto2 resolves a class's field types in the module that defines the class: the
        # fields are the generated class's, so resolve them in the generated module.
        return v1.Chunk._type_hints()


AgentLike: TypeAlias = v1.Agent | agent_pb2.Agent | Mapping[str, Any]
OptionsLike: TypeAlias = v1.CallOptions | agent_pb2.CallOptions | Mapping[str, Any]
MessageLike: TypeAlias = v1.Message | message_pb2.Message | Mapping[str, Any]
Json: TypeAlias = Mapping[str, Any] | betterproto2.Message
"""A request part as a dataclass (``v1.IfIdle(...)``) or in its proto JSON form as a dict."""


def to_dataclass(cls: type[M], message: ProtoMessage) -> M:
    """The dataclass of a generated protobuf message (through the wire form both share)."""
    return cls.parse(message.SerializeToString())


def to_proto(cls: type[P], message: betterproto2.Message) -> P:
    """The generated protobuf message of a dataclass (through the wire form both share)."""
    return cls.FromString(bytes(message))


def _proto_or_json(cls: type[P], value: Any) -> Any:
    return to_proto(cls, value) if isinstance(value, betterproto2.Message) else value


def _json(value: Json | None) -> Mapping[str, Any] | None:
    return value.to_dict() if isinstance(value, betterproto2.Message) else value


def _chunk(message: ProtoMessage) -> Chunk:
    return Chunk.parse(message.SerializeToString())


class ThreadSubscription:
    """``treadle_client.ThreadSubscription`` yielding ``Chunk`` dataclasses."""

    def __init__(self, plain: _signals.ThreadSubscription) -> None:
        self.plain = plain

    @property
    def active_run_id(self) -> str:
        """The thread's running run ("" when idle), kept current as runs start and end."""
        return self.plain.active_run_id

    @property
    def position(self) -> str:
        """Where the subscriber is: ``subscribe_to_thread(..., position=...)`` resumes from it."""
        return self.plain.position

    @property
    def replayed_messages(self) -> list[v1.Message]:
        """On a resumed subscription: the messages the thread stored meanwhile, oldest first."""
        return [to_dataclass(v1.Message, m) for m in self.plain.replayed_messages]

    async def __aiter__(self) -> AsyncIterator[Chunk]:
        async for chunk in self.plain:
            yield _chunk(chunk)

    async def abort(self) -> bool:
        """Abort the thread's active run; True when one was running."""
        return await self.plain.abort()

    def unsubscribe(self) -> None:
        self.plain.unsubscribe()


class AgentClient:
    """``treadle_client.AgentClient`` with dataclasses: the same calls and arguments, each taking
    a dataclass wherever the plain one takes a protobuf message or a dict (both still work), and
    returning the dataclass of what the plain one returns. ``plain`` is the wrapped client.
    """

    def __init__(
        self,
        target: str = _agents.DEFAULT_TARGET,
        *,
        channel: grpc.aio.Channel | None = None,
        metadata: Sequence[tuple[str, str]] = (),
        token: str | None = None,
        tls: TLSConfig | None = None,
    ) -> None:
        self.plain = _agents.AgentClient(target, channel=channel, metadata=metadata, token=token, tls=tls)

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
    ) -> v1.GenerateResponse:
        """Run the agent to the end: text, finish reason, usage, steps, tripwire, messages."""
        response = await self.plain.generate(
            agent_id, prompt, messages=_messages(messages), options=_options(options), run_id=run_id,
            timeout=timeout,
        )
        return to_dataclass(v1.GenerateResponse, response)

    async def stream(
        self,
        agent_id: str,
        prompt: str | None = None,
        *,
        messages: Iterable[MessageLike] | None = None,
        options: OptionsLike | None = None,
        run_id: str = "",
        timeout: float | None = None,
    ) -> AsyncIterator[Chunk]:
        """The run's chunks one by one, as they arrive. Leaving the loop early cancels the run."""
        chunks = self.plain.stream(
            agent_id, prompt, messages=_messages(messages), options=_options(options), run_id=run_id,
            timeout=timeout,
        )
        try:
            async for chunk in chunks:
                yield _chunk(chunk)
        finally:
            await chunks.aclose()  # type: ignore[attr-defined]

    # --- agents -------------------------------------------------------------------------------

    async def create_agent(self, agent: AgentLike, *, timeout: float | None = None) -> v1.Agent:
        return to_dataclass(v1.Agent, await self.plain.create_agent(_agent(agent), timeout=timeout))

    async def get_agent(self, agent_id: str, *, timeout: float | None = None) -> v1.Agent:
        return to_dataclass(v1.Agent, await self.plain.get_agent(agent_id, timeout=timeout))

    async def list_agents(self, *, page_size: int = 0, timeout: float | None = None) -> list[v1.Agent]:
        """Every agent (config, code and API ones), fetching page after page."""
        agents = await self.plain.list_agents(page_size=page_size, timeout=timeout)
        return [to_dataclass(v1.Agent, a) for a in agents]

    async def update_agent(
        self, agent: AgentLike, *, update_mask: Sequence[str] | None = None, timeout: float | None = None,
    ) -> v1.Agent:
        """Update the agent with ``agent``'s id: only the fields in ``update_mask`` (proto field
        names such as ``"instructions"``), or every field when it is None."""
        updated = await self.plain.update_agent(_agent(agent), update_mask=update_mask, timeout=timeout)
        return to_dataclass(v1.Agent, updated)

    async def delete_agent(self, agent_id: str, *, timeout: float | None = None) -> None:
        await self.plain.delete_agent(agent_id, timeout=timeout)

    # --- threads ------------------------------------------------------------------------------

    async def create_thread(
        self, resource_id: str, thread_id: str, *, title: str = "",
        metadata: Mapping[str, Any] | None = None, request_id: str = "", timeout: float | None = None,
    ) -> v1.Thread:
        thread = await self.plain.create_thread(resource_id, thread_id, title=title, metadata=metadata,
                                                request_id=request_id, timeout=timeout)
        return to_dataclass(v1.Thread, thread)

    async def get_thread(self, resource_id: str, thread_id: str, *, timeout: float | None = None) -> v1.Thread:
        return to_dataclass(v1.Thread, await self.plain.get_thread(resource_id, thread_id, timeout=timeout))

    async def list_threads(
        self, resource_id: str, *, page_size: int = 0, timeout: float | None = None
    ) -> list[v1.Thread]:
        """Every thread of the resource, most recently updated first (page after page)."""
        threads = await self.plain.list_threads(resource_id, page_size=page_size, timeout=timeout)
        return [to_dataclass(v1.Thread, t) for t in threads]

    async def update_thread(
        self, resource_id: str, thread_id: str, *, title: str | None = None,
        metadata: Mapping[str, Any] | None = None, request_id: str = "", timeout: float | None = None,
    ) -> v1.Thread:
        """Set the title and/or the metadata (only those given)."""
        thread = await self.plain.update_thread(resource_id, thread_id, title=title, metadata=metadata,
                                                request_id=request_id, timeout=timeout)
        return to_dataclass(v1.Thread, thread)

    async def delete_thread(
        self, resource_id: str, thread_id: str, *, request_id: str = "", timeout: float | None = None,
    ) -> None:
        """Delete the thread with its messages and runs."""
        await self.plain.delete_thread(resource_id, thread_id, request_id=request_id, timeout=timeout)

    async def list_messages(
        self, resource_id: str, thread_id: str, *, page_size: int = 0, timeout: float | None = None
    ) -> list[v1.Message]:
        """Every message of the thread, oldest first, in the stored form."""
        messages = await self.plain.list_messages(resource_id, thread_id, page_size=page_size, timeout=timeout)
        return [to_dataclass(v1.Message, m) for m in messages]

    async def list_runs(
        self, resource_id: str, thread_id: str, *, page_size: int = 0, timeout: float | None = None
    ) -> list[v1.Run]:
        """Every run recorded on the thread, newest first."""
        runs = await self.plain.list_runs(resource_id, thread_id, page_size=page_size, timeout=timeout)
        return [to_dataclass(v1.Run, r) for r in runs]

    # --- versions -----------------------------------------------------------------------------

    async def create_version(
        self, agent_id: str, *, message: str, instructions: str | None = None,
        tools: Sequence[str] | None = None, tool_descriptions: Mapping[str, str] | None = None,
        publish: bool = False, timeout: float | None = None,
    ) -> v1.AgentVersion:
        """A new draft (or, with ``publish``, the published version) from a partial change."""
        version = await self.plain.create_version(
            agent_id, message=message, instructions=instructions, tools=tools,
            tool_descriptions=tool_descriptions, publish=publish, timeout=timeout)
        return to_dataclass(v1.AgentVersion, version)

    async def get_version(
        self, agent_id: str, version: str | int = "published", *, timeout: float | None = None
    ) -> v1.AgentVersion:
        return to_dataclass(v1.AgentVersion, await self.plain.get_version(agent_id, version, timeout=timeout))

    async def list_versions(
        self, agent_id: str, *, page_size: int = 0, timeout: float | None = None
    ) -> list[v1.AgentVersion]:
        """Every version of the agent, newest first (page after page)."""
        versions = await self.plain.list_versions(agent_id, page_size=page_size, timeout=timeout)
        return [to_dataclass(v1.AgentVersion, v) for v in versions]

    async def publish_version(
        self, agent_id: str, version: str | int, *, timeout: float | None = None
    ) -> v1.AgentVersion:
        return to_dataclass(v1.AgentVersion, await self.plain.publish_version(agent_id, version, timeout=timeout))

    async def restore_version(
        self, agent_id: str, version: str | int, *, message: str = "", publish: bool = False,
        timeout: float | None = None,
    ) -> v1.AgentVersion:
        restored = await self.plain.restore_version(agent_id, version, message=message, publish=publish,
                                                    timeout=timeout)
        return to_dataclass(v1.AgentVersion, restored)

    async def diff_versions(
        self, agent_id: str, from_version: str | int, to_version: str | int, *, timeout: float | None = None
    ) -> v1.DiffAgentVersionsResponse:
        diff = await self.plain.diff_versions(agent_id, from_version, to_version, timeout=timeout)
        return to_dataclass(v1.DiffAgentVersionsResponse, diff)

    # --- signals ------------------------------------------------------------------------------

    async def subscribe_to_thread(self, resource_id: str, thread_id: str, *, position: str = "") -> ThreadSubscription:
        """Subscribed once this returns: call it before sending, to see the whole reaction.
        ``position`` (an earlier subscription's ``position``) resumes it: what was missed is
        replayed first."""
        return ThreadSubscription(await self.plain.subscribe_to_thread(resource_id, thread_id, position=position))

    async def send_message(
        self, agent_id: str, message: str | Json, *, resource_id: str = "", thread_id: str = "",
        run_id: str = "", attributes: Mapping[str, Any] | None = None, if_active: Json | None = None,
        if_idle: Json | None = None, request_id: str = "", timeout: float | None = None,
    ) -> v1.SendMessageResponse:
        """A user message (``SendMessage``); ``message`` is text or a ``SignalMessage``."""
        response = await self.plain.send_message(
            agent_id, message if isinstance(message, str) else _json(message) or {},
            resource_id=resource_id, thread_id=thread_id, run_id=run_id, attributes=attributes,
            if_active=_json(if_active), if_idle=_json(if_idle), request_id=request_id, timeout=timeout,
        )
        return to_dataclass(v1.SendMessageResponse, response)

    async def queue_message(
        self, agent_id: str, message: str | Json, *, resource_id: str = "", thread_id: str = "",
        run_id: str = "", attributes: Mapping[str, Any] | None = None, if_active: Json | None = None,
        if_idle: Json | None = None, request_id: str = "", timeout: float | None = None,
    ) -> v1.QueueMessageResponse:
        """A user message run after the thread's active run (``QueueMessage``)."""
        response = await self.plain.queue_message(
            agent_id, message if isinstance(message, str) else _json(message) or {},
            resource_id=resource_id, thread_id=thread_id, run_id=run_id, attributes=attributes,
            if_active=_json(if_active), if_idle=_json(if_idle), request_id=request_id, timeout=timeout,
        )
        return to_dataclass(v1.QueueMessageResponse, response)

    async def send_signal(
        self, agent_id: str, signal: Json, *, resource_id: str = "", thread_id: str = "",
        run_id: str = "", if_active: Json | None = None, if_idle: Json | None = None,
        request_id: str = "", timeout: float | None = None,
    ) -> v1.SendSignalResponse:
        """A signal: ``v1.Signal(type="notification", tag_name="github-review", contents=...)``."""
        response = await self.plain.send_signal(
            agent_id, _json(signal) or {}, resource_id=resource_id, thread_id=thread_id, run_id=run_id,
            if_active=_json(if_active), if_idle=_json(if_idle), request_id=request_id, timeout=timeout,
        )
        return to_dataclass(v1.SendSignalResponse, response)

    async def send_state_signal(
        self, agent_id: str, state: Json, *, resource_id: str, thread_id: str,
        if_active: Json | None = None, if_idle: Json | None = None, request_id: str = "", timeout: float | None = None,
    ) -> v1.SendStateSignalResponse:
        """Named thread state (``v1.StateSignal(id="browser", cache_key=..., contents=...)``)."""
        response = await self.plain.send_state_signal(
            agent_id, _json(state) or {}, resource_id=resource_id, thread_id=thread_id,
            if_active=_json(if_active), if_idle=_json(if_idle), request_id=request_id, timeout=timeout,
        )
        return to_dataclass(v1.SendStateSignalResponse, response)

    async def send_notification_signal(
        self, agent_id: str, notification: Json, *, resource_id: str, thread_id: str,
        if_idle: Json | None = None, request_id: str = "", timeout: float | None = None,
    ) -> v1.SendNotificationSignalResponse:
        """An inbox record (``v1.Notification(source="github", kind="ci-status", summary=...)``)."""
        response = await self.plain.send_notification_signal(
            agent_id, _json(notification) or {}, resource_id=resource_id, thread_id=thread_id,
            if_idle=_json(if_idle), request_id=request_id, timeout=timeout,
        )
        return to_dataclass(v1.SendNotificationSignalResponse, response)

    async def list_notifications(
        self, resource_id: str, thread_id: str, *, statuses: Sequence[int] = (), timeout: float | None = None,
    ) -> list[v1.NotificationRecord]:
        records = await self.plain.list_notifications(resource_id, thread_id, statuses=statuses, timeout=timeout)
        return [to_dataclass(v1.NotificationRecord, r) for r in records]

    async def abort_run(
        self, run_id: str = "", *, resource_id: str = "", thread_id: str = "", request_id: str = "",
        timeout: float | None = None,
    ) -> bool:
        return await self.plain.abort_run(run_id, resource_id=resource_id, thread_id=thread_id,
                                          request_id=request_id, timeout=timeout)

    async def get_active_run(self, resource_id: str, thread_id: str, *, timeout: float | None = None) -> str:
        """The thread's running run id, or "" when it is idle."""
        return await self.plain.get_active_run(resource_id, thread_id, timeout=timeout)

    # --- lifecycle ----------------------------------------------------------------------------

    async def close(self) -> None:
        await self.plain.close()

    async def __aenter__(self) -> AgentClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


def _agent(agent: AgentLike) -> agent_pb2.Agent | Mapping[str, Any]:
    return to_proto(agent_pb2.Agent, agent) if isinstance(agent, betterproto2.Message) else agent


def _options(options: OptionsLike | None) -> agent_pb2.CallOptions | Mapping[str, Any] | None:
    return _proto_or_json(agent_pb2.CallOptions, options) if options is not None else None


def _messages(messages: Iterable[MessageLike] | None) -> list[message_pb2.Message | Mapping[str, Any]] | None:
    if messages is None:
        return None
    return [_proto_or_json(message_pb2.Message, m) for m in messages]


__all__ = ["AgentClient", "Chunk", "ChunkPayload", "ThreadSubscription", "to_dataclass", "to_proto"]
