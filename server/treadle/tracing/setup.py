"""Exporter set-up from the standard ``OTEL_*`` variables: OTLP when configured, nothing otherwise."""

from __future__ import annotations

import os
from collections.abc import Mapping

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter

_ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


def _otlp_exporter(env: Mapping[str, str]) -> SpanExporter | None:
    if not any(env.get(v) for v in _ENDPOINT_VARS):
        return None
    protocol = env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or env.get(
        "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"
    )
    if protocol.startswith("http"):
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter()
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
        OTLPSpanExporter as GrpcOTLPSpanExporter,
    )

    return GrpcOTLPSpanExporter()


def build_tracer_provider(
    env: Mapping[str, str] | None = None, *, service_name: str = "treadle"
) -> TracerProvider | None:
    """A provider exporting over OTLP (gRPC or HTTP per ``OTEL_EXPORTER_OTLP_PROTOCOL``).

    Returns None when no OTLP endpoint is configured: then nothing is exported.
    """
    env = os.environ if env is None else env
    exporter = _otlp_exporter(env)
    if exporter is None:
        return None
    name = env.get("OTEL_SERVICE_NAME", service_name)
    provider = TracerProvider(resource=Resource.create({"service.name": name}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider
