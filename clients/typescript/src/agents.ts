// `AgentClient`: run agents and manage them over `treadle.v1.AgentService`, with the thread and
// signal calls of `treadle.v1.ThreadService` (threads.ts, signals.ts).
//
// `stream` and `generate` speak the Mastra Agent API's shapes: chunks as plain `{ type, payload }`
// objects (`ChunkType`), a result with `text`, a string `finishReason`, `usage`, `toolCalls`,
// `toolResults` and `tripwire`; `streamProto` / `generateProto` (and `result.response`) give the
// generated messages. The other calls answer with generated messages. Failures reject with a
// `ConnectError` carrying the server's status code and message. `client.agent(id)` is one
// agent's view, whose calls read as the Mastra Agent API's (`agent.sendMessage(message, {
// resourceId, threadId })`).
import { type MessageInitShape, fromJson, type JsonObject } from "@bufbuild/protobuf";
import { type Client, createClient, type Transport } from "@connectrpc/connect";
import { type Agent, AgentSchema, type CallOptions, CallOptionsSchema } from "./gen/treadle/v1/agent_pb.js";
import {
  AgentService,
  type GenerateResponse,
  GenerateRequestSchema,
} from "./gen/treadle/v1/agent_service_pb.js";
import {
  type Chunk,
  ErrorChunkSchema,
  FinishReasonSchema,
  StepResultSchema,
  TripwireSchema,
  UsageSchema,
} from "./gen/treadle/v1/chunk_pb.js";
import { SkippedProcessorSchema } from "./gen/treadle/v1/fail_open_pb.js";
import { chunkFromProto, messageFromProto } from "./internal/convert.js";
import { enumToString, toPlain } from "./internal/plain.js";
import type { MastraDBMessage } from "./memory.js";
import type { ChunkPayloads, ChunkType, FinishReason, ToolCall, Usage } from "./stream.js";
import { type Message, MessageSchema } from "./gen/treadle/v1/message_pb.js";
import { type ConnectOptions, transportFor } from "./internal/connect.js";
import {
  type AgentSignal,
  type MessageInput,
  type NotificationInput,
  type NotificationOptions,
  type SendNotificationSignalResult,
  type SendStateSignalResult,
  SignalCalls,
  type SignalOptions,
  type SignalSend,
  type StateSignalInput,
  type ThreadSubscription,
} from "./signals.js";
import type { CallControl } from "./threads.js";

export const DEFAULT_TARGET = "127.0.0.1:50051";

export interface AgentClientOptions extends ConnectOptions {
  /** Bring your own transport (interceptors, ...); `target`, `tls` and `token` are then ignored. */
  transport?: Transport;
  /** Headers sent with every call. */
  headers?: Record<string, string>;
}

/** An `Agent` message, or its proto JSON form (`{ id: "...", model: "openai/gpt-5" }`). */
export type AgentLike = Agent | JsonObject;
/** `CallOptions`, or its proto JSON form. */
export type CallOptionsLike = CallOptions | JsonObject;
export type MessageLike = Message | JsonObject;

