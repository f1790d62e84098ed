package dev.treadle.client;

import java.util.List;

/** Arguments of {@code processLLMResponse}: a step's provider response; the hook may only abort or fail. */
public final class ProcessLLMResponseArgs extends HookArgs {
  private final dev.treadle.v1.ProcessLLMResponseArgs args;

  ProcessLLMResponseArgs(HookArgs call, dev.treadle.v1.ProcessLLMResponseArgs args) {
    super(call);
    this.args = args;
  }

  /** The hook's arguments as they travelled. */
  public dev.treadle.v1.ProcessLLMResponseArgs raw() {
    return args;
  }

  /** The steps so far. */
  public List<dev.treadle.v1.StepResult> steps() {
    return args.getStepsList();
  }

  /** The response's chunks. */
  public List<dev.treadle.v1.Chunk> chunks() {
    return args.getChunksList();
  }

  public String model() {
    return args.getModel();
  }

  public boolean fromCache() {
    return args.getFromCache();
  }
}
