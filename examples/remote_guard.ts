// The `no-secrets` guard as a remote processor in TypeScript, on the SDK (`@treadle/client`):
// the same object as an in-process Mastra processor; the SDK does the protocol.
//
//     clients/typescript/node_modules/.bin/tsx examples/remote_guard.ts [HOST:PORT]
//
// (after `npm ci --prefix clients/typescript`). HOST:PORT defaults to $TREADLE_TARGET, else 127.0.0.1:50051. Prints
// `processor no-secrets attached to HOST:PORT` once the server accepted the handshake, and a line
// per failed try while the server cannot be reached; serves until SIGTERM or Ctrl-C.
import { attach, type ProcessInputArgs, type Processor } from "../clients/typescript/src/processors.js";

const target = process.argv[2] ?? process.env.TREADLE_TARGET ?? "127.0.0.1:50051";

/** Refuses prompts that mention a password, before any model call. */
class NoSecrets implements Processor {
  id = "no-secrets";
  description = "Refuses prompts that mention a password.";

  processInput({ messages, abort }: ProcessInputArgs) {
    for (const part of messages.flatMap((m) => m.content.parts)) {
      if (part.type === "text" && part.text.toLowerCase().includes("password")) abort("prompts must not contain passwords");
    }
    return messages;
  }
}

const handle = attach({
  target, processors: [new NoSecrets()],
  log: (line) => line.startsWith("stream to") && console.error(`processor no-secrets: ${line}`),
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void handle.close());
handle.ready().then(
  () => console.log(`processor no-secrets attached to ${target}`),
  (error: unknown) => {
    console.error(`no-secrets: ${String(error)}`); // a refused handshake is not retried
    process.exitCode = 1;
  },
);
