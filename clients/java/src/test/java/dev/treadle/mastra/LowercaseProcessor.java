package dev.treadle.mastra;

import dev.treadle.client.ProcessInputArgs;
import dev.treadle.client.Processor;
import dev.treadle.client.Replace;
import dev.treadle.v1.Message;
import dev.treadle.v1.Part;
import dev.treadle.v1.ReplaceOutcome;
import java.util.Locale;

/** Lowercases the text of every input message. */
public final class LowercaseProcessor implements Processor {
  @Override
  public String id() {
    return "lowercase";
  }

  @Override
  public ReplaceOutcome processInput(ProcessInputArgs args) {
    return Replace.messages(args.messages().stream().map(LowercaseProcessor::lowercase).toList());
  }

  private static Message lowercase(Message message) {
    Message.Builder b = message.toBuilder();
    for (Part.Builder part : b.getContentBuilder().getPartsBuilderList()) {
      if (part.hasText()) {
        part.getTextBuilder().setText(part.getText().getText().toLowerCase(Locale.ROOT));
      }
    }
    return b.build();
  }
}
