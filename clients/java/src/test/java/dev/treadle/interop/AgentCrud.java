package dev.treadle.interop;

import dev.treadle.client.AgentClient;
import dev.treadle.client.Json;
import dev.treadle.client.Treadle;
import dev.treadle.v1.Agent;
import dev.treadle.v1.AgentSource;
import io.grpc.StatusRuntimeException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The Java agent client's CRUD calls against a server, as the TypeScript client's test makes them
 * (tests/remote/ts/agent_crud.ts); prints one JSON report for tests/test_java_sdk.py to check.
 */
public final class AgentCrud {
  private AgentCrud() {}

  static String code(Supplier<?> call) {
    try {
      call.get();
      return "OK";
    } catch (StatusRuntimeException e) {
      return e.getStatus().getCode().name();
    }
  }

  public static void main(String[] args) {
    try (AgentClient client = Treadle.connect(args[0])) {
      Agent created = client.createAgent(Agent.newBuilder().setId("echo").setName("Echo").setModel("openai/gpt-4o-mini").build());
      for (int i = 0; i < 3; i++) {
        client.createAgent(Agent.newBuilder().setId("more-" + i).setModel("openai/gpt-4o-mini").build());
      }
      List<String> listed = client.listAgents(1).stream().map(Agent::getId).toList(); // four pages
      Agent updated = client.updateAgent(Agent.newBuilder().setId("echo").setName("Echo v2").build(), "name");
      Agent fetched = client.getAgent("echo");
      client.deleteAgent("echo");
      Map<String, Object> report = new LinkedHashMap<>();
      report.put("createdFromApi", created.getSource() == AgentSource.AGENT_SOURCE_API);
      report.put("listed", listed);
      report.put("updated", List.of(updated.getName(), updated.getModel()));
      report.put("fetched", fetched.getName());
      report.put("missing", code(() -> client.getAgent("echo")));
      report.put("bad", code(() -> client.createAgent(Agent.newBuilder().setModel("openai/gpt-4o-mini").build())));
      report.put("after", client.listAgents().stream().map(Agent::getId).toList());
      System.out.println(Json.stringify(report));
    }
  }
}
