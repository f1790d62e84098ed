"""Exporter set-up from the standard ``OTEL_*`` variables: OTLP when configured, nothing otherwise."""

from __future__ import annotations

import os
from collections.abc import Mapping

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricExporter, PeriodicExportingMetricReader



def _endpoint(env: Mapping[str, str], signal: str) -> tuple[str, str] | None:
    """(protocol, endpoint) for ``signal`` ("traces" or "metrics"), read from ``env`` the way the
    OTLP exporters read ``os.environ``, so an injected ``env`` is honoured too."""
    upper = signal.upper()
    protocol = env.get(f"OTEL_EXPORTER_OTLP_{upper}_PROTOCOL") or env.get(
        "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"
    )
    if specific := env.get(f"OTEL_EXPORTER_OTLP_{upper}_ENDPOINT"):
        return protocol, specific
    if base := env.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        if protocol.startswith("http"):  # the general endpoint gets the signal's path
            return protocol, base.rstrip("/") + f"/v1/{signal}"
        return protocol, base
    return None


def _otlp_exporter(env: Mapping[str, str]) -> SpanExporter | None:
    found = _endpoint(env, "traces")
    if found is None:
        return None
    protocol, endpoint = found
    if protocol.startswith("http"):
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter(endpoint=endpoint)
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
        OTLPSpanExporter as GrpcOTLPSpanExporter,
    )

    return GrpcOTLPSpanExporter(endpoint=endpoint)


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


def _otlp_metric_exporter(env: Mapping[str, str]) -> MetricExporter | None:
    found = _endpoint(env, "metrics")
    if found is None:
        return None
    protocol, endpoint = found
    if protocol.startswith("http"):
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

        return OTLPMetricExporter(endpoint=endpoint)
    from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (
        OTLPMetricExporter as GrpcOTLPMetricExporter,
    )

    return GrpcOTLPMetricExporter(endpoint=endpoint)


def build_meter_provider(
    env: Mapping[str, str] | None = None, *, service_name: str = "treadle"
) -> MeterProvider | None:
    """A provider exporting metrics over OTLP every ``OTEL_METRIC_EXPORT_INTERVAL`` ms (default
    60 s), or None when no OTLP endpoint is configured."""
    env = os.environ if env is None else env
    exporter = _otlp_metric_exporter(env)
    if exporter is None:
        return None
    interval = float(env.get("OTEL_METRIC_EXPORT_INTERVAL", "60000"))
    reader = PeriodicExportingMetricReader(exporter, export_interval_millis=interval)
    name = env.get("OTEL_SERVICE_NAME", service_name)
    return MeterProvider(metric_readers=[reader], resource=Resource.create({"service.name": name}))