export interface RunOptions {
  messages?: MessageLike[];
  options?: CallOptionsLike;
  runId?: string;
  /** Milliseconds; the call fails with DEADLINE_EXCEEDED after it. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** A tool's outcome in a run's result. */
export interface ToolResultInfo extends ToolCall {
  result?: unknown;
  isError?: boolean;
}

/** One step of a run's result. */
export interface RunStep {
  stepNumber: number;
  text: string;
  reasoningText: string;
  toolCalls: ToolCall[];
  toolResults: ToolResultInfo[];
  finishReason: FinishReason;
  usage: Usage;
  tripwire?: ChunkPayloads["tripwire"];
  modelId: string;
}

/** A fail_open processor hook the run went on without (`count` skips for `reason`). */
export interface SkippedProcessorInfo {
  processorId: string;
  hook: string;
  reason?: string;
  count: number;
  message: string;
}

/** What `generate` resolves to: the Mastra Agent API's result, plus the generated response. */
export interface GenerateResult {
  runId: string;
  text: string;
  /** `"stop"`, `"length"`, `"tool-calls"`, `"content-filter"`, `"error"`, `"other"`, ... */
  finishReason: FinishReason;
  usage: Usage;
  /** Every step's tool calls, in order. */
  toolCalls: ToolCall[];
  /** Every step's tool results, in order. */
  toolResults: ToolResultInfo[];
  steps: RunStep[];
  /** Set when a processor aborted the run. */
  tripwire?: ChunkPayloads["tripwire"];
  /** Set when the run ended with an error. */
  error?: ChunkPayloads["error"];
  /** The messages the run produced. */
  messages: MastraDBMessage[];
  skippedProcessors: SkippedProcessorInfo[];
  /** The generated `GenerateResponse` this result was read from. */
  response: GenerateResponse;
}

function stepOf(s: GenerateResponse["steps"][number]): RunStep {
  const plain = toPlain(StepResultSchema, s) as Record<string, unknown>;
  return {
    stepNumber: s.stepNumber,
    text: s.text,
    reasoningText: s.reasoningText,
    toolCalls: (plain.toolCalls ?? []) as ToolCall[],
    toolResults: (plain.toolResults ?? []) as ToolResultInfo[],
    finishReason: (enumToString(FinishReasonSchema, s.finishReason) ?? "unknown") as FinishReason,
    usage: (s.usage ? toPlain(UsageSchema, s.usage) : {}) as Usage,
    tripwire: s.tripwire ? (toPlain(TripwireSchema, s.tripwire) as ChunkPayloads["tripwire"]) : undefined,
    modelId: s.modelId,
  };
}

/** The framework's result shape of a generated `GenerateResponse`. */
export function generateResultOf(r: GenerateResponse): GenerateResult {
  const steps = r.steps.map(stepOf);
  return {
    runId: r.runId,
    text: r.text,
    finishReason: (enumToString(FinishReasonSchema, r.finishReason) ?? "unknown") as FinishReason,
    usage: (r.usage ? toPlain(UsageSchema, r.usage) : {}) as Usage,
    toolCalls: steps.flatMap((s) => s.toolCalls),
    toolResults: steps.flatMap((s) => s.toolResults),
    steps,
    tripwire: r.tripwire ? (toPlain(TripwireSchema, r.tripwire) as ChunkPayloads["tripwire"]) : undefined,
    error: r.error ? (toPlain(ErrorChunkSchema, r.error) as ChunkPayloads["error"]) : undefined,
    messages: r.messages.map(messageFromProto),
    skippedProcessors: r.skippedProcessors.map((x) => toPlain(SkippedProcessorSchema, x) as unknown as SkippedProcessorInfo),
    response: r,
  };
}

const isMessage = (x: unknown, typeName: string) => typeof x === "object" && x !== null && (x as { $typeName?: string }).$typeName === typeName;

function agentOf(a: AgentLike): Agent {
  return isMessage(a, "treadle.v1.Agent") ? (a as Agent) : fromJson(AgentSchema, a as JsonObject);
}

function runRequest(agentId: string, prompt: string | undefined, o: RunOptions): Omit<MessageInitShape<typeof GenerateRequestSchema>, "$typeName"> {
  return {
    agentId,
    prompt: prompt ?? "",
    runId: o.runId ?? "",
    messages: (o.messages ?? []).map((m) => (isMessage(m, "treadle.v1.Message") ? (m as Message) : fromJson(MessageSchema, m as JsonObject))),
    options: o.options === undefined ? undefined
      : isMessage(o.options, "treadle.v1.CallOptions") ? (o.options as CallOptions) : fromJson(CallOptionsSchema, o.options as JsonObject),
  };
}

/** A client for one Treadle server: agents, runs, threads and signals. */
export class AgentClient extends SignalCalls {
  private readonly client: Client<typeof AgentService>;

  constructor(target: string = DEFAULT_TARGET, options: AgentClientOptions = {}) {
    const transport = options.transport ?? transportFor(target, options);
    super(transport, options.headers ?? {});
    this.client = createClient(AgentService, transport);
  }

  /** One agent's calls, without repeating its id. */
  agent(agentId: string): AgentRef {
    return new AgentRef(this, agentId);
  }

  // --- runs -----------------------------------------------------------------------------------

  /** Run the agent to the end: text, finish reason, usage, tool calls and results, steps,
   * tripwire, messages (the framework's result shape; `response` is the generated message). */
  async generate(agentId: string, prompt?: string, options: RunOptions = {}): Promise<GenerateResult> {
    return generateResultOf(await this.generateProto(agentId, prompt, options));
  }

  /** `generate`, answered with the generated `GenerateResponse`. */
  async generateProto(agentId: string, prompt?: string, options: RunOptions = {}): Promise<GenerateResponse> {
    return this.client.generate(runRequest(agentId, prompt, options), this.rpc(options));
  }

