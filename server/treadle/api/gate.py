"""The gate in front of every handler: decode, authenticate, check scopes and limits, then serve.

Each handler is wrapped once, as it is registered (``GatedServer``). Every call but
``grpc.health.v1`` passes here, in this order:

1. the request is decoded by the gate, so wire data that cannot be decoded (bad UTF-8, nesting
   too deep, corrupt bytes) ends the call with INVALID_ARGUMENT and one log line;
2. with auth configured, the ``authorization: Bearer <token>`` metadata (and the client
   certificate, over mTLS) must name a credential, else UNAUTHENTICATED; the credential is then
   the call's caller (``api/auth.py``) for as long as the call lasts;
3. every unary request's enums and floats are checked (INVALID_ARGUMENT naming the field);
   then the method's own rule: agent CRUD needs admin, a run needs the agent and its memory
   resource in scope, requests naming a ``resource``/``resource_id`` need that resource
   (PERMISSION_DENIED naming the scope);
4. limits: concurrent runs in total and per credential, attached streams per credential
   (RESOURCE_EXHAUSTED naming the limit).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf.message import DecodeError, Message

from ..config.auth import AuthConfig, Credential, DistinguishedName, Limits, parse_dn
from ..core.errors import InvalidArgumentError, PermissionDeniedError, ResourceExhaustedError, UnauthenticatedError
from . import auth, validate
from .status import status_for

log = logging.getLogger(__name__)

_AGENTS = "/treadle.v1.AgentService/"
_THREADS = "/treadle.v1.ThreadService/"
_SIGNALS = {f"{_THREADS}{m}" for m in (
    "SendMessage", "QueueMessage", "SendSignal", "SendStateSignal", "SendNotificationSignal")}
_OPEN = ("/grpc.health.v1.Health/",)
_ADMIN = {f"{_AGENTS}{m}": m for m in ("CreateAgent", "UpdateAgent", "DeleteAgent")} | {
    f"/treadle.v1.ConsoleService/{m}": m for m in ("ListSpans", "ListReplicas")}
_RUNS = {f"{_AGENTS}Generate", f"{_AGENTS}Stream"}
_ATTACH = {"/treadle.v1.ProcessorService/Attach", "/treadle.v1.ToolService/Attach",
           "/treadle.v1.VoiceProviderService/Attach"}
_RESOURCE_FIELDS = ("resource", "resource_id")
_REFUSED = (UnauthenticatedError, PermissionDeniedError, ResourceExhaustedError, InvalidArgumentError)


class _Undecodable:
    def __init__(self, error: Exception) -> None:
        self.error = error


@dataclass
class Gate:
    """Holds what the gate enforces; the app configures it before the server starts."""

    auth: AuthConfig | None = None
    limits: Limits = field(default_factory=Limits)
    agent_resource: Callable[[str], str] = lambda agent_id: ""
    """The memory resource an agent's default options name (runs without their own)."""
    runs: Counter[str] = field(default_factory=Counter)
    streams: Counter[str] = field(default_factory=Counter)
    _run_waiters: list[asyncio.Future[None]] = field(default_factory=list)

    @property
    def runs_in_flight(self) -> int:
        return sum(self.runs.values())

    # --- the thread runtime's run slots (``signals.runtime.RunSlots``) ------------------------

    def caller(self) -> str | None:
        """The credential id of the call being served: runs it causes count against it."""
        return auth.owner()

    def take_run(self, caller: str | None) -> Callable[[], None]:
        """Count one run against the server and ``caller`` (a credential id; None: no
        credential), or ``ResourceExhaustedError`` naming the limit; returns the release."""
        limits, key = self.limits, caller or ""
        if self.runs_in_flight >= limits.max_concurrent_runs:
            raise ResourceExhaustedError(
                f"the server runs {limits.max_concurrent_runs} runs already "
                "(limits.maxConcurrentRuns); retry later"
            )
        if caller is not None and self.runs[key] >= limits.max_concurrent_runs_per_credential:
            raise ResourceExhaustedError(
                f"credential {caller!r} has {limits.max_concurrent_runs_per_credential} runs in flight "
                "(limits.maxConcurrentRunsPerCredential); retry later"
            )
        self.runs[key] += 1
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            self.runs[key] -= 1
            if self.runs[key] <= 0:
                del self.runs[key]
            waiters, self._run_waiters = self._run_waiters, []
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)

        return release

    def check_size(self, method: str, request: Message) -> None:
        """Bounded work per request, with or without auth (RESOURCE_EXHAUSTED naming the limit)."""
        limits, size = self.limits, request.ByteSize()
        if size > limits.max_request_bytes:
            raise ResourceExhaustedError(
                f"the request is {size} bytes; at most {limits.max_request_bytes} are accepted (limits.maxRequestBytes)"
            )
        if method in _SIGNALS and size > limits.max_signal_bytes:
            raise ResourceExhaustedError(
                f"the signal request is {size} bytes; at most {limits.max_signal_bytes} are accepted "
                "(limits.maxSignalBytes)"
            )
        if method in _RUNS and len(request.messages) > limits.max_messages_per_request:  # type: ignore[attr-defined]
            raise ResourceExhaustedError(
                f"the request has {len(request.messages)} messages; at most "  # type: ignore[attr-defined]
                f"{limits.max_messages_per_request} are accepted (limits.maxMessagesPerRequest)"
            )

    async def run_freed(self) -> None:
        """Until some run ends (a queued run that found its credential at the limit waits)."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._run_waiters.append(waiter)
        await waiter

    @contextmanager
    def stream_slot(self, cred: Credential | None) -> Iterator[None]:
        key = cred.id if cred is not None else ""
        limit = self.limits.max_attached_streams_per_credential
        if cred is not None and self.streams[key] >= limit:
            raise ResourceExhaustedError(
                f"credential {cred.id!r} has {limit} attached streams open "
                "(limits.maxAttachedStreamsPerCredential)"
            )
        with _count(self.streams, key):
            yield

    # --- per call -----------------------------------------------------------------------------

    def authenticate(self, context: grpc.aio.ServicerContext) -> Credential | None:
        if self.auth is None:
            return None
        token = _bearer(context.invocation_metadata() or ())
        cred = self.auth.find(token, _cert_subjects(context))
        if cred is None:
            if token is None:
                raise UnauthenticatedError("this server needs a credential: send 'authorization: Bearer <token>'")
            raise UnauthenticatedError("the bearer token is not valid here (or needs its client certificate)")
        return cred

    def check(self, method: str, request: Any, cred: Credential | None) -> None:
        """The method's own scope rule, for requests the gate can read whole."""
        if isinstance(request, Message):
            self.check_size(method, request)
        if cred is None:
            return
        if method in _ADMIN:
            auth.require_admin(_ADMIN[method])
        elif method == f"{_AGENTS}GetAgent":
            auth.require("agents", request.id)
        elif method in _RUNS:
            auth.require("agents", request.agent_id)
            _check_overrides(cred, request.options if request.HasField("options") else None)
            resource = request.options.memory.resource or self.agent_resource(request.agent_id)
            if resource:
                auth.require_resource(resource)
        elif isinstance(request, Message):
            if method.startswith(_THREADS) and "agent_id" in request.DESCRIPTOR.fields_by_name and request.agent_id:
                auth.require("agents", request.agent_id)  # the agent a wake or a queued message runs
            if "if_idle" in request.DESCRIPTOR.fields_by_name and request.if_idle.HasField("stream_options"):
                _check_overrides(cred, request.if_idle.stream_options)
            for name in _RESOURCE_FIELDS:  # thread reads and signals name the resource they touch
                if name in request.DESCRIPTOR.fields_by_name:
                    value = getattr(request, name)
                    if isinstance(value, str) and value:
                        auth.require_resource(value)


