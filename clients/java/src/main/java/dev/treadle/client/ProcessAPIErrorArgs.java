package dev.treadle.client;

import dev.treadle.v1.Message;
import java.util.List;

/** Arguments of {@code processAPIError}: the provider call failed. */
public final class ProcessAPIErrorArgs extends HookArgs {
  private final dev.treadle.v1.ProcessAPIErrorArgs args;
  private final MessageList messageList;

  ProcessAPIErrorArgs(HookArgs call, dev.treadle.v1.ProcessAPIErrorArgs args, MessageList messageList) {
    super(call);
    this.args = args;
    this.messageList = messageList;
  }

  /** The run's messages, oldest first. */
  public List<Message> messages() {
    return messageList.all();
  }

  /** The run's message list; edits are sent back with the answer. */
  public MessageList messageList() {
    return messageList;
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
