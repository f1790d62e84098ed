"""Remote processors over ``ProcessorService.Attach``: the same classes as in-process ones.

A processor is an object with an ``id`` and the hook methods it implements (``process_input``,
``process_output_stream``, ...), each taking the args dataclass from ``treadle.core.args``:
``args.abort()`` raises, ``args.state`` is a dict, ``await args.writer.custom({...})`` emits a
chunk. The SDK declares exactly the hooks whose methods are present. Optional class attributes
tune the declaration:

- ``observe: set[str]``: hooks to run in OBSERVE mode (fire and forget: the run never waits);
- ``timeouts: dict[str, float]``: the timeout, in seconds, to ask for per hook;
- ``stream_delivery: "per_chunk" | "windowed"``, ``max_window: int``, ``max_in_flight: int``:
  how ``process_output_stream`` invocations carry chunks and how many may be in flight. The
  default is windowed with 4 in flight: the hook is still called once per chunk, in order, and
  the stream costs a fraction of a round trip per chunk instead of more than one
  (``bench/remote_processor_stream.py``);
- ``process_data_parts: bool``: also receive ``data-*`` chunks in ``process_output_stream``;
- ``name``, ``description``: shown in traces and listings.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import logging
import time
from collections import deque
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, TracerProvider

from treadle.wire import sdk_hooks as hc
from treadle.wire.hook_names import HOOK_ENUM, HOOK_NAME
from treadle.wire.sdk_hooks import check_state_depth
from treadle.wire.data import chunk_to_proto, dict_to_struct, struct_to_dict, value_to_py
from treadle.wire.frames import BATCH_VERSION, RESULTS, passthrough
from treadle.wire.sdk_hooks import snapshot_before
from treadle.core.chunks import Chunk
from treadle.core.errors import TripwireError
from treadle.core.message_list import MessageList
from treadle.core.args import make_abort
from treadle.core.processor import AGENT_HOOKS, DELEGATION_HOOKS, HOOKS, SEED_NAMES, TOOL_HOOKS, ProcessorViolation
from treadle.v1 import processor_service_pb2 as pb

from ._attach import (
    Attachment,
    Send,
    as_targets,
    cancel_all,
    collecting_writer,
    default_instance_id,
)
from ._connect import Connect, TLSConfig
from ._tracing import ParentContexts, mark_error, tracer_from

log = logging.getLogger("treadle_client")

DEFAULT_STATE_TTL = 600.0
DEFAULT_DELIVERY = "windowed"
DEFAULT_MAX_IN_FLIGHT = 4
"""Stream defaults: chunks ready together travel together, and a few invocations may be in
flight, so network latency does not cap the stream's throughput."""
"""Seconds a run's state is kept after its last invocation when neither ``run_ended`` nor its
``processOutputResult`` ends it (a server that died mid-run sends neither)."""

PROTOCOL_VERSIONS = (1, 2, 3)
"""Version 2 lets ``process_output_stream`` return a list of chunks (hold and release); version 3
lets invocations and answers travel in batches (what is ready at once goes in one message)."""
MAX_RESULTS_BYTES = 4 << 20
"""About the most answer bytes packed into one message (a batch never waits to fill up)."""

_TOOL_FILTERED = frozenset({*TOOL_HOOKS, "process_tool_result"})


def _tool_names(processor: Any, hook: str) -> list[str]:
    """``tool_names``: a set of tool names for every tool hook, or a dict hook -> names."""
    names = getattr(processor, "tool_names", None) or ()
    if isinstance(names, dict):
        names = names.get(hook) or ()
    return sorted(names)


_DELIVERY = {"per_chunk": pb.STREAM_DELIVERY_PER_CHUNK, "windowed": pb.STREAM_DELIVERY_WINDOWED}


def hooks_of(processor: Any) -> list[str]:
    """The hooks a processor implements: the hook methods it has, in the Mastra framework's order
    (``on_violation`` last: it is declared too, always fire and forget)."""
    hooks = [h for h in (*HOOKS, *TOOL_HOOKS, *DELEGATION_HOOKS, *AGENT_HOOKS) if callable(getattr(processor, h, None))]
    if hooks and callable(getattr(processor, "on_violation", None)):
        hooks.append("on_violation")
    return hooks


