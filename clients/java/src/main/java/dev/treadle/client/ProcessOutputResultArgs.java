package dev.treadle.client;

import dev.treadle.v1.Message;
import java.util.List;

/** Arguments of {@code processOutputResult}: runs once at the end of the call. */
public final class ProcessOutputResultArgs extends HookArgs {
  private final dev.treadle.v1.ProcessOutputResultArgs args;
  private final MessageList messageList;

  ProcessOutputResultArgs(HookArgs call, dev.treadle.v1.ProcessOutputResultArgs args, MessageList messageList) {
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
  public dev.treadle.v1.ProcessOutputResultArgs raw() {
    return args;
  }

  /** The call's result: text, usage, finish reason, steps. */
  public dev.treadle.v1.OutputResult result() {
    return args.getResult();
  }
}
