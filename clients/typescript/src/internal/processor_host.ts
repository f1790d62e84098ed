// Remote processors over `ProcessorService.Attach`: the same objects as in-process ones.
//
// What the SDK does so the processor does not: the handshake (exactly the hooks the object has),
// one answer per MUTATE invocation and none for OBSERVE ones, invocations of one run and
// processor run one at a time in arrival order (their state is a sequence) while runs go
// concurrently, state versions (a state the server resends replaces ours only when newer; ours
// is sent only when the hook changed it), the deadline and `cancel` (the hook's abortSignal fires
// and no answer is sent), `drain` and `run_ended`, and reconnecting (see link.ts).
import { create } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { createClient, type Transport } from "@connectrpc/connect";
import type { TracerProvider } from "@opentelemetry/api";
import {
  type ChunkOutcome,
  HookMode,
  type Invocation,
  type InvocationResult,
  InvocationResultSchema,
  ProcessorService,
  type ProcessorDeclaration,
  ProcessorDeclarationSchema,
  type ProcessorServiceAttachRequest,
  ProcessorServiceAttachRequestSchema,
  type ProcessorServiceAttachResponse,
  StreamDelivery,
} from "../gen/treadle/v1/processor_service_pb.js";
import type { DataChunk } from "../gen/treadle/v1/chunk_pb.js";
import { TripWire } from "../errors.js";
import { MessageList } from "../memory.js";
import type { ChunkType } from "../stream.js";
import { chunkFromProto, dataChunkToProto } from "./convert.js";
import { valueToJs } from "./plain.js";
import {
  ARGS_CASE,
  type ChunkDecision,
  HOOKS,
  HOOK_BY_NUMBER,
  type HookName,
  abortResult,
  buildArgs,
  chunkOutcome,
  decide,
  encodeResult,
  errorResult,
} from "./hooks.js";
import type { ConnectOptions } from "./connect.js";
import { Handle, type Session, defaultInstanceId } from "./link.js";
import { RequestContext } from "./request_context.js";
import { loadTracing, makeTracer, type Span, type Tracer } from "./tracing.js";

/** The `ProcessorService.Attach` versions this SDK speaks; the server's welcome picks one (2 lets
 * `processOutputStream` replace a chunk by zero or more chunks). */
export const PROTOCOL_VERSIONS = [1, 2];

/** Stream defaults: chunks ready together travel together, a few invocations in flight. */
const DEFAULT_MAX_IN_FLIGHT = 4;
/** How long a run's state is kept after its last invocation when neither `run_ended` nor its
 * `processOutputResult` ends it (a server that died mid-run sends neither). */
const DEFAULT_STATE_TTL_MS = 600_000;

export interface AttachOptions extends ConnectOptions {
  /** `host:port` of one server, or several. */
  target: string | string[];
  processors: object[];
  instanceId?: string;
  /** Spans come from this provider (default: the global one, when `@opentelemetry/api` is installed). */
  tracerProvider?: TracerProvider;
  /** Initial and maximum reconnect delay in milliseconds (default [100, 5000]). */
  backoff?: [number, number];
  stateTtlMs?: number;
  /** Where the SDK says what it does (default: nothing). */
  log?: (message: string) => void;
}

export type ProcessorHandle = Handle<ProcessorServiceAttachRequest, ProcessorServiceAttachResponse>;

type AnyProcessor = Record<string, unknown> & { id?: unknown };

/** The hooks `p` implements, in the framework's order. */
export function hooksOf(p: object): HookName[] {
  return (Object.keys(HOOKS) as HookName[]).filter((h) => typeof (p as AnyProcessor)[h] === "function");
}

