// Command tlsclient uses the Go SDK's TLS and token options against a server that requires
// mutual TLS and tokens, for tests/test_go_tls.py. With the CA and a client certificate it:
//
//  1. attaches the processor pii-guard (passes the input) and serves the tool get_weather with
//     the token given as TOKEN (WithToken);
//  2. calls Generate on the agents guarded and weather with the token of TREADLE_TOKEN;
//  3. attaches pii-guard again with the caller token CALLER_TOKEN (refused);
//  4. calls Generate without TLS (refused).
//
// It prints one JSON line with what it saw.
//
// Usage: tlsclient HOST:PORT CA CERT KEY TOKEN CALLER_TOKEN
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc/status"

	"github.com/treadle-dev/treadle/clients/go/treadle"
)

type passInput struct{}

func (passInput) ID() string { return "pii-guard" }

func (passInput) ProcessInput(context.Context, *treadle.ProcessInputArgs) (*treadle.Replace, error) {
	return nil, nil
}

func main() {
	if len(os.Args) != 7 {
		fmt.Fprintln(os.Stderr, "usage: tlsclient HOST:PORT CA CERT KEY TOKEN CALLER_TOKEN")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3], os.Args[4], os.Args[5], os.Args[6]); err != nil {
		fmt.Fprintln(os.Stderr, "tlsclient:", err)
		os.Exit(1)
	}
}

func run(target, ca, cert, key, token, callerToken string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg, err := treadle.LoadTLS(ca, cert, key)
	if err != nil {
		return err
	}
	secure := []treadle.Option{treadle.WithTLS(cfg), treadle.WithToken(token)}
	processor, err := treadle.Attach(ctx, target, []treadle.Processor{passInput{}}, secure...)
	if err != nil {
		return err
	}
	defer processor.Close()
	weather := treadle.Tool{Name: "get_weather", Description: "The weather of a city",
		Run: func(context.Context, *treadle.ToolCall) (any, error) { return map[string]any{"sky": "clear"}, nil }}
	tools, err := treadle.ServeToolsWith(ctx, target, []treadle.Tool{weather}, secure...)
	if err != nil {
		return err
	}
	defer tools.Close()
	if err := processor.Ready(ctx); err != nil {
		return err
	}
	if err := tools.Ready(ctx); err != nil {
		return err
	}
	out := map[string]any{}

	client, err := treadle.Dial(target, treadle.WithTLS(cfg)) // the token of TREADLE_TOKEN
	if err != nil {
		return err
	}
	defer client.Close()
	for _, agent := range []string{"guarded", "weather"} {
		r, err := client.Generate(ctx, agent, "hi")
		if err != nil {
			return err
		}
		out[agent] = r.Text
	}

	refused, err := treadle.Attach(ctx, target, []treadle.Processor{passInput{}}, treadle.WithTLS(cfg), treadle.WithToken(callerToken))
	if err != nil {
		return err
	}
	defer refused.Close()
	var ae *treadle.AttachError
	if err := refused.Ready(ctx); errors.As(err, &ae) {
		out["refused"] = ae.Code.String()
	}

	plain, err := treadle.Dial(target)
	if err != nil {
		return err
	}
	defer plain.Close()
	short, stop := context.WithTimeout(ctx, 5*time.Second)
	defer stop()
	_, err = plain.Generate(short, "guarded", "hi")
	out["plaintext"] = status.Code(err).String()
	return json.NewEncoder(os.Stdout).Encode(out)
}
