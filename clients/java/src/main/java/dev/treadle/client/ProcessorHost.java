package dev.treadle.client;

import com.google.protobuf.Struct;
import dev.treadle.v1.AbortOutcome;
import dev.treadle.v1.Chunk;
import dev.treadle.v1.ChunkOutcome;
import dev.treadle.v1.ChunkSequence;
import dev.treadle.v1.DropOutcome;
import dev.treadle.v1.ErrorOutcome;
import dev.treadle.v1.Hook;
import dev.treadle.v1.HookMode;
import dev.treadle.v1.Invocation;
import dev.treadle.v1.InvocationResult;
import dev.treadle.v1.MessageListSnapshot;
import dev.treadle.v1.ProcessorDeclaration;
import dev.treadle.v1.ProcessorHandshake;
import dev.treadle.v1.ProcessorServiceAttachRequest;
import dev.treadle.v1.ProcessorServiceAttachResponse;
import dev.treadle.v1.ProcessorState;
import dev.treadle.v1.ReplaceOutcome;
import dev.treadle.v1.RetryOutcome;
import dev.treadle.v1.StreamOutcomes;
import dev.treadle.v1.TransformedPayload;
import dev.treadle.v1.UnchangedOutcome;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;

/** Everything that outlives one stream: the processors and their per-run state. */
final class ProcessorHost {
  private static final Logger LOG = Logger.getLogger("dev.treadle.client");
  static final List<Integer> PROTOCOL_VERSIONS = List.of(1, 2);

  private final Map<String, Processor> processors = new LinkedHashMap<>();
  private final Map<String, Set<Hook>> hooks = new HashMap<>();
  private final Map<String, Set<Hook>> observe = new HashMap<>();
  private final List<ProcessorDeclaration> declarations = new ArrayList<>();
  private final Settings settings;
  private final Tracing tracing;
  private final Map<String, RunState> runs = new HashMap<>();
  private long swept = System.nanoTime();
  final ExecutorService executor = Executors.newCachedThreadPool(daemon("treadle-hook"));
  final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor(daemon("treadle-deadline"));

  /** One processor's state for one run, and the stream hook's memory between invocations. */
  static final class RunState {
    Map<String, Object> state = new LinkedHashMap<>();
    long version;
    final List<Chunk> parts = new ArrayList<>();
    final java.util.ArrayDeque<Runnable> queue = new java.util.ArrayDeque<>();
    boolean draining;
    long touched = System.nanoTime();
  }

  ProcessorHost(List<? extends Processor> list, Settings settings) {
    if (list.isEmpty()) {
      throw new IllegalArgumentException("give at least one processor");
    }
    for (Processor p : list) {
      ProcessorDeclaration d = Declarations.of(p);
      if (processors.putIfAbsent(d.getId(), p) != null) {
        throw new IllegalArgumentException("processor id " + d.getId() + " is given twice");
      }
      declarations.add(d);
      Set<Hook> declared = EnumSet.noneOf(Hook.class);
      Set<Hook> observed = EnumSet.noneOf(Hook.class);
      d.getHooksList().forEach(h -> {
        declared.add(h.getHook());
        if (h.getMode() == HookMode.HOOK_MODE_OBSERVE) {
          observed.add(h.getHook());
        }
      });
      hooks.put(d.getId(), declared);
      observe.put(d.getId(), observed);
    }
    this.settings = settings;
    this.tracing = new Tracing(settings.openTelemetry());
  }

  static java.util.concurrent.ThreadFactory daemon(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }

  String label() {
    return "processor " + String.join(", ", processors.keySet());
  }

  void shutdown() {
    executor.shutdownNow();
    timers.shutdownNow();
  }

