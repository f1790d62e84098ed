package dev.treadle.client;

import dev.treadle.v1.Chunk;
import dev.treadle.v1.FinishReason;
import java.util.Locale;

/**
 * One chunk of a run as {@link AgentClient#stream} yields it: the framework's chunk {@link #type()}
 * ({@code "text-delta"}, {@code "tool-call"}, {@code "finish"}, a data chunk's name), its
 * {@link #text()} and {@link #finishReason()} as strings, and the generated message ({@link
 * #proto()}) for everything else.
 */
public record RunChunk(Chunk proto) {
  /** The Mastra chunk type: {@code "text-delta"}, {@code "finish"}, {@code "data-progress"}, ... */
  public String type() {
    if (proto.hasData()) {
      return proto.getData().getName();
    }
    return kebab(proto.getChunkCase().name());
  }

  /** The text of a {@code text-delta} or {@code reasoning-delta} chunk; "" for other chunks. */
  public String text() {
    if (proto.hasTextDelta()) {
      return proto.getTextDelta().getText();
    }
    return proto.hasReasoningDelta() ? proto.getReasoningDelta().getText() : "";
  }

  /** The reason of a {@code finish} or {@code step-finish} chunk ({@code "stop"}, ...); "" otherwise. */
  public String finishReason() {
    if (proto.hasFinish()) {
      return finishReasonName(proto.getFinish().getReason());
    }
    return proto.hasStepFinish() ? finishReasonName(proto.getStepFinish().getReason()) : "";
  }

  /**
   * For a {@code tool-output} chunk (a sub-agent's chunk inside a tool call, nested to any depth):
   * the tool names from the outermost to the innermost ({@code [agent-research, agent-write]});
   * empty for the run's own chunks.
   */
  public java.util.List<String> path() {
    return proto.hasToolOutput() ? proto.getToolOutput().getPathList() : java.util.List.of();
  }

  /** The innermost chunk of a {@code tool-output} chunk (the sub-agent's own); this chunk otherwise. */
  public RunChunk innermost() {
    Chunk c = proto;
    while (c.hasToolOutput() && c.getToolOutput().hasOutput()) {
      c = c.getToolOutput().getOutput();
    }
    return c == proto ? this : new RunChunk(c);
  }

  /** The id of the run the chunk belongs to. */
  public String runId() {
    return proto.getRunId();
  }

  static String kebab(String constant) {
    return constant.toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /** {@code FINISH_REASON_TOOL_CALLS} as the framework names it: {@code "tool-calls"}. */
  public static String finishReasonName(FinishReason reason) {
    String name = reason.name();
    if (reason == FinishReason.FINISH_REASON_UNSPECIFIED || reason == FinishReason.UNRECOGNIZED) {
      return "unknown";
    }
    return kebab(name.substring("FINISH_REASON_".length()));
  }
}
