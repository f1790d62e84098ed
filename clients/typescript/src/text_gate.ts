// `TextGate`: hold a text part's deltas only while a guarded span is still open.
//
// A streaming guardrail (PII redaction, a banned phrase) must see a whole span before it decides,
// but a span may arrive split across deltas ("jo", "hn@exa", "mple.com"). The gate buffers the
// part's text only from the point where a span that is not yet complete begins, calls the guard
// on the complete text before that point, and releases it at once: text that cannot be part of a
// match is never held, so the guard adds latency only where a match is possible. Whatever is
// still held is released (guarded) before the part's `text-end`, or before any other chunk of the
// run. It answers `processOutputStream` with an array of chunks (protocol version 2): `[]` while
// everything is held, the released deltas otherwise.
//
//     class EmailRedactor implements Processor {
//       id = "email-redactor";
//       gate = new TextGate((s) => s.replace(EMAIL, "[email]"), { boundary: EMAIL });
//       processOutputStream(args: ProcessOutputStreamArgs) { return this.gate.process(args); }
//     }
//
// Boundaries: "word" holds a trailing partial word, "sentence" a trailing partial sentence, a
// RegExp holds from the earliest place where a match could still be in progress (a partial match,
// or a complete one that reaches the end of the text and might grow).
import type { ChunkType } from "./stream.js";
import { partialMatcher } from "./internal/partial_regexp.js";

/** Called on each complete span; returns the text to release (e.g. redacted). Its second
 * argument is the hook's arguments of the chunk whose processing releases the span: the run's
 * `state`, `writer` (a custom chunk about what it redacted) and `abort`, as in the hook. */
export type Guard = (text: string, args: GateArgs) => string | Promise<string>;

export type Boundary = "word" | "sentence" | RegExp;

export interface TextGateOptions {
  /** Where held text may end (default "word"). */
  boundary?: Boundary;
}

/** What `process` needs of the hook's arguments (the SDK's `ProcessOutputStreamArgs`, whose
 * `state`, `writer` and `abort` the guard gets too). */
export interface GateArgs {
  part: ChunkType;
  runId?: string;
  state?: Record<string, any>;
  writer?: { custom(chunk: { type: string; data?: unknown; transient?: boolean; id?: string }): Promise<void> };
  abort?: (reason?: string, options?: { retry?: boolean; metadata?: unknown }) => never;
}

type TextDelta = Extract<ChunkType, { type: "text-delta" }>;

const SENTENCE_END = /[.!?…](?=\s)|\n/gu;

export class TextGate {
  private readonly holdFrom: (text: string) => number;
  /** (run id, text part id) -> the text held back. */
  private readonly heldText = new Map<string, { runId: string; textId: string; text: string }>();

  constructor(readonly guard: Guard, options: TextGateOptions = {}) {
    this.holdFrom = holdFunction(options.boundary ?? "word");
  }

  /** The text held for `runId` right now (for tests and logs). */
  held(runId: string): string {
    return [...this.heldText.values()].filter((h) => h.runId === runId).map((h) => h.text).join("");
  }

  /** The body of a `processOutputStream` hook: what takes `args.part`'s place. */
  async process(args: GateArgs): Promise<ChunkType | ChunkType[]> {
    const { part } = args;
    const runId = args.runId ?? "";
    if (part.type === "text-delta") return this.delta(args, runId, part);
    const released = await this.flush(args, runId, part.type === "text-end" ? part.payload.id ?? "" : undefined, part);
    return released.length ? [...released, part] : part;
  }

  /** Forget what is held for a run that ended (the SDK also drops runs it is told ended). */
  endRun(runId: string): void {
    for (const [key, h] of this.heldText) if (h.runId === runId) this.heldText.delete(key);
  }

  private async delta(args: GateArgs, runId: string, part: TextDelta): Promise<ChunkType | ChunkType[]> {
    const textId = part.payload.id ?? "";
    const key = JSON.stringify([runId, textId]);
    const before = this.heldText.get(key)?.text ?? "";
    this.heldText.delete(key);
    const text = before + part.payload.text;
    const cut = this.holdFrom(text);
    if (cut < text.length) this.heldText.set(key, { runId, textId, text: text.slice(cut) });
    if (cut === 0) return [];
    const out = await this.guarded(text.slice(0, cut), args);
    if (!before && cut === text.length && out === part.payload.text) return part; // nothing held, nothing changed
    return out ? [deltaLike(part, textId, out)] : [];
  }

  /** Release what is held for the run (only part `textId` when given), guarded. */
  private async flush(args: GateArgs, runId: string, textId: string | undefined, like: ChunkType): Promise<ChunkType[]> {
    const out: ChunkType[] = [];
    for (const [key, h] of [...this.heldText]) {
      if (h.runId !== runId || (textId !== undefined && h.textId !== textId)) continue;
      this.heldText.delete(key);
      const text = await this.guarded(h.text, args);
      if (text) out.push(deltaLike(like, h.textId, text));
    }
    return out;
  }

  private async guarded(text: string, args: GateArgs): Promise<string> {
    return String(await this.guard(text, args));
  }
}

/** A text delta in the run of `like`. */
function deltaLike(like: ChunkType, id: string, text: string): ChunkType {
  return { runId: like.runId, from: like.from, type: "text-delta", payload: { id, text } };
}

/** The function giving the index from which a text must be held. */
function holdFunction(boundary: Boundary): (text: string) => number {
  if (boundary === "word") return holdWord;
  if (boundary === "sentence") return holdSentence;
  if (boundary instanceof RegExp) return holdPattern(boundary);
  throw new TypeError(`boundary must be "word", "sentence" or a RegExp, got ${String(boundary)}`);
}

function holdWord(text: string): number {
  if (!text || /\s/u.test(text.at(-1)!)) return text.length;
  for (let i = text.length - 1; i >= 0; i--) if (/\s/u.test(text[i]!)) return i + 1;
  return 0;
}

function holdSentence(text: string): number {
  let last = 0;
  for (const m of text.matchAll(SENTENCE_END)) last = m.index + m[0].length;
  return last;
}

function holdPattern(pattern: RegExp): (text: string) => number {
  const search = partialMatcher(pattern);
  return (text) => {
    const end = text.length;
    let pos = 0;
    while (pos <= end) {
      const m = search(text, pos);
      if (m === undefined) return end;
      if (m.partial || m.end === end) return m.end > m.start || m.partial ? Math.min(m.start, end) : end;
      pos = m.end > m.start ? m.end : m.end + 1;
    }
    return end;
  };
}
