package treadle_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"regexp"
	"strings"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
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
		if chunk.Type() == "text-delta" {
			fmt.Print(chunk.Text())
		}
	}
}

func ExampleClient_SubscribeToThread() {
	ctx := context.Background()
	c, err := treadle.Dial("127.0.0.1:50051")
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	sub, err := c.SubscribeToThread(ctx, "user-123", "thread-abc") // subscribed once it returns
	if err != nil {
		log.Fatal(err)
	}
	defer sub.Close()
	sent, err := c.SendMessage(ctx, "assistant", treadle.InThread("user-123", "thread-abc"),
		"Can we simplify the API surface?", treadle.WithAttributeList(treadle.Attr{Name: "name", Value: "Devin"}, treadle.Attr{Name: "from", Value: "slack"}))
	if err != nil {
		log.Fatal(err)
	}
	for chunk, err := range sub.Chunks() {
		if err != nil {
			log.Fatal(err)
		}
		if chunk.Type() == "text-delta" {
			fmt.Print(chunk.Text())
		}
		if chunk.Type() == "finish" && chunk.RunId == sent.Accepted.GetRunId() {
			break
		}
	}
}

// EmailRedactor is the README's text gate example: it redacts e-mail addresses from the streamed
// answer, even when one arrives split across deltas (protocol version 2).
type EmailRedactor struct{ gate *treadle.TextGate }

var email = regexp.MustCompile(`[\w.+-]+@[\w-]+(?:\.[\w-]+)+`)

func NewEmailRedactor() EmailRedactor {
	redact := func(_ context.Context, s string) (string, error) { return email.ReplaceAllString(s, "[email]"), nil }
	return EmailRedactor{treadle.NewTextGate(redact, treadle.PatternBoundary(email))}
}

func (EmailRedactor) ID() string { return "email-redactor" }

func (r EmailRedactor) ProcessOutputStream(ctx context.Context, a *treadle.ProcessOutputStreamArgs) ([]*treadlev1.Chunk, error) {
	return r.gate.Process(ctx, a)
}

func ExampleTextGate() {
	ctx := context.Background()
	a, err := treadle.Attach(ctx, "127.0.0.1:50051", []treadle.Processor{NewEmailRedactor()})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
}

func ExampleWithTLS() {
	ctx := context.Background()
	cfg, err := treadle.LoadTLS("ca.pem", "client.pem", "client.key") // "" for system roots / no client cert
	if err != nil {
		log.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider() // with your exporter; the default is otel.GetTracerProvider()
	a, err := treadle.Attach(ctx, "treadle.internal:50051", []treadle.Processor{NoSecrets{}},
		treadle.WithTLS(cfg), treadle.WithToken(os.Getenv("GUARD_TOKEN")), treadle.WithTracerProvider(tp))
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	c, err := treadle.Dial("treadle.internal:50051", treadle.WithTLS(cfg)) // token: TREADLE_TOKEN
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
}
