"""Exporter set-up from the standard ``OTEL_*`` variables: OTLP when configured, nothing otherwise.

The variables are read from the ``env`` given (default ``os.environ``) and the endpoint is passed
to the exporter explicitly, so an injected ``env`` means the same as the process environment.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

# signal -> (module suffix, exporter class); the package is ``...otlp.proto.{grpc|http}``.
_EXPORTERS = {
    "traces": ("trace_exporter", "OTLPSpanExporter"),
    "metrics": ("metric_exporter", "OTLPMetricExporter"),
}


def _endpoint(env: Mapping[str, str], signal: str) -> tuple[str, str] | None:
    """(protocol, endpoint) for ``signal``, or None when no endpoint is configured."""
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


def _otlp_exporter(env: Mapping[str, str], signal: str) -> Any | None:
    found = _endpoint(env, signal)
    if found is None:
        return None
    protocol, endpoint = found
    transport = "http" if protocol.startswith("http") else "grpc"
    module, cls = _EXPORTERS[signal]
    exporters = importlib.import_module(f"opentelemetry.exporter.otlp.proto.{transport}.{module}")
    return getattr(exporters, cls)(endpoint=endpoint)


def _resource(env: Mapping[str, str], service_name: str) -> Resource:
    return Resource.create({"service.name": env.get("OTEL_SERVICE_NAME", service_name)})


def build_tracer_provider(
    env: Mapping[str, str] | None = None, *, service_name: str = "treadle"
) -> TracerProvider | None:
    """A provider exporting spans over OTLP (gRPC or HTTP per ``OTEL_EXPORTER_OTLP_PROTOCOL``),
    or None when no OTLP endpoint is configured: then nothing is exported."""
    env = os.environ if env is None else env
    exporter = _otlp_exporter(env, "traces")
    if exporter is None:
        return None
    provider = TracerProvider(resource=_resource(env, service_name))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def build_meter_provider(
    env: Mapping[str, str] | None = None, *, service_name: str = "treadle"
) -> MeterProvider | None:
    """A provider exporting metrics over OTLP every ``OTEL_METRIC_EXPORT_INTERVAL`` ms (default
    60 s), or None when no OTLP endpoint is configured."""
    env = os.environ if env is None else env
    exporter = _otlp_exporter(env, "metrics")
    if exporter is None:
        return None
    interval = float(env.get("OTEL_METRIC_EXPORT_INTERVAL", "60000"))
    reader = PeriodicExportingMetricReader(exporter, export_interval_millis=interval)
    return MeterProvider(metric_readers=[reader], resource=_resource(env, service_name))
