// Spans for invocations, children of the W3C trace context each invocation carries.
// `@opentelemetry/api` is an optional peer dependency: without it, nothing is traced.
import type * as OtelApi from "@opentelemetry/api";
import type { TraceContext } from "../gen/treadle/v1/remote_pb.js";

type Api = typeof OtelApi;

let api: Api | null | undefined;

/** Loads `@opentelemetry/api` once, if it is installed. */
export async function loadTracing(): Promise<void> {
  if (api !== undefined) return;
  try {
    api = (await import("@opentelemetry/api")) as Api;
  } catch {
    api = null;
  }
}

export const INSTRUMENTATION = "@treadle/client";

export interface Tracer {
  /** Runs `fn` in a span `name` that is a child of `carrier`'s span. */
  run<T>(name: string, carrier: TraceContext | undefined, attributes: Record<string, string | number | boolean>,
    fn: (span: Span) => Promise<T>): Promise<T>;
}

export interface Span {
  readonly otel: unknown;
  setAttribute(key: string, value: string | number | boolean): void;
  error(e: unknown): void;
}

const NOOP_SPAN: Span = { otel: undefined, setAttribute() {}, error() {} };

/** `00-<trace id>-<span id>-<flags>`, the W3C traceparent header. */
const TRACEPARENT = /^([\da-f]{2})-([\da-f]{32})-([\da-f]{16})-([\da-f]{2})$/;

function parentContext(a: Api, carrier: TraceContext | undefined): OtelApi.Context {
  let ctx = a.ROOT_CONTEXT;
  const m = carrier?.traceparent ? TRACEPARENT.exec(carrier.traceparent.trim()) : null;
  if (m && m[1] !== "ff") {
    ctx = a.trace.setSpanContext(ctx, {
      traceId: m[2]!, spanId: m[3]!, traceFlags: parseInt(m[4]!, 16) & 1, isRemote: true,
      ...(carrier?.tracestate ? { traceState: a.createTraceState(carrier.tracestate) } : {}),
    });
  }
  if (carrier?.baggage) {
    const entries: Record<string, OtelApi.BaggageEntry> = {};
    for (const item of carrier.baggage.split(",")) {
      const [kv] = item.split(";");
      const at = kv?.indexOf("=") ?? -1;
      if (kv && at > 0) entries[decodeURIComponent(kv.slice(0, at).trim())] = { value: decodeURIComponent(kv.slice(at + 1).trim()) };
    }
    ctx = a.propagation.setBaggage(ctx, a.propagation.createBaggage(entries));
  }
  return ctx;
}

/** The SDK's tracer, from `provider` or the global provider; a no-op without the API. */
export function makeTracer(provider?: OtelApi.TracerProvider): Tracer {
  return {
    async run(name, carrier, attributes, fn) {
      const a = api;
      if (!a) return fn(NOOP_SPAN);
      const tracer = (provider ?? a.trace.getTracerProvider()).getTracer(INSTRUMENTATION);
      const parent = parentContext(a, carrier);
      const span = tracer.startSpan(name, { kind: a.SpanKind.SERVER, attributes }, parent);
      const wrapped: Span = {
        otel: span,
        setAttribute: (k, v) => span.setAttribute(k, v),
        error: (e) => {
          span.recordException(e instanceof Error ? e : String(e));
          span.setStatus({ code: a.SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
        },
      };
      try {
        return await a.context.with(a.trace.setSpan(parent, span), () => fn(wrapped));
      } finally {
        span.end();
      }
    },
  };
}
