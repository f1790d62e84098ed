package dev.treadle.examples;

import dev.treadle.client.AgentClient;
import dev.treadle.client.Treadle;
import dev.treadle.client.TripwireException;

/** Streams an answer, then reads a tripwire from generate. */
public final class AgentExample {
  public static void main(String[] args) {
    try (AgentClient client = Treadle.connect(System.getenv("TREADLE_TARGET"));
        var chunks = client.stream("assistant", "Say hello")) {
      chunks.filter(c -> c.type().equals("text-delta")).forEach(c -> System.out.print(c.text()));
      System.out.println();
      try {
        client.generate("assistant", "my secret is 42").orThrow();
      } catch (TripwireException blocked) {
        System.out.println(blocked.getMessage()); // blocked by content-filter: ...
      }
    }
  }
}
