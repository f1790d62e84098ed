package dev.treadle.client;

import com.google.protobuf.FieldMask;
import dev.treadle.v1.Agent;
import dev.treadle.v1.AgentServiceGrpc;
import dev.treadle.v1.CallOptions;
import dev.treadle.v1.Chunk;
import dev.treadle.v1.CreateAgentRequest;
import dev.treadle.v1.DeleteAgentRequest;
import dev.treadle.v1.GenerateRequest;
import dev.treadle.v1.GenerateResponse;
import dev.treadle.v1.GetAgentRequest;
import dev.treadle.v1.ListAgentsRequest;
import dev.treadle.v1.ListAgentsResponse;
import dev.treadle.v1.Message;
import dev.treadle.v1.SendMessageRequest;
import dev.treadle.v1.SendMessageResponse;
import dev.treadle.v1.SignalAttribute;
import dev.treadle.v1.SignalMessage;
import dev.treadle.v1.StreamRequest;
import dev.treadle.v1.StreamResponse;
import dev.treadle.v1.SubscribeToThreadRequest;
import dev.treadle.v1.SubscribeToThreadResponse;
import dev.treadle.v1.ThreadServiceGrpc;
import dev.treadle.v1.Tripwire;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Spliterators;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * Calls agents on a Treadle server: {@link #generate}, {@link #stream}, agent CRUD and the
 * thread calls. Blocking; one client is safe to share between threads. Close it when done.
 *
 * <p>{@link #stream} returns a {@link Stream} of chunks read lazily from the gRPC stream: blocking
 * Java code consumes it with for-each or stream operations at its own pace (gRPC's flow control
 * holds the server back), and closing it (try-with-resources) cancels the call. A callback would
 * force every caller to hand results across threads.
 */
public final class AgentClient implements AutoCloseable {
  private final ManagedChannel channel;
  private final AgentServiceGrpc.AgentServiceBlockingStub agents;
  private final ThreadServiceGrpc.ThreadServiceBlockingStub threads;

  AgentClient(ManagedChannel channel) {
    this.channel = channel;
    this.agents = AgentServiceGrpc.newBlockingStub(channel);
    this.threads = ThreadServiceGrpc.newBlockingStub(channel);
  }

  /** Tokens used by a run or step. */
  public record Usage(long inputTokens, long outputTokens, long totalTokens, long reasoningTokens, long cachedInputTokens) {
    static Usage of(dev.treadle.v1.Usage u) {
      return new Usage(u.getInputTokens(), u.getOutputTokens(), u.getTotalTokens(), u.getReasoningTokens(),
          u.getCachedInputTokens());
    }
  }

  /** One tool call of a run; {@code args} as plain Java JSON values ({@link Json#fromValue}). */
  public record ToolCallInfo(String toolCallId, String toolName, Object args) {}

  /** One tool's outcome; {@code args} and {@code result} as plain Java JSON values. */
  public record ToolResultInfo(String toolCallId, String toolName, Object args, Object result, boolean isError) {}

  /**
   * A run's result in the framework's shape: {@link #text()}, {@link #finishReason()} as a string
   * ({@code "stop"}, {@code "tool-calls"}, ...), {@link #usage()}, {@link #toolCalls()}, {@link
   * #toolResults()}, {@link #tripwire()}; {@link #response()} is the generated message.
   */
  public record Result(GenerateResponse response) {
    public String text() {
      return response.getText();
    }

    public String runId() {
      return response.getRunId();
    }

    /** Why the run ended, as the framework names it: {@code "stop"}, {@code "other"}, ... */
    public String finishReason() {
      return RunChunk.finishReasonName(response.getFinishReason());
    }

    public Usage usage() {
      return Usage.of(response.getUsage());
    }

    /** Every step's tool calls, in order. */
    public List<ToolCallInfo> toolCalls() {
      List<ToolCallInfo> out = new ArrayList<>();
      for (var step : response.getStepsList()) {
        for (var c : step.getToolCallsList()) {
          out.add(new ToolCallInfo(c.getToolCallId(), c.getToolName(), c.hasArgs() ? Json.fromValue(c.getArgs()) : null));
        }
      }
      return out;
    }

    /** Every step's tool results, in order. */
    public List<ToolResultInfo> toolResults() {
      List<ToolResultInfo> out = new ArrayList<>();
      for (var step : response.getStepsList()) {
        for (var r : step.getToolResultsList()) {
          out.add(new ToolResultInfo(r.getToolCallId(), r.getToolName(), r.hasArgs() ? Json.fromValue(r.getArgs()) : null,
              r.hasResult() ? Json.fromValue(r.getResult()) : null, r.getIsError()));
        }
      }
      return out;
    }

    public List<Message> messages() {
      return response.getMessagesList();
    }

    /** The tripwire that stopped the run, if a processor aborted it. */
    public Optional<Tripwire> tripwire() {
      return response.hasTripwire() ? Optional.of(response.getTripwire()) : Optional.empty();
    }

    /** This result, or the run's tripwire as a {@link TripwireException}. */
    public Result orThrow() {
      if (response.hasTripwire()) {
        Tripwire t = response.getTripwire();
        throw new TripwireException(t.getReason(), t.getRetry(),
            t.hasMetadata() ? Json.fromValue(t.getMetadata()) : null, t.getProcessorId());
      }
      return this;
    }
  }

  /** Runs {@code agentId} on {@code prompt} to the end. */
  public Result generate(String agentId, String prompt) {
    return generate(GenerateRequest.newBuilder().setAgentId(agentId).setPrompt(prompt).build());
  }

  /** Runs {@code agentId} on {@code prompt} with call options (memory thread and resource, ...). */
  public Result generate(String agentId, String prompt, CallOptions options) {
    return generate(GenerateRequest.newBuilder().setAgentId(agentId).setPrompt(prompt).setOptions(options).build());
  }

  /** Runs an agent on a full request (messages, call options such as memory thread and resource). */
  public Result generate(GenerateRequest request) {
    return new Result(agents.generate(request));
  }

  /**
   * Streams {@code agentId}'s answer to {@code prompt}, chunk by chunk, as {@link RunChunk}s ({@code
   * c.type().equals("text-delta")}, {@code c.text()}). Close the stream to cancel.
   */
  public Stream<RunChunk> stream(String agentId, String prompt) {
    return stream(StreamRequest.newBuilder().setAgentId(agentId).setPrompt(prompt).build());
  }

  /** Streams {@code agentId}'s answer with call options (thread, resource, ...). */
  public Stream<RunChunk> stream(String agentId, String prompt, CallOptions options) {
    return stream(StreamRequest.newBuilder().setAgentId(agentId).setPrompt(prompt).setOptions(options).build());
  }

  /** Streams a full request's answer. */
  public Stream<RunChunk> stream(StreamRequest request) {
    return streamProto(request).map(RunChunk::new);
  }

  /** Streams a full request's answer as the generated {@link Chunk} messages. */
  public Stream<Chunk> streamProto(StreamRequest request) {
    Context.CancellableContext ctx = Context.current().withCancellation();
    Iterator<StreamResponse> responses;
    Context previous = ctx.attach();
    try {
      responses = agents.stream(request);
    } finally {
      ctx.detach(previous);
    }
    return flatten(responses, StreamResponse::getChunksList).onClose(() -> ctx.cancel(null));
  }

  public Agent createAgent(Agent agent) {
    return agents.createAgent(CreateAgentRequest.newBuilder().setAgent(agent).build()).getAgent();
  }

  public Agent getAgent(String id) {
    return agents.getAgent(GetAgentRequest.newBuilder().setId(id).build()).getAgent();
  }

  /** Every agent (all pages). */
  public List<Agent> listAgents() {
    return listAgents(0);
  }

  /** Every agent, fetched {@code pageSize} at a time (0: the server's page size). */
  public List<Agent> listAgents(int pageSize) {
    List<Agent> out = new ArrayList<>();
    String token = "";
    do {
      ListAgentsResponse page = agents.listAgents(ListAgentsRequest.newBuilder().setPageSize(pageSize)
          .setPageToken(token).build());
      out.addAll(page.getAgentsList());
      token = page.getNextPageToken();
    } while (!token.isEmpty());
    return out;
  }

  /** Updates the fields named in {@code paths} (all of them when none is given). */
  public Agent updateAgent(Agent agent, String... paths) {
    var request = dev.treadle.v1.UpdateAgentRequest.newBuilder().setAgent(agent);
    if (paths.length > 0) {
      request.setUpdateMask(FieldMask.newBuilder().addAllPaths(List.of(paths)));
    }
    return agents.updateAgent(request.build()).getAgent();
  }

  public void deleteAgent(String id) {
    agents.deleteAgent(DeleteAgentRequest.newBuilder().setId(id).build());
  }

  /** A user message to a thread ({@code SendMessage}): wakes the agent when the thread is idle. */
  public SendMessageResponse sendMessage(String agentId, String resourceId, String threadId, String text) {
    return sendMessage(SendMessageRequest.newBuilder().setAgentId(agentId).setResourceId(resourceId)
        .setThreadId(threadId).setMessage(SignalMessage.newBuilder().setContents(text)).build());
  }

  /**
   * A user message with attributes, sent in the map's iteration order, which is the order the
   * model sees them in: a {@link java.util.LinkedHashMap} with {@code note} then {@code n}
   * renders {@code <user note="x" n="3">}.
   */
  public SendMessageResponse sendMessage(String agentId, String resourceId, String threadId, String text,
      Map<String, ?> attributes) {
    return sendMessage(SendMessageRequest.newBuilder().setAgentId(agentId).setResourceId(resourceId)
        .setThreadId(threadId).setMessage(SignalMessage.newBuilder().setContents(text)
            .addAllOrderedAttributes(orderedAttributes(attributes))).build());
  }

  public SendMessageResponse sendMessage(SendMessageRequest request) {
    return threads.sendMessage(request);
  }

  /** A memory thread ({@code GetThread}); NOT_FOUND when there is none. */
  public dev.treadle.v1.Thread getThread(String resourceId, String threadId) {
    return threads.getThread(dev.treadle.v1.GetThreadRequest.newBuilder().setResourceId(resourceId)
        .setThreadId(threadId).build()).getThread();
  }

  /** Every stored message of a thread, oldest first (all pages of {@code ListMessages}). */
  public List<Message> listMessages(String resourceId, String threadId) {
    List<Message> out = new ArrayList<>();
    String token = "";
    do {
      var page = threads.listMessages(dev.treadle.v1.ListMessagesRequest.newBuilder().setResourceId(resourceId)
          .setThreadId(threadId).setPageToken(token).build());
      out.addAll(page.getMessagesList());
      token = page.getNextPageToken();
    } while (!token.isEmpty());
    return out;
  }

  /** Call options that keep a run's messages on a memory thread (the Mastra {@code memory} option). */
  public static CallOptions memory(String resourceId, String threadId) {
    return CallOptions.newBuilder().setMemory(dev.treadle.v1.MemoryOptions.newBuilder().setResource(resourceId)
        .setThreadId(threadId)).build();
  }

  /**
   * Attributes in the map's iteration order as the proto's {@code ordered_attributes}, for the
   * signal messages built by hand ({@code Signal}, {@code StateSignal}, {@code Notification},
   * {@code IfActive}, {@code IfIdle}). A protobuf {@code Struct} has no order.
   */
  public static List<SignalAttribute> orderedAttributes(Map<String, ?> attributes) {
    List<SignalAttribute> out = new ArrayList<>();
    attributes.forEach((name, value) ->
        out.add(SignalAttribute.newBuilder().setName(name).setValue(Json.toValue(value)).build()));
    return out;
  }

  /** The raw thread stub, for the thread calls without a method here (list, signals, abort, ...). */
  public ThreadServiceGrpc.ThreadServiceBlockingStub threads() {
    return threads;
  }

  /**
   * Subscribes to every run on a thread from now on; subscribed once this returns (send after
   * it, to see the whole reaction). Iterate the subscription for chunks; close it to stop.
   */
  public Subscription subscribeToThread(String resourceId, String threadId) {
    Context.CancellableContext ctx = Context.current().withCancellation();
    Iterator<SubscribeToThreadResponse> responses;
    Context previous = ctx.attach();
    try {
      responses = threads.subscribeToThread(SubscribeToThreadRequest.newBuilder().setResourceId(resourceId)
          .setThreadId(threadId).build());
    } finally {
      ctx.detach(previous);
    }
    Subscription s = new Subscription(responses, ctx);
    if (responses.hasNext()) {
      s.activeRunId = responses.next().getActiveRun().getRunId();
    }
    return s;
  }

  /**
   * The chunks of every run on one thread, as {@link RunChunk}s like {@code stream} gives them
   * ({@code type()}, {@code text()}, {@code finishReason()}, {@code runId()}; {@code proto()} is
   * the generated message); {@link #activeRunId()} is the running run ("" when idle).
   */
  public static final class Subscription implements Iterator<RunChunk>, AutoCloseable {
    private final Iterator<SubscribeToThreadResponse> responses;
    private final Context.CancellableContext ctx;
    private Iterator<Chunk> batch = List.<Chunk>of().iterator();
    volatile String activeRunId = "";

    Subscription(Iterator<SubscribeToThreadResponse> responses, Context.CancellableContext ctx) {
      this.responses = responses;
      this.ctx = ctx;
    }

    public String activeRunId() {
      return activeRunId;
    }

    @Override
    public boolean hasNext() {
      while (!batch.hasNext()) {
        if (ctx.isCancelled() || !responses.hasNext()) {
          return false;
        }
        SubscribeToThreadResponse r = responses.next();
        if (r.hasActiveRun()) {
          activeRunId = r.getActiveRun().getRunId();
        }
        batch = r.getChunksList().iterator();
      }
      return true;
    }

    @Override
    public RunChunk next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      return new RunChunk(batch.next());
    }

    /** Stops the subscription without aborting anything. */
    @Override
    public void close() {
      ctx.cancel(null);
    }
  }

  private static <R> Stream<Chunk> flatten(Iterator<R> responses, java.util.function.Function<R, List<Chunk>> chunks) {
    Iterator<Chunk> it = new Iterator<>() {
      private Iterator<Chunk> batch = List.<Chunk>of().iterator();

      @Override
      public boolean hasNext() {
        while (!batch.hasNext()) {
          if (!responses.hasNext()) {
            return false;
          }
          batch = chunks.apply(responses.next()).iterator();
        }
        return true;
      }

      @Override
      public Chunk next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        return batch.next();
      }
    };
    return StreamSupport.stream(Spliterators.spliteratorUnknownSize(it, 0), false);
  }

  @Override
  public void close() {
    channel.shutdownNow();
    try {
      channel.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