def declaration(processor: Any) -> pb.ProcessorDeclaration:
    """The handshake's declaration of ``processor``; ``ValueError`` says what is wrong."""
    pid = getattr(processor, "id", None)
    if not isinstance(pid, str) or not pid:
        raise ValueError(f"{type(processor).__name__} needs a non-empty string `id`")
    hooks = hooks_of(processor)
    if not hooks:
        raise ValueError(f"processor {pid!r} implements no hook (e.g. process_input)")
    observe = set(getattr(processor, "observe", None) or ())
    timeouts: dict[str, float] = dict(getattr(processor, "timeouts", None) or {})
    for what, names in (("observe", observe), ("timeouts", timeouts)):
        unknown = sorted(set(names) - set(hooks))
        if unknown:
            raise ValueError(f"processor {pid!r}: `{what}` names hooks it does not implement: {unknown}")
    delivery = getattr(processor, "stream_delivery", DEFAULT_DELIVERY)
    if delivery not in _DELIVERY:
        raise ValueError(f"processor {pid!r}: stream_delivery must be 'per_chunk' or 'windowed'")
    out = pb.ProcessorDeclaration(
        id=pid, name=str(getattr(processor, "name", "") or ""),
        description=str(getattr(processor, "description", "") or (type(processor).__doc__ or "")).strip(),
    )
    for hook in hooks:
        h = out.hooks.add(
            hook=HOOK_ENUM[hook],
            mode=pb.HOOK_MODE_OBSERVE if hook in observe or hook == "on_violation" else pb.HOOK_MODE_MUTATE,
        )
        if hook in timeouts:
            h.timeout.FromNanoseconds(int(timeouts[hook] * 1e9))
        if hook in _TOOL_FILTERED:
            h.tool_names.extend(_tool_names(processor, hook))
        if hook == "process_output_stream":
            h.process_data_parts = bool(getattr(processor, "process_data_parts", False))
            h.delivery = _DELIVERY[delivery]
            h.max_window = int(getattr(processor, "max_window", 0) or 0)
            h.max_in_flight = int(getattr(processor, "max_in_flight", DEFAULT_MAX_IN_FLIGHT) or 0)
    return out


_PY_NAMES = {seed: name for name, seed in SEED_NAMES.items()}


async def _violation(processor: Any, inv: pb.Invocation) -> None:
    """Calls ``on_violation``; its errors are swallowed, as the framework does. The hook is named
    as in-process (``process_input``)."""
    v = inv.on_violation
    detail = value_to_py(v.detail) if v.HasField("detail") else None
    hook = _PY_NAMES.get(v.hook, v.hook)
    try:
        await _call(processor.on_violation, ProcessorViolation(v.processor_id, v.message, detail, hook))
    except Exception:  # noqa: BLE001 - documented: errors from on_violation are swallowed
        log.debug("on_violation of %s raised", v.processor_id, exc_info=True)


@dataclass
class _RunState:
    """One processor's state for one run, and what the stream hook needs between invocations."""

    value: dict[str, Any] = field(default_factory=dict)
    version: int = 0
    stream_parts: list[Chunk] = field(default_factory=list)
    message_list: MessageList | None = None
    touched: float = field(default_factory=time.monotonic)
    tail: asyncio.Task[None] | None = None
    """The invocation of this run and processor running now (or last)."""
    backlog: deque[tuple[pb.Invocation, asyncio.Event]] = field(default_factory=deque)
    """Invocations that arrived while ``tail`` ran, in order: ``tail`` runs each in turn once
    the one before it ends (no task of their own, nothing awaited, until then)."""


