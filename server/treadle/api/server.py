"""The grpc.aio server: AgentService, health, reflection, message limits and a graceful drain."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from ..v1 import agent_service_pb2
from .agent_service import AgentServicer
from .gate import Gate, GatedServer

log = logging.getLogger(__name__)

AGENT_SERVICE = agent_service_pb2.DESCRIPTOR.services_by_name["AgentService"].full_name
DEFAULT_MAX_MESSAGE_BYTES = 16 << 20

_BACKSTOP = 5.0
"""Seconds the server waits, after the grace period, for runs that were told to stop."""
_FINAL_GRACE = 1.0
"""Seconds other RPCs (health watches, agent CRUD) get once the runs are done."""
UNREQUESTED_CALL_SECONDS = 24 * 3600
"""How long an accepted call may wait for the server to take it up (gRPC's default: 30 s)."""


@dataclass
class ServerOptions:
    grace: float = 30.0
    """Seconds in-flight runs get to finish on shutdown; after that they end with UNAVAILABLE."""
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    """Larger requests are refused with RESOURCE_EXHAUSTED."""
    reflection: bool = True
    """Serve gRPC reflection (with auth on, to callers holding a valid token)."""


@dataclass(frozen=True)
class TlsFiles:
    """PEM contents; with ``client_ca`` every client must present a certificate it signed."""

    cert: bytes
    key: bytes
    client_ca: bytes | None = None


class ListenError(OSError):
    """The listen address cannot be bound; the message says why and what to do."""

    def __init__(self, listen: str) -> None:
        host, _, port = listen.rpartition(":")
        self.listen = listen
        self.port = int(port) if port.isdigit() else 0
        reason = _bind_error(host.strip("[]"), self.port)
        if reason == errno.EADDRINUSE:
            message = (
                f"port {self.port} is already in use ({listen}): is another server running there? "
                "Stop it, or choose another port with --listen HOST:PORT or TREADLE_LISTEN"
            )
        else:
            why = f": {os.strerror(reason)}" if reason else ""
            message = f"cannot listen on {listen}{why}"
        super().__init__(message)


def check_listen(listen: str) -> None:
    """``ListenError`` when another process listens on ``listen``'s port already: checked before
    the slow part of a start (loading a local model) and before gRPC binds, whose own failure
    prints a raw core error line first. ``SO_REUSEADDR`` as gRPC sets it, so connections of a
    server that just stopped (TIME_WAIT) do not count."""
    host, _, port = listen.rpartition(":")
    if port.isdigit() and int(port) and _bind_error(host.strip("[]"), int(port), reuse=True) == errno.EADDRINUSE:
        raise ListenError(listen)


def _bind_error(host: str, port: int, *, reuse: bool = False) -> int:
    """The errno a plain bind of ``host:port`` fails with (0 when it succeeds): gRPC's own error
    does not say why."""
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror:
        return errno.EADDRNOTAVAIL
    for family, kind, proto, _, address in infos:
        with socket.socket(family, kind, proto) as probe:
            try:
                if reuse:
                    probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                probe.bind(address)
            except OSError as e:
                return e.errno or 0
    return 0


class GrpcServer:
    """One server per app. Add further services with ``add_service`` before ``start``.

    The ``grpc.aio`` server is made in ``start``, inside the running event loop: made earlier
    (say, by a script's ``app = TreadleApp()`` before ``asyncio.run(app.serve())``) it would be
    bound to another loop and fail to start.
    """

    def __init__(
        self, agents: AgentServicer, options: ServerOptions | None = None, gate: Gate | None = None
    ) -> None:
        self.options = options or ServerOptions()
        self.gate = gate or Gate()
        self._agents = agents
        self.health = health.aio.HealthServicer()
        self._services = [AGENT_SERVICE, health.SERVICE_NAME]
        self._registrations: list[Callable[[grpc.aio.Server], None]] = [
            agents.register,
            lambda server: health_pb2_grpc.add_HealthServicer_to_server(self.health, server),
        ]
        self._server: grpc.aio.Server | None = None
        self._started = False
        self._stopping: asyncio.Task[None] | None = None
        self.drained: list[Any] = []
        """Trackers of other calls that finish before the server stops (``start_draining``,
        ``wait_idle``): the mutating thread calls."""

    def add_service(self, name: str, register: Callable[[grpc.aio.Server], None]) -> None:
        """Register another servicer (``register(server)``) under its full service name."""
        if self._server is not None:
            raise RuntimeError("add services before start()")
        self._registrations.append(register)
        self._services.append(name)

    async def start(self, listen: str, tls: TlsFiles | None = None) -> int:
        """Bind ``listen`` (``HOST:PORT``; port 0 picks one) and serve; returns the bound port."""
        limit = self.options.max_message_bytes
        self._server = server = grpc.aio.server(
            options=[
                ("grpc.max_receive_message_length", limit),
                ("grpc.max_send_message_length", limit),
                # gRPC shares a port with any other server that also set SO_REUSEPORT (as every
                # gRPC server does by default), and the kernel then spreads connections across
                # them: a second server on a taken port must fail instead.
                ("grpc.so_reuseport", 0),
                # gRPC cancels a call the server has not picked up within 30 s; under load (a
                # thousand runs at once) calls wait their turn instead: the client's deadline,
                # not the server's queue, decides how long a call may wait.
                ("grpc.server_max_unrequested_time_in_server", UNREQUESTED_CALL_SECONDS),
            ]
        )
        gated = GatedServer(server, self.gate)  # every handler behind the gate, wrapped once
        for register in self._registrations:
            register(gated)
        if self.options.reflection:
            reflection.enable_server_reflection([*self._services, reflection.SERVICE_NAME], gated)
        check_listen(listen)
        try:
            if tls is None:
                port = server.add_insecure_port(listen)
            else:
                credentials = grpc.ssl_server_credentials(
                    [(tls.key, tls.cert)], root_certificates=tls.client_ca,
                    require_client_auth=tls.client_ca is not None,
                )
                port = server.add_secure_port(listen, credentials)
        except RuntimeError:
            port = 0
        if port == 0:
            raise ListenError(listen)
        await server.start()
        self._started = True
        for name in ("", *self._services):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        return port

    async def stop(self, grace: float | None = None) -> None:
        """Drain: refuse new calls, let runs finish within ``grace``, then end them.

        Safe to call more than once; later calls wait for the first.
        """
        if self._stopping is None:
            self._stopping = asyncio.create_task(self._drain(self.options.grace if grace is None else grace))
        await asyncio.shield(self._stopping)

    def stop_now(self) -> None:
        """End in-flight runs at once (a second Ctrl-C); a running ``stop`` then finishes soon."""
        self._agents.stop_inflight()

    async def wait_for_termination(self) -> None:
        if self._server is not None:
            await self._server.wait_for_termination()

    async def _drain(self, grace: float) -> None:
        if self._server is None:
            return
        if not self._started:
            await self._server.stop(None)
            return
        # The listener stays open while runs drain: health answers NOT_SERVING (load balancers
        # move traffic elsewhere) and new runs get UNAVAILABLE, which clients may retry
        # elsewhere; closing the listener first would turn both into CANCELLED.
        await self.health.enter_graceful_shutdown()
        self._agents.start_draining()
        for calls in self.drained:  # refuse new ones now (UNAVAILABLE, nothing applied)
            calls.start_draining()
        if self._agents.inflight:
            log.info("draining %d in-flight run(s), up to %.1fs", self._agents.inflight, grace)
            try:
                await asyncio.wait_for(self._agents.wait_idle(), grace)
            except TimeoutError:
                log.warning("grace period over: ending %d run(s) with UNAVAILABLE", self._agents.inflight)
                self._agents.stop_inflight()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._agents.wait_idle(), _BACKSTOP)
        for calls in self.drained:  # calls that were applied answer with what they did
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(calls.wait_idle(), max(grace, _BACKSTOP))
        # Runs are done; a short grace lets their last statuses go out, and long-lived health
        # watches must not hold the process up.
        await self._server.stop(_FINAL_GRACE)