  private synchronized RunState queue(Invocation inv) {
    long now = System.nanoTime();
    long ttl = settings.stateTtl.toNanos();
    if (now - swept > ttl / 10) {
      swept = now;
      runs.values().removeIf(rs -> now - rs.touched > ttl && idle(rs));
    }
    RunState rs = runs.computeIfAbsent(inv.getRunId() + "\u0000" + inv.getProcessorId(), k -> new RunState());
    rs.touched = now;
    return rs;
  }

  private static boolean idle(RunState rs) {
    synchronized (rs) {
      return !rs.draining && rs.queue.isEmpty();
    }
  }

  private synchronized void endRun(String runId) {
    runs.keySet().removeIf(k -> k.startsWith(runId + "\u0000"));
  }

  private synchronized void forget(Invocation inv, RunState rs) {
    runs.remove(inv.getRunId() + "\u0000" + inv.getProcessorId(), rs);
  }

  Link.Session<ProcessorServiceAttachRequest, ProcessorServiceAttachResponse> session(
      Consumer<ProcessorServiceAttachRequest> send) {
    return new Session(send);
  }

  /** One stream's conversation. */
  private final class Session implements Link.Session<ProcessorServiceAttachRequest, ProcessorServiceAttachResponse> {
    private final Consumer<ProcessorServiceAttachRequest> send;
    private final Map<String, Running> running = new ConcurrentHashMap<>();
    private volatile int version = 1;

    Session(Consumer<ProcessorServiceAttachRequest> send) {
      this.send = send;
    }

    @Override
    public ProcessorServiceAttachRequest handshake() {
      return ProcessorServiceAttachRequest.newBuilder().setHandshake(ProcessorHandshake.newBuilder()
          .addAllProtocolVersions(PROTOCOL_VERSIONS).addAllProcessors(declarations)
          .setInstanceId(settings.instanceId())).build();
    }

