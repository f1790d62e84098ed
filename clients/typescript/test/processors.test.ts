// The processor SDK against an in-process fake server: what goes over the wire.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { MessageSource } from "../src/gen/treadle/v1/processor_service_pb.js";
import {
  Hook,
  HookMode,
  type InvocationResult,
  ProcessorServiceAttachResponseSchema,
  StreamDelivery,
} from "../src/gen/treadle/v1/processor_service_pb.js";
import { MessageRole } from "../src/gen/treadle/v1/message_pb.js";
import { AttachError, attach, type Processor, type ProcessOutputStreamArgs } from "../src/processors.js";
import type { ChunkType } from "../src/stream.js";
import { valueToJs } from "../src/internal/plain.js";
import { FakeServer, type ProcessorConn, welcome } from "./fake_server.js";

type Inv = MessageInitShape<typeof ProcessorServiceAttachResponseSchema>;
const invocation = (value: NonNullable<Extract<Inv["message"], { case: "invocation" }>>["value"]) =>
  create(ProcessorServiceAttachResponseSchema, { message: { case: "invocation", value } });

const textDelta = (text: string) => ({ runId: "r1", chunk: { case: "textDelta" as const, value: { id: "t", text } } });

async function result(conn: ProcessorConn): Promise<InvocationResult> {
  const r = await conn.requests.next();
  assert.equal(r.message.case, "result");
  return r.message.value as InvocationResult;
}

/** A promise and its resolver. */
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

let server: FakeServer;
before(async () => {
  server = await new FakeServer().start();
});
after(() => server.stop());

/** Attach `processors`, welcome the handshake with `version`; returns the stream and the handshake. */
async function attached(processors: object[], version = 1) {
  const handle = attach({ target: server.target, processors, backoff: [10, 50] });
  const conn = await server.processorConns.next();
  const hello = await conn.requests.next();
  assert.equal(hello.message.case, "handshake");
  conn.responses.push(welcome(version));
  await handle.ready(5000);
  return { handle, conn, handshake: hello.message.value };
}

/** A stream processor whose answer depends on the delta's text. */
const editing = () => ({
  id: "p",
  async processOutputStream({ part, abort, writer }: ProcessOutputStreamArgs) {
    if (part.type !== "text-delta") return part;
    if (part.payload.text === "drop") return null;
    if (part.payload.text === "none") return [];
    if (part.payload.text === "two") return [part, part];
    if (part.payload.text === "shout") return { ...part, payload: { ...part.payload, text: "SHOUT" } };
    if (part.payload.text === "edit") {
      part.payload.text = "edited"; // in place: still a replacement
      return part;
    }
    if (part.payload.text === "stop") abort("stopped");
    if (part.payload.text === "boom") throw new Error("boom");
    await writer.custom({ type: "data-seen", data: { text: part.payload.text } });
    return part;
  },
});

const streamInvocation = (texts: string[]) => invocation({
  invocationId: "w", processorId: "p", hook: Hook.PROCESS_OUTPUT_STREAM, runId: "r",
  args: { case: "processOutputStream", value: { parts: texts.map(textDelta) } },
});

const outcomesOf = (r: InvocationResult) =>
  (r.outcome.value as { chunks: { outcome: { case: string; value: unknown } }[] }).chunks.map((c) => c.outcome);

