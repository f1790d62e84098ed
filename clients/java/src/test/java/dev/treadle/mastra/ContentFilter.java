package dev.treadle.mastra;

import dev.treadle.client.ProcessInputArgs;
import dev.treadle.client.ProcessOutputStreamArgs;
import dev.treadle.client.Processor;
import dev.treadle.v1.Chunk;
import dev.treadle.v1.Message;
import dev.treadle.v1.Part;
import dev.treadle.v1.ReplaceOutcome;
import java.util.List;
import java.util.stream.Collectors;

/** Blocks input and output that contain a blocked word. */
public final class ContentFilter implements Processor {
  private final List<String> blockedWords;

  public ContentFilter(List<String> blockedWords) {
    this.blockedWords = List.copyOf(blockedWords);
  }

  @Override
  public String id() {
    return "content-filter";
  }

  @Override
  public ReplaceOutcome processInput(ProcessInputArgs args) {
    for (Message message : args.messages()) {
      String text = message.getContent().getPartsList().stream().filter(Part::hasText)
          .map(p -> p.getText().getText()).collect(Collectors.joining(" "));
      if (blockedWords.stream().anyMatch(text::contains)) {
        throw args.abort("Blocked content detected in input");
      }
    }
    return null;
  }

  @Override
  public List<Chunk> processOutputStream(ProcessOutputStreamArgs args) {
    Chunk part = args.part();
    if (part.hasTextDelta() && blockedWords.stream().anyMatch(part.getTextDelta().getText()::contains)) {
      throw args.abort("Blocked content detected in output");
    }
    return List.of(part);
  }
}
