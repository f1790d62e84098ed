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

  /** A run's result: text, finish reason, usage, steps, messages, and its tripwire if one tripped. */
  public record Result(GenerateResponse response) {
    public String text() {
      return response.getText();
    }

    public String runId() {
      return response.getRunId();
    }

    public dev.treadle.v1.FinishReason finishReason() {
      return response.getFinishReason();
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

  /** Runs an agent on a full request (messages, call options such as memory thread and resource). */
  public Result generate(GenerateRequest request) {
    return new Result(agents.generate(request));
  }

  /** Streams {@code agentId}'s answer to {@code prompt}, chunk by chunk. Close the stream to cancel. */
  public Stream<Chunk> stream(String agentId, String prompt) {
    return stream(StreamRequest.newBuilder().setAgentId(agentId).setPrompt(prompt).build());
  }

  /** Streams a full request's answer. */
  public Stream<Chunk> stream(StreamRequest request) {
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

  /** Streams {@code agentId}'s answer with call options (thread, resource, ...). */
  public Stream<Chunk> stream(String agentId, String prompt, CallOptions options) {
    return stream(StreamRequest.newBuilder().setAgentId(agentId).setPrompt(prompt).setOptions(options).build());
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

  /** The chunks of every run on one thread; {@link #activeRunId()} is the running run ("" when idle). */
  public static final class Subscription implements Iterator<Chunk>, AutoCloseable {
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
    public Chunk next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      return batch.next();
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
