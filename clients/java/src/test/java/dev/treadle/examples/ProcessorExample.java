package dev.treadle.examples;

import dev.treadle.client.Attachment;
import dev.treadle.client.MessageList;
import dev.treadle.client.ProcessInputArgs;
import dev.treadle.client.Processor;
import dev.treadle.client.Treadle;
import dev.treadle.v1.ReplaceOutcome;
import java.time.Duration;
import java.util.List;

/** Refuses prompts that mention a secret, until the process gets SIGTERM. */
public final class ProcessorExample {
  static final class ContentFilter implements Processor {
    public String id() { return "content-filter"; }

    @Override
    public ReplaceOutcome processInput(ProcessInputArgs args) {
      if (MessageList.text(args.messages()).contains("secret")) throw args.abort("Blocked content detected in input");
      return null;
    }
  }

  public static void main(String[] args) throws Exception {
    Attachment attached = Treadle.attach(System.getenv("TREADLE_TARGET"), List.of(new ContentFilter()));
    Runtime.getRuntime().addShutdownHook(new Thread(attached::close));
    attached.awaitReady(Duration.ofSeconds(30));
    System.out.println("ready");
    Thread.currentThread().join(); // serve until stopped
  }
}
