import { trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { attach, type ProcessOutputStreamArgs } from "@treadle/client/processors";

const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
trace.setGlobalTracerProvider(provider); // each hook's span: a child of the server's hook span
const echo = { id: "traced-echo", processOutputStream: async ({ part }: ProcessOutputStreamArgs) => part };
const handle = attach({ target: process.env.TREADLE_TARGET ?? "127.0.0.1:50051", processors: [echo] });
process.once("SIGTERM", () => handle.close().then(() => provider.shutdown()));
