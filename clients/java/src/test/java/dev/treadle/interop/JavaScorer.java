package dev.treadle.interop;

import dev.treadle.client.Attachment;
import dev.treadle.client.Score;
import dev.treadle.client.Scorer;
import dev.treadle.client.Treadle;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Serves the {@code java-mentions} scorer (1 when the answer mentions the question's last word)
 * for tests/test_remote_scorers.py; prints {@code ready} after the welcome, ends on SIGTERM.
 */
public final class JavaScorer {
  private JavaScorer() {}

  public static void main(String[] args) throws Exception {
    Scorer mentions = Scorer.of("java-mentions", "1 when the answer mentions the question's last word", run -> {
      String[] words = run.question().replaceAll("[^A-Za-z ]", "").split(" ");
      String last = words[words.length - 1];
      boolean found = run.answer().toLowerCase().contains(last.toLowerCase());
      return new Score(found ? 1 : 0, "looked for " + last, Map.of("by", "java", "thread", run.threadId()));
    });
    Attachment attached = Treadle.serveScorers(System.getenv("TREADLE_TARGET"), List.of(mentions));
    Runtime.getRuntime().addShutdownHook(new Thread(attached::close));
    attached.awaitReady(Duration.ofSeconds(30));
    System.out.println("ready");
    Thread.currentThread().join();
  }
}
