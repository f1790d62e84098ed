package dev.treadle.client;

import dev.treadle.v1.Message;
import java.util.List;

/** Arguments of {@code processInputStep}: runs at every step, before the provider call. */
public final class ProcessInputStepArgs extends HookArgs {
  private final dev.treadle.v1.ProcessInputStepArgs args;
  private final MessageList messageList;

  ProcessInputStepArgs(HookArgs call, dev.treadle.v1.ProcessInputStepArgs args, MessageList messageList) {
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
  public dev.treadle.v1.ProcessInputStepArgs raw() {
    return args;
  }

  /** The steps so far. */
  public List<dev.treadle.v1.StepResult> steps() {
    return args.getStepsList();
  }

  /** The step's model. */
  public String model() {
    return args.getModel();
  }

  /** The tools active in this step. */
  public List<String> activeTools() {
    return args.getActiveToolsList();
  }
}
