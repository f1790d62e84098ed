// Command tracedecho attaches `go-traced-echo`, a pass-through processOutputStream processor
// written with the Go SDK and traced with treadle.WithTracerProvider, for the cross-language trace
// test tests/test_cross_language.py. Each invocation's span is printed when it ends, as
// `span {"name", "trace_id", "parent_span_id"}`: the SDK makes it a child of the trace context the
// invocation carries. Prints `ready` once the server welcomed it; ends on SIGTERM or when stdin
// closes.
//
// Usage: tracedecho HOST:PORT
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"github.com/treadle-dev/treadle/clients/go/internal/spanprint"
	"github.com/treadle-dev/treadle/clients/go/treadle"
)

// TracedEcho passes every chunk through.
type TracedEcho struct{}

func (TracedEcho) ID() string { return "go-traced-echo" }

func (TracedEcho) ProcessOutputStream(_ context.Context, a *treadle.ProcessOutputStreamArgs) ([]*treadlev1.Chunk, error) {
	return []*treadlev1.Chunk{a.Part}, nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: tracedecho HOST:PORT")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	provider := spanprint.Provider()
	a, err := treadle.Attach(ctx, os.Args[1], []treadle.Processor{TracedEcho{}}, treadle.WithTracerProvider(provider))
	if err != nil {
		fmt.Fprintln(os.Stderr, "tracedecho:", err)
		os.Exit(2)
	}
	defer a.Close()
	if err := a.Ready(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "tracedecho:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	stdin := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(stdin) }()
	select {
	case <-ctx.Done():
	case <-stdin:
	}
}
