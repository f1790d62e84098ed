"""``RemoteProcessor``: a processor whose hooks run in another process, over ``ProcessorHub``.

It implements the same protocol as an in-process processor, so the loop never asks which kind it
has. One instance serves one ``ProcessorRef`` (id, failure policy, timeout cap) of one run plan.

Failures (not attached, timeout, disconnect with no other replica, malformed answer) follow the
ref's policy: ``fail_closed`` raises ``ProcessorUnavailableError`` naming processor and hook;
``fail_open`` returns "unchanged" for that hook and records the skip on the hook's span and in
metrics. An ``ErrorOutcome`` is an ordinary hook failure (the per-hook rules apply).

``processOutputStream`` under ``fail_open`` loses no text: chunks a processor held back (answered
with no chunks, protocol version 2) and had not released when it failed pass on unprocessed, in
order, ahead of the first chunk that passes because of the failure; the skip's ``count`` includes
them. One WARNING per run and processor, when the run ends, sums up the skips.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections import deque
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace

from ..agents import ProcessorRef
from ..core.chunks import Chunk, SkippedProcessor, StreamResult
from ..core.errors import InvalidArgumentError, ProcessorUnavailableError, TripwireError
from ..core.args import ProcessOutputStreamArgs
from ..core.processor import SEED_NAMES, ProcessorViolation
from ..v1 import processor_service_pb2 as pb
from ..wire.data import py_to_value
from ..wire.server_hooks import (
    DecodedResult,
    MalformedResultError,
    RemoteHookError,
    apply_result,
    chunk_bytes,
    decode_result,
    emit_custom_chunks,
    encode_invocation,
    encode_stream_body,
    encode_stream_one,
    stream_envelope,
    stream_outcomes,
)
from .processor_hub import HookSettings, Pending, ProcessorHub, ProcessorUnavailable

log = logging.getLogger(__name__)

STREAM = "process_output_stream"
SKIP_ATTR = "treadle.processor.fail_open_skip"
SKIP_REASON_ATTR = "treadle.processor.fail_open_reason"


class RemoteProcessor:
    def __init__(self, ref: ProcessorRef, hub: ProcessorHub) -> None:
        self.id = ref.id
        self.name = ref.id
        self.ref = ref
        self.hub = hub
        self._waited = False
        self._pipes: dict[str, _StreamPipe] = {}
        self._skips: dict[tuple[str, str], SkippedProcessor] = {}
        """(hook, reason) -> the fail_open skips of this run."""
        self._last: Any = None
        """The last hook args of this run, whose run identity an ``onViolation`` invocation reuses."""
        self._held: dict[str, list[Chunk]] = {}
        """run id -> the chunks the processor answered with "hold" and has not released since."""
        self._envelope: tuple[Any, Any, Any, int, bytes] | None = None
        """The serialized ``processOutputStream`` envelope of the current step, and what it was
        made from (the step's run identity, retry count, request and trace contexts)."""

    # --- what the runner asks -----------------------------------------------------------------

    def end_run(self, run_id: str) -> None:
        """The run is over: free its affinity and state here and in the processes that served it."""
        self.hub.forget_run(run_id)
        self._held.pop(run_id, None)
        if self._skips:  # one line per run and processor, however many chunks were skipped
            log.warning("fail_open: run %s went on without %s: %s", run_id, self.id, "; ".join(
                f"{s.hook} skipped {s.count}x ({s.reason}: {s.message})" for s in self._skips.values()))

    def implements_hook(self, hook: str) -> bool:
        """Declared hooks only (as last declared, while no replica is attached); every hook of a
        processor never attached, so the policy applies at once."""
        declaration = self.hub.known(self.id)
        return True if declaration is None else hook in declaration.hooks

    def skipped_processors(self) -> list[SkippedProcessor]:
        """The hooks this run skipped under ``fail_open``, one entry per hook and reason."""
        return [SkippedProcessor(s.processor_id, s.hook, s.reason, s.count, s.message) for s in self._skips.values()]

    @property
    def process_data_parts(self) -> bool:
        s = self.hub.hook_settings(self.id, STREAM)
        return bool(s and s.process_data_parts)

    def pipelined(self) -> bool:
        """True when ``processOutputStream`` is windowed or may have several chunks in flight."""
        s = self.hub.hook_settings(self.id, STREAM)
        return bool(s and s.mode == "mutate" and (s.windowed or s.max_in_flight > 1))

    # --- the nine hooks -----------------------------------------------------------------------

    async def process_input(self, args: Any) -> Any:
        """Runs ``processInput`` remotely."""
        return await self._call("process_input", args)

    async def process_input_step(self, args: Any) -> Any:
        """Runs ``processInputStep`` remotely."""
        return await self._call("process_input_step", args)

    async def process_llm_request(self, args: Any) -> Any:
        """Runs ``processLLMRequest`` remotely."""
        return await self._call("process_llm_request", args)

    async def process_llm_response(self, args: Any) -> Any:
        """Runs ``processLLMResponse`` remotely."""
        return await self._call("process_llm_response", args)

    async def process_api_error(self, args: Any) -> Any:
        """Runs ``processAPIError`` remotely."""
        return await self._call("process_api_error", args)

    async def process_output_stream(self, args: ProcessOutputStreamArgs) -> StreamResult:
        """Runs ``processOutputStream`` remotely on one chunk, lock-step (OBSERVE: sent, not
        awaited)."""
        return await self._call(STREAM, args)  # type: ignore[no-any-return]

    def _stream_body(self, parts: list[ProcessOutputStreamArgs]) -> bytes:
        """The serialized invocation of ``parts`` (one step's chunks): the step's envelope, made
        once per step, and the chunks, each built and serialized once."""
        return encode_stream_body(self._stream_envelope(parts[0]), [a.part for a in parts])

    def _stream_envelope(self, first: ProcessOutputStreamArgs) -> bytes:
        c = self._envelope
        # Identity, not equality: within a step the runner hands every chunk the same objects.
        if (c is None or c[0] is not first.run or c[1] is not first.tracing_context
                or c[2] is not first.request_context or c[3] != first.retry_count):
            c = self._envelope = (first.run, first.tracing_context, first.request_context, first.retry_count,
                                  stream_envelope(first, processor_id=self.id))
        return c[4]

    def stream_observer(self, args: ProcessOutputStreamArgs) -> StreamObserver | None:
        """The fast path of an OBSERVE ``processOutputStream`` for the step ``args`` belongs to
        (every field but ``part`` is the step's): None unless the hook is OBSERVE on an attached
        replica. Each chunk then costs its invocation's bytes and a queue append: no task, nothing
        awaited, the replica picked once (``ProcessorHub.observe_route``)."""
        s = self.hub.hook_settings(self.id, STREAM)
        if s is None or s.mode != "observe":
            return None
        run_id = args.run.run_id
        route = self.hub.observe_route(self.id, STREAM, run_id=run_id, state=args.state, timeout=self._timeout(s))
        if route is None:
            return None
        self._last = args
        self.hub.track_run(run_id, args.abort_signal)
        return StreamObserver(self, self._stream_envelope(args), route)

    async def process_output_step(self, args: Any) -> Any:
        """Runs ``processOutputStep`` remotely."""
        return await self._call("process_output_step", args)

    async def process_tool_result(self, args: Any) -> Any:
        """Runs ``processToolResult`` remotely."""
        return await self._call("process_tool_result", args)

    async def process_output_result(self, args: Any) -> Any:
        """Runs ``processOutputResult`` remotely."""
        return await self._call("process_output_result", args)

    async def before_tool_call(self, args: Any) -> Any:
        """Runs ``beforeToolCall`` remotely."""
        return await self._call("before_tool_call", args)

    async def after_tool_call(self, args: Any) -> Any:
        """Runs ``afterToolCall`` remotely."""
        return await self._call("after_tool_call", args)

    async def on_delegation_start(self, args: Any) -> Any:
        """Runs ``onDelegationStart`` remotely."""
        return await self._call("on_delegation_start", args)

    async def on_delegation_complete(self, args: Any) -> Any:
        """Runs ``onDelegationComplete`` remotely."""
        return await self._call("on_delegation_complete", args)

    async def transform_tool_payload(self, args: Any) -> Any:
        """Runs ``transformToolPayload`` remotely."""
        return await self._call("transform_tool_payload", args)

    async def resolve_agent(self, args: Any) -> Any:
        """Runs ``resolveAgent`` remotely: the agent goes in its proto form, the overrides come
        back as domain values (a malformed one fails the hook under the failure policy)."""
        from .convert import agent_to_proto
        from .variant_convert import overrides_from_proto

        answer = await self._call("resolve_agent", dataclasses.replace(args, agent=agent_to_proto(args.agent)))
        if answer is None:
            return None
        try:
            return overrides_from_proto(answer, "agent_overrides")
        except InvalidArgumentError as e:
            return self._fail("resolve_agent", args, f"malformed answer: {e}", "malformed")

    async def on_violation(self, violation: ProcessorViolation) -> None:
        """Sends ``onViolation`` when the process declared it: always fire and forget, and a
        processor that cannot be reached misses it (the run is over; the policy does not apply)."""
        last = self._last
        s = self.hub.hook_settings(self.id, "on_violation")
        if s is None or last is None:
            return
        run = last.run
        inv = pb.Invocation(
            processor_id=self.id, hook=pb.HOOK_ON_VIOLATION, run_id=run.run_id, agent_id=run.agent_id,
            thread_id=run.thread_id, resource_id=run.resource_id, step_number=run.step_number,
            retry_count=last.retry_count, processor_index=run.processor_index,
        )
        args = inv.on_violation
        args.processor_id, args.message = violation.processor_id, violation.message
        args.hook = SEED_NAMES.get(violation.hook, violation.hook)
        if violation.detail is not None:
            py_to_value(violation.detail, args.detail)
        try:
            sent = self.hub.send_observe(self.id, "on_violation", inv, run_id=run.run_id, state=last.state,
                                         timeout=self._timeout(s))
        except ProcessorUnavailable:
            sent = False
        self.hub.record(self.id, SEED_NAMES["on_violation"], "observed" if sent else "dropped")

    def wants_tool(self, hook: str, tool_name: str) -> bool:
        """The declared tool-name filter of a tool hook or ``processToolResult``."""
        s = self.hub.hook_settings(self.id, hook)
        return s is None or not s.tool_names or tool_name in s.tool_names

    async def submit_output_stream(self, args: ProcessOutputStreamArgs) -> Awaitable[StreamResult]:
        """The pipelined path: queue the chunk and return an awaitable of its outcome.

        Waits only when the run's pipeline is full (backpressure). The awaitable resolves to the
        processed chunk (the same object when unchanged) or None (dropped), or raises
        ``TripwireError`` / ``ProcessorUnavailableError``. Answers apply in chunk order.
        """
        self._last = args
        self.hub.track_run(args.run.run_id, args.abort_signal)
        s = self.hub.hook_settings(self.id, STREAM)
        if s is None or s.mode == "observe" or (args.part.is_data and not s.process_data_parts):
            loop = asyncio.get_running_loop()
            future: asyncio.Future[StreamResult] = loop.create_future()
            if s is not None and args.part.is_data and not s.process_data_parts:
                future.set_result(args.part)  # data-* chunks reach only processors that ask for them
            else:  # not attached (the policy applies) or fire and forget
                _settle(future, self._call(STREAM, args), loop)
            return future
        pipe = self._pipes.get(args.run.run_id)
        if pipe is None:
            pipe = self._pipes[args.run.run_id] = _StreamPipe(self, s)
        return await pipe.submit(args)

    # --- one invocation -----------------------------------------------------------------------

    def _timeout(self, s: HookSettings) -> float:
        return min(s.timeout, self.ref.timeout) if self.ref.timeout else s.timeout

    async def _settings(self, hook: str) -> HookSettings | None:
        s = self.hub.hook_settings(self.id, hook)
        if s is None and not self._waited and self.hub.attach_wait > 0 and self.hub.declaration(self.id) is None:
            self._waited = True  # one short wait per run, not one per hook
            await self.hub.wait_attached(self.id, self.hub.attach_wait)
            s = self.hub.hook_settings(self.id, hook)
        return s

    async def _call(self, hook: str, args: Any) -> Any:
        self._last = args
        self.hub.track_run(args.run.run_id, args.abort_signal)
        s = self.hub.hook_settings(self.id, hook)
        if s is None:
            s = await self._settings(hook)
        if s is None:
            if self.hub.declaration(self.id) is not None:
                return _unchanged(hook, args)  # attached, and this hook was not declared
            if self.hub.draining:
                return self._fail(hook, args, "the server is shutting down", "draining")
            return self._fail(hook, args, f"processor {self.id} is not attached", "not_attached")
        invocation: pb.Invocation | bytes
        if hook == STREAM:
            invocation = self._stream_body([args])
            size = len(invocation)
        else:
            invocation = encode_invocation(hook, args, processor_id=self.id)
            size = invocation.ByteSize()
        if size > self.hub.max_invocation_bytes:
            # Sent, it would end the attach stream for every run; this run's hook fails instead.
            return self._fail(hook, args, f"the {SEED_NAMES[hook]} invocation would be {size} bytes, more than "
                              f"an attach stream carries ({self.hub.max_invocation_bytes})", "malformed")
        timeout = self._timeout(s)
        run_id = args.run.run_id
        if s.mode == "observe":
            try:
                sent = self.hub.send_observe(self.id, hook, invocation, run_id=run_id, state=args.state, timeout=timeout)
            except ProcessorUnavailable as e:
                return self._fail(hook, args, e.reason, e.kind)
            self.hub.record(self.id, SEED_NAMES[hook], "observed" if sent else "dropped")
            return _unchanged(hook, args)
        try:
            pending = self.hub.send(self.id, hook, invocation, run_id=run_id, state=args.state, timeout=timeout)
            result = await self.hub.wait(pending)
            decoded = decode_result(hook, result, processor_id=self.id, version=_version(pending))
        except ProcessorUnavailable as e:
            return self._fail(hook, args, e.reason, e.kind)
        except MalformedResultError as e:
            self.hub.failed(pending.connection)
            return self._fail(hook, args, f"malformed answer: {e}", "malformed")
        self._take_state(pending, decoded, args)
        self.hub.record(self.id, SEED_NAMES[hook], decoded.outcome)
        if hook != STREAM:
            return await apply_result(hook, decoded, args)
        await emit_custom_chunks(decoded, args)
        outcome = stream_outcomes(decoded, [args.part])[0]
        if isinstance(outcome, BaseException):
            raise outcome
        self._note_stream(args, outcome)
        return outcome

    def _note_stream(self, args: ProcessOutputStreamArgs, outcome: Any) -> None:
        """Keep track of held chunks: an empty answer holds the chunk, any chunk passed or
        released settles everything held before it (a drop settles nothing)."""
        if isinstance(outcome, list) and not outcome:
            self._held.setdefault(args.run.run_id, []).append(args.part)
        elif outcome is not None:
            self._held.pop(args.run.run_id, None)

    def _take_state(self, pending: Pending | None, decoded: DecodedResult, args: Any) -> None:
        if decoded.state is not None:
            self.hub.state_received(pending.connection if pending else None, args.run.run_id, self.id,
                                    args.state, decoded.state, decoded.state_version)

    def _fail(self, hook: str, args: Any, reason: str, kind: str) -> Any:
        """The failure policy: skip (fail_open) or end the run (fail_closed)."""
        seed = SEED_NAMES[hook]
        self.hub.record(self.id, seed, kind)
        if self.ref.failure_policy != "fail_open":
            raise ProcessorUnavailableError(self.id, seed, reason)
        span = trace.get_current_span(args.tracing_context)
        span.set_attribute(SKIP_ATTR, True)
        span.set_attribute(SKIP_REASON_ATTR, reason)
        # Per-chunk hooks share one span per step: each skip is also an event, so none is lost.
        span.add_event(SKIP_ATTR, {"treadle.processor.hook": seed, "reason": reason})
        held = self._held.pop(args.run.run_id, []) if hook == STREAM else []
        self.hub.m_fail_open.add(1 + len(held), {"processor": self.id, "hook": seed})
        self._count_skip(hook, reason, kind, 1 + len(held))
        log.debug("fail_open: skipping %s of %s: %s", seed, self.id, reason)
        if held:  # what the processor held passes on unprocessed, in order, ahead of this chunk
            return [*held, args.part]
        return _unchanged(hook, args)

    def _count_skip(self, hook: str, reason: str, kind: str, n: int = 1) -> None:
        known = self.hub.known(self.id)
        if known is not None and hook not in known.hooks:
            return  # never declared: not a guard the run went without
        # A processor never attached to this server: its hooks are unknown, so one entry, "*".
        name = SEED_NAMES[hook] if known is not None else "*"
        skip = self._skips.get((name, kind))
        if skip is None:
            self._skips[(name, kind)] = SkippedProcessor(self.id, name, kind, n, reason)  # type: ignore[arg-type]
        else:
            skip.count += n
            skip.message = reason


class StreamObserver:
    """One step's OBSERVE ``processOutputStream`` invocations (``RemoteProcessor.stream_observer``).

    ``send(chunk, shared)`` queues the chunk's invocation and answers True, or False when this
    chunk must take the ordinary path (``RemoteProcessor.process_output_stream``), which then
    decides as it always does (another replica, the failure policy, a dropped invocation).
    ``shared`` is a two-item list the caller keeps for one chunk: the chunk and its serialized
    form, made once for every remote processor of the chain. Outcomes are counted here and added
    to the metrics by ``flush``."""

    __slots__ = ("dropped", "envelope", "limit", "observed", "processor", "route")

    def __init__(self, processor: RemoteProcessor, envelope: bytes, route: Any) -> None:
        self.processor = processor
        self.envelope = envelope
        self.route = route
        self.limit = processor.hub.max_invocation_bytes
        self.observed = 0
        self.dropped = 0

    def send(self, chunk: Chunk, shared: list[Any]) -> bool:
        if shared[0] is not chunk:
            try:
                encoded = chunk_bytes(chunk)
            except Exception:  # noqa: BLE001 - the ordinary path fails it, as it documents
                return False
            shared[0], shared[1] = chunk, encoded
        body = encode_stream_one(self.envelope, shared[1])
        if len(body) > self.limit:
            return False
        sent = self.route(body)
        if sent is None:
            return False
        if sent:
            self.observed += 1
        else:
            self.dropped += 1
        return True

    def flush(self) -> None:
        """Add the outcomes counted since the last flush to the metrics."""
        p = self.processor
        seed = SEED_NAMES[STREAM]
        for outcome, n in (("observed", self.observed), ("dropped", self.dropped)):
            if n:
                p.hub.record(p.id, seed, outcome, n)
        self.observed = self.dropped = 0


def _version(pending: Pending) -> int:
    """The protocol version of the stream that answered."""
    return pending.connection.version if pending.connection is not None else 1


def _unchanged(hook: str, args: Any) -> Any:
    return args.part if hook == STREAM else None


def _settle(future: asyncio.Future[Any], work: Awaitable[Any], loop: asyncio.AbstractEventLoop) -> None:
    async def run() -> None:
        try:
            value = await work
        except BaseException as e:  # noqa: BLE001 - handed to whoever awaits the future
            _set(future, error=e)
        else:
            _set(future, value=value)

    loop.create_task(run())


def _set(future: asyncio.Future[Any], *, value: Any = None, error: BaseException | None = None) -> None:
    if future.done():
        return
    if error is None:
        future.set_result(value)
    else:
        future.set_exception(error)
        future.add_done_callback(lambda f: f.exception())  # awaited or not, never logged as lost


# --- the pipelined processOutputStream path ------------------------------------------------------


@dataclass(eq=False, slots=True)
class _Batch:
    entries: list[tuple[ProcessOutputStreamArgs, asyncio.Future[StreamResult]]]
    pending: Pending | None = None
    error: ProcessorUnavailable | None = None
    """Set when the invocation could not be sent at all."""

    def done(self) -> bool:
        return self.pending is None or self.pending.future.done()

    def outcome(self, processor_id: str) -> DecodedResult | BaseException:
        """The decoded answer, or why there is none (the future's exception is retrieved here)."""
        if self.pending is None:
            assert self.error is not None
            return self.error
        future = self.pending.future
        if future.cancelled():
            return ProcessorUnavailable("the invocation was cancelled", "disconnect")
        error = future.exception()
        if error is not None:
            return error
        try:
            return decode_result(STREAM, future.result(), processor_id=processor_id, parts=len(self.entries),
                                 version=_version(self.pending))
        except MalformedResultError as e:
            return e


@dataclass(eq=False)
class _StreamPipe:
    """One run's chunks to one processor: sent in order, up to ``max_in_flight`` invocations at
    once, several chunks per invocation when windowed; answers applied in chunk order.

    No task or timer per invocation: each answer's future calls back ``_landed``, which applies
    every answered batch at the head of the line (the hub's one sweep times invocations out).
    Only a batch carrying custom chunks is applied in a task (emitting them awaits)."""

    processor: RemoteProcessor
    settings: HookSettings
    unsent: deque[tuple[ProcessOutputStreamArgs, asyncio.Future[StreamResult]]] = field(default_factory=deque)
    in_flight: int = 0
    batches: deque[_Batch] = field(default_factory=deque)
    applier: asyncio.Task[None] | None = None
    """Applies a batch whose custom chunks must be emitted first; the line waits for it."""
    scheduled: bool = False
    room: asyncio.Event = field(default_factory=asyncio.Event)
    tripwire: TripwireError | None = None

    @property
    def window(self) -> int:
        return self.settings.max_window if self.settings.windowed else 1

    async def submit(self, args: ProcessOutputStreamArgs) -> asyncio.Future[StreamResult]:
        while len(self.unsent) >= self.window:
            self.room.clear()
            await self.room.wait()
        future: asyncio.Future[StreamResult] = asyncio.get_running_loop().create_future()
        if self.tripwire is not None:
            _set(future, error=self.tripwire)
            return future
        self.unsent.append((args, future))
        if self.settings.windowed:
            self._schedule()  # chunks submitted in this loop turn go out together
        elif self.in_flight < self.settings.max_in_flight:
            self._pump()  # one chunk per invocation: nothing to wait for, send it now
        return future

    def _schedule(self) -> None:
        if not self.scheduled:
            self.scheduled = True  # chunks submitted in this loop turn go out together
            asyncio.get_running_loop().call_soon(self._pump)

    def _pump(self) -> None:
        self.scheduled = False
        p = self.processor
        window, timeout = self.window, p._timeout(self.settings)
        failed = False
        while self.unsent and self.in_flight < self.settings.max_in_flight:
            n = min(window, len(self.unsent))
            batch = _Batch([self.unsent.popleft() for _ in range(n)])
            first = batch.entries[0][0]
            try:
                invocation = p._stream_body([a for a, _ in batch.entries])
                batch.pending = p.hub.send(p.id, STREAM, invocation, run_id=first.run.run_id,
                                           state=first.state, timeout=timeout)
            except ProcessorUnavailable as e:
                batch.error = e
                failed = True
            else:
                self.in_flight += 1
                batch.pending.future.add_done_callback(self._landed)
            self.batches.append(batch)
        self.room.set()
        if failed:
            self._drain()

    def _landed(self, _: Any) -> None:
        self.in_flight -= 1
        if self.unsent:
            self._schedule()
        self._drain()

    def _drain(self) -> None:
        """Apply the answered batches at the head of the line, in order."""
        if self.applier is not None:
            return  # a batch is being applied in a task: it drains the rest when done
        p = self.processor
        while self.batches and self.batches[0].done():
            batch = self.batches.popleft()
            outcome = batch.outcome(p.id)
            if self.tripwire is not None:  # the stream ended at an earlier chunk
                for _, future in batch.entries:
                    _set(future, error=self.tripwire)
            elif isinstance(outcome, BaseException):
                self._failed(batch, outcome)
            else:
                first = batch.entries[0][0]
                p._take_state(batch.pending, outcome, first)
                p.hub.record(p.id, SEED_NAMES[STREAM], outcome.outcome)
                if outcome.custom_chunks and getattr(first, "writer", None) is not None:
                    self.applier = asyncio.ensure_future(self._emit_then_apply(batch, outcome))
                    return
                self._apply(batch, outcome)

    async def _emit_then_apply(self, batch: _Batch, outcome: DecodedResult) -> None:
        try:
            await emit_custom_chunks(outcome, batch.entries[0][0])
        except Exception as e:  # noqa: BLE001 - the batch's chunks carry it to the pipeline
            for _, future in batch.entries:
                _set(future, error=e)
        except BaseException:
            for _, future in batch.entries:
                future.cancel()
            raise
        else:
            self._apply(batch, outcome)
        finally:
            self.applier = None
            self._drain()

    def _failed(self, batch: _Batch, outcome: BaseException) -> None:
        p = self.processor
        reason, kind = ((outcome.reason, outcome.kind) if isinstance(outcome, ProcessorUnavailable)
                        else (f"malformed answer: {outcome}", "malformed"))
        if kind == "malformed" and batch.pending is not None:
            p.hub.failed(batch.pending.connection)
        entries = list(batch.entries)
        if kind == "timeout":
            # The chunks queued behind a hung invocation have waited out its timeout already:
            # they share its failure rather than each waiting for one more (one timeout per hang).
            while self.unsent:
                entries.append(self.unsent.popleft())
            self.room.set()
        for args, future in entries:
            try:
                _set(future, value=p._fail(STREAM, args, reason, kind))
            except ProcessorUnavailableError as e:
                _set(future, error=e)

    def _apply(self, batch: _Batch, outcome: DecodedResult) -> None:
        p = self.processor
        results = stream_outcomes(outcome, [a.part for a, _ in batch.entries])
        for (args, future), result in zip(batch.entries, results, strict=True):
            if isinstance(result, TripwireError):
                self.tripwire = result
                _set(future, error=result)
            elif isinstance(result, RemoteHookError):  # logged, the chunk passes
                log.warning("processOutputStream of %s failed: %s; chunk passes", p.id, result)
                _set(future, value=args.part)
            else:
                p._note_stream(args, result)
                _set(future, value=result)
        if self.tripwire is not None:
            while self.unsent:
                _set(self.unsent.popleft()[1], error=self.tripwire)
            self.room.set()


__all__ = ["RemoteProcessor"]
