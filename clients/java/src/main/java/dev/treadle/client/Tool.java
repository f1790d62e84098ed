package dev.treadle.client;

import java.util.Map;

/**
 * A tool served to Treadle agents: a name, a description, a JSON schema for its input and a
 * function from the input (plain Java: Map, List, String, Double, Boolean, null) to a
 * JSON-compatible output. An exception reaches the model as the tool's error.
 *
 * <pre>{@code
 * Tool weather = Tool.of("weather", "The weather in a city.",
 *     Map.of("type", "object", "properties", Map.of("city", Map.of("type", "string"))),
 *     (input, ctx) -> Map.of("city", ((Map<?, ?>) input).get("city"), "sky", "clear"));
 * }</pre>
 */
public record Tool(String name, String description, Map<String, ?> inputSchema, Map<String, ?> outputSchema,
    Function function) {

  /** What a tool does. */
  @FunctionalInterface
  public interface Function {
    Object apply(Object input, ToolContext context) throws Exception;
  }

  public Tool {
    if (name == null || name.isEmpty()) {
      throw new IllegalArgumentException("a tool needs a name");
    }
    if (function == null) {
      throw new IllegalArgumentException("tool " + name + " needs a function");
    }
    description = description == null ? "" : description;
    inputSchema = inputSchema == null ? Map.of("type", "object") : inputSchema;
  }

  /** A tool without an output schema. */
  public static Tool of(String name, String description, Map<String, ?> inputSchema, Function function) {
    return new Tool(name, description, inputSchema, null, function);
  }
}