class _Host:
    """Everything that outlives one stream: the processors and their per-run state."""

    def __init__(self, processors: dict[str, Any], declarations: list[pb.ProcessorDeclaration],
                 instance_id: str, tracer: trace.Tracer, state_ttl: float) -> None:
        self.processors = processors
        self.declarations = declarations
        self.hooks = {pid: frozenset(hooks_of(p)) for pid, p in processors.items()}
        self.aborts = {pid: make_abort(pid) for pid in processors}
        self.parents = ParentContexts()
        self.observe = {d.id: {HOOK_NAME[h.hook] for h in d.hooks if h.mode == pb.HOOK_MODE_OBSERVE}
                        for d in declarations}
        self.instance_id = instance_id
        self.tracer = tracer
        self.state_ttl = state_ttl
        self.runs: dict[tuple[str, str], _RunState] = {}
        self._swept = time.monotonic()

    def run_state(self, run_id: str, processor_id: str) -> _RunState:
        now = time.monotonic()
        if now - self._swept > self.state_ttl / 10:
            self._swept = now
            for key, rs in list(self.runs.items()):
                if now - rs.touched > self.state_ttl and (rs.tail is None or rs.tail.done()) and not rs.backlog:
                    del self.runs[key]
        found = self.runs.get((run_id, processor_id))
        if found is None:
            found = self.runs[(run_id, processor_id)] = _RunState()
        found.touched = now
        return found

    def end_run(self, run_id: str) -> None:
        """The server says the run is over: forget its state (hooks still running keep theirs)."""
        for key in [k for k in self.runs if k[0] == run_id]:
            del self.runs[key]


