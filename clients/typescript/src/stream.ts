// `@treadle/client/stream`: the stream chunks processors see and return, in the shape of the
// Mastra Agent API's `ChunkType` (`part.type === "text-delta"`, `part.payload.text`).
import type { JsonObject } from "@bufbuild/protobuf";

export type ChunkFrom = "AGENT" | "USER" | "SYSTEM" | "WORKFLOW";

export type FinishReason =
  | "stop" | "length" | "content-filter" | "tool-calls" | "error" | "other" | "unknown" | "tripwire" | "retry";

export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  reasoningTokens?: number;
  cachedInputTokens?: number;
}

export interface ToolCall {
  toolCallId: string;
  toolName: string;
  args?: unknown;
}

/** The payload of each chunk type. */
export interface ChunkPayloads {
  start: { agentId?: string; messageId?: string };
  "step-start": { messageId?: string; stepNumber?: number; modelId?: string };
  "text-start": { id?: string; providerMetadata?: JsonObject };
  "text-delta": { id?: string; text: string; providerMetadata?: JsonObject };
  "text-end": { id?: string; providerMetadata?: JsonObject };
  "reasoning-start": { id?: string; providerMetadata?: JsonObject };
  "reasoning-delta": { id?: string; text: string; providerMetadata?: JsonObject };
  "reasoning-end": { id?: string; signature?: string; providerMetadata?: JsonObject };
  "tool-call-input-streaming-start": { toolCallId: string; toolName: string; providerExecuted?: boolean };
  "tool-call-delta": { toolCallId: string; toolName?: string; argsTextDelta: string };
  "tool-call-input-streaming-end": { toolCallId: string };
  "tool-call": { toolCallId: string; toolName: string; args?: unknown; providerExecuted?: boolean };
  "tool-result": {
    toolCallId: string; toolName: string; result?: unknown; isError?: boolean; args?: unknown; providerExecuted?: boolean;
  };
  "tool-error": { toolCallId: string; toolName: string; error?: string; args?: unknown };
  source: {
    id: string; sourceType?: "url" | "document"; title?: string; url?: string; mimeType?: string; filename?: string;
  };
  file: { data: Uint8Array; mimeType: string; filename?: string };
  "response-metadata": { id?: string; modelId?: string; timestamp?: Date };
  "step-finish": {
    messageId?: string; stepNumber?: number; reason: FinishReason; rawReason?: string; usage?: Usage; text?: string;
    toolCalls?: ToolCall[]; isContinued?: boolean;
  };
  finish: { reason: FinishReason; totalUsage?: Usage };
  error: { name?: string; message: string; details?: unknown };
  abort: { reason?: string };
  tripwire: { reason: string; retry?: boolean; metadata?: unknown; processorId?: string };
  /** A sub-agent's chunk inside the tool call `toolCallId`; `path` lists the tool names from the
   * outermost to the innermost (`["agent-research", "agent-write"]`). */
  "tool-output": { toolCallId: string; toolName: string; output?: ChunkType; path: string[] };
}

interface ChunkEnvelope {
  runId: string;
  from: ChunkFrom;
  metadata?: JsonObject;
}

/** A custom chunk (`writer.custom()`): its type starts with `data-`. */
export interface DataChunkType extends ChunkEnvelope {
  type: `data-${string}`;
  data?: unknown;
  /** Streamed to clients, never stored in memory. */
  transient?: boolean;
  id?: string;
}

/** One stream chunk. */
export type ChunkType =
  | { [K in keyof ChunkPayloads]: ChunkEnvelope & { type: K; payload: ChunkPayloads[K] } }[keyof ChunkPayloads]
  | DataChunkType;

/** The path of tool names and the innermost chunk of a `tool-output` chunk (a sub-agent's chunk,
 * nested to any depth); any other chunk is `{ path: [], chunk }`, the run's own. */
export function nested(chunk: ChunkType): { path: string[]; chunk: ChunkType } {
  const path = chunk.type === "tool-output" ? [...chunk.payload.path] : [];
  let inner: ChunkType = chunk;
  while (inner.type === "tool-output" && inner.payload.output) inner = inner.payload.output;
  return { path, chunk: inner };
}
