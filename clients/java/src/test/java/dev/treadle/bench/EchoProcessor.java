package dev.treadle.bench;

import dev.treadle.client.Attachment;
import dev.treadle.client.ProcessOutputStreamArgs;
import dev.treadle.client.Processor;
import dev.treadle.client.ProcessorOptions;
import dev.treadle.client.Treadle;
import dev.treadle.v1.Chunk;
import java.time.Duration;
import java.util.List;

/**
 * A remote processor for bench/remote_processor_stream_java.py: passes every chunk through.
 *
 * <pre>java -cp ... dev.treadle.bench.EchoProcessor MODE TARGET</pre>
 *
 * MODE as in bench/echo_processor.py: lockstep, pipelined, windowed or default. Prints {@code
 * ready} once attached; ends on SIGTERM.
 */
public final class EchoProcessor implements Processor {
  private final String mode;

  EchoProcessor(String mode) {
    this.mode = mode;
  }

  @Override
  public String id() {
    return "bench-echo";
  }

  @Override
  public ProcessorOptions options() {
    return switch (mode) {
      case "lockstep" -> ProcessorOptions.defaults().perChunk().maxInFlight(1);
      case "pipelined" -> ProcessorOptions.defaults().perChunk().maxInFlight(64);
      case "windowed" -> ProcessorOptions.defaults().windowed(64).maxInFlight(4);
      case "default" -> ProcessorOptions.defaults();
      default -> throw new IllegalArgumentException("usage: EchoProcessor lockstep|pipelined|windowed|default TARGET");
    };
  }

  @Override
  public List<Chunk> processOutputStream(ProcessOutputStreamArgs args) {
    return List.of(args.part());
  }

  public static void main(String[] args) throws Exception {
    Attachment attached = Treadle.attach(args[1], List.of(new EchoProcessor(args[0])));
    Runtime.getRuntime().addShutdownHook(new Thread(attached::close));
    attached.awaitReady(Duration.ofSeconds(30));
    System.out.println("ready");
    Thread.currentThread().join();
  }
}
