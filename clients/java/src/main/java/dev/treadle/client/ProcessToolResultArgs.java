package dev.treadle.client;

import java.util.List;

/** Arguments of {@code processToolResult}: runs on each tool result. */
public final class ProcessToolResultArgs extends MessageListArgs {
  private final dev.treadle.v1.ProcessToolResultArgs args;

  ProcessToolResultArgs(HookArgs call, dev.treadle.v1.ProcessToolResultArgs args, MessageList messageList) {
    super(call, messageList);
    this.args = args;
  }

  /** The hook's arguments as they travelled. */
  public dev.treadle.v1.ProcessToolResultArgs raw() {
    return args;
  }

  /** The steps so far. */
  public List<dev.treadle.v1.StepResult> steps() {
    return args.getStepsList();
  }

  public String toolName() {
    return args.getToolName();
  }

  public String toolCallId() {
    return args.getToolCallId();
  }

  /** The tool's arguments as plain Java (Map, List, String, Double, Boolean, null). */
  public Object args() {
    return Json.fromValue(args.getArgs());
  }

  /** The tool's result as plain Java. */
  public Object result() {
    return Json.fromValue(args.getResult());
  }
}
