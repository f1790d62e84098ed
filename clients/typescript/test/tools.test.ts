// The tool SDK against the in-process fake server.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { ToolServiceAttachResponseSchema, type ToolCallResult } from "../src/gen/treadle/v1/tool_service_pb.js";
import { jsToValue, valueToJs } from "../src/internal/plain.js";
import { createTool, serveTools } from "../src/tools.js";
import { FakeServer } from "./fake_server.js";

let server: FakeServer;
before(async () => {
  server = await new FakeServer().start();
});
after(() => server.stop());

const call = (invocationId: string, toolName: string, args: unknown) =>
  create(ToolServiceAttachResponseSchema, {
    message: { case: "call", value: { invocationId, toolName, toolCallId: `c-${invocationId}`, runId: "r", args: jsToValue(args) } },
  });

test("a tool declares its schema; its output, its error and its custom chunks go back", async () => {
  const lookup = createTool({
    name: "lookup",
    description: "Look a customer up",
    inputSchema: { type: "object", properties: { id: { type: "number" } }, required: ["id"] },
    async execute({ id }: { id: number }, { writer, toolCallId }) {
      await writer.custom({ type: "data-lookup", data: { id, toolCallId } });
      if (id < 0) throw new Error("no such customer");
      return { id, name: "Ann" };
    },
  });
  const handle = serveTools({ target: server.target, tools: [lookup], backoff: [10, 50] });
  const conn = await server.toolConns.next();
  const hello = await conn.requests.next();
  assert.equal(hello.message.case, "handshake");
  const [declared] = hello.message.value!.tools;
  assert.deepEqual([declared!.name, declared!.description, declared!.inputSchema?.required], ["lookup", "Look a customer up", ["id"]]);
  conn.responses.push(create(ToolServiceAttachResponseSchema, { message: { case: "welcome", value: { protocolVersion: 1, tools: ["lookup"] } } }));
  await handle.ready(5000);
  conn.responses.push(call("1", "lookup", { id: 7 }));
  conn.responses.push(call("2", "lookup", { id: -1 }));
  conn.responses.push(call("3", "nope", {}));
  const results = new Map<string, ToolCallResult>();
  for (let i = 0; i < 3; i++) {
    const r = (await conn.requests.next()).message.value as ToolCallResult;
    results.set(r.invocationId, r);
  }
  assert.deepEqual(valueToJs((results.get("1")!.outcome.value as never)), { id: 7, name: "Ann" });
  assert.deepEqual(results.get("1")!.customChunks.map((c) => [c.name, valueToJs(c.data)]), [["data-lookup", { id: 7, toolCallId: "c-1" }]]);
  assert.deepEqual([results.get("2")!.outcome.case, results.get("2")!.outcome.value], ["error", "no such customer"]);
  assert.equal(results.get("3")!.outcome.case, "error");
  await handle.close();
});

test("a tool without an object input schema is refused", () => {
  assert.throws(() => createTool({ name: "t", description: "", inputSchema: { type: "string" }, execute: () => 1 }), /type "object"/);
});

test("a passed deadline fires the tool's abortSignal and no answer is sent", async () => {
  let stopped!: () => void;
  const stop = new Promise<void>((resolve) => (stopped = resolve));
  const slow = createTool({
    name: "slow", description: "Waits until told to stop", inputSchema: { type: "object" },
    execute: (_: unknown, { abortSignal }) => new Promise((resolve) => abortSignal.addEventListener("abort", () => {
      stopped();
      resolve("late");
    })),
  });
  const quick = createTool({ name: "quick", description: "Answers", inputSchema: { type: "object" }, execute: () => "now" });
  const handle = serveTools({ target: server.target, tools: [slow, quick], backoff: [10, 50] });
  const conn = await server.toolConns.next();
  await conn.requests.next();
  conn.responses.push(create(ToolServiceAttachResponseSchema, { message: { case: "welcome", value: { protocolVersion: 1 } } }));
  await handle.ready(5000);
  const late = call("late", "slow", {});
  (late.message.value as { deadline?: unknown }).deadline = timestampFromMs(Date.now() + 20);
  conn.responses.push(late);
  await stop; // the deadline passed: the tool was told to stop, and returned
  conn.responses.push(call("next", "quick", {}));
  const r = (await conn.requests.next()).message.value as ToolCallResult;
  assert.equal(r.invocationId, "next"); // "late" was never answered
  await handle.close();
});
