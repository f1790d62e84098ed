"""The spans of the server's own recent runs, kept in memory for the console (bounded).

A span processor added beside any exporter: OTLP export is unchanged. Spans are grouped by trace;
a run's spans are its ``invoke_agent`` span (the one carrying ``treadle.run.id``) and everything
under it. The oldest traces are forgotten first once ``max_traces`` are kept, and a trace keeps
at most ``max_spans`` spans (a run with thousands of tool calls shows its first ones); and all
of them together at most ``max_total`` spans (the oldest traces go first), which bounds the memory
they take whatever the runs look like.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from .spans import ATTR

DEFAULT_MAX_TRACES = 200
DEFAULT_MAX_SPANS = 2000
DEFAULT_MAX_TOTAL = 20000


class RecentSpans(SpanProcessor):
    def __init__(self, max_traces: int = DEFAULT_MAX_TRACES, max_spans: int = DEFAULT_MAX_SPANS,
                 max_total: int = DEFAULT_MAX_TOTAL) -> None:
        self.max_traces = max_traces
        self.max_spans = max_spans
        self.max_total = max_total
        self._total = 0
        self._traces: OrderedDict[int, list[ReadableSpan]] = OrderedDict()
        self._runs: OrderedDict[str, tuple[int, int]] = OrderedDict()
        """run id -> (trace id, span id of its invoke_agent span)."""
        self._lock = threading.Lock()  # the SDK may end spans from other threads

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        attributes = span.attributes
        if not attributes or ATTR.RUN_ID not in attributes:  # most spans: not a run's own
            return
        run_id = attributes[ATTR.RUN_ID]
        if isinstance(run_id, str) and run_id:
            ctx = span.get_span_context()
            with self._lock:
                self._runs[run_id] = (ctx.trace_id, ctx.span_id)
                self._runs.move_to_end(run_id)
                while len(self._runs) > self.max_traces * 4:
                    self._runs.popitem(last=False)

    def on_end(self, span: ReadableSpan) -> None:
        ctx = span.context
        if ctx is None:
            return
        trace_id = ctx.trace_id
        traces = self._traces
        with self._lock:
            spans = traces.get(trace_id)
            if spans is None:
                spans = traces[trace_id] = []
                while len(traces) > 1 and len(traces) > self.max_traces:  # only a new trace adds one
                    self._total -= len(traces.popitem(last=False)[1])
            else:
                traces.move_to_end(trace_id)
            if len(spans) < self.max_spans:
                spans.append(span)
                self._total += 1
                while len(traces) > 1 and self._total > self.max_total:
                    self._total -= len(traces.popitem(last=False)[1])

    def run_spans(self, run_id: str) -> list[ReadableSpan]:
        """The ended spans of ``run_id``'s tree, in start order (empty when forgotten)."""
        with self._lock:
            found = self._runs.get(run_id)
            if found is None:
                return []
            trace_id, root = found
            spans = list(self._traces.get(trace_id, ()))
        children: dict[int, list[ReadableSpan]] = {}
        by_id: dict[int, ReadableSpan] = {}
        for s in spans:
            by_id[s.context.span_id] = s
            if s.parent is not None:
                children.setdefault(s.parent.span_id, []).append(s)
        out: list[ReadableSpan] = []
        todo = [by_id[root]] if root in by_id else []
        todo += [s for s in children.get(root, ()) if root not in by_id]  # root still open: its children
        while todo:
            s = todo.pop()
            out.append(s)
            todo.extend(children.get(s.context.span_id, ()))
        return sorted(out, key=lambda s: s.start_time or 0)

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def attributes(span: ReadableSpan) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in (span.attributes or {}).items():
        out[key] = list(value) if isinstance(value, tuple) else value
    return out