/** The handshake's declaration of `p`; TypeError says what is wrong. */
export function declaration(p: object): ProcessorDeclaration {
  const q = p as AnyProcessor & {
    name?: string; description?: string; processDataParts?: boolean; observe?: string[]; timeouts?: Record<string, number>;
    streamDelivery?: string; maxWindow?: number; maxInFlight?: number; toolNames?: string[];
  };
  if (typeof q.id !== "string" || !q.id) throw new TypeError(`${p.constructor?.name ?? "processor"} needs a non-empty string \`id\``);
  const hooks = hooksOf(p);
  if (hooks.length === 0) throw new TypeError(`processor ${q.id} implements no hook (e.g. processInput)`);
  const observe = new Set(q.observe ?? []);
  for (const [what, names] of [["observe", [...observe]], ["timeouts", Object.keys(q.timeouts ?? {})]] as const) {
    const unknown = names.filter((n) => !hooks.includes(n as HookName));
    if (unknown.length) throw new TypeError(`processor ${q.id}: \`${what}\` names hooks it does not implement: ${unknown.join(", ")}`);
  }
  const delivery = q.streamDelivery ?? "windowed";
  if (delivery !== "windowed" && delivery !== "per-chunk") throw new TypeError(`processor ${q.id}: streamDelivery must be "per-chunk" or "windowed"`);
  // onViolation is declared too, always fire and forget.
  const violation = typeof q.onViolation === "function"
    ? [{ hook: ON_VIOLATION, mode: HookMode.OBSERVE }] : [];
  return create(ProcessorDeclarationSchema, {
    id: q.id,
    name: typeof q.name === "string" ? q.name : "",
    description: typeof q.description === "string" ? q.description : "",
    hooks: [...hooks.map((h) => {
      const ms = q.timeouts?.[h];
      return {
        hook: HOOKS[h],
        mode: observe.has(h) ? HookMode.OBSERVE : HookMode.MUTATE,
        timeout: ms === undefined ? undefined : { seconds: BigInt(Math.floor(ms / 1000)), nanos: Math.round((ms % 1000) * 1e6) },
        ...(h === "processOutputStream"
          ? {
              processDataParts: q.processDataParts === true,
              delivery: delivery === "windowed" ? StreamDelivery.WINDOWED : StreamDelivery.PER_CHUNK,
              maxWindow: q.maxWindow ?? 0,
              maxInFlight: q.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT,
            }
          : {}),
        ...(h === "transformToolPayload" ? { toolNames: [...(q.toolNames ?? [])] } : {}),
      };
    }), ...violation],
  });
}

const ON_VIOLATION = 12; // Hook.ON_VIOLATION

/** Calls `onViolation`; its errors are swallowed, as the framework does. */
async function notifyViolation(processor: Record<string, unknown> | undefined, inv: Invocation): Promise<void> {
  const onViolation = processor?.onViolation;
  if (typeof onViolation !== "function" || inv.args.case !== "onViolation") return;
  const v = inv.args.value;
  try {
    await onViolation.call(processor, {
      processorId: v.processorId, message: v.message, detail: valueToJs(v.detail), hook: v.hook,
    });
  } catch {
    // documented: errors from onViolation are swallowed
  }
}

/** One processor's state for one run, and what the stream hook keeps between invocations. */
interface RunState {
  value: Record<string, unknown>;
  version: number;
  streamParts: ChunkType[];
  list: MessageList | undefined;
  touched: number;
  /** The last invocation queued for this run and processor: the next one waits for it. */
  tail: Promise<void>;
}

/** Everything that outlives one stream: the processors and their per-run state. */
class Host {
  readonly runs = new Map<string, RunState>();
  readonly observe = new Map<string, Set<HookName>>();
  private swept = Date.now();

  constructor(
    readonly processors: Map<string, AnyProcessor>,
    readonly declarations: ProcessorDeclaration[],
    readonly instanceId: string,
    readonly tracer: Tracer,
    private readonly ttl: number,
  ) {
    for (const d of declarations) {
      this.observe.set(d.id, new Set(d.hooks.filter((h) => h.mode === HookMode.OBSERVE).map((h) => HOOK_BY_NUMBER.get(h.hook)!)));
    }
  }

  runState(runId: string, processorId: string): RunState {
    const now = Date.now();
    if (now - this.swept > this.ttl / 10) {
      this.swept = now;
      for (const [key, rs] of this.runs) if (now - rs.touched > this.ttl) this.runs.delete(key);
    }
    const key = `${runId}\u0000${processorId}`;
    let rs = this.runs.get(key);
    if (!rs) {
      rs = { value: {}, version: 0, streamParts: [], list: undefined, touched: now, tail: Promise.resolve() };
      this.runs.set(key, rs);
    }
    rs.touched = now;
    return rs;
  }

  endRun(runId: string): void {
    for (const key of this.runs.keys()) if (key.startsWith(`${runId}\u0000`)) this.runs.delete(key);
  }
}

const abortFn = (reason?: string, options?: { retry?: boolean; metadata?: unknown }): never => {
  throw new TripWire(reason ?? "", options ?? {});
};

class ProcessorSession implements Session<ProcessorServiceAttachRequest, ProcessorServiceAttachResponse> {
  private readonly running = new Map<string, AbortController>();
  private closed = false;
  /** The protocol version the server chose (its welcome). */
  private version = 1;

  constructor(private readonly host: Host, private readonly log: (m: string) => void) {}

  handshake(): ProcessorServiceAttachRequest {
    return create(ProcessorServiceAttachRequestSchema, {
      message: {
        case: "handshake",
        value: { protocolVersions: PROTOCOL_VERSIONS, processors: this.host.declarations, instanceId: this.host.instanceId },
      },
    });
  }

