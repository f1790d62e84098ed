package treadle

import (
	"strings"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// FinishReason is why a step or run ended, as the Mastra framework names it: "stop", "length",
// "content-filter", "tool-calls", "error", "other", "unknown", "tripwire", "retry".
type FinishReason string

// The finish reasons.
const (
	FinishStop          FinishReason = "stop"
	FinishLength        FinishReason = "length"
	FinishContentFilter FinishReason = "content-filter"
	FinishToolCalls     FinishReason = "tool-calls"
	FinishError         FinishReason = "error"
	FinishOther         FinishReason = "other"
	FinishUnknown       FinishReason = "unknown"
	FinishTripwire      FinishReason = "tripwire"
	FinishRetry         FinishReason = "retry"
)

// finishReasonOf maps FINISH_REASON_TOOL_CALLS to "tool-calls" (unspecified to "unknown").
func finishReasonOf(r treadlev1.FinishReason) FinishReason {
	name := strings.TrimPrefix(r.String(), "FINISH_REASON_")
	if name == "UNSPECIFIED" || name == "" {
		return FinishUnknown
	}
	return FinishReason(strings.ReplaceAll(strings.ToLower(name), "_", "-"))
}

// Chunk is one chunk of a run as Stream yields it. It embeds the generated message, so its
// getters (GetTextDelta, GetFinish, RunId, ...) work on it, and adds the framework's view.
type Chunk struct {
	*treadlev1.Chunk
}

// Type is the Mastra chunk type: "text-delta", "tool-call", "finish", ...; a data chunk's is its
// name ("data-progress").
func (c Chunk) Type() string { return ChunkType(c.Chunk) }

// Text is the text of a "text-delta" or "reasoning-delta" chunk ("" for other chunks).
func (c Chunk) Text() string {
	if d := c.GetTextDelta(); d != nil {
		return d.GetText()
	}
	return c.GetReasoningDelta().GetText()
}

// FinishReason is the reason of a "finish" or "step-finish" chunk ("" for other chunks).
func (c Chunk) FinishReason() FinishReason {
	if f := c.GetFinish(); f != nil {
		return finishReasonOf(f.GetReason())
	}
	if s := c.GetStepFinish(); s != nil {
		return finishReasonOf(s.GetReason())
	}
	return ""
}

// Proto is the generated message.
func (c Chunk) Proto() *treadlev1.Chunk { return c.Chunk }

// Usage counts tokens.
type Usage struct {
	InputTokens, OutputTokens, TotalTokens, ReasoningTokens, CachedInputTokens int64
}

func usageOf(u *treadlev1.Usage) Usage {
	return Usage{u.GetInputTokens(), u.GetOutputTokens(), u.GetTotalTokens(), u.GetReasoningTokens(), u.GetCachedInputTokens()}
}

// ToolCallInfo is one tool call of a run; Args is plain JSON (map[string]any, ...).
type ToolCallInfo struct {
	ToolCallID, ToolName string
	Args                 any
}

// ToolResultInfo is one tool's outcome; Result is plain JSON.
type ToolResultInfo struct {
	ToolCallID, ToolName string
	Args, Result         any
	IsError              bool
}

// TripwireInfo is why a processor stopped the run.
type TripwireInfo struct {
	Reason      string
	Retry       bool
	Metadata    any
	ProcessorID string
}

// Step is one step of a run.
type Step struct {
	StepNumber    int32
	Text          string
	ReasoningText string
	ToolCalls     []ToolCallInfo
	ToolResults   []ToolResultInfo
	FinishReason  FinishReason
	Usage         Usage
	Tripwire      *TripwireInfo
	ModelID       string
}

// Result is what Generate returns: the Mastra framework's result (Text, FinishReason, Usage,
// ToolCalls, ToolResults, Tripwire, Steps) over the generated GenerateResponse, which it embeds
// (Result.GenerateResponse; its other getters, such as GetMessages, work on the result).
type Result struct {
	*treadlev1.GenerateResponse
	Text         string
	FinishReason FinishReason
	Usage        Usage
	// ToolCalls and ToolResults are every step's, in order.
	ToolCalls   []ToolCallInfo
	ToolResults []ToolResultInfo
	Steps       []Step
	// Tripwire is set when a processor stopped the run.
	Tripwire *TripwireInfo
}

func jsonOf(v *structpb.Value) any {
	if v == nil {
		return nil
	}
	return v.AsInterface()
}

func tripwireOf(t *treadlev1.Tripwire) *TripwireInfo {
	if t == nil {
		return nil
	}
	return &TripwireInfo{t.GetReason(), t.GetRetry(), jsonOf(t.GetMetadata()), t.GetProcessorId()}
}

// ResultOf reads a generated GenerateResponse as a Result.
func ResultOf(r *treadlev1.GenerateResponse) *Result {
	out := &Result{GenerateResponse: r, Text: r.GetText(), FinishReason: finishReasonOf(r.GetFinishReason()),
		Usage: usageOf(r.GetUsage()), Tripwire: tripwireOf(r.GetTripwire())}
	for _, s := range r.GetSteps() {
		step := Step{StepNumber: s.GetStepNumber(), Text: s.GetText(), ReasoningText: s.GetReasoningText(),
			FinishReason: finishReasonOf(s.GetFinishReason()), Usage: usageOf(s.GetUsage()),
			Tripwire: tripwireOf(s.GetTripwire()), ModelID: s.GetModelId()}
		for _, c := range s.GetToolCalls() {
			step.ToolCalls = append(step.ToolCalls, ToolCallInfo{c.GetToolCallId(), c.GetToolName(), jsonOf(c.GetArgs())})
		}
		for _, t := range s.GetToolResults() {
			step.ToolResults = append(step.ToolResults, ToolResultInfo{t.GetToolCallId(), t.GetToolName(),
				jsonOf(t.GetArgs()), jsonOf(t.GetResult()), t.GetIsError()})
		}
		out.ToolCalls = append(out.ToolCalls, step.ToolCalls...)
		out.ToolResults = append(out.ToolResults, step.ToolResults...)
		out.Steps = append(out.Steps, step)
	}
	return out
}
