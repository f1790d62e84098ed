// An in-process gRPC server speaking ProcessorService and ToolService, driven by the test: each
// stream is a `Conn` whose requests the test reads and whose responses it pushes. ThreadService
// answers with the handlers the test sets.
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import {
  ProcessorService,
  type ProcessorServiceAttachRequest,
  type ProcessorServiceAttachResponse,
  ProcessorServiceAttachResponseSchema,
} from "../src/gen/treadle/v1/processor_service_pb.js";
import { ToolService, type ToolServiceAttachRequest, type ToolServiceAttachResponse } from "../src/gen/treadle/v1/tool_service_pb.js";
import { ThreadService } from "../src/gen/treadle/v1/thread_service_pb.js";

/** An async queue: `next()` waits for the next item; `end(error?)` finishes it. */
export class Queue<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private waiters: ((r: IteratorResult<T>) => void)[] = [];
  private done = false;
  error: unknown;

  push(item: T): void {
    const w = this.waiters.shift();
    if (w) w({ value: item, done: false });
    else this.items.push(item);
  }

  end(error?: unknown): void {
    this.done = true;
    this.error = error;
    for (const w of this.waiters.splice(0)) w({ value: undefined, done: true });
  }

  async next(): Promise<T> {
    const r = await this.take();
    if (r.done) throw new Error("the queue ended");
    return r.value;
  }

  private take(): Promise<IteratorResult<T>> {
    const item = this.items.shift();
    if (item !== undefined) return Promise.resolve({ value: item, done: false });
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      const r = await this.take();
      if (r.done) {
        if (this.error) throw this.error;
        return;
      }
      yield r.value;
    }
  }
}

export class Conn<Req, Res> {
  readonly requests = new Queue<Req>();
  readonly responses = new Queue<Res>();
  /** End the stream from the server side, with a status or cleanly. */
  end(code?: Code, message = ""): void {
    this.responses.end(code === undefined ? undefined : new ConnectError(message, code));
  }
}

export type ProcessorConn = Conn<ProcessorServiceAttachRequest, ProcessorServiceAttachResponse>;
export type ToolConn = Conn<ToolServiceAttachRequest, ToolServiceAttachResponse>;

export class FakeServer {
  readonly processorConns = new Queue<ProcessorConn>();
  readonly toolConns = new Queue<ToolConn>();
  /** ThreadService, as the test implements it (what it leaves out is UNIMPLEMENTED). */
  threads: Partial<ServiceImpl<typeof ThreadService>> = {};
  /** The request headers of every ThreadService call. */
  readonly headers: Headers[] = [];
  private server!: http2.Http2Server;
  private readonly sessions = new Set<http2.ServerHttp2Session>();
  target = "";

  async start(): Promise<this> {
    const serve = <Req, Res>(conns: Queue<Conn<Req, Res>>) =>
      async function* (requests: AsyncIterable<Req>): AsyncIterable<Res> {
        const conn = new Conn<Req, Res>();
        conns.push(conn);
        void (async () => {
          try {
            for await (const r of requests) conn.requests.push(r);
          } catch {
            // the client went away
          }
          conn.requests.end();
        })();
        yield* conn.responses;
      };
    const routes = (router: ConnectRouter) => {
      router.service(ProcessorService, { attach: serve(this.processorConns) });
      router.service(ToolService, { attach: serve(this.toolConns) });
      // Each method looks its handler up when called, so tests can swap `threads`.
      const impl: Record<string, unknown> = {};
      for (const name of Object.keys(ThreadService.method)) {
        const kind = ThreadService.method[name as keyof typeof ThreadService.method].methodKind;
        const call = (req: unknown, ctx: HandlerContext) => {
          this.headers.push(ctx.requestHeader);
          const h = (this.threads as Record<string, ((r: unknown, c: HandlerContext) => unknown) | undefined>)[name];
          if (!h) throw new ConnectError(`${name} is not implemented by this test`, Code.Unimplemented);
          return h(req, ctx);
        };
        impl[name] = kind === "server_streaming"
          ? async function* (req: unknown, ctx: HandlerContext) { yield* call(req, ctx) as AsyncIterable<unknown>; }
          : call;
      }
      router.service(ThreadService, impl as ServiceImpl<typeof ThreadService>);
    };
    this.server = http2.createServer(connectNodeAdapter({ routes }));
    this.server.on("session", (s) => {
      this.sessions.add(s);
      s.on("close", () => this.sessions.delete(s));
    });
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.target = `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sessions) s.destroy();
    await closed;
  }
}

/** The server's welcome, choosing `protocolVersion` (default 1). */
export function welcome(protocolVersion = 1): ProcessorServiceAttachResponse {
  return create(ProcessorServiceAttachResponseSchema, { message: { case: "welcome", value: { protocolVersion, serverId: "fake" } } });
}
