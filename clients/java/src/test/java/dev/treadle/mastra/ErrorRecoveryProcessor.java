package dev.treadle.mastra;

import dev.treadle.client.APIErrorDecision;
import dev.treadle.client.ProcessAPIErrorArgs;
import dev.treadle.client.Processor;
import dev.treadle.v1.Message;
import java.util.List;

/** Trims older messages and retries once when the context is too long. */
public final class ErrorRecoveryProcessor implements Processor {
  @Override
  public String id() {
    return "error-recovery";
  }

  @Override
  public APIErrorDecision processAPIError(ProcessAPIErrorArgs args) {
    // Only retry once
    if (args.retryCount() > 0) {
      return null;
    }
    if (args.error().getMessage().contains("context length exceeded")) {
      // Trim older messages to fit within context
      List<Message> messages = args.messageList().all();
      if (messages.size() > 4) {
        args.messageList().removeByIds(messages.get(1).getId(), messages.get(2).getId());
        return APIErrorDecision.retry();
      }
    }
    return null;
  }
}
