package dev.treadle.client;

/**
 * Arguments of {@code onDelegationComplete}: a sub-agent tool ended. Return {@code null}, or
 * {@link Delegations#feedback} / {@link Delegations#bail}.
 */
public final class OnDelegationCompleteArgs extends HookArgs {
  private final dev.treadle.v1.OnDelegationCompleteArgs args;

  OnDelegationCompleteArgs(HookArgs call, dev.treadle.v1.OnDelegationCompleteArgs args) {
    super(call);
    this.args = args;
  }

  /** The hook's arguments as they travelled. */
  public dev.treadle.v1.OnDelegationCompleteArgs raw() {
    return args;
  }

  public String key() {
    return args.getKey();
  }

  public String subAgentId() {
    return args.getSubAgentId();
  }

  public String toolCallId() {
    return args.getToolCallId();
  }

  public String prompt() {
    return args.getPrompt();
  }

  public boolean success() {
    return args.getSuccess();
  }

  public String error() {
    return args.getError();
  }

  /** The tool's output ({@code {text, subAgentThreadId, ...}}) as plain JSON, when it succeeded. */
  public Object result() {
    return args.hasResult() ? Json.fromValue(args.getResult()) : null;
  }

  /** How long the delegation took. */
  public java.time.Duration duration() {
    return java.time.Duration.ofSeconds(args.getDuration().getSeconds(), args.getDuration().getNanos());
  }
}
