"""The one chain runner: invokes hooks in order and applies what they return.

Every hook invocation goes through ``ChainRunner._invoke``, which owns the span, ``abort``,
``on_violation`` and error wrapping; the per-hook methods only say how results chain.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import sys
import time
import types
from functools import partial
import logging
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode, Tracer

from ..core.chunks import Chunk, StreamResult, as_chunks, one_or_many
from ..core.errors import ProcessorError, ProcessorUnavailableError, TripwireError
from ..core.message_list import MessageList
from ..core.messages import Message, Prompt
from ..tracing.spans import ATTR, processor_span
from ..core.args import AbortFn, ProcessorStreamWriter, ProcessOutputStreamArgs, RunInfo, make_abort
from ..core.processor import SEED_NAMES, ProcessorViolation, implements, wants_tool
from .parallel import GROUP_HOOKS, ParallelGroup
from .stats import RunStats
from ..core.results import (
    MessagesResult,
    ProcessInputStepResult,
    apply_messages_returned,
    as_input_step_result,
    as_llm_request_result,
    wants_retry,
)

log = logging.getLogger(__name__)

Emit = Callable[[Chunk], Awaitable[object]]


@dataclass
class RunScope:
    """What the runner needs from the run: identity, budgets, state and where chunks go."""

    run_id: str
    tracer: Tracer
    request_context: dict[str, Any]
    emit_direct: Emit
    """Chunks written from process_output_stream / process_output_result: no further processing."""
    emit_processed: Emit
    """Chunks written from any other hook: through the output processors first."""
    abort_signal: asyncio.Event = field(default_factory=asyncio.Event)
    agent_id: str = ""
    thread_id: str = ""
    resource_id: str = ""
    step_number: int = 0
    """The current step (the loop keeps it up to date)."""
    retry_count: int = 0
    states: dict[str, dict[str, Any]] = field(default_factory=dict)
    held_guards: list[asyncio.Task[None]] = field(default_factory=list)
    """Parallel guardrail groups (``with_model``) still running beside the first provider call."""
    stats: RunStats = field(default_factory=RunStats)
    """The run's steps and hook invocations, stored with the run when it ends."""

    def state_for(self, processor_id: str) -> dict[str, Any]:
        return self.states.setdefault(processor_id, {})


@dataclass
class _StreamSpan:
    span: Span
    chunks: int = 0
    dropped: int = 0
    replaced: int = 0
    base: otel_context.Context | None = None
    ctx: otel_context.Context | None = None
    """The span's context over ``base`` (the current context it was made in), made once: every
    chunk of the step carries the same context (and the same injected trace context)."""

    def count(self, chunk: Chunk, result: Any) -> StreamResult:
        """``result``, counted as a drop or a replacement of ``chunk``."""
        if result is None or (isinstance(result, list) and not result):
            self.dropped += 1
            return None
        if result is not chunk:
            self.replaced += 1
        return result  # type: ignore[no-any-return]

    def context(self) -> otel_context.Context:
        """``trace.set_span_in_context(self.span)``, reused while the current context is the same."""
        base = otel_context.get_current()
        if self.ctx is None or self.base is not base:
            self.base, self.ctx = base, trace.set_span_in_context(self.span, base)
        return self.ctx


async def _notify_violation(processor: Any, error: TripwireError, hook: str) -> None:
    callback = getattr(processor, "on_violation", None)
    if not callable(callback):
        return
    try:
        result = callback(
            ProcessorViolation(
                processor_id=error.processor_id, message=error.reason, detail=error.metadata,
                hook=hook,
            )
        )
        if inspect.isawaitable(result):
            await result
    except Exception:  # errors from on_violation are swallowed (documented)
        log.debug("on_violation of %s raised", error.processor_id, exc_info=True)


