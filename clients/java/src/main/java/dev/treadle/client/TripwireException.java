package dev.treadle.client;

/**
 * A processor's abort (the Mastra {@code abort(reason, {retry, metadata})}): thrown by
 * {@link HookArgs#abort(String)} from any hook, it stops the run with a tripwire, or with
 * {@code retry} redoes the step with the reason as feedback. The agent client's
 * {@code generate} reports a run's tripwire the same way ({@link AgentClient.Result#tripwire()},
 * {@link AgentClient.Result#orThrow()}).
 */
public class TripwireException extends RuntimeException {
  private final String reason;
  private final boolean retry;
  private final Object metadata;
  private final String processorId;

  public TripwireException(String reason) {
    this(reason, false, null, "");
  }

  public TripwireException(String reason, boolean retry, Object metadata, String processorId) {
    super(processorId == null || processorId.isEmpty() ? reason : "blocked by " + processorId + ": " + reason);
    this.reason = reason;
    this.retry = retry;
    this.metadata = metadata;
    this.processorId = processorId == null ? "" : processorId;
  }

  /** Why the run was stopped. */
  public String reason() {
    return reason;
  }

  /** Whether the step is to be redone with the reason as feedback. */
  public boolean retry() {
    return retry;
  }

  /** JSON-compatible data attached to the tripwire, or null. */
  public Object metadata() {
    return metadata;
  }

  /** The processor that tripped (empty inside a hook, where it is the one running). */
  public String processorId() {
    return processorId;
  }

  /** Options of an abort: {@code args.abort("too short", TripwireException.Options.retry().metadata(Map.of(...)))}. */
  public static final class Options {
    private boolean retry;
    private Object metadata;

    /** Redo the step with the reason as feedback (when the retry budget allows). */
    public static Options retry() {
      return new Options().withRetry(true);
    }

    /** No retry (add {@link #metadata(Object)}). */
    public static Options none() {
      return new Options();
    }

    public Options withRetry(boolean retry) {
      this.retry = retry;
      return this;
    }

    public Options withMetadata(Object metadata) {
      this.metadata = metadata;
      return this;
    }

    /** JSON-compatible data attached to the tripwire (a Map, a List, ...). */
    public Options metadata(Object metadata) {
      return withMetadata(metadata);
    }

    boolean isRetry() {
      return retry;
    }

    Object getMetadata() {
      return metadata;
    }
  }
}
