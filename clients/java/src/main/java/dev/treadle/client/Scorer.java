package dev.treadle.client;

/**
 * A scorer served to Treadle agents, which name it by {@code id} in their {@code scorers}: a
 * function from a finished run to a {@link Score} in [0, 1]. An exception fails the scoring
 * (the server retries it as the scorer's failure policy says).
 *
 * <pre>{@code
 * Scorer polite = Scorer.of("polite", "1 when the answer thanks the user.",
 *     run -> new Score(run.answer().contains("thank") ? 1 : 0, "looked for thanks"));
 * }</pre>
 */
public record Scorer(String id, String name, String description, Function function) {

  /** What a scorer does. */
  @FunctionalInterface
  public interface Function {
    Score apply(ScorerRun run) throws Exception;
  }

  public Scorer {
    if (id == null || id.isEmpty()) {
      throw new IllegalArgumentException("a scorer needs an id");
    }
    if (function == null) {
      throw new IllegalArgumentException("scorer " + id + " needs a function");
    }
    name = name == null ? "" : name;
    description = description == null ? "" : description;
  }

  /** A scorer named by its id. */
  public static Scorer of(String id, String description, Function function) {
    return new Scorer(id, "", description, function);
  }
}
