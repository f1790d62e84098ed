// A remote tool payload transform in TypeScript, on the SDK: what `lookup_customer`'s payloads
// look to clients (the framework's `hooks.transform`, served as `transformToolPayload`).
//
//     tsx tests/remote/ts/ssn_transform.ts TARGET     # TARGET: host:port of the server
//
// Serves processor `ssn-transform` for the tool `lookup_customer` only: in the display, an SSN
// keeps its last four digits (`***-**-1120`); in the transcript the `ssn` field is gone; a
// payload that is not an object yields nothing (the server then shows its placeholder). Prints
// `ready` after the welcome, and `transform TARGET PHASE` for each invocation; exits when stdin
// closes.
import { attach, type Processor, type TransformToolPayloadArgs } from "@treadle/client/processors";

const [target] = process.argv.slice(2);
if (!target) {
  console.error("usage: ssn_transform.ts TARGET");
  process.exit(2);
}

class SsnTransform implements Processor {
  id = "ssn-transform";
  toolNames = ["lookup_customer"];

  transformToolPayload({ target, phase, payload }: TransformToolPayloadArgs) {
    console.log(`transform ${target} ${phase}`);
    if (payload === null || typeof payload !== "object" || Array.isArray(payload)) return undefined;
    const record = { ...(payload as Record<string, unknown>) };
    if (typeof record.ssn !== "string") return record;
    if (target === "transcript") {
      delete record.ssn;
    } else {
      record.ssn = `***-**-${record.ssn.slice(-4)}`;
    }
    return record;
  }
}

const handle = attach({ target, processors: [new SsnTransform()] });
await handle.ready();
console.log("ready");
process.stdin.on("end", () => void handle.close().then(() => process.exit(0))).resume();
