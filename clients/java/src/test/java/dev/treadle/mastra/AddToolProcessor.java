package dev.treadle.mastra;

import dev.treadle.client.ProcessInputStepArgs;
import dev.treadle.client.Processor;
import dev.treadle.client.Replace;
import dev.treadle.v1.ReplaceOutcome;
import java.util.ArrayList;
import java.util.List;

/** Adds the server's {@code lookup} tool to the first step, keeping the agent's tools. */
public final class AddToolProcessor implements Processor {
  @Override
  public String id() {
    return "add-tool";
  }

  @Override
  public ReplaceOutcome processInputStep(ProcessInputStepArgs args) {
    if (args.stepNumber() != 0) {
      return null;
    }
    List<String> tools = new ArrayList<>(args.toolNames());
    tools.add("lookup");
    return Replace.tools(tools);
  }
}
