package dev.treadle.client;

import java.util.List;

/** Arguments of {@code processAPIError}: the provider call failed. */
public final class ProcessAPIErrorArgs extends MessageListArgs {
  private final dev.treadle.v1.ProcessAPIErrorArgs args;

  ProcessAPIErrorArgs(HookArgs call, dev.treadle.v1.ProcessAPIErrorArgs args, MessageList messageList) {
    super(call, messageList);
    this.args = args;
  }

  /** The hook's arguments as they travelled. */
  public dev.treadle.v1.ProcessAPIErrorArgs raw() {
    return args;
  }

  /** The steps so far. */
  public List<dev.treadle.v1.StepResult> steps() {
    return args.getStepsList();
  }

  /** The provider's error (message, status code, body, whether it is retryable). */
  public dev.treadle.v1.APIError error() {
    return args.getError();
  }
}
