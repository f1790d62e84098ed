package dev.treadle.examples;

import dev.treadle.client.Attachment;
import dev.treadle.client.Option;
import dev.treadle.client.ProcessOutputStreamArgs;
import dev.treadle.client.Processor;
import dev.treadle.client.Treadle;
import dev.treadle.v1.Chunk;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.time.Duration;
import java.util.List;

/** A pass-through processor whose invocation spans join the server's trace; printed as they end. */
public final class TracingExample {
  static final class TracedEcho implements Processor {
    public String id() { return "java-traced-echo"; }

    @Override
    public List<Chunk> processOutputStream(ProcessOutputStreamArgs args) { return List.of(args.part()); }
  }

  public static void main(String[] args) throws Exception {
    var tracing = SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(new PrintingExporter())).build();
    var otel = OpenTelemetrySdk.builder().setTracerProvider(tracing).build();
    Attachment attached = Treadle.attach(System.getenv("TREADLE_TARGET"), List.of(new TracedEcho()), Option.openTelemetry(otel));
    Runtime.getRuntime().addShutdownHook(new Thread(() -> { attached.close(); otel.close(); }));
    attached.awaitReady(Duration.ofSeconds(30));
    System.out.println("ready");
    Thread.currentThread().join();
  }
}
