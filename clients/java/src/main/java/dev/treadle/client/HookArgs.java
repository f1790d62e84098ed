package dev.treadle.client;

import com.google.protobuf.Struct;
import dev.treadle.v1.Invocation;
import io.opentelemetry.context.Context;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * What every hook's arguments carry: the run's identity, the per-run {@link #state()}, the
 * {@link #writer()} and {@link #abort(String)}.
 */
public class HookArgs {
  private final Invocation invocation;
  private final Map<String, Object> state;
  private final Writer writer;
  private final BooleanSupplier cancelled;
  private final Context tracingContext;

  HookArgs(HookArgs call) {
    this(call.invocation, call.state, call.writer, call.cancelled, call.tracingContext);
  }

  HookArgs(Invocation invocation, Map<String, Object> state, Writer writer, BooleanSupplier cancelled,
      Context tracingContext) {
    this.invocation = invocation;
    this.state = state;
    this.writer = writer;
    this.cancelled = cancelled;
    this.tracingContext = tracingContext;
  }

  /** Stops the run with a tripwire: always throws {@link TripwireException}. */
  public TripwireException abort(String reason) {
    throw new TripwireException(reason);
  }

  /** Stops the run with a tripwire, or asks for the step to be redone ({@code Options.retry()}). */
  public TripwireException abort(String reason, TripwireException.Options options) {
    throw new TripwireException(reason, options.isRetry(), options.getMetadata(), "");
  }

  /**
   * The processor's state for this run: shared by all its hooks and steps, never by two runs.
   * Values must be JSON-compatible; numbers read back as {@code Double}. Changes are sent to the
   * server in the hook's answer.
   */
  public Map<String, Object> state() {
    return state;
  }

  /** Emits custom {@code data-*} chunks. */
  public Writer writer() {
    return writer;
  }

  /** True once the server stopped waiting (cancel, deadline, stream gone): stop working. */
  public boolean isCancelled() {
    return cancelled.getAsBoolean();
  }

  /** The OpenTelemetry context of this invocation's span (already current on the hook's thread). */
  public Context tracingContext() {
    return tracingContext;
  }

  public String processorId() {
    return invocation.getProcessorId();
  }

  public String runId() {
    return invocation.getRunId();
  }

  public String agentId() {
    return invocation.getAgentId();
  }

  public String threadId() {
    return invocation.getThreadId();
  }

  public String resourceId() {
    return invocation.getResourceId();
  }

  public int stepNumber() {
    return invocation.getStepNumber();
  }

  /** How many times this step has been retried after a {@code retry} abort. */
  public int retryCount() {
    return invocation.getRetryCount();
  }

  public int processorIndex() {
    return invocation.getProcessorIndex();
  }

  /** The call's request context. */
  public Struct requestContext() {
    return invocation.getRequestContext();
  }

  /** The raw invocation, for fields this class has no accessor for. */
  public Invocation invocation() {
    return invocation;
  }
}