  onMessage(message: ProcessorServiceAttachResponse, send: (m: ProcessorServiceAttachRequest) => void): boolean {
    const m = message.message;
    switch (m.case) {
      case "welcome":
        this.version = m.value.protocolVersion || 1;
        return true;
      case "invocation":
        this.start(m.value, send);
        break;
      case "cancel":
        this.running.get(m.value.invocationId)?.abort(new Error(`cancelled by the server: ${m.value.reason}`));
        break;
      case "runEnded":
        this.host.endRun(m.value.runId);
        break;
      case "drain":
        this.log(`server is draining (grace ${m.value.graceMs} ms); will reconnect when it closes the stream`);
        break;
    }
    return false;
  }

  close(): void {
    this.closed = true;
    for (const c of this.running.values()) c.abort(new Error("the stream to the server ended"));
    this.running.clear();
  }

  private start(inv: Invocation, send: (m: ProcessorServiceAttachRequest) => void): void {
    // One (run, processor) runs its invocations one at a time, in the order they arrived.
    const rs = this.host.runState(inv.runId, inv.processorId);
    if (inv.hook === ON_VIOLATION) { // fire and forget: no answer
      rs.tail = rs.tail.then(() => notifyViolation(this.host.processors.get(inv.processorId) as Record<string, unknown> | undefined, inv));
      return;
    }
    const controller = new AbortController();
    this.running.set(inv.invocationId, controller);
    let timer: NodeJS.Timeout | undefined;
    const left = waitMs(inv);
    if (left !== undefined) {
      timer = setTimeout(() => controller.abort(new Error("the invocation's deadline passed")), Math.max(0, left));
    }
    rs.tail = rs.tail.then(async () => {
      let result: InvocationResult | undefined;
      try {
        if (!controller.signal.aborted) result = await this.invoke(inv, rs, controller.signal);
      } catch (e) {
        // a bug here, not in the hook: still answer, never leave the server waiting
        this.log(`invocation ${inv.invocationId} failed: ${String(e)}`);
        result = errorResult(inv.invocationId, e);
      } finally {
        clearTimeout(timer);
        this.running.delete(inv.invocationId);
      }
      const hook = HOOK_BY_NUMBER.get(inv.hook);
      const observed = hook !== undefined && this.host.observe.get(inv.processorId)?.has(hook);
      if (result && !observed && !controller.signal.aborted && !this.closed) {
        send(create(ProcessorServiceAttachRequestSchema, { message: { case: "result", value: result } }));
      }
      if (hook === "processOutputResult") this.host.runs.delete(`${inv.runId}\u0000${inv.processorId}`);
    });
  }

  private async invoke(inv: Invocation, rs: RunState, signal: AbortSignal): Promise<InvocationResult> {
    const pid = inv.processorId;
    const processor = this.host.processors.get(pid);
    const hook = HOOK_BY_NUMBER.get(inv.hook);
    if (!processor || !hook || typeof processor[hook] !== "function" || inv.args.case !== ARGS_CASE[hook]) {
      return errorResult(inv.invocationId, new Error(`processor ${pid} does not serve hook ${hook ?? inv.hook}`));
    }
    if (inv.state && Number(inv.state.version) >= rs.version) {
      rs.value = (inv.state.value ?? {}) as Record<string, unknown>;
      rs.version = Number(inv.state.version);
    }
    const before = JSON.stringify(rs.value);
    const written: DataChunk[] = [];
    const writer = {
      custom: async (chunk: { type: string; data?: unknown; transient?: boolean; id?: string }) => {
        written.push(dataChunkToProto(chunk));
      },
    };
    const attributes = {
      "treadle.processor.id": pid, "treadle.processor.hook": hook, "treadle.run.id": inv.runId,
      "treadle.step.number": inv.stepNumber, "treadle.processor.retry_count": inv.retryCount,
    };
    const result = await this.host.tracer.run(`${hook} ${pid}`, inv.traceContext, attributes, async (span) => {
      const common = {
        abort: abortFn, state: rs.value, writer, abortSignal: signal, retryCount: inv.retryCount,
        requestContext: requestContext(inv), tracingContext: { currentSpan: span.otel }, runId: inv.runId,
        agentId: inv.agentId, threadId: inv.threadId || undefined, resourceId: inv.resourceId || undefined,
        processorIndex: inv.processorIndex,
      };
      const method = (processor[hook] as (args: unknown) => unknown).bind(processor);
      return hook === "processOutputStream"
        ? this.stream(inv, method, rs, common, span)
        : this.hook(inv, hook, method, common, rs, span);
    });
    if (JSON.stringify(rs.value) !== before) {
      rs.version += 1;
      result.state = { $typeName: "treadle.v1.ProcessorState", value: rs.value as never, version: BigInt(rs.version) };
    }
    result.customChunks = written;
    return result;
  }

