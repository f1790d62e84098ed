package main

// The Mastra processor docs' examples, written with the Go SDK. Each one behaves as its Python
// twin in tests/seed_processors.py (the same tests run against both).

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"github.com/treadle-dev/treadle/clients/go/treadle"
)

// replaceMessages is the whole message list after an edit of each message (nil: keep it),
// each message keeping its source; nil when edit changed nothing.
func replaceMessages(list *treadlev1.MessageListSnapshot, edit func(*treadlev1.Message) *treadlev1.Message) *treadlev1.MessageListReplacement {
	out := &treadlev1.MessageListReplacement{}
	changed := false
	for _, listed := range list.GetMessages() {
		m := listed.Message
		if e := edit(proto.Clone(m).(*treadlev1.Message)); e != nil {
			m, changed = e, changed || !proto.Equal(e, listed.Message)
		} else {
			changed = true
			continue
		}
		out.Messages = append(out.Messages, m)
		out.Sources = append(out.Sources, listed.Source)
	}
	if !changed {
		return nil
	}
	return out
}

// textOf joins the text parts of m with spaces.
func textOf(m *treadlev1.Message) string {
	var texts []string
	for _, p := range m.GetContent().GetParts() {
		if t := p.GetText(); t != nil {
			texts = append(texts, t.Text)
		}
	}
	return strings.Join(texts, " ")
}

// LowercaseProcessor lowercases the text of every input message.
type LowercaseProcessor struct{}

func (LowercaseProcessor) ID() string { return "lowercase" }

func (LowercaseProcessor) ProcessInput(_ context.Context, a *treadle.ProcessInputArgs) (*treadle.Replace, error) {
	r := replaceMessages(a.MessageList, func(m *treadlev1.Message) *treadlev1.Message {
		for _, p := range m.GetContent().GetParts() {
			if t := p.GetText(); t != nil {
				t.Text = strings.ToLower(t.Text)
			}
		}
		return m
	})
	if r == nil {
		return nil, nil
	}
	return &treadle.Replace{Messages: r}, nil
}

// ContentFilter aborts on a blocked word, in the input or in a streamed text delta.
type ContentFilter struct {
	BlockedWords []string
}

func (ContentFilter) ID() string { return "content-filter" }

func (f ContentFilter) blocks(text string) bool {
	return slices.ContainsFunc(f.BlockedWords, func(w string) bool { return strings.Contains(text, w) })
}

func (f ContentFilter) ProcessInput(_ context.Context, a *treadle.ProcessInputArgs) (*treadle.Replace, error) {
	for _, listed := range a.MessageList.GetMessages() {
		if f.blocks(textOf(listed.Message)) {
			return nil, treadle.Abort("Blocked content detected in input")
		}
	}
	return nil, nil
}

func (f ContentFilter) ProcessOutputStream(_ context.Context, a *treadle.ProcessOutputStreamArgs) ([]*treadlev1.Chunk, error) {
	if d := a.Part.GetTextDelta(); d != nil && f.blocks(d.Text) {
		return nil, treadle.Abort("Blocked content detected in output")
	}
	return []*treadlev1.Chunk{a.Part}, nil
}

// AlertingContentFilter is the content filter with the framework's onViolation side effect: it
// records each violation (an alert, in a real one) and tells which word it blocked.
type AlertingContentFilter struct {
	BlockedWords []string
	Record       func(v treadle.Violation)
}

func (AlertingContentFilter) ID() string { return "alerting-filter" }

func (f AlertingContentFilter) ProcessInput(_ context.Context, a *treadle.ProcessInputArgs) (*treadle.Replace, error) {
	for _, listed := range a.MessageList.GetMessages() {
		for _, w := range f.BlockedWords {
			if strings.Contains(textOf(listed.Message), w) {
				return nil, treadle.Abort("Blocked content detected in input", treadle.WithMetadata(map[string]any{"word": w}))
			}
		}
	}
	return nil, nil
}

func (f AlertingContentFilter) OnViolation(_ context.Context, v treadle.Violation) error {
	f.Record(v)
	return errors.New("the alert service is down") // ignored: the run is not affected
}

// WordCounter counts the words of the answer in its per-run state and reports the total on the
// finish chunk (the Mastra example logs it).
type WordCounter struct {
	Report func(a *treadle.ProcessOutputStreamArgs, total int) error
}

func (WordCounter) ID() string { return "word-counter" }

func (w WordCounter) ProcessOutputStream(_ context.Context, a *treadle.ProcessOutputStreamArgs) ([]*treadlev1.Chunk, error) {
	count, _ := a.State["wordCount"].(float64)
	if d := a.Part.GetTextDelta(); d != nil {
		count += float64(len(strings.Fields(d.Text)))
	}
	a.State["wordCount"] = count
	if a.Part.GetFinish() != nil && w.Report != nil {
		if err := w.Report(a, int(count)); err != nil {
			return nil, err
		}
	}
	return []*treadlev1.Chunk{a.Part}, nil
}

// QualityGuardrail asks for a better answer (a retry with feedback) while Evaluate scores it
// below 0.7, three times at most, then blocks it.
type QualityGuardrail struct {
	Evaluate func(text string) float64
}

func (QualityGuardrail) ID() string { return "quality-guardrail" }

