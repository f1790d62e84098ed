package dev.treadle.client;

/** Arguments of {@code processOutputResult}: runs once at the end of the call. */
public final class ProcessOutputResultArgs extends MessageListArgs {
  private final dev.treadle.v1.ProcessOutputResultArgs args;

  ProcessOutputResultArgs(HookArgs call, dev.treadle.v1.ProcessOutputResultArgs args, MessageList messageList) {
    super(call, messageList);
    this.args = args;
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
