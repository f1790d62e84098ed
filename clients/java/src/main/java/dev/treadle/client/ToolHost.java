package dev.treadle.client;

import dev.treadle.v1.ToolCallResult;
import dev.treadle.v1.ToolDefinition;
import dev.treadle.v1.ToolHandshake;
import dev.treadle.v1.ToolInvocation;
import dev.treadle.v1.ToolServiceAttachRequest;
import dev.treadle.v1.ToolServiceAttachResponse;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import java.util.logging.Logger;

/** Serves tools over {@code ToolService.Attach}. */
final class ToolHost {
  private static final Logger LOG = Logger.getLogger("dev.treadle.client");

  private final Map<String, Tool> tools = new LinkedHashMap<>();
  private final Settings settings;
  private final Tracing tracing;
  final ExecutorService executor = Executors.newCachedThreadPool(ProcessorHost.daemon("treadle-tool"));

  ToolHost(List<Tool> list, Settings settings) {
    if (list.isEmpty()) {
      throw new IllegalArgumentException("give at least one tool");
    }
    for (Tool t : list) {
      if (tools.putIfAbsent(t.name(), t) != null) {
        throw new IllegalArgumentException("tool " + t.name() + " is given twice");
      }
    }
    this.settings = settings;
    this.tracing = new Tracing(settings.openTelemetry());
  }

  String label() {
    return "tool " + String.join(", ", tools.keySet());
  }

  static ToolDefinition definition(Tool tool) {
    ToolDefinition.Builder d = ToolDefinition.newBuilder().setName(tool.name()).setDescription(tool.description())
        .setInputSchema(Json.toStruct(tool.inputSchema()));
    if (tool.outputSchema() != null) {
      d.setOutputSchema(Json.toStruct(tool.outputSchema()));
    }
    return d.build();
  }

  Link.Session<ToolServiceAttachRequest, ToolServiceAttachResponse> session(Consumer<ToolServiceAttachRequest> send) {
    Map<String, Future<?>> running = new ConcurrentHashMap<>();
    return new Link.Session<>() {
      @Override
      public ToolServiceAttachRequest handshake() {
        ToolHandshake.Builder h = ToolHandshake.newBuilder().addProtocolVersions(1).setInstanceId(settings.instanceId());
        tools.values().forEach(t -> h.addTools(definition(t)));
        return ToolServiceAttachRequest.newBuilder().setHandshake(h).build();
      }

      @Override
      public boolean onMessage(ToolServiceAttachResponse message) {
        switch (message.getMessageCase()) {
          case WELCOME:
            return true;
          case CALL: {
            ToolInvocation call = message.getCall();
            running.put(call.getInvocationId(), executor.submit(() -> {
              try {
                send.accept(ToolServiceAttachRequest.newBuilder().setResult(run(call)).build());
              } finally {
                running.remove(call.getInvocationId());
              }
            }));
            break;
          }
          case CANCEL: {
            Future<?> f = running.remove(message.getCancel().getInvocationId());
            if (f != null) {
              f.cancel(true);
            }
            break;
          }
          case DRAIN:
            LOG.info("server is draining; will reconnect when it closes the stream");
            break;
          default:
            break;
        }
        return false;
      }

      @Override
      public void close() {
        running.values().forEach(f -> f.cancel(true));
      }
    };
  }

  private ToolCallResult run(ToolInvocation call) {
    ToolCallResult.Builder result = ToolCallResult.newBuilder().setInvocationId(call.getInvocationId());
    Writer writer = new Writer();
    Map<String, Object> attributes = new LinkedHashMap<>();
    attributes.put("gen_ai.operation.name", "execute_tool");
    attributes.put("gen_ai.tool.name", call.getToolName());
    attributes.put("gen_ai.tool.call.id", call.getToolCallId());
    attributes.put("treadle.run.id", call.getRunId());
    Span span = tracing.start("execute_tool " + call.getToolName(), call.getTraceContext(), attributes);
    try (Scope scope = span.makeCurrent()) {
      Tool tool = tools.get(call.getToolName());
      if (tool == null) {
        throw new IllegalArgumentException("tool " + call.getToolName() + " is not served by this process");
      }
      Object input = call.hasArgs() ? Json.fromValue(call.getArgs()) : null;
      result.setOutput(Json.toValue(tool.function().apply(input, new ToolContext(call, writer, Context.current()))));
    } catch (Exception e) { // the model receives the message as a tool error
      Tracing.markError(span, e);
      result.setError(ProcessorHost.message(e));
    } finally {
      span.end();
    }
    result.addAllCustomChunks(writer.written());
    return result.build();
  }
}
