// Command remote_guard_go is the `no-secrets` guard as a remote processor in Go, speaking
// treadle.v1.ProcessorService/Attach with the code generated from the proto (no SDK needed; see
// docs/protocol.md for the conversation).
//
//	go -C examples/remote_guard_go run . [HOST:PORT]     # default $TREADLE_TARGET or 127.0.0.1:50051
//
// Prints `processor no-secrets attached to HOST:PORT` once the server accepted the handshake,
// then serves until the server drains the stream, or Ctrl-C.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
)

func main() {
	target := "127.0.0.1:50051"
	if env := os.Getenv("TREADLE_TARGET"); env != "" {
		target = env
	}
	if len(os.Args) > 1 {
		target = os.Args[1]
	}
	if err := run(target); err != nil {
		fmt.Fprintf(os.Stderr, "no-secrets: %s: %v\n", target, err)
		os.Exit(1)
	}
}

func run(target string) error {
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	stream, err := treadlev1.NewProcessorServiceClient(conn).Attach(context.Background())
	if err != nil {
		return err
	}
	err = stream.Send(&treadlev1.ProcessorServiceAttachRequest{
		Message: &treadlev1.ProcessorServiceAttachRequest_Handshake{Handshake: &treadlev1.ProcessorHandshake{
			ProtocolVersions: []uint32{1},
			InstanceId:       fmt.Sprintf("no-secrets-go:%d", os.Getpid()),
			Processors: []*treadlev1.ProcessorDeclaration{{
				Id:          "no-secrets",
				Description: "Refuses prompts that mention a password.",
				Hooks: []*treadlev1.HookDeclaration{{
					Hook: treadlev1.Hook_HOOK_PROCESS_INPUT,
					Mode: treadlev1.HookMode_HOOK_MODE_MUTATE,
				}},
			}},
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
			fmt.Printf("processor no-secrets attached to %s\n", target)
		case *treadlev1.ProcessorServiceAttachResponse_Invocation:
			result := &treadlev1.InvocationResult{InvocationId: m.Invocation.InvocationId}
			noSecrets(m.Invocation, result)
			err := stream.Send(&treadlev1.ProcessorServiceAttachRequest{
				Message: &treadlev1.ProcessorServiceAttachRequest_Result{Result: result},
			})
			if err != nil {
				return err
			}
		case *treadlev1.ProcessorServiceAttachResponse_Drain:
			return stream.CloseSend() // every answer is already sent
		}
		// cancel and run_ended need nothing: answers are immediate and no state is kept.
	}
}

// noSecrets is processInput: refuse prompts that mention a password, before any model call.
func noSecrets(inv *treadlev1.Invocation, result *treadlev1.InvocationResult) {
	args := inv.GetProcessInput()
	if args == nil {
		result.Outcome = &treadlev1.InvocationResult_Error{Error: &treadlev1.ErrorOutcome{
			Message: "no-secrets does not implement " + inv.Hook.String(),
		}}
		return
	}
	// The hook's `messages` are the input view of the message list.
	for _, listed := range args.GetMessageList().GetMessages() {
		if listed.Source != treadlev1.MessageSource_MESSAGE_SOURCE_INPUT {
			continue
		}
		for _, part := range listed.GetMessage().GetContent().GetParts() {
			if strings.Contains(strings.ToLower(part.GetText().GetText()), "password") {
				result.Outcome = &treadlev1.InvocationResult_Abort{Abort: &treadlev1.AbortOutcome{
					Reason: "prompts must not contain passwords",
				}}
				return
			}
		}
	}
	result.Outcome = &treadlev1.InvocationResult_Unchanged{Unchanged: &treadlev1.UnchangedOutcome{}}
}