class _ProcessorSession:
    def __init__(self, host: _Host, send: Send) -> None:
        self._host = host
        self._send = send
        self._running: dict[str, tuple[asyncio.Task[None] | None, asyncio.Event]] = {}
        """Invocation id -> its task (None while it waits its turn) and its abort signal."""
        self._closed = False
        self._version = 1
        """The protocol version the server chose (its welcome)."""

    def handshake(self) -> pb.ProcessorServiceAttachRequest:
        return pb.ProcessorServiceAttachRequest(handshake=pb.ProcessorHandshake(
            protocol_versions=list(PROTOCOL_VERSIONS), processors=self._host.declarations,
            instance_id=self._host.instance_id,
        ))

    def pack(self, items: list[Any]) -> Any:
        """Answers queued together go as one ``results`` message (version 3) or one by one,
        framed from their serialized form; anything else as it is, in order."""
        return RESULTS.frames(items, self._version >= BATCH_VERSION, MAX_RESULTS_BYTES)

    def on_message(self, message: pb.ProcessorServiceAttachResponse) -> bool:
        kind = message.WhichOneof("message")
        if kind == "invocation":
            self._start(message.invocation)
        elif kind == "invocations":
            for inv in message.invocations.invocations:
                self._start(inv)
        elif kind == "cancel":
            running = self._running.get(message.cancel.invocation_id)
            if running is not None:
                running[1].set()  # the hook's abort_signal (a waiting invocation is skipped)
                if running[0] is not None:
                    running[0].cancel()
                else:
                    del self._running[message.cancel.invocation_id]
        elif kind == "run_ended":
            self._host.end_run(message.run_ended.run_id)
        elif kind == "drain":
            log.info("server is draining; will reconnect when it closes the stream")
        elif kind == "welcome":
            self._version = message.welcome.protocol_version or 1
        return kind == "welcome"

    async def close(self) -> None:
        self._closed = True  # what waits its turn never starts
        await cancel_all(task for task, _ in self._running.values() if task is not None)

    def _start(self, inv: pb.Invocation) -> None:
        # One (run, processor) runs its invocations one at a time, in the order they arrived:
        # its state is a sequence. Different runs go concurrently.
        rs = self._host.run_state(inv.run_id, inv.processor_id)
        signal = asyncio.Event()
        if rs.backlog or (rs.tail is not None and not rs.tail.done()):
            rs.backlog.append((inv, signal))
            self._running[inv.invocation_id] = (None, signal)
        else:
            self._launch(inv, rs, signal)

    def _launch(self, inv: pb.Invocation, rs: _RunState, signal: asyncio.Event) -> None:
        task = asyncio.create_task(self._serve(inv, rs, signal))
        rs.tail = task
        self._running[inv.invocation_id] = (task, signal)

    async def _serve(self, inv: pb.Invocation, rs: _RunState, signal: asyncio.Event) -> None:
        """Runs ``inv``, then each invocation of its run that queued meanwhile, in order, in this
        one task. A cancel names one invocation: it ends that one, and the next goes on."""
        task = asyncio.current_task()
        assert task is not None
        while True:
            try:
                await self._after(inv, rs, signal)
            except asyncio.CancelledError:
                if self._closed or not signal.is_set():
                    raise  # the stream closed: nothing more is owed
                task.uncancel()  # only this invocation was cancelled
            finally:
                self._running.pop(inv.invocation_id, None)
            nxt = self._next(rs)
            if nxt is None:
                return
            inv, signal = nxt
            self._running[inv.invocation_id] = (task, signal)

    def _next(self, rs: _RunState) -> tuple[pb.Invocation, asyncio.Event] | None:
        while rs.backlog and not self._closed:
            inv, signal = rs.backlog.popleft()
            if not signal.is_set():
                return inv, signal
            self._running.pop(inv.invocation_id, None)  # cancelled while it waited
        return None

    async def _after(self, inv: pb.Invocation, rs: _RunState, signal: asyncio.Event) -> None:
        hook = HOOK_NAME.get(inv.hook, "")
        observed = hook in self._host.observe.get(inv.processor_id, ())
        try:
            result = await self._invoke(inv, rs, signal, observed)
        except Exception as e:  # a bug here, not in the hook: still answer, never leave it hanging
            log.exception("invocation %s failed", inv.invocation_id)
            result = hc.encode_error(inv.invocation_id, e)
        if result is not None and not observed:
            # Framed as `result` (or in `results`) by pack.
            self._send(result if isinstance(result, bytes) else result.SerializeToString())
        if hook == "process_output_result":
            self._host.runs.pop((inv.run_id, inv.processor_id), None)

    async def _invoke(self, inv: pb.Invocation, rs: _RunState, signal: asyncio.Event,
                      observed: bool = False) -> pb.InvocationResult | bytes | None:
        """The invocation's answer: serialized already (``bytes``) when it is the common one, every
        chunk unchanged; None for OBSERVE hooks (never answered) and ``on_violation``."""
        pid = inv.processor_id
        processor = self._host.processors.get(pid)
        hook = HOOK_NAME.get(inv.hook, "")
        if processor is None or hook not in self._host.hooks[pid]:
            return hc.encode_error(inv.invocation_id, LookupError(f"processor {pid!r} does not serve {hook or inv.hook}"))
        if inv.HasField("state") and inv.state.version >= rs.version:
            rs.value, rs.version = struct_to_dict(inv.state.value), inv.state.version
        if hook == "on_violation":
            await _violation(processor, inv)
            return None
        before = copy.deepcopy(rs.value) if rs.value else {}
        writer, written = collecting_writer(inv.run_id)
        common: dict[str, Any] = {
            "abort": self._host.aborts[pid], "state": rs.value, "writer": writer, "abort_signal": signal,
        }
        attributes: dict[str, Any] = {
            "treadle.processor.id": pid, "treadle.processor.hook": SEED_NAMES[hook],
            "treadle.run.id": inv.run_id, "treadle.step.number": inv.step_number,
            "treadle.processor.retry_count": inv.retry_count,
        }
        method = getattr(processor, hook)
        # ``invocation_span``, spelled out: this runs once per invocation (per chunk, for a
        # per-chunk stream hook), where a generator-based context manager costs as much again.
        parent = self._host.parents.get(inv.trace_context)
        span = self._host.tracer.start_span(f"{SEED_NAMES[hook]} {pid}", context=parent, kind=SpanKind.SERVER,
                                            attributes=attributes, record_exception=False,
                                            set_status_on_exception=False)
        common["tracing_context"] = ctx = trace.set_span_in_context(span, parent)
        token = otel_context.attach(ctx)
        try:
            if hook == "process_output_stream":
                result = await self._stream(inv, method, rs, common, span, observed)
            else:
                result = await self._hook(inv, hook, method, rs, common, span)
        finally:
            otel_context.detach(token)
            span.end()
        changed = rs.value != before
        if changed:
            try:
                check_state_depth(rs.value)
            except ValueError as e:
                rs.value = before
                return hc.encode_error(inv.invocation_id, e)
            rs.version += 1
        if observed or result is None:
            return None  # never answered
        if isinstance(result, bytes):
            if not changed and not written:
                return result
            result = pb.InvocationResult.FromString(result)
        if changed:
            result.state.Clear()
            dict_to_struct(rs.value, result.state.value)
            result.state.version = rs.version
        for chunk in written:
            result.custom_chunks.add().CopyFrom(chunk_to_proto(chunk).data)
        return result

    async def _hook(self, inv: pb.Invocation, hook: str, method: Any, rs: _RunState,
                    common: dict[str, Any], span: trace.Span) -> pb.InvocationResult:
        args, ml = hc.build_args(inv, **common)
        rs.message_list = ml
        before = snapshot_before(inv)
        try:
            returned = await _call(method, args)
        except TripwireError as e:
            span.set_attribute("treadle.processor.outcome", "abort")
            return hc.encode_abort(inv.invocation_id, e)
        except Exception as e:
            mark_error(span, e)
            return hc.encode_error(inv.invocation_id, e)
        try:
            result = hc.encode_result(hook, returned, args, ml, before, invocation_id=inv.invocation_id)
        except ValueError as e:
            mark_error(span, e)
            return hc.encode_error(inv.invocation_id, e)
        span.set_attribute("treadle.processor.outcome", result.WhichOneof("outcome") or "")
        return result

    async def _stream(self, inv: pb.Invocation, method: Any, rs: _RunState, common: dict[str, Any],
                      span: trace.Span, observed: bool = False) -> pb.InvocationResult | bytes | None:
        returns: list[Any] = []
        parts: list[Chunk] = []
        if rs.message_list is None:  # one empty list per run, not one per chunk
            rs.message_list = MessageList(thread_id=inv.thread_id, resource_id=inv.resource_id)
        for args in hc.iter_stream_args(inv, stream_parts=rs.stream_parts,
                                        message_list=rs.message_list, **common):
            parts.append(args.part)
            try:
                returns.append(await _call(method, args))
            except TripwireError as e:
                span.set_attribute("treadle.processor.outcome", "abort")
                returns.append(e)
                break
            except Exception as e:
                mark_error(span, e)
                returns.append(e)
        span.set_attribute("treadle.processor.chunk_count", len(parts))
        if observed:
            return None  # never answered
        if all(r is p for r, p in zip(returns, parts)) and len(returns) == len(parts):
            return hc.encode_unchanged_stream(inv.invocation_id, len(parts))
        return hc.encode_stream_result(inv.invocation_id, returns, parts, version=self._version)


