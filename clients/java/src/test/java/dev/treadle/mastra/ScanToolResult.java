package dev.treadle.mastra;

import dev.treadle.client.Json;
import dev.treadle.client.ProcessToolResultArgs;
import dev.treadle.client.Processor;
import dev.treadle.v1.ReplaceOutcome;
import java.util.regex.Pattern;

/** Blocks tool results that look like a prompt injection. */
public final class ScanToolResult implements Processor {
  private static final Pattern INJECTION =
      Pattern.compile("ignore (all )?(previous|prior) instructions", Pattern.CASE_INSENSITIVE);

  @Override
  public String id() {
    return "scan-tool-result";
  }

  @Override
  public ReplaceOutcome processToolResult(ProcessToolResultArgs args) {
    Object result = args.result();
    String text = result instanceof String s ? s : Json.stringify(result);
    if (INJECTION.matcher(text).find()) {
      throw args.abort("blocked by scan-tool-result: suspected prompt injection");
    }
    return null;
  }
}
