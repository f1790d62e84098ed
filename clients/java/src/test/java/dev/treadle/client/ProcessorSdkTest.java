package dev.treadle.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Struct;
import dev.treadle.v1.CancelInvocation;
import dev.treadle.v1.Chunk;
import dev.treadle.v1.ChunkOutcome;
import dev.treadle.v1.FinishChunk;
import dev.treadle.v1.Hook;
import dev.treadle.v1.HookDeclaration;
import dev.treadle.v1.HookMode;
import dev.treadle.v1.Invocation;
import dev.treadle.v1.InvocationResult;
import dev.treadle.v1.ProcessInputArgs;
import dev.treadle.v1.ProcessOutputStreamArgs;
import dev.treadle.v1.ProcessOutputStepArgs;
import dev.treadle.v1.ProcessorHandshake;
import dev.treadle.v1.ProcessorServiceAttachResponse;
import dev.treadle.v1.ProcessorState;
import dev.treadle.v1.ReplaceOutcome;
import dev.treadle.v1.RunEnded;
import dev.treadle.v1.StreamDelivery;
import dev.treadle.v1.TextDeltaChunk;
import dev.treadle.v1.TraceContext;
import io.grpc.Status;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The processor SDK against a fake server that plays the protocol by hand. */
class ProcessorSdkTest {
  private FakeServer server;

  @BeforeEach
  void start() throws Exception {
    server = new FakeServer();
  }

  @AfterEach
  void stop() throws Exception {
    server.close();
  }

  static ProcessorServiceAttachResponse invocation(Invocation.Builder inv) {
    return ProcessorServiceAttachResponse.newBuilder().setInvocation(inv).build();
  }

  static Chunk delta(String text) {
    return Chunk.newBuilder().setTextDelta(TextDeltaChunk.newBuilder().setId("t1").setText(text)).build();
  }

  static Invocation.Builder stream(String id, String run, Chunk... parts) {
    return Invocation.newBuilder().setInvocationId(id).setProcessorId("counter").setRunId(run)
        .setHook(Hook.HOOK_PROCESS_OUTPUT_STREAM)
        .setProcessOutputStream(ProcessOutputStreamArgs.newBuilder().addAllParts(List.of(parts)));
  }

  /** Counts words in its state; emits the count as a custom chunk at the finish. */
  static final class Counter implements Processor {
    @Override
    public String id() {
      return "counter";
    }

    @Override
    public List<Chunk> processOutputStream(dev.treadle.client.ProcessOutputStreamArgs args) {
      int n = ((Number) args.state().getOrDefault("words", 0)).intValue();
      if (args.part().hasTextDelta()) {
        n += args.part().getTextDelta().getText().trim().split("\\s+").length;
        args.state().put("words", n);
      }
      if (args.part().hasFinish()) {
        args.writer().custom("data-count", Map.of("words", n));
      }
      return List.of(args.part());
    }
  }

  @Test
  void theHandshakeDeclaresExactlyTheOverriddenHooks() throws Exception {
    Processor guard = new Processor() {
      @Override
      public String id() {
        return "guard";
      }

      @Override
      public ProcessorOptions options() {
        return ProcessorOptions.defaults().observe(Hook.HOOK_PROCESS_OUTPUT_STEP)
            .timeout(Hook.HOOK_PROCESS_INPUT, Duration.ofMillis(1500));
      }

      @Override
      public ReplaceOutcome processInput(dev.treadle.client.ProcessInputArgs args) {
        return null;
      }

      @Override
      public ReplaceOutcome processOutputStep(dev.treadle.client.ProcessOutputStepArgs args) {
        return null;
      }
    };
    try (Attachment a = Treadle.attach(server.target(), List.of(guard, new Counter()), Option.instanceId("test:1"))) {
      ProcessorHandshake h = server.nextStream().next().getHandshake();
      assertEquals(List.of(1, 2), h.getProtocolVersionsList());
      assertEquals("test:1", h.getInstanceId());
      List<HookDeclaration> hooks = h.getProcessors(0).getHooksList();
      assertEquals(List.of(Hook.HOOK_PROCESS_INPUT, Hook.HOOK_PROCESS_OUTPUT_STEP),
          hooks.stream().map(HookDeclaration::getHook).toList());
      assertEquals(HookMode.HOOK_MODE_MUTATE, hooks.get(0).getMode());
      assertEquals(1, hooks.get(0).getTimeout().getSeconds());
      assertEquals(500_000_000, hooks.get(0).getTimeout().getNanos());
      assertEquals(HookMode.HOOK_MODE_OBSERVE, hooks.get(1).getMode());
      HookDeclaration stream = h.getProcessors(1).getHooks(0);
      assertEquals(Hook.HOOK_PROCESS_OUTPUT_STREAM, stream.getHook());
      assertEquals(StreamDelivery.STREAM_DELIVERY_WINDOWED, stream.getDelivery());
      assertEquals(4, stream.getMaxInFlight());
    }
  }

