package dev.treadle.client;

import com.google.protobuf.Struct;
import dev.treadle.v1.Message;
import dev.treadle.v1.MessageRole;
import dev.treadle.v1.Part;
import dev.treadle.v1.ScoreInvocation;
import dev.treadle.v1.ScoreSource;
import dev.treadle.v1.SystemMessage;
import java.util.List;

/** One finished run, as a scorer sees it: its input, remembered and system messages and its stored output. */
public final class ScorerRun {
  private final ScoreInvocation invocation;

  ScorerRun(ScoreInvocation invocation) {
    this.invocation = invocation;
  }

  public String runId() {
    return invocation.getRunId();
  }

  public String agentId() {
    return invocation.getAgentId();
  }

  public String threadId() {
    return invocation.getThreadId();
  }

  public String resourceId() {
    return invocation.getResourceId();
  }

  public Struct requestContext() {
    return invocation.getRequestContext();
  }

  public List<Message> inputMessages() {
    return invocation.getInput().getInputMessagesList();
  }

  public List<Message> rememberedMessages() {
    return invocation.getInput().getRememberedMessagesList();
  }

  public List<SystemMessage> systemMessages() {
    return invocation.getInput().getSystemMessagesList();
  }

  /** The run's response messages, as stored. */
  public List<Message> output() {
    return invocation.getOutputList();
  }

  /** {@code live}, or {@code test} when the run is scored on demand. */
  public String source() {
    return invocation.getSource() == ScoreSource.SCORE_SOURCE_TEST ? "test" : "live";
  }

  public String agentVersion() {
    return invocation.getAgentVersion();
  }

  /** The text of the run's assistant messages. */
  public String answer() {
    StringBuilder b = new StringBuilder();
    for (Message m : output()) {
      if (m.getRole() == MessageRole.MESSAGE_ROLE_ASSISTANT) {
        b.append(text(m));
      }
    }
    return b.toString();
  }

  /** The text of the run's last user input message. */
  public String question() {
    List<Message> input = inputMessages();
    for (int i = input.size() - 1; i >= 0; i--) {
      Message m = input.get(i);
      if (m.getRole() == MessageRole.MESSAGE_ROLE_USER && !text(m).isEmpty()) {
        return text(m);
      }
    }
    return "";
  }

  static String text(Message m) {
    StringBuilder b = new StringBuilder();
    for (Part p : m.getContent().getPartsList()) {
      if (p.hasText()) {
        b.append(p.getText().getText());
      }
    }
    return b.toString();
  }
}
