package dev.treadle.client;

import java.util.List;

/** Arguments of {@code processOutputStep}: runs after each step, before tools run. */
public final class ProcessOutputStepArgs extends MessageListArgs {
  private final dev.treadle.v1.ProcessOutputStepArgs args;

  ProcessOutputStepArgs(HookArgs call, dev.treadle.v1.ProcessOutputStepArgs args, MessageList messageList) {
    super(call, messageList);
    this.args = args;
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
