package dev.treadle.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.treadle.v1.AgentServiceGrpc;
import dev.treadle.v1.Chunk;
import dev.treadle.v1.GenerateRequest;
import dev.treadle.v1.GenerateResponse;
import dev.treadle.v1.StreamRequest;
import dev.treadle.v1.StreamResponse;
import dev.treadle.v1.TextDeltaChunk;
import dev.treadle.v1.Tripwire;
import io.grpc.Context;
import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The agent client against a fake AgentService: a tripwire as a result or an exception; closing a stream cancels it. */
class AgentClientTest {
  private final CountDownLatch cancelled = new CountDownLatch(1);
  private Server server;

  @BeforeEach
  void start() throws Exception {
    server = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create())
        .addService(new AgentServiceGrpc.AgentServiceImplBase() {
          @Override
          public void generate(GenerateRequest request, StreamObserver<GenerateResponse> out) {
            out.onNext(GenerateResponse.newBuilder().setRunId("r1").setTripwire(Tripwire.newBuilder()
                .setReason("no secrets").setProcessorId("guard").setMetadata(Json.toValue(Map.of("rule", "pw"))))
                .build());
            out.onCompleted();
          }

          @Override
          public void stream(StreamRequest request, StreamObserver<StreamResponse> out) {
            Context.current().addListener(c -> cancelled.countDown(), Runnable::run);
            ServerCallStreamObserver<StreamResponse> call = (ServerCallStreamObserver<StreamResponse>) out;
            for (int i = 0; i < 3; i++) { // then never finishes: the client must cancel
              call.onNext(StreamResponse.newBuilder().addChunks(Chunk.newBuilder()
                  .setTextDelta(TextDeltaChunk.newBuilder().setText("w" + i))).build());
            }
          }
        }).build().start();
  }

  @AfterEach
  void stop() throws Exception {
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  @Test
  void aTripwireIsAResultOrAnException() {
    try (AgentClient client = Treadle.connect("127.0.0.1:" + server.getPort())) {
      AgentClient.Result result = client.generate("a", "my password");
      assertEquals("no secrets", result.tripwire().orElseThrow().getReason());
      TripwireException e = assertThrows(TripwireException.class, result::orThrow);
      assertEquals("blocked by guard: no secrets", e.getMessage());
      assertEquals(Map.of("rule", "pw"), e.metadata());
    }
  }

  @Test
  void closingAStreamCancelsTheCall() throws Exception {
    try (AgentClient client = Treadle.connect("127.0.0.1:" + server.getPort())) {
      List<String> first;
      try (Stream<RunChunk> chunks = client.stream("a", "go")) {
        first = chunks.limit(2).map(RunChunk::text).toList();
      }
      assertEquals(List.of("w0", "w1"), first);
      assertTrue(cancelled.await(10, TimeUnit.SECONDS), "the server saw no cancel");
    }
  }

  @Test
  void aResultAndItsChunksSpeakTheFrameworksShapes() {
    var args = Json.toValue(Map.of("city", "Oslo"));
    var response = GenerateResponse.newBuilder().setText("Clear.")
        .setFinishReason(dev.treadle.v1.FinishReason.FINISH_REASON_STOP)
        .setUsage(dev.treadle.v1.Usage.newBuilder().setInputTokens(3).setOutputTokens(2).setTotalTokens(5))
        .addSteps(dev.treadle.v1.StepResult.newBuilder()
            .setFinishReason(dev.treadle.v1.FinishReason.FINISH_REASON_TOOL_CALLS)
            .addToolCalls(dev.treadle.v1.ToolCall.newBuilder().setToolCallId("c1").setToolName("weather").setArgs(args))
            .addToolResults(dev.treadle.v1.ToolResult.newBuilder().setToolCallId("c1").setToolName("weather")
                .setArgs(args).setResult(Json.toValue(Map.of("sky", "clear", "celsius", 21)))))
        .build();
    AgentClient.Result result = new AgentClient.Result(response);
    assertEquals("stop", result.finishReason());
    assertEquals(new AgentClient.Usage(3, 2, 5, 0, 0), result.usage());
    assertEquals(List.of(new AgentClient.ToolCallInfo("c1", "weather", Map.of("city", "Oslo"))), result.toolCalls());
    assertEquals(Map.of("sky", "clear", "celsius", 21L), result.toolResults().get(0).result());
    assertEquals(response, result.response());

    RunChunk delta = new RunChunk(Chunk.newBuilder().setTextDelta(TextDeltaChunk.newBuilder().setText("hi")).build());
    assertEquals("text-delta", delta.type());
    assertEquals("hi", delta.text());
    RunChunk finish = new RunChunk(Chunk.newBuilder().setFinish(dev.treadle.v1.FinishChunk.newBuilder()
        .setReason(dev.treadle.v1.FinishReason.FINISH_REASON_CONTENT_FILTER)).build());
    assertEquals("finish", finish.type());
    assertEquals("content-filter", finish.finishReason());
    RunChunk data = new RunChunk(Chunk.newBuilder().setData(dev.treadle.v1.DataChunk.newBuilder().setName("data-progress")).build());
    assertEquals("data-progress", data.type());
  }

  @Test
  void wholeNumbersComeBackAsLongs() {
    assertEquals(3L, Json.fromValue(Json.toValue(3)));
    assertEquals(2.5, Json.fromValue(Json.toValue(2.5)));
    assertEquals(List.of(1L, 1.5), Json.fromValue(Json.toValue(List.of(1, 1.5))));
  }
}
