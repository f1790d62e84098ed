// One long-lived Attach stream per server, reopened with exponential backoff and full jitter
// until the handle is closed. The processor and tool SDKs differ only in their `Session`: what
// they say in the handshake and how they answer what the server sends. A session lives for one
// stream; when the stream ends its in-flight work is abandoned (the server no longer waits for
// it) and a new stream, with a new handshake, is opened after a backoff. A handshake the server
// refused (a status in FATAL) is never retried: it would be refused again.
import { Code, ConnectError } from "@connectrpc/connect";
import type { Transport } from "@connectrpc/connect";
import { hostname } from "node:os";
import { type ConnectOptions, transportFor } from "./connect.js";

/** `ToolService.Attach` speaks version 1. */
export const TOOL_PROTOCOL_VERSIONS = [1];

const FATAL = new Set([Code.InvalidArgument, Code.FailedPrecondition, Code.PermissionDenied, Code.Unauthenticated, Code.Unimplemented]);

/** A server refused the handshake (the message says why); the SDK does not retry it. */
export class AttachError extends Error {
  constructor(readonly target: string, readonly code: Code, readonly details: string) {
    super(`${target}: ${Code[code]}: ${details}`);
    this.name = "AttachError";
  }
}

export interface Session<Req, Res> {
  handshake(): Req;
  /** Handle one server message; true when it was the welcome. */
  onMessage(message: Res, send: (m: Req) => void): boolean;
  /** The stream ended: abandon in-flight work. */
  close(): void;
}

export type OpenStream<Req, Res> = (transport: Transport, requests: AsyncIterable<Req>, signal: AbortSignal) => AsyncIterable<Res>;

export interface LinkOptions extends ConnectOptions {
  /** Initial and maximum delay between reconnects, in milliseconds. */
  backoff?: [number, number];
  /** Called before the first stream opens (e.g. to load OpenTelemetry). */
  beforeFirst?: () => Promise<void>;
  log?: (message: string) => void;
}

export function defaultInstanceId(): string {
  return `${hostname()}:${process.pid}`;
}

/** The request side of a stream: messages are pushed, the transport pulls them. */
class Outbox<T> implements AsyncIterable<T> {
  private queue: T[] = [];
  private wake: (() => void) | undefined;
  private closed = false;

  push(message: T): void {
    this.queue.push(message);
    this.wake?.();
  }

  close(): void {
    this.closed = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      const next = this.queue.shift();
      if (next !== undefined) yield next;
      else if (this.closed) return;
      else await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}

export class Link<Req, Res> {
  attached = false;
  streamsOpened = 0;
  error: AttachError | undefined;
  readonly welcomed: Promise<void>;
  private resolveWelcomed!: () => void;
  private stopped = false;
  private current: AbortController | undefined;
  private wakeSleep: (() => void) | undefined;
  private readonly done: Promise<void>;
  private readonly backoff: [number, number];

  constructor(
    readonly target: string,
    private readonly open: OpenStream<Req, Res>,
    private readonly makeSession: () => Session<Req, Res>,
    private readonly options: LinkOptions,
  ) {
    const [lo, hi] = options.backoff ?? [100, 5000];
    if (!(lo > 0) || !(hi >= lo)) throw new RangeError(`backoff must be [initial > 0, maximum >= initial], got [${lo}, ${hi}]`);
    this.backoff = [lo, hi];
    this.welcomed = new Promise((resolve) => (this.resolveWelcomed = resolve));
    this.done = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.current?.abort();
    this.wakeSleep?.();
    await this.done;
  }

  private log(message: string): void {
    this.options.log?.(message);
  }

  private async run(): Promise<void> {
    await this.options.beforeFirst?.();
    let delay = this.backoff[0];
    while (!this.stopped) {
      let welcomed = false;
      try {
        welcomed = await this.once();
      } catch (e) {
        if (e instanceof AttachError) {
          this.error = e;
          this.log(`attach refused by ${e.message}`);
          this.resolveWelcomed(); // wake ready(), which reports the error
          return;
        }
        this.log(`stream to ${this.target} failed: ${String(e)}`);
      }
      if (this.stopped) return;
      if (welcomed) delay = this.backoff[0];
      // Full jitter keeps a fleet of processes from reconnecting in lock-step.
      const wait = delay / 2 + Math.random() * (delay / 2);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        this.wakeSleep = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      delay = Math.min(delay * 2, this.backoff[1]);
    }
  }

  private async once(): Promise<boolean> {
    const abort = new AbortController();
    this.current = abort;
    const outbox = new Outbox<Req>();
    const session = this.makeSession();
    const send = (m: Req) => outbox.push(m);
    outbox.push(session.handshake());
    let welcomed = false;
    try {
      const transport = transportFor(this.target, this.options);
      this.streamsOpened++;
      for await (const message of this.open(transport, outbox, abort.signal)) {
        if (session.onMessage(message, send)) {
          welcomed = true;
          this.attached = true;
          this.resolveWelcomed();
          this.log(`attached to ${this.target}`);
        }
      }
      this.log(`${this.target} ended the stream; reconnecting`);
    } catch (e) {
      if (this.stopped) return welcomed;
      const err = ConnectError.from(e);
      if (FATAL.has(err.code)) throw new AttachError(this.target, err.code, err.rawMessage);
      this.log(`stream to ${this.target} ended: ${Code[err.code]} ${err.rawMessage}; reconnecting`);
    } finally {
      this.attached = false;
      outbox.close();
      abort.abort();
      session.close();
    }
    return welcomed;
  }
}

/** Processors or tools attached to one or more servers. */
export class Handle<Req, Res> {
  private readonly links: Link<Req, Res>[];

  constructor(targets: string | string[], open: OpenStream<Req, Res>, makeSession: () => Session<Req, Res>, options: LinkOptions) {
    const list = typeof targets === "string" ? [targets] : [...targets];
    if (list.length === 0) throw new TypeError("give at least one target (host:port)");
    this.links = list.map((t) => new Link(t, open, makeSession, options));
  }

  get targets(): string[] {
    return this.links.map((l) => l.target);
  }

  /** True while the stream to `target` (or to every target) is welcomed and open. */
  attached(target?: string): boolean {
    const links = this.links.filter((l) => target === undefined || l.target === target);
    return links.length > 0 && links.every((l) => l.attached);
  }

  /** How many streams were opened to `target` (reconnects included). */
  streamsOpened(target: string): number {
    return this.links.find((l) => l.target === target)?.streamsOpened ?? 0;
  }

  /** Resolves once every target has welcomed the handshake; rejects with `AttachError` if one refused. */
  async ready(timeoutMs?: number): Promise<void> {
    const wait = (async () => {
      for (const link of this.links) {
        await link.welcomed;
        if (link.error) throw link.error;
      }
    })();
    if (timeoutMs === undefined) return wait;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`not attached within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([wait, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Close every stream; in-flight invocations are abandoned. */
  async close(): Promise<void> {
    await Promise.all(this.links.map((l) => l.stop()));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
