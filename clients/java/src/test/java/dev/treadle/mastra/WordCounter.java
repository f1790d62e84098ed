package dev.treadle.mastra;

import dev.treadle.client.ProcessOutputStreamArgs;
import dev.treadle.client.Processor;
import dev.treadle.v1.Chunk;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/** Counts the words of the answer in the run's state and logs the total at the finish. */
public final class WordCounter implements Processor {
  @Override
  public String id() {
    return "word-counter";
  }

  @Override
  public List<Chunk> processOutputStream(ProcessOutputStreamArgs args) {
    Map<String, Object> state = args.state();
    int count = ((Number) state.getOrDefault("wordCount", 0)).intValue();
    Chunk part = args.part();
    if (part.hasTextDelta()) {
      count += (int) Arrays.stream(part.getTextDelta().getText().split("\\s+")).filter(w -> !w.isEmpty()).count();
    }
    state.put("wordCount", count);
    if (part.hasFinish()) {
      System.out.println("Total words: " + count);
    }
    return List.of(part);
  }
}
