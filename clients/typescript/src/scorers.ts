// Remote scorers over `ScorerService.Attach`: a scorer is an id and a `score(run)` function that
// answers a score in [0, 1] (or `{ score, reason, details }`); `serveScorers` serves scorers to
// running servers until the handle is closed. Agents name them in their `scorers`.
import { create, type JsonObject } from "@bufbuild/protobuf";
import { createClient, type Transport } from "@connectrpc/connect";
import type { TracerProvider } from "@opentelemetry/api";
import { type Message, MessageRole, type SystemMessage } from "./gen/treadle/v1/message_pb.js";
import {
  type ScoreInvocation,
  ScoreSource,
  ScorerService,
  type ScorerServiceAttachRequest,
  ScorerServiceAttachRequestSchema,
  type ScorerServiceAttachResponse,
} from "./gen/treadle/v1/score_service_pb.js";
import type { ConnectOptions } from "./internal/connect.js";
import { Handle, TOOL_PROTOCOL_VERSIONS, type Session, defaultInstanceId } from "./internal/link.js";
import { toJsonObject } from "./internal/plain.js";
import { loadTracing, makeTracer, type Tracer } from "./internal/tracing.js";

/** One finished run, as a scorer sees it. */
export interface ScorerRun {
  runId: string;
  agentId: string;
  threadId?: string;
  resourceId?: string;
  requestContext: JsonObject;
  inputMessages: Message[];
  rememberedMessages: Message[];
  systemMessages: SystemMessage[];
  /** The run's response messages, as stored. */
  output: Message[];
  /** `live`, or `test` when scored on demand (`ScoreRun`). */
  source: "live" | "test";
  agentVersion?: string;
  /** The text of the run's last user input message. */
  question: string;
  /** The text of the run's assistant messages. */
  answer: string;
}

export interface ScoreResult {
  /** In [0, 1]. */
  score: number;
  reason?: string;
  details?: JsonObject;
}

export interface Scorer {
  /** As agents name it: 1-128 letters, digits, `_`, `.`, `:` or `-`. */
  id: string;
  name?: string;
  description?: string;
  score(run: ScorerRun): number | ScoreResult | Promise<number | ScoreResult>;
}

/** A scorer, checked: `serveScorers` also checks. */
export function createScorer(scorer: Scorer): Scorer {
  check(scorer);
  return scorer;
}

function check(scorer: Scorer): void {
  if (typeof scorer?.id !== "string" || !scorer.id) throw new TypeError("a scorer needs a non-empty string `id`");
  if (typeof scorer.score !== "function") throw new TypeError(`scorer ${scorer.id} needs a \`score\` function`);
}

export interface ServeScorersOptions extends ConnectOptions {
  target: string | string[];
  scorers: Scorer[];
  instanceId?: string;
  tracerProvider?: TracerProvider;
  backoff?: [number, number];
  log?: (message: string) => void;
}

export type ScorerHandle = Handle<ScorerServiceAttachRequest, ScorerServiceAttachResponse>;

function textOf(m: Message): string {
  return (m.content?.parts ?? []).map((p) => (p.part.case === "text" ? p.part.value.text : "")).join("");
}

function runOf(inv: ScoreInvocation): ScorerRun {
  const input = inv.input;
  const inputMessages = input?.inputMessages ?? [];
  const users = inputMessages.filter((m) => m.role === MessageRole.USER && textOf(m));
  return {
    runId: inv.runId, agentId: inv.agentId, threadId: inv.threadId || undefined, resourceId: inv.resourceId || undefined,
    requestContext: inv.requestContext ?? {}, inputMessages, rememberedMessages: input?.rememberedMessages ?? [],
    systemMessages: input?.systemMessages ?? [], output: inv.output,
    source: inv.source === ScoreSource.TEST ? "test" : "live", agentVersion: inv.agentVersion || undefined,
    question: users.length ? textOf(users[users.length - 1]) : "",
    answer: inv.output.filter((m) => m.role === MessageRole.ASSISTANT).map(textOf).join(""),
  };
}

