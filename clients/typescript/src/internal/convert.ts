// Chunks and messages: generated messages <-> the Mastra API's shapes (`ChunkType`,
// `MastraDBMessage`), and message-list snapshots <-> a local `MessageList`.
import { type DescMessage, type Message as ProtoMessage, create, equals } from "@bufbuild/protobuf";
import { type Timestamp, timestampDate, timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import {
  type Chunk,
  ChunkFromSchema,
  ChunkSchema,
  type DataChunk,
  DataChunkSchema,
  ToolOutputChunkSchema,
} from "../gen/treadle/v1/chunk_pb.js";
import {
  type Message,
  MessageRoleSchema,
  MessageSchema,
  type Part,
  PartSchema,
  type SystemMessage,
  SystemMessageSchema,
  DataPartSchema,
  ErrorPartSchema,
  FilePartSchema,
  ReasoningPartSchema,
  SourcePartSchema,
  SourceTypeSchema,
  StepStartPartSchema,
  TextPartSchema,
  ToolInvocationPartSchema,
  ToolInvocationStateSchema,
} from "../gen/treadle/v1/message_pb.js";
import {
  type MessageListReplacement,
  MessageListReplacementSchema,
  type MessageListSnapshot,
  MessageSource as ProtoSource,
  MessageSourceSchema,
} from "../gen/treadle/v1/processor_service_pb.js";
import {
  type CoreSystemMessage,
  type MastraDBMessage,
  type MastraMessagePart,
  MessageList,
  type MessageRole,
  type MessageSource,
} from "../memory.js";
import type { ChunkFrom, ChunkType } from "../stream.js";
import { type Plain, enumFromString, enumToString, fromPlain, jsToValue, toPlain, valueToJs } from "./plain.js";

// --- chunks ---------------------------------------------------------------------------------

const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const camel = (s: string) => s.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

const payloadDesc = new Map<string, DescMessage>();
for (const f of ChunkSchema.fields) {
  if (f.oneof && f.fieldKind === "message" && f.localName !== "data") payloadDesc.set(kebab(f.localName), f.message);
}

const FROM: ChunkFrom[] = ["AGENT", "AGENT", "USER", "SYSTEM", "WORKFLOW"];

export function chunkFromProto(c: Chunk): ChunkType {
  const from = FROM[c.from] ?? "AGENT";
  const out: Plain = { type: "", runId: c.runId, from };
  if (c.metadata !== undefined) out.metadata = c.metadata;
  const sel = c.chunk;
  if (sel.case === undefined) throw new TypeError("chunk without a type");
  if (sel.case === "data") {
    out.type = sel.value.name;
    out.data = valueToJs(sel.value.data);
    if (sel.value.transient) out.transient = true;
    if (sel.value.id) out.id = sel.value.id;
  } else if (sel.case === "toolOutput") {
    // recursive: the inner chunk is a whole chunk, in the same shape
    const t = sel.value;
    out.type = "tool-output";
    out.payload = { toolCallId: t.toolCallId, toolName: t.toolName, path: [...t.path],
      output: t.output ? chunkFromProto(t.output) : undefined };
  } else {
    const type = kebab(sel.case);
    out.type = type;
    out.payload = toPlain(payloadDesc.get(type)!, sel.value as ProtoMessage);
  }
  return out as unknown as ChunkType;
}

export function chunkToProto(chunk: ChunkType): Chunk {
  const c = chunk as unknown as Plain & { type: string };
  const from = enumFromString(ChunkFromSchema, String(c.from ?? "AGENT").toLowerCase());
  const base = { runId: String(c.runId ?? ""), from, metadata: c.metadata as never };
  if (typeof c.type === "string" && c.type.startsWith("data-")) {
    return create(ChunkSchema, { ...base, chunk: { case: "data", value: dataChunkToProto(chunk) } });
  }
  if (c.type === "tool-output") {
    const p = (c.payload ?? {}) as { toolCallId?: string; toolName?: string; path?: string[]; output?: ChunkType };
    const value = create(ToolOutputChunkSchema, {
      toolCallId: p.toolCallId ?? "", toolName: p.toolName ?? "", path: p.path ?? [],
      output: p.output ? chunkToProto(p.output) : undefined,
    });
    return create(ChunkSchema, { ...base, chunk: { case: "toolOutput", value } });
  }
  const desc = payloadDesc.get(c.type);
  if (!desc) throw new TypeError(`unknown chunk type ${JSON.stringify(c.type)}`);
  const value = fromPlain(desc, (c.payload ?? {}) as Plain);
  return create(ChunkSchema, { ...base, chunk: { case: camel(c.type), value } as never });
}

/** A `writer.custom()` chunk as the wire's `DataChunk`. */
export function dataChunkToProto(chunk: { type: string; data?: unknown; transient?: boolean; id?: string }): DataChunk {
  if (typeof chunk.type !== "string" || !chunk.type.startsWith("data-")) {
    throw new TypeError(`a custom chunk's type must start with "data-", got ${JSON.stringify(chunk.type)}`);
  }
  return create(DataChunkSchema, {
    name: chunk.type, data: jsToValue(chunk.data ?? null), transient: chunk.transient === true, id: chunk.id ?? "",
  });
}

// --- messages -------------------------------------------------------------------------------

function partFromProto(p: Part): MastraMessagePart {
  const meta = p.providerMetadata === undefined ? {} : { providerMetadata: p.providerMetadata };
  const sel = p.part;
  switch (sel.case) {
    case "text":
      return { type: "text", text: sel.value.text, ...meta };
    case "reasoning": {
      const detail = { type: "text" as const, text: sel.value.text, ...(sel.value.signature ? { signature: sel.value.signature } : {}) };
      return {
        type: "reasoning", reasoning: sel.value.text, details: [detail],
        ...(sel.value.redactedData.length ? { redactedData: sel.value.redactedData } : {}), ...meta,
      };
    }
    case "file": {
      const src = sel.value.source;
      return {
        type: "file", mimeType: sel.value.mimeType, ...(sel.value.filename ? { filename: sel.value.filename } : {}),
        ...(src.case === "data" ? { data: src.value } : src.case === "url" ? { url: src.value } : {}), ...meta,
      };
    }
    case "source": {
      const { sourceType, ...rest } = toPlain(SourcePartSchema, sel.value);
      return { type: "source", source: { ...(rest as object), sourceType: sourceType as "url" | "document" }, ...meta };
    }
    case "stepStart":
      return { type: "step-start", ...(sel.value.model ? { model: sel.value.model } : {}), ...meta };
    case "toolInvocation": {
      const t = sel.value;
      return {
        type: "tool-invocation",
        toolInvocation: {
          state: (enumToString(ToolInvocationStateSchema, t.state) ?? "call") as never,
          toolCallId: t.toolCallId, toolName: t.toolName, args: valueToJs(t.args),
          ...(t.result !== undefined ? { result: valueToJs(t.result) } : {}),
          ...(t.isError ? { isError: true } : {}), ...(t.errorText ? { errorText: t.errorText } : {}),
        },
        ...meta,
      };
    }
    case "error":
      return { type: "error", name: sel.value.name, message: sel.value.message, ...meta };
    case "data":
      return { type: sel.value.name as `data-${string}`, data: valueToJs(sel.value.data), ...(sel.value.id ? { id: sel.value.id } : {}), ...meta };
    default:
      throw new TypeError("message part without a type");
  }
}

export function partToProto(p: MastraMessagePart): Part {
  const providerMetadata = p.providerMetadata;
  const part = ((): Part["part"] => {
    switch (p.type) {
      case "text":
        return { case: "text", value: create(TextPartSchema, { text: p.text }) };
      case "reasoning": {
        const d = p.details?.[0];
        return {
          case: "reasoning",
          value: create(ReasoningPartSchema, {
            text: p.reasoning ?? d?.text ?? "", signature: d?.signature ?? "", redactedData: p.redactedData ?? new Uint8Array(),
          }) as never,
        };
      }
      case "file":
        return {
          case: "file",
          value: create(FilePartSchema, {
            mimeType: p.mimeType, filename: p.filename ?? "",
            source: p.data !== undefined ? { case: "data", value: p.data } : p.url !== undefined ? { case: "url", value: p.url } : { case: undefined },
          }) as never,
        };
      case "source":
        return {
          case: "source",
          value: fromPlain(SourcePartSchema, {
            ...p.source, sourceType: enumFromString(SourceTypeSchema, p.source.sourceType),
          }) as never,
        };
      case "step-start":
        return { case: "stepStart", value: create(StepStartPartSchema, { model: p.model ?? "" }) };
      case "tool-invocation": {
        const t = p.toolInvocation;
        return {
          case: "toolInvocation",
          value: create(ToolInvocationPartSchema, {
            toolCallId: t.toolCallId, toolName: t.toolName, args: jsToValue(t.args),
            state: enumFromString(ToolInvocationStateSchema, t.state), result: jsToValue(t.result),
            isError: t.isError === true, errorText: t.errorText ?? "",
          }) as never,
        };
      }
      case "error":
        return { case: "error", value: create(ErrorPartSchema, { name: p.name ?? "", message: p.message }) };
      default: {
        const d = p as { type: string; data?: unknown; id?: string };
        if (typeof d.type === "string" && d.type.startsWith("data-")) {
          return {
            case: "data",
            value: create(DataPartSchema, {
              name: d.type, data: jsToValue(d.data ?? null), id: d.id ?? "",
            }) as never,
          };
        }
        throw new TypeError(`unknown message part type ${JSON.stringify(d.type)}`);
      }
    }
  })();
  return create(PartSchema, { part, providerMetadata } as never);
}

export function messageFromProto(m: Message): MastraDBMessage {
  const out: MastraDBMessage = {
    id: m.id,
    role: (enumToString(MessageRoleSchema, m.role) ?? "user") as MessageRole,
    createdAt: m.createdAt ? timestampDate(m.createdAt) : new Date(0),
    content: { format: 2, parts: (m.content?.parts ?? []).map(partFromProto) },
  };
  if (m.threadId) out.threadId = m.threadId;
  if (m.resourceId) out.resourceId = m.resourceId;
  if (m.type) out.type = m.type;
  if (m.content?.metadata !== undefined) out.content.metadata = m.content.metadata;
  return out;
}

/** `original`: the message as it arrived, whose timestamp is kept when the Date did not move
 * (a Date holds milliseconds, the wire nanoseconds). */
export function messageToProto(m: MastraDBMessage, original?: Message): Message {
  if (typeof m?.id !== "string" || !m.id) throw new TypeError("a message needs a string `id`");
  if (!m.content || !Array.isArray(m.content.parts)) throw new TypeError(`message ${m.id}: content.parts must be an array`);
  let createdAt: Timestamp | undefined;
  const when = m.createdAt instanceof Date ? m.createdAt.getTime() : m.createdAt === undefined ? undefined : Date.parse(String(m.createdAt));
  if (when !== undefined && !Number.isNaN(when)) {
    createdAt = original?.createdAt && timestampMs(original.createdAt) === when ? original.createdAt : timestampFromMs(when);
  }
  return create(MessageSchema, {
    id: m.id,
    role: enumFromString(MessageRoleSchema, m.role),
    createdAt,
    threadId: m.threadId ?? "",
    resourceId: m.resourceId ?? "",
    type: m.type ?? "",
    content: { format: m.content.format ?? 2, parts: m.content.parts.map(partToProto), metadata: m.content.metadata },
  });
}

export function systemFromProto(s: SystemMessage): CoreSystemMessage {
  return { role: "system", content: s.content, ...(s.providerOptions ? { providerOptions: s.providerOptions } : {}) };
}

export function systemToProto(s: CoreSystemMessage | string): SystemMessage {
  if (typeof s === "string") return create(SystemMessageSchema, { content: s });
  return create(SystemMessageSchema, { content: String(s.content), providerOptions: s.providerOptions });
}

// --- message lists --------------------------------------------------------------------------

export function sourceFromProto(s: ProtoSource): MessageSource {
  return (enumToString(MessageSourceSchema, s) ?? "input") as MessageSource;
}

/** A local list that behaves as the server's did when the hook was invoked. */
export function listFromSnapshot(snap: MessageListSnapshot | undefined, threadId: string, resourceId: string): MessageList {
  const ml = new MessageList({ threadId, resourceId });
  for (const listed of snap?.messages ?? []) {
    if (listed.message) ml.add(messageFromProto(listed.message), sourceFromProto(listed.source));
  }
  ml.replaceAllSystemMessages((snap?.systemMessages ?? []).map(systemFromProto));
  return ml;
}

/** The whole list after the hook's edits, or undefined when it holds what the snapshot held. */
export function replacementOf(ml: MessageList, snap: MessageListSnapshot | undefined): MessageListReplacement | undefined {
  const originals = new Map((snap?.messages ?? []).flatMap((l) => (l.message ? [[l.message.id, l.message] as const] : [])));
  const messages = ml.get.all.db().map((m) => messageToProto(m, originals.get(m.id)));
  const sources = ml.get.all.db().map((m) => enumFromString(MessageSourceSchema, ml.sourceOf(m.id)));
  const before = snap?.messages ?? [];
  const same = before.length === messages.length
    && before.every((l, i) => l.source === sources[i] && l.message !== undefined && equals(MessageSchema, l.message, messages[i]!));
  return same ? undefined : create(MessageListReplacementSchema, { messages, sources });
}

/** The system messages after the hook's edits, or undefined when unchanged. */
export function systemReplacementOf(ml: MessageList, snap: MessageListSnapshot | undefined): SystemMessage[] | undefined {
  const after = ml.getSystemMessages().map(systemToProto);
  const before = snap?.systemMessages ?? [];
  const same = before.length === after.length && before.every((s, i) => equals(SystemMessageSchema, s, after[i]!));
  return same ? undefined : after;
}
