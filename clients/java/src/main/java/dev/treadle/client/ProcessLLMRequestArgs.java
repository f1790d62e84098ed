package dev.treadle.client;

import java.util.List;

/** Arguments of {@code processLLMRequest}: the provider prompt, before the call. */
public final class ProcessLLMRequestArgs extends HookArgs {
  private final dev.treadle.v1.ProcessLLMRequestArgs args;

  ProcessLLMRequestArgs(HookArgs call, dev.treadle.v1.ProcessLLMRequestArgs args) {
    super(call);
    this.args = args;
  }

  /** The hook's arguments as they travelled. */
  public dev.treadle.v1.ProcessLLMRequestArgs raw() {
    return args;
  }

  /** The steps so far. */
  public List<dev.treadle.v1.StepResult> steps() {
    return args.getStepsList();
  }

  /** The provider prompt. */
  public List<dev.treadle.v1.PromptMessage> prompt() {
    return args.getPromptList();
  }

  public String model() {
    return args.getModel();
  }
}