class ScorerSession implements Session<ScorerServiceAttachRequest, ScorerServiceAttachResponse> {
  private readonly running = new Set<string>();
  private closed = false;

  constructor(private readonly scorers: Map<string, Scorer>, private readonly instanceId: string, private readonly tracer: Tracer,
    private readonly log: (m: string) => void) {}

  handshake(): ScorerServiceAttachRequest {
    return create(ScorerServiceAttachRequestSchema, {
      message: {
        case: "handshake",
        value: {
          protocolVersions: TOOL_PROTOCOL_VERSIONS, instanceId: this.instanceId,
          scorers: [...this.scorers.values()].map((s) => ({ id: s.id, name: s.name ?? "", description: s.description ?? "" })),
        },
      },
    });
  }

  onMessage(message: ScorerServiceAttachResponse, send: (m: ScorerServiceAttachRequest) => void): boolean {
    const m = message.message;
    if (m.case === "invocation") void this.run(m.value, send);
    else if (m.case === "cancel") this.running.delete(m.value.invocationId);
    else if (m.case === "drain") this.log("server is draining; will reconnect when it closes the stream");
    return m.case === "welcome";
  }

  close(): void {
    this.closed = true;
    this.running.clear();
  }

  private async run(inv: ScoreInvocation, send: (m: ScorerServiceAttachRequest) => void): Promise<void> {
    this.running.add(inv.invocationId);
    const attributes = { "gen_ai.operation.name": "evaluate", "treadle.scorer.id": inv.scorerId, "treadle.run.id": inv.runId };
    const value = await this.tracer.run(`score ${inv.scorerId}`, inv.traceContext, attributes, async (span) => {
      try {
        const scorer = this.scorers.get(inv.scorerId);
        if (!scorer) throw new Error(`scorer ${inv.scorerId} is not served by this process`);
        const out = await scorer.score(runOf(inv));
        const result = typeof out === "number" ? { score: out } : out;
        if (typeof result?.score !== "number") throw new Error(`scorer ${inv.scorerId} answered no numeric score`);
        return {
          invocationId: inv.invocationId, score: result.score, reason: result.reason ?? "",
          details: result.details ? toJsonObject(result.details) : undefined, error: "",
        };
      } catch (e) {
        span.error(e); // the server retries it per the scorer's failure policy
        return { invocationId: inv.invocationId, score: 0, reason: "", error: e instanceof Error ? e.message || e.name : String(e) };
      }
    });
    const wanted = this.running.delete(inv.invocationId);
    if (this.closed || !wanted) return;
    send(create(ScorerServiceAttachRequestSchema, { message: { case: "result", value } }));
  }
}

function open(transport: Transport, requests: AsyncIterable<ScorerServiceAttachRequest>, signal: AbortSignal) {
  return createClient(ScorerService, transport).attach(requests, { signal });
}

/** Serve `scorers` to every server in `target` until `await handle.close()`. Each scoring runs
 * in a span that is a child of the server's `score` span. */
export function serveScorers(options: ServeScorersOptions): ScorerHandle {
  const byId = new Map<string, Scorer>();
  for (const s of options.scorers) {
    check(s);
    if (byId.has(s.id)) throw new TypeError(`scorer ${s.id} is given twice`);
    byId.set(s.id, s);
  }
  if (byId.size === 0) throw new TypeError("give at least one scorer");
  const log = options.log ?? (() => {});
  const tracer = makeTracer(options.tracerProvider);
  const iid = options.instanceId ?? defaultInstanceId();
  return new Handle(options.target, open, () => new ScorerSession(byId, iid, tracer, log), {
    backoff: options.backoff, beforeFirst: loadTracing, log, tls: options.tls, token: options.token,
  });
}
