// Package spanprint is a span exporter for the test programs under internal/: it prints each
// span as it ends, as `span {"name", "trace_id", "parent_span_id"}`, for the Python tests to read.
package spanprint

import (
	"context"
	"encoding/json"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Provider is a tracer provider that prints every span when it ends.
func Provider() *sdktrace.TracerProvider {
	return sdktrace.NewTracerProvider(sdktrace.WithSyncer(printer{}))
}

type printer struct{}

func (printer) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	for _, s := range spans {
		line, err := json.Marshal(map[string]string{"name": s.Name(), "trace_id": s.SpanContext().TraceID().String(),
			"parent_span_id": s.Parent().SpanID().String()})
		if err != nil {
			return err
		}
		fmt.Printf("span %s\n", line)
	}
	return nil
}

func (printer) Shutdown(context.Context) error { return nil }
