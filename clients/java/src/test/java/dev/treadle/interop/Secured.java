package dev.treadle.interop;

import dev.treadle.client.AgentClient;
import dev.treadle.client.AttachException;
import dev.treadle.client.Attachment;
import dev.treadle.client.Option;
import dev.treadle.client.ProcessInputArgs;
import dev.treadle.client.Processor;
import dev.treadle.client.Tls;
import dev.treadle.client.Treadle;
import dev.treadle.client.TripwireException;
import dev.treadle.v1.ReplaceOutcome;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The Java SDK against a server with auth, for tests/test_java_sdk.py; the token comes from
 * {@code TREADLE_TOKEN}, as for every entry point.
 *
 * <pre>
 * Secured guard TARGET PROCESSOR_ID [CA CERT KEY]   # prints "ready", or "refused CODE STREAMS"
 * Secured call TARGET AGENT PROMPT [CA CERT KEY]    # prints the answer, the tripwire or the status
 * </pre>
 *
 * With CA, CERT and KEY (PEM files) the connection is mutual TLS.
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
    int rest = args[0].equals("guard") ? 3 : 4;
    Option[] options = args.length > rest
        ? new Option[] {Option.tls(new Tls(Path.of(args[rest]), Path.of(args[rest + 1]), Path.of(args[rest + 2]), null))}
        : new Option[0];
    if (args[0].equals("guard")) {
      Attachment attached = Treadle.attach(args[1], List.of(new Guard(args[2])), options);
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
    try (AgentClient client = Treadle.connect(args[1], options)) {
      System.out.println(client.generate(args[2], args[3]).orThrow().text());
    } catch (TripwireException blocked) {
      System.out.println(blocked.getMessage());
    } catch (io.grpc.StatusRuntimeException e) {
      System.out.println(e.getStatus().getCode());
    }
  }
}
