// The PII guard (clients/python/examples/pii_guard.py) as a TypeScript processor process, on the
// SDK's TextGate (protocol version 2: a delta may be held, and released later as other deltas).
//
//     tsx tests/remote/ts/pii_guard.ts TARGET [windowed]     # TARGET: host:port of the server
//
// Serves processor `pii-guard` (processOutputStream, MUTATE). The gate holds text only from where
// an address could be starting, redacts complete spans and releases them at once; what is held
// is released (redacted) before the part's text-end. Prints `ready` after the welcome; exits
// when stdin closes.
import { attach, type ProcessOutputStreamArgs, type Processor, TextGate } from "@treadle/client/processors";

const [target, delivery] = process.argv.slice(2);
if (!target) {
  console.error("usage: pii_guard.ts TARGET [windowed]");
  process.exit(2);
}

const EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;

class PiiGuard implements Processor {
  id = "pii-guard";
  description = "Redacts e-mail addresses from the streamed answer.";
  streamDelivery = delivery === "windowed" ? "windowed" : "per-chunk";
  // The guard gets the run's context too: it counts the run's addresses in its state and
  // reports each redaction with a custom chunk.
  gate = new TextGate(async (text, { state, writer }) => {
    const count = text.match(EMAIL)?.length ?? 0;
    if (count && state && writer) {
      state.redacted = (state.redacted ?? 0) + count;
      await writer.custom({ type: "data-redacted", data: { count, total: state.redacted } });
    }
    return text.replace(EMAIL, "[email]");
  }, { boundary: EMAIL });

  processOutputStream(args: ProcessOutputStreamArgs) {
    return this.gate.process(args);
  }
}

const handle = attach({ target, processors: [new PiiGuard()] });
await handle.ready();
console.log("ready");
// The test closes stdin to stop the process.
process.stdin.on("end", () => void handle.close().then(() => process.exit(0))).resume();
