package dev.treadle.client;

/**
 * Arguments of {@code transformToolPayload} (the Mastra Agent's {@code hooks.transform}): return
 * {@link #payload()} as {@link #target()} shows it in {@link #phase()}. Returning {@code null}
 * shows {@code {"message": "Tool <phase> payload unavailable"}}: the server fails closed.
 */
public final class TransformToolPayloadArgs extends HookArgs {
  private final dev.treadle.v1.TransformToolPayloadArgs args;

  TransformToolPayloadArgs(HookArgs call, dev.treadle.v1.TransformToolPayloadArgs args) {
    super(call);
    this.args = args;
  }

  /** The hook's arguments as they travelled. */
  public dev.treadle.v1.TransformToolPayloadArgs raw() {
    return args;
  }

  /** {@code display} (streams, results, subscriptions) or {@code transcript} (the history clients read). */
  public String target() {
    return args.getTarget();
  }

  /** {@code input} (the call's arguments), {@code output} (the tool's result) or {@code error} (its message). */
  public String phase() {
    return args.getPhase();
  }

  public String toolName() {
    return args.getToolName();
  }

  public String toolCallId() {
    return args.getToolCallId();
  }

  /** The payload as plain Java (Map, List, String, Double, Boolean, null). */
  public Object payload() {
    return args.hasPayload() ? Json.fromValue(args.getPayload()) : null;
  }
}
