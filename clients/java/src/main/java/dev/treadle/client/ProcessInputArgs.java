package dev.treadle.client;

/** Arguments of {@code processInput}: runs once per call, before the loop. */
public final class ProcessInputArgs extends MessageListArgs {
  private final dev.treadle.v1.ProcessInputArgs args;

  ProcessInputArgs(HookArgs call, dev.treadle.v1.ProcessInputArgs args, MessageList messageList) {
    super(call, messageList);
    this.args = args;
  }

  /** The hook's arguments as they travelled. */
  public dev.treadle.v1.ProcessInputArgs raw() {
    return args;
  }
}
