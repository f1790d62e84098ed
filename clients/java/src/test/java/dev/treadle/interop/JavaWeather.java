package dev.treadle.interop;

import dev.treadle.client.Attachment;
import dev.treadle.client.Tool;
import dev.treadle.client.Treadle;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Serves the {@code java-wind} tool (the wind in a city, with a {@code data-progress} chunk) for
 * tests/test_cross_language.py; prints {@code ready} after the welcome, ends on SIGTERM.
 */
public final class JavaWeather {
  private JavaWeather() {}

  public static void main(String[] args) throws Exception {
    Tool wind = Tool.of("java-wind", "The wind in a city",
        Map.of("type", "object", "properties", Map.of("city", Map.of("type", "string")), "required", List.of("city")),
        (input, ctx) -> {
          Object city = ((Map<?, ?>) input).get("city");
          ctx.writer().custom("data-progress", Map.of("city", city, "by", "java"));
          return Map.of("city", city, "wind", "calm", "by", "java");
        });
    Attachment attached = Treadle.serveTools(System.getenv("TREADLE_TARGET"), List.of(wind));
    Runtime.getRuntime().addShutdownHook(new Thread(attached::close));
    attached.awaitReady(Duration.ofSeconds(30));
    System.out.println("ready");
    Thread.currentThread().join();
  }
}
