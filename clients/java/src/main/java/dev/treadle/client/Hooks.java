package dev.treadle.client;

import dev.treadle.v1.Hook;
import java.util.ArrayList;
import java.util.List;

/** The hook methods of {@link Processor}, in the Mastra framework's order, and which ones a class overrides. */
final class Hooks {
  private Hooks() {}

  record Spec(Hook hook, String method, Class<?> argsType) {}

  static final List<Spec> ALL = List.of(
      new Spec(Hook.HOOK_PROCESS_INPUT, "processInput", ProcessInputArgs.class),
      new Spec(Hook.HOOK_PROCESS_INPUT_STEP, "processInputStep", ProcessInputStepArgs.class),
      new Spec(Hook.HOOK_PROCESS_LLM_REQUEST, "processLLMRequest", ProcessLLMRequestArgs.class),
      new Spec(Hook.HOOK_PROCESS_LLM_RESPONSE, "processLLMResponse", ProcessLLMResponseArgs.class),
      new Spec(Hook.HOOK_PROCESS_API_ERROR, "processAPIError", ProcessAPIErrorArgs.class),
      new Spec(Hook.HOOK_PROCESS_OUTPUT_STREAM, "processOutputStream", ProcessOutputStreamArgs.class),
      new Spec(Hook.HOOK_PROCESS_OUTPUT_STEP, "processOutputStep", ProcessOutputStepArgs.class),
      new Spec(Hook.HOOK_PROCESS_TOOL_RESULT, "processToolResult", ProcessToolResultArgs.class),
      new Spec(Hook.HOOK_PROCESS_OUTPUT_RESULT, "processOutputResult", ProcessOutputResultArgs.class),
      new Spec(Hook.HOOK_ON_DELEGATION_START, "onDelegationStart", OnDelegationStartArgs.class),
      new Spec(Hook.HOOK_ON_DELEGATION_COMPLETE, "onDelegationComplete", OnDelegationCompleteArgs.class),
      new Spec(Hook.HOOK_TRANSFORM_TOOL_PAYLOAD, "transformToolPayload", TransformToolPayloadArgs.class),
      new Spec(Hook.HOOK_RESOLVE_AGENT, "resolveAgent", ResolveAgentArgs.class),
      new Spec(Hook.HOOK_ON_VIOLATION, "onViolation", ProcessorViolation.class));

  /** The hooks {@code processor}'s class overrides. */
  static List<Hook> implemented(Processor processor) {
    List<Hook> out = new ArrayList<>();
    for (Spec spec : ALL) {
      try {
        if (processor.getClass().getMethod(spec.method(), spec.argsType()).getDeclaringClass() != Processor.class) {
          out.add(spec.hook());
        }
      } catch (NoSuchMethodException e) {
        throw new AssertionError(e);
      }
    }
    return out;
  }

  /** The Mastra name of a hook ({@code processOutputStream}). */
  static String name(Hook hook) {
    for (Spec spec : ALL) {
      if (spec.hook() == hook) {
        return spec.method();
      }
    }
    return hook.name();
  }
}
