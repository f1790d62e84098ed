package dev.treadle.client;

import dev.treadle.v1.Message;
import java.util.List;

/** The arguments of a hook that sees the run's message list (and may edit it). */
public abstract class MessageListArgs extends HookArgs {
  private final MessageList messageList;

  MessageListArgs(HookArgs call, MessageList messageList) {
    super(call);
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
}
