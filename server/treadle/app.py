"""``TreadleApp``: the composition root. Everything a server needs hangs off one instance.

::

    app = TreadleApp()
    app.add_processor(MyGuardrail())
    app.add_agent(Agent(id="helper", model="openai/gpt-4o-mini", input_processors=["guardrail"]))
    await app.serve()  # until SIGTERM / Ctrl-C
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import signal
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider

from .agents import Agent, ProcessorRef, ToolHooksRef, known_models, known_tools
from .api import AgentServicer, GrpcServer, ServerOptions
from .api.remote_agent import RemoteAgents
from .api.remote_tool import remote_tool
from .api.tool_hub import ToolHub
from .api.tool_service import SERVICE_NAME as TOOL_SERVICE, ToolServicer
from .api.processor_hub import Ejection, ProcessorHub
from .api.processor_service import SERVICE_NAME as PROCESSOR_SERVICE, ProcessorServicer
from .api.remote_processor import RemoteProcessor
from .api.console_service import SERVICE_NAME as CONSOLE_SERVICE, ConsoleServicer
from .console import ConsoleGateway
from .tracing.light import LightTracerProvider, usable as light_tracing_usable
from .tracing.recent import RecentSpans
from .api.convert import agent_from_dict
from .wire.data import chunk_from_proto
from .wire.server_hooks import chunk_bytes
from .api.gate import Gate
from .api.server import TlsFiles, check_listen
from .api.signal_convert import options_from_json
from .api.thread_signals import SERVICE_NAME as THREAD_SERVICE, ThreadServicer
from .api.version_service import SERVICE_NAME as VERSION_SERVICE, AgentVersionServicer
from .api.score_service import SERVICE_NAME as SCORE_SERVICE, ScoreServicer
from .api.scorer_service import SERVICE_NAME as SCORER_SERVICE, ScorerHub, ScorerServicer
from .scoring import Scoring
from .scoring.service import check_scorer
from .scoring.store import ScoreStore
from .api.voice_hub import SERVICE_NAME as VOICE_PROVIDER_SERVICE, VoiceHub, VoiceProviderServicer
from .api.voice_service import SERVICE_NAME as VOICE_SERVICE, VoiceServicer
from .config import AgentFileError, Settings, load_agent_file
from .config.security import Security, load_security
from .config import logs
from . import gc_tuning
from .config.auth import Limits
from .config.settings import DEFAULT_LISTEN
from .core.errors import InvalidArgumentError, NotFoundError
from .loop import AgentLoop
from .memory import SqlStore, database_url, open_store
from .providers.local import DEFAULT_LOCAL_MODEL, unavailable as local_unavailable
from .memory.notify import LocalChannel, NotifyChannel, PostgresChannel
from .signals.hub import CHANNEL_LOST
from .memory.signal_sql import SqlSignalStore
from .memory.version_sql import SqlVersionStore
from .providers.router import ModelRouter
from .registry import Registry
from .signals import InMemorySignalStore, NotificationCenter, ThreadRuntime
from .signals.relay import Relay
from .v1 import chunk_pb2
from .tools import Tool
from .versions import VersionResolver
from .voice import VoiceProviders
from .tracing import build_meter_provider, build_tracer_provider

log = logging.getLogger("treadle")

LOG_FORMAT = logs.TEXT_FORMAT

EXAMPLE_AGENT: dict[str, Any] = {
    "id": "assistant",
    "name": "Assistant",
    "description": "The built-in example agent, served when no other agent is defined.",
    "model": "openai/gpt-4o-mini",
    "instructions": "You are a helpful, concise assistant.",
}
"""The built-in agent; its model follows the credentials found (see ``example_model``)."""

ANTHROPIC_EXAMPLE_MODEL = "anthropic/claude-haiku-4-5"

_ATTACHED_GRACE = 1.0
"""Seconds attached streams get, after the last run, to answer calls already sent."""

# Per provider: the variables that make it usable, and how to tell the user to set one.
_CREDENTIALS: dict[str, tuple[tuple[str, ...], str]] = {
    "openai": (
        ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
        "export OPENAI_API_KEY=sk-..., or point OPENAI_BASE_URL at any OpenAI-compatible server "
        "(e.g. a local Ollama: export OPENAI_BASE_URL=http://localhost:11434/v1)",
    ),
    "anthropic": (
        ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"),
        "export ANTHROPIC_API_KEY=sk-ant-... (or ANTHROPIC_BASE_URL for a compatible server)",
    ),
}


def _encode_chunk(chunk: Any) -> bytes:
    return chunk_bytes(chunk)


def _decode_chunk(data: bytes) -> Any:
    return chunk_from_proto(chunk_pb2.Chunk.FromString(data))


def is_loopback(listen: str) -> bool:
    """True for ``127.0.0.0/8``, ``[::1]`` and ``localhost`` listen addresses."""
    host = listen.rpartition(":")[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class TreadleApp:
    def __init__(
        self,
        settings: Settings | None = None,
        *,
        tracer_provider: TracerProvider | None = None,
        env: Mapping[str, str] | None = None,
        meter_provider: MeterProvider | None = None,
    ) -> None:
        """``tracer_provider`` replaces the one built from ``OTEL_*`` variables (tests inject
        one with an in-memory exporter); ``env`` replaces ``os.environ`` for those look-ups;
        ``meter_provider`` receives the remote-processor and remote-tool metrics; by default one
        exporting over OTLP is built from the same variables (none when no endpoint is set)."""
        self._env = os.environ if env is None else env
        # A server built in code reads the same TREADLE_* variables as `treadle serve`.
        self.settings = settings if settings is not None else Settings.from_env(self._env)
        self._owns_tracer_provider = tracer_provider is None
        self.tracer_provider: Any = tracer_provider or build_tracer_provider(self._env)
        # The console's traces: the spans of recent runs, kept in memory beside any exporter.
        self.recent_spans = RecentSpans()
        if self.tracer_provider is None:  # nothing exported: the spans are the console's alone
            resource = Resource.create({"service.name": "treadle"})
            self.tracer_provider = (LightTracerProvider(self.recent_spans, resource) if light_tracing_usable()
                                    else TracerProvider(resource=resource))
        if isinstance(self.tracer_provider, TracerProvider):
            self.tracer_provider.add_span_processor(self.recent_spans)
        self._owns_meter_provider = meter_provider is None
        meter_provider = meter_provider or build_meter_provider(self._env)
        self.meter_provider = meter_provider
        tracer = (
            self.tracer_provider.get_tracer("treadle")
            if self.tracer_provider is not None
            else trace.NoOpTracer()
        )
        self.registry = Registry()
        self.models = ModelRouter()
        self.loop = AgentLoop(self.registry, self.models, tracer)
        self.agent_service = AgentServicer(self.registry, self.loop, self.models)
        self.gate = Gate(agent_resource=self._agent_resource)
        self.server = GrpcServer(
            self.agent_service,
            ServerOptions(grace=self.settings.grace, max_message_bytes=self.settings.max_message_bytes),
            gate=self.gate,
        )
        # Remote tools: names no in-process tool has resolve to the attached tool streams.
        self.tool_hub = ToolHub(
            timeout=self.settings.tool_timeout,
            meter=meter_provider.get_meter("treadle") if meter_provider is not None else None,
        )
        self.registry.remote_tools = lambda name: remote_tool(self.tool_hub, name)
        self.registry.remote_tool_attached = lambda name: self.tool_hub.definition(name) is not None
        self.server.add_service(TOOL_SERVICE, ToolServicer(self.tool_hub).register)
        # Remote processors: ids no in-process processor has resolve to the attached streams.
        self.processors = ProcessorHub(
            meter=meter_provider.get_meter("treadle") if meter_provider is not None else None,
            default_timeout=self.settings.processor_timeout,
            max_timeout=self.settings.processor_max_timeout,
            attach_wait=self.settings.processor_attach_wait,
            ejection=Ejection(self.settings.processor_ejection_threshold, self.settings.processor_ejection_time),
        )
        self.registry.remote_processors = lambda ref: RemoteProcessor(ref, self.processors)
        self.processors.max_invocation_bytes = self.settings.max_message_bytes - 4096
        self.server.add_service(PROCESSOR_SERVICE, ProcessorServicer(self.processors).register)
        self.server.add_service(CONSOLE_SERVICE, ConsoleServicer(self.recent_spans, self.processors, self.tool_hub).register)
        self.console: ConsoleGateway | None = None
        self.console_port: int | None = None
        # Memory: threads, messages, runs and API agents, in the store opened by start().
        # Threads also take signals: into running and idle threads, subscriptions, the
        # notification inbox.
        self.threads = ThreadRuntime(self.loop, self.registry.snapshot_agent, InMemorySignalStore(),
                                     options_from_json=options_from_json,
                                     lease_ttl=self.settings.thread_lease_ttl)
        self.threads.slots = self.gate  # wakes and queued runs count against the run limits
        # Sub-agents of this server run as the thread runtime runs a call: recorded, subscribable.
        self.loop.sub_agents.start = self.threads.stream
        self.relay: Relay | None = None
        """The other replicas on the store (PostgreSQL LISTEN/NOTIFY), opened with the store."""
        self.notifications = NotificationCenter(self.threads, tools=self.registry.resolve_tool)
        self.thread_service = ThreadServicer(self.threads, self.notifications)
        self.agent_service.threads = self.threads
        self.server.add_service(THREAD_SERVICE, self.thread_service.register)
        # Versions of what operators may override in an agent (its editor), resolved per run.
        self.version_service = AgentVersionServicer(self.registry)
        self.agent_service.versions = self.version_service
        self.server.add_service(VERSION_SERVICE, self.version_service.register)
        self.server.drained.append(self.thread_service.inflight)
        self.server.drained.append(_Leaving(self.threads))
        # Scorers: finished runs of agents with scorers are queued and scored off the request path.
        self.scoring = Scoring(self.models, tracer)
        self.scoring.claim_seconds = self.settings.scorer_claim
        self.loop.on_finish = self.scoring.on_loop_finish
        self.server.add_service(SCORE_SERVICE, ScoreServicer(self.scoring, self.registry).register)
        self.scorers = ScorerHub()  # remote scorers attached over ScorerService
        self.scoring.remote = self.scorers
        self.server.add_service(SCORER_SERVICE, ScorerServicer(self.scorers).register)
        # Voice: the agents' speech in and out, each turn of a conversation a run like Stream's.
        self.voices = VoiceProviders(self.models.credentials)
        self.voice_hub = VoiceHub()
        self.voices.remote = self.voice_hub.open
        self.server.add_service(VOICE_PROVIDER_SERVICE, VoiceProviderServicer(self.voice_hub).register)
        self.voice_service = VoiceServicer(self.registry, self.voices, self.agent_service, self.gate)
        self.server.add_service(VOICE_SERVICE, self.voice_service.register)
        self.store: SqlStore | None = None
        self.port: int | None = None

    # --- what users register ------------------------------------------------------------------

    def add_agent(self, agent: Agent) -> Agent:
        """Register an agent defined in code; the API cannot change or delete it."""
        agent.source = "code"
        self.agent_service.check_models(agent)
        for i, ref in enumerate(agent.scorers):  # a scorer object given in code runs in this process
            if ref.scorer is None:
                check_scorer(ref, f"agent {agent.id!r}: scorers[{i}]")
            else:
                self.scoring.code_scorers[ref.scorer_id] = ref.scorer
        return self.registry.add_agent(agent)

    def add_processor(self, processor: Any) -> None:
        self.registry.add_processor(processor)

    def add_scorer(self, scorer: Any) -> None:
        """A Python scorer that agents name in ``scorers`` by its ``id``: an object with
        ``async score(run: ScoringRun) -> ScoreResult`` (or a plain ``score``)."""
        self.scoring.code_scorers[scorer.id] = scorer

    def add_tool(self, tool: Tool) -> None:
        self.registry.add_tool(tool)

    def add_tool_hook(self, name: str, hook: Callable[..., Any]) -> None:
        self.registry.add_tool_hook(name, hook)

    def add_notification_decider(self, name: str, decide: Callable[..., Any]) -> None:
        """A ``decide`` function that agents' delivery policies name (``decide: NAME``)."""
        self.notifications.deciders[name] = decide

    def load_agents(self, path: Path) -> list[Agent]:
        """Load an agent file (all or nothing); errors name the file and the agent index."""
        loaded: list[Agent] = []
        for i, data in enumerate(load_agent_file(path)):
            where = f"{path}: agents[{i}]" + (f" ({data['id']!r})" if isinstance(data.get("id"), str) else "")
            try:
                agent = agent_from_dict(data, source="config")
                self.agent_service.check_models(agent)
                self.agent_service.check_sub_agents(agent)
            except InvalidArgumentError as e:
                raise AgentFileError(f"{where}: {e}") from None
            if agent.id in {a.id for a in self.registry.list_agents()}:
                raise AgentFileError(f"{where}: agent id {agent.id!r} is already registered")
            loaded.append(agent)
        for agent in loaded:
            self.registry.add_agent(agent)
        return loaded

    # --- lifecycle ----------------------------------------------------------------------------

    async def start(self, listen: str | None = None) -> int:
        """Open the store (migrating it), load agents, bind and serve; returns the bound port
        (useful with port 0)."""
        listen = listen or self.settings.listen
        check_listen(listen)  # before the slow part: a taken port is said at once
        tls = self.configure_security(load_security(self.settings.config_file, self.settings.auth_file), listen)
        await self.open_store()
        if self.settings.config_file is not None:
            self.load_agents(self.settings.config_file)
        elif self.settings.example_agent and not self.registry.list_agents():
            # Only a server with no agents of its own gets the built-in one.
            self.registry.add_agent(agent_from_dict(EXAMPLE_AGENT | {"model": self.example_model()}, source="config"))
        await self.agent_service.load_stored_agents()
        self.warn_missing_credentials()
        self.warn_unregistered()
        self.warn_local_tools()
        local = sorted({m for a in self.registry.list_agents() for m in known_models(a) if m.startswith("local/")})
        if local:  # the load is silent (llama.cpp mutes the process) and takes seconds
            log.info("loading %s: the server listens once %s loaded (seconds; longer on a busy machine)",
                     ", ".join(local), "it is" if len(local) == 1 else "they are")
        await self.models.preload(m for a in self.registry.list_agents() for m in known_models(a))
        self.port = await self.server.start(listen, tls)
        await self.start_console(listen, tls is not None)
        await self.threads.recover()
        await self.notifications.recover()
        self.notifications.start()
        self.scoring.start()
        return self.port

    def console_address(self, listen: str) -> str | None:
        """Where the console listens (None: off): as configured, else beside a loopback gRPC port."""
        configured = self.settings.console
        if configured == "off":
            return None
        if configured is not None:
            return configured
        if not is_loopback(listen):
            return None
        host, _, port = listen.rpartition(":")
        grpc_port = self.port if self.port is not None else int(port)
        return f"{host}:{grpc_port + 1 if grpc_port and int(port) else 0}"

    async def start_console(self, listen: str, tls: bool) -> None:
        """Serve the web console (``treadle.console``) unless it is off; a default address that is
        taken only warns, a configured one must bind."""
        address = self.console_address(listen)
        if address is None:
            return
        if tls:
            log.warning("the web console is off: it does not speak to a TLS gRPC port yet")
            return
        if not is_loopback(address) and self.gate.auth is None and not self.settings.insecure:
            raise OSError(f"refusing to serve the console on {address} without auth: configure an auth "
                          "section or pass --insecure")
        host = listen.rpartition(":")[0].strip("[]")
        if host in ("", "0.0.0.0", "::"):
            host = "127.0.0.1"
        target = f"[{host}]:{self.port}" if ":" in host else f"{host}:{self.port}"
        gateway = ConsoleGateway(target, max_message_bytes=self.settings.max_message_bytes,
                                 hosts=(address.rpartition(":")[0].strip("[]"),))
        try:
            self.console_port = await gateway.start(address)
        except OSError as e:
            await gateway.stop()
            if self.settings.console is not None:
                raise OSError(f"cannot serve the console on {address}: {e.strerror or e}") from None
            log.warning("the web console is off: %s is taken (choose another with --console HOST:PORT)", address)
            return
        self.console = gateway
        self.console_host = address.rpartition(":")[0]

    def configure_security(self, security: Security, listen: str) -> TlsFiles | None:
        """Apply credentials, limits and provider trust; refuse an open, unauthenticated bind."""
        limits = _within_storage_budget(security.limits, self.settings.max_message_bytes)
        self.gate.auth, self.gate.limits = security.auth, limits
        self.thread_service.limits = limits
        self.threads.hub.max_backlog_bytes = security.limits.max_subscriber_backlog_bytes
        self.models.trust = security.trust
        if security.remote_servers:
            self.loop.remote_agents = RemoteAgents(security.remote_servers, self._env)
            self.agent_service.remote_servers = frozenset(security.remote_servers)
        self.agent_service.max_list_page_bytes = security.limits.max_list_page_bytes
        self.server.options.reflection = security.auth is None or security.auth.reflection
        if security.auth is None:
            if not is_loopback(listen) and not self.settings.insecure:
                raise OSError(
                    f"refusing to listen on {listen} without auth: configure an auth section "
                    "(see docs/security.md) or pass --insecure to serve it unauthenticated"
                )
            log.warning("no auth configured: the server is UNAUTHENTICATED; anyone who can reach %s "
                        "may call every method", listen)
        else:
            log.info("auth on: %d credential(s)", len(security.auth.credentials))
        s = self.settings
        if s.tls_cert is None or s.tls_key is None:
            return None
        try:
            return TlsFiles(s.tls_cert.read_bytes(), s.tls_key.read_bytes(),
                            s.tls_client_ca.read_bytes() if s.tls_client_ca is not None else None)
        except OSError as e:
            raise OSError(f"cannot read TLS file {e.filename}: {e.strerror}") from None

    def _agent_resource(self, agent_id: str) -> str:
        try:
            options = self.registry.get_agent(agent_id).default_options
        except NotFoundError:
            return ""
        return options.memory.resource if options is not None and options.memory is not None else ""

    async def open_store(self) -> SqlStore:
        """The store of ``settings.database`` (or SQLite under ``settings.data_dir``), migrated
        to the newest schema; opened once."""
        if self.store is None:
            url = database_url(self.settings.data_dir, self.settings.database)
            store = await open_store(url)
            self.store = store
            self.loop.memory = self.agent_service.store = self.thread_service.store = store
            self.scoring.store = ScoreStore(store.engine)
            self.threads.store = SqlSignalStore(store.engine)
            versions = SqlVersionStore(store.engine)
            self.version_service.store = versions
            self.loop.versions = VersionResolver(versions)
            self.version_service.changed = self.loop.versions.forget
            channel: NotifyChannel = PostgresChannel(url) if store.engine.dialect == "postgresql" else LocalChannel()
            if isinstance(channel, PostgresChannel):  # a lost channel ends subscriptions with an error
                channel.on_gap = lambda: self.threads.hub.gap(CHANNEL_LOST)
            self.relay = Relay(channel, self.threads.replica, (_encode_chunk, _decode_chunk), self.threads.received)
            await self.relay.start()
            self.threads.attach(self.relay)
        return self.store

    async def stop(self, grace: float | None = None) -> None:
        """Drain (see ``GrpcServer.stop``), then release provider clients and flush traces."""
        # Attached processors hear of the shutdown at once, with the grace the runs get.
        self.processors.announce_drain(self.settings.grace if grace is None else grace)
        self.scorers.drain(int((self.settings.grace if grace is None else grace) * 1000))
        attached = asyncio.create_task(self._drain_attached())
        await self.notifications.stop()
        await self.server.stop(grace)
        await self.scoring.stop()
        self.scorers.close_all()
        if self.console is not None:
            await self.console.stop()
            self.console = None
        await self.threads.stop()
        if self.relay is not None:
            await self.relay.close()
            self.relay = None
        await attached
        await self.models.aclose()
        if isinstance(self.loop.remote_agents, RemoteAgents):
            await self.loop.remote_agents.aclose()
        if self.store is not None:
            await self.store.close()
            self.store = None
        if self.meter_provider is not None and self._owns_meter_provider:
            self.meter_provider.shutdown()
        if self.tracer_provider is not None:
            if self._owns_tracer_provider:
                self.tracer_provider.shutdown()
            else:
                self.tracer_provider.force_flush()

    async def _drain_attached(self) -> None:
        """Attached streams outlive the runs (a draining run may still call a remote tool), then
        get a ``Drain`` and end, so their processes reconnect elsewhere at once."""
        await self.agent_service.wait_idle()
        await asyncio.gather(self.tool_hub.drain(_ATTACHED_GRACE), self.processors.drain(_ATTACHED_GRACE),
                             self.voice_hub.drain(_ATTACHED_GRACE))

    async def serve(self, listen: str | None = None) -> None:
        """Start (unless started) and serve until SIGTERM or SIGINT, then drain and stop.

        What a script's ``asyncio.run(app.serve())`` and ``treadle serve`` both do: print the
        start lines (address, agents, how to talk to them), or when the server cannot start
        (port taken, bad config file), print why and exit with status 2. A second signal ends
        in-flight runs at once instead of waiting for the grace period.
        """
        started = False
        if self.port is None:
            logs.setup()  # a script's server logs like `treadle serve` (TREADLE_LOG_LEVEL, _FORMAT)
            try:
                await self.start(listen)
            except (AgentFileError, OSError) as e:
                await self.stop(0)
                print(f"treadle: {e}", file=sys.stderr, flush=True)
                raise SystemExit(2) from None
            started = True
            gc_tuning.tune()  # a serving process: startup's objects frozen, fewer GC passes
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        received: list[int] = []

        def on_signal(sig: int) -> None:
            received.append(sig)
            if len(received) == 1:
                stop.set()
            else:
                self.server.stop_now()

        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, on_signal, sig)
        if started:  # only now: a Ctrl-C right after the line that says it listens is handled too
            print("\n".join(self.start_lines(listen or self.settings.listen)), flush=True)
        try:
            await stop.wait()
            log.info("%s received: shutting down", signal.Signals(received[0]).name)
            await self.stop()
        finally:
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(sig)

    # --- helpers ------------------------------------------------------------------------------

    def example_model(self) -> str:
        """The built-in agent's model: OpenAI when its key or base URL is set, else Anthropic
        when its credentials are, else the embedded local model (works offline, no key)."""
        for provider, model in (("openai", EXAMPLE_AGENT["model"]), ("anthropic", ANTHROPIC_EXAMPLE_MODEL)):
            if any(self._env.get(v) for v in _CREDENTIALS[provider][0]):
                return str(model)
        return DEFAULT_LOCAL_MODEL

    def start_lines(self, listen: str) -> list[str]:
        """What the server prints once it listens: address, agents, and how to talk to them."""
        host = listen.rpartition(":")[0]
        target = f"{host}:{self.port}"
        agents = self.registry.list_agents()
        lines = [f"Treadle listening on {target}", f"Agents ({len(agents)}):"]
        lines += [f"  {a.id}: {' | '.join(known_models(a)) or 'per request'} ({a.source})" for a in agents]
        example = next((a for a in agents if a.id == "assistant" and a.source == "config"), None)
        if example is not None and example.model == DEFAULT_LOCAL_MODEL and self.settings.config_file is None:
            lines.append(
                f"No provider key or base URL is set, so 'assistant' runs on the embedded model "
                f"{DEFAULT_LOCAL_MODEL} (small and offline). To use OpenAI instead: "
                f"export OPENAI_API_KEY=sk-... (or OPENAI_BASE_URL=...) and restart the server."
            )
        if agents:
            flag = "" if target == DEFAULT_LISTEN else f" --target {target}"
            lines.append(f'Try: treadle chat {agents[0].id} "hello"{flag}')
        if self.console is not None:
            lines.append(f"Console: http://{self.console_host}:{self.console_port}/")
        return lines

    def unregistered(self) -> list[str]:
        """A sentence per agent that names processors, tools or tool hooks this server does not
        have (remote ones may still attach, so this warns and refuses nothing)."""
        out = []
        for agent in self.registry.list_agents():
            processors = _unique(
                ref.id for lane in (agent.input_processors, agent.output_processors, agent.error_processors)
                for ref in ([] if callable(lane) else lane) if isinstance(ref, ProcessorRef) and not ref.builtin  # built-ins run in process
                and not self.registry.has_processor(ref.id)
            )
            tools = _unique(t for t in known_tools(agent) if isinstance(t, str) and not self.registry.has_tool(t))
            hooks = _unique(
                h for h in ((agent.tool_hooks.before_tool_call, agent.tool_hooks.after_tool_call)
                            if isinstance(agent.tool_hooks, ToolHooksRef) else ())
                if h and not self.registry.has_tool_hook(h)
            )
            if processors:
                out.append(
                    f"agent {agent.id!r} names processor(s) {', '.join(map(repr, processors))} that this server "
                    f"does not have: its runs fail until a remote processor attaches under that id"
                )
            transforms = _unique(
                ref.id for ref in agent.tool_payload_processors
                if isinstance(ref, ProcessorRef) and not self.registry.has_processor(ref.id)
            )
            if transforms:
                out.append(
                    f"agent {agent.id!r} names tool payload processor(s) {', '.join(map(repr, transforms))} that "
                    f"this server does not have: its tool payloads show as unavailable until one attaches"
                )
            if tools:
                out.append(
                    f"agent {agent.id!r} names tool(s) {', '.join(map(repr, tools))} that this server does "
                    f"not have: calls of it fail until a remote tool attaches under that name"
                )
            if hooks:
                out.append(f"agent {agent.id!r} names tool hook(s) {', '.join(map(repr, hooks))} that are not registered")
            scorers = _unique(r.scorer_id for r in agent.scorers
                              if not r.builtin and r.scorer is None and r.scorer_id not in self.scoring.code_scorers)
            if scorers:
                out.append(
                    f"agent {agent.id!r} names scorer(s) {', '.join(map(repr, scorers))} that this server does not "
                    f"have: their scorings are retried until a remote scorer attaches under that id")
        return out

    def warn_local_tools(self) -> None:
        """An agent on an embedded model with tools: the model cannot call them (it answers
        without them, often inventing what a tool would have said)."""
        for agent in self.registry.list_agents():
            if isinstance(agent.model, str) and agent.model.startswith("local/") and known_tools(agent):
                names = ", ".join(repr(t if isinstance(t, str) else getattr(t, "name", "?")) for t in known_tools(agent))
                log.warning(
                    "agent %r lists tools (%s) but runs on %s, which cannot call tools: it answers without "
                    "them. Give it an OpenAI or Anthropic model (model: openai/..., with OPENAI_API_KEY or "
                    "OPENAI_BASE_URL set) to use tools", agent.id, names, agent.model)

    def warn_unregistered(self) -> None:
        for message in self.unregistered():
            log.warning(message)

    def missing_credentials(self) -> list[str]:
        """A plain sentence per provider that agents use but that has no credentials."""
        users: dict[str, list[str]] = {}
        for agent in self.registry.list_agents():
            configs = [(m, agent.base_url) for m in known_models(agent)] + [(f.id, f.base_url) for f in agent.fallback_models]
            for model, base_url in configs:
                provider = model.partition("/")[0]
                if provider in ("openai", "anthropic") and base_url:
                    continue  # an agent-level base URL is an OpenAI-compatible server of its own
                if provider in _CREDENTIALS and agent.id not in users.setdefault(provider, []):
                    users[provider].append(agent.id)
        out = []
        for provider, agents in users.items():
            variables, how = _CREDENTIALS[provider]
            if not any(self._env.get(v) for v in variables):
                out.append(
                    f"no {provider} credentials: none of {', '.join(variables)} is set, so runs of "
                    f"{', '.join(repr(a) for a in agents)} will fail. To fix: {how}, then restart the server."
                )
        return out

    def missing_local_models(self) -> list[str]:
        """A sentence per ``local/...`` model that agents use but this server cannot run."""
        users: dict[str, list[str]] = {}
        for agent in self.registry.list_agents():
            for model in [*known_models(agent), *(f.id for f in agent.fallback_models)]:
                if model.startswith("local/") and agent.id not in users.setdefault(model, []):
                    users[model].append(agent.id)
        out = []
        for model, agents in users.items():
            problem = local_unavailable(model.removeprefix("local/"))
            if problem:
                out.append(f"{model} cannot run here, so runs of {', '.join(map(repr, agents))} will fail: {problem}")
        return out

    def warn_missing_credentials(self) -> None:
        for message in self.missing_credentials() + self.missing_local_models():
            log.warning(message)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


