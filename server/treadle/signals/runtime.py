"""The thread runtime: at most one run per thread, signals routed into it or waking it.

A signal for a thread that has an active run is, by ``if_active``, handed to that run's inbox
(``deliver``: the loop takes it in at its next step boundary), stored for the next run
(``persist``) or dropped (``discard``). For an idle thread, ``if_idle`` starts a run of the
request's agent with the signal as its input (``wake``), stores it, or drops it. Every chunk of
every run is published to the thread's subscribers.

State changes of a thread (reserving it for a run, ending a run and starting the next one) hold
the thread's lock; delivering to an open inbox needs none, since it cannot wait.

Across replicas (server processes on one store), a run holds the thread's lease in the store
(``SignalStore.acquire_lease``: one statement, so two replicas never both hold it), renewed
while it runs and released when it ends. A signal for a thread whose lease another replica holds
is stored and that replica is told (``Relay``): it takes the signal and delivers it, and the
answer is ``deliver`` with that run's id. A replica that learns of another's run watches its
lease with a timer at its expiry: a lease that was not renewed means its replica died, and the
watcher takes the thread over (queued messages run, persisted signals join them, notifications
waiting for the thread to be idle are delivered).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol, cast

from ..agents import Agent, CallOptions, MemoryOptions, RunRequest
from ..core.chunks import AbortPayload, Chunk
from ..core.errors import (
    AlreadyExistsError,
    InvalidArgumentError,
    NotFoundError,
    ResourceExhaustedError,
    ShuttingDownError,
)
from ..loop import AgentLoop, GenerateResult
from ..loop.inbox import Inbox
from ..loop.run import RunHandle
from ..core.messages import Message, new_id, utcnow
from ..loop.step import current_lease_check
from ..memory.fence import LeaseClaim, LeaseHeldError, current_claim, current_fence
from .handle import ThreadRunHandle
from .hub import ActiveRunChanged, Event, Subscription, ThreadHub
from .inbox import DurableInbox, accept, is_accepted
from .ownership import OwnedRun, check_lease, fenced, keep_lease
from .relay import Forwarded, Received, Relay, RemoteChunk, RemoteChunks, RunEnded, RunStarted
from .signal import Signal, signal_from_message
from .store import Lease, PendingKind, PendingSignal, SignalStore, ThreadKey

log = logging.getLogger(__name__)

Action = Literal["wake", "deliver", "persist", "discard"]
MAX_ID = 255
"""The longest resource or thread id the store keeps."""


@dataclass
class Target:
    """Where a signal goes: a running run, or a thread (with the agent a wake runs)."""

    agent_id: str = ""
    run_id: str = ""
    resource_id: str = ""
    thread_id: str = ""


@dataclass
class IfActive:
    behavior: Literal["deliver", "persist", "discard"] = "deliver"
    attributes: dict[str, Any] | None = None


@dataclass
class IfIdle:
    behavior: Literal["wake", "persist", "discard"] = "wake"
    attributes: dict[str, Any] | None = None
    stream_options: CallOptions | None = None
    options_json: dict[str, Any] | None = None
    """``stream_options`` in proto JSON form, stored with queued signals to survive a restart."""


@dataclass
class Accepted:
    action: Action
    run_id: str = ""


@dataclass
class Sent:
    accepted: Accepted
    signal: Signal


@dataclass
class ActiveRun:
    run_id: str
    agent_id: str
    key: ThreadKey
    inbox: Inbox = field(default_factory=DurableInbox)
    options: CallOptions | None = None
    options_json: dict[str, Any] | None = None
    task: asyncio.Task[None] | None = None
    lease: Lease | None = None
    renewer: asyncio.Task[None] | None = None
    caller: str | None = None
    """The credential the run counts against (who woke it, or queued its message)."""
    release_slot: Callable[[], None] = lambda: None
    owned: OwnedRun | ThreadRunHandle | None = None
    """A caller's run (``Generate``/``Stream``): its task, stopped by ``AbortRun`` or a lost lease."""

    def stop(self, reason: str) -> None:
        """End the run from outside (``AbortRun``, a lost lease): cancel its task."""
        if self.owned is not None:
            self.owned.stop(reason)
        elif self.task is not None:
            self.task.cancel()

    @property
    def running_task(self) -> asyncio.Task[Any] | None:
        return self.owned.task if self.owned is not None else self.task


@dataclass
class RunInfo:
    """The thread's active run, on this replica or another."""

    run_id: str
    agent_id: str
    key: ThreadKey
    local: bool


class RunSlots(Protocol):
    """The run limits (the gate): every run this runtime starts counts against the server and
    against the credential that caused it, like a ``Generate`` call does."""

    def caller(self) -> str | None:
        """Who the current call is (a credential id; None without auth)."""

    def take_run(self, caller: str | None) -> Callable[[], None]:
        """Count a run, or raise ``ResourceExhaustedError`` naming the limit; returns the release."""

    async def run_freed(self) -> None:
        """Until some run ends."""


class _Unlimited:
    def caller(self) -> str | None:
        return None

    def take_run(self, caller: str | None) -> Callable[[], None]:
        return lambda: None

    async def run_freed(self) -> None:  # pragma: no cover - nothing is ever refused
        await asyncio.Event().wait()


@dataclass
class _Relayed:
    """A signal for another replica's run, stored and told; the answer waits for its ack."""

    sent: Sent
    told: asyncio.Future[str] | None = None
    lease: Lease | None = None


class _HeldElsewhere(Exception):
    def __init__(self, lease: Lease) -> None:
        self.lease = lease


OnIdle = Callable[[ThreadKey], Any]


