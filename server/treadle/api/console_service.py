"""``ConsoleService``: what the web console shows beside the rest of the API (recent spans of the
server's own runs, attached replicas with health and latency). Admin-only when auth is on (the
gate checks it)."""

from __future__ import annotations

from typing import Any

import grpc

from ..core.errors import InvalidArgumentError
from ..core.processor import SEED_NAMES
from ..tracing.recent import RecentSpans, attributes
from ..v1 import console_service_pb2 as pb, console_service_pb2_grpc
from ..wire.data import dict_to_struct
from .processor_hub import ProcessorHub
from .status import unary
from .tool_hub import ToolHub

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["ConsoleService"].full_name
_STATUS = {0: "UNSET", 1: "OK", 2: "ERROR"}


class ConsoleServicer(console_service_pb2_grpc.ConsoleServiceServicer):
    def __init__(self, spans: RecentSpans, processors: ProcessorHub, tools: ToolHub) -> None:
        self.spans = spans
        self.processors = processors
        self.tools = tools

    def register(self, server: grpc.aio.Server) -> None:
        console_service_pb2_grpc.add_ConsoleServiceServicer_to_server(self, server)

    @unary
    async def ListSpans(self, request: pb.ListSpansRequest, context: Any) -> pb.ListSpansResponse:
        if not request.run_id:
            raise InvalidArgumentError("run_id is required")
        out = pb.ListSpansResponse()
        for span in self.spans.run_spans(request.run_id):
            parent = span.parent.span_id if span.parent is not None else 0
            item = out.spans.add(
                trace_id=f"{span.context.trace_id:032x}", span_id=f"{span.context.span_id:016x}",
                parent_span_id=f"{parent:016x}" if parent else "", name=span.name,
                start_unix_nano=span.start_time or 0, end_unix_nano=span.end_time or 0,
                status=_STATUS.get(span.status.status_code.value, "UNSET"),
                status_message=span.status.description or "",
            )
            dict_to_struct(attributes(span), item.attributes)
        return out

    @unary
    async def ListReplicas(self, request: pb.ListReplicasRequest, context: Any) -> pb.ListReplicasResponse:
        hub = self.processors
        out = pb.ListReplicasResponse()
        now = hub.clock()
        for conn in sorted(hub.connections(), key=lambda c: c.number):
            ejected = hub.ejected(conn)
            for pid, declaration in sorted(conn.declarations.items()):
                out.processors.append(pb.ProcessorReplica(
                    processor_id=pid, instance_id=conn.instance_id,
                    health="ejected" if ejected else "draining" if conn.draining else "healthy",
                    ejected_for_seconds=max(0.0, conn.ejected_until - now) if ejected else 0.0,
                    ejections=conn.ejections, consecutive_failures=conn.failures,
                    pending=len(conn.pending),
                    hooks=[SEED_NAMES.get(h, h) for h in declaration.hooks],
                ))
        for (pid, hook), stat in sorted(hub.hook_stats.items()):
            out.hook_latency.append(pb.HookLatency(
                processor_id=pid, hook=hook, count=stat.count,
                mean_ms=stat.total_ms / stat.count if stat.count else 0.0, max_ms=stat.max_ms,
                timeouts=stat.timeouts, errors=stat.errors,
            ))
        for stream in self.tools.streams():
            for name in sorted(stream.tools):
                out.tools.append(pb.ToolReplica(tool_name=name, instance_id=stream.instance_id,
                                                pending=len(stream.pending)))
        return out
