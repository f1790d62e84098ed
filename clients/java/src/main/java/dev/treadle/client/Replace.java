package dev.treadle.client;

import dev.treadle.v1.Message;
import dev.treadle.v1.MessageListReplacement;
import dev.treadle.v1.PromptMessage;
import dev.treadle.v1.PromptReplacement;
import dev.treadle.v1.ReplaceOutcome;
import dev.treadle.v1.StepOverrides;
import dev.treadle.v1.StepTools;
import dev.treadle.v1.SystemMessage;
import dev.treadle.v1.SystemMessages;
import java.util.List;

/** What a hook may return instead of {@code null} (unchanged). */
public final class Replace {
  private Replace() {}

  /** The run's whole message list after the hook's edits (missing ids are removed). */
  public static ReplaceOutcome messages(List<Message> messages) {
    return ReplaceOutcome.newBuilder()
        .setMessages(MessageListReplacement.newBuilder().addAllMessages(messages)).build();
  }

  /** Replaces the untagged system messages. */
  public static ReplaceOutcome systemMessages(List<SystemMessage> messages) {
    return ReplaceOutcome.newBuilder()
        .setSystemMessages(SystemMessages.newBuilder().addAllMessages(messages)).build();
  }

  /** {@code processLLMRequest}: the prompt for this provider call only. */
  public static ReplaceOutcome prompt(List<PromptMessage> prompt) {
    return ReplaceOutcome.newBuilder().setPrompt(PromptReplacement.newBuilder().addAllMessages(prompt)).build();
  }

  /**
   * {@code processInputStep}: the step's tools become exactly these names (the framework's
   * {@code tools} result; add one to {@code args.toolNames()} to add a tool). Each is one of the
   * step's tools, a tool registered on the server, or a tool an attached tool service serves.
   */
  public static ReplaceOutcome tools(List<String> names) {
    return stepOverrides(StepOverrides.newBuilder().setTools(stepTools(names)).build());
  }

  /** The {@code tools} field of {@link StepOverrides}, to combine with other overrides. */
  public static StepTools stepTools(List<String> names) {
    return StepTools.newBuilder().addAllNames(names).build();
  }

  /** {@code processInputStep}: overrides for this step (model, tool choice, active tools, ...). */
  public static ReplaceOutcome stepOverrides(StepOverrides overrides) {
    return ReplaceOutcome.newBuilder().setStepOverrides(overrides).build();
  }
}
