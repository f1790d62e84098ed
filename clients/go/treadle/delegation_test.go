package treadle

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
)

// supervisor rejects password prompts, narrows the others and bails after a delegation.
type supervisor struct{}

func (supervisor) ID() string { return "supervisor" }

func (supervisor) OnDelegationStart(_ context.Context, a *OnDelegationStartArgs) (*DelegationStart, error) {
	if strings.Contains(a.Prompt, "password") {
		return &DelegationStart{Reject: true, RejectionReason: "credentials stay here"}, nil
	}
	return &DelegationStart{ModifiedPrompt: proto.String(a.Prompt + " Cite sources.")}, nil
}

func (supervisor) OnDelegationComplete(_ context.Context, a *OnDelegationCompleteArgs) (*DelegationComplete, error) {
	return &DelegationComplete{Feedback: "checked " + a.Key, Bail: !a.Success}, nil
}

func TestDelegationHooksDeclareAndAnswer(t *testing.T) {
	_, s := attachTo(t, &fakeServer{}, supervisor{})
	d := s.handshake.Processors[0]
	if len(d.Hooks) != 2 || d.Hooks[0].Hook != treadlev1.Hook_HOOK_ON_DELEGATION_START || d.Hooks[1].Hook != treadlev1.Hook_HOOK_ON_DELEGATION_COMPLETE {
		t.Fatalf("declaration: %v", d)
	}
	start := func(id, prompt string) {
		s.invoke(t, &treadlev1.Invocation{InvocationId: id, ProcessorId: "supervisor", Hook: treadlev1.Hook_HOOK_ON_DELEGATION_START, RunId: "r",
			Args: &treadlev1.Invocation_OnDelegationStart{OnDelegationStart: &treadlev1.OnDelegationStartArgs{Key: "research", Prompt: prompt}}})
	}
	start("1", "the admin password?")
	if r := s.result(t).GetDelegationStart(); r == nil || !r.Reject || r.RejectionReason != "credentials stay here" {
		t.Fatalf("rejection: %v", r)
	}
	start("2", "Tides?")
	if r := s.result(t).GetDelegationStart(); r == nil || r.Reject || r.GetModifiedPrompt() != "Tides? Cite sources." || r.ModifiedMaxSteps != nil {
		t.Fatalf("change: %v", r)
	}
	s.invoke(t, &treadlev1.Invocation{InvocationId: "3", ProcessorId: "supervisor", Hook: treadlev1.Hook_HOOK_ON_DELEGATION_COMPLETE, RunId: "r",
		Args: &treadlev1.Invocation_OnDelegationComplete{OnDelegationComplete: &treadlev1.OnDelegationCompleteArgs{Key: "research", Success: false}}})
	if r := s.result(t).GetDelegationComplete(); r.GetFeedback() != "checked research" || !r.GetBail() {
		t.Fatalf("complete: %v", r)
	}
}

func TestNestedUnwrapsToolOutputChunks(t *testing.T) {
	inner := TextDelta("t1", "hi")
	mid := &treadlev1.Chunk{Chunk: &treadlev1.Chunk_ToolOutput{ToolOutput: &treadlev1.ToolOutputChunk{ToolName: "agent-write", Output: inner, Path: []string{"agent-write"}}}}
	outer := &treadlev1.Chunk{Chunk: &treadlev1.Chunk_ToolOutput{ToolOutput: &treadlev1.ToolOutputChunk{ToolName: "agent-research", Output: mid,
		Path: []string{"agent-research", "agent-write"}}}}
	path, got := Nested(outer)
	if strings.Join(path, ">") != "agent-research>agent-write" || got != inner || ChunkType(outer) != "tool-output" {
		t.Fatalf("nested: %v %v", path, got)
	}
	if path, got := Nested(inner); path != nil || got != inner {
		t.Fatalf("own chunk: %v %v", path, got)
	}
}
