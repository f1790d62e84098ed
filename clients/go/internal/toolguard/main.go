// Command toolguard is the Go twin of clients/python/examples/tool_guard.py: a processor whose
// BeforeToolCall refuses deleteRecord (declared for that tool only, so other calls cost no round
// trip) and whose AfterToolCall prints every tool's outcome, as `before {json}` and
// `after {json}` lines.
//
// Usage: toolguard HOST:PORT   (prints "ready" once welcomed; runs until stdin closes)
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"github.com/treadle-dev/treadle/clients/go/treadle"
)

var printMu sync.Mutex

func printJSON(prefix string, v map[string]any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return err
	}
	printMu.Lock()
	defer printMu.Unlock()
	fmt.Printf("%s %s\n", prefix, line)
	return nil
}

// ToolGuard refuses deleteRecord; logs every tool's outcome.
type ToolGuard struct{}

func (ToolGuard) ID() string { return "tool-guard" }

func (ToolGuard) Settings() treadle.Settings {
	return treadle.Settings{ToolNames: map[treadlev1.Hook][]string{treadlev1.Hook_HOOK_BEFORE_TOOL_CALL: {"deleteRecord"}}}
}

func (ToolGuard) BeforeToolCall(_ context.Context, a *treadle.BeforeToolCallArgs) (*treadle.SkipTool, error) {
	if err := printJSON("before", map[string]any{"tool": a.ToolName, "args": a.Args.AsInterface()}); err != nil {
		return nil, err
	}
	return &treadle.SkipTool{Output: a.ToolName + " is not allowed for this agent"}, nil
}

func (ToolGuard) AfterToolCall(_ context.Context, a *treadle.AfterToolCallArgs) error {
	var output, failure any
	if a.Output != nil {
		output = a.Output.AsInterface()
	}
	if a.Error != "" {
		failure = a.Error
	}
	return printJSON("after", map[string]any{"tool": a.ToolName, "output": output, "error": failure})
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: toolguard HOST:PORT")
		os.Exit(2)
	}
	ctx := context.Background()
	a, err := treadle.Attach(ctx, os.Args[1], []treadle.Processor{ToolGuard{}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "toolguard:", err)
		os.Exit(2)
	}
	defer a.Close()
	if err := a.Ready(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "toolguard:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
}
