package dev.treadle.examples;

import dev.treadle.client.AgentClient;
import dev.treadle.client.RunChunk;
import dev.treadle.client.Treadle;
import java.util.LinkedHashMap;

/** Subscribes to a thread, sends it a message and prints the run that message wakes. */
public final class ThreadExample {
  public static void main(String[] args) {
    try (AgentClient client = Treadle.connect(System.getenv("TREADLE_TARGET"));
        AgentClient.Subscription thread = client.subscribeToThread("u1", "t1")) {
      var attributes = new LinkedHashMap<String, Object>(); // the model sees them in this order
      attributes.put("from", "slack");
      attributes.put("name", "Devin");
      var sent = client.sendMessage("assistant", "u1", "t1", "hello", attributes);
      System.out.println(sent.getAccepted().getAction()); // SIGNAL_ACTION_WAKE: a run started
      while (thread.hasNext()) {
        RunChunk c = thread.next(); // as stream() gives them; c.proto() is the generated Chunk
        if (c.type().equals("text-delta")) System.out.print(c.text());
        if (c.type().equals("finish")) break;
      }
      System.out.println();
    }
  }
}