    @Override
    public boolean onMessage(ProcessorServiceAttachResponse message) {
      switch (message.getMessageCase()) {
        case WELCOME:
          version = Math.max(1, message.getWelcome().getProtocolVersion());
          return true;
        case INVOCATION:
          start(message.getInvocation());
          break;
        case CANCEL: {
          Running r = running.get(message.getCancel().getInvocationId());
          if (r != null) {
            r.cancel();
          }
          break;
        }
        case RUN_ENDED:
          endRun(message.getRunEnded().getRunId());
          break;
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
      running.values().forEach(Running::cancel);
    }

    private void start(Invocation inv) {
      // One (run, processor) answers its invocations one at a time, in arrival order: its state
      // is a sequence. Different runs go concurrently. A run's queue is drained by one task, so
      // consecutive invocations of a stream cost no thread hand-off.
      RunState rs = queue(inv);
      Running r = new Running();
      running.put(inv.getInvocationId(), r);
      // The server stops waiting after `timeout` from sending (no clocks to agree on); `deadline`
      // is the same instant on the server's clock, used when no timeout is given.
      long millis = -1;
      if (inv.hasTimeout()) {
        millis = inv.getTimeout().getSeconds() * 1000 + inv.getTimeout().getNanos() / 1_000_000;
      } else if (inv.hasDeadline()) {
        millis = inv.getDeadline().getSeconds() * 1000 + inv.getDeadline().getNanos() / 1_000_000
            - System.currentTimeMillis();
      }
      if (millis >= 0) {
        r.timer = timers.schedule(r::cancel, millis, TimeUnit.MILLISECONDS);
      }
      Runnable work = () -> run(inv, rs, r);
      boolean drain;
      synchronized (rs) {
        rs.queue.add(work);
        drain = !rs.draining;
        rs.draining = true;
      }
      if (drain) {
        executor.execute(() -> drain(rs));
      }
    }

    private void drain(RunState rs) {
      while (true) {
        Runnable next;
        synchronized (rs) {
          next = rs.queue.poll();
          if (next == null) {
            rs.draining = false;
            return;
          }
        }
        next.run();
      }
    }

    private void run(Invocation inv, RunState rs, Running r) {
      try {
        if (!r.begin()) {
          return; // cancelled while queued
        }
        InvocationResult result;
        try {
          result = invoke(inv, rs, r);
        } catch (RuntimeException e) { // a bug here, not in the hook: still answer, never leave it hanging
          LOG.log(Level.SEVERE, "invocation " + inv.getInvocationId() + " failed", e);
          result = error(inv, message(e));
        }
        if (!r.cancelled.get() && !observe.getOrDefault(inv.getProcessorId(), Set.of()).contains(inv.getHook())) {
          send.accept(ProcessorServiceAttachRequest.newBuilder().setResult(result).build());
        }
        if (inv.getHook() == Hook.HOOK_PROCESS_OUTPUT_RESULT) {
          forget(inv, rs);
        }
      } finally {
        r.end();
        running.remove(inv.getInvocationId());
        if (r.timer != null) {
          r.timer.cancel(false);
        }
      }
    }

    private InvocationResult invoke(Invocation inv, RunState rs, Running r) {
      String pid = inv.getProcessorId();
      Processor p = processors.get(pid);
      if (p == null || !hooks.get(pid).contains(inv.getHook())) {
        return error(inv, "processor " + pid + " does not serve " + inv.getHook());
      }
      // Both sides number one sequence (starting empty at version 0): take the server's state
      // unless it is older than ours; a change made here is sent as the version held plus one.
      if (inv.hasState() && inv.getState().getVersion() >= rs.version) {
        rs.state = Json.fromStruct(inv.getState().getValue());
        rs.version = inv.getState().getVersion();
      }
      Struct before = Json.toStruct(rs.state);
      Writer writer = new Writer();
      String hookName = Hooks.name(inv.getHook());
      Map<String, Object> attributes = new LinkedHashMap<>();
      attributes.put("treadle.processor.id", pid);
      attributes.put("treadle.processor.hook", hookName);
      attributes.put("treadle.run.id", inv.getRunId());
      attributes.put("treadle.step.number", inv.getStepNumber());
      attributes.put("treadle.processor.retry_count", inv.getRetryCount());
      Span span = tracing.start(hookName + " " + pid, inv.getTraceContext(), attributes);
      InvocationResult.Builder result;
      try (Scope scope = span.makeCurrent()) {
        HookArgs call = new HookArgs(inv, rs.state, writer, r.cancelled::get, Context.current());
        result = dispatch(p, inv, call, rs, span);
      } finally {
        span.end();
      }
      result.setInvocationId(inv.getInvocationId());
      Struct after;
      try {
        after = Json.toStruct(rs.state);
      } catch (IllegalArgumentException e) {
        rs.state = Json.fromStruct(before);
        return error(inv, "state is not a JSON object: " + e.getMessage());
      }
      if (!after.equals(before)) {
        rs.version++;
        result.setState(ProcessorState.newBuilder().setValue(after).setVersion(rs.version));
      }
      result.addAllCustomChunks(writer.written());
      return result.build();
    }

    private InvocationResult.Builder dispatch(Processor p, Invocation inv, HookArgs call, RunState rs, Span span) {
      MessageList ml = null;
      try {
        switch (inv.getHook()) {
          case HOOK_PROCESS_INPUT: {
            ml = list(inv.getProcessInput().getMessageList());
            return replace(p.processInput(new ProcessInputArgs(call, inv.getProcessInput(), ml)), ml);
          }
          case HOOK_PROCESS_INPUT_STEP: {
            ml = list(inv.getProcessInputStep().getMessageList());
            return replace(p.processInputStep(new ProcessInputStepArgs(call, inv.getProcessInputStep(), ml)), ml);
          }
          case HOOK_PROCESS_LLM_REQUEST:
            return replace(p.processLLMRequest(new ProcessLLMRequestArgs(call, inv.getProcessLlmRequest())), null);
          case HOOK_PROCESS_LLM_RESPONSE:
            p.processLLMResponse(new ProcessLLMResponseArgs(call, inv.getProcessLlmResponse()));
            return replace(null, null);
          case HOOK_PROCESS_API_ERROR: {
            ml = list(inv.getProcessApiError().getMessageList());
            APIErrorDecision d = p.processAPIError(new ProcessAPIErrorArgs(call, inv.getProcessApiError(), ml));
            if (d != null && d.isRetry()) {
              RetryOutcome.Builder retry = RetryOutcome.newBuilder();
              if (ml.changed()) {
                retry.setMessages(ml.toReplacement());
              }
              return InvocationResult.newBuilder().setRetry(retry);
            }
            return replace(null, ml);
          }
          case HOOK_PROCESS_OUTPUT_STREAM:
            return stream(p, inv, call, rs, span);
          case HOOK_PROCESS_OUTPUT_STEP: {
            ml = list(inv.getProcessOutputStep().getMessageList());
            return replace(p.processOutputStep(new ProcessOutputStepArgs(call, inv.getProcessOutputStep(), ml)), ml);
          }
          case HOOK_PROCESS_TOOL_RESULT: {
            ml = list(inv.getProcessToolResult().getMessageList());
            return replace(p.processToolResult(new ProcessToolResultArgs(call, inv.getProcessToolResult(), ml)), ml);
          }
          case HOOK_PROCESS_OUTPUT_RESULT: {
            ml = list(inv.getProcessOutputResult().getMessageList());
            return replace(p.processOutputResult(new ProcessOutputResultArgs(call, inv.getProcessOutputResult(), ml)), ml);
          }
          case HOOK_ON_DELEGATION_START: {
            var d = p.onDelegationStart(new OnDelegationStartArgs(call, inv.getOnDelegationStart()));
            return d == null ? replace(null, null) : InvocationResult.newBuilder().setDelegationStart(d);
          }
          case HOOK_ON_DELEGATION_COMPLETE: {
            var d = p.onDelegationComplete(new OnDelegationCompleteArgs(call, inv.getOnDelegationComplete()));
            return d == null ? replace(null, null) : InvocationResult.newBuilder().setDelegationComplete(d);
          }
          case HOOK_TRANSFORM_TOOL_PAYLOAD: {
            Object shown = p.transformToolPayload(new TransformToolPayloadArgs(call, inv.getTransformToolPayload()));
            TransformedPayload.Builder out = TransformedPayload.newBuilder();
            if (shown != null) { // null: the hook yielded nothing, and the server shows its placeholder
              out.setPayload(Json.toValue(shown));
            }
            return InvocationResult.newBuilder().setTransformed(out);
          }
          case HOOK_RESOLVE_AGENT: {
            dev.treadle.v1.AgentOverrides o = p.resolveAgent(new ResolveAgentArgs(call, inv.getResolveAgent()));
            if (o == null) {
              return replace(null, null);
            }
            return InvocationResult.newBuilder().setAgentOverrides(o);
          }
          case HOOK_ON_VIOLATION: {
            var v = inv.getOnViolation();
            try {
              p.onViolation(new ProcessorViolation(v.getProcessorId(), v.getMessage(),
                  v.hasDetail() ? Json.fromValue(v.getDetail()) : null, v.getHook()));
            } catch (Exception e) { // documented: what onViolation throws is ignored
              LOG.log(Level.FINE, "onViolation of " + v.getProcessorId() + " threw", e);
            }
            return replace(null, null);
          }
          default:
            return error(inv, "hook " + inv.getHook() + " is not served by this SDK").toBuilder();
        }
      } catch (TripwireException e) {
        span.setAttribute("treadle.processor.outcome", "abort");
        return InvocationResult.newBuilder().setAbort(abort(e));
      } catch (Exception e) {
        Tracing.markError(span, e);
        return InvocationResult.newBuilder().setError(ErrorOutcome.newBuilder().setMessage(message(e)));
      }
    }

    private InvocationResult.Builder stream(Processor p, Invocation inv, HookArgs call, RunState rs, Span span) {
      StreamOutcomes.Builder out = StreamOutcomes.newBuilder();
      int count = 0;
      for (Chunk part : inv.getProcessOutputStream().getPartsList()) {
        count++;
        rs.parts.add(part);
        ChunkOutcome.Builder c = out.addChunksBuilder();
        List<Chunk> returned;
        try {
          returned = p.processOutputStream(new ProcessOutputStreamArgs(call, part, java.util.Collections.unmodifiableList(rs.parts)));
        } catch (TripwireException e) {
          span.setAttribute("treadle.processor.outcome", "abort");
          c.setAbort(abort(e));
          break;
        } catch (Exception e) {
          Tracing.markError(span, e);
          c.setError(ErrorOutcome.newBuilder().setMessage(message(e)));
          continue;
        }
        if (returned == null) {
          c.setDrop(DropOutcome.getDefaultInstance());
        } else if (returned.size() == 1 && (returned.get(0) == part || returned.get(0).equals(part))) {
          c.setUnchanged(UnchangedOutcome.getDefaultInstance());
        } else if (version >= 2) {
          c.setChunks(ChunkSequence.newBuilder().addAllChunks(returned));
        } else if (returned.isEmpty()) {
          c.setDrop(DropOutcome.getDefaultInstance());
        } else if (returned.size() == 1) {
          c.setReplace(returned.get(0));
        } else {
          c.setError(ErrorOutcome.newBuilder().setMessage(
              "several chunks for one need protocol version 2; the server speaks 1"));
        }
      }
      span.setAttribute("treadle.processor.chunk_count", count);
      return InvocationResult.newBuilder().setStream(out);
    }
  }

