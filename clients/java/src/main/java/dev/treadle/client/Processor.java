package dev.treadle.client;

import dev.treadle.v1.Chunk;
import dev.treadle.v1.ReplaceOutcome;
import java.util.List;

/**
 * A remote processor: an {@link #id()} and the hooks of the Mastra Processor API it overrides.
 * The SDK declares exactly the hook methods a class overrides (found by reflection) and does the
 * protocol's work: handshake, answer order, state versions, deadlines, cancel, drain, run end,
 * reconnect. A hook that returns {@code null} changes nothing (edits to {@code messageList()}
 * still travel); {@code args.abort(...)} throws a {@link TripwireException}; any other exception
 * is reported as the hook's error.
 *
 * <p>The default methods are never called: they only stand for "not implemented".
 */
public interface Processor {
  /** The id agents name this processor by (1-128 letters, digits, {@code _ . : -}). */
  String id();

  /** How the hooks are declared (observe mode, timeouts, stream delivery, ...). */
  default ProcessorOptions options() {
    return ProcessorOptions.defaults();
  }

  /** Runs once per call, before the loop. */
  default ReplaceOutcome processInput(ProcessInputArgs args) throws Exception {
    throw new UnsupportedOperationException("processInput");
  }

  /** Runs at every step, before the provider call. */
  default ReplaceOutcome processInputStep(ProcessInputStepArgs args) throws Exception {
    throw new UnsupportedOperationException("processInputStep");
  }

  /** Runs on the provider prompt, before the call. */
  default ReplaceOutcome processLLMRequest(ProcessLLMRequestArgs args) throws Exception {
    throw new UnsupportedOperationException("processLLMRequest");
  }

  /** Runs after a step's provider response; it may only abort or fail. */
  default void processLLMResponse(ProcessLLMResponseArgs args) throws Exception {
    throw new UnsupportedOperationException("processLLMResponse");
  }

  /** Runs when the provider call failed; {@code null} means do not retry. */
  default APIErrorDecision processAPIError(ProcessAPIErrorArgs args) throws Exception {
    throw new UnsupportedOperationException("processAPIError");
  }

  /**
   * Runs on every stream chunk and returns the chunks that take its place: {@code
   * List.of(args.part())} passes it, an empty list or {@code null} drops it, another chunk
   * replaces it; several chunks (protocol version 2) hold back and release text, see {@link
   * TextGate}.
   */
  default List<Chunk> processOutputStream(ProcessOutputStreamArgs args) throws Exception {
    throw new UnsupportedOperationException("processOutputStream");
  }

  /** Runs after each step, before tools run. */
  default ReplaceOutcome processOutputStep(ProcessOutputStepArgs args) throws Exception {
    throw new UnsupportedOperationException("processOutputStep");
  }

  /** Runs on each tool result. */
  default ReplaceOutcome processToolResult(ProcessToolResultArgs args) throws Exception {
    throw new UnsupportedOperationException("processToolResult");
  }

  /** Runs once at the end of the call. */
  default ReplaceOutcome processOutputResult(ProcessOutputResultArgs args) throws Exception {
    throw new UnsupportedOperationException("processOutputResult");
  }

  /**
   * Runs before a sub-agent tool ({@code agent-<key>}) of the agents that list the processor;
   * {@code null} lets it run as asked (see {@link Delegations}).
   */
  default dev.treadle.v1.DelegationStartOutcome onDelegationStart(OnDelegationStartArgs args) throws Exception {
    throw new UnsupportedOperationException("onDelegationStart");
  }

  /** Runs after a sub-agent tool ran; {@code null} changes nothing (see {@link Delegations}). */
  default dev.treadle.v1.DelegationCompleteOutcome onDelegationComplete(OnDelegationCompleteArgs args) throws Exception {
    throw new UnsupportedOperationException("onDelegationComplete");
  }

  /**
   * Runs once per call, before memory loads, for the processor an agent names as its resolver
   * (the framework's function-valued model, instructions, tools, ...): returns overrides
   * ({@code AgentOverrides.newBuilder().setModel("openai/gpt-4o")}), or null to change nothing.
   */
  default dev.treadle.v1.AgentOverrides resolveAgent(ResolveAgentArgs args) throws Exception {
    throw new UnsupportedOperationException("resolveAgent");
  }

  /**
   * Called after this processor aborted a run, from any of its hooks, for side effects (an alert,
   * a log line): declared with the other hooks, always fire and forget; what it throws is ignored.
   */
  /**
   * How one tool payload looks to clients ({@code display}) or in the history they read
   * ({@code transcript}); runs for agents that list the processor in {@code toolPayloadProcessors},
   * for the tools {@link ProcessorOptions#toolNames} names (every tool when none). Return the
   * projected payload (plain Java); {@code null} shows the server's placeholder.
   */
  default Object transformToolPayload(TransformToolPayloadArgs args) throws Exception {
    throw new UnsupportedOperationException("transformToolPayload");
  }

  default void onViolation(ProcessorViolation violation) throws Exception {
    throw new UnsupportedOperationException("onViolation");
  }
}