  /** The run's chunks one by one, as they arrive, as the framework's `{ type, payload }` objects
   * (`chunk.type === "text-delta"`, `chunk.payload.text`). Leaving the loop early cancels the run. */
  async *stream(agentId: string, prompt?: string, options: RunOptions = {}): AsyncGenerator<ChunkType, void, undefined> {
    for await (const chunk of this.streamProto(agentId, prompt, options)) yield chunkFromProto(chunk);
  }

  /** `stream`, yielding the generated `Chunk` messages. */
  async *streamProto(agentId: string, prompt?: string, options: RunOptions = {}): AsyncGenerator<Chunk, void, undefined> {
    const abort = new AbortController();
    const onAbort = () => abort.abort(options.signal?.reason);
    options.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      for await (const response of this.client.stream(runRequest(agentId, prompt, options), { ...this.rpc(options), signal: abort.signal })) {
        // The server batches chunks that were ready together; callers see single chunks.
        yield* response.chunks;
      }
    } finally {
      options.signal?.removeEventListener("abort", onAbort);
      abort.abort(); // a no-op when the call already ended
    }
  }

  // --- agents ---------------------------------------------------------------------------------

  async createAgent(agent: AgentLike, o: { timeoutMs?: number } = {}): Promise<Agent> {
    return (await this.client.createAgent({ agent: agentOf(agent) }, this.rpc(o))).agent!;
  }

  async getAgent(id: string, o: { timeoutMs?: number } = {}): Promise<Agent> {
    return (await this.client.getAgent({ id }, this.rpc(o))).agent!;
  }

  /** Every agent (config, code and API ones), fetching page after page. */
  async listAgents(o: { pageSize?: number; timeoutMs?: number } = {}): Promise<Agent[]> {
    const agents: Agent[] = [];
    let pageToken = "";
    do {
      const page = await this.client.listAgents({ pageSize: o.pageSize ?? 0, pageToken }, this.rpc(o));
      agents.push(...page.agents);
      pageToken = page.nextPageToken;
    } while (pageToken);
    return agents;
  }

  /** Update the agent with `agent`'s id: only the fields in `updateMask` (proto field names such
   * as `"instructions"`), or every field when it is omitted. */
  async updateAgent(agent: AgentLike, o: { updateMask?: string[]; timeoutMs?: number } = {}): Promise<Agent> {
    const updateMask = o.updateMask === undefined ? undefined : { paths: o.updateMask };
    return (await this.client.updateAgent({ agent: agentOf(agent), updateMask }, this.rpc(o))).agent!;
  }

  async deleteAgent(id: string, o: { timeoutMs?: number } = {}): Promise<void> {
    await this.client.deleteAgent({ id }, this.rpc(o));
  }
}

/** One agent of a client (`client.agent("support")`): the Mastra Agent API's run and signal calls. */
export class AgentRef {
  constructor(private readonly client: AgentClient, readonly id: string) {}

  generate(prompt?: string, options: RunOptions = {}): Promise<GenerateResult> {
    return this.client.generate(this.id, prompt, options);
  }

  generateProto(prompt?: string, options: RunOptions = {}): Promise<GenerateResponse> {
    return this.client.generateProto(this.id, prompt, options);
  }

  stream(prompt?: string, options: RunOptions = {}): AsyncGenerator<ChunkType, void, undefined> {
    return this.client.stream(this.id, prompt, options);
  }

  streamProto(prompt?: string, options: RunOptions = {}): AsyncGenerator<Chunk, void, undefined> {
    return this.client.streamProto(this.id, prompt, options);
  }

  subscribeToThread(o: { resourceId?: string; threadId: string } & CallControl): Promise<ThreadSubscription> {
    return this.client.subscribeToThread(o);
  }

  sendMessage(message: MessageInput, options: SignalOptions = {}): SignalSend {
    return this.client.sendMessage(this.id, message, options);
  }

  queueMessage(message: MessageInput, options: SignalOptions = {}): SignalSend {
    return this.client.queueMessage(this.id, message, options);
  }

  sendSignal(signal: AgentSignal, options: SignalOptions = {}): SignalSend {
    return this.client.sendSignal(this.id, signal, options);
  }

  sendStateSignal(state: StateSignalInput, options: SignalOptions): Promise<SendStateSignalResult> {
    return this.client.sendStateSignal(this.id, state, options);
  }

  sendNotificationSignal(notification: NotificationInput, options: NotificationOptions): Promise<SendNotificationSignalResult> {
    return this.client.sendNotificationSignal(this.id, notification, options);
  }
}
