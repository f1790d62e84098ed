// Signals into threads over `treadle.v1.ThreadService`, named and shaped as the Mastra Agent
// signals API: `sendMessage`, `queueMessage`, `sendSignal`, `sendStateSignal`,
// `sendNotificationSignal`, `subscribeToThread` (an async iterable with the active run id,
// `abort()` and `unsubscribe()`), `listNotifications`, `abortRun`, `getActiveRun`.
//
// The server decides what happens to a signal before it answers, so `accepted` is known when a
// call resolves; it is still a promise (`result.accepted.then(...)`, also right on the returned
// promise) so that code written for the framework reads the same. Results are plain objects:
// enums are the framework's strings (`"wake"`, `"deliver"`, `"high"`), timestamps are Dates. A
// woken run is watched through `subscribeToThread`, not through an `output` stream.
//
// Attributes are sent in the key order of their object (`ordered_attributes`), the order the
// model sees them in: `{ note: "x", n: 3 }` renders `<user note="x" n="3">`.
import { fromJson, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { CallOptionsSchema, type CallOptions } from "./gen/treadle/v1/agent_pb.js";
import type { Chunk } from "./gen/treadle/v1/chunk_pb.js";
import {
  type CreatedSignal,
  IfActiveSchema,
  IfIdleSchema,
  NotificationDecisionSchema,
  NotificationRecordSchema,
  NotificationSchema,
  NotificationStatusSchema,
  type SignalAccepted,
  SignalActionSchema,
  SignalMessageSchema,
  SignalSchema,
  StateSignalSchema,
  type SubscribeToThreadResponse,
} from "./gen/treadle/v1/signal_pb.js";
import type { Part } from "./gen/treadle/v1/message_pb.js";
import { chunkFromProto, partToProto } from "./internal/convert.js";
import { enumFromString, enumToString, fromPlain, toPlain, valueToJs, type Plain } from "./internal/plain.js";
import type { MastraMessagePart } from "./memory.js";
import type { ChunkType } from "./stream.js";
import { type CallControl, ThreadCalls, type ThreadKey } from "./threads.js";

export type Attributes = Record<string, string | number | boolean>;
/** `CallOptions`, or its proto JSON form (`{ maxSteps: 3 }`). */
export type StreamOptions = CallOptions | JsonObject;

export interface IfActive {
  /** Default "deliver": taken in at the running run's next step. */
  behavior?: "deliver" | "persist" | "discard";
  /** Merged into the signal's attributes when the thread is running. */
  attributes?: Attributes;
}

export interface IfIdle {
  /** Default "wake": a new run starts with the signal as its input. */
  behavior?: "wake" | "persist" | "discard";
  attributes?: Attributes;
  /** The woken run's options. */
  streamOptions?: StreamOptions;
}

/** Where a signal goes: a run (`runId`) or a thread (`resourceId` and `threadId`). */
export interface SignalOptions extends CallControl {
  runId?: string;
  resourceId?: string;
  threadId?: string;
  ifActive?: IfActive;
  ifIdle?: IfIdle;
}

/** Text, or parts (`{ type: "text", text }`, `{ type: "file", ... }`). */
export type SignalContents = string | MastraMessagePart[];

export type MessageInput =
  | SignalContents
  | { contents: SignalContents; attributes?: Record<string, JsonValue>; metadata?: JsonObject; providerOptions?: JsonObject };

export interface AgentSignal {
  /** `user`, `state`, `reactive` or `notification` (`user-message` and `system-reminder` are read as `user` and `reactive`). */
  type: "user" | "state" | "reactive" | "notification" | "user-message" | "system-reminder";
  /** The XML tag the model sees (`{ type: "notification", tagName: "github-review" }` is `<github-review>`). */
  tagName?: string;
  contents?: SignalContents;
  attributes?: Record<string, JsonValue>;
  metadata?: JsonObject;
  providerOptions?: JsonObject;
}

export interface StateSignalInput {
  /** The state channel, e.g. `browser`. */
  id: string;
  /** The producer's key: the same key and mode as the channel's current value is skipped. */
  cacheKey: string;
  mode?: "snapshot" | "delta";
  value?: unknown;
  delta?: unknown;
  contents?: string;
  attributes?: Attributes;
  metadata?: JsonObject;
  /** Default `state`. */
  tagName?: string;
}

export interface NotificationInput {
  source: string;
  kind: string;
  summary: string;
  priority?: "low" | "medium" | "high" | "urgent";
  payload?: unknown;
  dedupeKey?: string;
  coalesceKey?: string;
  attributes?: Record<string, JsonValue>;
  metadata?: JsonObject;
}

export interface NotificationOptions extends ThreadKey, CallControl {
  ifIdle?: { streamOptions?: StreamOptions };
}

export interface SendAgentSignalAccepted {
  action: "wake" | "deliver" | "persist" | "discard";
  /** The run that takes the signal (wake and deliver only). */
  runId?: string;
}

export interface CreatedAgentSignal {
  id: string;
  type: string;
  tagName: string;
  createdAt?: Date;
  attributes: JsonObject;
}

export interface SendAgentSignalResult {
  accepted: Promise<SendAgentSignalAccepted>;
  signal: CreatedAgentSignal;
  /** Present for persist: the signal is stored (already, when the call resolves). */
  persisted?: Promise<void>;
}

/** The call in flight; `accepted` is also readable before it resolves. */
export type SignalSend = Promise<SendAgentSignalResult> & { readonly accepted: Promise<SendAgentSignalAccepted> };

export type SendStateSignalResult =
  | { skipped: true; reason: "unchanged" }
  | (SendAgentSignalResult & { skipped: false; version: number });

/** An inbox record: `priority` and `status` as strings, times as Dates. */
export type NotificationRecord = Plain & {
  id: string; source: string; kind: string; summary: string; priority?: string; status?: string; coalescedCount: number;
};

export interface NotificationDeliveryDecision {
  action?: "deliver" | "summarize" | "defer" | "discard";
  deliverAt?: Date;
  summaryAt?: Date;
  rule: string;
}

export interface SendNotificationSignalResult {
  record: NotificationRecord;
  decision: NotificationDeliveryDecision;
  runId?: string;
  signal?: CreatedAgentSignal;
  accepted?: Promise<SendAgentSignalAccepted>;
  persisted?: Promise<void>;
}

export interface ListNotificationsOptions extends ThreadKey, CallControl {
  statuses?: ("pending" | "delivered" | "summarized" | "discarded" | "failed")[];
}

/**
 * The chunks of every run on a thread, from the moment of subscribing. Iterate it (or its
 * `stream`) for chunks in the framework's shapes, as `stream()` yields them (`chunk.type ===
 * "text-delta"`, `chunk.payload.text`, `chunk.runId`); `streamProto` yields the generated `Chunk`
 * messages instead (iterate one of them). `activeRunId()` is the thread's running run (null when
 * idle), kept current as runs start and end while it is iterated. `unsubscribe()` ends the
 * iteration without aborting anything; `abort()` aborts the active run.
 */
export class ThreadSubscription implements AsyncIterable<ChunkType> {
  private active: string | null;
  private unsubscribed = false;

  /** @internal */
  constructor(
    private readonly responses: AsyncIterator<SubscribeToThreadResponse>,
    first: SubscribeToThreadResponse,
    private readonly cancel: AbortController,
    private readonly calls: SignalCalls,
    private readonly key: ThreadKey,
  ) {
    this.active = first.activeRun?.runId || null;
  }

  /** The subscription itself: chunks in the framework's shapes. */
  get stream(): AsyncIterable<ChunkType> {
    return this;
  }

  /** The generated `Chunk` messages, as they travelled. */
  get streamProto(): AsyncIterable<Chunk> {
    return { [Symbol.asyncIterator]: () => this.protoChunks() };
  }

  activeRunId(): string | null {
    return this.active;
  }

  /** Abort the thread's active run; true when one was running. */
  abort(): Promise<boolean> {
    return this.calls.abortRun({ resourceId: this.key.resourceId, threadId: this.key.threadId });
  }

  unsubscribe(): void {
    this.unsubscribed = true;
    this.cancel.abort();
  }

  close(): void {
    this.unsubscribe();
  }

  [Symbol.dispose](): void {
    this.unsubscribe();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ChunkType> {
    for await (const chunk of this.protoChunks()) yield chunkFromProto(chunk);
  }

  private async *protoChunks(): AsyncGenerator<Chunk, void, undefined> {
    try {
      for (;;) {
        const r = await this.responses.next();
        if (r.done) return;
        if (r.value.activeRun) this.active = r.value.activeRun.runId || null;
        yield* r.value.chunks;
      }
    } catch (e) {
      if (this.unsubscribed) return; // the iteration ends quietly after unsubscribe()
      throw e;
    }
  }
}

/** The signal calls; `AgentClient` extends this with the agent calls. */
export class SignalCalls extends ThreadCalls {
  /** Subscribed once this resolves: call it before sending, to see the whole reaction. */
  async subscribeToThread(o: { resourceId?: string; threadId: string } & CallControl): Promise<ThreadSubscription> {
    const cancel = new AbortController();
    const onAbort = () => cancel.abort(o.signal?.reason);
    o.signal?.addEventListener("abort", onAbort, { once: true });
    const key = { resourceId: o.resourceId ?? "", threadId: o.threadId };
    const responses = this.threadService.subscribeToThread(key, { headers: this.headers, signal: cancel.signal })[Symbol.asyncIterator]();
    const first = await responses.next();
    if (first.done) throw new Error("the server ended the subscription before it began");
    return new ThreadSubscription(responses, first.value, cancel, this, key);
  }

  /** A user message (`SendMessage`): delivered into the running run, or waking the idle thread. */
  sendMessage(agentId: string, message: MessageInput, o: SignalOptions = {}): SignalSend {
    return sending((async () => {
      const request = { ...target(agentId, o), message: signalMessage(message) };
      return signalResult(await this.threadService.sendMessage(request, this.rpc(o)));
    })());
  }

  /** A user message run after the thread's active run, each queued message as its own run (`QueueMessage`). */
  queueMessage(agentId: string, message: MessageInput, o: SignalOptions = {}): SignalSend {
    return sending((async () => {
      const request = { ...target(agentId, o), message: signalMessage(message) };
      return signalResult(await this.threadService.queueMessage(request, this.rpc(o)));
    })());
  }

  /** A signal (`SendSignal`): `{ type: "notification", tagName: "github-review", contents: "..." }`. */
  sendSignal(agentId: string, signal: AgentSignal, o: SignalOptions = {}): SignalSend {
    return sending((async () => {
      const { contents, ...rest } = signal;
      const request = { ...target(agentId, o), signal: fromPlain(SignalSchema, { ...ordered(rest), ...contentsOf(contents) }) as never };
      return signalResult(await this.threadService.sendSignal(request, this.rpc(o)));
    })());
  }

  /** Named thread state (`SendStateSignal`); the same `cacheKey` and mode again is skipped. */
  async sendStateSignal(agentId: string, state: StateSignalInput, o: SignalOptions): Promise<SendStateSignalResult> {
    const request = { ...target(agentId, o), state: fromPlain(StateSignalSchema, ordered(state as unknown as Plain)) as never };
    const r = await this.threadService.sendStateSignal(request, this.rpc(o));
    if (r.skipped) return { skipped: true, reason: r.reason as "unchanged" };
    return { ...signalResult(r), skipped: false, version: Number(r.version) };
  }

  /** Create or merge an inbox record and apply the delivery policy (`SendNotificationSignal`). */
  async sendNotificationSignal(agentId: string, notification: NotificationInput, o: NotificationOptions): Promise<SendNotificationSignalResult> {
    const request = {
      agentId, resourceId: o.resourceId, threadId: o.threadId,
      notification: fromPlain(NotificationSchema, ordered(notification as unknown as Plain)) as never,
      ifIdle: o.ifIdle?.streamOptions === undefined ? undefined : { streamOptions: callOptions(o.ifIdle.streamOptions) },
    };
    const r = await this.threadService.sendNotificationSignal(request, this.rpc(o));
    const out: SendNotificationSignalResult = {
      record: toPlain(NotificationRecordSchema, r.record!) as NotificationRecord,
      decision: toPlain(NotificationDecisionSchema, r.decision!) as unknown as NotificationDeliveryDecision,
    };
    if (r.runId) out.runId = r.runId;
    if (r.signal) out.signal = createdSignal(r.signal);
    if (r.accepted?.action) {
      const accepted = acceptedOf(r.accepted);
      out.accepted = Promise.resolve(accepted);
      if (accepted.action === "persist") out.persisted = Promise.resolve();
    }
    return out;
  }

  /** The thread's inbox records (only those with one of `statuses`, when given). */
  async listNotifications(o: ListNotificationsOptions): Promise<NotificationRecord[]> {
    const statuses = (o.statuses ?? []).map((s) => enumFromString(NotificationStatusSchema, s));
    const r = await this.threadService.listNotifications({ resourceId: o.resourceId, threadId: o.threadId, statuses }, this.rpc(o));
    return r.notifications.map((n) => toPlain(NotificationRecordSchema, n) as NotificationRecord);
  }

  /** Abort a run (by `runId`, or the thread's active one); true when one was running. */
  async abortRun(o: { runId?: string; resourceId?: string; threadId?: string } & CallControl): Promise<boolean> {
    const r = await this.threadService.abortRun({ runId: o.runId ?? "", resourceId: o.resourceId ?? "", threadId: o.threadId ?? "" }, this.rpc(o));
    return r.aborted;
  }

  /** The thread's running run id, or null when it is idle. */
  async getActiveRun(o: ThreadKey & CallControl): Promise<string | null> {
    const r = await this.threadService.getActiveRun({ resourceId: o.resourceId, threadId: o.threadId }, this.rpc(o));
    return r.activeRun?.runId || null;
  }
}

function sending(p: Promise<SendAgentSignalResult>): SignalSend {
  let accepted: Promise<SendAgentSignalAccepted> | undefined;
  // made on first read, so that a caller who only awaits the call has no second promise to handle
  return Object.defineProperty(p, "accepted", { get: () => (accepted ??= p.then((r) => r.accepted)) }) as SignalSend;
}

function target(agentId: string, o: SignalOptions) {
  return {
    agentId, runId: o.runId ?? "", resourceId: o.resourceId ?? "", threadId: o.threadId ?? "",
    ifActive: o.ifActive === undefined ? undefined : fromPlain(IfActiveSchema, ordered(o.ifActive as Plain)) as never,
    ifIdle: o.ifIdle === undefined ? undefined : {
      ...(fromPlain(IfIdleSchema, ordered({ behavior: o.ifIdle.behavior, attributes: o.ifIdle.attributes })) as object),
      streamOptions: o.ifIdle.streamOptions === undefined ? undefined : callOptions(o.ifIdle.streamOptions),
    } as never,
  };
}

function callOptions(o: StreamOptions): CallOptions {
  const typed = (o as { $typeName?: string }).$typeName === "treadle.v1.CallOptions";
  return typed ? (o as CallOptions) : fromJson(CallOptionsSchema, o as JsonObject);
}

/** `attributes` as `orderedAttributes`, in the object's key order (a Struct has no order). */
function ordered<T extends { attributes?: unknown }>(o: T): Plain {
  const { attributes, ...rest } = o;
  if (attributes === undefined || attributes === null) return rest as Plain;
  const list = Object.entries(attributes as Record<string, unknown>).map(([name, value]) => ({ name, value }));
  return { ...rest, orderedAttributes: list };
}

function contentsOf(contents: SignalContents | undefined): { contents?: string; parts?: Part[] } {
  if (contents === undefined || typeof contents === "string") return { contents };
  return { parts: contents.map(partToProto) };
}

function signalMessage(message: MessageInput) {
  const m = typeof message === "string" || Array.isArray(message) ? { contents: message } : message;
  const { contents, parts } = contentsOf(m.contents);
  const msg = fromPlain(SignalMessageSchema, ordered({ attributes: m.attributes, metadata: m.metadata, providerOptions: m.providerOptions, contents })) as never;
  if (parts) (msg as { parts: Part[] }).parts = parts;
  return msg;
}

function acceptedOf(a: SignalAccepted): SendAgentSignalAccepted {
  const action = enumToString(SignalActionSchema, a.action) as SendAgentSignalAccepted["action"];
  return a.runId ? { action, runId: a.runId } : { action };
}

function createdSignal(s: CreatedSignal): CreatedAgentSignal {
  // In the order they render (the Struct form has none).
  const attributes: JsonObject = s.orderedAttributes.length ? {} : { ...(s.attributes ?? {}) };
  for (const a of s.orderedAttributes) attributes[a.name] = valueToJs(a.value) as JsonValue;
  return { id: s.id, type: s.type, tagName: s.tagName, createdAt: s.createdAt && timestampDate(s.createdAt), attributes };
}

function signalResult(r: { accepted?: SignalAccepted; signal?: CreatedSignal }): SendAgentSignalResult {
  const accepted = acceptedOf(r.accepted!);
  const out: SendAgentSignalResult = { accepted: Promise.resolve(accepted), signal: createdSignal(r.signal!) };
  if (accepted.action === "persist") out.persisted = Promise.resolve();
  return out;
}
