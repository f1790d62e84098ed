// The TypeScript SDK over mutual TLS with bearer tokens: a processor, a tool and the agent client
// against a server that requires both; prints one JSON report for the test to check.
//
//     TREADLE_TOKEN=... tsx tests/remote/ts/tls_client.ts TARGET CA CERT KEY GUARD_TOKEN
//
// The agent client takes its token from TREADLE_TOKEN; the processor and the tool get the guard
// team's token as an option. Files are PEM paths.
import { AgentClient, Code, ConnectError } from "@treadle/client";
import { attach, AttachError } from "@treadle/client/processors";
import { createTool, serveTools } from "@treadle/client/tools";

const [target, ca, cert, key, guardToken] = process.argv.slice(2) as [string, string, string, string, string];
const tls = { ca, cert, key };
const code = (e: unknown) => (e instanceof AttachError ? Code[e.code] : Code[ConnectError.from(e).code]);

const guard = attach({ target, tls, token: guardToken, processors: [{ id: "pii-guard", processInput: ({ messages }: { messages: unknown[] }) => messages }] });
const weather = createTool({
  name: "get_weather", description: "The weather in a city",
  inputSchema: { type: "object", properties: { city: { type: "string" } } },
  execute: async ({ city }: { city: string }) => ({ city, sky: "clear" }),
});
const tools = serveTools({ target, tls, token: guardToken, tools: [weather] });
await Promise.all([guard.ready(10_000), tools.ready(10_000)]);

const client = new AgentClient(target, { tls }); // the token: TREADLE_TOKEN
const guarded = (await client.generate("guarded", "hi")).text;
const withTool = (await client.generate("weather", "weather in Oslo?")).text;
const plaintext = await new AgentClient(target).generate("echo", "hi", { timeoutMs: 5000 }).then(() => "answered", code);
const noCertificate = await new AgentClient(target, { tls: { ca } }).generate("echo", "hi", { timeoutMs: 5000 }).then(() => "answered", code);
const noToken = await new AgentClient(target, { tls, token: "" }).generate("echo", "hi").then(() => "answered", code);
const wrongTeam = attach({ target, tls, processors: [{ id: "pii-guard", processInput() {} }] }); // TREADLE_TOKEN: web-app's
const refused = await wrongTeam.ready(10_000).then(() => "attached", code);
await Promise.all([guard.close(), tools.close(), wrongTeam.close()]);
console.log(JSON.stringify({ guarded, withTool, plaintext, noCertificate, noToken, refused }));