class GatedServer(grpc.aio.Server):
    """The server as services register on it: every handler is wrapped by the gate once, as it
    is registered (not per call, as an interceptor would be); the rest is the server's own."""

    def __init__(self, server: grpc.aio.Server, gate: Gate) -> None:
        self._server = server
        self.gate = gate

    def add_generic_rpc_handlers(self, generic_rpc_handlers: Sequence[grpc.GenericRpcHandler]) -> None:
        self._server.add_generic_rpc_handlers([_GatedHandlers(h, self.gate) for h in generic_rpc_handlers])

    def add_registered_method_handlers(self, service_name: str, method_handlers: dict[str, Any]) -> None:
        self._server.add_registered_method_handlers(service_name, {
            name: gated(handler, f"/{service_name}/{name}", self.gate) for name, handler in method_handlers.items()
        })

    def add_insecure_port(self, address: str) -> int:
        return self._server.add_insecure_port(address)

    def add_secure_port(self, address: str, server_credentials: grpc.ServerCredentials) -> int:
        return self._server.add_secure_port(address, server_credentials)

    async def start(self) -> None:
        await self._server.start()

    async def stop(self, grace: float | None) -> None:
        await self._server.stop(grace)

    async def wait_for_termination(self, timeout: float | None = None) -> bool:
        return await self._server.wait_for_termination(timeout)


