"""An OTLP/HTTP receiver on a free loopback port: what the exporters under test really send."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


class OtlpReceiver:
    """Records every export request (path and body); ``arrived`` is set by the first one."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, bytes]] = []
        self.arrived = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = self._body()
                owner.requests.append((self.path, body))
                owner.arrived.set()
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

            def _body(self) -> bytes:
                length = self.headers["content-length"]
                if length is not None:
                    return self.rfile.read(int(length))
                chunks = []  # Transfer-Encoding: chunked (the Node exporters send that)
                while size := int(self.rfile.readline().strip() or b"0", 16):
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
                self.rfile.readline()
                return b"".join(chunks)

            def log_message(self, *args: Any) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    @property
    def base(self) -> str:
        """For ``OTEL_EXPORTER_OTLP_ENDPOINT`` (exporters add ``/v1/traces`` etc.)."""
        return f"http://127.0.0.1:{self.http.server_address[1]}"

    @property
    def endpoint(self) -> str:
        """For ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``."""
        return f"{self.base}/v1/traces"

    @property
    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]

    def trace_requests(self) -> list[ExportTraceServiceRequest]:
        out = []
        for path, body in self.requests:
            if path.endswith("/v1/traces"):
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                out.append(request)
        return out

    def metrics(self) -> dict[str, list[Any]]:
        """Every exported metric by name: its data points' values (sums and gauges), in order."""
        out: dict[str, list[Any]] = {}
        for path, body in self.requests:
            if not path.endswith("/v1/metrics"):
                continue
            request = ExportMetricsServiceRequest()
            request.ParseFromString(body)
            for rm in request.resource_metrics:
                for sm in rm.scope_metrics:
                    for metric in sm.metrics:
                        kind = metric.WhichOneof("data")
                        points = getattr(metric, kind).data_points if kind in ("sum", "gauge") else []
                        values = [getattr(p, p.WhichOneof("value")) for p in points]
                        out.setdefault(metric.name, []).extend(values)
        return out

    def spans(self) -> list[Any]:
        return [span for req in self.trace_requests() for rs in req.resource_spans
                for ss in rs.scope_spans for span in ss.spans]

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture
def otlp() -> Iterator[OtlpReceiver]:
    receiver = OtlpReceiver()
    yield receiver
    receiver.close()