  @Test
  void aProcessorWithoutHooksIsRefusedBeforeConnecting() {
    Processor none = () -> "none";
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Treadle.attach(server.target(), List.of(none)));
    assertTrue(e.getMessage().contains("none"), e.getMessage());
  }

  @Test
  void stateIsNumberedPerRunAndForgottenAtRunEnd() throws Exception {
    try (Attachment a = Treadle.attach(server.target(), List.of(new Counter()))) {
      FakeServer.Stream s = server.nextStream();
      s.next();
      s.welcome(2);
      a.awaitReady(Duration.ofSeconds(10));
      s.send(invocation(stream("i1", "r1", delta("one two"))));
      InvocationResult first = s.next().getResult();
      assertEquals("i1", first.getInvocationId());
      assertEquals(1, first.getState().getVersion());
      assertEquals(2.0, first.getState().getValue().getFieldsOrThrow("words").getNumberValue());
      assertTrue(first.getStream().getChunks(0).hasUnchanged());

      // The stream holds the latest state: the next invocation carries none.
      Chunk finish = Chunk.newBuilder().setFinish(FinishChunk.getDefaultInstance()).build();
      s.send(invocation(stream("i2", "r1", delta("three"), finish)));
      InvocationResult second = s.next().getResult();
      assertEquals(2, second.getState().getVersion());
      assertEquals(3.0, second.getCustomChunks(0).getData().getStructValue().getFieldsOrThrow("words").getNumberValue());

      // A newer state from the server wins over the one held.
      Struct newer = Json.toStruct(Map.of("words", 10));
      s.send(invocation(stream("i3", "r1", delta("four")).setState(
          ProcessorState.newBuilder().setValue(newer).setVersion(5))));
      assertEquals(6, s.next().getResult().getState().getVersion());

      s.send(ProcessorServiceAttachResponse.newBuilder().setRunEnded(RunEnded.newBuilder().setRunId("r1")).build());
      s.send(invocation(stream("i4", "r1", delta("five"))));
      InvocationResult fresh = s.next().getResult();
      assertEquals(1, fresh.getState().getVersion());
      assertEquals(1.0, fresh.getState().getValue().getFieldsOrThrow("words").getNumberValue());
    }
  }

  @Test
  void abortCarriesRetryAndMetadata() throws Exception {
    Processor quality = new Processor() {
      @Override
      public String id() {
        return "quality";
      }

      @Override
      public ReplaceOutcome processOutputStep(dev.treadle.client.ProcessOutputStepArgs args) {
        throw args.abort("too short", TripwireException.Options.retry().metadata(Map.of("score", 0.2)));
      }
    };
    try (Attachment a = Treadle.attach(server.target(), List.of(quality))) {
      FakeServer.Stream s = server.nextStream();
      s.next();
      s.welcome(2);
      s.send(invocation(Invocation.newBuilder().setInvocationId("i1").setProcessorId("quality").setRunId("r")
          .setHook(Hook.HOOK_PROCESS_OUTPUT_STEP).setProcessOutputStep(ProcessOutputStepArgs.newBuilder().setText("hi"))));
      InvocationResult r = s.next().getResult();
      assertEquals("too short", r.getAbort().getReason());
      assertTrue(r.getAbort().getRetry());
      assertEquals(0.2, r.getAbort().getMetadata().getStructValue().getFieldsOrThrow("score").getNumberValue());
      // An invocation for a processor this process does not serve is answered with an error.
      s.send(invocation(Invocation.newBuilder().setInvocationId("i2").setProcessorId("other").setRunId("r")
          .setHook(Hook.HOOK_PROCESS_OUTPUT_STEP).setProcessOutputStep(ProcessOutputStepArgs.getDefaultInstance())));
      InvocationResult other = s.next().getResult();
      assertEquals("i2", other.getInvocationId());
      assertTrue(other.getError().getMessage().contains("other"), other.getError().getMessage());
    }
  }

  /** Splits every delta in two. */
  static final class Splitter implements Processor {
    @Override
    public String id() {
      return "counter";
    }

    @Override
    public List<Chunk> processOutputStream(dev.treadle.client.ProcessOutputStreamArgs args) {
      String t = args.part().getTextDelta().getText();
      return List.of(delta(t.substring(0, 1)), delta(t.substring(1)));
    }
  }

  @Test
  void severalChunksNeedVersionTwo() throws Exception {
    try (Attachment a = Treadle.attach(server.target(), List.of(new Splitter()))) {
      FakeServer.Stream s = server.nextStream();
      s.next();
      s.welcome(2);
      s.send(invocation(stream("i1", "r", delta("ab"))));
      ChunkOutcome v2 = s.next().getResult().getStream().getChunks(0);
      assertEquals(List.of("a", "b"), v2.getChunks().getChunksList().stream()
          .map(c -> c.getTextDelta().getText()).toList());
      s.end(); // the server restarts and speaks version 1 only
      FakeServer.Stream again = server.nextStream();
      again.next();
      again.welcome(1);
      again.send(invocation(stream("i2", "r", delta("ab"))));
      assertTrue(again.next().getResult().getStream().getChunks(0).getError().getMessage().contains("version 2"));
      assertEquals(2, a.streamsOpened());
    }
  }

  @Test
  void aRefusedHandshakeIsReportedAndNotRetried() throws Exception {
    try (Attachment a = Treadle.attach(server.target(), List.of(new Counter()),
        Option.backoff(Duration.ofMillis(10), Duration.ofMillis(20)))) {
      FakeServer.Stream s = server.nextStream();
      s.next();
      s.fail(Status.INVALID_ARGUMENT.withDescription("processor id \"counter\": bad"));
      AttachException e = assertThrows(AttachException.class, () -> a.awaitReady(Duration.ofSeconds(10)));
      assertEquals(Status.Code.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains("bad"));
      assertEquals(null, server.streams.poll(300, TimeUnit.MILLISECONDS)); // never retried
      assertEquals(1, a.streamsOpened());
    }
  }

  @Test
  void aCancelledInvocationStopsAndIsNotAnswered() throws Exception {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch stopped = new CountDownLatch(1);
    Processor slow = new Processor() {
      @Override
      public String id() {
        return "slow";
      }

      @Override
      public ReplaceOutcome processInput(dev.treadle.client.ProcessInputArgs args) throws Exception {
        started.countDown();
        try {
          new CountDownLatch(1).await(); // until interrupted by the cancel
        } finally {
          stopped.countDown();
        }
        return null;
      }

      @Override
      public ReplaceOutcome processOutputStep(dev.treadle.client.ProcessOutputStepArgs args) {
        return null;
      }
    };
    try (Attachment a = Treadle.attach(server.target(), List.of(slow))) {
      FakeServer.Stream s = server.nextStream();
      s.next();
      s.welcome(2);
      s.send(invocation(Invocation.newBuilder().setInvocationId("i1").setProcessorId("slow").setRunId("r1")
          .setHook(Hook.HOOK_PROCESS_INPUT).setProcessInput(ProcessInputArgs.getDefaultInstance())));
      assertTrue(started.await(10, TimeUnit.SECONDS));
      s.send(ProcessorServiceAttachResponse.newBuilder().setCancel(CancelInvocation.newBuilder().setInvocationId("i1")).build());
      assertTrue(stopped.await(10, TimeUnit.SECONDS));
      // The run's next invocation is answered, and is the first answer on the stream.
      s.send(invocation(Invocation.newBuilder().setInvocationId("i2").setProcessorId("slow").setRunId("r1")
          .setHook(Hook.HOOK_PROCESS_OUTPUT_STEP).setProcessOutputStep(ProcessOutputStepArgs.getDefaultInstance())));
      InvocationResult r = s.next().getResult();
      assertEquals("i2", r.getInvocationId());
      assertTrue(r.hasUnchanged());
    }
  }

  @Test
  void eachInvocationSpanIsAChildOfTheTraceContextItCarries() throws Exception {
    InMemorySpanExporter exporter = InMemorySpanExporter.create();
    OpenTelemetrySdk otel = OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder()
        .addSpanProcessor(SimpleSpanProcessor.create(exporter)).build()).build();
    String traceId = "0af7651916cd43dd8448eb211c80319c";
    String parent = "b7ad6b7169203331";
    try (Attachment a = Treadle.attach(server.target(), List.of(new Counter()), Option.openTelemetry(otel))) {
      FakeServer.Stream s = server.nextStream();
      s.next();
      s.welcome(2);
      s.send(invocation(stream("i1", "r1", delta("hi")).setTraceContext(
          TraceContext.newBuilder().setTraceparent("00-" + traceId + "-" + parent + "-01"))));
      s.next();
    }
    List<SpanData> spans = exporter.getFinishedSpanItems();
    assertEquals(List.of("processOutputStream counter"), spans.stream().map(SpanData::getName).toList());
    SpanContext parentContext = spans.get(0).getParentSpanContext();
    assertEquals(traceId, spans.get(0).getTraceId());
    assertEquals(parent, parentContext.getSpanId());
    assertTrue(parentContext.isRemote());
    otel.close();
  }

  @Test
  void aHookPastItsTimeoutIsInterruptedAndNotAnswered() throws Exception {
    CountDownLatch interrupted = new CountDownLatch(1);
    Processor slow = new Processor() {
      @Override
      public String id() {
        return "slow";
      }

      @Override
      public ReplaceOutcome processInput(dev.treadle.client.ProcessInputArgs args) {
        try {
          new CountDownLatch(1).await();
        } catch (InterruptedException e) {
          assertTrue(args.isCancelled());
          interrupted.countDown();
        }
        return null;
      }
    };
    try (Attachment a = Treadle.attach(server.target(), List.of(slow))) {
      FakeServer.Stream s = server.nextStream();
      s.next();
      s.welcome(2);
      s.send(invocation(Invocation.newBuilder().setInvocationId("i1").setProcessorId("slow").setRunId("r1")
          .setHook(Hook.HOOK_PROCESS_INPUT).setProcessInput(ProcessInputArgs.getDefaultInstance())
          .setTimeout(com.google.protobuf.Duration.newBuilder().setNanos(50_000_000))));
      assertTrue(interrupted.await(10, TimeUnit.SECONDS));
      assertEquals(null, s.received.poll(200, TimeUnit.MILLISECONDS)); // and never answered
    }
  }

  @Test
  void messageListEditsTravelAsTheWholeList() {
    dev.treadle.v1.MessageListSnapshot.Builder snap = dev.treadle.v1.MessageListSnapshot.newBuilder();
    for (String id : List.of("m1", "m2", "m3")) {
      snap.addMessagesBuilder().setMessage(dev.treadle.v1.Message.newBuilder().setId(id))
          .setSource(dev.treadle.v1.MessageSource.MESSAGE_SOURCE_MEMORY);
    }
    MessageList ml = new MessageList(snap.build());
    assertFalse(ml.changed());
    ml.removeByIds("m2");
    assertTrue(ml.changed());
    assertEquals(List.of("m1", "m3"), ml.toReplacement().getMessagesList().stream()
        .map(dev.treadle.v1.Message::getId).collect(Collectors.toList()));
    assertEquals(2, ml.toReplacement().getSourcesCount());
  }

  @Test
  void theDelegationHooksRejectChangeAndFeedBack() throws Exception {
    Processor supervisor = new Processor() {
      @Override
      public String id() {
        return "supervisor";
      }

      @Override
      public dev.treadle.v1.DelegationStartOutcome onDelegationStart(OnDelegationStartArgs args) {
        return args.prompt().contains("password") ? Delegations.reject("no credentials")
            : Delegations.modifyPrompt(args.prompt() + " Cite sources.");
      }

      @Override
      public dev.treadle.v1.DelegationCompleteOutcome onDelegationComplete(OnDelegationCompleteArgs args) {
        return Delegations.feedback("checked " + args.key());
      }
    };
    try (Attachment a = Treadle.attach(server.target(), List.of(supervisor))) {
      FakeServer.Stream s = server.nextStream();
      ProcessorHandshake h = s.next().getHandshake();
      assertEquals(List.of(Hook.HOOK_ON_DELEGATION_START, Hook.HOOK_ON_DELEGATION_COMPLETE),
          h.getProcessors(0).getHooksList().stream().map(HookDeclaration::getHook).collect(Collectors.toList()));
      s.welcome(2);
      a.awaitReady(Duration.ofSeconds(10));
      s.send(invocation(Invocation.newBuilder().setInvocationId("i1").setProcessorId("supervisor").setRunId("r")
          .setHook(Hook.HOOK_ON_DELEGATION_START).setOnDelegationStart(
              dev.treadle.v1.OnDelegationStartArgs.newBuilder().setKey("research").setPrompt("the password?"))));
      InvocationResult rejected = s.next().getResult();
      assertTrue(rejected.getDelegationStart().getReject());
      assertEquals("no credentials", rejected.getDelegationStart().getRejectionReason());
      s.send(invocation(Invocation.newBuilder().setInvocationId("i2").setProcessorId("supervisor").setRunId("r")
          .setHook(Hook.HOOK_ON_DELEGATION_START).setOnDelegationStart(
              dev.treadle.v1.OnDelegationStartArgs.newBuilder().setKey("research").setPrompt("Tides?"))));
      InvocationResult changed = s.next().getResult();
      assertFalse(changed.getDelegationStart().getReject());
      assertEquals("Tides? Cite sources.", changed.getDelegationStart().getModifiedPrompt());
      s.send(invocation(Invocation.newBuilder().setInvocationId("i3").setProcessorId("supervisor").setRunId("r")
          .setHook(Hook.HOOK_ON_DELEGATION_COMPLETE).setOnDelegationComplete(
              dev.treadle.v1.OnDelegationCompleteArgs.newBuilder().setKey("research").setSuccess(true))));
      assertEquals("checked research", s.next().getResult().getDelegationComplete().getFeedback());
    }
  }

  @Test
  void aToolOutputChunkHasAPathAndAnInnermostChunk() {
    Chunk inner = delta("hi");
    Chunk mid = Chunk.newBuilder().setToolOutput(dev.treadle.v1.ToolOutputChunk.newBuilder()
        .setToolName("agent-write").setOutput(inner).addPath("agent-write")).build();
    Chunk outer = Chunk.newBuilder().setToolOutput(dev.treadle.v1.ToolOutputChunk.newBuilder()
        .setToolName("agent-research").setOutput(mid).addPath("agent-research").addPath("agent-write")).build();
    RunChunk chunk = new RunChunk(outer);
    assertEquals("tool-output", chunk.type());
    assertEquals(List.of("agent-research", "agent-write"), chunk.path());
    assertEquals("hi", chunk.innermost().text());
    assertEquals(List.of(), new RunChunk(inner).path());
  }
}
