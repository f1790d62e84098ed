package dev.treadle.mastra;

import dev.treadle.client.Json;
import dev.treadle.client.ProcessOutputStreamArgs;
import dev.treadle.client.Processor;
import dev.treadle.client.ProcessorOptions;
import dev.treadle.v1.Chunk;
import java.util.ArrayList;
import java.util.List;

/** Collects the run's data-moderation chunks in its state. */
public class ModerationCollector implements Processor {
  @Override
  public String id() {
    return "moderation-collector";
  }

  @Override
  public ProcessorOptions options() {
    return ProcessorOptions.defaults().processDataParts(true);
  }

  @Override
  @SuppressWarnings("unchecked")
  public List<Chunk> processOutputStream(ProcessOutputStreamArgs args) {
    Chunk part = args.part();
    if (part.hasData() && part.getData().getName().equals("data-moderation")) {
      List<Object> warnings = (List<Object>) args.state().computeIfAbsent("warnings", k -> new ArrayList<>());
      warnings.add(Json.fromValue(part.getData().getData()));
    }
    return List.of(part);
  }
}
