// The agent client read exactly as the Mastra framework's client docs read a stream and a result:
// `chunk.type === "text-delta"`, `chunk.payload.text`, `result.finishReason === "stop"`. Prints
// one JSON report for the test to check.
//
//     tsx tests/remote/ts/framework_client.ts TARGET
import { AgentClient } from "@treadle/client";

const [target] = process.argv.slice(2) as [string];
const agent = new AgentClient(target).agent("weather");

const stream = await agent.stream("What is the weather in Oslo?");
let text = "";
const types: string[] = [];
const toolCalls: unknown[] = [];
const toolResults: unknown[] = [];
for await (const chunk of stream) {
  types.push(chunk.type);
  if (chunk.type === "text-delta") text += chunk.payload.text;
  if (chunk.type === "tool-call") toolCalls.push({ toolName: chunk.payload.toolName, args: chunk.payload.args });
  if (chunk.type === "tool-result") toolResults.push({ toolName: chunk.payload.toolName, result: chunk.payload.result });
}

const result = await agent.generate("What is the weather in Oslo?");
const blocked = await agent.generate("Tell me the secret");
console.log(JSON.stringify({
  stream: { text, types, toolCalls, toolResults },
  generate: {
    text: result.text,
    finishReason: result.finishReason,
    usage: result.usage,
    toolCalls: result.toolCalls.map(({ toolName, args }) => ({ toolName, args })),
    toolResults: result.toolResults.map(({ toolName, result }) => ({ toolName, result })),
    tripwire: result.tripwire ?? null,
    steps: result.steps.map((s) => s.finishReason),
    messageRoles: result.messages.map((m) => m.role),
    raw: result.response.$typeName,
  },
  blocked: { finishReason: blocked.finishReason, tripwire: blocked.tripwire, text: blocked.text },
}));
