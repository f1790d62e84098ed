// Command scorer is a remote scorer written with the Go SDK: `go-length` scores 1 when the
// answer has at most 5 words, else 5 / words.
//
// Usage: scorer HOST:PORT   (prints "ready" once the server welcomed it; runs until stdin
// closes or a signal). It lives under internal/ so it never becomes part of the SDK's public
// surface; tests/test_remote_scorers.py builds and runs it.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/treadle-dev/treadle/clients/go/treadle"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: scorer HOST:PORT")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	length := treadle.Scorer{ID: "go-length", Description: "Short answers score higher.",
		Score: func(_ context.Context, run *treadle.ScorerRun) (treadle.Score, error) {
			n := len(strings.Fields(run.Answer()))
			s := 1.0
			if n > 5 {
				s = 5 / float64(n)
			}
			return treadle.Score{Score: s, Reason: fmt.Sprintf("%d words", n), Details: map[string]any{"by": "go"}}, nil
		}}
	a, err := treadle.ServeScorers(ctx, os.Args[1], length)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer a.Close()
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := a.Ready(rctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("ready")
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	<-ctx.Done()
}
