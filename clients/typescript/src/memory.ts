// `@treadle/client/memory`: messages as processors see them (the Mastra API's `MastraDBMessage`)
// and the run's `MessageList`.
import type { JsonObject } from "@bufbuild/protobuf";

export type MessageRole = "user" | "assistant" | "system" | "signal";

interface PartCommon {
  providerMetadata?: JsonObject;
}

export interface TextPart extends PartCommon {
  type: "text";
  text: string;
}

export interface ReasoningPart extends PartCommon {
  type: "reasoning";
  reasoning: string;
  details: { type: "text"; text: string; signature?: string }[];
  redactedData?: Uint8Array;
}

export interface FilePart extends PartCommon {
  type: "file";
  mimeType: string;
  data?: Uint8Array;
  url?: string;
  filename?: string;
}

export interface SourcePart extends PartCommon {
  type: "source";
  source: { sourceType?: "url" | "document"; id?: string; url?: string; title?: string; mimeType?: string; filename?: string };
}

export interface StepStartPart extends PartCommon {
  type: "step-start";
  model?: string;
}

export type ToolInvocationState = "partial-call" | "call" | "result" | "output-error";

export interface ToolInvocation {
  state: ToolInvocationState;
  toolCallId: string;
  toolName: string;
  args?: unknown;
  result?: unknown;
  isError?: boolean;
  errorText?: string;
}

export interface ToolInvocationPart extends PartCommon {
  type: "tool-invocation";
  toolInvocation: ToolInvocation;
}

export interface ErrorPart extends PartCommon {
  type: "error";
  name?: string;
  message: string;
}

export interface DataPart extends PartCommon {
  type: `data-${string}`;
  data?: unknown;
  id?: string;
}

export type MastraMessagePart =
  | TextPart | ReasoningPart | FilePart | SourcePart | StepStartPart | ToolInvocationPart | ErrorPart | DataPart;

export interface MastraMessageContentV2 {
  format: 2;
  parts: MastraMessagePart[];
  /** The flattened text of older messages; read `parts` first. */
  content?: string;
  metadata?: JsonObject;
}

/** One message of a conversation; `content` is always structured. */
export interface MastraDBMessage {
  id: string;
  role: MessageRole;
  createdAt: Date;
  threadId?: string;
  resourceId?: string;
  type?: string;
  content: MastraMessageContentV2;
}

/** A system message (`role: "system"`, text content). */
export interface CoreSystemMessage {
  role: "system";
  content: string;
  providerOptions?: JsonObject;
}

export type MessageSource = "memory" | "input" | "response" | "context";

interface Entry {
  message: MastraDBMessage;
  source: MessageSource;
}

type View = { db(): MastraDBMessage[] };

/** The run's message list, as the hook was given it; edits travel back in the hook's answer. */
export class MessageList {
  private entries: Entry[] = [];
  private system: CoreSystemMessage[] = [];
  readonly threadId: string;
  readonly resourceId: string;

  constructor(options: { threadId?: string; resourceId?: string } = {}) {
    this.threadId = options.threadId ?? "";
    this.resourceId = options.resourceId ?? "";
  }

  /** Views of the list: `get.all.db()`, `get.input.db()`, `get.response.db()`, `get.remembered.db()`. */
  readonly get: { all: View; input: View; response: View; remembered: View } = {
    all: { db: () => this.entries.map((e) => e.message) },
    input: { db: () => this.bySource("input") },
    response: { db: () => this.bySource("response") },
    remembered: { db: () => this.bySource("memory") },
  };

  private bySource(source: MessageSource): MastraDBMessage[] {
    return this.entries.filter((e) => e.source === source).map((e) => e.message);
  }

  sourceOf(id: string): MessageSource | undefined {
    return this.entries.find((e) => e.message.id === id)?.source;
  }

  /** Append messages; one whose id is already present replaces it in place. System messages
   * join the system messages. */
  add(messages: MastraDBMessage | MastraDBMessage[], source: MessageSource = "response"): this {
    for (const message of Array.isArray(messages) ? messages : [messages]) {
      if (message.role === "system") {
        this.system.push({ role: "system", content: textOf(message) });
        continue;
      }
      const existing = this.entries.find((e) => e.message.id === message.id);
      if (existing) existing.message = message;
      else this.entries.push({ message, source });
    }
    return this;
  }

  /** Remove the messages with these ids; returns the removed ones. */
  removeByIds(ids: string[]): MastraDBMessage[] {
    const wanted = new Set(ids);
    const removed = this.entries.filter((e) => wanted.has(e.message.id)).map((e) => e.message);
    this.entries = this.entries.filter((e) => !wanted.has(e.message.id));
    return removed;
  }

  /** Replace the newest tool-invocation part with the same `toolCallId`; false when none holds it. */
  updateToolInvocation(part: ToolInvocationPart): boolean {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const entry = this.entries[i]!;
      const parts = entry.message.content.parts;
      const at = parts.findIndex(
        (p) => p.type === "tool-invocation" && p.toolInvocation.toolCallId === part.toolInvocation.toolCallId,
      );
      if (at >= 0) {
        parts[at] = part;
        if (entry.source === "memory") entry.source = "response"; // edited history is saved again
        return true;
      }
    }
    return false;
  }

  /** The untagged system messages (agent instructions and processor additions). */
  getSystemMessages(): CoreSystemMessage[] {
    return [...this.system];
  }

  addSystem(message: CoreSystemMessage | string): this {
    this.system.push(typeof message === "string" ? { role: "system", content: message } : message);
    return this;
  }

  replaceAllSystemMessages(messages: (CoreSystemMessage | string)[]): this {
    this.system = messages.map((m) => (typeof m === "string" ? { role: "system", content: m } : m));
    return this;
  }

  /** Reconcile a hook's returned array with the messages it was shown (`scope`): shown ids
   * missing from `returned` are removed, the others replaced or added. */
  applyReturned(returned: MastraDBMessage[], scope: string[]): void {
    const kept = new Set(returned.map((m) => m.id));
    this.removeByIds(scope.filter((id) => !kept.has(id)));
    for (const m of returned) this.add(m, this.sourceOf(m.id) ?? (m.role === "assistant" ? "response" : "input"));
  }
}

function textOf(message: MastraDBMessage): string {
  const text = message.content.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
  return text || message.content.content || "";
}
