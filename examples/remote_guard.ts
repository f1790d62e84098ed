// The `no-secrets` guard as a remote processor in TypeScript, speaking
// treadle.v1.ProcessorService/Attach with the code generated from the proto (no SDK needed; see
// docs/protocol.md for the conversation).
//
//     clients/typescript/node_modules/.bin/tsx examples/remote_guard.ts [HOST:PORT]
//
// (after `npm ci --prefix clients/typescript`). HOST:PORT defaults to 127.0.0.1:50051. Prints
// `processor no-secrets attached to HOST:PORT` once the server accepted the handshake, then serves
// until the server drains the stream, or Ctrl-C.
import {
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
} from "../clients/typescript/src/index.js";

type Outcome = MessageInitShape<typeof InvocationResultSchema>["outcome"];

const target = process.argv[2] ?? "127.0.0.1:50051";

/** processInput: refuse prompts that mention a password, before any model call. */
function noSecrets(inv: Invocation): Outcome {
  if (inv.args.case !== "processInput") {
    return { case: "error", value: { message: `no-secrets does not implement ${Hook[inv.hook]}` } };
  }
  // The hook's `messages` are the input view of the message list.
  const input = inv.args.value.messageList?.messages.filter((m) => m.source === MessageSource.INPUT) ?? [];
  for (const { message } of input) {
    for (const { part } of message?.content?.parts ?? []) {
      if (part.case === "text" && part.value.text.toLowerCase().includes("password")) {
        return { case: "abort", value: { reason: "prompts must not contain passwords" } };
      }
    }
  }
  return { case: "unchanged", value: {} };
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
      instanceId: `no-secrets-ts:${process.pid}`,
      processors: [
        {
          id: "no-secrets",
          description: "Refuses prompts that mention a password.",
          hooks: [{ hook: Hook.PROCESS_INPUT, mode: HookMode.MUTATE }],
        },
      ],
    },
  });
  for await (const response of client.attach(outbox)) {
    const message = response.message;
    switch (message.case) {
      case "welcome":
        console.log(`processor no-secrets attached to ${target}`);
        break;
      case "invocation":
        outbox.send({
          case: "result",
          value: { invocationId: message.value.invocationId, outcome: noSecrets(message.value) },
        });
        break;
      case "drain":
        outbox.close(); // every answer is already sent: end our side, the server ends the stream
        break;
      // `cancel` and `runEnded` need nothing: answers are immediate and no state is kept.
    }
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`no-secrets: cannot attach to ${target}: ${String(error)}`);
    process.exit(1);
  },
);
