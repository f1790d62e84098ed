// Command seedprocessors is a remote processor process written against the raw
// treadle.v1.ProcessorService protocol with the generated code only (no SDK). It serves two of
// the seed's examples over one Attach stream:
//
//   - word-counter (processOutputStream, MUTATE, per-chunk): counts the words of text-delta
//     chunks in the invocation's ProcessorState (`wordCount`) and, on the finish chunk, writes a
//     `data-word-count` custom chunk {"words": N}. Every chunk passes unchanged.
//   - redact-tool-result (processToolResult, MUTATE): replaces `ssn` and `email` of the
//     `lookup-customer` tool's result by "[REDACTED]" in the message list.
//
// Usage: seedprocessors HOST:PORT   (prints "ready" once the server's welcome arrived)
//
// It lives under internal/ so it never becomes part of the Go SDK's public surface; the Python
// tests (tests/test_go_processor.py) build and run it.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
)

const (
	wordCounterID = "word-counter"
	redactorID    = "redact-tool-result"
)

// stateKey names one processor's state in one run.
type stateKey struct{ runID, processorID string }

// session is one Attach stream: the states it holds and the stream to answer on. Invocations are
// handled one at a time, in arrival order.
type session struct {
	stream grpc.BidiStreamingClient[treadlev1.ProcessorServiceAttachRequest, treadlev1.ProcessorServiceAttachResponse]
	// The last state sent or received per run and processor (the protocol's contract: an
	// invocation carries `state` only when this stream does not hold the latest version).
	states map[stateKey]*treadlev1.ProcessorState
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: seedprocessors HOST:PORT")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "seedprocessors:", err)
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
	host, _ := os.Hostname()
	err = stream.Send(&treadlev1.ProcessorServiceAttachRequest{
		Message: &treadlev1.ProcessorServiceAttachRequest_Handshake{Handshake: &treadlev1.ProcessorHandshake{
			ProtocolVersions: []uint32{1},
			InstanceId:       fmt.Sprintf("%s:%d", host, os.Getpid()),
			Processors: []*treadlev1.ProcessorDeclaration{
				{
					Id:          wordCounterID,
					Description: "Counts the words of the answer and reports them as data-word-count.",
					Hooks: []*treadlev1.HookDeclaration{{
						Hook:     treadlev1.Hook_HOOK_PROCESS_OUTPUT_STREAM,
						Mode:     treadlev1.HookMode_HOOK_MODE_MUTATE,
						Delivery: treadlev1.StreamDelivery_STREAM_DELIVERY_PER_CHUNK,
					}},
				},
				{
					Id:          redactorID,
					Description: "Redacts ssn and email in lookup-customer results.",
					Hooks: []*treadlev1.HookDeclaration{{
						Hook: treadlev1.Hook_HOOK_PROCESS_TOOL_RESULT,
						Mode: treadlev1.HookMode_HOOK_MODE_MUTATE,
					}},
				},
			},
		}},
	})
	if err != nil {
		return err
	}
	first, err := stream.Recv()
	if err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	if first.GetWelcome() == nil {
		return fmt.Errorf("expected welcome, got %v", first)
	}
	fmt.Println("ready")

	s := &session{stream: stream, states: map[stateKey]*treadlev1.ProcessorState{}}
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch m := msg.Message.(type) {
		case *treadlev1.ProcessorServiceAttachResponse_Invocation:
			if err := s.serve(m.Invocation); err != nil {
				return err
			}
		case *treadlev1.ProcessorServiceAttachResponse_RunEnded:
			for k := range s.states {
				if k.runID == m.RunEnded.RunId {
					delete(s.states, k)
				}
			}
		}
		// cancel: invocations are answered synchronously, so there is nothing to stop.
		// drain: runs still running keep sending invocations, which are answered as ever; the
		// server ends the stream (io.EOF above) once they are done.
	}
}