async def _call(method: Any, args: Any) -> Any:
    result = method(args)
    if inspect.isawaitable(result):
        result = await result
    return result


_ATTACH = "/treadle.v1.ProcessorService/Attach"
_SERIALIZE = passthrough(pb.ProcessorServiceAttachRequest.SerializeToString)


def _open(channel: grpc.aio.Channel, requests: AsyncIterator[Any], metadata: Any) -> Any:
    # The generated stub's call, with a serializer that passes framed answers (bytes) through.
    return channel.stream_stream(
        _ATTACH, request_serializer=_SERIALIZE,
        response_deserializer=pb.ProcessorServiceAttachResponse.FromString,
    )(requests, metadata=metadata)


async def attach(
    processors: Sequence[Any],
    targets: str | Sequence[str],
    *,
    instance_id: str | None = None,
    tracer_provider: TracerProvider | None = None,
    backoff: tuple[float, float] = (0.1, 5.0),
    token: str | None = None,
    tls: TLSConfig | None = None,
    state_ttl: float = DEFAULT_STATE_TTL,
) -> Attachment:
    """Attach ``processors`` to every server in ``targets`` (``HOST:PORT``) over one stream each.

    Returns at once; ``await attachment.ready()`` waits for every server's welcome. Streams that
    end are reopened with exponential backoff (``backoff`` = initial and maximum seconds) and
    jitter. ``token`` (default: ``TREADLE_TOKEN``) and ``tls`` are as for ``AgentClient``. Each invocation runs in a span ``{hook} {processor id}`` that is a child of the
    server's hook span, made with ``tracer_provider`` (default: the global one).
    """
    declarations = [declaration(p) for p in processors]
    by_id: dict[str, Any] = {}
    for p in processors:
        if p.id in by_id:
            raise ValueError(f"processor id {p.id!r} is given twice")
        by_id[p.id] = p
    if not by_id:
        raise ValueError("give at least one processor")
    host = _Host(by_id, declarations, instance_id or default_instance_id(),
                 tracer_from(tracer_provider), state_ttl)
    label = "processor " + ", ".join(d.id for d in declarations)
    return Attachment(as_targets(targets), _open, lambda send: _ProcessorSession(host, send), backoff,
                      Connect(tls, token), label)
