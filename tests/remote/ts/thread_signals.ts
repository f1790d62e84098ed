// The TypeScript agent client's thread and signal calls against a server whose agent `echo`
// answers from the test's model script; prints one JSON report for the test to check.
//
//     tsx tests/remote/ts/thread_signals.ts TARGET
//
// The signals part is the Agent page's example, as written there (`agent.subscribeToThread`,
// `agent.sendMessage(message, { resourceId, threadId, ifIdle })`), on an idle thread: the
// subscriber sees the woken run's text.
import { AgentClient, Code, ConnectError, MessageRole } from "@treadle/client";

const client = new AgentClient(process.argv[2]);
const agent = client.agent("echo");
const where = { resourceId: "user-123", threadId: "thread-abc" };

const subscription = await agent.subscribeToThread(where);
const idleBefore = subscription.activeRunId();
const sent = agent.sendMessage(
  { contents: "hello", attributes: { from: "slack", name: "Devin" } }, // the model sees this order
  { ...where, ifIdle: { streamOptions: { maxSteps: 3 } } },
);
const accepted = await sent.accepted;
const { signal } = await sent;
let text = "";
let activeDuringRun: string | null = null;
const kinds: string[] = [];
let finishReason = "";
for await (const chunk of subscription) {
  kinds.push(chunk.type);
  if (chunk.type === "text-delta" && chunk.runId === accepted.runId) text += chunk.payload.text;
  activeDuringRun ??= subscription.activeRunId();
  if (chunk.type === "finish" && chunk.runId === accepted.runId) {
    finishReason = chunk.payload.reason;
    break;
  }
}
subscription.unsubscribe();

const code = (e: unknown) => Code[ConnectError.from(e).code];
const stored = await client.listMessages(where);
const persisted = await agent.sendStateSignal(
  { id: "browser", cacheKey: "k1", mode: "snapshot", value: { url: "a" }, contents: "on a" },
  { ...where, ifIdle: { behavior: "persist" } },
);
const again = await agent.sendStateSignal({ id: "browser", cacheKey: "k1", mode: "snapshot", value: { url: "a" } }, where);
const bogus = await agent.sendSignal({ type: "bogus" as never, contents: "x" }, where).then(() => "sent", code);
const note = await agent.sendNotificationSignal(
  { source: "github", kind: "star", priority: "low", summary: "New star", dedupeKey: "star:1" },
  where,
);
const inbox = await client.listNotifications({ ...where, statuses: ["pending"] });

await client.createThread({ resourceId: "user-123", threadId: "notes", title: "Notes", metadata: { pinned: true } });
const renamed = await client.updateThread({ resourceId: "user-123", threadId: "notes", title: "Renamed" });
const listed = (await client.listThreads({ resourceId: "user-123" })).map((t) => t.id).sort();
await client.deleteThread({ resourceId: "user-123", threadId: "notes" });
const gone = await client.getThread({ resourceId: "user-123", threadId: "notes" }).then(() => "found", code);

console.log(JSON.stringify({
  idleBefore,
  accepted: { action: accepted.action, hasRunId: Boolean(accepted.runId) },
  activeDuringRun: activeDuringRun === accepted.runId,
  signalId: signal.id, signalType: signal.type, attributeOrder: Object.keys(signal.attributes),
  text, finishReason, kinds: [...new Set(kinds)].filter((k) => k.startsWith("data-")),
  stored: stored.map((m) => MessageRole[m.role]),
  persisted: { skipped: persisted.skipped, action: persisted.skipped ? "" : (await persisted.accepted).action },
  again,
  bogus,
  note: {
    action: note.decision.action, priority: note.record.priority, status: note.record.status,
    coalescedCount: note.record.coalescedCount, deliveryAttempts: note.record.deliveryAttempts,
  },
  inbox: inbox.map((n) => n.summary),
  activeAfter: await client.getActiveRun(where),
  abortedIdle: await client.abortRun(where),
  renamed: [renamed.title, renamed.metadata], listed, gone,
}));