// serve answers one invocation (both hooks are MUTATE, so every invocation gets one result).
func (s *session) serve(inv *treadlev1.Invocation) error {
	key := stateKey{inv.RunId, inv.ProcessorId}
	if inv.State != nil {
		s.states[key] = inv.State
	}
	current := s.states[key]
	value := &structpb.Struct{Fields: map[string]*structpb.Value{}}
	if current.GetValue() != nil {
		value = proto.Clone(current.Value).(*structpb.Struct)
	}

	var result *treadlev1.InvocationResult
	switch {
	case inv.ProcessorId == wordCounterID && inv.GetProcessOutputStream() != nil:
		result = countWords(inv.GetProcessOutputStream(), value)
	case inv.ProcessorId == redactorID && inv.GetProcessToolResult() != nil:
		result = redact(inv.GetProcessToolResult())
	default:
		result = &treadlev1.InvocationResult{Outcome: &treadlev1.InvocationResult_Error{
			Error: &treadlev1.ErrorOutcome{Message: fmt.Sprintf("unexpected %s for %s", inv.Hook, inv.ProcessorId)},
		}}
	}
	result.InvocationId = inv.InvocationId

	// Send the state back only when the hook changed it, as the next version.
	if !proto.Equal(value, current.GetValue()) && !(current == nil && len(value.Fields) == 0) {
		next := &treadlev1.ProcessorState{Value: value, Version: current.GetVersion() + 1}
		s.states[key] = next
		result.State = next
	}
	return s.stream.Send(&treadlev1.ProcessorServiceAttachRequest{
		Message: &treadlev1.ProcessorServiceAttachRequest_Result{Result: result},
	})
}

// countWords is the seed's WordCounter: state.wordCount accumulates the words of text deltas;
// the finish chunk reports the total as a data-word-count chunk. Every part passes unchanged.
func countWords(args *treadlev1.ProcessOutputStreamArgs, state *structpb.Struct) *treadlev1.InvocationResult {
	result := &treadlev1.InvocationResult{}
	outcomes := make([]*treadlev1.ChunkOutcome, 0, len(args.Parts))
	for _, part := range args.Parts {
		count := state.Fields["wordCount"].GetNumberValue()
		if _, ok := state.Fields["wordCount"]; !ok {
			state.Fields["wordCount"] = structpb.NewNumberValue(0)
		}
		if delta := part.GetTextDelta(); delta != nil {
			count += float64(len(strings.Fields(delta.Text)))
			state.Fields["wordCount"] = structpb.NewNumberValue(count)
		}
		if part.GetFinish() != nil {
			result.CustomChunks = append(result.CustomChunks, &treadlev1.DataChunk{
				Name: "data-word-count",
				Data: structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{
					"words": structpb.NewNumberValue(count),
				}}),
			})
		}
		outcomes = append(outcomes, &treadlev1.ChunkOutcome{
			Outcome: &treadlev1.ChunkOutcome_Unchanged{Unchanged: &treadlev1.UnchangedOutcome{}},
		})
	}
	result.Outcome = &treadlev1.InvocationResult_Stream{Stream: &treadlev1.StreamOutcomes{Chunks: outcomes}}
	return result
}

// redact is the seed's RedactToolResult: the lookup-customer result, with ssn and email
// replaced, goes back as the whole message list with that tool invocation updated (the seed's
// messageList.updateToolInvocation), each message keeping its source.
func redact(args *treadlev1.ProcessToolResultArgs) *treadlev1.InvocationResult {
	unchanged := &treadlev1.InvocationResult{Outcome: &treadlev1.InvocationResult_Unchanged{Unchanged: &treadlev1.UnchangedOutcome{}}}
	if args.ToolName != "lookup-customer" || args.Result.GetStructValue() == nil {
		return unchanged
	}
	redacted := proto.Clone(args.Result.GetStructValue()).(*structpb.Struct)
	redacted.Fields["ssn"] = structpb.NewStringValue("[REDACTED]")
	redacted.Fields["email"] = structpb.NewStringValue("[REDACTED]")

	replacement := &treadlev1.MessageListReplacement{}
	found := false
	for _, listed := range args.MessageList.GetMessages() {
		message := proto.Clone(listed.Message).(*treadlev1.Message)
		for _, part := range message.GetContent().GetParts() {
			if call := part.GetToolInvocation(); call != nil && call.ToolCallId == args.ToolCallId {
				call.State = treadlev1.ToolInvocationState_TOOL_INVOCATION_STATE_RESULT
				call.Result = structpb.NewStructValue(redacted)
				found = true
			}
		}
		replacement.Messages = append(replacement.Messages, message)
		replacement.Sources = append(replacement.Sources, listed.Source)
	}
	if !found {
		return unchanged
	}
	return &treadlev1.InvocationResult{Outcome: &treadlev1.InvocationResult_Replace{
		Replace: &treadlev1.ReplaceOutcome{Messages: replacement},
	}}
}