class ChainRunner:
    def __init__(self, scope: RunScope) -> None:
        self.scope = scope
        self._stream_spans: dict[str, _StreamSpan] = {}
        self._stream_parts: dict[str, list[Chunk]] = {}
        self._aborts: dict[str, AbortFn] = {}
        self._writers: dict[int, tuple[Emit, str, ProcessorStreamWriter]] = {}
        self._stream_commons: dict[str, tuple[otel_context.Context, tuple[int, int, int, str], dict[str, Any]]] = {}
        self._stages: dict[str, _Stage] = {}
        """Per processor id: its ``process_output_stream`` of the current step (the hot path)."""
        self._shared: list[Any] = [None, None]
        """A chunk and its serialized form, made once for every remote OBSERVE processor it
        passes (``StreamObserver.send``); reset before any other hook may change the chunk."""

    # --- the single invocation path -----------------------------------------------------------

    def _common(self, processor: Any, hook: str, ctx: Any, index: int = 0) -> dict[str, Any]:
        pid = processor.id
        sc = self.scope
        emit = sc.emit_direct if hook in ("process_output_stream", "process_output_result") else sc.emit_processed
        abort = self._aborts.get(pid)
        if abort is None:
            abort = self._aborts[pid] = make_abort(pid)
        return {
            "abort": abort,
            "retry_count": sc.retry_count,
            "request_context": sc.request_context,
            "tracing_context": ctx,
            "abort_signal": sc.abort_signal,
            "state": sc.state_for(pid),
            "writer": self._writer(emit),
            "run": RunInfo(sc.run_id, sc.agent_id, sc.thread_id, sc.resource_id, sc.step_number, index),
        }

    def _stream_common(self, processor: Any, ctx: otel_context.Context, index: int) -> dict[str, Any]:
        """``_common`` for ``process_output_stream``, made once per processor and step (not per
        chunk): within a step every value in it is the same object for every chunk."""
        sc = self.scope
        key = (index, sc.step_number, sc.retry_count, sc.run_id)
        cached = self._stream_commons.get(processor.id)
        if cached is None or cached[0] is not ctx or cached[1] != key:
            cached = (ctx, key, self._common(processor, "process_output_stream", ctx, index))
            self._stream_commons[processor.id] = cached
        return cached[2]

    def _writer(self, emit: Emit) -> ProcessorStreamWriter:
        """One writer per emit function and run (a writer holds nothing else)."""
        cached = self._writers.get(id(emit))
        if cached is None or cached[0] is not emit or cached[1] != self.scope.run_id:
            writer = ProcessorStreamWriter(emit, self.scope.run_id, direct=emit is self.scope.emit_direct)
            cached = self._writers[id(emit)] = (emit, self.scope.run_id, writer)
        return cached[2]

    async def _invoke(
        self, processor: Any, method: Callable[[Any], Any], index: int, hook: str,
        build: Callable[[dict[str, Any]], Any], span: Span | None = None,
        ctx: otel_context.Context | None = None, common: dict[str, Any] | None = None,
    ) -> Any:
        """Call ``method``, the processor's ``hook``; ``span`` is given for aggregated (per-step)
        stream spans, with ``ctx`` (its context) when the caller has it, and ``common`` (the
        arguments every hook gets) when the caller made them already."""
        own_span = span is None
        if own_span:
            span = processor_span(
                self.scope.tracer, processor_id=processor.id, hook=SEED_NAMES[hook],
                index=index, retry_count=self.scope.retry_count,
            )
        assert span is not None
        if ctx is None:
            ctx = trace.set_span_in_context(span)
        token = otel_context.attach(ctx)
        started = time.perf_counter()
        outcome = "error"
        try:
            _set_index(processor, index)
            args = build(common if common is not None else self._common(processor, hook, ctx, index))
            result = method(args)
            if inspect.isawaitable(result):
                result = await result
        except TripwireError as e:
            e.processor_id = e.processor_id or processor.id
            outcome = "retry" if e.retry else "abort"
            span.set_attribute(ATTR.PROCESSOR_OUTCOME, outcome)
            await _notify_violation(processor, e, hook)
            raise
        except asyncio.CancelledError:  # a parallel guardrail whose group another one ended
            outcome = "cancelled"
            raise
        except ProcessorError as e:  # already attributed (e.g. an unavailable remote processor)
            span.set_attribute(ATTR.PROCESSOR_OUTCOME, "error")
            span.set_status(Status(StatusCode.ERROR, str(e)))
            raise
        except Exception as e:
            span.set_attribute(ATTR.PROCESSOR_OUTCOME, "error")
            span.record_exception(e)
            span.set_status(Status(StatusCode.ERROR, str(e)))
            raise ProcessorError(processor.id, SEED_NAMES[hook], e) from e
        else:
            outcome = "continue" if result is None else "replace"
            if hook == "process_output_stream":
                outcome = "drop" if result is None else "continue" if result is args.part else "replace"
            if own_span:
                span.set_attribute(ATTR.PROCESSOR_OUTCOME, outcome)
            return result
        finally:
            self.scope.stats.hook(processor.id, SEED_NAMES[hook], time.perf_counter() - started, outcome)
            otel_context.detach(token)
            if own_span:
                span.end()

    # --- message hooks ------------------------------------------------------------------------

    async def run_message_hook(
        self,
        processors: Sequence[Any],
        hook: str,
        message_list: MessageList,
        build: Callable[[Any, dict[str, Any]], Any],
        shown: Callable[[], list[Message]] | None = None,
    ) -> None:
        """process_input / process_output_step / process_tool_result / process_output_result."""
        shown = shown or message_list.get_all
        for index, p, method in self._implementing(processors, hook, partial(build)):
            scope = shown()
            result = await self._invoke(p, method, index, hook, partial(build, p))
            self.apply_message_result(p, hook, result, message_list, scope)

    def _implementing(
        self, processors: Sequence[Any], hook: str, build: Callable[[Any, dict[str, Any]], Any],
    ) -> Iterator[tuple[int, Any, Callable[[Any], Any]]]:
        """Like ``_implementing``; a parallel group is one step whose "method" runs its members
        concurrently and returns None (it only validates)."""
        for index, p in enumerate(processors):
            if isinstance(p, ParallelGroup):
                if hook in GROUP_HOOKS:
                    yield index, p, partial(self._group, p, index, hook, build)
                continue
            method = implements(p, hook)
            if method is not None:
                yield index, p, method

    async def _group(
        self, group: ParallelGroup, index: int, hook: str, build: Callable[[Any, dict[str, Any]], Any],
        _args: Any = None,
    ) -> None:
        work = self._validate(group, index, hook, build)
        if group.with_model and hook == "process_input":
            self.scope.held_guards.append(asyncio.ensure_future(work))  # the loop holds the output
            return
        await work

    async def _validate(
        self, group: ParallelGroup, index: int, hook: str, build: Callable[[Any, dict[str, Any]], Any],
    ) -> None:
        """Every member at once; the first abort (or failure) cancels the others."""

        async def one(member: Any, method: Callable[[Any], Any]) -> None:
            result = await self._invoke(member, method, index, hook, partial(build, member))
            if result is not None:
                raise ProcessorError(member.id, SEED_NAMES[hook],
                                     "a parallel guardrail may abort or continue, not change anything")

        tasks = [asyncio.ensure_future(one(m, method)) for m in group.members
                 if (method := implements(m, hook)) is not None]
        try:
            for done in asyncio.as_completed(tasks):
                await done
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def apply_message_result(
        self, processor: Any, hook: str, result: Any, message_list: MessageList,
        scope: list[Message],
    ) -> None:
        try:
            apply_messages_returned(result, message_list, scope)
        except ValueError as e:
            raise ProcessorError(processor.id, SEED_NAMES[hook], str(e)) from None

    # --- process_input_step -------------------------------------------------------------------

    async def process_input_step(
        self,
        processors: Sequence[Any],
        message_list: MessageList,
        overrides: dict[str, Any],
        build: Callable[[Any, dict[str, Any], dict[str, Any]], Any],
        resolve_tools: Callable[[Any, dict[str, Any]], dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Chains step overrides: each processor sees the previous one's (``Object.assign``).

        ``resolve_tools(returned, current)`` turns a returned ``tools`` (tools, or names of
        tools) into the step's tool set; a ``LookupError`` from it fails the processor."""
        hook = "process_input_step"
        for index, p, method in self._implementing(processors, hook, lambda p, c: build(p, c, overrides)):
            scope = message_list.get_all()
            result = await self._invoke(p, method, index, hook, lambda c: build(p, c, overrides))
            result = as_input_step_result(result)
            if isinstance(result, ProcessInputStepResult):
                changes = result.set_fields()
                messages = changes.pop("messages", None)
                system = changes.pop("system_messages", None)
                if messages is not None or system is not None:
                    self.apply_message_result(
                        p, hook, MessagesResult(messages, system), message_list, scope
                    )
                if "tools" in changes and resolve_tools is not None:
                    try:
                        changes["tools"] = resolve_tools(changes["tools"], overrides["tools"])
                    except LookupError as e:
                        raise ProcessorError(p.id, SEED_NAMES[hook], str(e.args[0] if e.args else e)) from None
                overrides.update(changes)
            else:
                self.apply_message_result(p, hook, result, message_list, scope)
        return overrides

    # --- process_llm_request / process_llm_response -------------------------------------------

    async def process_llm_request(
        self, processors: Sequence[Any], prompt: Prompt,
        build: Callable[[Any, dict[str, Any], Prompt], Any],
    ) -> tuple[Prompt, list[Chunk] | None]:
        hook = "process_llm_request"
        for index, p, method in _implementing(processors, hook):
            returned = await self._invoke(p, method, index, hook, lambda c: build(p, c, prompt))
            try:
                result = as_llm_request_result(returned)
            except ValueError as e:
                raise ProcessorError(p.id, SEED_NAMES[hook], str(e)) from None
            if result is None:
                continue
            if result.prompt is not None:
                prompt = result.prompt
            if result.response is not None:
                return prompt, list(result.response)  # the first cached response wins
        return prompt, None

    async def process_llm_response(
        self, processors: Sequence[Any], build: Callable[[Any, dict[str, Any]], Any]
    ) -> None:
        hook = "process_llm_response"
        for index, p, method in _implementing(processors, hook):
            await self._invoke(p, method, index, hook, partial(build, p))

    # --- tool hooks served by processors -----------------------------------------------------

    async def run_tool_hook(
        self, processors: Sequence[Any], hook: str, tool_name: str,
        build: Callable[[Any, dict[str, Any]], Any], stop: Callable[[Any], bool] = lambda _: False,
    ) -> Any:
        """``before_tool_call`` / ``after_tool_call`` of the processors that serve it for this
        tool, in order; returns the first result ``stop`` accepts (a skip), else None."""
        for index, p, method in _implementing(processors, hook):
            if not wants_tool(p, hook, tool_name):
                continue
            result = await self._invoke(p, method, index, hook, partial(build, p))
            if stop(result):
                return result
        return None

    # --- process_api_error --------------------------------------------------------------------

    async def process_api_error(
        self, processors: Sequence[Any], build: Callable[[Any, dict[str, Any]], Any]
    ) -> bool:
        """True when a processor asked to retry; errors other than abort go to the next one."""
        hook = "process_api_error"
        for index, p, method in _implementing(processors, hook):
            try:
                result = await self._invoke(p, method, index, hook, partial(build, p))
            except ProcessorUnavailableError:
                raise
            except ProcessorError:
                log.warning("error processor %s failed; trying the next", p.id, exc_info=True)
                continue
            if wants_retry(result):
                return True
        return False

    # --- process_output_stream: the per-chunk hot path ----------------------------------------

    async def process_output_stream(
        self, processors: Sequence[Any], chunk: Chunk, message_list: MessageList, offset: int = 0
    ) -> StreamResult:
        """Run the chunk through every output processor; None means it was dropped, a list that
        a processor replaced it by several (each goes through the processors after that one).

        ``offset`` is the index of ``processors[0]`` in the agent's array.

        The per-chunk hot path: everything that is the same for every chunk of a step (the
        processor's span, its context, its ``stream_parts``, the arguments but ``part``, its
        stats entry) is made once per processor and step (``_Stage``); per chunk there is one
        call of the hook and no other coroutine. A remote processor whose hook is OBSERVE has a
        faster path still (``stream_observer``): the chunk's invocation is queued, nothing is
        called or awaited, and the chunk is serialized once for every such processor.
        """
        shared = self._shared
        """The chunk and its serialized form, shared by the stream observers (``_Stage.observe``)."""
        stages = self._stages
        sc = self.scope
        step, retry = sc.step_number, sc.retry_count
        current = _current_context()
        is_data = chunk.type.startswith("data-")
        for pos, p in enumerate(processors):
            index = offset + pos
            st = stages.get(p.id)
            if (st is None or st.processor is not p or st.index != index or st.ml is not message_list
                    or st.step != step or st.retry != retry):
                if st is not None:
                    st.flush()
                    sc.stats.untrack(st)
                st = stages[p.id] = _Stage(p, index, message_list, sc)
            observe = st.observe
            if observe is None or st.base is not current:
                if st.dynamic:
                    method = implements(p, "process_output_stream")
                    if method is None:
                        continue
                elif (method := st.method) is None:
                    continue
                if is_data and not st.data_parts:
                    continue
                if st.template is None or st.base is not current:
                    self._arm(st, current)
                    observe = st.observe
            elif is_data and not st.data_parts:
                continue
            else:
                method = None
            if observe is not None:
                if observe(chunk, shared):
                    st.stream.chunks += 1  # type: ignore[union-attr]
                    st.parts.append(chunk)
                    st.passed += 1
                    continue
                st.observe = None  # this step's remaining chunks take the ordinary path
                if method is None and (method := implements(p, "process_output_stream")) is None:
                    continue
            assert method is not None
            stream = st.stream
            assert stream is not None
            stream.chunks += 1
            st.parts.append(chunk)
            args = st.args
            args.part = chunk
            token = _attach(st.ctx) if st.attach else None  # type: ignore[arg-type]
            started = _perf_counter()
            outcome = "error"
            try:
                try:
                    p.processor_index = index
                except AttributeError:  # frozen or slotted processors simply do not get it
                    pass
                shared[0] = None  # the hook may change the chunk in place
                result = method(args)
                if result.__class__ is _CoroutineType or (
                        result is not None and result.__class__ is not Chunk and inspect.isawaitable(result)):
                    result = await result
            except TripwireError as e:
                st.renew()  # the traceback holds it
                e.processor_id = e.processor_id or p.id
                outcome = "retry" if e.retry else "abort"
                stream.span.set_attribute(ATTR.PROCESSOR_OUTCOME, outcome)
                await _notify_violation(p, e, "process_output_stream")
                raise
            except asyncio.CancelledError:
                st.renew()
                outcome = "cancelled"
                raise
            except ProcessorUnavailableError as e:
                st.renew()
                stream.span.set_attribute(ATTR.PROCESSOR_OUTCOME, "error")
                stream.span.set_status(Status(StatusCode.ERROR, str(e)))
                raise
            except Exception as e:
                # An error here is logged and the chunk passes unchanged.
                st.renew()
                stream.span.set_attribute(ATTR.PROCESSOR_OUTCOME, "error")
                failure: ProcessorError
                if isinstance(e, ProcessorError):  # already attributed
                    failure = e
                else:
                    stream.span.record_exception(e)
                    failure = ProcessorError(p.id, SEED_NAMES["process_output_stream"], e)
                    failure.__cause__ = e
                stream.span.set_status(Status(StatusCode.ERROR, str(e)))
                log.warning("processOutputStream of %s failed; chunk passes", p.id, exc_info=failure)
                continue
            else:
                outcome = "drop" if result is None else "continue" if result is chunk else "replace"
                if _refcount(args) > _ARGS_REFS:  # the processor kept them: they stay as it saw them
                    st.renew()
            finally:
                st.seconds += _perf_counter() - started
                if outcome == "continue":
                    st.passed += 1
                else:
                    st.count(outcome)
                if token is not None:
                    _detach(token)
            if result is None or (result.__class__ is list and not result):
                stream.dropped += 1
                return None
            if result is not chunk:
                stream.replaced += 1
                if not isinstance(result, Chunk):
                    return await self._fan_out(p, processors[pos + 1:], index + 1, result, message_list)
                chunk = result
                is_data = chunk.type.startswith("data-")
        return chunk

    def _arm(self, st: _Stage, current: otel_context.Context) -> None:
        """The stage's span (the step's one for the processor), its context over the current
        one, and the arguments every chunk shares."""
        p, index = st.processor, st.index
        stream = st.stream = self._stream_span(p, index)
        st.parts = self._stream_parts.setdefault(p.id, [])
        st.base = current
        st.ctx = stream.context()
        # A span that records nothing, over a current span that records nothing with the same
        # identity (no tracing, a NoOp tracer): the hook's context would be the current one in
        # all but the object, so it is not attached per chunk.
        parent = trace.get_current_span(current)
        st.attach = stream.span.is_recording() or parent.is_recording() or (
            stream.span.get_span_context() != parent.get_span_context())
        common = self._stream_common(p, st.ctx, index)
        st.template = {"part": _NO_PART, "stream_parts": st.parts, "message_list": st.ml, **common}
        st.renew()
        st.flush()
        make = getattr(p, "stream_observer", None)
        st.observer = make(st.args) if make is not None else None
        st.observe = st.observer.send if st.observer is not None else None
        st.entry = self.scope.stats.entry(p.id, SEED_NAMES["process_output_stream"])
        self.scope.stats.track(st)

    async def _fan_out(
        self, processor: Any, rest: Sequence[Any], offset: int, result: Any, message_list: MessageList,
    ) -> StreamResult:
        """A processor replaced one chunk by several: each goes through the processors after it."""
        try:
            chunks = as_chunks(result)
        except TypeError as e:
            raise ProcessorError(processor.id, SEED_NAMES["process_output_stream"], str(e)) from None
        if not rest:
            return one_or_many(chunks)
        out: list[Chunk] = []
        for c in chunks:
            out.extend(as_chunks(await self.process_output_stream(rest, c, message_list, offset)))
        return one_or_many(out)

    async def submit_output_stream(
        self, processor: Any, index: int, chunk: Chunk, message_list: MessageList
    ) -> Awaitable[StreamResult]:
        """The pipelined form of one stage: queue ``chunk`` with the processor and return an
        awaitable for its answer (applied by the caller in chunk order)."""
        if self._stream_hook(processor, chunk) is None:
            return _ready(chunk)
        stream, parts = self._stream_entry(processor, index, chunk)
        ctx = stream.context()
        args = ProcessOutputStreamArgs(
            part=chunk, stream_parts=parts, message_list=message_list,
            **self._stream_common(processor, ctx, index),
        )
        started = time.perf_counter()
        pending = await processor.submit_output_stream(args)
        return self._answer(processor, stream, chunk, pending, started)

    async def _answer(
        self, processor: Any, stream: _StreamSpan, chunk: Chunk, pending: Awaitable[StreamResult],
        started: float,
    ) -> StreamResult:
        outcome = "error"
        try:
            result = await pending
            outcome = "drop" if result is None else "continue" if result is chunk else "replace"
        except TripwireError as e:
            e.processor_id = e.processor_id or processor.id
            outcome = "retry" if e.retry else "abort"
            stream.span.set_attribute(ATTR.PROCESSOR_OUTCOME, outcome)
            await _notify_violation(processor, e, "process_output_stream")
            raise
        except ProcessorUnavailableError:
            raise
        except Exception:
            log.warning("processOutputStream of %s failed; chunk passes", processor.id, exc_info=True)
            return chunk
        finally:
            self.scope.stats.hook(processor.id, SEED_NAMES["process_output_stream"],
                                  time.perf_counter() - started, outcome)
        return stream.count(chunk, result)

    @staticmethod
    def _stream_hook(processor: Any, chunk: Chunk) -> Callable[[Any], Any] | None:
        """The processor's ``process_output_stream`` if ``chunk`` goes to it (``data-*`` chunks
        only reach processors that ask for them)."""
        if chunk.is_data and not getattr(processor, "process_data_parts", False):
            return None
        return implements(processor, "process_output_stream")

    def _stream_entry(self, processor: Any, index: int, chunk: Chunk) -> tuple[_StreamSpan, list[Chunk]]:
        """The processor's span for this step, with ``chunk`` counted, and its ``stream_parts``
        with ``chunk`` added."""
        stream = self._stream_span(processor, index)
        stream.chunks += 1
        parts = self._stream_parts.setdefault(processor.id, [])
        parts.append(chunk)
        return stream, parts

    def _stream_span(self, processor: Any, index: int) -> _StreamSpan:
        s = self._stream_spans.get(processor.id)
        if s is None:
            span = processor_span(
                self.scope.tracer, processor_id=processor.id,
                hook=SEED_NAMES["process_output_stream"], index=index,
                retry_count=self.scope.retry_count,
            )
            s = self._stream_spans[processor.id] = _StreamSpan(span)
        return s

    def end_stream_spans(self) -> None:
        """Close the per-step processOutputStream spans (called at every step end)."""
        for s in self._stream_spans.values():
            s.span.set_attribute(ATTR.CHUNK_COUNT, s.chunks)
            s.span.set_attribute("treadle.processor.chunks_dropped", s.dropped)
            s.span.set_attribute("treadle.processor.chunks_replaced", s.replaced)
            s.span.end()
        self._stream_spans.clear()
        for st in self._stages.values():
            st.flush()
            self.scope.stats.untrack(st)
        self._stages.clear()


def _implementing(
    processors: Sequence[Any], hook: str
) -> Iterator[tuple[int, Any, Callable[[Any], Any]]]:
    """``(index, processor, its hook method)`` of the processors that implement ``hook``."""
    for index, p in enumerate(processors):
        method = implements(p, hook)
        if method is not None:
            yield index, p, method


class _Stage:
    """One processor's ``process_output_stream`` within one step, as the hot path needs it."""

    __slots__ = ("processor", "index", "ml", "step", "retry", "dynamic", "method", "data_parts",
                 "stream", "parts", "base", "ctx", "attach", "template", "args", "entry", "passed", "seconds", "outcomes",
                 "observer", "observe")

    def __init__(self, processor: Any, index: int, ml: MessageList, scope: RunScope) -> None:
        self.processor = processor
        self.index = index
        self.ml = ml
        self.step, self.retry = scope.step_number, scope.retry_count
        self.dynamic = getattr(processor, "implements_hook", None) is not None
        """Its hooks are known at run time (a remote processor): asked for every chunk."""
        self.method = None if self.dynamic else implements(processor, "process_output_stream")
        self.data_parts = bool(getattr(processor, "process_data_parts", False))
        self.stream: _StreamSpan | None = None
        self.parts: list[Chunk] = []
        self.base: otel_context.Context | None = None
        self.ctx: otel_context.Context | None = None
        self.attach = True
        """Whether ``ctx`` is made current around each invocation (``_arm``)."""
        self.template: dict[str, Any] | None = None
        """``ProcessOutputStreamArgs``'s fields but ``part``, made once (``_arm``)."""
        self.args: Any = None
        """The arguments of the next invocation, ``part`` set per chunk: one object while no
        invocation keeps a reference to it (``renew``), so a processor that keeps its ``args``
        never sees them change."""
        self.entry: dict[str, Any] | None = None
        """Its stats entry (``RunStats.entry``), where ``flush`` adds what it counted since."""
        self.passed = 0
        """Invocations since the last ``flush`` that passed the chunk on (outcome ``continue``)."""
        self.seconds = 0.0
        self.outcomes: dict[str, int] = {}
        """Other outcomes since the last ``flush``."""
        self.observer: Any = None
        """A remote OBSERVE processor's fast path for this step (``stream_observer``), or None."""
        self.observe: Callable[[Chunk, list[Any]], bool] | None = None
        """``observer.send``: queues the chunk's invocation; False sends it the ordinary way."""

    def renew(self) -> None:
        """Fresh arguments for the next chunk."""
        args = _new_args(_STREAM_ARGS)
        args.__dict__.update(self.template)  # type: ignore[arg-type]
        self.args = args

    def count(self, outcome: str) -> None:
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1

    def flush(self) -> None:
        """Add what was counted to the run's stats (it ends the step, or they are read)."""
        if self.observer is not None:
            self.observer.flush()
        entry = self.entry
        if entry is None:
            return
        outcomes = entry["outcomes"]
        if self.passed:
            outcomes["continue"] = outcomes.get("continue", 0) + self.passed
        for outcome, n in self.outcomes.items():
            outcomes[outcome] = outcomes.get(outcome, 0) + n
        entry["count"] += self.passed + sum(self.outcomes.values())
        entry["seconds"] += self.seconds
        self.passed, self.seconds = 0, 0.0
        self.outcomes.clear()


_STREAM_ARGS = ProcessOutputStreamArgs
_new_args = object.__new__
_NO_PART = Chunk("")
_CoroutineType = types.CoroutineType
_refcount: Callable[[Any], int] = getattr(sys, "getrefcount", lambda _: 1 << 30)  # none: always fresh args
_ARGS_REFS = 3
"""References to a stage's ``args`` after an invocation that kept none: the stage's, the local
variable's and ``getrefcount``'s own."""
_perf_counter = time.perf_counter


def _context_var() -> Any:
    """The ContextVar OpenTelemetry keeps the current context in, when its runtime context is
    the default one (then attaching is one ``set``); None otherwise."""
    var = getattr(getattr(otel_context, "_RUNTIME_CONTEXT", None), "_current_context", None)
    return var if isinstance(var, contextvars.ContextVar) else None


_CONTEXT_VAR = _context_var()
_current_context: Callable[[], otel_context.Context] = (
    _CONTEXT_VAR.get if _CONTEXT_VAR is not None else otel_context.get_current)
_attach: Callable[[otel_context.Context], Any] = (
    _CONTEXT_VAR.set if _CONTEXT_VAR is not None else otel_context.attach)  # type: ignore[assignment]
_detach: Callable[[Any], None] = (
    _CONTEXT_VAR.reset if _CONTEXT_VAR is not None else otel_context.detach)  # type: ignore[assignment]


async def _ready(chunk: Chunk) -> Chunk:
    return chunk


def _set_index(processor: Any, index: int) -> None:
    try:
        processor.processor_index = index
    except AttributeError:  # frozen or slotted processors simply do not get it
        pass
