package treadle

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
)

// toolGuard refuses deleteRecord and fails after a tool that failed.
type toolGuard struct{}

func (toolGuard) ID() string { return "tool-guard" }

func (toolGuard) Settings() Settings {
	return Settings{ToolNames: map[treadlev1.Hook][]string{treadlev1.Hook_HOOK_BEFORE_TOOL_CALL: {"deleteRecord"}}}
}

func (toolGuard) BeforeToolCall(_ context.Context, a *BeforeToolCallArgs) (*SkipTool, error) {
	return &SkipTool{Output: a.ToolName + " is not allowed"}, nil
}

func (toolGuard) AfterToolCall(_ context.Context, a *AfterToolCallArgs) error {
	if a.Error != "" {
		return errors.New("saw " + a.Error)
	}
	return nil
}

func TestToolHooksDeclareTheirFilterAndAnswer(t *testing.T) {
	_, s := attachTo(t, &fakeServer{}, toolGuard{})
	d := s.handshake.Processors[0]
	if len(d.Hooks) != 2 || d.Hooks[0].Hook != treadlev1.Hook_HOOK_BEFORE_TOOL_CALL || !slices.Equal(d.Hooks[0].ToolNames, []string{"deleteRecord"}) ||
		d.Hooks[1].Hook != treadlev1.Hook_HOOK_AFTER_TOOL_CALL || len(d.Hooks[1].ToolNames) != 0 {
		t.Fatalf("declaration: %v", d)
	}
	s.invoke(t, &treadlev1.Invocation{InvocationId: "1", ProcessorId: "tool-guard", Hook: treadlev1.Hook_HOOK_BEFORE_TOOL_CALL, RunId: "r",
		Args: &treadlev1.Invocation_BeforeToolCall{BeforeToolCall: &treadlev1.BeforeToolCallArgs{ToolName: "deleteRecord"}}})
	if r := s.result(t); r.GetSkipTool().GetOutput().GetStringValue() != "deleteRecord is not allowed" {
		t.Fatalf("before: %v", r)
	}
	s.invoke(t, &treadlev1.Invocation{InvocationId: "2", ProcessorId: "tool-guard", Hook: treadlev1.Hook_HOOK_AFTER_TOOL_CALL, RunId: "r",
		Args: &treadlev1.Invocation_AfterToolCall{AfterToolCall: &treadlev1.AfterToolCallArgs{ToolName: "lookup", Error: "boom"}}})
	if r := s.result(t); r.GetError().GetMessage() != "saw boom" {
		t.Fatalf("after: %v", r)
	}
}

type badFilter struct{ toolGuard }

func (badFilter) Settings() Settings {
	return Settings{ToolNames: map[treadlev1.Hook][]string{treadlev1.Hook_HOOK_PROCESS_INPUT: {"x"}}}
}

func TestToolNamesOnlyForToolHooks(t *testing.T) {
	if _, err := Declaration(badFilter{}); err == nil || !strings.Contains(err.Error(), "takes no tool filter") {
		t.Fatalf("declaration: %v", err)
	}
}
