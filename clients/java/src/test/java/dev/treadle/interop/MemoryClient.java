package dev.treadle.interop;

import dev.treadle.client.AgentClient;
import dev.treadle.client.Json;
import dev.treadle.client.MessageList;
import dev.treadle.client.Treadle;
import java.util.List;
import java.util.Map;

/**
 * Two runs on one memory thread with {@code generate(agent, prompt, AgentClient.memory(...))}, then
 * the thread read back with {@code getThread} and {@code listMessages}; prints one JSON report.
 *
 * <pre>TREADLE_TARGET=HOST:PORT java dev.treadle.interop.MemoryClient</pre>
 */
public final class MemoryClient {
  public static void main(String[] args) {
    try (AgentClient client = Treadle.connect(System.getenv("TREADLE_TARGET"))) {
      var memory = AgentClient.memory("user-1", "trip");
      client.generate("assistant", "My name is Ada.", memory);
      AgentClient.Result answer = client.generate("assistant", "What is my name?", memory);
      var thread = client.getThread("user-1", "trip");
      List<String> stored = client.listMessages("user-1", "trip").stream()
          .map(m -> MessageList.text(List.of(m))).toList();
      System.out.println(Json.stringify(Map.of(
          "text", answer.text(), "finishReason", answer.finishReason(),
          "totalTokens", answer.usage().totalTokens(), "thread", thread.getId() + "@" + thread.getResourceId(),
          "stored", stored)));
    }
  }
}
