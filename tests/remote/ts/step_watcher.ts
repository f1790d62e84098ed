// A TypeScript processor that reports the messages each `processInputStep` sees: a signal
// delivered into a running run shows up there, at the run's next step.
//
//     tsx tests/remote/ts/step_watcher.ts TARGET
//
// Serves processor `step-watcher`. Prints `ready` after the welcome, then one line per step:
// `step {"stepNumber": N, "messages": [{"role", "type", "attributes", "text"}, ...]}`. Exits when stdin closes.
import { attach, type ProcessInputStepArgs, type Processor } from "@treadle/client/processors";

class StepWatcher implements Processor {
  id = "step-watcher";

  processInputStep({ stepNumber, messages }: ProcessInputStepArgs) {
    const seen = messages.map((m) => ({
      role: m.role, type: m.type, // a signal: role "signal", its tag as the type, its attributes in the metadata
      attributes: (m.content.metadata as { signal?: { attributes?: unknown } } | undefined)?.signal?.attributes,
      text: m.content.parts.map((p) => (p.type === "text" ? p.text : "")).join(""),
    }));
    console.log(`step ${JSON.stringify({ stepNumber, messages: seen })}`);
    return messages;
  }
}

const handle = attach({ target: process.argv[2]!, processors: [new StepWatcher()] });
await handle.ready();
console.log("ready");
process.stdin.on("end", () => void handle.close().then(() => process.exit(0))).resume();
