package dev.treadle.client;

import dev.treadle.v1.Message;
import java.util.List;

/** Arguments of {@code processOutputStep}: runs after each step, before tools run. */
public final class ProcessOutputStepArgs extends HookArgs {
  private final dev.treadle.v1.ProcessOutputStepArgs args;
  private final MessageList messageList;

  ProcessOutputStepArgs(HookArgs call, dev.treadle.v1.ProcessOutputStepArgs args, MessageList messageList) {
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
  public dev.treadle.v1.ProcessOutputStepArgs raw() {
    return args;
  }

  /** The steps so far. */
  public List<dev.treadle.v1.StepResult> steps() {
    return args.getStepsList();
  }

  /** The step's text. */
  public String text() {
    return args.getText();
  }

  /** The step's finish reason. */
  public dev.treadle.v1.FinishReason finishReason() {
    return args.getFinishReason();
  }

  /** The tool calls the model made in this step. */
  public List<dev.treadle.v1.ToolCall> toolCalls() {
    return args.getToolCallsList();
  }
}
