// Command ssntransform is the Go twin of tests/remote/ts/ssn_transform.ts: a TransformToolPayload
// for the tool lookup_customer only. In the display an SSN keeps its last four digits
// (***-**-1120); in the transcript the ssn field is gone; a payload that is not an object yields
// nothing (the server then shows its placeholder).
//
// Usage: ssntransform HOST:PORT   (prints "ready" once welcomed; runs until stdin closes)
package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"github.com/treadle-dev/treadle/clients/go/treadle"
)

// SSNTransform shows an SSN's last four digits, and keeps it out of the transcript.
type SSNTransform struct{}

func (SSNTransform) ID() string { return "ssn-transform" }

func (SSNTransform) Settings() treadle.Settings {
	return treadle.Settings{ToolNames: map[treadlev1.Hook][]string{
		treadlev1.Hook_HOOK_TRANSFORM_TOOL_PAYLOAD: {"lookup_customer"}}}
}

func (SSNTransform) TransformToolPayload(_ context.Context, a *treadle.TransformToolPayloadArgs) (any, error) {
	fmt.Printf("transform %s %s\n", a.GetTarget(), a.GetPhase())
	payload, ok := a.Payload.(map[string]any)
	if !ok {
		return nil, nil
	}
	record := maps.Clone(payload)
	ssn, ok := record["ssn"].(string)
	if !ok {
		return record, nil
	}
	if a.GetTarget() == "transcript" {
		delete(record, "ssn")
	} else {
		record["ssn"] = "***-**-" + ssn[max(0, len(ssn)-4):]
	}
	return record, nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: ssntransform HOST:PORT")
		os.Exit(2)
	}
	ctx := context.Background()
	a, err := treadle.Attach(ctx, os.Args[1], []treadle.Processor{SSNTransform{}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "ssntransform:", err)
		os.Exit(2)
	}
	defer a.Close()
	if err := a.Ready(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "ssntransform:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
}
