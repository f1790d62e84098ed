package dev.treadle.client;

import java.util.Map;

/** A scorer's answer: a score in [0, 1], why, and JSON-compatible details stored with it. */
public record Score(double score, String reason, Map<String, ?> details) {
  public Score {
    reason = reason == null ? "" : reason;
    details = details == null ? Map.of() : details;
  }

  public Score(double score, String reason) {
    this(score, reason, Map.of());
  }
}
