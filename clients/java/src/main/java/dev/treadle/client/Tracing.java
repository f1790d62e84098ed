package dev.treadle.client;

import dev.treadle.v1.TraceContext;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Spans for invocations, children of the W3C trace context each invocation carries. */
final class Tracing {
  static final String INSTRUMENTATION = "dev.treadle.client";

  private static final TextMapGetter<TraceContext> GETTER = new TextMapGetter<>() {
    @Override
    public Iterable<String> keys(TraceContext carrier) {
      List<String> keys = new ArrayList<>();
      if (!carrier.getTraceparent().isEmpty()) {
        keys.add("traceparent");
      }
      if (!carrier.getTracestate().isEmpty()) {
        keys.add("tracestate");
      }
      return keys;
    }

    @Override
    public String get(TraceContext carrier, String key) {
      if (carrier == null) {
        return null;
      }
      return switch (key) {
        case "traceparent" -> emptyToNull(carrier.getTraceparent());
        case "tracestate" -> emptyToNull(carrier.getTracestate());
        default -> null;
      };
    }
  };

  private final Tracer tracer;

  Tracing(OpenTelemetry openTelemetry) {
    this.tracer = openTelemetry.getTracer(INSTRUMENTATION);
  }

  /** A started span named {@code name}, child of {@code carrier}'s context. */
  Span start(String name, TraceContext carrier, Map<String, Object> attributes) {
    Context parent = W3CTraceContextPropagator.getInstance().extract(Context.root(), carrier, GETTER);
    var b = tracer.spanBuilder(name).setParent(parent).setSpanKind(SpanKind.SERVER);
    for (Map.Entry<String, Object> e : attributes.entrySet()) {
      if (e.getValue() instanceof Number n) {
        b.setAttribute(e.getKey(), n.longValue());
      } else {
        b.setAttribute(e.getKey(), String.valueOf(e.getValue()));
      }
    }
    return b.startSpan();
  }

  static void markError(Span span, Throwable error) {
    span.recordException(error);
    span.setStatus(StatusCode.ERROR, String.valueOf(error.getMessage()));
  }

  private static String emptyToNull(String s) {
    return s.isEmpty() ? null : s;
  }
}
