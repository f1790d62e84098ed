// The seed's ContentFilter (tests/seed_processors.py) as a TypeScript processor process, speaking
// ProcessorService.Attach with the generated code only (no SDK).
//
//     tsx tests/remote/ts/content_filter.ts TARGET WORD...     # TARGET: host:port of the server
//
// Serves processor `content-filter` (processInput and processOutputStream, both MUTATE). Prints
// `ready` after the welcome; exits when stdin closes or the stream ends.
import {
  type Chunk,
  type Invocation,
  type InvocationResultSchema,
  type MessageInitShape,
  type ProcessorServiceAttachRequest,
  Hook,
  HookMode,
  MessageSource,
  ProcessorService,
  ProcessorServiceAttachRequestSchema,
  create,
  createClient,
  createGrpcTransport,
} from "../../../clients/typescript/src/index.js";

type Outcome = MessageInitShape<typeof InvocationResultSchema>["outcome"];

const [target, ...blockedWords] = process.argv.slice(2);
if (!target || blockedWords.length === 0) {
  console.error("usage: content_filter.ts TARGET WORD...");
  process.exit(2);
}

const blocked = (text: string) => blockedWords.some((word) => text.includes(word));

/** What the seed's ContentFilter decides for one invocation. */
function outcome(inv: Invocation): Outcome {
  const abort = (reason: string) => ({ case: "abort" as const, value: { reason } });
  switch (inv.args.case) {
    case "processInput": {
      // The hook's `messages` are the input view of the message list.
      const input = inv.args.value.messageList?.messages.filter((m) => m.source === MessageSource.INPUT) ?? [];
      for (const { message } of input) {
        const parts = message?.content?.parts ?? [];
        const text = parts.flatMap((p) => (p.part.case === "text" ? [p.part.value.text] : [])).join(" ");
        if (blocked(text)) return abort("Blocked content detected in input");
      }
      return { case: "unchanged", value: {} };
    }
    case "processOutputStream": {
      // One outcome per part, in order; nothing after an abort.
      const chunks = [];
      for (const part of inv.args.value.parts) {
        if (isBlockedDelta(part)) {
          chunks.push({ outcome: abort("Blocked content detected in output") });
          break;
        }
        chunks.push({ outcome: { case: "unchanged" as const, value: {} } });
      }
      return { case: "stream", value: { chunks } };
    }
    default:
      return { case: "error", value: { message: `content-filter does not implement ${Hook[inv.hook]}` } };
  }
}

function isBlockedDelta(part: Chunk): boolean {
  return part.chunk.case === "textDelta" && blocked(part.chunk.value.text);
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
      protocolVersions: [1],
      instanceId: `content-filter-ts:${process.pid}`,
      processors: [
        {
          id: "content-filter",
          description: "Aborts on blocked words in the input or the output stream.",
          hooks: [
            { hook: Hook.PROCESS_INPUT, mode: HookMode.MUTATE },
            { hook: Hook.PROCESS_OUTPUT_STREAM, mode: HookMode.MUTATE },
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
      // `drain`: runs still running keep sending invocations, answered as ever; the server ends
      // the stream once they are done.
      // `cancel` and `run_ended` need nothing: answers are immediate and no state is kept.
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
