// The agent client's signal calls and connection options against an in-process fake
// ThreadService: what goes over the wire, and what the caller gets back.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { create, toJson } from "@bufbuild/protobuf";
import { type Value, ValueSchema } from "@bufbuild/protobuf/wkt";
import { AgentClient } from "../src/agents.js";
import { transportFor } from "../src/internal/connect.js";
import {
  ActiveBehavior,
  IdleBehavior,
  type SendMessageRequest,
  SendMessageResponseSchema,
  SignalAction,
  SubscribeToThreadResponseSchema,
} from "../src/gen/treadle/v1/signal_pb.js";
import { FakeServer, Queue } from "./fake_server.js";

let server: FakeServer;
before(async () => {
  server = await new FakeServer().start();
});
after(() => server.stop());

const answer = (action: SignalAction, runId = "") =>
  create(SendMessageResponseSchema, { accepted: { action, runId }, signal: { id: "sig_1", type: "user", tagName: "user" } });

describe("signals", () => {
  test("sendMessage sends the message, the target and both behaviours; accepted is on the call and on its result", async () => {
    const seen: SendMessageRequest[] = [];
    server.threads = { sendMessage: (req) => (seen.push(req), answer(SignalAction.WAKE, "run-1")) };
    const agent = new AgentClient(server.target).agent("support");
    const sent = agent.sendMessage({ contents: "hello", attributes: { from: "slack", name: "Devin" } }, {
      resourceId: "user-123", threadId: "thread-abc",
      ifActive: { behavior: "persist", attributes: { delivery: "while-active" } },
      ifIdle: { behavior: "wake", attributes: { delivery: "new-message" }, streamOptions: { maxSteps: 3 } },
    });
    assert.deepEqual(await sent.accepted, { action: "wake", runId: "run-1" });
    const result = await sent;
    assert.deepEqual(await result.accepted, { action: "wake", runId: "run-1" });
    assert.equal(result.signal.id, "sig_1");
    assert.equal(result.persisted, undefined);
    const [req] = seen;
    assert.equal(req!.agentId, "support");
    assert.deepEqual([req!.resourceId, req!.threadId, req!.runId], ["user-123", "thread-abc", ""]);
    assert.equal(req!.message!.contents, "hello");
    // In the object's key order (a Struct has none): the order the model sees them in.
    const named = (list: { name: string; value?: Value }[]) => list.map((a) => [a.name, a.value && toJson(ValueSchema, a.value)]);
    assert.equal(req!.message!.attributes, undefined);
    assert.deepEqual(named(req!.message!.orderedAttributes), [["from", "slack"], ["name", "Devin"]]);
    assert.equal(req!.ifActive!.behavior, ActiveBehavior.PERSIST);
    assert.deepEqual(named(req!.ifActive!.orderedAttributes), [["delivery", "while-active"]]);
    assert.deepEqual(named(req!.ifIdle!.orderedAttributes), [["delivery", "new-message"]]);
    assert.equal(req!.ifIdle!.behavior, IdleBehavior.WAKE);
    assert.equal(req!.ifIdle!.streamOptions!.maxSteps, 3);
  });

  test("a string or parts are the message's contents; persist comes with `persisted`", async () => {
    const seen: SendMessageRequest[] = [];
    server.threads = { sendMessage: (req) => (seen.push(req), answer(SignalAction.PERSIST)) };
    const client = new AgentClient(server.target);
    const persisted = await client.sendMessage("support", "plain", { runId: "run-9" });
    assert.deepEqual(await persisted.accepted, { action: "persist" });
    await persisted.persisted;
    await client.sendMessage("support", [{ type: "text", text: "a part" }], { resourceId: "u", threadId: "t" });
    assert.equal(seen[0]!.message!.contents, "plain");
    assert.equal(seen[0]!.runId, "run-9");
    assert.deepEqual(seen[1]!.message!.parts.map((p) => p.part.case === "text" && p.part.value.text), ["a part"]);
  });

  test("a subscription follows the active run, yields single chunks and ends quietly on unsubscribe", async () => {
    const responses = new Queue<ReturnType<typeof create<typeof SubscribeToThreadResponseSchema>>>();
    server.threads = { subscribeToThread: () => responses };
    responses.push(create(SubscribeToThreadResponseSchema, { activeRun: {} }));
    const subscription = await new AgentClient(server.target).subscribeToThread({ resourceId: "u", threadId: "t" });
    assert.equal(subscription.activeRunId(), null);
    const delta = (text: string) => ({ runId: "run-1", chunk: { case: "textDelta" as const, value: { id: "x", text } } });
    responses.push(create(SubscribeToThreadResponseSchema, { activeRun: { runId: "run-1", agentId: "support" }, chunks: [delta("a"), delta("b")] }));
    const texts: string[] = [];
    for await (const chunk of subscription.stream) {
      // the framework's shapes, as stream() gives them
      if (chunk.type === "text-delta") texts.push(chunk.payload.text);
      assert.equal(chunk.runId, "run-1");
      assert.equal(subscription.activeRunId(), "run-1");
      if (texts.length === 2) subscription.unsubscribe();
    }
    assert.deepEqual(texts, ["a", "b"]);
  });

  test("a subscription's streamProto yields the generated chunks", async () => {
    const responses = new Queue<ReturnType<typeof create<typeof SubscribeToThreadResponseSchema>>>();
    server.threads = { subscribeToThread: () => responses };
    responses.push(create(SubscribeToThreadResponseSchema, { activeRun: {} }));
    const subscription = await new AgentClient(server.target).subscribeToThread({ resourceId: "u", threadId: "t" });
    responses.push(create(SubscribeToThreadResponseSchema, {
      activeRun: { runId: "run-1", agentId: "support" },
      chunks: [{ runId: "run-1", chunk: { case: "textDelta", value: { id: "x", text: "raw" } } }],
    }));
    for await (const chunk of subscription.streamProto) {
      assert.equal(chunk.chunk.case, "textDelta");
      assert.equal(chunk.chunk.case === "textDelta" && chunk.chunk.value.text, "raw");
      subscription.unsubscribe();
    }
  });
});

describe("connection", () => {
  test("the token goes as a bearer header, from TREADLE_TOKEN when not given; an empty token sends none", async () => {
    server.threads = { getActiveRun: () => ({ activeRun: { runId: "run-1", agentId: "a" } }) };
    const where = { resourceId: "u", threadId: "t" };
    const before = process.env.TREADLE_TOKEN;
    process.env.TREADLE_TOKEN = "from-env";
    try {
      assert.equal(await new AgentClient(server.target).getActiveRun(where), "run-1");
      await new AgentClient(server.target, { token: "given" }).getActiveRun(where);
      await new AgentClient(server.target, { token: "" }).getActiveRun(where);
    } finally {
      if (before === undefined) delete process.env.TREADLE_TOKEN;
      else process.env.TREADLE_TOKEN = before;
    }
    assert.deepEqual(server.headers.slice(-3).map((h) => h.get("authorization")), ["Bearer from-env", "Bearer given", null]);
  });

  test("half a client certificate is refused", () => {
    assert.throws(() => transportFor(server.target, { tls: { cert: "-----BEGIN CERTIFICATE-----" } }), /needs both cert and key/);
  });
});
