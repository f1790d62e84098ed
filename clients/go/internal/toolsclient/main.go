// Command toolsclient serves a Go tool and calls an agent with the Go SDK's client, for the
// end-to-end test tests/test_go_sdk.py: it serves `go-weather`, waits for the server's welcome,
// streams the agent's answer to "weather?", then calls Generate once, and prints one JSON line
// {"stream_text", "tool_results", "progress", "generate_text"}.
//
// Usage: toolsclient HOST:PORT AGENT_ID
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/treadle-dev/treadle/clients/go/treadle"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: toolsclient HOST:PORT AGENT_ID")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "toolsclient:", err)
		os.Exit(1)
	}
}

func run(target, agentID string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	weather := treadle.Tool{
		Name: "go-weather", Description: "The weather of a city",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
		Run: func(_ context.Context, c *treadle.ToolCall) (any, error) {
			args, _ := c.Args.(map[string]any)
			city, _ := args["city"].(string)
			if city == "" {
				return nil, errors.New("city is required")
			}
			if err := c.Writer.Custom("data-progress", map[string]any{"city": city}); err != nil {
				return nil, err
			}
			return map[string]any{"city": city, "sky": "clear"}, nil
		},
	}
	tools, err := treadle.ServeTools(ctx, target, weather)
	if err != nil {
		return err
	}
	defer tools.Close()
	if err := tools.Ready(ctx); err != nil {
		return err
	}
	client, err := treadle.Dial(target)
	if err != nil {
		return err
	}
	defer client.Close()
	out := map[string]any{"tool_results": []any{}, "progress": []any{}}
	text := ""
	for chunk, err := range client.Stream(ctx, agentID, "weather?") {
		if err != nil {
			return err
		}
		text += chunk.GetTextDelta().GetText()
		if r := chunk.GetToolResult(); r != nil {
			out["tool_results"] = append(out["tool_results"].([]any), r.Result.AsInterface())
		}
		if d := chunk.GetData(); d != nil && d.Name == "data-progress" {
			out["progress"] = append(out["progress"].([]any), d.Data.AsInterface())
		}
	}
	out["stream_text"] = text
	r, err := client.Generate(ctx, agentID, "again")
	if err != nil {
		return err
	}
	out["generate_text"] = r.Text
	return json.NewEncoder(os.Stdout).Encode(out)
}
