import { AgentClient } from "@treadle/client";

const agent = new AgentClient(process.env.TREADLE_TARGET ?? "127.0.0.1:50051").agent("support");
const thread = { resourceId: "user-123", threadId: "thread-abc" };
const subscription = await agent.subscribeToThread(thread); // every run's chunks, from now on
const { runId } = await agent.sendMessage({ contents: "hello", attributes: { name: "Devin", from: "slack" } }, thread).accepted;
for await (const chunk of subscription) {
  if (chunk.chunk.case === "textDelta") process.stdout.write(chunk.chunk.value.text);
  if (chunk.chunk.case === "finish" && chunk.runId === runId) break;
}
subscription.unsubscribe();
