package dev.treadle.client;

/** What {@code processAPIError} decided: retry the failed provider call (edits to the message list travel with it). */
public final class APIErrorDecision {
  private final boolean retry;

  private APIErrorDecision(boolean retry) {
    this.retry = retry;
  }

  /** Retry the provider call, with the message list as the hook left it. */
  public static APIErrorDecision retry() {
    return new APIErrorDecision(true);
  }

  /** Do not retry (the same as returning {@code null}). */
  public static APIErrorDecision giveUp() {
    return new APIErrorDecision(false);
  }

  public boolean isRetry() {
    return retry;
  }
}