class _GatedHandlers(grpc.GenericRpcHandler):
    """A generic handler whose handlers pass the gate, each wrapped the first time it is found."""

    def __init__(self, inner: grpc.GenericRpcHandler, gate: Gate) -> None:
        self._inner = inner
        self._gate = gate
        self._wrapped: dict[str, tuple[Any, Any]] = {}

    def service(self, details: grpc.HandlerCallDetails) -> Any:
        handler = self._inner.service(details)
        if handler is None:
            return None
        method: str = details.method  # type: ignore[attr-defined]
        found = self._wrapped.get(method)
        if found is None or found[0] is not handler:
            found = self._wrapped[method] = (handler, gated(handler, method, self._gate))
        return found[1]


def gated(handler: Any, method: str, gate: Gate) -> Any:
    """``handler`` of ``method`` behind the gate (``grpc.health.v1`` is open to everyone)."""
    if handler is None or method.startswith(_OPEN):
        return handler
    return _wrap(handler, method, gate)


def _wrap(handler: Any, method: str, gate: Gate) -> Any:
    decode = handler.request_deserializer

    def deserialize(data: bytes) -> Any:
        try:
            return decode(data) if decode is not None else data
        except (DecodeError, RecursionError, UnicodeDecodeError, ValueError) as e:
            return _Undecodable(e)

    async def refuse(context: grpc.aio.ServicerContext, exc: Exception) -> None:
        code, message = status_for(exc)
        await context.abort(code, message)

    async def bad_request(context: grpc.aio.ServicerContext, bad: _Undecodable) -> None:
        why = str(bad.error)
        if "MaxDepth" in why or isinstance(bad.error, RecursionError):
            why = "it is nested deeper than protobuf's limit of 100 levels"
        log.warning("%s: undecodable request from %s: %s", method, context.peer(), why)
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"the request cannot be decoded: {why}")

    def admit(context: grpc.aio.ServicerContext, request: Any) -> Credential | None:
        cred = gate.authenticate(context)
        auth.set_caller(cred)
        if isinstance(request, Message):
            validate.check_message(request)  # enum numbers in range, finite numbers, for every method
        gate.check(method, request, cred)
        return cred

    is_run = method in _RUNS

    def run_slot(cred: Credential | None) -> Callable[[], None] | None:
        return gate.take_run(cred.id if cred is not None else None) if is_run else None

    if not handler.request_streaming:
        inner = handler.unary_unary or handler.unary_stream
        if not handler.response_streaming:

            async def unary_unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
                if request.__class__ is _Undecodable:
                    await bad_request(context, request)
                try:
                    release = run_slot(admit(context, request))
                    try:
                        response = await inner(request, context)
                    finally:
                        if release is not None:
                            release()
                except _REFUSED as e:
                    await refuse(context, e)
                return response

            return handler._replace(request_deserializer=deserialize, unary_unary=unary_unary)

        streams = inspect.isasyncgenfunction(inner)

        async def unary_stream(request: Any, context: grpc.aio.ServicerContext) -> None:
            # A coroutine writing the responses: one generator fewer between the handler and the
            # call than re-yielding them.
            if request.__class__ is _Undecodable:
                await bad_request(context, request)
            try:
                release = run_slot(admit(context, request))
            except _REFUSED as e:
                await refuse(context, e)
            try:
                if not streams:
                    return await inner(request, context)  # it writes its responses itself
                write, responses = context.write, inner(request, context)
                try:
                    async for response in responses:
                        await write(response)
                except BaseException:
                    await responses.aclose()  # the call ended early: its generator's finally now
                    raise
            finally:
                if release is not None:
                    release()

        return handler._replace(request_deserializer=deserialize, unary_stream=unary_stream)

    inner = handler.stream_stream or handler.stream_unary

    async def enter(context: grpc.aio.ServicerContext) -> Any:
        try:
            cred = admit(context, None)
            slot = gate.stream_slot(cred) if method in _ATTACH else _nothing()
            slot.__enter__()
            return slot
        except _REFUSED as e:
            await refuse(context, e)

    async def checked(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        async for request in requests:
            if isinstance(request, _Undecodable):
                await bad_request(context, request)
            yield request

    if inspect.isasyncgenfunction(inner):

        async def streaming(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            slot = await enter(context)
            try:
                proxy = _CheckedContext(context, bad_request)
                async for response in inner(checked(requests, proxy), proxy):
                    yield response
            finally:
                slot.__exit__(None, None, None)

        wrapped: Any = streaming
    else:

        async def call(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext) -> Any:
            slot = await enter(context)
            try:
                proxy = _CheckedContext(context, bad_request)
                return await inner(checked(requests, proxy), proxy)
            finally:
                slot.__exit__(None, None, None)

        wrapped = call
    if handler.stream_stream is not None:
        return handler._replace(request_deserializer=deserialize, stream_stream=wrapped)
    return handler._replace(request_deserializer=deserialize, stream_unary=wrapped)


class _CheckedContext:
    """The call's context, whose ``read`` refuses undecodable messages like the iterator does."""

    def __init__(self, inner: grpc.aio.ServicerContext, bad: Callable[..., Awaitable[None]]) -> None:
        self._inner = inner
        self._bad = bad

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def read(self) -> Any:
        message = await self._inner.read()
        if isinstance(message, _Undecodable):
            await self._bad(self._inner, message)
        return message


_LANES = ("input_processors", "output_processors", "error_processors")


def _check_overrides(cred: Credential, options: Any) -> None:
    """A credential without ``processorOverrides`` runs every agent's own processors."""
    if cred.processor_overrides or cred.admin or options is None:
        return
    for lane in _LANES:
        if options.HasField(lane):
            raise PermissionDeniedError(
                f"credential {cred.id!r} may not override an agent's processors per call "
                f"(options.{lane}): its processorOverrides is false"
            )


def _bearer(metadata: Any) -> str | None:
    for key, value in metadata:
        if key == "authorization" and isinstance(value, str):
            scheme, _, token = value.partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
    return None


def _cert_subjects(context: grpc.aio.ServicerContext) -> tuple[DistinguishedName, ...]:
    """The client certificate's subject, parsed; a subject that does not parse matches nothing.
    Without a printed subject, the certificate's CN values, each as a value (never re-parsed)."""
    info = context.auth_context() or {}
    out: list[DistinguishedName] = []
    for raw in info.get("x509_subject", ()):
        try:
            out.append(parse_dn(raw.decode()))
        except (UnicodeDecodeError, ValueError):
            log.warning("a client certificate subject could not be parsed: %r", raw[:200])
    if not out:
        out += [(("CN", raw.decode(errors="replace")),) for raw in info.get("x509_common_name", ())]
    return tuple(out)


@contextmanager
def _count(counter: Counter[str], key: str) -> Iterator[None]:
    counter[key] += 1
    try:
        yield
    finally:
        counter[key] -= 1
        if counter[key] <= 0:
            del counter[key]


@contextmanager
def _nothing() -> Iterator[None]:
    yield
