// Command tracedecho attaches `go-traced-echo`, a pass-through processOutputStream processor on
// the raw protocol (the generated code), for the cross-language trace test
// tests/test_cross_language.py. For every invocation it prints the W3C trace context it carries,
// `invocation {"traceId": ..., "parentSpanId": ...}`, the context a Go span for the hook would be
// a child of. Prints `ready` after the welcome; ends when the server ends the stream or on SIGTERM.
//
// Usage: tracedecho HOST:PORT
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1]); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "tracedecho:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, target string) error {
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	stream, err := treadlev1.NewProcessorServiceClient(conn).Attach(ctx)
	if err != nil {
		return err
	}
	err = stream.Send(&treadlev1.ProcessorServiceAttachRequest{
		Message: &treadlev1.ProcessorServiceAttachRequest_Handshake{Handshake: &treadlev1.ProcessorHandshake{
			ProtocolVersions: []uint32{1},
			InstanceId:       fmt.Sprintf("tracedecho:%d", os.Getpid()),
			Processors: []*treadlev1.ProcessorDeclaration{{Id: "go-traced-echo", Hooks: []*treadlev1.HookDeclaration{{
				Hook: treadlev1.Hook_HOOK_PROCESS_OUTPUT_STREAM, Mode: treadlev1.HookMode_HOOK_MODE_MUTATE,
				Delivery: treadlev1.StreamDelivery_STREAM_DELIVERY_WINDOWED, MaxInFlight: 1,
			}}}},
		}},
	})
	if err != nil {
		return err
	}
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch m := msg.Message.(type) {
		case *treadlev1.ProcessorServiceAttachResponse_Welcome:
			fmt.Println("ready")
		case *treadlev1.ProcessorServiceAttachResponse_Invocation:
			inv := m.Invocation
			// traceparent: version-traceid-parentid-flags
			if fields := strings.Split(inv.GetTraceContext().GetTraceparent(), "-"); len(fields) == 4 {
				line, _ := json.Marshal(map[string]string{"traceId": fields[1], "parentSpanId": fields[2]})
				fmt.Printf("invocation %s\n", line)
			}
			outcomes := &treadlev1.StreamOutcomes{}
			for range inv.GetProcessOutputStream().GetParts() {
				outcomes.Chunks = append(outcomes.Chunks, &treadlev1.ChunkOutcome{
					Outcome: &treadlev1.ChunkOutcome_Unchanged{Unchanged: &treadlev1.UnchangedOutcome{}}})
			}
			err := stream.Send(&treadlev1.ProcessorServiceAttachRequest{Message: &treadlev1.ProcessorServiceAttachRequest_Result{
				Result: &treadlev1.InvocationResult{InvocationId: inv.InvocationId,
					Outcome: &treadlev1.InvocationResult_Stream{Stream: outcomes}}}})
			if err != nil {
				return err
			}
		}
	}
}
