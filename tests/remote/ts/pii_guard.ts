// The PII guard (clients/python/examples/pii_guard.py) as a TypeScript processor process,
// speaking ProcessorService.Attach protocol version 2 with the generated code only (no SDK).
//
//     tsx tests/remote/ts/pii_guard.ts TARGET [windowed]     # TARGET: host:port of the server
//
// Serves processor `pii-guard` (processOutputStream, MUTATE). A text gate in a few lines: the
// trailing run of characters that could still be part of an e-mail address is held; the rest
// is redacted and released at once; what is held is released (redacted) before the part's
// text-end. Prints `ready` after the welcome; exits when stdin closes or the stream ends.
import {
  type Chunk,
  type ChunkOutcomeSchema,
  type ChunkSchema,
  type Invocation,
  type InvocationResultSchema,
  type MessageInitShape,
  type ProcessorServiceAttachRequest,
  Hook,
  HookMode,
  ProcessorService,
  ProcessorServiceAttachRequestSchema,
  StreamDelivery,
  create,
  createClient,
  createGrpcTransport,
} from "../../../clients/typescript/src/index.js";

type Outcome = MessageInitShape<typeof InvocationResultSchema>["outcome"];
type ChunkInit = MessageInitShape<typeof ChunkSchema>;

const [target, delivery] = process.argv.slice(2);
if (!target) {
  console.error("usage: pii_guard.ts TARGET [windowed]");
  process.exit(2);
}

const EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;
const OPEN_SPAN = /[\w.+@-]*$/; // what could still grow into an address

const redact = (text: string) => text.replace(EMAIL, "[email]");

/** Held text per run and text part. */
const held = new Map<string, string>();

const delta = (id: string, text: string): ChunkInit => ({ chunk: { case: "textDelta", value: { id, text } } });

/** What takes one chunk's place: nothing (held), released deltas, and/or the chunk itself. */
function gate(runId: string, part: Chunk): ChunkInit[] | undefined {
  if (part.chunk.case === "textDelta") {
    const key = `${runId}/${part.chunk.value.id}`;
    const text = (held.get(key) ?? "") + part.chunk.value.text;
    const cut = text.length - (OPEN_SPAN.exec(text)?.[0].length ?? 0);
    held.set(key, text.slice(cut));
    const released = redact(text.slice(0, cut));
    return released ? [delta(part.chunk.value.id, released)] : [];
  }
  const out: ChunkInit[] = [];
  for (const [key, text] of held) {
    const [run, id] = [key.slice(0, key.indexOf("/")), key.slice(key.indexOf("/") + 1)];
    if (run !== runId || (part.chunk.case === "textEnd" && id !== part.chunk.value.id)) continue;
    held.delete(key);
    if (text) out.push(delta(id, redact(text)));
  }
  return out.length ? [...out, part] : undefined; // undefined: the chunk passes unchanged
}

function outcome(inv: Invocation): Outcome {
  if (inv.args.case !== "processOutputStream") {
    return { case: "error", value: { message: `pii-guard does not implement ${Hook[inv.hook]}` } };
  }
  const chunks = inv.args.value.parts.map((part): MessageInitShape<typeof ChunkOutcomeSchema> => {
    const replaced = gate(inv.runId, part);
    return replaced === undefined
      ? { outcome: { case: "unchanged" as const, value: {} } }
      : { outcome: { case: "chunks" as const, value: { chunks: replaced } } };
  });
  return { case: "stream", value: { chunks } };
}

/** The request side of the stream: messages are pushed, the transport pulls them. */
class Outbox implements AsyncIterable<ProcessorServiceAttachRequest> {
  private queue: ProcessorServiceAttachRequest[] = [];
  private wake: (() => void) | undefined;
  private closed = false;

  send(message: MessageInitShape<typeof ProcessorServiceAttachRequestSchema>["message"]): void {
    this.queue.push(create(ProcessorServiceAttachRequestSchema, { message }));
    this.wake?.();
  }

  close(): void {
    this.closed = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ProcessorServiceAttachRequest> {
    for (;;) {
      const next = this.queue.shift();
      if (next) yield next;
      else if (this.closed) return;
      else await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}

async function main(): Promise<void> {
  const client = createClient(ProcessorService, createGrpcTransport({ baseUrl: `http://${target}` }));
  const outbox = new Outbox();
  outbox.send({
    case: "handshake",
    value: {
      protocolVersions: [2], // hold and release needs version 2
      instanceId: `pii-guard-ts:${process.pid}`,
      processors: [
        {
          id: "pii-guard",
          description: "Redacts e-mail addresses from the streamed answer.",
          hooks: [
            {
              hook: Hook.PROCESS_OUTPUT_STREAM,
              mode: HookMode.MUTATE,
              delivery: delivery === "windowed" ? StreamDelivery.WINDOWED : StreamDelivery.PER_CHUNK,
            },
          ],
        },
      ],
    },
  });
  for await (const response of client.attach(outbox)) {
    const message = response.message;
    switch (message.case) {
      case "welcome":
        console.log("ready");
        break;
      case "invocation":
        outbox.send({
          case: "result",
          value: { invocationId: message.value.invocationId, outcome: outcome(message.value) },
        });
        break;
      case "runEnded":
        for (const key of [...held.keys()]) if (key.startsWith(`${message.value.runId}/`)) held.delete(key);
        break;
      // `drain`: runs still running keep sending invocations, answered as ever; the server ends
      // the stream once they are done.
    }
  }
}

// The test closes stdin to stop the process.
process.stdin.on("end", () => process.exit(0)).resume();
main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
