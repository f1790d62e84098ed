package dev.treadle.client;

import dev.treadle.v1.ProcessorServiceGrpc;
import dev.treadle.v1.ScorerServiceGrpc;
import dev.treadle.v1.ToolServiceGrpc;
import java.util.List;

/**
 * The entry points: {@link #attach} serves processors, {@link #serveTools} serves tools, {@link
 * #serveScorers} serves scorers, {@link #connect} opens an agent client. Targets are {@code HOST:PORT}.
 *
 * <pre>{@code
 * try (Attachment a = Treadle.attach("localhost:50051", List.of(new NoSecrets()))) {
 *   a.awaitReady(Duration.ofSeconds(10));
 *   ...
 * }
 * }</pre>
 */
public final class Treadle {
  private Treadle() {}

  /**
   * Serves {@code processors} to the server at {@code target} over one long-lived stream,
   * reopened with exponential backoff and jitter when it ends, never after a refused handshake.
   * Returns at once; {@link Attachment#awaitReady} waits for the welcome. Throws {@link
   * IllegalArgumentException} when a processor is malformed (no id, no hook, an id twice).
   */
  public static Attachment attach(String target, List<? extends Processor> processors, Option... options) {
    Settings settings = Settings.of(options);
    ProcessorHost host = new ProcessorHost(processors, settings);
    return new Link<>(target, host.label(), settings,
        (channel, responses) -> ProcessorServiceGrpc.newStub(channel).attach(responses),
        host::session, host::shutdown);
  }

  /** Serves {@code tools} to the server at {@code target}; as {@link #attach} otherwise. */
  public static Attachment serveTools(String target, List<Tool> tools, Option... options) {
    Settings settings = Settings.of(options);
    ToolHost host = new ToolHost(tools, settings);
    return new Link<>(target, host.label(), settings,
        (channel, responses) -> ToolServiceGrpc.newStub(channel).attach(responses),
        host::session, host.executor::shutdownNow);
  }

  /** Serves {@code scorers} to the server at {@code target}; as {@link #attach} otherwise. */
  public static Attachment serveScorers(String target, List<Scorer> scorers, Option... options) {
    Settings settings = Settings.of(options);
    ScorerHost host = new ScorerHost(scorers, settings);
    return new Link<>(target, host.label(), settings,
        (channel, responses) -> ScorerServiceGrpc.newStub(channel).attach(responses),
        host::session, host.executor::shutdownNow);
  }

  /** An agent client for the server at {@code target} (token and TLS options apply). */
  public static AgentClient connect(String target, Option... options) {
    return new AgentClient(Settings.of(options).channel(target));
  }
}