  /** One invocation at work: cancelled by the server's cancel, its deadline or the stream's end. */
  private static final class Running {
    final AtomicBoolean cancelled = new AtomicBoolean();
    private Thread thread;
    volatile ScheduledFuture<?> timer;

    /** Called on the thread that runs the hook; false when already cancelled. */
    synchronized boolean begin() {
      if (cancelled.get()) {
        return false;
      }
      thread = Thread.currentThread();
      return true;
    }

    synchronized void end() {
      thread = null;
      Thread.interrupted(); // a cancel that came late must not reach the run's next invocation
    }

    synchronized void cancel() {
      if (cancelled.compareAndSet(false, true) && thread != null) {
        thread.interrupt();
      }
    }
  }

  private static MessageList list(MessageListSnapshot snapshot) {
    return new MessageList(snapshot);
  }

  private static InvocationResult.Builder replace(ReplaceOutcome returned, MessageList ml) {
    if (returned != null) {
      ReplaceOutcome r = returned;
      if (!r.hasMessages() && ml != null && ml.changed()) {
        r = r.toBuilder().setMessages(ml.toReplacement()).build();
      }
      return InvocationResult.newBuilder().setReplace(r);
    }
    if (ml != null && ml.changed()) {
      return InvocationResult.newBuilder().setReplace(ReplaceOutcome.newBuilder().setMessages(ml.toReplacement()));
    }
    return InvocationResult.newBuilder().setUnchanged(UnchangedOutcome.getDefaultInstance());
  }

  static AbortOutcome abort(TripwireException e) {
    AbortOutcome.Builder b = AbortOutcome.newBuilder().setReason(e.reason()).setRetry(e.retry());
    if (e.metadata() != null) {
      b.setMetadata(Json.toValue(e.metadata()));
    }
    return b.build();
  }

  static String message(Throwable e) {
    String m = e.getMessage();
    return m == null || m.isEmpty() ? e.getClass().getSimpleName() : m;
  }

  private static InvocationResult error(Invocation inv, String message) {
    return InvocationResult.newBuilder().setInvocationId(inv.getInvocationId())
        .setError(ErrorOutcome.newBuilder().setMessage(message)).build();
  }
}
