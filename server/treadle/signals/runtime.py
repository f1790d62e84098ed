"""The thread runtime: at most one run per thread, signals routed into it or waking it.

A signal for a thread that has an active run is, by ``if_active``, handed to that run's inbox
(``deliver``: the loop takes it in at its next step boundary), stored for the next run
(``persist``) or dropped (``discard``). For an idle thread, ``if_idle`` starts a run of the
request's agent with the signal as its input (``wake``), stores it, or drops it. Every chunk of
every run is published to the thread's subscribers.

State changes of a thread (reserving it for a run, ending a run and starting the next one) hold
the thread's lock; delivering to an open inbox needs none, since it cannot wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast

from ..agents import Agent, CallOptions, MemoryOptions, RunRequest
from ..core.chunks import AbortPayload, Chunk
from ..core.errors import InvalidArgumentError, NotFoundError, ShuttingDownError
from ..loop import AgentLoop
from ..loop.inbox import Inbox
from ..core.messages import Message, new_id, utcnow
from .hub import ActiveRunChanged, Subscription, ThreadHub
from .signal import Signal, signal_from_message
from .store import PendingSignal, SignalStore, ThreadKey

log = logging.getLogger(__name__)

Action = Literal["wake", "deliver", "persist", "discard"]


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
    inbox: Inbox = field(default_factory=Inbox)
    options: CallOptions | None = None
    options_json: dict[str, Any] | None = None
    task: asyncio.Task[None] | None = None


OnIdle = Callable[[ThreadKey], Any]


class ThreadRuntime:
    def __init__(
        self,
        loop: AgentLoop,
        agents: Callable[[str], Agent],
        store: SignalStore,
        *,
        options_from_json: Callable[[dict[str, Any]], CallOptions] | None = None,
    ) -> None:
        self.loop = loop
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
        self._tasks: set[asyncio.Task[None]] = set()
        """Every run task until it has fully ended (its end also starts the next run)."""
        self.on_idle: list[OnIdle] = []
        """Called (and awaited when async) after a thread's last run ended and nothing follows."""

    # --- queries ------------------------------------------------------------------------------

    def active_run(self, key: ThreadKey) -> ActiveRun | None:
        return self._active.get(key)

    def agent(self, agent_id: str) -> Agent:
        """The agent a wake would run (NotFoundError when unknown)."""
        return self._agents(agent_id)

    def active_run_by_id(self, run_id: str) -> ActiveRun | None:
        return self._by_run.get(run_id)

    def subscribe(self, key: ThreadKey) -> Subscription:
        return self.hub.subscribe(key)

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
        key, run = self._route(target)
        if run is None or run.inbox.closed:
            async with self._locks[key]:
                run = self._active.get(key)
                if run is None:
                    return await self._idle_path(key, target, signal, if_idle)
        return await self._active_path(key, run, target, signal, if_active)

    async def queue(
        self, target: Target, signal: Signal, if_active: IfActive | None = None,
        if_idle: IfIdle | None = None,
    ) -> Sent:
        """Run ``signal`` as its own run after the active one ends; at once when idle."""
        if_active, if_idle = if_active or IfActive(), if_idle or IfIdle()
        key, _ = self._route(target)
        async with self._locks[key]:
            run = self._active.get(key)
            if run is None:
                return await self._idle_path(key, target, signal, replace(if_idle, behavior="wake"))
            agent_id = target.agent_id or run.agent_id
            self._agents(agent_id)  # NOT_FOUND now rather than when the run ends
            signal.with_attributes(if_active.attributes)
            await self.store.add_pending(PendingSignal(
                key, _stored(key, signal), "queued", agent_id=agent_id, options=if_idle.options_json,
            ))
            return Sent(Accepted("persist"), signal)

    async def stream(self, agent: Agent, request: RunRequest) -> AsyncIterator[Chunk]:
        """A caller's own run on a thread (``AgentService.Stream`` with memory): its chunks go to
        the caller and to the thread's subscribers, and, when the thread was idle, it is the
        thread's active run, so signals reach it. On a running thread it runs beside that run."""
        memory = request.options.merged_over(agent.default_options).memory
        if memory is None:
            async for chunk in self.loop.stream(agent, request):
                yield chunk
            return
        key: ThreadKey = (memory.resource, memory.thread)
        run: ActiveRun | None = None
        async with self._locks[key]:
            if key not in self._active and not self._stopping:
                run = ActiveRun(request.run_id or new_id("run"), agent.id, key, options=request.options)
                request = replace(request, run_id=run.run_id, inbox=run.inbox)
                self._active[key], self._by_run[run.run_id] = run, run
                self._idle.clear()
        started = False
        try:
            async for chunk in self.loop.stream(agent, request):
                if run is not None and not started:
                    self.hub.publish(key, ActiveRunChanged(run.run_id, agent.id))
                started = True
                self.hub.publish(key, chunk)
                yield chunk
        finally:
            if run is not None:
                await self._finish(run)

    async def abort(self, target: Target) -> str:
        """Abort the targeted run; returns its id, or "" when nothing was running."""
        _, run = self._route(target, must_exist=False)
        if run is None or run.task is None or run.inbox.closed:
            return ""  # not running, or already ending
        run.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(run.task)
        return run.run_id

    async def stop(self) -> None:
        """Server shutdown: end every active run; queued and persisted signals stay stored."""
        self._stopping = True
        for run in list(self._active.values()):
            if run.task is not None and not run.inbox.closed:
                run.task.cancel()
        while self._tasks:  # ending runs may still be storing what they leave behind
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def recover(self) -> None:
        """After a restart: start the queued runs that no run took before the server stopped."""
        seen: set[ThreadKey] = set()
        for pending in await self.store.list_pending():
            if pending.kind == "queued" and pending.key not in seen:
                seen.add(pending.key)
                async with self._locks[pending.key]:
                    if pending.key not in self._active:
                        await self._start_next(pending.key, None, [])

    # --- routing ------------------------------------------------------------------------------

    def _route(self, target: Target, *, must_exist: bool = True) -> tuple[ThreadKey, ActiveRun | None]:
        if target.run_id:
            run = self._by_run.get(target.run_id)
            if run is None:
                if must_exist:
                    raise NotFoundError(f"run {target.run_id!r} is not active on this server")
                return ("", ""), None
            return run.key, run
        if not target.resource_id or not target.thread_id:
            raise InvalidArgumentError(
                "give run_id, or resource_id and thread_id together (a thread belongs to a resource)"
            )
        key = (target.resource_id, target.thread_id)
        return key, self._active.get(key)

    async def _active_path(
        self, key: ThreadKey, run: ActiveRun, target: Target, signal: Signal, if_active: IfActive
    ) -> Sent:
        signal.with_attributes(if_active.attributes)
        if if_active.behavior == "deliver":
            self._deliver(run, signal)
            return Sent(Accepted("deliver", run.run_id), signal)
        if if_active.behavior == "persist":
            signal.to_message()  # the rendering is checked before anything is stored
            await self.store.add_pending(PendingSignal(key, _stored(key, signal), "persisted", agent_id=run.agent_id))
            return Sent(Accepted("persist"), signal)
        return Sent(Accepted("discard"), signal)

    async def _idle_path(self, key: ThreadKey, target: Target, signal: Signal, if_idle: IfIdle) -> Sent:
        """Called with the thread's lock held."""
        signal.with_attributes(if_idle.attributes)
        if if_idle.behavior == "wake":
            run_id = await self._start(
                key, target.agent_id, [signal], if_idle.stream_options, if_idle.options_json
            )
            return Sent(Accepted("wake", run_id), signal)
        if if_idle.behavior == "persist":
            signal.to_message()
            await self.store.add_pending(PendingSignal(key, _stored(key, signal), "persisted", agent_id=target.agent_id))
            return Sent(Accepted("persist"), signal)
        return Sent(Accepted("discard"), signal)

    def _deliver(self, run: ActiveRun, signal: Signal) -> None:
        signal.accepted_at = utcnow()
        message = signal.to_message(thread_id=run.key[1], resource_id=run.key[0])
        if not run.inbox.put(message, signal.to_chunk(run.run_id)):  # pragma: no cover - guarded
            raise RuntimeError("delivery to an ended run")

    # --- runs ---------------------------------------------------------------------------------

    async def _start(
        self, key: ThreadKey, agent_id: str, signals: list[Signal], options: CallOptions | None,
        options_json: dict[str, Any] | None, taken: list[str] | None = None,
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
        persisted = [p for p in await self.store.list_pending(key) if p.kind == "persisted"]
        run = ActiveRun(new_id("run"), agent_id, key, options=options, options_json=options_json)
        for signal in [*(signal_from_message(p.message) for p in persisted), *signals]:
            self._deliver(run, signal)
        opts = replace(options or CallOptions(), memory=MemoryOptions(resource=key[0], thread=key[1]))
        request = RunRequest(messages=[], options=opts, run_id=run.run_id, inbox=run.inbox)
        stream = cast(AsyncGenerator[Chunk, None], self.loop.stream(agent, request))
        try:
            first = await stream.__anext__()  # the plan is checked before the first chunk
        except BaseException:
            await stream.aclose()
            raise
        self._active[key], self._by_run[run.run_id] = run, run
        self._idle.clear()
        await self.store.remove_pending([p.message.id for p in persisted] + (taken or []))
        self.hub.publish(key, ActiveRunChanged(run.run_id, agent_id))
        run.task = asyncio.create_task(self._drive(run, stream, first), name=f"run {run.run_id}")
        self._tasks.add(run.task)
        run.task.add_done_callback(self._tasks.discard)
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
        async with self._locks[run.key]:
            self._active.pop(run.key, None)
            self._by_run.pop(run.run_id, None)
            self.hub.publish(run.key, ActiveRunChanged())
            signals = [signal_from_message(d.message) for d in leftovers]
            try:
                started = await self._start_next(run.key, run, signals)
            except Exception:
                log.exception("could not start the next run on thread %s", run.key)
                for signal in signals:
                    await self.store.add_pending(PendingSignal(run.key, _stored(run.key, signal), "persisted"))
                started = False
        if not started and not self._stopping:
            for hook in self.on_idle:
                try:
                    result = hook(run.key)
                    if asyncio.iscoroutine(result):
                        await result
                except Exception:
                    log.exception("on_idle hook failed for thread %s", run.key)
        if not self._active:
            self._idle.set()

    async def _start_next(self, key: ThreadKey, prev: ActiveRun | None, leftovers: list[Signal]) -> bool:
        """Signals the ended run never took first (one run), then the oldest queued message."""
        if self._stopping:
            for signal in leftovers:
                await self.store.add_pending(PendingSignal(key, _stored(key, signal), "persisted"))
            return True
        if leftovers and prev is not None:
            await self._start(key, prev.agent_id, leftovers, prev.options, prev.options_json)
            return True
        for pending in await self.store.list_pending(key):
            if pending.kind != "queued":
                continue
            options = self._options_from_json(pending.options) if pending.options else None
            await self._start(key, pending.agent_id, [signal_from_message(pending.message)], options,
                              pending.options, taken=[pending.message.id])
            return True
        return False


def _stored(key: ThreadKey, signal: Signal) -> Message:
    return signal.to_message(thread_id=key[1], resource_id=key[0])


__all__ = ["Accepted", "ActiveRun", "IfActive", "IfIdle", "Sent", "Target", "ThreadRuntime"]