  private async hook(inv: Invocation, hook: HookName, method: (a: unknown) => unknown, common: Record<string, unknown>,
    rs: RunState, span: Span): Promise<InvocationResult> {
    const { args, list } = buildArgs(inv, common);
    rs.list = list;
    let returned: unknown;
    try {
      returned = await method(args);
    } catch (e) {
      if (TripWire.isInstance(e)) {
        span.setAttribute("treadle.processor.outcome", "abort");
        return abortResult(inv.invocationId, e);
      }
      span.error(e);
      return errorResult(inv.invocationId, e);
    }
    try {
      const result = encodeResult(hook, inv, returned, list);
      span.setAttribute("treadle.processor.outcome", result.outcome.case ?? "");
      return result;
    } catch (e) {
      span.error(e);
      return errorResult(inv.invocationId, e);
    }
  }

  private async stream(inv: Invocation, method: (a: unknown) => unknown, rs: RunState, common: Record<string, unknown>,
    span: Span): Promise<InvocationResult> {
    if (inv.args.case !== "processOutputStream") throw new TypeError("not a stream invocation");
    rs.list ??= new MessageList({ threadId: inv.threadId, resourceId: inv.resourceId }); // one per run, not per chunk
    const decisions: ChunkDecision[] = [];
    for (const proto of inv.args.value.parts) {
      const part = chunkFromProto(proto);
      rs.streamParts.push(part);
      const before = JSON.stringify(part);
      let returned: unknown;
      let thrown: unknown;
      let threw = false;
      try {
        returned = await method({ ...common, part, streamParts: rs.streamParts, messageList: rs.list });
      } catch (e) {
        thrown = e;
        threw = true;
      }
      const d = decide(part, before, returned, thrown, threw);
      if (d.kind === "error") span.error(thrown);
      decisions.push(d);
      if (d.kind === "abort") {
        span.setAttribute("treadle.processor.outcome", "abort");
        break; // after an abort the rest is ignored
      }
    }
    span.setAttribute("treadle.processor.chunk_count", decisions.length);
    const chunks: ChunkOutcome[] = [];
    for (const d of decisions) {
      try {
        chunks.push(chunkOutcome(d, this.version));
      } catch (e) {
        chunks.push(chunkOutcome({ kind: "error", message: String(e) }, this.version));
      }
    }
    return create(InvocationResultSchema, { invocationId: inv.invocationId, outcome: { case: "stream", value: { chunks } } });
  }
}


/** How long the server waits for this answer, in milliseconds from now: `timeout` (counted from
 * when the server sent it, so it does not depend on two clocks agreeing), else `deadline`. */
export function waitMs(inv: Invocation): number | undefined {
  if (inv.timeout) return durationMs(inv.timeout);
  if (inv.deadline) return timestampMs(inv.deadline) - Date.now();
  return undefined;
}

function durationMs(d: { seconds: bigint; nanos: number }): number {
  return Number(d.seconds) * 1000 + d.nanos / 1e6;
}

function requestContext(inv: Invocation): RequestContext {
  return new RequestContext({ ...(inv.requestContext ?? {}), threadId: inv.threadId, resourceId: inv.resourceId });
}

function open(transport: Transport, requests: AsyncIterable<ProcessorServiceAttachRequest>, signal: AbortSignal) {
  return createClient(ProcessorService, transport).attach(requests, { signal });
}

/**
 * Attach `processors` to every server in `target` over one stream each.
 *
 * Returns at once; `await handle.ready()` waits for every server's welcome, `await
 * handle.close()` detaches. Streams that end are reopened with exponential backoff and jitter; a
 * refused handshake is not retried (`ready()` rejects with an `AttachError`).
 */
export function attach(options: AttachOptions): ProcessorHandle {
  const byId = new Map<string, AnyProcessor>();
  const declarations = options.processors.map(declaration);
  for (const p of options.processors as AnyProcessor[]) {
    if (byId.has(p.id as string)) throw new TypeError(`processor id ${String(p.id)} is given twice`);
    byId.set(p.id as string, p);
  }
  if (byId.size === 0) throw new TypeError("give at least one processor");
  const log = options.log ?? (() => {});
  const host = new Host(byId, declarations, options.instanceId ?? defaultInstanceId(), makeTracer(options.tracerProvider),
    options.stateTtlMs ?? DEFAULT_STATE_TTL_MS);
  return new Handle(options.target, open, () => new ProcessorSession(host, log), {
    backoff: options.backoff, beforeFirst: loadTracing, log, tls: options.tls, token: options.token,
  });
}
