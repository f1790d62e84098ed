package treadle_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/treadle-dev/treadle/clients/go/treadle"
)

// NoSecrets is the README's processor example (compiled here so it stays right).
type NoSecrets struct{}

func (NoSecrets) ID() string { return "no-secrets" }

func (NoSecrets) ProcessInput(ctx context.Context, a *treadle.ProcessInputArgs) (*treadle.Replace, error) {
	n, _ := a.State["checked"].(float64)
	a.State["checked"] = n + 1 // per-run state, sent back only when it changed
	for _, m := range a.MessageList.GetMessages() {
		for _, p := range m.GetMessage().GetContent().GetParts() {
			if strings.Contains(p.GetText().GetText(), "password") {
				return nil, treadle.Abort("no secrets", treadle.WithMetadata(map[string]any{"rule": "password"}))
			}
		}
	}
	return nil, nil // nil *Replace: unchanged
}

func ExampleAttach() {
	ctx := context.Background()
	a, err := treadle.Attach(ctx, "127.0.0.1:50051", []treadle.Processor{NoSecrets{}})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	if err := a.Ready(ctx); err != nil {
		log.Fatal(err) // *treadle.AttachError if refused
	}
}

func ExampleServeTools() {
	ctx := context.Background()
	weather := treadle.Tool{
		Name: "weather", Description: "The weather of a city",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
		Run: func(ctx context.Context, c *treadle.ToolCall) (any, error) {
			args, _ := c.Args.(map[string]any)
			return map[string]any{"city": args["city"], "celsius": 21}, nil
		},
	}
	a, err := treadle.ServeTools(ctx, "127.0.0.1:50051", weather)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
}

func ExampleClient_Stream() {
	ctx := context.Background()
	c, err := treadle.Dial("127.0.0.1:50051")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	r, err := c.Generate(ctx, "support", "Where is my order?")
	if err == nil && r.Tripwire != nil {
		fmt.Println("blocked:", r.Tripwire.Reason)
	}
	for chunk, err := range c.Stream(ctx, "support", "Tell me a story") {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Print(chunk.GetTextDelta().GetText())
	}
}
