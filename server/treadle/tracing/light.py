"""The tracer of a server that exports nothing: spans kept for the console alone, made cheaply.

With no OTLP endpoint the only reader of a run's spans is the server itself: the console's
recent traces (``recent.RecentSpans``), the trace context sent to remote processors, tools and
agents, and a scored run's span context. ``LightTracer`` makes the same spans (names, kinds,
attributes, status, events, parent and ids) as the SDK's tracer with its default sampler, and
hands each one to ``RecentSpans`` when it starts and ends, without what only an exporter needs:
the SDK's span processors, locks, resource and instrumentation bookkeeping and its copy of every
ended span. An ended span is its own readable form.
"""

from __future__ import annotations

import logging
import os
import random
import traceback
from collections.abc import Mapping, Sequence
from time import time_ns
from types import TracebackType
from typing import Any

from opentelemetry import context as context_api
from opentelemetry import trace as trace_api
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, SpanLimits
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import (
    INVALID_SPAN_ID,
    INVALID_TRACE_ID,
    Link,
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
)
from opentelemetry.trace.span import TraceState

from .recent import RecentSpans
from .spans import use_span

log = logging.getLogger(__name__)

_SAMPLED = TraceFlags(TraceFlags.SAMPLED | TraceFlags.RANDOM_TRACE_ID)
"""A root span's flags, as the SDK sets them (its ids are random)."""
_UNSET = Status(StatusCode.UNSET)
_PLAIN = frozenset({str, bool, int, float, bytes, type(None)})
_DEFAULT_SAMPLERS = ("", "parentbased_always_on", "always_on")

_getrandbits = random.getrandbits


def usable() -> bool:
    """Whether the light tracer makes the spans the SDK's would: with its default sampler (the
    SDK reads these variables from the process environment)."""
    env = os.environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return env.get("OTEL_TRACES_SAMPLER", "").strip().lower() in _DEFAULT_SAMPLERS


def _span_id() -> int:
    span_id = _getrandbits(64)
    while span_id == INVALID_SPAN_ID:
        span_id = _getrandbits(64)
    return span_id


def _trace_id() -> int:
    trace_id = _getrandbits(128)
    while trace_id == INVALID_TRACE_ID:
        trace_id = _getrandbits(128)
    return trace_id


def _clean(value: Any) -> Any:
    """An attribute value as the SDK keeps it: sequences as tuples, other objects as text."""
    if value.__class__ in _PLAIN or isinstance(value, (str, bool, int, float, bytes)):
        return value
    if isinstance(value, Sequence):
        return tuple(_clean(v) for v in value)
    if isinstance(value, Mapping):
        return {str(k): _clean(v) for k, v in value.items() if k}
    return str(value)


class LightSpan(trace_api.Span):
    """A recording span that is also its own ``ReadableSpan`` once ended."""

    __slots__ = ("name", "context", "parent", "kind", "start_time", "end_time", "status", "attributes",
                 "events", "links", "_tracer", "_record_exception", "_set_status_on_exception")

    def __init__(self, tracer: LightTracer, name: str, context: SpanContext, parent: SpanContext | None,
                 kind: SpanKind, attributes: Mapping[str, Any] | None, links: Sequence[Link],
                 record_exception: bool, set_status_on_exception: bool) -> None:
        self._tracer = tracer
        self.name = name
        self.context = context
        self.parent = parent
        self.kind = kind
        self.events: list[Event] = []
        self.links = tuple(links)
        self.status = _UNSET
        self.start_time: int | None = None
        self.end_time: int | None = None
        self._record_exception = record_exception
        self._set_status_on_exception = set_status_on_exception
        self.attributes: dict[str, Any] = {}
        if attributes:
            if len(attributes) <= tracer.max_attributes and tracer.max_length is None:
                kept = self.attributes
                for key, value in attributes.items():  # the common case: plain values, kept as they are
                    if value.__class__ not in _PLAIN or key.__class__ is not str or not key:
                        self.attributes = {}
                        self.set_attributes(attributes)
                        break
                    kept[key] = value
            else:
                self.set_attributes(attributes)

    # --- the ReadableSpan side, for the console -------------------------------------------------

    @property
    def resource(self) -> Resource:
        return self._tracer.resource

    @property
    def instrumentation_scope(self) -> InstrumentationScope:
        return self._tracer.scope

    @property
    def dropped_attributes(self) -> int:
        return 0

    @property
    def dropped_events(self) -> int:
        return 0

    @property
    def dropped_links(self) -> int:
        return 0

    # --- the Span side --------------------------------------------------------------------------

    def get_span_context(self) -> SpanContext:
        return self.context

    def is_recording(self) -> bool:
        return self.end_time is None

    def set_attribute(self, key: str, value: Any) -> None:
        if self.end_time is not None:
            log.warning("Setting attribute on ended span.")
            return
        if not key or not isinstance(key, str):
            log.warning("invalid key `%s`. must be non-empty string. Dropping key from attributes.", key)
            return
        attributes = self.attributes
        if value.__class__ not in _PLAIN:
            value = _clean(value)
        elif value.__class__ is str and self._tracer.max_length is not None:
            value = value[: self._tracer.max_length]
        if key in attributes:
            del attributes[key]
        elif len(attributes) >= self._tracer.max_attributes:
            if not attributes:
                return
            del attributes[next(iter(attributes))]
        attributes[key] = value

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        for key, value in attributes.items():
            self.set_attribute(key, value)

    def add_event(self, name: str, attributes: Mapping[str, Any] | None = None,
                  timestamp: int | None = None) -> None:
        if self.end_time is not None:
            log.warning("Tried calling add_event on an ended span.")
            return
        if len(self.events) < self._tracer.max_events:
            cleaned = {k: _clean(v) for k, v in (attributes or {}).items() if k and isinstance(k, str)}
            self.events.append(Event(name, cleaned, timestamp if timestamp is not None else time_ns()))

    def add_link(self, context: SpanContext, attributes: Mapping[str, Any] | None = None) -> None:
        if self.end_time is None and context is not None and context.is_valid:
            self.links = (*self.links, Link(context, attributes))

    def update_name(self, name: str) -> None:
        if self.end_time is None:
            self.name = name

    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        if self.end_time is not None:
            log.warning("Tried calling set_status on an ended span.")
            return
        if self.status.status_code is StatusCode.OK:
            return
        if isinstance(status, Status):
            if status.status_code is not StatusCode.UNSET:
                self.status = status
        elif status is not StatusCode.UNSET:
            self.status = Status(status, description)

    def record_exception(self, exception: BaseException, attributes: Mapping[str, Any] | None = None,
                         timestamp: int | None = None, escaped: bool = False) -> None:
        module, qualname = type(exception).__module__, type(exception).__qualname__
        recorded: dict[str, Any] = {
            "exception.type": f"{module}.{qualname}" if module and module != "builtins" else qualname,
            "exception.message": str(exception),
            "exception.stacktrace": "".join(traceback.format_exception(exception)),
            "exception.escaped": str(escaped),
        }
        if attributes:
            recorded.update(attributes)
        self.add_event("exception", recorded, timestamp)

    def end(self, end_time: int | None = None) -> None:
        if self.end_time is not None:
            log.warning("Calling end() on an ended span.")
            return
        self.end_time = end_time if end_time is not None else time_ns()
        self._tracer.recent.on_end(self)  # type: ignore[arg-type]

    def __exit__(self, exc_type: type[BaseException] | None, exc_val: BaseException | None,
                 exc_tb: TracebackType | None) -> None:
        if exc_val is not None and self.is_recording():
            if self._record_exception:
                self.record_exception(exc_val, escaped=True)
            if self._set_status_on_exception:
                self.set_status(Status(StatusCode.ERROR, f"{type(exc_val).__name__}: {exc_val}"))
        self.end()

    def __repr__(self) -> str:
        return f'{type(self).__name__}(name="{self.name}", context={self.context})'


