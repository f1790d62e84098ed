package dev.treadle.client;

import com.google.protobuf.Duration;
import dev.treadle.v1.Hook;
import dev.treadle.v1.HookDeclaration;
import dev.treadle.v1.HookMode;
import dev.treadle.v1.ProcessorDeclaration;
import java.util.List;

/** The handshake's declaration of a processor. */
final class Declarations {
  private Declarations() {}

  /** {@code processor}'s declaration; {@link IllegalArgumentException} says what is wrong. */
  static ProcessorDeclaration of(Processor processor) {
    String id = processor.id();
    if (id == null || id.isEmpty()) {
      throw new IllegalArgumentException(processor.getClass().getName() + " needs a non-empty id()");
    }
    List<Hook> hooks = Hooks.implemented(processor);
    if (hooks.isEmpty()) {
      throw new IllegalArgumentException("processor " + id + " overrides no hook (e.g. processInput)");
    }
    ProcessorOptions o = processor.options();
    for (Hook h : o.observe) {
      if (!hooks.contains(h)) {
        throw new IllegalArgumentException("processor " + id + ": observe names " + h + ", which it does not implement");
      }
    }
    for (Hook h : o.timeouts.keySet()) {
      if (!hooks.contains(h)) {
        throw new IllegalArgumentException("processor " + id + ": timeout names " + h + ", which it does not implement");
      }
    }
    ProcessorDeclaration.Builder d = ProcessorDeclaration.newBuilder().setId(id).setName(o.name)
        .setDescription(o.description);
    for (Hook h : hooks) {
      HookDeclaration.Builder hd = d.addHooksBuilder().setHook(h)
          .setMode(o.observe.contains(h) || h == Hook.HOOK_ON_VIOLATION // onViolation: always fire and forget
              ? HookMode.HOOK_MODE_OBSERVE : HookMode.HOOK_MODE_MUTATE);
      java.time.Duration t = o.timeouts.get(h);
      if (t != null) {
        hd.setTimeout(Duration.newBuilder().setSeconds(t.getSeconds()).setNanos(t.getNano()));
      }
      if (h == Hook.HOOK_PROCESS_TOOL_RESULT || h == Hook.HOOK_TRANSFORM_TOOL_PAYLOAD) {
        hd.addAllToolNames(o.toolNames);
      }
      if (h == Hook.HOOK_PROCESS_OUTPUT_STREAM) {
        hd.setProcessDataParts(o.processDataParts).setDelivery(o.delivery).setMaxWindow(o.maxWindow)
            .setMaxInFlight(o.maxInFlight);
      }
    }
    return d.build();
  }
}
