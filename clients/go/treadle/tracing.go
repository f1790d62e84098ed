package treadle

import (
	"context"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// instrumentation names the SDK's tracer.
const instrumentation = "github.com/treadle-dev/treadle/clients/go/treadle"

// WithTracerProvider sets where invocation spans go (default: otel.GetTracerProvider()). Each
// processor invocation runs in a span "{hook} {processor id}" (e.g. "processOutputStream
// pii-guard") and each tool call in "execute_tool {name}", a child of the server's span whose
// W3C trace context the invocation carries; the hook's ctx holds the span and the baggage.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) { o.tracerProvider = tp }
}

func (o options) tracer() trace.Tracer {
	tp := o.tracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer(instrumentation)
}

// w3c reads the W3C trace context and baggage the server sends, whatever the global propagator.
var w3c = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// startSpan starts a server span that is a child of the span tc names.
func startSpan(ctx context.Context, tracer trace.Tracer, name string, tc *treadlev1.TraceContext, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	carrier := propagation.MapCarrier{}
	for k, v := range map[string]string{"traceparent": tc.GetTraceparent(), "tracestate": tc.GetTracestate(), "baggage": tc.GetBaggage()} {
		if v != "" {
			carrier[k] = v
		}
	}
	return tracer.Start(w3c.Extract(ctx, carrier), name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
}

func markError(span trace.Span, err error) {
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
}

// hookNames are the Mastra names of the hooks, for span names.
var hookNames = map[treadlev1.Hook]string{
	treadlev1.Hook_HOOK_PROCESS_INPUT:         "processInput",
	treadlev1.Hook_HOOK_PROCESS_INPUT_STEP:    "processInputStep",
	treadlev1.Hook_HOOK_PROCESS_LLM_REQUEST:   "processLLMRequest",
	treadlev1.Hook_HOOK_PROCESS_LLM_RESPONSE:  "processLLMResponse",
	treadlev1.Hook_HOOK_PROCESS_API_ERROR:     "processAPIError",
	treadlev1.Hook_HOOK_PROCESS_OUTPUT_STREAM: "processOutputStream",
	treadlev1.Hook_HOOK_PROCESS_OUTPUT_STEP:   "processOutputStep",
	treadlev1.Hook_HOOK_PROCESS_TOOL_RESULT:   "processToolResult",
	treadlev1.Hook_HOOK_PROCESS_OUTPUT_RESULT: "processOutputResult",
	treadlev1.Hook_HOOK_BEFORE_TOOL_CALL:      "beforeToolCall",
	treadlev1.Hook_HOOK_AFTER_TOOL_CALL:       "afterToolCall",
	treadlev1.Hook_HOOK_ON_VIOLATION:          "onViolation",
	treadlev1.Hook_HOOK_RESOLVE_AGENT:         "resolveAgent",
}
