"""``AgentService``: agent CRUD over the registry, and runs through the loop.

A thin edge: requests are converted (and checked) in ``convert``, errors become statuses in
``status``, and the loop does the work. The servicer also keeps track of in-flight runs, so the
server can drain them on shutdown and end the stragglers with UNAVAILABLE.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import itertools
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, Protocol, cast

import grpc
from google.protobuf import field_mask_pb2, json_format
from opentelemetry import context as otel_context

from ..agents import Agent, RunRequest
from ..core.chunks import Chunk
from ..core.errors import InvalidArgumentError
from ..loop import AgentLoop
from ..loop.run import RunHandle
from ..loop.payload_view import display_of
from ..memory import MemoryStore, StoredAgent
from ..core.messages import utcnow
from ..registry import Registry
from ..tracing.spans import extract_context
from ..wire.data import ChunkEncoder
from ..v1 import agent_pb2, agent_service_pb2, agent_service_pb2_grpc, chunk_pb2
from . import auth, convert
from .status import SHUTTING_DOWN, ShuttingDownError, abort_with, unary

log = logging.getLogger("treadle.runs")

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
MAX_CHUNKS_PER_RESPONSE = 256
MAX_BYTES_PER_RESPONSE = 1 << 20
"""Coalescing limits: a batch stays well under the message size limit and the client's buffers."""

MAX_LIST_PAGE_BYTES = 4 << 20

_SERVICE = agent_service_pb2.DESCRIPTOR.services_by_name["AgentService"].full_name

_OUTPUT_ONLY = frozenset({"source", "create_time", "update_time"})
_OUTPUT_ONLY_JSON = frozenset({"source", "createTime", "updateTime"})


class ModelValidator(Protocol):
    def validate(self, model_string: str) -> None: ...


