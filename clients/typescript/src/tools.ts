// Remote tools over `ToolService.Attach`: a tool is a name, a description, a JSON-schema input
// and a function; `serveTools` serves tools to running servers until the handle is closed.
import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { createClient, type Transport } from "@connectrpc/connect";
import type { TracerProvider } from "@opentelemetry/api";
import type { DataChunk } from "./gen/treadle/v1/chunk_pb.js";
import {
  type ToolInvocation,
  ToolService,
  type ToolServiceAttachRequest,
  ToolServiceAttachRequestSchema,
  type ToolServiceAttachResponse,
} from "./gen/treadle/v1/tool_service_pb.js";
import type { ConnectOptions } from "./internal/connect.js";
import { dataChunkToProto } from "./internal/convert.js";
import { Handle, TOOL_PROTOCOL_VERSIONS, type Session, defaultInstanceId } from "./internal/link.js";
import { jsToValue, valueToJs } from "./internal/plain.js";
import { RequestContext } from "./internal/request_context.js";
import { loadTracing, makeTracer, type Tracer } from "./internal/tracing.js";
import type { ProcessorStreamWriter } from "./processors.js";

export interface ToolExecutionContext {
  toolCallId: string;
  runId: string;
  agentId: string;
  threadId?: string;
  resourceId?: string;
  requestContext: RequestContext;
  /** `writer.custom({ type: "data-...", data })`: emitted before the tool's result. */
  writer: ProcessorStreamWriter;
  /** Aborted when the server stops waiting (the call's deadline passed, run cancelled, stream
   * gone); no answer is sent then. */
  abortSignal: AbortSignal;
}

export interface Tool<TInput = any, TOutput = unknown> {
  /** 1-64 letters, digits, `_` or `-`, as models accept tool names. */
  name: string;
  description: string;
  /** The JSON schema of the input (an object schema). */
  inputSchema: JsonObject;
  outputSchema?: JsonObject;
  execute(input: TInput, context: ToolExecutionContext): TOutput | Promise<TOutput>;
}

/** A tool, checked: `serveTools` also checks. */
export function createTool<TInput = any, TOutput = unknown>(tool: Tool<TInput, TOutput>): Tool<TInput, TOutput> {
  check(tool);
  return tool;
}

function check(tool: Tool): void {
  if (typeof tool?.name !== "string" || !tool.name) throw new TypeError("a tool needs a non-empty string `name`");
  if (typeof tool.execute !== "function") throw new TypeError(`tool ${tool.name} needs an \`execute\` function`);
  const schema = tool.inputSchema as { type?: unknown } | undefined;
  if (!schema || typeof schema !== "object" || schema.type !== "object") {
    throw new TypeError(`tool ${tool.name}: inputSchema must be a JSON schema of type "object"`);
  }
}

export interface ServeToolsOptions extends ConnectOptions {
  target: string | string[];
  tools: Tool[];
  instanceId?: string;
  tracerProvider?: TracerProvider;
  backoff?: [number, number];
  log?: (message: string) => void;
}

export type ToolHandle = Handle<ToolServiceAttachRequest, ToolServiceAttachResponse>;

class ToolSession implements Session<ToolServiceAttachRequest, ToolServiceAttachResponse> {
  private readonly running = new Map<string, AbortController>();
  private closed = false;

  constructor(private readonly tools: Map<string, Tool>, private readonly instanceId: string, private readonly tracer: Tracer,
    private readonly log: (m: string) => void) {}

  handshake(): ToolServiceAttachRequest {
    return create(ToolServiceAttachRequestSchema, {
      message: {
        case: "handshake",
        value: {
          protocolVersions: TOOL_PROTOCOL_VERSIONS, instanceId: this.instanceId,
          tools: [...this.tools.values()].map((t) => ({
            name: t.name, description: t.description ?? "", inputSchema: t.inputSchema, outputSchema: t.outputSchema,
          })),
        },
      },
    });
  }

  onMessage(message: ToolServiceAttachResponse, send: (m: ToolServiceAttachRequest) => void): boolean {
    const m = message.message;
    if (m.case === "call") void this.run(m.value, send);
    else if (m.case === "cancel") this.running.get(m.value.invocationId)?.abort(new Error(`cancelled by the server: ${m.value.reason}`));
    else if (m.case === "drain") this.log("server is draining; will reconnect when it closes the stream");
    return m.case === "welcome";
  }

  close(): void {
    this.closed = true;
    for (const c of this.running.values()) c.abort(new Error("the stream to the server ended"));
    this.running.clear();
  }

  private async run(call: ToolInvocation, send: (m: ToolServiceAttachRequest) => void): Promise<void> {
    const controller = new AbortController();
    this.running.set(call.invocationId, controller);
    const timer = call.deadline === undefined ? undefined
      : setTimeout(() => controller.abort(new Error("the call's deadline passed")), Math.max(0, timestampMs(call.deadline) - Date.now()));
    const written: DataChunk[] = [];
    const context: ToolExecutionContext = {
      toolCallId: call.toolCallId, runId: call.runId, agentId: call.agentId,
      threadId: call.threadId || undefined, resourceId: call.resourceId || undefined,
      requestContext: new RequestContext(call.requestContext ?? {}),
      writer: { custom: async (chunk) => void written.push(dataChunkToProto(chunk)) },
      abortSignal: controller.signal,
    };
    const attributes = {
      "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.toolName,
      "gen_ai.tool.call.id": call.toolCallId, "treadle.run.id": call.runId,
    };
    const outcome = await this.tracer.run(`execute_tool ${call.toolName}`, call.traceContext, attributes, async (span) => {
      try {
        const tool = this.tools.get(call.toolName);
        if (!tool) throw new Error(`tool ${call.toolName} is not served by this process`);
        const output = await tool.execute(valueToJs(call.args) ?? {}, context);
        return { case: "output" as const, value: jsToValue(output ?? null)! };
      } catch (e) {
        span.error(e); // the model receives the message as a tool error
        return { case: "error" as const, value: e instanceof Error ? e.message || e.name : String(e) };
      }
    });
    clearTimeout(timer);
    this.running.delete(call.invocationId);
    if (this.closed || controller.signal.aborted) return;
    send(create(ToolServiceAttachRequestSchema, {
      message: { case: "result", value: { invocationId: call.invocationId, outcome, customChunks: written } },
    }));
  }
}

function open(transport: Transport, requests: AsyncIterable<ToolServiceAttachRequest>, signal: AbortSignal) {
  return createClient(ToolService, transport).attach(requests, { signal });
}

/** Serve `tools` to every server in `target` until `await handle.close()`. Each call runs in a
 * span that is a child of the server's `execute_tool` span. */
export function serveTools(options: ServeToolsOptions): ToolHandle {
  const byName = new Map<string, Tool>();
  for (const t of options.tools) {
    check(t);
    if (byName.has(t.name)) throw new TypeError(`tool ${t.name} is given twice`);
    byName.set(t.name, t);
  }
  if (byName.size === 0) throw new TypeError("give at least one tool");
  const log = options.log ?? (() => {});
  const tracer = makeTracer(options.tracerProvider);
  const iid = options.instanceId ?? defaultInstanceId();
  return new Handle(options.target, open, () => new ToolSession(byName, iid, tracer, log), {
    backoff: options.backoff, beforeFirst: loadTracing, log, tls: options.tls, token: options.token,
  });
}
