"""The attached processor streams, by processor id: routing, run affinity, failover, timeouts,
outlier ejection, state versions, drain and metrics (in the style of Envoy's ext_proc).

Several streams serving one processor id are replicas. A run stays on one replica while it
lives; when that stream goes away, its invocations still waiting for an answer are re-sent once,
in their original order and with the server's latest state, to another live replica (or fail
when there is none), and the run's next invocations go there too.

Outlier ejection, as Envoy's: a replica whose invocations fail ``threshold`` times in a row
(timeouts, error outcomes, malformed answers) is ejected for ``base_time`` times the number of
times it has been ejected. Runs move off it at once, with their state (the next invocation
carries it), and invocations it still owes are re-sent to another replica, as when a stream
closes. Once the time is up it is routable again, with a clean count. A stream that stays open
but answers nothing is ejected the same way.

The hub never decides what a failure means for a run: it raises ``ProcessorUnavailable`` and the
``RemoteProcessor`` applies the processor's failure policy.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import heapq
import itertools
import logging
import math
import time
import weakref
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from opentelemetry import metrics
from opentelemetry.metrics import Meter

from ..core.processor import SEED_NAMES
from ..v1 import processor_service_pb2 as pb
from ..v1 import remote_pb2
from ..wire.data import dict_to_struct
from ..wire.frames import varint

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 10.0
"""Seconds one hook invocation may take when the processor asks for nothing shorter."""
MAX_TIMEOUT = 60.0
"""No processor request may exceed this."""
OBSERVE_BACKLOG = 4096
"""Messages queued to a stream beyond which OBSERVE invocations are dropped, not queued: a slow
observer must not make the server buffer without bound."""
OBSERVE_GATHER = 0.001
"""Seconds an OBSERVE invocation may wait in an idle stream's queue for others to go with it
(nothing waits for its answer; a chunk stream's invocations then go out a few per write)."""

_COMPACT_MIN = 1024
"""Deadline entries kept before answered ones are compacted away (then: twice the live ones)."""

Mode = Literal["mutate", "observe"]
FailureKind = Literal["not_attached", "timeout", "disconnect", "draining"]


class ProcessorUnavailable(Exception):
    """The processor could not answer; ``kind`` says why (for metrics and span attributes)."""

    def __init__(self, reason: str, kind: FailureKind) -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind


@dataclass(frozen=True)
class Ejection:
    """Outlier ejection settings: ``threshold`` consecutive failures (0 disables it)."""

    threshold: int = 3
    base_time: float = 30.0


@dataclass(frozen=True)
class HookSettings:
    """One declared hook, with the effective settings the server accepted."""

    mode: Mode = "mutate"
    timeout: float = DEFAULT_TIMEOUT
    process_data_parts: bool = False
    windowed: bool = False
    max_window: int = 1
    max_in_flight: int = 1
    tool_names: frozenset[str] = frozenset()
    """Tool hooks and ``processToolResult``: the tools it is for (empty: all)."""


@dataclass
class Declaration:
    id: str
    name: str
    description: str
    hooks: dict[str, HookSettings]


class Outbound:
    """What the server sends on one stream, in order: invocations already serialized (``bytes``
    of an ``Invocation``), other messages, and None (end the stream). The one writer takes
    everything queued at once, so invocations that queued while a write was under way go out
    together."""

    def __init__(self) -> None:
        self._items: deque[bytes | pb.ProcessorServiceAttachResponse | None] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._timer: asyncio.TimerHandle | None = None

    def put_nowait(self, item: bytes | pb.ProcessorServiceAttachResponse | None) -> None:
        self._items.append(item)
        self._wake()

    def put_lazy(self, item: bytes) -> None:
        """Queue an OBSERVE invocation: an idle writer is woken within ``OBSERVE_GATHER``
        seconds (at once by anything queued with ``put_nowait``), not for each one."""
        self._items.append(item)
        if self._timer is None and self._waiter is not None:
            self._timer = asyncio.get_running_loop().call_later(OBSERVE_GATHER, self._wake)

    def _wake(self) -> None:
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def qsize(self) -> int:
        return len(self._items)

    async def take(self) -> list[bytes | pb.ProcessorServiceAttachResponse | None]:
        """Everything queued (at least one item), oldest first."""
        while not self._items:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        items = list(self._items)
        self._items.clear()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        return items


class Connection:
    """One attached stream. Everything sent goes through ``outbound`` (one writer)."""

    _numbers = itertools.count(1)

    def __init__(self, declarations: Mapping[str, Declaration], instance_id: str = "", version: int = 1) -> None:
        self.number = next(self._numbers)
        self.version = version
        """The protocol version negotiated in the handshake."""
        self.instance_id = instance_id or f"stream-{self.number}"
        self.declarations = dict(declarations)
        self.outbound = Outbound()
        self.pending: dict[str, Pending] = {}
        """Invocations awaiting an answer, in the order they were sent."""
        self.held: dict[str, dict[str, int]] = {}
        """run id -> processor id -> the state version this stream holds."""
        self.alive = True
        self.draining = False
        self.told_to_drain = False
        """A ``Drain`` went out on this stream (invocations for running runs still follow)."""
        self.failures = 0
        """Consecutive failed invocations (timeouts, errors, malformed answers)."""
        self.ejections = 0
        self.ejected_until = 0.0
        """While the hub's clock is before this, no run is routed here."""
        self.finished = asyncio.Event()
        self._ids = itertools.count(1)

    def next_id(self) -> str:
        return f"{self.number}.{next(self._ids)}"

    def send(self, message: pb.ProcessorServiceAttachResponse) -> None:
        self.outbound.put_nowait(message)

    def send_invocation(self, invocation: bytes) -> None:
        """Queue a serialized ``Invocation``."""
        self.outbound.put_nowait(invocation)

    def close(self) -> None:
        """Ask the writer to end the stream once what is queued has gone out."""
        self.outbound.put_nowait(None)


def body_of(invocation: pb.Invocation | bytes) -> bytes:
    """An invocation as the hub sends it: serialized, without ``invocation_id``, ``deadline``,
    ``timeout`` and ``state`` (the hub appends those per stream; a parser merges the two)."""
    if type(invocation) is bytes:
        return invocation
    assert isinstance(invocation, pb.Invocation)
    for name in ("invocation_id", "deadline", "timeout", "state"):
        invocation.ClearField(name)
    return invocation.SerializeToString()


@dataclass(eq=False, slots=True)
class Pending:
    """One MUTATE invocation awaiting its answer."""

    body: bytes
    """The serialized invocation without what the hub stamps (``body_of``)."""
    run_id: str
    processor_id: str
    hook: str
    state: dict[str, Any]
    timeout: float
    future: asyncio.Future[pb.InvocationResult] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    connection: Connection | None = None
    deadline: float = 0.0
    sent_at: float = 0.0
    moved: bool = False
    invocation_id: str = ""
    """Its id on the stream it was last sent to."""


@dataclass
class HookStat:
    """Answered invocations of one processor's hook since the server started."""

    count: int = 0
    total_ms: float = 0.0
    max_ms: float = 0.0
    timeouts: int = 0
    errors: int = 0


@dataclass
class _StateRecord:
    version: int = 0
    synced: dict[str, Any] = field(default_factory=dict)
    """A copy of the state at ``version``: tells changes made on the server side apart."""


def _field(name: str) -> bytes:
    return varint(pb.Invocation.DESCRIPTOR.fields_by_name[name].number << 3 | 2)


_ID_FIELD = _field("invocation_id")
_DEADLINE_FIELD = _field("deadline")
_TIMEOUT_FIELD = _field("timeout")


@functools.lru_cache(maxsize=256)
def _timeout_field(timeout: float) -> bytes:
    """``Invocation.timeout`` serialized (a hook's timeout is fixed: made once per value)."""
    d = pb.Invocation()
    d.timeout.seconds, d.timeout.nanos = divmod(int(timeout * 1e9), 1_000_000_000)
    return d.SerializeToString()


class ProcessorHub:
    def __init__(
        self, *, meter: Meter | None = None, default_timeout: float = DEFAULT_TIMEOUT,
        max_timeout: float = MAX_TIMEOUT, attach_wait: float = 0.0, server_id: str = "treadle",
        ejection: Ejection | None = None, clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ejection = ejection if ejection is not None else Ejection()
        self.clock = clock
        self.default_timeout = default_timeout
        self.max_timeout = max_timeout
        self.attach_wait = attach_wait
        self.max_invocation_bytes = (16 << 20) - 4096
        """The largest invocation an attach stream carries (the server's message size less the
        envelope); the app sets it from ``max_message_bytes``."""
        self.server_id = server_id
        self.draining = False
        self._replicas: dict[str, list[Connection]] = {}
        self._known: dict[str, Declaration] = {}
        """The last declaration seen per processor id, attached or not (which hooks count)."""
        self._affinity: dict[str, dict[str, Connection]] = {}
        self._states: dict[str, dict[str, _StateRecord]] = {}
        self._tracked: set[str] = set()
        self._attached = asyncio.Event()
        # Deadlines of the MUTATE invocations in flight, earliest first, swept by ONE timer armed
        # for the earliest (not one timer per invocation). Entries whose invocation was answered
        # stay until popped or compacted away; an entry whose invocation was re-sent is stale (the
        # re-send pushed a new one).
        self._deadlines: list[tuple[float, int, Pending]] = []
        self._deadline_seq = itertools.count()
        self._sweep_handle: asyncio.TimerHandle | None = None
        self._sweep_loop: asyncio.AbstractEventLoop | None = None
        self._sweep_at = math.inf
        self._compact_at = _COMPACT_MIN
        self._metric_attrs: dict[tuple[str, str], dict[str, str]] = {}
        self._outcome_attrs: dict[tuple[str, str, str], dict[str, str]] = {}
        self._deadline: tuple[int, bytes] = (0, b"")
        self.waiting = 0
        """Runs waiting for a processor to attach (observable for tests and health)."""
        m = meter if meter is not None else metrics.NoOpMeter("treadle")
        self.m_streams_started = m.create_counter("treadle.processor.streams_started", description="Attach streams accepted")
        self.m_streams_failed = m.create_counter("treadle.processor.streams_failed", description="Attach streams refused or ended by an error")
        self.m_invocations = m.create_counter("treadle.processor.invocations", description="Hook invocations, by outcome")
        self.m_timeouts = m.create_counter("treadle.processor.timeouts", description="Invocations that timed out")
        self.m_fail_open = m.create_counter("treadle.processor.fail_open_skips", description="Hooks skipped under fail_open")
        self.m_spurious = m.create_counter("treadle.processor.spurious_messages", description="Answers for unknown or cancelled invocations")
        self.m_ejections = m.create_counter("treadle.processor.ejections", description="Replicas ejected as outliers")
        self.m_latency = m.create_histogram("treadle.processor.latency", unit="ms", description="Invocation round trip")
        self.hook_stats: dict[tuple[str, str], HookStat] = {}
        """Per processor id and hook (seed name): what the console shows beside the metrics."""

    # --- attached streams ---------------------------------------------------------------------

    def effective_timeout(self, requested: float | None) -> float:
        return min(requested or self.default_timeout, self.max_timeout)

    def register(self, conn: Connection) -> None:
        for pid in conn.declarations:
            self._replicas.setdefault(pid, []).append(conn)
            self._known[pid] = conn.declarations[pid]
        self.m_streams_started.add(1)
        event, self._attached = self._attached, asyncio.Event()
        event.set()

    def unregister(self, conn: Connection, *, failed: bool) -> None:
        """The stream is gone: move or fail what it still owed. Safe to call twice."""
        if not conn.alive:
            return
        conn.alive = False
        if failed:
            self.m_streams_failed.add(1)
        for pid in conn.declarations:
            replicas = self._replicas.get(pid, [])
            if conn in replicas:
                replicas.remove(conn)
            if not replicas:
                self._replicas.pop(pid, None)
        owed = list(conn.pending.values())
        conn.pending.clear()
        for p in owed:  # in send order, so a run's invocations keep their order on the new stream
            if p.future.done():
                continue
            if not p.moved and not self.draining:
                try:
                    target = self._pick(p.processor_id, p.hook, p.run_id)
                except ProcessorUnavailable:
                    pass
                else:
                    p.moved = True
                    self._dispatch(target, p)
                    continue
            p.future.set_exception(ProcessorUnavailable(
                f"the stream of processor {p.processor_id} closed before it answered", "disconnect"))

    def declaration(self, processor_id: str) -> Declaration | None:
        """The declaration of a live replica (replicas normally declare the same hooks)."""
        for conn in self._replicas.get(processor_id, ()):
            if conn.alive and not conn.draining:
                return conn.declarations[processor_id]
        return None

    def known(self, processor_id: str) -> Declaration | None:
        """The declaration of a live replica, else the last one seen (None: never attached)."""
        return self.declaration(processor_id) or self._known.get(processor_id)

    def hook_settings(self, processor_id: str, hook: str) -> HookSettings | None:
        for conn in self._replicas.get(processor_id, ()):
            if conn.alive and not conn.draining and hook in conn.declarations[processor_id].hooks:
                return conn.declarations[processor_id].hooks[hook]
        return None

    async def wait_attached(self, processor_id: str, timeout: float) -> bool:
        """True once a replica of ``processor_id`` is attached; False after ``timeout`` seconds."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        self.waiting += 1
        try:
            while self.declaration(processor_id) is None:
                remaining = end - loop.time()
                if remaining <= 0:
                    return False
                try:
                    await asyncio.wait_for(self._attached.wait(), remaining)
                except TimeoutError:
                    return self.declaration(processor_id) is not None
            return True
        finally:
            self.waiting -= 1

    def connections(self) -> list[Connection]:
        seen: dict[int, Connection] = {}
        for conns in self._replicas.values():
            for c in conns:
                seen[c.number] = c
        return list(seen.values())

    # --- invocations --------------------------------------------------------------------------

    def send(
        self, processor_id: str, hook: str, invocation: pb.Invocation | bytes, *, run_id: str,
        state: dict[str, Any], timeout: float,
    ) -> Pending:
        """Send a MUTATE invocation now (synchronously: calls keep their order on the stream).
        ``invocation`` may be given serialized already (``body_of``)."""
        if self.draining:
            raise ProcessorUnavailable("the server is shutting down", "draining")
        conn = self._pick(processor_id, hook, run_id)
        p = Pending(body_of(invocation), run_id, processor_id, hook, state, timeout)
        self._dispatch(conn, p)
        return p

    async def wait(self, p: Pending) -> pb.InvocationResult:
        """The answer; raises ``ProcessorUnavailable`` on timeout or a stream lost for good.

        The deadline is enforced by the hub's sweep (``_sweep``), which fails the future; a
        re-send to another replica moves the deadline. Cancelling the waiter cancels the
        invocation.
        """
        try:
            return await p.future
        except asyncio.CancelledError:
            self._cancel(p, "run cancelled")
            raise

    def send_observe(
        self, processor_id: str, hook: str, invocation: pb.Invocation | bytes, *, run_id: str,
        state: dict[str, Any], timeout: float,
    ) -> bool:
        """Fire and forget; False when the invocation was dropped (backlog full). ``invocation``
        may be given serialized already (``body_of``)."""
        if self.draining:
            raise ProcessorUnavailable("the server is shutting down", "draining")
        conn = self._pick(processor_id, hook, run_id)
        if conn.outbound.qsize() >= OBSERVE_BACKLOG:
            return False
        _, stamp = self._stamp(conn, run_id, processor_id, state, timeout)
        conn.outbound.put_lazy(body_of(invocation) + stamp)
        return True

    def observe_route(
        self, processor_id: str, hook: str, *, run_id: str, state: dict[str, Any], timeout: float,
    ) -> Callable[[bytes], bool | None] | None:
        """``send_observe`` for many invocations of one run, processor and hook (one step's
        chunks): the replica is picked once, here, and each ``send(body)`` only stamps the
        invocation (id, deadline, timeout) and queues it. ``send`` answers True (queued), False
        (dropped: the backlog is full) or None when the route no longer holds (the replica went
        away, is ejected or draining, or the state must travel with the invocation): then
        ``send_observe`` decides, as for any invocation. None when there is no route now."""
        if self.draining:
            return None
        try:
            conn = self._pick(processor_id, hook, run_id)
        except ProcessorUnavailable:
            return None
        record = self._state_record(run_id, processor_id)
        held = conn.held.setdefault(run_id, {})
        version = record.version
        if state or record.synced or held.get(processor_id, 0) != version:
            return None  # the state travels: ``_stamp`` sends it
        prefix, ids = f"{conn.number}.".encode(), conn._ids  # the ids ``next_id`` makes
        tail = _timeout_field(timeout)
        outbound, items = conn.outbound, conn.outbound._items
        deadline = self._deadline_field

        def send(body: bytes) -> bool | None:
            if (not conn.alive or conn.draining or conn.ejected_until or self.draining or state
                    or held.get(processor_id, 0) != version):
                return None
            if len(items) >= OBSERVE_BACKLOG:
                return False
            ident = prefix + str(next(ids)).encode()
            outbound.put_lazy(body + _ID_FIELD + varint(len(ident)) + ident + deadline(timeout) + tail)
            return True

        return send

    def resolve(self, conn: Connection, result: pb.InvocationResult) -> None:
        """An answer arrived on ``conn`` (called by its one reader)."""
        p = conn.pending.pop(result.invocation_id, None)
        if p is None or p.future.done():
            self.m_spurious.add(1)
            return
        ms = (time.monotonic() - p.sent_at) * 1000
        self.m_latency.record(ms, self._attrs(p.processor_id, p.hook))
        stat = self._stat(p.processor_id, p.hook)
        stat.count, stat.total_ms, stat.max_ms = stat.count + 1, stat.total_ms + ms, max(stat.max_ms, ms)
        if result.WhichOneof("outcome") == "error":
            stat.errors += 1
            self.failed(conn)
        else:
            conn.failures = 0
        p.future.set_result(result)

    def record(self, processor_id: str, hook: str, outcome: str, n: int = 1) -> None:
        key = (processor_id, hook, outcome)
        attrs = self._outcome_attrs.get(key)
        if attrs is None:  # built once per processor, hook and outcome (they are read, not kept)
            if len(self._outcome_attrs) > 4096:  # ids come from attached processes: stay bounded
                self._outcome_attrs.clear()
            attrs = self._outcome_attrs[key] = {"processor": processor_id, "hook": hook, "outcome": outcome}
        self.m_invocations.add(n, attrs)

    def _stat(self, processor_id: str, hook: str) -> HookStat:
        key = (processor_id, SEED_NAMES[hook])
        stat = self.hook_stats.get(key)
        if stat is None:
            if len(self.hook_stats) > 4096:  # ids come from attached processes: stay bounded
                self.hook_stats.clear()
            stat = self.hook_stats[key] = HookStat()
        return stat

    def _attrs(self, processor_id: str, hook: str) -> dict[str, str]:
        """The metric attributes of one processor's hook, built once (they are read, not kept)."""
        key = (processor_id, hook)
        attrs = self._metric_attrs.get(key)
        if attrs is None:
            if len(self._metric_attrs) > 4096:  # ids come from attached processes: stay bounded
                self._metric_attrs.clear()
            attrs = self._metric_attrs[key] = {"processor": processor_id, "hook": SEED_NAMES[hook]}
        return attrs

    # --- outlier ejection ---------------------------------------------------------------------

    def failed(self, conn: Connection | None) -> None:
        """One more failed invocation on ``conn``; ejects it at the threshold."""
        if conn is None or not conn.alive:
            return
        conn.failures += 1
        if self.ejection.threshold and conn.failures >= self.ejection.threshold and not self.ejected(conn):
            self._eject(conn)

    def ejected(self, conn: Connection) -> bool:
        if conn.ejected_until and self.clock() >= conn.ejected_until:
            conn.ejected_until, conn.failures = 0.0, 0  # its time is up: routable, a clean count
        return conn.ejected_until > 0

    def _eject(self, conn: Connection) -> None:
        conn.ejections += 1
        conn.ejected_until = self.clock() + self.ejection.base_time * conn.ejections
        for pid in conn.declarations:
            self.m_ejections.add(1, {"processor": pid})
        log.warning("processor stream %s ejected for %gs after %d failures in a row",
                    conn.instance_id, self.ejection.base_time * conn.ejections, conn.failures)
        for runs in self._affinity.values():  # their next invocations go elsewhere
            for pid, c in list(runs.items()):
                if c is conn:
                    del runs[pid]
        owed = [p for p in conn.pending.values() if not p.future.done()]
        for p in owed:  # in send order: what it still owes is asked of another replica
            try:
                target = self._pick(p.processor_id, p.hook, p.run_id)
            except ProcessorUnavailable:
                continue  # no one else: it may still answer in time
            self._cancel(p, "replica ejected")
            p.moved = True
            self._dispatch(target, p)

    def _pick(self, processor_id: str, hook: str, run_id: str) -> Connection:
        runs = self._affinity.get(run_id)
        current = runs.get(processor_id) if runs is not None else None
        if (current is not None and current.alive and not current.draining
                and hook in current.declarations[processor_id].hooks and not self.ejected(current)):
            return current  # the run's replica serves it still (what follows would choose it)
        serving = [c for c in self._replicas.get(processor_id, ())
                   if c.alive and not c.draining and hook in c.declarations[processor_id].hooks]
        live = [c for c in serving if not self.ejected(c)]
        if serving and not live:
            raise ProcessorUnavailable(f"every replica of {processor_id} is ejected (not answering)", "not_attached")
        if not live:
            if self.declaration(processor_id) is None:
                raise ProcessorUnavailable(f"processor {processor_id} is not attached", "not_attached")
            raise ProcessorUnavailable(f"no attached replica of {processor_id} declares {hook}", "not_attached")
        runs = self._affinity.setdefault(run_id, {})
        current = runs.get(processor_id)
        if current in live:
            return current  # type: ignore[return-value]
        chosen = min(live, key=lambda c: len(c.pending) + sum(len(v) for v in c.held.values()))
        runs[processor_id] = chosen
        return chosen

    def _dispatch(self, conn: Connection, p: Pending) -> None:
        loop = asyncio.get_running_loop()
        p.invocation_id, stamp = self._stamp(conn, p.run_id, p.processor_id, p.state, p.timeout)
        p.connection, p.sent_at, p.deadline = conn, time.monotonic(), loop.time() + p.timeout
        conn.pending[p.invocation_id] = p
        conn.send_invocation(p.body + stamp)
        self._arm(loop, p)

    def _stamp(self, conn: Connection, run_id: str, processor_id: str, state: dict[str, Any],
               timeout: float) -> tuple[str, bytes]:
        """The invocation's id on ``conn`` and the serialized fields to append to its body: the
        id, deadline, timeout and, when the stream does not hold its latest version, the state."""
        invocation_id = conn.next_id()
        ident = invocation_id.encode()
        # Built from bytes (the fields are few and fixed): the id, the wall-clock deadline (a
        # Timestamp), the timeout (a Duration, the same for every invocation of a hook).
        out = b"".join((_ID_FIELD, varint(len(ident)), ident, self._deadline_field(timeout), _timeout_field(timeout)))
        record = self._state_record(run_id, processor_id)
        if state != record.synced:  # changed on the server's side since the last sync
            record.version += 1
            record.synced = copy.deepcopy(state)
        held = conn.held.get(run_id)
        if held is None:
            held = conn.held[run_id] = {}
        if held.get(processor_id, 0) != record.version:
            held[processor_id] = record.version
            inv = pb.Invocation()
            inv.state.version = record.version
            dict_to_struct(state, inv.state.value)
            out += inv.SerializeToString()
        return invocation_id, out

    def _state_record(self, run_id: str, processor_id: str) -> _StateRecord:
        """The run's state record for the processor (made on first use, not on every lookup)."""
        records = self._states.get(run_id)
        if records is None:
            records = self._states[run_id] = {}
        record = records.get(processor_id)
        if record is None:
            record = records[processor_id] = _StateRecord()
        return record

    def _deadline_field(self, timeout: float) -> bytes:
        """``Invocation.deadline`` serialized: now plus ``timeout``, to the millisecond (made
        once per millisecond and timeout, however many invocations go out in it)."""
        ms = time.time_ns() // 1_000_000 + int(timeout * 1000)
        cached = self._deadline
        if cached[0] == ms:
            return cached[1]
        seconds, millis = divmod(ms, 1000)
        ts = b"\x08" + varint(seconds) + (b"\x10" + varint(millis * 1_000_000) if millis else b"")
        field = _DEADLINE_FIELD + varint(len(ts)) + ts
        self._deadline = (ms, field)
        return field

    # --- deadlines: one timer for all invocations in flight -----------------------------------

    def _arm(self, loop: asyncio.AbstractEventLoop, p: Pending) -> None:
        heapq.heappush(self._deadlines, (p.deadline, next(self._deadline_seq), p))
        if len(self._deadlines) >= self._compact_at:
            self._deadlines = [e for e in self._deadlines if not e[2].future.done() and e[0] == e[2].deadline]
            heapq.heapify(self._deadlines)
            self._compact_at = max(_COMPACT_MIN, 2 * len(self._deadlines))
        if p.deadline < self._sweep_at or self._sweep_loop is not loop:
            if self._sweep_handle is not None:
                self._sweep_handle.cancel()
            self._sweep_at = min(p.deadline, self._deadlines[0][0])
            self._sweep_loop, self._sweep_handle = loop, loop.call_at(self._sweep_at, self._sweep)

    def _sweep(self) -> None:
        """Time out every invocation past its deadline, then re-arm for the next one."""
        loop = asyncio.get_running_loop()
        self._sweep_handle, self._sweep_at = None, math.inf
        now = loop.time()
        heap = self._deadlines
        while heap and heap[0][0] <= now:
            deadline, _, p = heapq.heappop(heap)
            if p.future.done() or deadline != p.deadline:
                continue  # answered, cancelled, failed, or re-sent with a later deadline
            for q in self._behind(p):  # one wait per hung invocation, however many queue behind it
                self._cancel(q, "timed out")
                self.m_timeouts.add(1, {"processor": q.processor_id, "hook": SEED_NAMES[q.hook]})
                self._stat(q.processor_id, q.hook).timeouts += 1
                q.future.set_exception(ProcessorUnavailable(f"no answer within {p.timeout:g}s (timed out)", "timeout"))
            self.failed(p.connection)
        while heap and (heap[0][2].future.done() or heap[0][0] != heap[0][2].deadline):
            heapq.heappop(heap)  # answered: arm for the earliest invocation still owed an answer
        if heap:
            self._sweep_at = heap[0][0]
            self._sweep_loop, self._sweep_handle = loop, loop.call_at(self._sweep_at, self._sweep)

    def _behind(self, p: Pending) -> list[Pending]:
        """``p`` and the invocations of its run and processor sent after it on the same stream:
        a process answers one run's invocations of a processor in order, so none of them can be
        answered before ``p``, and each waiting out its own deadline would cost one more timeout."""
        conn = p.connection
        if conn is None:
            return [p]
        later, seen = [p], False
        for q in conn.pending.values():
            if q is p:
                seen = True
            elif (seen and not q.future.done() and q.run_id == p.run_id and q.processor_id == p.processor_id
                  and q.hook == p.hook):
                later.append(q)
        return later

    def _cancel(self, p: Pending, reason: str) -> None:
        conn = p.connection
        if conn is not None and conn.pending.pop(p.invocation_id, None) is not None and conn.alive:
            conn.send(pb.ProcessorServiceAttachResponse(
                cancel=remote_pb2.CancelInvocation(invocation_id=p.invocation_id, reason=reason)))

    # --- state --------------------------------------------------------------------------------

    def state_received(
        self, conn: Connection | None, run_id: str, processor_id: str, state: dict[str, Any],
        value: dict[str, Any], reported_version: int,
    ) -> None:
        """Apply a state an answer carried to the run's state object, in answer order."""
        record = self._state_record(run_id, processor_id)
        record.version = max(record.version + 1, reported_version)
        state.clear()
        state.update(value)
        record.synced = copy.deepcopy(value)
        if conn is not None and conn.alive:
            held = conn.held.setdefault(run_id, {})
            if reported_version == record.version:
                held[processor_id] = record.version
            else:  # the process numbers differently: resend next time rather than guess
                held.pop(processor_id, None)

    def track_run(self, run_id: str, anchor: Any) -> None:
        """Forget the run's affinity and state versions once ``anchor`` (an object that lives as
        long as the run, e.g. its abort signal) is collected."""
        if run_id in self._tracked or anchor is None:
            return
        try:
            weakref.finalize(anchor, self.forget_run, run_id)
        except TypeError:
            return
        self._tracked.add(run_id)

    def forget_run(self, run_id: str) -> None:
        """Drop the run's affinity and state, and tell the streams that served it."""
        self._tracked.discard(run_id)
        served = set(self._affinity.pop(run_id, {}).values())
        self._states.pop(run_id, None)
        for conn in self.connections():
            if conn.held.pop(run_id, None) is not None:
                served.add(conn)
        for conn in served:
            if conn.alive:
                conn.send(pb.ProcessorServiceAttachResponse(run_ended=pb.RunEnded(run_id=run_id)))

    # --- shutdown -----------------------------------------------------------------------------

    def announce_drain(self, grace: float) -> None:
        """Shutdown has begun: tell every attached stream at once, with the grace the runs still
        have. Nothing is refused yet: the running runs' invocations keep coming until they end."""
        for conn in self.connections():
            self._tell_drain(conn, grace)

    def _tell_drain(self, conn: Connection, grace: float) -> None:
        if not conn.told_to_drain and conn.alive:
            conn.told_to_drain = True
            conn.send(pb.ProcessorServiceAttachResponse(drain=remote_pb2.Drain(grace_ms=int(grace * 1000))))

    async def drain(self, grace: float) -> None:
        """Send ``Drain`` (to streams not told yet), refuse new invocations, wait up to ``grace``
        for answers owed, then end every stream (status OK)."""
        self.draining = True
        conns = self.connections()
        for conn in conns:
            conn.draining = True
            self._tell_drain(conn, grace)
        owed = [p.future for c in conns for p in c.pending.values() if not p.future.done()]
        if owed:
            await asyncio.wait(owed, timeout=grace)
        for conn in conns:
            conn.close()
        if conns:
            await asyncio.wait([asyncio.ensure_future(c.finished.wait()) for c in conns], timeout=max(grace, 1.0))