class AgentServicer(agent_service_pb2_grpc.AgentServiceServicer):
    def __init__(self, registry: Registry, loop: AgentLoop, models: ModelValidator) -> None:
        self._registry = registry
        self._loop = loop
        self._models = models
        self._inflight: dict[int, Callable[[], None]] = {}
        self._ids = itertools.count()
        self._idle = asyncio.Event()
        self._idle.set()
        self._draining = False
        self.max_list_page_bytes = MAX_LIST_PAGE_BYTES
        self.remote_servers: frozenset[str] = frozenset()
        """Names of the config file's ``remoteServers`` (remote sub-agents name one)."""
        self.store: MemoryStore | None = None
        self.threads: Any = None
        """The thread runtime: a ``Stream`` on a thread is one of its runs (subscribers see it,
        signals reach it)."""
        """Where agents created over the API are kept across restarts (set by the app)."""
        self.versions: Any = None
        """``AgentVersionServicer``: records the history of agents created over the API."""

    def register(self, server: grpc.aio.Server) -> None:
        """Serve AgentService on ``server``, as the generated ``add_AgentServiceServicer_to_server``
        would, but for ``Stream``'s responses: those given as bytes are written as they are
        (serialized once, by ``Stream`` itself, straight from the run's chunks)."""
        handlers: dict[str, grpc.RpcMethodHandler] = {}
        for method in agent_service_pb2.DESCRIPTOR.services_by_name["AgentService"].methods:
            request = getattr(agent_service_pb2, method.input_type.name)
            response = getattr(agent_service_pb2, method.output_type.name)
            serialize = _response_bytes if method.name == "Stream" else response.SerializeToString
            kind = (grpc.unary_stream_rpc_method_handler if method.server_streaming
                    else grpc.unary_unary_rpc_method_handler)
            handlers[method.name] = kind(getattr(self, method.name), request_deserializer=request.FromString,
                                         response_serializer=serialize)
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(_SERVICE, handlers),))
        server.add_registered_method_handlers(_SERVICE, handlers)

    # --- agents -------------------------------------------------------------------------------

    async def _keep(self, agent: Agent, message: str = "") -> None:
        if self.store is not None:
            definition = json_format.MessageToDict(convert.agent_to_proto(agent))
            await self.store.save_agent(StoredAgent(agent.id, definition))
            if message and self.versions is not None:  # its history (AgentVersionService)
                shown = {k: v for k, v in definition.items() if k not in _OUTPUT_ONLY_JSON}
                await self.versions.record(agent, shown, message)

    async def load_stored_agents(self) -> list[Agent]:
        """The agents created over the API before the last restart, back in the registry."""
        if self.store is None:
            return []
        loaded = []
        taken = {a.id for a in self._registry.list_agents()}
        for stored in await self.store.list_agents():
            if stored.id in taken:  # the config file or code now defines it: theirs wins
                log.warning("stored agent %r is shadowed by a config or code agent", stored.id)
                continue
            agent = convert.agent_from_dict(
                {k: v for k, v in stored.definition.items() if k not in ("source", "createTime", "updateTime")},
                source="api",
            )
            for key, attr in (("createTime", "create_time"), ("updateTime", "update_time")):
                if key in stored.definition:
                    setattr(agent, attr, convert.parse_time(stored.definition[key]))
            loaded.append(self._registry.add_agent(agent))
        return loaded

    @unary
    async def CreateAgent(
        self, request: agent_service_pb2.CreateAgentRequest, context: grpc.aio.ServicerContext
    ) -> agent_service_pb2.CreateAgentResponse:
        if not request.HasField("agent"):
            raise InvalidArgumentError("agent is required")
        agent = convert.agent_from_proto(request.agent, source="api")
        self.check_models(agent)
        self.check_sub_agents(agent)
        self._registry.add_agent(agent)
        try:
            await self._keep(agent, "CreateAgent")
        except BaseException:
            self._registry.delete_agent(agent.id)
            raise
        return agent_service_pb2.CreateAgentResponse(agent=convert.agent_to_proto(agent))

    @unary
    async def GetAgent(
        self, request: agent_service_pb2.GetAgentRequest, context: grpc.aio.ServicerContext
    ) -> agent_service_pb2.GetAgentResponse:
        if not request.id:
            raise InvalidArgumentError("id is required")
        agent = self._registry.get_agent(request.id)
        return agent_service_pb2.GetAgentResponse(agent=convert.agent_to_proto(agent))

    @unary
    async def ListAgents(
        self, request: agent_service_pb2.ListAgentsRequest, context: grpc.aio.ServicerContext
    ) -> agent_service_pb2.ListAgentsResponse:
        if request.page_size < 0:
            raise InvalidArgumentError("page_size must be >= 0")
        size = min(request.page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
        after = _decode_token(request.page_token)
        # Listed by id, and the token is the last id sent: pages stay consistent when agents are
        # added or deleted between calls.
        agents = [x for x in self._registry.list_agents() if x.id > after]
        agents = [x for x in agents if auth.may("agents", x.id)]
        response = agent_service_pb2.ListAgentsResponse()
        used = 0
        for agent in agents[:size]:
            pb = convert.agent_to_proto(agent)
            used += pb.ByteSize()
            if response.agents and used > self.max_list_page_bytes:
                break  # bounded in bytes too: one huge agent cannot break the listing
            response.agents.append(pb)
        if len(agents) > len(response.agents):
            response.next_page_token = _encode_token(response.agents[-1].id)
        return response

    @unary
    async def UpdateAgent(
        self, request: agent_service_pb2.UpdateAgentRequest, context: grpc.aio.ServicerContext
    ) -> agent_service_pb2.UpdateAgentResponse:
        if not request.HasField("agent") or not request.agent.id:
            raise InvalidArgumentError("agent.id is required")
        current = self._registry.get_agent(request.agent.id)
        self._registry.check_changeable(current)  # before conversion: code agents hold Python objects
        merged = request.agent
        if request.HasField("update_mask"):
            merged = _apply_mask(request.update_mask, request.agent, convert.agent_to_proto(current))
        agent = convert.agent_from_proto(merged, source=current.source)
        self.check_models(agent)
        self.check_sub_agents(agent)
        agent.create_time, agent.update_time = current.create_time, utcnow()
        agent.validate()
        paths = ", ".join(request.update_mask.paths) if request.HasField("update_mask") else "every field"
        await self._keep(agent, f"UpdateAgent ({paths})")
        self._registry.replace_agent(agent)
        return agent_service_pb2.UpdateAgentResponse(agent=convert.agent_to_proto(agent))

    @unary
    async def DeleteAgent(
        self, request: agent_service_pb2.DeleteAgentRequest, context: grpc.aio.ServicerContext
    ) -> agent_service_pb2.DeleteAgentResponse:
        if not request.id:
            raise InvalidArgumentError("id is required")
        current = self._registry.get_agent(request.id)
        if current.source == "api" and self.store is not None:
            await self.store.delete_agent(request.id)
            if self.versions is not None:
                await self.versions.forget(request.id)
        self._registry.delete_agent(request.id)
        return agent_service_pb2.DeleteAgentResponse()

    def check_models(self, agent: Agent, path: str = "agent") -> None:
        """Reject model strings the router cannot serve, before the agent is stored."""
        models = [(f"{path}.model", agent.model)] if isinstance(agent.model, str) and agent.model else []
        models += [(f"{path}.model_variants[{i}].value", v.value) for i, v in enumerate(agent.variants.get("model", ()))]
        models += [(f"{path}.fallback_models[{i}].model", f.id) for i, f in enumerate(agent.fallback_models)]
        for field, model in models:
            try:
                self._models.validate(model)
            except InvalidArgumentError as e:
                raise InvalidArgumentError(f"{field}: {e}") from None

    def check_sub_agents(self, agent: Agent) -> None:
        """A remote sub-agent must name a server of this server's ``remoteServers``."""
        for i, ref in enumerate(agent.sub_agents):
            if ref.remote is not None and ref.remote.target not in self.remote_servers:
                known = ", ".join(sorted(self.remote_servers)) or "none configured"
                raise InvalidArgumentError(
                    f"agent.sub_agents[{i}].remote.target: {ref.remote.target!r} is not one of this server's "
                    f"remoteServers ({known})")

    # --- runs ---------------------------------------------------------------------------------

    @unary
    async def Generate(
        self, request: agent_service_pb2.GenerateRequest, context: grpc.aio.ServicerContext
    ) -> agent_service_pb2.GenerateResponse:
        agent, run = self._prepare(request)
        stop = asyncio.Event()
        # On a thread, the run is the thread's active run (signals sent meanwhile reach it).
        generate = self.threads.generate if self.threads is not None and run.options.memory else self._loop.generate
        with _caller_trace(context):
            task = asyncio.create_task(generate(agent, run))
        waiter = asyncio.create_task(stop.wait())
        with self._track(stop.set):
            try:
                await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
            finally:  # also on cancellation by the client: the run must not outlive the call
                waiter.cancel()
                if not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
        if task.cancelled():
            await context.abort(grpc.StatusCode.UNAVAILABLE, SHUTTING_DOWN)
        result = task.result()
        if result.error is not None:
            _log_failed(result.run_id, agent.id, result.error.message)
        return convert.generate_result_to_proto(result if auth.sees_raw_tool_payloads() else await result.displayed())

    async def Stream(
        self, request: agent_service_pb2.StreamRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[agent_service_pb2.StreamResponse | bytes]:
        """The run's chunks in ``StreamResponse``s, some already serialized (see ``register``)."""
        try:
            agent, run = self._prepare(request)
        except Exception as e:
            await abort_with(context, e)
        # On a thread, the run is the thread's active run (signals sent meanwhile reach it).
        opener = self.threads.open if self.threads is not None and run.options.memory else self._loop.open
        async for out in self._stream_direct(agent, run, context, opener):
            yield out

    def _prepare(self, request: convert.RunRequestProto) -> tuple[Agent, RunRequest]:
        try:
            if self._draining:
                raise ShuttingDownError()
            agent_id, run = convert.run_request_from_proto(request)
            return self._registry.snapshot_agent(agent_id), run
        except Exception as e:
            log.info("run of agent %r refused: %s", request.agent_id, e)
            raise

    def open_stream(self, request: agent_service_pb2.StreamRequest) -> AsyncGenerator[Chunk, None]:
        """The chunks of a run exactly as ``Stream`` produces them (on a thread, one of its runs):
        ``VoiceService.Converse`` runs each user turn through here. Refusals raise at once."""
        agent, run = self._prepare(request)
        source = self.threads.stream if self.threads is not None and run.options.memory else self._loop.stream
        return cast(AsyncGenerator[Chunk, None], source(agent, run))

    def track(self, stop: Callable[[], None]) -> contextlib.AbstractContextManager[None]:
        """Count a call in flight for the drain (``stop`` ends it when the grace is over)."""
        return self._track(stop)

    async def _stream_direct(
        self, agent: Agent, run: RunRequest, context: grpc.aio.ServicerContext,
        opener: Callable[[Agent, RunRequest], Awaitable[RunHandle]] | None = None,
    ) -> AsyncIterator[bytes]:
        """``Stream`` of a run (``opener``: ``AgentLoop.open``, or ``ThreadRuntime.open`` on a
        thread): the responses, serialized, are made from the run's own batches of chunks, with
        no task or queue between the run and the call. What piled up while the previous response
        was being written goes in one response (within the coalescing limits); the first chunk
        goes as soon as it exists."""
        raw = auth.sees_raw_tool_payloads()
        handle: RunHandle | None = None
        shut = False

        def stop() -> None:
            nonlocal shut
            shut = True
            if handle is not None:
                handle.interrupt()

        try:
            with self._track(stop):
                try:
                    with _caller_trace(context):
                        handle = await (opener or self._loop.open)(agent, run)
                except Exception as e:  # a bad request: the status says so
                    log.info("run of agent %r refused: %s", agent.id, e)
                    raise
                run_id, error = handle.run_id, ""
                add = ChunkEncoder().add
                while not shut:
                    try:
                        batch = await handle.batch()
                    except Exception as e:
                        log.info("run of agent %r refused: %s", agent.id, e)
                        raise
                    if batch is None or shut:
                        break
                    pieces: list[bytes] = []  # of one response, joined when it is written
                    size = count = 0
                    for chunk in batch:
                        t = chunk.type
                        if t == "error":
                            error = chunk.payload.message
                        elif t == "finish" and chunk.payload.reason == "error":
                            _log_failed(run_id, agent.id, error or "the run ended with an error")
                        shown = chunk if raw else display_of(chunk)
                        if shown is None:
                            continue
                        size += add(shown, pieces)
                        count += 1
                        if count >= MAX_CHUNKS_PER_RESPONSE or size >= MAX_BYTES_PER_RESPONSE:
                            yield b"".join(pieces)
                            pieces, size, count = [], 0, 0
                    if pieces:
                        yield b"".join(pieces)
                if shut:
                    raise ShuttingDownError()
        except Exception as e:
            await abort_with(context, e)
        finally:  # client cancelled, shutdown, or done: never leave the run behind
            if handle is not None:
                await handle.close()

    # --- draining -----------------------------------------------------------------------------

    @contextlib.contextmanager
    def _track(self, stop: Callable[[], None]) -> Iterator[None]:
        key = next(self._ids)
        self._inflight[key] = stop
        self._idle.clear()
        try:
            yield
        finally:
            del self._inflight[key]
            if not self._inflight:
                self._idle.set()

    def start_draining(self) -> None:
        """Refuse new runs; in-flight ones go on."""
        self._draining = True

    async def wait_idle(self) -> None:
        await self._idle.wait()

    def stop_inflight(self) -> None:
        """End every in-flight run now, with UNAVAILABLE."""
        for stop in list(self._inflight.values()):
            stop()

    @property
    def inflight(self) -> int:
        return len(self._inflight)

    @property
    def draining(self) -> bool:
        return self._draining


def _caller_trace(context: grpc.aio.ServicerContext) -> contextlib.AbstractContextManager[None]:
    """The run's task starts in the caller's trace, when it sent one (a delegating server)."""
    metadata = context.invocation_metadata() or ()
    if not any(k == "traceparent" for k, _ in metadata):  # most calls: nothing to join
        return contextlib.nullcontext()
    return _joined(extract_context({k: v for k, v in metadata if isinstance(v, str)}))


@contextlib.contextmanager
def _joined(parent: otel_context.Context | None) -> Iterator[None]:
    if parent is None:
        yield
        return
    token = otel_context.attach(parent)
    try:
        yield
    finally:
        otel_context.detach(token)


def _response_bytes(response: agent_service_pb2.StreamResponse | bytes) -> bytes:
    return response if response.__class__ is bytes else response.SerializeToString()  # type: ignore[union-attr]


def _log_failed(run_id: str, agent_id: str, reason: str) -> None:
    """The one line a failed run leaves in the server's log (the client got the details)."""
    log.warning("run %s of agent %r failed: %s", run_id or "?", agent_id, reason)


def _size_bound(chunk: Chunk, pb: chunk_pb2.Chunk) -> int:
    """At least the chunk's encoded size: a text delta's from its strings (4 bytes a character
    at most, and the tags and lengths), every other chunk's measured (which costs an encoding)."""
    if chunk.type == "text-delta" and chunk.metadata is None and chunk.payload.provider_metadata is None:
        return 4 * (len(chunk.run_id) + len(chunk.payload.id) + len(chunk.payload.text)) + 32
    return int(pb.ByteSize())


def _apply_mask(
    mask: field_mask_pb2.FieldMask, source: agent_pb2.Agent, current: agent_pb2.Agent
) -> agent_pb2.Agent:
    paths = list(mask.paths)
    output_only = sorted({p.split(".")[0] for p in paths} & _OUTPUT_ONLY)
    if output_only:
        raise InvalidArgumentError(f"update_mask names output-only fields {output_only}; the server sets them")
    if "id" in paths:
        raise InvalidArgumentError("update_mask: an agent's id cannot change")
    clean = field_mask_pb2.FieldMask(paths=paths)
    if not clean.IsValidForDescriptor(agent_pb2.Agent.DESCRIPTOR):
        known = ", ".join(f.name for f in agent_pb2.Agent.DESCRIPTOR.fields)
        raise InvalidArgumentError(f"update_mask has an unknown field in {list(paths)}; fields: {known}")
    clean.MergeMessage(source, current, replace_message_field=True, replace_repeated_field=True)
    return current


_TOKEN_PREFIX = "after:"


def _encode_token(last_id: str) -> str:
    return base64.urlsafe_b64encode((_TOKEN_PREFIX + last_id).encode()).decode("ascii")


def _decode_token(token: str) -> str:
    if not token:
        return ""
    try:
        text = base64.b64decode(token.encode("ascii"), altchars=b"-_", validate=True).decode()
    except (binascii.Error, UnicodeError, ValueError):
        text = ""
    if not text.startswith(_TOKEN_PREFIX):
        raise InvalidArgumentError("page_token is malformed; pass next_page_token unchanged")
    return text.removeprefix(_TOKEN_PREFIX)
