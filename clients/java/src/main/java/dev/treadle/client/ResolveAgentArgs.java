package dev.treadle.client;

/**
 * Arguments of {@code resolveAgent}: runs once per call, before memory loads, for the processor an
 * agent names as its resolver. {@link #agent()} is the agent as its variants resolved it for this
 * call; {@link #requestContext()} is the call's request context.
 */
public final class ResolveAgentArgs extends HookArgs {
  private final dev.treadle.v1.ResolveAgentArgs args;

  ResolveAgentArgs(HookArgs call, dev.treadle.v1.ResolveAgentArgs args) {
    super(call);
    this.args = args;
  }

  /** The hook's arguments as they travelled. */
  public dev.treadle.v1.ResolveAgentArgs raw() {
    return args;
  }

  /** The agent as its variants resolved it for this call. */
  public dev.treadle.v1.Agent agent() {
    return args.getAgent();
  }
}
