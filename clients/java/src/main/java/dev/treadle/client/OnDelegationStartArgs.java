package dev.treadle.client;

/**
 * Arguments of {@code onDelegationStart}: the parent's model called the sub-agent tool {@code
 * agent-<key>}. Return {@code null} to let it run as asked, {@link Delegations#reject} to reject
 * it, or a {@code DelegationStartOutcome} with modified fields to change it.
 */
public final class OnDelegationStartArgs extends HookArgs {
  private final dev.treadle.v1.OnDelegationStartArgs args;

  OnDelegationStartArgs(HookArgs call, dev.treadle.v1.OnDelegationStartArgs args) {
    super(call);
    this.args = args;
  }

  /** The hook's arguments as they travelled. */
  public dev.treadle.v1.OnDelegationStartArgs raw() {
    return args;
  }

  /** The sub-agent's key: the tool is {@code agent-<key>}. */
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

  public String instructions() {
    return args.getInstructions();
  }

  /** The step cap the delegation will use; 0: the sub-agent's own default. */
  public int maxSteps() {
    return args.getMaxSteps();
  }

  /** The parent's current step. */
  public int iteration() {
    return args.getIteration();
  }
}
