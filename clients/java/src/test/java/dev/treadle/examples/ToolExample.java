package dev.treadle.examples;

import dev.treadle.client.Attachment;
import dev.treadle.client.Tool;
import dev.treadle.client.Treadle;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** Serves a weather tool until the process gets SIGTERM. */
public final class ToolExample {
  public static void main(String[] args) throws Exception {
    Tool weather = Tool.of("weather", "The weather in a city",
        Map.of("type", "object", "properties", Map.of("city", Map.of("type", "string")), "required", List.of("city")),
        (input, ctx) -> Map.of("city", ((Map<?, ?>) input).get("city"), "forecast", "sunny", "celsius", 21));
    Attachment attached = Treadle.serveTools(System.getenv("TREADLE_TARGET"), List.of(weather));
    Runtime.getRuntime().addShutdownHook(new Thread(attached::close));
    attached.awaitReady(Duration.ofSeconds(30));
    System.out.println("ready");
    Thread.currentThread().join();
  }
}
