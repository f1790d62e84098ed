package dev.treadle.examples;

import dev.treadle.client.Json;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.Collection;
import java.util.Map;

/** Prints each finished span as one line, {@code span {"name": ..., "traceId": ..., ...}}. */
public final class PrintingExporter implements SpanExporter {
  @Override
  public synchronized CompletableResultCode export(Collection<SpanData> spans) {
    for (SpanData s : spans) {
      System.out.println("span " + Json.stringify(Map.of("name", s.getName(), "traceId", s.getTraceId(),
          "spanId", s.getSpanId(), "parentSpanId", s.getParentSpanId(),
          "scope", s.getInstrumentationScopeInfo().getName())));
    }
    System.out.flush();
    return CompletableResultCode.ofSuccess();
  }

  @Override
  public CompletableResultCode flush() {
    return CompletableResultCode.ofSuccess();
  }

  @Override
  public CompletableResultCode shutdown() {
    return CompletableResultCode.ofSuccess();
  }
}