func (q QualityGuardrail) ProcessOutputStep(_ context.Context, a *treadle.ProcessOutputStepArgs) (*treadle.Replace, error) {
	score := q.Evaluate(a.Text)
	if score >= 0.7 {
		return nil, nil
	}
	if a.RetryCount < 3 {
		return nil, treadle.Abort("Response quality too low. Please provide more detail.",
			treadle.WithRetry(), treadle.WithMetadata(map[string]any{"quality_score": score}))
	}
	return nil, treadle.Abort("Response quality too low after multiple attempts.")
}

// RedactToolResult redacts ssn and email in lookup-customer results: the whole message list
// goes back with that tool invocation updated.
type RedactToolResult struct{}

func (RedactToolResult) ID() string { return "redact-tool-result" }

func (RedactToolResult) Settings() treadle.Settings {
	return treadle.Settings{Description: "Redacts ssn and email in lookup-customer results."}
}

func (RedactToolResult) ProcessToolResult(_ context.Context, a *treadle.ProcessToolResultArgs) (*treadle.Replace, error) {
	if a.ToolName != "lookup-customer" || a.Result.GetStructValue() == nil {
		return nil, nil
	}
	redacted := proto.Clone(a.Result.GetStructValue()).(*structpb.Struct)
	redacted.Fields["ssn"] = structpb.NewStringValue("[REDACTED]")
	redacted.Fields["email"] = structpb.NewStringValue("[REDACTED]")
	r := replaceMessages(a.MessageList, func(m *treadlev1.Message) *treadlev1.Message {
		for _, part := range m.GetContent().GetParts() {
			if call := part.GetToolInvocation(); call != nil && call.ToolCallId == a.ToolCallId {
				call.State = treadlev1.ToolInvocationState_TOOL_INVOCATION_STATE_RESULT
				call.Result = structpb.NewStructValue(redacted)
			}
		}
		return m
	})
	if r == nil {
		return nil, nil
	}
	return &treadle.Replace{Messages: r}, nil
}

var promptInjection = regexp.MustCompile(`(?i)ignore (all )?(previous|prior) instructions`)

// ScanToolResult blocks a tool result that looks like a prompt injection.
type ScanToolResult struct{}

func (ScanToolResult) ID() string { return "scan-tool-result" }

func (ScanToolResult) ProcessToolResult(_ context.Context, a *treadle.ProcessToolResultArgs) (*treadle.Replace, error) {
	text := a.Result.GetStringValue()
	if _, isString := a.Result.GetKind().(*structpb.Value_StringValue); !isString {
		b, err := json.Marshal(a.Result.AsInterface())
		if err != nil {
			return nil, err
		}
		text = string(b)
	}
	if promptInjection.MatchString(text) {
		return nil, treadle.Abort("blocked by scan-tool-result: suspected prompt injection")
	}
	return nil, nil
}

// ModerationCollector gathers the run's data-moderation chunks in its state ("warnings").
type ModerationCollector struct{}

func (ModerationCollector) ID() string { return "moderation-collector" }

func (ModerationCollector) Settings() treadle.Settings {
	return treadle.Settings{ProcessDataParts: true}
}

func (ModerationCollector) ProcessOutputStream(_ context.Context, a *treadle.ProcessOutputStreamArgs) ([]*treadlev1.Chunk, error) {
	if treadle.ChunkType(a.Part) == "data-moderation" {
		warnings, _ := a.State["warnings"].([]any)
		a.State["warnings"] = append(warnings, a.Part.GetData().GetData().AsInterface())
	}
	return []*treadlev1.Chunk{a.Part}, nil
}

// ErrorRecoveryProcessor retries once after "context length exceeded", without the second and
// third messages.
type ErrorRecoveryProcessor struct{}

func (ErrorRecoveryProcessor) ID() string { return "error-recovery" }

func (ErrorRecoveryProcessor) ProcessAPIError(_ context.Context, a *treadle.ProcessAPIErrorArgs) (*treadle.APIErrorDecision, error) {
	if a.RetryCount > 0 { // only retry once
		return nil, nil
	}
	if e := a.GetError(); e == nil || !strings.Contains(e.Message, "context length exceeded") {
		return nil, nil
	}
	messages := a.MessageList.GetMessages()
	if len(messages) <= 4 {
		return nil, nil
	}
	drop := map[string]bool{messages[1].Message.Id: true, messages[2].Message.Id: true}
	trimmed := replaceMessages(a.MessageList, func(m *treadlev1.Message) *treadlev1.Message {
		if drop[m.Id] {
			return nil
		}
		return m
	})
	return &treadle.APIErrorDecision{Retry: true, Messages: trimmed}, nil
}

// AddToolProcessor adds the server's "lookup" tool to the first step, keeping the agent's.
type AddToolProcessor struct{}

func (AddToolProcessor) ID() string { return "add-tool" }

func (AddToolProcessor) ProcessInputStep(_ context.Context, a *treadle.ProcessInputStepArgs) (*treadle.Replace, error) {
	if a.StepNumber != 0 {
		return nil, nil
	}
	tools := treadle.StepTools(append(a.ToolNames(), "lookup")...)
	return &treadle.Replace{StepOverrides: &treadlev1.StepOverrides{Tools: tools}}, nil
}
