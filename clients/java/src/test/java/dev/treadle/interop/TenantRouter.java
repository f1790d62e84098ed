package dev.treadle.interop;

import dev.treadle.client.Attachment;
import dev.treadle.client.Processor;
import dev.treadle.client.ResolveAgentArgs;
import dev.treadle.client.Treadle;
import dev.treadle.v1.AgentOverrides;
import dev.treadle.v1.SystemMessage;
import dev.treadle.v1.SystemMessages;
import java.time.Duration;
import java.util.List;

/**
 * A remote {@code resolveAgent} on the Java SDK, the twin of the Go SDK's tierresolver: for a
 * request context with {@code tenant: acme} it answers the model {@code openai/gpt-4.1} and Acme's
 * instructions; with {@code slow: true} it answers after 5 s; otherwise it changes nothing.
 *
 * <pre>TenantRouter TARGET</pre>
 */
public final class TenantRouter implements Processor {
  @Override
  public String id() {
    return "tenant-router";
  }

  @Override
  public AgentOverrides resolveAgent(ResolveAgentArgs args) throws Exception {
    var context = args.requestContext().getFieldsMap();
    if (context.containsKey("slow") && context.get("slow").getBoolValue()) {
      Thread.sleep(5000);
    }
    if (!"acme".equals(context.getOrDefault("tenant", com.google.protobuf.Value.getDefaultInstance()).getStringValue())) {
      return null;
    }
    return AgentOverrides.newBuilder()
        .setModel("openai/gpt-4.1")
        .setInstructions(SystemMessages.newBuilder().addMessages(SystemMessage.newBuilder()
            .setContent("You answer for Acme. The agent was " + args.agent().getModel() + ".")))
        .build();
  }

  public static void main(String[] args) throws Exception {
    Attachment attached = Treadle.attach(args[0], List.of(new TenantRouter()));
    Runtime.getRuntime().addShutdownHook(new Thread(attached::close));
    attached.awaitReady(Duration.ofSeconds(30));
    System.out.println("ready");
    Thread.currentThread().join();
  }
}