class ThreadRuntime:
    def __init__(
        self,
        loop: AgentLoop,
        agents: Callable[[str], Agent],
        store: SignalStore,
        *,
        options_from_json: Callable[[dict[str, Any]], CallOptions] | None = None,
        replica: str = "", lease_ttl: float = 30.0, clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.loop = loop
        self.replica = replica or new_id("replica")
        """This server process, as the owner of the leases it takes."""
        self.lease_ttl = lease_ttl
        self.clock = clock
        self.relay: Relay | None = None
        """The other replicas (set by ``attach``); None: this process is alone on its store."""
        self._watches: dict[ThreadKey, asyncio.TimerHandle] = {}
        self._expired: dict[ThreadKey, Lease] = {}
        """An expired lease of a run seen on the thread: replaced by this replica, its run is
        recorded failed (its runner is gone)."""
        self._handover: dict[ThreadKey, Lease] = {}
        """A lease of this replica that the thread's next run here may take in its place: the
        ending run's (a queued message follows it) or a takeover's placeholder."""
        self.store = store
        self.hub = ThreadHub()
        self._agents = agents
        self._options_from_json = options_from_json or (lambda _: CallOptions())
        self._active: dict[ThreadKey, ActiveRun] = {}
        self._by_run: dict[str, ActiveRun] = {}
        self._locks: defaultdict[ThreadKey, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._idle = asyncio.Event()
        self._idle.set()
        self._stopping = False
        self._leaving = False
        """Set at SIGTERM (``start_draining``): this replica takes over no thread any more."""
        self._tasks: set[asyncio.Task[None]] = set()
        """Every run task until it has fully ended (its end also starts the next run)."""
        self.on_idle: list[OnIdle] = []
        self.slots: RunSlots = _Unlimited()
        """The run limits every started run counts against (the gate sets itself here)."""
        self._queued_by: dict[str, str | None] = {}
        """Queued message id -> the credential that queued it (this process; after a restart
        or on another replica the run counts against the server's total only)."""
        self._waiting_for_slot: dict[ThreadKey, asyncio.Task[None]] = {}
        """Called (and awaited when async) after a thread's last run ended and nothing follows."""

    def attach(self, relay: Relay) -> None:
        """Tell the other replicas about runs and chunks from now on, and hear theirs."""
        self.relay = relay
        self.hub.forward = self._forward
        self.hub.forward_batch = self._forward_batch

    def _forward(self, key: ThreadKey, event: Event) -> None:
        if self.relay is not None and self.relay.channel.heard:  # alone: nothing to tell
            run = self._active.get(key)
            expires = run.lease.expires_at if run is not None and run.lease is not None else None
            self.relay.event(key, event, expires)

    def _forward_batch(self, key: ThreadKey, chunks: list[Chunk]) -> None:
        if self.relay is not None and self.relay.channel.heard:
            self.relay.chunks(key, chunks)

    def received(self, message: Received) -> None:
        """A message from another replica (the relay's callback)."""
        if isinstance(message, RemoteChunk):
            self.hub.publish_local(message.key, message.chunk)
        elif isinstance(message, RemoteChunks):
            for chunk in message.chunks:
                self.hub.publish_local(message.key, chunk)
        elif isinstance(message, RunStarted):
            self.hub.publish_local(message.key, ActiveRunChanged(message.run_id, message.agent_id))
            self._watch(message.key, message.expires_at or self.clock() + timedelta(seconds=self.lease_ttl))
        elif isinstance(message, RunEnded):
            self.hub.publish_local(message.key, ActiveRunChanged())
            self._unwatch(message.key)
            if message.handoff:
                self._watch(message.key, self.clock())
        elif isinstance(message, Forwarded):
            self._spawn(self._take_forwarded(message), f"forwarded signal for {message.key}")

    def _spawn(self, work: Any, name: str) -> None:
        async def logged() -> None:
            try:
                await work
            except Exception:
                log.exception("%s failed", name)

        task: asyncio.Task[None] = asyncio.create_task(logged(), name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- queries ------------------------------------------------------------------------------

    def active_run(self, key: ThreadKey) -> ActiveRun | None:
        return self._active.get(key)

    def agent(self, agent_id: str) -> Agent:
        """The agent a wake would run (NotFoundError when unknown)."""
        return self._agents(agent_id)

    def active_run_by_id(self, run_id: str) -> ActiveRun | None:
        return self._by_run.get(run_id)

    async def current_run(self, key: ThreadKey) -> RunInfo | None:
        """The thread's active run, wherever it runs (a live lease of another replica)."""
        if (run := self._active.get(key)) is not None:
            return RunInfo(run.run_id, run.agent_id, key, True)
        lease = await self._held_elsewhere(key)
        if lease is None or lease.placeholder:  # being taken over: no run yet
            return None
        return RunInfo(lease.run_id, lease.agent_id, key, False)

    async def run_thread(self, run_id: str) -> ThreadKey | None:
        """The thread of the active run ``run_id`` (on any replica), None when not active."""
        if (run := self._by_run.get(run_id)) is not None:
            return run.key
        lease = await self.store.get_lease(run_id=run_id)
        live = lease is not None and not lease.placeholder and lease.expires_at > self.clock()
        return lease.key if lease is not None and live else None

    def subscribe(self, key: ThreadKey) -> Subscription:
        return self.hub.subscribe(key)

    @property
    def hearing(self) -> bool:
        """False while this replica cannot hear the others (its channel is reconnecting): a
        subscription made now could miss a run with no error."""
        return self.relay is None or self.relay.channel.listening

    async def wait_hearing(self, timeout: float) -> bool:
        """Until ``hearing`` (True), or ``timeout`` seconds (False)."""
        return self.relay is None or await self.relay.channel.wait_listening(timeout)

    async def wait_idle(self) -> None:
        """Until no thread has an active run."""
        await self._idle.wait()

    # --- signals ------------------------------------------------------------------------------

    async def send(
        self, target: Target, signal: Signal, if_active: IfActive | None = None,
        if_idle: IfIdle | None = None,
    ) -> Sent:
        """Route ``signal``; bad input raises before anything is stored or run."""
        if_active, if_idle = if_active or IfActive(), if_idle or IfIdle()
        key, run = await self._route(target)
        if run is None or run.inbox.closed:
            relayed: _Relayed | None = None
            async with self._locks[key]:
                run = self._active.get(key)
                if run is None:
                    held = await self._held_elsewhere(key)
                    if held is None:
                        try:
                            return await self._idle_path(key, target, signal, if_idle)
                        except _HeldElsewhere as e:  # another replica woke it first
                            held = e.lease
                    relayed = await self._remote_path(key, held, target, signal, if_active)
            if relayed is not None:  # waited for outside the lock: a takeover never waits behind it
                return await self._relay_answer(relayed)
            assert run is not None
        return await self._active_path(key, run, target, signal, if_active)

    async def queue(
        self, target: Target, signal: Signal, if_active: IfActive | None = None,
        if_idle: IfIdle | None = None,
    ) -> Sent:
        """Run ``signal`` as its own run after the active one ends; at once when idle."""
        if_active, if_idle = if_active or IfActive(), if_idle or IfIdle()
        key, _ = await self._route(target)
        async with self._locks[key]:
            run = self._active.get(key)
            held = await self._held_elsewhere(key) if run is None else None
            if run is None and held is None:
                try:
                    return await self._idle_path(key, target, signal, replace(if_idle, behavior="wake"))
                except _HeldElsewhere as e:
                    held = e.lease
            agent_id = target.agent_id or (run.agent_id if run is not None else held.agent_id if held else "")
            self._agents(agent_id)  # NOT_FOUND now rather than when the run ends
            signal.with_attributes(if_active.attributes)
            await self.store.add_pending(PendingSignal(
                key, _stored(key, signal), "queued", agent_id=agent_id, options=if_idle.options_json,
            ))
            self._queued_by[signal.id] = self.slots.caller()
            if held is not None:
                self._tell(held, "")  # in case its run is just ending: it looks at the queue
            return Sent(Accepted("persist"), signal)

    async def stream(self, agent: Agent, request: RunRequest) -> AsyncIterator[Chunk]:
        """A caller's own run on a thread (``AgentService.Stream`` with memory): its chunks go to
        the caller and to the thread's subscribers, and, when the thread was idle, it is the
        thread's active run, so signals reach it. On a running thread it waits for that run to
        end (one runner per thread)."""
        key = self._memory_key(agent, request)
        if key is None:
            async for chunk in self.loop.stream(agent, request):
                yield chunk
            return
        run, request = await self._reserve(agent, request, key)
        publish = self._publisher(key, run)
        if run is None:
            async for chunk in self.loop.stream(agent, request):
                publish(chunk)
                yield chunk
            return
        # The run is a task of the runtime (AbortRun and a lost lease stop it), fenced by its lease.
        run.owned = OwnedRun(run.run_id, self._fence(run), self._lease_check(run))
        try:
            async for chunk in run.owned.stream(self.loop.stream(agent, request), publish):
                yield chunk
        finally:
            await self._finish(run)

    async def open(self, agent: Agent, request: RunRequest) -> ThreadRunHandle | RunHandle:
        """``stream`` as batches of chunks (``AgentLoop.open``), for ``AgentService.Stream``: the
        caller's run is opened in the caller's task, fenced by its lease, and each batch goes to
        the thread's subscribers on its way to the caller. Bad requests raise here; the caller
        must ``close`` the handle.

        When the leases are in the database the run writes to, the lease is taken in the run's
        first transaction (``fence.LeaseClaim``: the one that records the run and reads its
        history), not in one of its own; on a thread another run holds, that transaction writes
        nothing and the caller waits for the thread, as ``stream`` does."""
        key = self._memory_key(agent, request)
        if key is None:
            return await self.loop.open(agent, request)
        taker = getattr(self.store, "lease_taker", None)
        if taker is None or not self._same_database():
            return await self._open_reserved(agent, request, key)
        self.loop.plan(agent, request)  # a bad request raises before the thread is reserved
        if request.run_id and await self.run_thread(request.run_id) is not None:
            raise AlreadyExistsError(f"run id {request.run_id!r} is taken: choose another, or leave run_id empty")
        while True:
            watch = self.hub.subscribe(key)  # before the thread is looked at: its run's end is not missed
            try:
                async with self._locks[key]:
                    if self._stopping:
                        return ThreadRunHandle(await self.loop.open(agent, request), self.hub, key, agent.id, False)
                    held: Lease | None = None
                    if key not in self._active:
                        run = ActiveRun(request.run_id or new_id("run"), agent.id, key, options=request.options)
                        now = self.clock()
                        lease = Lease(key, self.replica, run.run_id, agent.id, now + timedelta(seconds=self.lease_ttl))
                        replacing = self._handover.get(key)
                        claim = LeaseClaim(taker(lease, now, replacing), self.replica, run.run_id,
                                           lease=lease, now=now, replacing=replacing)
                        claimed, fence = current_claim.set(claim), current_fence.set(None)
                        checked = current_lease_check.set(self._lease_check(run))
                        try:
                            inner = await self.loop.open(agent, replace(request, run_id=run.run_id, inbox=run.inbox))
                        except LeaseHeldError as e:
                            held = e.lease
                        else:
                            return await self._opened(run, inner, claim)
                        finally:
                            current_claim.reset(claimed)
                            current_fence.reset(fence)
                            current_lease_check.reset(checked)
                # One runner per thread: a caller's run on a busy thread waits for that run to end.
                await self._until_idle(watch, held)
            finally:
                watch.close()

    async def _opened(self, run: ActiveRun, inner: RunHandle, claim: LeaseClaim) -> ThreadRunHandle:
        """A run opened with its lease taken (``claim``): the thread's active run from now on."""
        try:
            if claim.taken is None:  # the run opened no thread (never the case for a run on one)
                raise InvalidArgumentError("the run did not open its thread")
            run.lease = claim.taken
            self._unwatch(run.key)
            gone = self._expired.pop(run.key, None)
            if gone is not None and gone.epoch == run.lease.epoch - 1:  # this lease replaced that run's
                await self.store.end_lost_runs([gone.run_id], self.clock())
        except BaseException:
            await inner.close()
            await self._release(run)
            raise
        self._activate(run)
        handle = ThreadRunHandle(inner, self.hub, run.key, run.agent_id, True, lambda: self._finish(run))
        run.owned = handle
        return handle

    async def _open_reserved(self, agent: Agent, request: RunRequest, key: ThreadKey) -> ThreadRunHandle:
        """``open`` with the lease taken first, in a transaction of its own (the leases are not
        in the database the run writes to)."""
        run, request = await self._reserve(agent, request, key)
        if run is None:  # stopping: the run is no thread's active run
            return ThreadRunHandle(await self.loop.open(agent, request), self.hub, key, agent.id, False)
        token = current_fence.set(self._fence(run))  # the run's task (and its opening) hold its lease
        checked = current_lease_check.set(self._lease_check(run))
        try:
            handle = ThreadRunHandle(await self.loop.open(agent, request), self.hub, key, run.agent_id, True,
                                     lambda: self._finish(run))
        except BaseException:
            await self._finish(run)
            raise
        finally:
            current_fence.reset(token)
            current_lease_check.reset(checked)
        run.owned = handle
        return handle

    async def generate(self, agent: Agent, request: RunRequest) -> GenerateResult:
        """``AgentService.Generate`` with memory: as ``stream``, the thread's active run when it
        was idle (signals sent meanwhile are delivered to it), its chunks to the subscribers."""
        key = self._memory_key(agent, request)
        if key is None:
            return await self.loop.generate(agent, request)
        run, request = await self._reserve(agent, request, key)
        if run is None:
            return await self.loop.generate(agent, request, on_chunk=self._publisher(key, run))
        run.owned = OwnedRun(run.run_id, self._fence(run), self._lease_check(run))
        publish = self._publisher(key, run)
        try:
            return await run.owned.result(self.loop.generate(agent, request, on_chunk=publish), publish)
        finally:
            await self._finish(run)

    def _memory_key(self, agent: Agent, request: RunRequest) -> ThreadKey | None:
        memory = request.options.merged_over(agent.default_options).memory
        return (memory.resource, memory.thread) if memory is not None else None

    async def _reserve(self, agent: Agent, request: RunRequest, key: ThreadKey) -> tuple[ActiveRun | None, RunRequest]:
        """Make a caller's run the thread's active run when the thread is idle everywhere."""
        self.loop.plan(agent, request)  # a bad request raises before the thread is reserved
        if request.run_id and await self.run_thread(request.run_id) is not None:
            raise AlreadyExistsError(f"run id {request.run_id!r} is taken: choose another, or leave run_id empty")
        while True:
            # Subscribed before the thread is looked at, so that its run's end is not missed.
            watch = self.hub.subscribe(key)
            try:
                async with self._locks[key]:
                    if self._stopping:
                        return None, request
                    held: Lease | None = None
                    if key not in self._active:
                        run = ActiveRun(request.run_id or new_id("run"), agent.id, key, options=request.options)
                        try:
                            run.lease = await self._acquire(key, run.run_id, agent.id)
                        except _HeldElsewhere as e:
                            held = e.lease
                        else:
                            self._activate(run)
                            return run, replace(request, run_id=run.run_id, inbox=run.inbox)
                # One runner per thread: a caller's run on a busy thread waits for that run to end.
                await self._until_idle(watch, held)
            finally:
                watch.close()

    async def _until_idle(self, watch: Subscription, held: Lease | None) -> None:
        """Until the thread's active run ends (here or on another replica), or, for another
        replica's, until its lease runs out (its replica may be gone: the caller looks again)."""
        left = self.lease_ttl if held is None else max(0.0, (held.expires_at - self.clock()).total_seconds())

        async def ended() -> None:
            async for event in watch.events():
                if isinstance(event, ActiveRunChanged) and not event.run_id:
                    return

        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(ended(), left + 0.05)

    def _publisher(self, key: ThreadKey, run: ActiveRun | None) -> Callable[[Chunk], None]:
        started = False

        def publish(chunk: Chunk) -> None:
            nonlocal started
            if run is not None and not started:
                self.hub.publish(key, ActiveRunChanged(run.run_id, run.agent_id))
            started = True
            self.hub.publish(key, chunk)

        return publish

    async def abort(self, target: Target) -> str:
        """Abort the targeted run; returns its id, or "" when nothing was running."""
        _, run = await self._route(target, must_exist=False)
        task = run.running_task if run is not None else None
        if run is None or task is None or task.done() or run.inbox.closed:
            return ""  # not running, or already ending
        run.stop("aborted")
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(task)
        return run.run_id

    def start_draining(self) -> None:
        """SIGTERM, while the calls and runs in flight finish: this replica is leaving, so it
        takes over no thread whose lease expires meanwhile (another replica will); ``stop``
        ends the rest."""
        self._leaving = True
        for handle in self._watches.values():
            handle.cancel()
        self._watches.clear()

    async def stop(self) -> None:
        """Server shutdown: end every active run; queued and persisted signals stay stored."""
        self._stopping = True
        for handle in self._watches.values():
            handle.cancel()
        self._watches.clear()
        for waiting in self._waiting_for_slot.values():
            waiting.cancel()  # the queued messages stay stored
        for run in list(self._active.values()):
            if run.task is not None and not run.inbox.closed:
                run.task.cancel()  # a caller's run (owned) ends with its call, which the server drains
        while self._tasks:  # ending runs may still be storing what they leave behind
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def recover(self) -> None:
        """After a restart: start the queued runs that no run took before the server stopped
        (a thread another replica runs is watched, and taken over if that replica dies). Runs
        left ``running`` whose runner is gone are recorded failed: at once on SQLite (one
        process), at the takeover of their thread's lease on PostgreSQL."""
        ended = await self.store.end_lost_runs(None, self.clock())
        if ended:
            log.info("recorded %d run(s) whose runner is gone as failed: %s", len(ended), ", ".join(ended))
        for lease in await self.store.list_leases():
            # Looked at when it expires (at once if it has): taken over, its run recorded
            # failed, unless its replica renews it.
            self._watch(lease.key, lease.expires_at)
        seen: set[ThreadKey] = set()
        for pending in await self.store.list_pending():
            if (pending.kind == "queued" or is_accepted(pending)) and pending.key not in seen:
                seen.add(pending.key)
                await self._resume(pending.key)

    async def _resume(self, key: ThreadKey) -> bool:
        """Start the thread's next queued run unless it runs (here or elsewhere); True when a run
        started or runs."""
        async with self._locks[key]:
            if key in self._active or self._stopping:
                return key in self._active
            try:
                return await self._start_next(key, None, [])
            except _HeldElsewhere as e:
                self._watch(key, e.lease.expires_at)
                return True

    # --- leases -------------------------------------------------------------------------------

    async def _held_elsewhere(self, key: ThreadKey) -> Lease | None:
        """Another replica's live lease on the thread."""
        lease = await self.store.get_lease(key)
        if lease is not None and lease.expires_at <= self.clock() and lease.run_id and not lease.placeholder:
            self._expired[key] = lease  # if this replica takes the thread now, it records that run
        if lease is None or lease.owner == self.replica or lease.expires_at <= self.clock():
            return None
        return lease

    async def _acquire(self, key: ThreadKey, run_id: str, agent_id: str) -> Lease:
        """Take the thread's lease (a new epoch) when it is free, or in place of this replica's
        own lease handed over to the next run (``_handover``); never a live lease of a run."""
        now = self.clock()
        lease = Lease(key, self.replica, run_id, agent_id, now + timedelta(seconds=self.lease_ttl))
        held = await self.store.acquire_lease(lease, now, replacing=self._handover.get(key))
        if (held.owner, held.run_id) != (self.replica, run_id):
            raise _HeldElsewhere(held)
        self._unwatch(key)
        gone = self._expired.pop(key, None)
        if gone is not None and gone.epoch == held.epoch - 1:  # this lease replaced that run's
            await self.store.end_lost_runs([gone.run_id], now)
        return held

    def _fence(self, run: ActiveRun) -> Lease | None:
        """The lease the run's writes to its thread are conditional on: its own, when the
        leases are in the database the run writes to (as ``treadle serve`` keeps them)."""
        return run.lease if self._same_database() else None

    def _same_database(self) -> bool:
        db = getattr(self.store, "db", None)
        return db is not None and db is getattr(self.loop.memory, "db", object())

    def _lease_check(self, run: ActiveRun) -> Callable[[], Awaitable[None]]:
        """What the run awaits before each model call (``ownership.check_lease``)."""
        def put(lease: Lease) -> None:
            if run.lease is not None:
                run.lease = lease

        return lambda: check_lease(self.store, lambda: run.lease, put, self.lease_ttl, self.clock)

    def _activate(self, run: ActiveRun) -> None:
        self._active[run.key], self._by_run[run.run_id] = run, run
        self._idle.clear()
        run.renewer = asyncio.create_task(self._renew(run), name=f"lease of {run.run_id}")

    async def _renew(self, run: ActiveRun) -> None:
        """Keep the run's lease (``ownership.keep_lease``); one that cannot be kept (this process
        stalled past its TTL and another replica may take the thread) ends the run."""
        def put(lease: Lease) -> None:
            if run.lease is not None:
                run.lease = lease

        def stop(reason: str) -> None:
            log.warning("run %s on thread %s is ending: %s", run.run_id, run.key, reason)
            run.stop(f"lease lost: {reason}")

        await keep_lease(self.store, lambda: run.lease, put, self.lease_ttl, self.clock, stop)

    async def _release(self, run: ActiveRun) -> None:
        if run.renewer is not None:
            run.renewer.cancel()
            run.renewer = None
        if run.lease is not None:
            lease, run.lease = run.lease, None
            try:
                await self.store.release_lease(lease)
            except Exception:
                log.exception("releasing the lease of run %s failed (it expires)", run.run_id)

    def _watch(self, key: ThreadKey, expires_at: datetime) -> None:
        """Look at the thread's lease when it expires: renewed, look again then; not, take over."""
        if self._stopping or self._leaving or key in self._active:
            return
        self._unwatch(key)
        delay = max(0.0, (expires_at - self.clock()).total_seconds())
        loop = asyncio.get_running_loop()
        self._watches[key] = loop.call_later(
            delay, lambda: self._spawn(self._check_lease(key), f"lease check {key}"))

    def _unwatch(self, key: ThreadKey) -> None:
        handle = self._watches.pop(key, None)
        if handle is not None:
            handle.cancel()

    async def _check_lease(self, key: ThreadKey) -> None:
        self._watches.pop(key, None)
        lease = await self.store.get_lease(key)
        if lease is not None and lease.expires_at > self.clock():
            # Live: renewed by its replica, or held by a run of this replica (never taken over).
            self._watch(key, lease.expires_at)
            return
        await self.take_over(key, lease)

    async def take_over(self, key: ThreadKey, dead: Lease | None = None) -> None:
        """The thread's runner is gone: run what is queued for it (persisted signals join the
        run), or, when nothing is, deliver what waited for the thread to be idle. The takeover
        holds the lease itself, so of several watching replicas exactly one does it."""
        if key in self._active or self._leaving:
            return  # a run of this replica holds the thread; or this replica is leaving
        try:
            token = await self._acquire(key, new_id("takeover"), "")
        except _HeldElsewhere as e:  # another replica took it over (or a run started)
            if e.lease.owner != self.replica:
                self._watch(key, e.lease.expires_at)
            return
        self._handover[key] = token  # a run started here meanwhile takes the lease in its place
        try:
            if dead is not None and dead.run_id and not dead.placeholder:
                # Its runner is gone (or fenced out): record the run as ended, never `running`.
                await self.store.end_lost_runs([dead.run_id], self.clock())
            if dead is not None and dead.owner != self.replica:
                self.hub.publish(key, ActiveRunChanged())
                log.info("thread %s: the lease of run %s (replica %s) expired; taking the thread over",
                         key, dead.run_id, dead.owner)
            if await self._resume(key) or self._stopping:
                return
            # Signals accepted for delivery into the dead run, that it never took: they start a run.
            orphans = [p for p in await self.store.list_pending(key)
                       if p.kind == "persisted" and p.agent_id
                       and (p.message.content.metadata or {}).get("signal", {}).get("acceptedAt")]
            if orphans:
                async with self._locks[key]:
                    if key not in self._active and await self._start(key, orphans[0].agent_id, [], None, None):
                        return
            await self._idle_hooks(key)
        finally:
            if self._handover.get(key) is token:
                del self._handover[key]
            await self.store.release_lease(token)  # unless a run has taken it meanwhile

    def _tell(self, lease: Lease, pending_id: str) -> asyncio.Future[str] | None:
        self._watch(lease.key, lease.expires_at)
        if self.relay is None:
            return None
        return self.relay.forwarded(lease.key, lease.owner, lease.run_id, pending_id)

    async def _take_forwarded(self, message: Forwarded) -> None:
        """Another replica stored a signal for our run (or queued a message on our thread)."""
        key = message.key
        if not message.pending_id:
            await self._resume(key)
            return
        run_id = ""
        try:
            pending = await self.store.get_pending(key, message.pending_id)
            if pending is None:
                return  # taken already (a run started with it), or not ours to take
            signal = signal_from_message(pending.message)
            run = self._active.get(key)
            if run is not None and self._deliver(run, signal):
                run_id = run.run_id
            else:
                # The run ended meanwhile: the signal (still stored) goes to the next one.
                accepted = await self._redeliver(key, pending.agent_id or (run.agent_id if run else ""), signal)
                run_id = accepted.run_id or ""
        finally:
            self._ack(message, run_id)  # the sender never waits out a lease for a run that ended

    def _ack(self, message: Forwarded, run_id: str = "") -> None:
        if self.relay is not None:
            self.relay.ack(message.key, message.origin, message.pending_id, run_id)

    # --- routing ------------------------------------------------------------------------------

    async def _route(self, target: Target, *, must_exist: bool = True) -> tuple[ThreadKey, ActiveRun | None]:
        if target.run_id:
            run = self._by_run.get(target.run_id)
            if run is None:
                key = None if self._stopping else await self.run_thread(target.run_id)
                if key is not None:  # another replica runs it
                    return key, None
                if must_exist:
                    raise NotFoundError(f"run {target.run_id!r} is not active")
                return ("", ""), None
            return run.key, run
        if not target.resource_id or not target.thread_id:
            raise InvalidArgumentError(
                "give run_id, or resource_id and thread_id together (a thread belongs to a resource)"
            )
        if max(len(target.resource_id), len(target.thread_id)) > MAX_ID:
            raise InvalidArgumentError(f"resource_id and thread_id must be at most {MAX_ID} characters")
        key = (target.resource_id, target.thread_id)
        return key, self._active.get(key)

    async def _active_path(
        self, key: ThreadKey, run: ActiveRun, target: Target, signal: Signal, if_active: IfActive
    ) -> Sent:
        signal.with_attributes(if_active.attributes)
        if if_active.behavior == "deliver":
            signal.to_message()  # the rendering is checked before anything is stored
            await accept(self.store, key, run.agent_id, signal)  # durable before the run sees it
            if self._deliver(run, signal):
                return Sent(Accepted("deliver", run.run_id), signal)
            # The run ended meanwhile: the stored signal goes to the thread's next run.
            return Sent(await self._redeliver(key, run.agent_id or target.agent_id, signal), signal)
        if if_active.behavior == "persist":
            signal.to_message()  # the rendering is checked before anything is stored
            await self.store.add_pending(PendingSignal(key, _stored(key, signal), "persisted", agent_id=run.agent_id))
            return Sent(Accepted("persist"), signal)
        return Sent(Accepted("discard"), signal)

    async def _remote_path(
        self, key: ThreadKey, lease: Lease, target: Target, signal: Signal, if_active: IfActive
    ) -> _Relayed:
        """The thread runs on another replica (called with the thread's lock held; the answer
        is awaited by ``_relay_answer`` after it is released)."""
        signal.with_attributes(if_active.attributes)
        if if_active.behavior == "discard":
            return _Relayed(Sent(Accepted("discard"), signal))
        signal.to_message()  # the rendering is checked before anything is stored
        if if_active.behavior == "deliver":
            signal.accepted_at = utcnow()
        agent_id = lease.agent_id or target.agent_id
        kind: PendingKind = "accepted" if if_active.behavior == "deliver" else "persisted"
        await self.store.add_pending(PendingSignal(key, _stored(key, signal), kind, agent_id=agent_id))
        if if_active.behavior == "persist":
            self._watch(key, lease.expires_at)
            return _Relayed(Sent(Accepted("persist"), signal))
        told = self._tell(lease, signal.id)
        return _Relayed(Sent(Accepted("deliver", "" if lease.placeholder else lease.run_id), signal), told, lease)

    async def _relay_answer(self, relayed: _Relayed) -> Sent:
        """Answer once the signal is in the run's inbox (the owner says which run took it), as
        for a run here. An owner that does not answer (dead) leaves the signal stored, and
        whoever takes the thread over runs it: taken over here, the answer names that run (see
        ``Relay.settle``); otherwise it names the dead run, a TTL after its lease's end."""
        if relayed.told is None or relayed.lease is None:
            return relayed.sent
        left = (relayed.lease.expires_at - self.clock()).total_seconds()
        with contextlib.suppress(TimeoutError):
            run_id = await asyncio.wait_for(asyncio.shield(relayed.told), max(left, 0.0) + self.lease_ttl)
            if run_id:
                relayed.sent.accepted.run_id = run_id
        return relayed.sent

    async def _idle_path(self, key: ThreadKey, target: Target, signal: Signal, if_idle: IfIdle) -> Sent:
        """Called with the thread's lock held; raises ``_HeldElsewhere`` (the signal unchanged)
        when another replica woke the thread first."""
        before = dict(signal.attributes)
        signal.with_attributes(if_idle.attributes)
        if if_idle.behavior == "wake":
            try:
                run_id = await self._start(
                    key, target.agent_id, [signal], if_idle.stream_options, if_idle.options_json,
                    caller=self.slots.caller(),
                )
            except _HeldElsewhere:
                signal.attributes = before
                raise
            return Sent(Accepted("wake", run_id), signal)
        if if_idle.behavior == "persist":
            signal.to_message()
            await self.store.add_pending(PendingSignal(key, _stored(key, signal), "persisted", agent_id=target.agent_id))
            return Sent(Accepted("persist"), signal)
        return Sent(Accepted("discard"), signal)

    def _deliver(self, run: ActiveRun, signal: Signal) -> bool:
        """Into the run's inbox (once per signal id); False when the run has ended."""
        if signal.accepted_at is None:
            signal.accepted_at = utcnow()
        message = signal.to_message(thread_id=run.key[1], resource_id=run.key[0])
        return run.inbox.put(message, signal.to_chunk(run.run_id))

    async def _redeliver(self, key: ThreadKey, agent_id: str, signal: Signal) -> Accepted:
        """A stored (accepted) signal whose run ended before taking it: into the thread's next
        run, which is started here when none runs; it stays stored for the next run otherwise."""
        async with self._locks[key]:
            run = self._active.get(key)
            if run is not None and self._deliver(run, signal):
                return Accepted("deliver", run.run_id)
            if run is not None or self._stopping:
                return Accepted("persist")  # stored: that run's end starts the next one with it
            try:
                run_id = await self._start(key, agent_id, [], None, None) if agent_id else ""
            except _HeldElsewhere as e:  # another replica runs the thread: it is told
                self._watch(key, e.lease.expires_at)
                return Accepted("deliver", e.lease.run_id)
            return Accepted("wake", run_id) if run_id else Accepted("persist")

    # --- runs ---------------------------------------------------------------------------------

    async def _start(
        self, key: ThreadKey, agent_id: str, signals: list[Signal], options: CallOptions | None,
        options_json: dict[str, Any] | None, taken: list[str] | None = None,
        caller: str | None = None,
    ) -> str:
        """Start a run on the idle thread ``key`` (its lock held) with ``signals`` as input,
        after the signals persisted for it; returns the run id. Bad requests raise, and then
        nothing is stored or left reserved."""
        if self._stopping:
            raise ShuttingDownError()
        if not agent_id:
            raise InvalidArgumentError("agent_id is required to wake an idle thread")
        agent = self._agents(agent_id)
        for signal in signals:
            signal.to_message()  # bad attributes raise here, before the thread is reserved
        run = ActiveRun(new_id("run"), agent_id, key, options=options, options_json=options_json, caller=caller)
        run.release_slot = self.slots.take_run(caller)  # or ResourceExhaustedError naming the limit
        try:
            run.lease = await self._acquire(key, run.run_id, agent_id)  # or _HeldElsewhere
        except BaseException:
            run.release_slot()
            raise
        stored: list[str] = []
        try:
            waiting = [p for p in await self.store.list_pending(key) if p.kind != "queued"]
            for signal in signals:  # the run's input is durable before the run sees it
                known = any(p.message.id == signal.id for p in waiting)
                await accept(self.store, key, agent_id, signal)
                if not known and signal.id not in (taken or []):
                    stored.append(signal.id)
            for signal in [*(signal_from_message(p.message) for p in waiting), *signals]:
                self._deliver(run, signal)
            if not run.inbox.pending:
                run.release_slot()
                await self._release(run)  # nothing to run (a takeover that found nothing)
                return ""
            opts = replace(options or CallOptions(), memory=MemoryOptions(resource=key[0], thread=key[1]))
            request = RunRequest(messages=[], options=opts, run_id=run.run_id, inbox=run.inbox)
            stream = cast(AsyncGenerator[Chunk, None], self.loop.stream(agent, request))
            context = fenced(self._fence(run), self._lease_check(run))  # its writes and model calls hold its lease
            try:  # the plan is checked before the first chunk
                first = await asyncio.get_running_loop().create_task(_first(stream), context=context)
            except BaseException:
                await stream.aclose()
                raise
        except BaseException:
            run.release_slot()
            with contextlib.suppress(Exception):
                await self.store.remove_pending(stored)  # a refused start stores nothing
            await self._release(run)
            raise
        self._activate(run)
        if self.relay is not None:
            for p in waiting:  # a caller here waiting on a dead replica's run hears where it went
                self.relay.settle(p.message.id, run.run_id)
        self.hub.publish(key, ActiveRunChanged(run.run_id, agent_id))
        run.task = asyncio.get_running_loop().create_task(
            self._drive(run, stream, first), name=f"run {run.run_id}", context=context)
        self._tasks.add(run.task)
        run.task.add_done_callback(self._tasks.discard)
        await asyncio.sleep(0)  # the task starts now: cancelled before its first step, it would never finish
        return run.run_id

    async def _drive(self, run: ActiveRun, stream: AsyncGenerator[Chunk, None], first: Chunk) -> None:
        aborted = False
        try:
            self.hub.publish(run.key, first)
            async for chunk in stream:
                self.hub.publish(run.key, chunk)
        except asyncio.CancelledError:
            aborted = True
        except Exception:
            log.exception("run %s on thread %s failed", run.run_id, run.key)
        finally:
            with contextlib.suppress(BaseException):
                await stream.aclose()
        if aborted:
            self.hub.publish(run.key, Chunk.of(AbortPayload("aborted"), run_id=run.run_id))
        await self._finish(run)

    async def _finish(self, run: ActiveRun) -> None:
        leftovers = run.inbox.close()  # from now on senders wait for the lock
        await self._consumed_by(run)
        async with self._locks[run.key]:
            self._active.pop(run.key, None)
            self._by_run.pop(run.run_id, None)
            if run.renewer is not None:
                run.renewer.cancel()
            run.release_slot()
            self.hub.publish(run.key, ActiveRunChanged())
            signals = [signal_from_message(d.message) for d in leftovers]
            lease = run.lease
            if lease is not None:
                self._handover[run.key] = lease  # the next run here takes it over
            try:
                started = await self._start_next(run.key, run, signals)
            except Exception:
                log.exception("could not start the next run on thread %s", run.key)
                for signal in signals:  # stored already (accepted); kept for the next run
                    await self.store.add_pending(PendingSignal(run.key, _stored(run.key, signal), "accepted"))
                started = False
            finally:
                if lease is not None and self._handover.get(run.key) is lease:
                    del self._handover[run.key]
            await self._release(run)  # a next run holds a lease of its own (same owner, its run id)
            if self._stopping and self.relay is not None:
                self.relay.run_ended(run.key, handoff=True)  # another replica may take it now
        if not started and not self._stopping:
            await self._idle_hooks(run.key)
        if not self._active:
            self._idle.set()

    async def _idle_hooks(self, key: ThreadKey) -> None:
        for hook in self.on_idle:
            try:
                result = hook(key)
                if asyncio.iscoroutine(result):
                    await result
            except Exception:
                log.exception("on_idle hook failed for thread %s", key)

    async def _start_next(self, key: ThreadKey, prev: ActiveRun | None, leftovers: list[Signal]) -> bool:
        """Signals the ended run never took first (one run), then the oldest queued message."""
        if self._stopping:
            for signal in leftovers:  # stored already (accepted): whoever takes the thread runs them
                await self.store.add_pending(PendingSignal(key, _stored(key, signal), "accepted"))
            return True
        if leftovers and prev is not None:
            return bool(await self._start(key, prev.agent_id, leftovers, prev.options, prev.options_json,
                                          caller=prev.caller))
        # Signals accepted into a run that never stored them (its runner died, or its inbox closed
        # as they arrived) are orphans: the next run. Not those the ended run itself took in and
        # failed on: they wait for the next run (no retry loop on a signal that fails its run).
        seen = prev.inbox.taken if prev is not None and isinstance(prev.inbox, DurableInbox) else set()

        def orphans_of(pending: list[PendingSignal]) -> list[PendingSignal]:
            return [p for p in pending if is_accepted(p) and p.message.id not in seen]

        def runnable(pending: list[PendingSignal]) -> bool:
            """Whether a next run starts from ``pending`` (as below)."""
            if any(p.kind == "queued" for p in pending):
                return True
            orphans = orphans_of(pending)
            return bool(orphans) and bool(next((p.agent_id for p in orphans if p.agent_id),
                                               prev.agent_id if prev is not None else ""))

        if prev is not None and prev.lease is not None and prev.lease is self._handover.get(key):
            # The ended run's lease: released in the transaction that reads what is pending,
            # unless a next run takes it over (one transaction at a run's end, not two).
            pending, released = await self.store.release_lease_unless(prev.lease, runnable)
            if released:
                prev.lease = None
                del self._handover[key]
                return False
        else:
            pending = await self.store.list_pending(key)
        for queued in pending:
            if queued.kind != "queued":
                continue
            options = self._options_from_json(queued.options) if queued.options else None
            caller = self._queued_by.get(queued.message.id)
            try:
                started = await self._start(key, queued.agent_id, [signal_from_message(queued.message)], options,
                                            queued.options, taken=[queued.message.id], caller=caller)
            except ResourceExhaustedError:
                # Its credential (or the server) is at its run limit: the message stays queued
                # and its run starts when a run ends, as a caller retrying would.
                self._retry_when_freed(key)
                return True
            self._queued_by.pop(queued.message.id, None)
            return bool(started)
        orphans = orphans_of(pending)
        agent_id = next((p.agent_id for p in orphans if p.agent_id), prev.agent_id if prev is not None else "")
        if orphans and agent_id:
            try:
                return bool(await self._start(key, agent_id, [], prev.options if prev else None,
                                              prev.options_json if prev else None,
                                              caller=prev.caller if prev else None))
            except ResourceExhaustedError:
                self._retry_when_freed(key)
                return True
        return False

    async def _consumed_by(self, run: ActiveRun) -> None:
        """A store that does not consume signals with the messages that hold them (the in-memory
        one): what the run took in is consumed at its end."""
        if not getattr(self.store, "consumes_with_messages", False) and isinstance(run.inbox, DurableInbox):
            with contextlib.suppress(Exception):
                await self.store.remove_pending(run.inbox.taken)

    def _retry_when_freed(self, key: ThreadKey) -> None:
        if key in self._waiting_for_slot or self._stopping:
            return

        async def retry() -> None:
            try:
                await self.slots.run_freed()
            finally:
                self._waiting_for_slot.pop(key, None)
            try:
                if not self._stopping and not await self._resume(key):
                    await self._idle_hooks(key)
            except Exception:
                log.exception("could not start the queued run on thread %s", key)

        self._waiting_for_slot[key] = asyncio.create_task(retry(), name=f"queued run on {key} waits for a run slot")


async def _first(stream: AsyncGenerator[Chunk, None]) -> Chunk:
    return await stream.__anext__()


def _stored(key: ThreadKey, signal: Signal) -> Message:
    return signal.to_message(thread_id=key[1], resource_id=key[0])


__all__ = ["Accepted", "ActiveRun", "IfActive", "IfIdle", "RunInfo", "RunSlots", "Sent", "Target", "ThreadRuntime"]
