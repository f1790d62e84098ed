package dev.treadle.interop;

import dev.treadle.client.AgentClient;
import dev.treadle.client.AttachException;
import dev.treadle.client.Attachment;
import dev.treadle.client.ProcessInputArgs;
import dev.treadle.client.Processor;
import dev.treadle.client.Treadle;
import dev.treadle.client.TripwireException;
import dev.treadle.v1.ReplaceOutcome;
import java.time.Duration;
import java.util.List;

/**
 * The Java SDK against a server with auth, for tests/test_java_sdk.py; the token comes from
 * {@code TREADLE_TOKEN}, as for every entry point.
 *
 * <pre>
 * Secured guard TARGET PROCESSOR_ID   # prints "ready", or "refused CODE STREAMS" and exits
 * Secured call TARGET AGENT PROMPT    # prints the answer, or the tripwire
 * </pre>
 */
public final class Secured {
  private Secured() {}

  /** Blocks prompts that mention a secret. */
  record Guard(String id) implements Processor {
    @Override
    public ReplaceOutcome processInput(ProcessInputArgs args) {
      if (args.messages().toString().contains("secret")) {
        throw args.abort("no secrets");
      }
      return null;
    }
  }

  public static void main(String[] args) throws Exception {
    if (args[0].equals("guard")) {
      Attachment attached = Treadle.attach(args[1], List.of(new Guard(args[2])));
      try {
        attached.awaitReady(Duration.ofSeconds(30));
      } catch (AttachException refused) {
        System.out.println("refused " + refused.code() + " " + attached.streamsOpened());
        attached.close();
        return;
      }
      Runtime.getRuntime().addShutdownHook(new Thread(attached::close));
      System.out.println("ready");
      Thread.currentThread().join();
    }
    try (AgentClient client = Treadle.connect(args[1])) {
      System.out.println(client.generate(args[2], args[3]).orThrow().text());
    } catch (TripwireException blocked) {
      System.out.println(blocked.getMessage());
    } catch (io.grpc.StatusRuntimeException e) {
      System.out.println(e.getStatus().getCode());
    }
  }
}
