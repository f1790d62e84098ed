// Nested sub-agent output: a `toolOutput` chunk from the wire becomes a `tool-output` chunk whose
// payload holds the sub-agent's chunk, to any depth; `nested` unwraps it to its path and chunk.
import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { ChunkFrom, ChunkSchema } from "../src/gen/treadle/v1/chunk_pb.js";
import { chunkFromProto, chunkToProto } from "../src/internal/convert.js";
import { nested } from "../src/stream.js";

const delta = create(ChunkSchema, { runId: "run-3", from: ChunkFrom.AGENT, chunk: { case: "textDelta", value: { id: "t1", text: "Once " } } });
const write = create(ChunkSchema, {
  runId: "run-2", from: ChunkFrom.AGENT, chunk: { case: "toolOutput", value: { toolCallId: "c2", toolName: "agent-write", output: delta, path: ["agent-write"] } },
});
const research = create(ChunkSchema, {
  runId: "run-1", from: ChunkFrom.AGENT,
  chunk: { case: "toolOutput", value: { toolCallId: "c1", toolName: "agent-research", output: write, path: ["agent-research", "agent-write"] } },
});

test("a nested tool-output chunk keeps its path and the sub-agent's chunk", () => {
  const chunk = chunkFromProto(research);
  assert.equal(chunk.type, "tool-output");
  if (chunk.type !== "tool-output") return;
  assert.deepEqual(chunk.payload.path, ["agent-research", "agent-write"]);
  assert.equal(chunk.payload.output?.type, "tool-output");
  const { path, chunk: inner } = nested(chunk);
  assert.deepEqual(path, ["agent-research", "agent-write"]);
  assert.equal(inner.type, "text-delta");
  assert.equal(inner.runId, "run-3");
  if (inner.type === "text-delta") assert.equal(inner.payload.text, "Once ");
  assert.deepEqual(chunkToProto(chunk), research);
});

test("the run's own chunks have an empty path", () => {
  const own = chunkFromProto(delta);
  assert.deepEqual(nested(own), { path: [], chunk: own });
});
