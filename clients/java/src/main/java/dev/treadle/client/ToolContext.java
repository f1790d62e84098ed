package dev.treadle.client;

import com.google.protobuf.Struct;
import dev.treadle.v1.ToolInvocation;
import io.opentelemetry.context.Context;

/** What a tool call knows about its run, and its {@link #writer()} for custom {@code data-*} chunks. */
public final class ToolContext {
  private final ToolInvocation call;
  private final Writer writer;
  private final Context tracingContext;

  ToolContext(ToolInvocation call, Writer writer, Context tracingContext) {
    this.call = call;
    this.writer = writer;
    this.tracingContext = tracingContext;
  }

  public String toolCallId() {
    return call.getToolCallId();
  }

  public String runId() {
    return call.getRunId();
  }

  public String agentId() {
    return call.getAgentId();
  }

  public String threadId() {
    return call.getThreadId();
  }

  public String resourceId() {
    return call.getResourceId();
  }

  public Struct requestContext() {
    return call.getRequestContext();
  }

  /** Custom chunks, emitted before the tool's result. */
  public Writer writer() {
    return writer;
  }

  /** The OpenTelemetry context of this call's span. */
  public Context tracingContext() {
    return tracingContext;
  }
}
