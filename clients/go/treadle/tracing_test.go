package treadle

import (
	"context"
	"testing"
	"time"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func TestEachInvocationSpanIsAChildOfTheTraceContextItCarries(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	f := &fakeServer{}
	addr := startFake(t, f)
	a, err := Attach(context.Background(), addr, []Processor{&guard{}}, WithTracerProvider(tp))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	s := next(t, f.streams)
	inv := input("1", "r", "secret-1")
	inv.TraceContext = &treadlev1.TraceContext{Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
	s.invoke(t, inv)
	s.result(t)
	got := spans.GetSpans()
	if len(got) != 1 {
		t.Fatalf("spans: %v", got)
	}
	span := got[0]
	if span.Name != "processInput guard" || span.SpanContext.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" ||
		span.Parent.SpanID().String() != "00f067aa0ba902b7" || !span.Parent.IsRemote() {
		t.Fatalf("span: %s trace %s parent %s", span.Name, span.SpanContext.TraceID(), span.Parent.SpanID())
	}
	attrs := attribute.NewSet(span.Attributes...)
	if v, _ := attrs.Value("treadle.processor.outcome"); v.AsString() != "abort" {
		t.Fatalf("attributes: %v", span.Attributes)
	}
}
