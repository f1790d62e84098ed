// A TypeScript processor that polices sub-agent delegations: it rejects prompts that ask for a
// password, narrows every other one, and leaves feedback when a delegation ends.
//
//     tsx tests/remote/ts/delegation_supervisor.ts TARGET
//
// Serves processor `supervisor`. Prints `ready` after the welcome, then one line per finished
// delegation: `complete {"key", "success", "text", "prompt"}`. Exits when stdin closes.
import {
  attach,
  type OnDelegationCompleteArgs,
  type OnDelegationStartArgs,
  type Processor,
} from "@treadle/client/processors";

class Supervisor implements Processor {
  id = "supervisor";

  onDelegationStart({ prompt }: OnDelegationStartArgs) {
    if (prompt.includes("password")) return { proceed: false, rejectionReason: "credentials stay with the lead" };
    return { modifiedPrompt: `${prompt} Cite sources.`, modifiedInstructions: "Answer in one sentence." };
  }

  onDelegationComplete({ key, success, result, prompt }: OnDelegationCompleteArgs) {
    const text = (result as { text?: string } | undefined)?.text ?? "";
    console.log(`complete ${JSON.stringify({ key, success, text, prompt })}`);
    return { feedback: `Checked ${key}.` };
  }
}

const handle = attach({ target: process.argv[2]!, processors: [new Supervisor()] });
await handle.ready();
console.log("ready");
process.stdin.on("end", () => void handle.close().then(() => process.exit(0))).resume();
