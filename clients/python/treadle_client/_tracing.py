"""Spans for invocations, parented on the W3C trace context each invocation carries."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer, TracerProvider

from treadle.v1 import remote_pb2

INSTRUMENTATION = "treadle_client"


def tracer_from(provider: TracerProvider | None) -> Tracer:
    """The SDK's tracer: from ``provider``, else from the global provider."""
    return (provider or trace.get_tracer_provider()).get_tracer(INSTRUMENTATION)


class ParentContexts:
    """The server span's context per distinct carrier, extracted once: every chunk of a step's
    ``processOutputStream`` carries the same one. Bounded; one per attachment."""

    def __init__(self, size: int = 256) -> None:
        self._size = size
        self._contexts: dict[tuple[str, str, str], Any] = {}

    def get(self, trace_context: remote_pb2.TraceContext) -> Any:
        key = (trace_context.traceparent, trace_context.tracestate, trace_context.baggage)
        ctx = self._contexts.get(key)
        if ctx is None:
            carrier = {k: v for k, v in zip(("traceparent", "tracestate", "baggage"), key) if v}
            if len(self._contexts) >= self._size:
                self._contexts.clear()
            ctx = self._contexts[key] = propagate.extract(carrier)
        return ctx


@contextmanager
def invocation_span(
    tracer: Tracer, name: str, trace_context: remote_pb2.TraceContext, attributes: dict[str, Any],
    parents: ParentContexts | None = None,
) -> Iterator[Span]:
    """A span that is a child of the server's span for this invocation.

    The extracted context is attached for the duration, so baggage the server sent is visible
    to the hook (``opentelemetry.baggage.get_all()``) as well as the parent span.
    """
    parent = (parents or ParentContexts()).get(trace_context)
    span = tracer.start_span(name, context=parent, kind=SpanKind.SERVER, attributes=attributes,
                             record_exception=False, set_status_on_exception=False)
    token = otel_context.attach(trace.set_span_in_context(span, parent))
    try:
        yield span
    finally:
        otel_context.detach(token)
        span.end()


def mark_error(span: Span, error: BaseException) -> None:
    span.record_exception(error)
    span.set_status(Status(StatusCode.ERROR, str(error)))
