package dev.treadle.mastra;

import dev.treadle.client.Json;
import dev.treadle.client.ProcessToolResultArgs;
import dev.treadle.client.Processor;
import dev.treadle.v1.ReplaceOutcome;
import dev.treadle.v1.ToolInvocationPart;
import dev.treadle.v1.ToolInvocationState;
import java.util.LinkedHashMap;
import java.util.Map;

/** Redacts the customer's SSN and e-mail from lookup-customer's result. */
public final class RedactToolResult implements Processor {
  @Override
  public String id() {
    return "redact-tool-result";
  }

  @Override
  public ReplaceOutcome processToolResult(ProcessToolResultArgs args) {
    if (!args.toolName().equals("lookup-customer")) {
      return null;
    }
    Map<String, Object> redacted = new LinkedHashMap<>();
    if (args.result() instanceof Map<?, ?> result) {
      result.forEach((k, v) -> redacted.put((String) k, v));
    }
    redacted.put("ssn", "[REDACTED]");
    redacted.put("email", "[REDACTED]");
    args.messageList().updateToolInvocation(ToolInvocationPart.newBuilder()
        .setState(ToolInvocationState.TOOL_INVOCATION_STATE_RESULT)
        .setToolCallId(args.toolCallId()).setToolName(args.toolName())
        .setArgs(args.raw().getArgs()).setResult(Json.toValue(redacted)).build());
    return null;
  }
}
