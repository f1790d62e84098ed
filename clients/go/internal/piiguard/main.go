// Command piiguard is a PII guard written with the Go SDK: it redacts e-mail addresses from the
// answer as it streams, with treadle.TextGate, even when an address arrives split across deltas
// ("jo", "hn@exa", "mple.com"). Text that cannot be part of an address streams through unheld.
//
// Usage: piiguard HOST:PORT [per_chunk|windowed] [--print-spans]   (prints "ready" once the
// server welcomed it; runs until stdin closes or a signal). With --print-spans each invocation's
// span is printed when it ends, as `span {"name", "trace_id", "parent_span_id"}`.
//
// It lives under internal/ so it never becomes part of the SDK's public surface; the Python
// test tests/test_go_text_gate.py builds and runs it.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"syscall"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"github.com/treadle-dev/treadle/clients/go/internal/spanprint"
	"github.com/treadle-dev/treadle/clients/go/treadle"
)

var email = regexp.MustCompile(`[\w.+-]+@[\w-]+(?:\.[\w-]+)+`)

// PIIGuard redacts e-mail addresses from the streamed answer.
type PIIGuard struct {
	delivery treadlev1.StreamDelivery
	gate     *treadle.TextGate
}

func (PIIGuard) ID() string { return "pii-guard" }

func (g PIIGuard) Settings() treadle.Settings { return treadle.Settings{Delivery: g.delivery} }

func (g PIIGuard) ProcessOutputStream(ctx context.Context, a *treadle.ProcessOutputStreamArgs) ([]*treadlev1.Chunk, error) {
	return g.gate.Process(ctx, a)
}

// redact is the gate's guard; it gets the run's context too: it counts the addresses of the run
// in its state and reports each redaction as a custom chunk.
func redact(_ context.Context, a *treadle.ProcessOutputStreamArgs, text string) (string, error) {
	n := len(email.FindAllStringIndex(text, -1))
	if n == 0 {
		return text, nil
	}
	total, _ := a.State["redacted"].(float64)
	a.State["redacted"] = total + float64(n)
	if err := a.Writer.Custom("data-redacted", map[string]any{"count": n, "total": total + float64(n)}); err != nil {
		return "", err
	}
	return email.ReplaceAllString(text, "[email]"), nil
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: piiguard HOST:PORT [per_chunk|windowed] [--print-spans]")
		os.Exit(2)
	}
	guard := PIIGuard{delivery: treadlev1.StreamDelivery_STREAM_DELIVERY_WINDOWED, gate: treadle.NewRunTextGate(redact, treadle.PatternBoundary(email))}
	var opts []treadle.Option
	for _, arg := range os.Args[2:] {
		switch arg {
		case "per_chunk":
			guard.delivery = treadlev1.StreamDelivery_STREAM_DELIVERY_PER_CHUNK
		case "--print-spans":
			opts = append(opts, treadle.WithTracerProvider(spanprint.Provider()))
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a, err := treadle.Attach(ctx, os.Args[1], []treadle.Processor{guard}, opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "piiguard:", err)
		os.Exit(2)
	}
	defer a.Close()
	if err := a.Ready(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "piiguard:", err)
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
