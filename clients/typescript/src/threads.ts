// Memory threads over `treadle.v1.ThreadService`: threads, their messages and their runs. Every
// call names the thread's resource (its owner) as well as the thread, as the Mastra memory API
// does (`{ resourceId, threadId }`). `AgentClient` has these calls.
import type { JsonObject } from "@bufbuild/protobuf";
import { type CallOptions as RpcOptions, type Client, createClient, type Transport } from "@connectrpc/connect";
import type { Message } from "./gen/treadle/v1/message_pb.js";
import { type Run, type Thread, ThreadService } from "./gen/treadle/v1/thread_service_pb.js";

/** Options every call takes. */
export interface CallControl {
  /** Milliseconds; the call fails with DEADLINE_EXCEEDED after it. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Which thread. */
export interface ThreadKey {
  resourceId: string;
  threadId: string;
}

export interface CreateThreadOptions extends ThreadKey, CallControl {
  title?: string;
  metadata?: JsonObject;
}

/** Only the fields given change. */
export interface UpdateThreadOptions extends ThreadKey, CallControl {
  title?: string;
  metadata?: JsonObject;
}

export interface PageOptions extends CallControl {
  /** Items per request; every page is fetched either way. */
  pageSize?: number;
}

/** The thread calls; `AgentClient` extends this with the signal and agent calls. */
export class ThreadCalls {
  protected readonly threadService: Client<typeof ThreadService>;

  constructor(transport: Transport, protected readonly headers: Record<string, string>) {
    this.threadService = createClient(ThreadService, transport);
  }

  protected rpc(o: CallControl = {}): RpcOptions {
    return { headers: this.headers, timeoutMs: o.timeoutMs, signal: o.signal };
  }

  async createThread(o: CreateThreadOptions): Promise<Thread> {
    const thread = { id: o.threadId, resourceId: o.resourceId, title: o.title ?? "", metadata: o.metadata };
    return (await this.threadService.createThread({ thread }, this.rpc(o))).thread!;
  }

  async getThread(o: ThreadKey & CallControl): Promise<Thread> {
    return (await this.threadService.getThread({ resourceId: o.resourceId, threadId: o.threadId }, this.rpc(o))).thread!;
  }

  /** Every thread of the resource, most recently updated first. */
  async listThreads(o: { resourceId: string } & PageOptions): Promise<Thread[]> {
    return pages((pageToken) => this.threadService.listThreads({ resourceId: o.resourceId, pageSize: o.pageSize ?? 0, pageToken }, this.rpc(o)),
      (r) => r.threads);
  }

  async updateThread(o: UpdateThreadOptions): Promise<Thread> {
    const paths = (["title", "metadata"] as const).filter((k) => o[k] !== undefined);
    const request = {
      resourceId: o.resourceId, updateMask: { paths },
      thread: { id: o.threadId, title: o.title ?? "", metadata: o.metadata },
    };
    return (await this.threadService.updateThread(request, this.rpc(o))).thread!;
  }

  /** Delete the thread with its messages and runs. */
  async deleteThread(o: ThreadKey & CallControl): Promise<void> {
    await this.threadService.deleteThread({ resourceId: o.resourceId, threadId: o.threadId }, this.rpc(o));
  }

  /** Every message of the thread, oldest first, in the stored form. */
  async listMessages(o: ThreadKey & PageOptions): Promise<Message[]> {
    return pages((pageToken) => this.threadService.listMessages({ ...key(o), pageSize: o.pageSize ?? 0, pageToken }, this.rpc(o)),
      (r) => r.messages);
  }

  /** Every run recorded on the thread, newest first. */
  async listRuns(o: ThreadKey & PageOptions): Promise<Run[]> {
    return pages((pageToken) => this.threadService.listRuns({ ...key(o), pageSize: o.pageSize ?? 0, pageToken }, this.rpc(o)),
      (r) => r.runs);
  }
}

const key = (o: ThreadKey) => ({ resourceId: o.resourceId, threadId: o.threadId });

async function pages<R extends { nextPageToken: string }, T>(fetch: (token: string) => Promise<R>, items: (r: R) => T[]): Promise<T[]> {
  const out: T[] = [];
  let token = "";
  do {
    const page = await fetch(token);
    out.push(...items(page));
    token = page.nextPageToken;
  } while (token);
  return out;
}
