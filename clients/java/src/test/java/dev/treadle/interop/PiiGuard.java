package dev.treadle.interop;

import dev.treadle.client.Attachment;
import dev.treadle.client.ProcessOutputStreamArgs;
import dev.treadle.client.Processor;
import dev.treadle.client.ProcessorOptions;
import dev.treadle.client.TextGate;
import dev.treadle.client.Treadle;
import dev.treadle.v1.Chunk;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The PII guard of clients/python/examples/pii_guard.py on the Java SDK: e-mail addresses in the
 * answer become {@code [email]}, even split across deltas (protocol version 2, {@link TextGate}).
 *
 * <pre>PiiGuard TARGET per_chunk|windowed</pre>
 */
public final class PiiGuard implements Processor {
  static final Pattern EMAIL = Pattern.compile("[\\w.+-]+@[\\w-]+(?:\\.[\\w-]+)+");

  /** Redacts, counting the run's addresses in its state and reporting each redaction. */
  private final TextGate gate = TextGate.patternWithArgs(EMAIL, (args, text) -> {
    long n = EMAIL.matcher(text).results().count();
    if (n > 0) {
      long total = ((Number) args.state().getOrDefault("redacted", 0L)).longValue() + n;
      args.state().put("redacted", total);
      args.writer().custom("data-redacted", java.util.Map.of("count", n, "total", total));
    }
    return EMAIL.matcher(text).replaceAll("[email]");
  });
  private final boolean perChunk;

  PiiGuard(boolean perChunk) {
    this.perChunk = perChunk;
  }

  @Override
  public String id() {
    return "pii-guard";
  }

  @Override
  public ProcessorOptions options() {
    return perChunk ? ProcessorOptions.defaults().perChunk() : ProcessorOptions.defaults();
  }

  @Override
  public List<Chunk> processOutputStream(ProcessOutputStreamArgs args) {
    return gate.process(args);
  }

  public static void main(String[] args) throws Exception {
    Attachment attached = Treadle.attach(args[0], List.of(new PiiGuard(args[1].equals("per_chunk"))));
    Runtime.getRuntime().addShutdownHook(new Thread(attached::close));
    attached.awaitReady(Duration.ofSeconds(30));
    System.out.println("ready");
    Thread.currentThread().join();
  }
}
