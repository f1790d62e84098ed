// A remote processor for the benchmark, on the TypeScript SDK: passes every chunk through.
//
//     tsx bench/echo_processor.mts MODE TARGET      # run from clients/typescript
//
// MODE as in echo_processor.py: lockstep, pipelined or windowed. Prints `ready` once attached.
import { attach, type ProcessOutputStreamArgs } from "@treadle/client/processors";

const MODES: Record<string, object> = {
  lockstep: { streamDelivery: "per-chunk", maxInFlight: 1 },
  pipelined: { streamDelivery: "per-chunk", maxInFlight: 64 },
  windowed: { streamDelivery: "windowed", maxWindow: 64, maxInFlight: 4 },
};

const [mode, target] = process.argv.slice(2);
if (!mode || !target || !(mode in MODES)) {
  console.error("usage: echo_processor.mts lockstep|pipelined|windowed TARGET");
  process.exit(2);
}
const echo = { id: "bench-echo", ...MODES[mode], processOutputStream: async ({ part }: ProcessOutputStreamArgs) => part };
const handle = attach({ target, processors: [echo] });
await handle.ready(30_000);
console.log("ready");
process.once("SIGTERM", () => handle.close());