describe("handshake", () => {
  test("declares exactly the hooks the object has, and the stream defaults", async () => {
    class Both implements Processor {
      id = "both";
      description = "input and stream";
      processDataParts = true;
      observe = ["processInput"];
      async processInput() {}
      async processOutputStream({ part }: ProcessOutputStreamArgs) {
        return part;
      }
    }
    const { handle, handshake } = await attached([new Both()]);
    assert.deepEqual(handshake.protocolVersions, [1, 2]);
    const [d] = handshake.processors;
    assert.equal(d!.id, "both");
    assert.equal(d!.description, "input and stream");
    assert.deepEqual(d!.hooks.map((h) => [h.hook, h.mode]), [
      [Hook.PROCESS_INPUT, HookMode.OBSERVE],
      [Hook.PROCESS_OUTPUT_STREAM, HookMode.MUTATE],
    ]);
    assert.equal(d!.hooks[1]!.delivery, StreamDelivery.WINDOWED);
    assert.equal(d!.hooks[1]!.maxInFlight, 4);
    assert.equal(d!.hooks[1]!.processDataParts, true);
    assert.ok(handle.attached());
    await handle.close();
  });

  test("a processor without hooks or id is refused before anything is sent", () => {
    assert.throws(() => attach({ target: server.target, processors: [{ id: "x" }] }), /implements no hook/);
    assert.throws(() => attach({ target: server.target, processors: [{ processInput() {} }] }), /non-empty string `id`/);
  });

  test("a refused handshake rejects ready() and is never retried", async () => {
    const handle = attach({ target: server.target, processors: [{ id: "p", processInput() {} }], backoff: [10, 50] });
    const conn = await server.processorConns.next();
    await conn.requests.next();
    conn.end(Code.InvalidArgument, "processor id p is served with other hooks");
    await assert.rejects(handle.ready(5000), (e: unknown) => e instanceof AttachError && e.code === Code.InvalidArgument
      && /other hooks/.test(e.message));
    assert.equal(handle.streamsOpened(server.target), 1);
    await handle.close();
  });

  test("a stream that ends is reopened, with a new handshake", async () => {
    const { handle, conn } = await attached([{ id: "p", processInput() {} }]);
    conn.end(Code.Unavailable, "restarting");
    const again = await server.processorConns.next();
    assert.equal((await again.requests.next()).message.case, "handshake");
    again.responses.push(welcome());
    assert.equal(handle.streamsOpened(server.target), 2);
    await handle.close();
    await again.requests.next().then(() => assert.fail("no more requests"), () => {}); // the client closed its side
  });
});

