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


@contextmanager
def invocation_span(
    tracer: Tracer, name: str, trace_context: remote_pb2.TraceContext, attributes: dict[str, Any]
) -> Iterator[Span]:
    """A span that is a child of the server's span for this invocation.

    The extracted context is attached for the duration, so baggage the server sent is visible
    to the hook (``opentelemetry.baggage.get_all()``) as well as the parent span.
    """
    carrier = {
        key: value
        for key, value in (
            ("traceparent", trace_context.traceparent),
            ("tracestate", trace_context.tracestate),
            ("baggage", trace_context.baggage),
        )
        if value
    }
    token = otel_context.attach(propagate.extract(carrier))
    try:
        with tracer.start_as_current_span(
            name, kind=SpanKind.SERVER, attributes=attributes, record_exception=False,
            set_status_on_exception=False,
        ) as span:
            yield span
    finally:
        otel_context.detach(token)


def mark_error(span: Span, error: BaseException) -> None:
    span.record_exception(error)
    span.set_status(Status(StatusCode.ERROR, str(error)))
