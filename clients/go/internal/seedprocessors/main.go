// Command seedprocessors is a remote processor process written with the Go SDK (package
// treadle). It serves two examples of the Mastra processor docs over one Attach stream:
//
//   - word-counter (ProcessOutputStream, per-chunk): counts the words of text-delta chunks in
//     its per-run State (`wordCount`) and, on the finish chunk, writes a `data-word-count` custom
//     chunk {"words": N}. Every chunk passes unchanged.
//   - redact-tool-result (ProcessToolResult): replaces `ssn` and `email` of the
//     `lookup-customer` tool's result by "[REDACTED]" in the message list.
//
// Usage: seedprocessors HOST:PORT   (prints "ready" once the server's welcome arrived)
//
// It lives under internal/ so it never becomes part of the SDK's public surface; the Python
// tests (tests/test_go_processor.py) build and run it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"github.com/treadle-dev/treadle/clients/go/treadle"
)

// WordCounter counts the answer's words and reports them before the finish chunk.
type WordCounter struct{}

func (WordCounter) ID() string { return "word-counter" }

func (WordCounter) Settings() treadle.Settings {
	return treadle.Settings{
		Description: "Counts the words of the answer and reports them as data-word-count.",
		Delivery:    treadlev1.StreamDelivery_STREAM_DELIVERY_PER_CHUNK,
	}
}

func (WordCounter) ProcessOutputStream(_ context.Context, a *treadle.ProcessOutputStreamArgs) ([]*treadlev1.Chunk, error) {
	count, _ := a.State["wordCount"].(float64)
	if d := a.Part.GetTextDelta(); d != nil {
		count += float64(len(strings.Fields(d.Text)))
	}
	a.State["wordCount"] = count
	if a.Part.GetFinish() != nil {
		if err := a.Writer.Custom("data-word-count", map[string]any{"words": count}); err != nil {
			return nil, err
		}
	}
	return []*treadlev1.Chunk{a.Part}, nil
}

// RedactToolResult redacts ssn and email in lookup-customer results: the whole message list
// goes back with that tool invocation updated, each message keeping its source.
type RedactToolResult struct{}

func (RedactToolResult) ID() string { return "redact-tool-result" }

func (RedactToolResult) Settings() treadle.Settings {
	return treadle.Settings{Description: "Redacts ssn and email in lookup-customer results."}
}

func (RedactToolResult) ProcessToolResult(_ context.Context, a *treadle.ProcessToolResultArgs) (*treadle.Replace, error) {
	if a.ToolName != "lookup-customer" || a.Result.GetStructValue() == nil {
		return nil, nil
	}
	redacted := proto.Clone(a.Result.GetStructValue()).(*structpb.Struct)
	redacted.Fields["ssn"] = structpb.NewStringValue("[REDACTED]")
	redacted.Fields["email"] = structpb.NewStringValue("[REDACTED]")
	replacement := &treadlev1.MessageListReplacement{}
	found := false
	for _, listed := range a.MessageList.GetMessages() {
		message := proto.Clone(listed.Message).(*treadlev1.Message)
		for _, part := range message.GetContent().GetParts() {
			if call := part.GetToolInvocation(); call != nil && call.ToolCallId == a.ToolCallId {
				call.State = treadlev1.ToolInvocationState_TOOL_INVOCATION_STATE_RESULT
				call.Result = structpb.NewStructValue(redacted)
				found = true
			}
		}
		replacement.Messages = append(replacement.Messages, message)
		replacement.Sources = append(replacement.Sources, listed.Source)
	}
	if !found {
		return nil, nil
	}
	return &treadle.Replace{Messages: replacement}, nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: seedprocessors HOST:PORT")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a, err := treadle.Attach(ctx, os.Args[1], []treadle.Processor{WordCounter{}, RedactToolResult{}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "seedprocessors:", err)
		os.Exit(2)
	}
	defer a.Close()
	if err := a.Ready(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "seedprocessors:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	select {
	case <-ctx.Done():
	case <-a.Done(): // a refused handshake after a reconnect
		if err := a.Err(); err != nil {
			fmt.Fprintln(os.Stderr, "seedprocessors:", err)
			os.Exit(1)
		}
	}
}
