import { AgentClient } from "@treadle/client";

const agent = new AgentClient(process.env.TREADLE_TARGET ?? "127.0.0.1:50051").agent("support");
const thread = { resourceId: "user-123", threadId: "thread-abc" };
const subscription = await agent.subscribeToThread(thread); // every run's chunks, from now on
const { runId } = await agent.sendMessage({ contents: "hello", attributes: { name: "Devin", from: "slack" } }, thread).accepted;
for await (const chunk of subscription) { // the shapes stream() gives
  if (chunk.type === "text-delta") process.stdout.write(chunk.payload.text);
  if (chunk.type === "finish" && chunk.runId === runId) break;
}
subscription.unsubscribe();
