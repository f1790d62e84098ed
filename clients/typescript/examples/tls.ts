import { AgentClient } from "@treadle/client";
import { attach, type ProcessInputArgs } from "@treadle/client/processors";

const target = process.env.TREADLE_TARGET ?? "treadle.internal:50051";
const tls = { ca: process.env.TREADLE_CA, cert: process.env.TREADLE_CERT, key: process.env.TREADLE_KEY }; // PEM files
const pass = { id: "pii-guard", processInput: ({ messages }: ProcessInputArgs) => messages };
const guard = attach({ target, tls, token: process.env.GUARD_TOKEN, processors: [pass] });
await guard.ready();
const client = new AgentClient(target, { tls }); // its token: TREADLE_TOKEN
console.log((await client.generate("guarded", "hi")).text);
await guard.close();
