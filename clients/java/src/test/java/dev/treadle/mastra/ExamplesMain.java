package dev.treadle.mastra;

import dev.treadle.client.Attachment;
import dev.treadle.client.Json;
import dev.treadle.client.Option;
import dev.treadle.client.ProcessInputArgs;
import dev.treadle.client.ProcessOutputResultArgs;
import dev.treadle.client.ProcessOutputStepArgs;
import dev.treadle.client.ProcessOutputStreamArgs;
import dev.treadle.client.Processor;
import dev.treadle.client.ProcessorViolation;
import dev.treadle.client.Treadle;
import dev.treadle.v1.Chunk;
import dev.treadle.v1.ReplaceOutcome;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.SpanProcessor;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The Mastra framework's example processors written in Java, attached to a server as the
 * processors of one test of tests/test_seed_processors.py.
 *
 * <pre>java -cp ... dev.treadle.mastra.ExamplesMain TARGET --test TEST</pre>
 *
 * Prints {@code ready} after the welcome. On stdin, {@code sync} prints {@code sync {json}}: how
 * many invocations each id handled (counted from the SDK's invocation spans) and, per processor
 * in the test's order, what it recorded, named as the Python twin names it. Exits when stdin
 * closes.
 */
public final class ExamplesMain {
  private ExamplesMain() {}

  /** The quality score the Python twins' tests use: detailed answers pass. */
  static double evaluateResponseQuality(String text) {
    return text.contains("detailed") ? 0.9 : 0.2;
  }

  /** The test's own helpers of the moderation example (they are not framework examples). */
  static final class ModerationEmitter implements Processor {
    @Override
    public String id() {
      return "moderation-emitter";
    }

    @Override
    public ReplaceOutcome processOutputStep(ProcessOutputStepArgs args) {
      args.writer().custom("data-moderation", Map.of("level", "warn", "reason", "Possibly unsafe"));
      args.writer().custom("data-progress", Map.of("status", "Processing"), true, "");
      return null;
    }
  }

  static final class Blind implements Processor {
    final List<String> seen = new ArrayList<>();

    @Override
    public String id() {
      return "blind";
    }

    @Override
    public synchronized List<Chunk> processOutputStream(ProcessOutputStreamArgs args) {
      Chunk part = args.part();
      seen.add(part.hasData() ? part.getData().getName()
          : part.getChunkCase().name().toLowerCase(Locale.ROOT).replace('_', '-'));
      return List.of(part);
    }
  }

  /** The collector with the test's reporter: one id, so it reads the same state. */
  static final class ReportingCollector extends ModerationCollector {
    final List<Object> states = new ArrayList<>();

    @Override
    public synchronized ReplaceOutcome processOutputResult(ProcessOutputResultArgs args) {
      states.add(new ArrayList<>((List<?>) args.state().getOrDefault("warnings", List.of())));
      return null;
    }
  }

  /** The content filter with the framework's onViolation side effect (the test's twin in Python). */
  static final class AlertingContentFilter implements Processor {
    final List<Map<String, Object>> violations = new ArrayList<>();

    @Override
    public String id() {
      return "alerting-filter";
    }

    @Override
    public ReplaceOutcome processInput(ProcessInputArgs args) {
      String text = dev.treadle.client.MessageList.text(args.messages());
      if (text.contains("secret")) {
        throw args.abort("Blocked content detected in input",
            dev.treadle.client.TripwireException.Options.none().metadata(Map.of("word", "secret")));
      }
      return null;
    }

    @Override
    public synchronized void onViolation(ProcessorViolation v) {
      Map<String, Object> seen = new java.util.LinkedHashMap<>();
      seen.put("processorId", v.processorId());
      seen.put("message", v.message());
      seen.put("detail", v.detail());
      seen.put("hook", snake(v.hook()));
      violations.add(seen);
      throw new IllegalStateException("the alert service is down"); // ignored: the run is not affected
    }
  }

  /** {@code processInput} -> {@code process_input}: hook names as the Python twin records them. */
  static String snake(String hook) {
    return hook.replace("LLM", "Llm").replace("API", "Api").replaceAll("([A-Z])", "_$1").toLowerCase(Locale.ROOT);
  }

  record Setup(List<Processor> processors, Supplier<List<Map<String, Object>>> mirror) {
    static Setup plain(Processor p) {
      return new Setup(List.of(p), () -> List.of(Map.of()));
    }
  }

  static Setup setup(String test) {
    return switch (test) {
      case "test_lowercase_input_processor" -> Setup.plain(new LowercaseProcessor());
      case "test_content_filter_blocks_input_before_the_model",
          "test_content_filter_stops_the_stream_at_the_blocked_chunk" ->
          Setup.plain(new ContentFilter(List.of("secret")));
      case "test_on_violation_is_called_on_abort_and_its_errors_are_swallowed" -> {
        AlertingContentFilter filter = new AlertingContentFilter();
        yield new Setup(List.of(filter), () -> {
          synchronized (filter) {
            return List.of(Map.of("attr:violations", List.copyOf(filter.violations)));
          }
        });
      }
      // WordCounter logs its totals ("Total words: N"); the test reads them from stdout.
      case "test_word_counter_keeps_state_across_chunks_and_not_across_calls" -> Setup.plain(new WordCounter());
      case "test_quality_guardrail_retries_with_feedback_then_accepts",
          "test_quality_guardrail_aborts_after_three_retries",
          "test_retry_without_budget_is_an_abort" ->
          Setup.plain(new QualityGuardrail(ExamplesMain::evaluateResponseQuality));
      case "test_redact_tool_result_reaches_stream_and_next_step" -> Setup.plain(new RedactToolResult());
      case "test_scan_tool_result_blocks_prompt_injection" -> Setup.plain(new ScanToolResult());
      case "test_error_recovery_trims_and_retries_context_length" -> Setup.plain(new ErrorRecoveryProcessor());
      case "test_input_step_adds_a_tool_that_the_model_sees_and_that_runs" -> Setup.plain(new AddToolProcessor());
      case "test_moderation_collector_sees_data_parts" -> {
        Blind blind = new Blind();
        ReportingCollector collector = new ReportingCollector();
        yield new Setup(List.of(new ModerationEmitter(), collector, blind),
            () -> List.of(Map.of(), Map.of(), Map.of("class:seen", List.copyOf(blind.seen)),
                Map.of("cell:process_output_result:states", List.copyOf(collector.states))));
      }
      default -> null;
    };
  }

  /** Counts the SDK's invocation spans per processor id. */
  static final class Counter implements SpanProcessor {
    static final AttributeKey<String> ID = AttributeKey.stringKey("treadle.processor.id");
    final Map<String, Integer> counts = new ConcurrentHashMap<>();

    @Override
    public void onStart(Context parent, ReadWriteSpan span) {}

    @Override
    public boolean isStartRequired() {
      return false;
    }

    @Override
    public void onEnd(ReadableSpan span) {
      String id = span.getAttribute(ID);
      if (id != null) {
        counts.merge(id, 1, Integer::sum);
      }
    }

    @Override
    public boolean isEndRequired() {
      return true;
    }
  }

  public static void main(String[] argv) throws Exception {
    Setup setup = argv.length == 3 && argv[1].equals("--test") ? setup(argv[2]) : null;
    if (setup == null) {
      System.err.println("usage: ExamplesMain TARGET --test TEST");
      System.exit(2);
    }
    Counter counter = new Counter();
    OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
        .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(counter).build()).build();
    try (Attachment attachment = Treadle.attach(argv[0], setup.processors(),
        Option.backoff(Duration.ofMillis(50), Duration.ofMillis(500)), Option.openTelemetry(otel))) {
      attachment.awaitReady(Duration.ofSeconds(30));
      System.out.println("ready");
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      for (String line; (line = in.readLine()) != null;) {
        if (line.trim().equals("sync")) {
          Map<String, Object> report = Map.of("invocations", new TreeMap<>(counter.counts),
              "mirror", setup.mirror().get());
          System.out.println("sync " + Json.stringify(report));
        }
      }
    }
    otel.close();
  }
}
