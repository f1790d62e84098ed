package dev.treadle.client;

import dev.treadle.v1.Message;
import java.util.List;

/** Arguments of {@code processToolResult}: runs on each tool result. */
public final class ProcessToolResultArgs extends HookArgs {
  private final dev.treadle.v1.ProcessToolResultArgs args;
  private final MessageList messageList;

  ProcessToolResultArgs(HookArgs call, dev.treadle.v1.ProcessToolResultArgs args, MessageList messageList) {
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
