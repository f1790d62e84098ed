// Command benchecho is the Go twin of bench/echo_processor.py: a processOutputStream processor
// (id bench-echo) that passes every chunk through unchanged, for
// bench/remote_processor_stream_go.py.
//
// Usage: benchecho MODE HOST:PORT, MODE being lockstep (one chunk per invocation, one in
// flight), pipelined (one chunk per invocation, 64 in flight), windowed (up to 64 chunks per
// invocation, 4 in flight) or default (the SDK's defaults). Runs until a signal.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"github.com/treadle-dev/treadle/clients/go/treadle"
)

var modes = map[string]treadle.Settings{
	"lockstep":  {Delivery: treadlev1.StreamDelivery_STREAM_DELIVERY_PER_CHUNK, MaxInFlight: 1},
	"pipelined": {Delivery: treadlev1.StreamDelivery_STREAM_DELIVERY_PER_CHUNK, MaxInFlight: 64},
	"windowed":  {Delivery: treadlev1.StreamDelivery_STREAM_DELIVERY_WINDOWED, MaxWindow: 64, MaxInFlight: 4},
	"default":   {},
}

type echo struct{ settings treadle.Settings }

func (echo) ID() string { return "bench-echo" }

func (e echo) Settings() treadle.Settings { return e.settings }

func (echo) ProcessOutputStream(_ context.Context, a *treadle.ProcessOutputStreamArgs) ([]*treadlev1.Chunk, error) {
	return []*treadlev1.Chunk{a.Part}, nil
}

func main() {
	settings, ok := modes[os.Args[min(1, len(os.Args)-1)]]
	if len(os.Args) != 3 || !ok {
		fmt.Fprintln(os.Stderr, "usage: benchecho lockstep|pipelined|windowed|default HOST:PORT")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a, err := treadle.Attach(ctx, os.Args[2], []treadle.Processor{echo{settings}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchecho:", err)
		os.Exit(2)
	}
	defer a.Close()
	if err := a.Ready(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "benchecho:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	<-ctx.Done()
}
