package dev.treadle.client;

import dev.treadle.v1.Message;
import java.util.List;

/** Arguments of {@code processInput}: runs once per call, before the loop. */
public final class ProcessInputArgs extends HookArgs {
  private final dev.treadle.v1.ProcessInputArgs args;
  private final MessageList messageList;

  ProcessInputArgs(HookArgs call, dev.treadle.v1.ProcessInputArgs args, MessageList messageList) {
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
  public dev.treadle.v1.ProcessInputArgs raw() {
    return args;
  }
}
