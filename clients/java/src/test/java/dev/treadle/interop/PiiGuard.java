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

  private final TextGate gate = TextGate.pattern(EMAIL, text -> EMAIL.matcher(text).replaceAll("[email]"));
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
