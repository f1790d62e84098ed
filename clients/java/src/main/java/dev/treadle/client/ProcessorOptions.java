package dev.treadle.client;

import dev.treadle.v1.Hook;
import dev.treadle.v1.StreamDelivery;
import java.time.Duration;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * How a processor's hooks are declared in the handshake. The defaults: every hook in MUTATE
 * mode, the server's timeout, and for {@code processOutputStream} windowed delivery with 4
 * invocations in flight (the hook is still called once per chunk, in order).
 *
 * <pre>{@code
 * public ProcessorOptions options() {
 *   return ProcessorOptions.defaults().observe(Hook.HOOK_PROCESS_OUTPUT_RESULT)
 *       .timeout(Hook.HOOK_PROCESS_INPUT, Duration.ofSeconds(2));
 * }
 * }</pre>
 */
public final class ProcessorOptions {
  /** Default number of a run's stream invocations that may be unanswered at once. */
  public static final int DEFAULT_MAX_IN_FLIGHT = 4;

  String name = "";
  String description = "";
  final Set<Hook> observe = EnumSet.noneOf(Hook.class);
  final Map<Hook, Duration> timeouts = new EnumMap<>(Hook.class);
  StreamDelivery delivery = StreamDelivery.STREAM_DELIVERY_WINDOWED;
  int maxWindow;
  int maxInFlight = DEFAULT_MAX_IN_FLIGHT;
  boolean processDataParts;
  List<String> toolNames = List.of();

  public static ProcessorOptions defaults() {
    return new ProcessorOptions();
  }

  /** The name shown in traces and listings. */
  public ProcessorOptions name(String name) {
    this.name = name;
    return this;
  }

  public ProcessorOptions description(String description) {
    this.description = description;
    return this;
  }

  /** Runs these hooks in OBSERVE mode: fire and forget, the run never waits, no answer is sent. */
  public ProcessorOptions observe(Hook... hooks) {
    observe.addAll(List.of(hooks));
    return this;
  }

  /** The timeout to ask for on {@code hook} (the server's maximum and the agent's cap still apply). */
  public ProcessorOptions timeout(Hook hook, Duration timeout) {
    timeouts.put(hook, timeout);
    return this;
  }

  /** {@code processOutputStream}: one chunk per invocation instead of every chunk ready at once. */
  public ProcessorOptions perChunk() {
    delivery = StreamDelivery.STREAM_DELIVERY_PER_CHUNK;
    return this;
  }

  /** {@code processOutputStream}: windowed delivery of at most {@code maxWindow} chunks (0: the server's). */
  public ProcessorOptions windowed(int maxWindow) {
    delivery = StreamDelivery.STREAM_DELIVERY_WINDOWED;
    this.maxWindow = maxWindow;
    return this;
  }

  /** {@code processOutputStream}: how many of a run's invocations may be unanswered at once. */
  public ProcessorOptions maxInFlight(int maxInFlight) {
    this.maxInFlight = maxInFlight;
    return this;
  }

  /** {@code processOutputStream}: also receive {@code data-*} chunks. */
  public ProcessorOptions processDataParts(boolean processDataParts) {
    this.processDataParts = processDataParts;
    return this;
  }

  /** {@code processToolResult} and {@code transformToolPayload}: only for these tools. */
  public ProcessorOptions toolNames(String... names) {
    toolNames = List.of(names);
    return this;
  }
}
