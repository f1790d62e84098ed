// A remote `resolveAgent` on the TypeScript SDK, the twin of the Go SDK's tierresolver: for a
// request context with `tenant: acme` it answers the model `openai/gpt-4.1` and Acme's
// instructions; with `slow: true` it answers after 5 s; otherwise it changes nothing.
//
//     tsx tests/remote/ts/tenant_router.ts TARGET     # TARGET: host:port of the server
//
// Prints `ready` after the welcome; runs until killed.
import { attach, type Processor, type ResolveAgentArgs } from "@treadle/client/processors";

const [target] = process.argv.slice(2);
if (!target) {
  console.error("usage: tenant_router.ts TARGET");
  process.exit(2);
}

class TenantRouter implements Processor {
  readonly id = "tenant-router";

  async resolveAgent({ agent, requestContext }: ResolveAgentArgs) {
    if (requestContext.get("slow") === true) await new Promise((resolve) => setTimeout(resolve, 5000));
    if (requestContext.get("tenant") !== "acme") return undefined;
    return { model: "openai/gpt-4.1", instructions: `You answer for Acme. The agent was ${agent.model}.` };
  }
}

const handle = attach({ target, processors: [new TenantRouter()] });
await handle.ready();
console.log("ready");