describe("invocations", () => {
  test("a hook's answer carries its abort, with the tripwire metadata", async () => {
    const { handle, conn } = await attached([{
      id: "guard",
      processInput({ abort }: { abort: (r: string, o: object) => never }) {
        abort("no", { retry: true, metadata: { score: 0.2 } });
      },
    }]);
    conn.responses.push(invocation({
      invocationId: "i1", processorId: "guard", hook: Hook.PROCESS_INPUT, runId: "r1",
      args: { case: "processInput", value: { messageList: {} } },
    }));
    const r = await result(conn);
    assert.equal(r.invocationId, "i1");
    assert.equal(r.outcome.case, "abort");
    assert.equal(r.outcome.value!.reason, "no");
    assert.equal((r.outcome.value as { retry: boolean }).retry, true);
    await handle.close();
  });

  test("returning the messages it was given is no change; an edit sends the whole list", async () => {
    const message = {
      id: "m1", role: MessageRole.USER, createdAt: timestampFromMs(1_700_000_000_123),
      content: { format: 2, parts: [{ part: { case: "text" as const, value: { text: "Hello" } } }] },
    };
    const snapshot = { messages: [{ message, source: MessageSource.INPUT }], systemMessages: [{ content: "be terse" }] };
    let calls = 0;
    const { handle, conn } = await attached([{
      id: "p",
      async processInput({ messages }: { messages: { content: { parts: { text: string }[] } }[] }) {
        if (calls++ === 0) return messages;
        messages[0]!.content.parts[0]!.text = "hello";
        return messages;
      },
    }]);
    for (const id of ["i1", "i2"]) {
      conn.responses.push(invocation({
        invocationId: id, processorId: "p", hook: Hook.PROCESS_INPUT, runId: id,
        args: { case: "processInput", value: { messageList: snapshot } },
      }));
    }
    assert.equal((await result(conn)).outcome.case, "unchanged");
    const edited = await result(conn);
    assert.equal(edited.outcome.case, "replace");
    const replacement = (edited.outcome.value as { messages: { messages: { id: string; content: { parts: { part: { value: { text: string } } }[] } }[] } }).messages;
    assert.equal(replacement.messages[0]!.id, "m1");
    assert.equal(replacement.messages[0]!.content.parts[0]!.part.value.text, "hello");
    await handle.close();
  });

  test("invocations of one run are answered in arrival order; other runs do not wait", async () => {
    const gates = new Map<string, ReturnType<typeof deferred>>([["a1", deferred()], ["b1", deferred()]]);
    const { handle, conn } = await attached([{
      id: "p",
      async processOutputStream({ part }: ProcessOutputStreamArgs) {
        const text = (part as Extract<ChunkType, { type: "text-delta" }>).payload.text;
        await gates.get(text)?.promise;
        return part;
      },
    }]);
    const send = (id: string, run: string, text: string) => conn.responses.push(invocation({
      invocationId: id, processorId: "p", hook: Hook.PROCESS_OUTPUT_STREAM, runId: run,
      args: { case: "processOutputStream", value: { parts: [textDelta(text)] } },
    }));
    send("1", "A", "a1"); // held until its gate opens
    send("2", "A", "a2"); // same run: waits for 1
    send("3", "B", "b1"); // another run, held
    send("4", "C", "c1"); // another run: answered at once
    assert.equal((await result(conn)).invocationId, "4");
    gates.get("b1")!.resolve();
    assert.equal((await result(conn)).invocationId, "3");
    gates.get("a1")!.resolve();
    assert.deepEqual([(await result(conn)).invocationId, (await result(conn)).invocationId], ["1", "2"]);
    await handle.close();
  });

  test("state: kept per run, sent only when changed, replaced only by a newer version", async () => {
    const seen: unknown[] = [];
    const { handle, conn } = await attached([{
      id: "p",
      async processOutputStream({ part, state }: ProcessOutputStreamArgs) {
        seen.push(structuredClone(state));
        if (part.type === "text-delta" && part.payload.text === "count") state.n = (state.n ?? 0) + 1;
        return part;
      },
    }]);
    const send = (id: string, run: string, text: string, state?: { value: object; version: bigint }) =>
      conn.responses.push(invocation({
        invocationId: id, processorId: "p", hook: Hook.PROCESS_OUTPUT_STREAM, runId: run, state: state as never,
        args: { case: "processOutputStream", value: { parts: [textDelta(text)] } },
      }));
    send("1", "r", "count", { value: { n: 10 }, version: 3n });
    const r1 = await result(conn);
    assert.deepEqual([r1.state?.value, r1.state?.version], [{ n: 11 }, 4n]);
    send("2", "r", "look");
    assert.equal((await result(conn)).state, undefined); // unchanged: not resent
    send("3", "r", "look", { value: { n: 0 }, version: 1n }); // older than ours: ignored
    await result(conn);
    send("4", "other", "look");
    await result(conn);
    assert.deepEqual(seen, [{ n: 10 }, { n: 11 }, { n: 11 }, {}]);
    // run_ended: the run's state is forgotten
    conn.responses.push(create(ProcessorServiceAttachResponseSchema, { message: { case: "runEnded", value: { runId: "r" } } }));
    send("5", "r", "look");
    await result(conn);
    assert.deepEqual(seen.at(-1), {});
    await handle.close();
  });

  test("a windowed invocation gets one outcome per chunk; writer.custom chunks travel with them", async () => {
    const { handle, conn } = await attached([editing()]);
    conn.responses.push(streamInvocation(["keep", "drop", "none", "two", "shout", "edit", "boom", "stop", "never"]));
    const r = await result(conn);
    assert.equal(r.outcome.case, "stream");
    const outcomes = outcomesOf(r);
    assert.deepEqual(outcomes.map((o) => o.case), ["unchanged", "drop", "drop", "error", "replace", "replace", "error", "abort"]);
    assert.match((outcomes[3]!.value as { message: string }).message, /protocol version 1 replaces a chunk by one chunk, not 2/);
    const replaced = outcomes[4]!.value as { chunk: { value: { text: string } } };
    assert.equal(replaced.chunk.value.text, "SHOUT");
    assert.equal((outcomes[5]!.value as { chunk: { value: { text: string } } }).chunk.value.text, "edited");
    assert.deepEqual(r.customChunks.map((c) => [c.name, valueToJs(c.data)]), [["data-seen", { text: "keep" }]]);
    await handle.close();
  });

  test("with protocol version 2 an array replaces the chunk by its chunks: none holds it, several release", async () => {
    const { handle, conn } = await attached([editing()], 2);
    conn.responses.push(streamInvocation(["keep", "none", "two", "shout", "drop"]));
    const outcomes = outcomesOf(await result(conn));
    assert.deepEqual(outcomes.map((o) => o.case), ["unchanged", "chunks", "chunks", "replace", "drop"]);
    const texts = (o: { value: unknown }) => (o.value as { chunks: { chunk: { value: { text: string } } }[] }).chunks.map((c) => c.chunk.value.text);
    assert.deepEqual(texts(outcomes[1]!), []);
    assert.deepEqual(texts(outcomes[2]!), ["two", "two"]);
    await handle.close();
  });

  test("cancel fires the hook's abortSignal and sends no answer", async () => {
    const started = deferred();
    const { handle, conn } = await attached([{
      id: "p",
      async processInput({ abortSignal }: { abortSignal: AbortSignal }) {
        started.resolve();
        await new Promise((resolve) => abortSignal.addEventListener("abort", resolve));
        return [];
      },
      async processOutputResult() {},
    }]);
    conn.responses.push(invocation({
      invocationId: "slow", processorId: "p", hook: Hook.PROCESS_INPUT, runId: "r1",
      args: { case: "processInput", value: { messageList: {} } },
    }));
    await started.promise;
    conn.responses.push(create(ProcessorServiceAttachResponseSchema, { message: { case: "cancel", value: { invocationId: "slow", reason: "timeout" } } }));
    conn.responses.push(invocation({
      invocationId: "next", processorId: "p", hook: Hook.PROCESS_OUTPUT_RESULT, runId: "r1",
      args: { case: "processOutputResult", value: { messageList: {} } },
    }));
    assert.equal((await result(conn)).invocationId, "next"); // "slow" was never answered
    await handle.close();
  });

  test("a passed deadline fires the abortSignal", async () => {
    const { handle, conn } = await attached([{
      id: "p",
      async processInput({ abortSignal }: { abortSignal: AbortSignal }) {
        await new Promise((resolve) => abortSignal.addEventListener("abort", resolve));
        return [];
      },
      async processOutputResult() {},
    }]);
    conn.responses.push(invocation({
      invocationId: "late", processorId: "p", hook: Hook.PROCESS_INPUT, runId: "r1", deadline: timestampFromMs(Date.now() + 20),
      args: { case: "processInput", value: { messageList: {} } },
    }));
    conn.responses.push(invocation({
      invocationId: "next", processorId: "p", hook: Hook.PROCESS_OUTPUT_RESULT, runId: "r1",
      args: { case: "processOutputResult", value: { messageList: {} } },
    }));
    assert.equal((await result(conn)).invocationId, "next");
    await handle.close();
  });

  test("the invocation's timeout wins over its deadline (the two clocks may disagree)", async () => {
    const { handle, conn } = await attached([{
      id: "p",
      async processInput({ abortSignal }: { abortSignal: AbortSignal }) {
        await new Promise((resolve) => abortSignal.addEventListener("abort", resolve));
        return [];
      },
      async processOutputResult() {},
    }], 2);
    conn.responses.push(invocation({
      invocationId: "late", processorId: "p", hook: Hook.PROCESS_INPUT, runId: "r1",
      deadline: timestampFromMs(Date.now() + 3_600_000), timeout: { seconds: 0n, nanos: 20_000_000 },
      args: { case: "processInput", value: { messageList: {} } },
    }));
    conn.responses.push(invocation({
      invocationId: "next", processorId: "p", hook: Hook.PROCESS_OUTPUT_RESULT, runId: "r1",
      args: { case: "processOutputResult", value: { messageList: {} } },
    }));
    assert.equal((await result(conn)).invocationId, "next"); // "late" gave up after 20 ms, unanswered
    await handle.close();
  });
});

describe("tracing", () => {
  test("each invocation's span is a child of the trace context it carries", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const handle = attach({
      target: server.target, tracerProvider: provider, backoff: [10, 50],
      processors: [{ id: "p", async processInput() {} }],
    });
    const conn = await server.processorConns.next();
    await conn.requests.next();
    conn.responses.push(welcome());
    await handle.ready(5000);
    const traceId = "0af7651916cd43dd8448eb211c80319c";
    conn.responses.push(invocation({
      invocationId: "t", processorId: "p", hook: Hook.PROCESS_INPUT, runId: "r",
      traceContext: { traceparent: `00-${traceId}-b7ad6b7169203331-01` },
      args: { case: "processInput", value: { messageList: {} } },
    }));
    await result(conn);
    const [span] = exporter.getFinishedSpans();
    assert.equal(span!.name, "processInput p");
    assert.equal(span!.spanContext().traceId, traceId);
    assert.equal(span!.parentSpanContext?.spanId, "b7ad6b7169203331");
    assert.equal(span!.attributes["treadle.processor.id"], "p");
    await handle.close();
  });
});
