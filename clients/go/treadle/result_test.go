package treadle

import (
	"reflect"
	"testing"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

func TestResultOfGivesTheFrameworkShape(t *testing.T) {
	args, _ := structpb.NewValue(map[string]any{"city": "Oslo"})
	result, _ := structpb.NewValue(map[string]any{"sky": "clear"})
	raw := &treadlev1.GenerateResponse{
		RunId: "r1", Text: "Clear.", FinishReason: treadlev1.FinishReason_FINISH_REASON_STOP,
		Usage: &treadlev1.Usage{InputTokens: 3, OutputTokens: 2, TotalTokens: 5},
		Steps: []*treadlev1.StepResult{
			{StepNumber: 0, FinishReason: treadlev1.FinishReason_FINISH_REASON_TOOL_CALLS,
				ToolCalls:   []*treadlev1.ToolCall{{ToolCallId: "c1", ToolName: "weather", Args: args}},
				ToolResults: []*treadlev1.ToolResult{{ToolCallId: "c1", ToolName: "weather", Args: args, Result: result}}},
			{StepNumber: 1, Text: "Clear.", FinishReason: treadlev1.FinishReason_FINISH_REASON_STOP},
		},
	}
	r := ResultOf(raw)
	if r.Text != "Clear." || r.FinishReason != FinishStop || r.Usage.TotalTokens != 5 || r.Tripwire != nil {
		t.Fatalf("result: %+v", r)
	}
	if want := []ToolCallInfo{{"c1", "weather", map[string]any{"city": "Oslo"}}}; !reflect.DeepEqual(r.ToolCalls, want) {
		t.Fatalf("tool calls: %+v", r.ToolCalls)
	}
	if r.ToolResults[0].Result.(map[string]any)["sky"] != "clear" || r.Steps[0].FinishReason != FinishToolCalls {
		t.Fatalf("tool results: %+v, steps %+v", r.ToolResults, r.Steps)
	}
	if r.GenerateResponse != raw || r.GetRunId() != "r1" {
		t.Fatal("the generated response is not reachable")
	}
	blocked := ResultOf(&treadlev1.GenerateResponse{FinishReason: treadlev1.FinishReason_FINISH_REASON_OTHER,
		Tripwire: &treadlev1.Tripwire{Reason: "no", ProcessorId: "guard", Metadata: args}})
	if blocked.FinishReason != FinishOther || blocked.Tripwire.ProcessorID != "guard" ||
		blocked.Tripwire.Metadata.(map[string]any)["city"] != "Oslo" {
		t.Fatalf("tripwire: %+v", blocked.Tripwire)
	}
}

func TestChunkTypeTextAndFinishReason(t *testing.T) {
	delta := Chunk{TextDelta("t1", "hi")}
	if delta.Type() != "text-delta" || delta.Text() != "hi" || delta.FinishReason() != "" {
		t.Fatalf("delta: %v %q", delta.Type(), delta.Text())
	}
	finish := Chunk{&treadlev1.Chunk{Chunk: &treadlev1.Chunk_Finish{Finish: &treadlev1.FinishChunk{
		Reason: treadlev1.FinishReason_FINISH_REASON_CONTENT_FILTER}}}}
	if finish.Type() != "finish" || finish.FinishReason() != FinishContentFilter || finish.Proto().GetFinish() == nil {
		t.Fatalf("finish: %v %v", finish.Type(), finish.FinishReason())
	}
}
