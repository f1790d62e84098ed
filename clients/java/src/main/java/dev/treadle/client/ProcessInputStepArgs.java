package dev.treadle.client;

import java.util.List;

/** Arguments of {@code processInputStep}: runs at every step, before the provider call. */
public final class ProcessInputStepArgs extends MessageListArgs {
  private final dev.treadle.v1.ProcessInputStepArgs args;

  ProcessInputStepArgs(HookArgs call, dev.treadle.v1.ProcessInputStepArgs args, MessageList messageList) {
    super(call, messageList);
    this.args = args;
  }

  /** The hook's arguments as they travelled. */
  public dev.treadle.v1.ProcessInputStepArgs raw() {
    return args;
  }

  /** The steps so far. */
  public List<dev.treadle.v1.StepResult> steps() {
    return args.getStepsList();
  }

  /** The step's model. */
  public String model() {
    return args.getModel();
  }

  /** The tools active in this step. */
  public List<String> activeTools() {
    return args.getActiveToolsList();
  }

  /** Every tool available to the step (name, description, input schema). */
  public List<dev.treadle.v1.ToolDefinition> tools() {
    return args.getToolsList();
  }

  /** The names of the step's tools, in order. */
  public List<String> toolNames() {
    return args.getToolsList().stream().map(dev.treadle.v1.ToolDefinition::getName).toList();
  }
}
