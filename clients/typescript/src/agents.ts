// `AgentClient`: run agents and manage them over `treadle.v1.AgentService`.
//
// Responses are the generated messages; failures reject with a `ConnectError` carrying the
// server's status code and message. Thread calls (`subscribeToThread`, `sendMessage`, ...) join
// this class as the server's ThreadService grows them.
import { type MessageInitShape, fromJson, type JsonObject } from "@bufbuild/protobuf";
import { type CallOptions as RpcOptions, type Client, createClient, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { type Agent, AgentSchema, type CallOptions, CallOptionsSchema } from "./gen/treadle/v1/agent_pb.js";
import {
  AgentService,
  type GenerateResponse,
  GenerateRequestSchema,
} from "./gen/treadle/v1/agent_service_pb.js";
import type { Chunk } from "./gen/treadle/v1/chunk_pb.js";
import { type Message, MessageSchema } from "./gen/treadle/v1/message_pb.js";
import { baseUrl } from "./internal/link.js";

export const DEFAULT_TARGET = "127.0.0.1:50051";

export interface AgentClientOptions {
  /** Bring your own transport (TLS, interceptors); `target` is then ignored. */
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

/** A client for one Treadle server. */
export class AgentClient {
  private readonly client: Client<typeof AgentService>;
  private readonly headers: Record<string, string>;

  constructor(target: string = DEFAULT_TARGET, options: AgentClientOptions = {}) {
    const transport = options.transport ?? createGrpcTransport({ baseUrl: baseUrl(target), readMaxBytes: 16 << 20, writeMaxBytes: 16 << 20 });
    this.client = createClient(AgentService, transport);
    this.headers = options.headers ?? {};
  }

  private rpc(o: { timeoutMs?: number; signal?: AbortSignal } = {}): RpcOptions {
    return { headers: this.headers, timeoutMs: o.timeoutMs, signal: o.signal };
  }

  // --- runs -----------------------------------------------------------------------------------

  /** Run the agent to the end: text, finish reason, usage, steps, tripwire, messages. */
  async generate(agentId: string, prompt?: string, options: RunOptions = {}): Promise<GenerateResponse> {
    return this.client.generate(runRequest(agentId, prompt, options), this.rpc(options));
  }

  /** The run's chunks one by one, as they arrive. Leaving the loop early cancels the run. */
  async *stream(agentId: string, prompt?: string, options: RunOptions = {}): AsyncGenerator<Chunk, void, undefined> {
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

  // --- threads --------------------------------------------------------------------------------
  // ThreadService calls (subscribeToThread, sendMessage, ...) go here, as the server gains them.
}
