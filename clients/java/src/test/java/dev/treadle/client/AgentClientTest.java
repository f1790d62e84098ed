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
      try (Stream<Chunk> chunks = client.stream("a", "go")) {
        first = chunks.limit(2).map(c -> c.getTextDelta().getText()).toList();
      }
      assertEquals(List.of("w0", "w1"), first);
      assertTrue(cancelled.await(10, TimeUnit.SECONDS), "the server saw no cancel");
    }
  }
}