__all__ = ["EXAMPLE_AGENT", "TreadleApp", "is_loopback"]


SIGNAL_GROWTH = 13
"""How much bigger than its request a signal can be once stored: rendered with every character
escaped (up to six times longer) and kept as sent, plus its metadata."""


def _within_storage_budget(limits: Limits, max_message_bytes: int) -> Limits:
    """The limits, with the request and signal sizes lowered where needed so that whatever a
    request may store lists back in one page (one gRPC message of ``max_message_bytes``)."""
    room = max_message_bytes - min(64 << 10, max_message_bytes // 4)
    fitted = replace(limits, max_request_bytes=min(limits.max_request_bytes, room),
                     max_signal_bytes=min(limits.max_signal_bytes, room // SIGNAL_GROWTH))
    if fitted != limits:
        log.info("limits.maxRequestBytes and limits.maxSignalBytes lowered to %d and %d so that what they "
                 "store lists back within %d bytes (TREADLE_MAX_MESSAGE_BYTES)",
                 fitted.max_request_bytes, fitted.max_signal_bytes, max_message_bytes)
    return fitted


class _Leaving:
    """Drained at SIGTERM: the thread runtime takes over no thread while the server drains."""

    def __init__(self, threads: ThreadRuntime) -> None:
        self._threads = threads

    def start_draining(self) -> None:
        self._threads.start_draining()

    async def wait_idle(self) -> None:
        return None