class LightTracer(trace_api.Tracer):
    def __init__(self, recent: RecentSpans, resource: Resource, scope: InstrumentationScope,
                 limits: SpanLimits) -> None:
        self.recent = recent
        self.resource = resource
        self.scope = scope
        self.max_attributes = limits.max_span_attributes if limits.max_span_attributes is not None else 1 << 62
        self.max_events = limits.max_events if limits.max_events is not None else 1 << 62
        self.max_length = limits.max_span_attribute_length

    def start_span(
        self, name: str, context: context_api.Context | None = None, kind: SpanKind = SpanKind.INTERNAL,
        attributes: Mapping[str, Any] | None = None, links: Sequence[Link] | None = (),
        start_time: int | None = None, record_exception: bool = True, set_status_on_exception: bool = True,
    ) -> trace_api.Span:
        parent: SpanContext | None = trace_api.get_current_span(context).get_span_context()
        if parent is None or not parent.is_valid:
            parent = None
            span_context = SpanContext(_trace_id(), _span_id(), is_remote=False, trace_flags=_SAMPLED)
        else:
            flags = parent.trace_flags
            sampled = flags.sampled  # the default sampler follows the parent's decision
            bits = (TraceFlags.SAMPLED if sampled else 0) | (TraceFlags.RANDOM_TRACE_ID if flags.random_trace_id else 0)
            span_context = SpanContext(parent.trace_id, _span_id(), is_remote=False, trace_flags=TraceFlags(bits),
                                       trace_state=parent.trace_state or TraceState())
            if not sampled:
                return NonRecordingSpan(span_context)
        span = LightSpan(self, name, span_context, parent, kind, attributes, links or (), record_exception,
                         set_status_on_exception)
        span.start_time = start_time if start_time is not None else time_ns()
        self.recent.on_start(span)  # type: ignore[arg-type]
        return span

    def start_as_current_span(  # type: ignore[override]
        self, name: str, context: context_api.Context | None = None, kind: SpanKind = SpanKind.INTERNAL,
        attributes: Mapping[str, Any] | None = None, links: Sequence[Link] | None = (),
        start_time: int | None = None, record_exception: bool = True, set_status_on_exception: bool = True,
        end_on_exit: bool = True,
    ) -> Any:
        span = self.start_span(name, context, kind, attributes, links, start_time, record_exception,
                               set_status_on_exception)
        return use_span(span, end_on_exit, record_exception, set_status_on_exception)


class LightTracerProvider(trace_api.TracerProvider):
    """What ``TreadleApp`` traces with when no OTLP endpoint is configured (see the module)."""

    def __init__(self, recent: RecentSpans, resource: Resource | None = None) -> None:
        self.recent = recent
        self.resource = resource if resource is not None else Resource.create({"service.name": "treadle"})
        self._limits = SpanLimits()
        self._tracers: dict[tuple[str, str | None, str | None], LightTracer] = {}

    def get_tracer(self, instrumenting_module_name: str, instrumenting_library_version: str | None = None,
                   schema_url: str | None = None, attributes: Any = None) -> LightTracer:
        key = (instrumenting_module_name, instrumenting_library_version, schema_url)
        tracer = self._tracers.get(key)
        if tracer is None:
            scope = InstrumentationScope(instrumenting_module_name, instrumenting_library_version, schema_url)
            tracer = self._tracers[key] = LightTracer(self.recent, self.resource, scope, self._limits)
        return tracer

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    def shutdown(self) -> None:
        return None
