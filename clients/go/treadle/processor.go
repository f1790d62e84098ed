// Package treadle is the Go SDK for Treadle: remote processors (Attach), remote tools
// (ServeTools) and an agent client (Dial) for agents and their memory threads. A processor is a
// value with an ID and the hook methods of the Mastra Processor API it implements; the SDK
// declares exactly those hooks and does the protocol's work (handshake, protocol versions 1 and
// 2, answer order, state versions, deadlines, cancel, drain, run_ended, reconnect with backoff
// and jitter); TextGate holds streamed text for a guard. WithTLS, WithToken and
// WithTracerProvider apply to all three.
package treadle

import (
	"context"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// Processor is anything with an id; it also implements one or more of the hook interfaces below.
type Processor interface {
	ID() string
}

// Call is what every hook's args carry: the run's identity, the per-run State and the writer.
type Call struct {
	ProcessorID    string
	RunID          string
	AgentID        string
	ThreadID       string
	ResourceID     string
	StepNumber     int32
	RetryCount     int32
	ProcessorIndex int32
	RequestContext *structpb.Struct
	// State is the processor's state for this run, shared by all its hooks and steps. Changes
	// made by a hook are sent to the server (with a new version) in the hook's answer.
	State State
	// Writer emits custom `data-*` chunks; they travel in the hook's answer.
	Writer *Writer
}

// ProcessInputArgs are the arguments of ProcessInput.
type ProcessInputArgs struct {
	Call
	MessageList *treadlev1.MessageListSnapshot
}

// ProcessInputStepArgs are the arguments of ProcessInputStep.
type ProcessInputStepArgs struct {
	Call
	*treadlev1.ProcessInputStepArgs
}

// ToolNames are the names of the step's tools (GetTools()), in order.
func (a *ProcessInputStepArgs) ToolNames() []string {
	names := make([]string, 0, len(a.GetTools()))
	for _, t := range a.GetTools() {
		names = append(names, t.GetName())
	}
	return names
}

// StepTools is the Mastra Processor API's `tools` result of processInputStep, for
// StepOverrides.Tools: the step's tools become exactly these names (append one to
// args.ToolNames() to add a tool). Each is one of the step's tools, a tool registered on the
// server, or a tool an attached tool service serves (ServeTools).
func StepTools(names ...string) *treadlev1.StepTools {
	return &treadlev1.StepTools{Names: append([]string{}, names...)}
}

// ProcessLLMRequestArgs are the arguments of ProcessLLMRequest.
type ProcessLLMRequestArgs struct {
	Call
	*treadlev1.ProcessLLMRequestArgs
}

// ProcessLLMResponseArgs are the arguments of ProcessLLMResponse.
type ProcessLLMResponseArgs struct {
	Call
	*treadlev1.ProcessLLMResponseArgs
}

// ProcessAPIErrorArgs are the arguments of ProcessAPIError.
type ProcessAPIErrorArgs struct {
	Call
	*treadlev1.ProcessAPIErrorArgs
}

// ProcessOutputStreamArgs are the arguments of ProcessOutputStream: one chunk, and every chunk
// of the run before it (the Mastra `streamParts`), kept by the SDK.
type ProcessOutputStreamArgs struct {
	Call
	Part        *treadlev1.Chunk
	StreamParts []*treadlev1.Chunk
}

// ProcessOutputStepArgs are the arguments of ProcessOutputStep.
type ProcessOutputStepArgs struct {
	Call
	*treadlev1.ProcessOutputStepArgs
}

// ProcessToolResultArgs are the arguments of ProcessToolResult.
type ProcessToolResultArgs struct {
	Call
	*treadlev1.ProcessToolResultArgs
}

// ProcessOutputResultArgs are the arguments of ProcessOutputResult.
type ProcessOutputResultArgs struct {
	Call
	*treadlev1.ProcessOutputResultArgs
}

// BeforeToolCallArgs are the arguments of BeforeToolCall.
type BeforeToolCallArgs struct {
	Call
	*treadlev1.BeforeToolCallArgs
}

// AfterToolCallArgs are the arguments of AfterToolCall.
type AfterToolCallArgs struct {
	Call
	*treadlev1.AfterToolCallArgs
}

// OnDelegationStartArgs are the arguments of OnDelegationStart.
type OnDelegationStartArgs struct {
	Call
	*treadlev1.OnDelegationStartArgs
}

// OnDelegationCompleteArgs are the arguments of OnDelegationComplete.
type OnDelegationCompleteArgs struct {
	Call
	*treadlev1.OnDelegationCompleteArgs
}

// DelegationStart is OnDelegationStart's answer (nil: proceed as asked). Reject rejects the
// delegation: the tool returns "[Delegation Rejected] <RejectionReason>". Otherwise each Modified*
// field that is set replaces the delegation's own.
type DelegationStart = treadlev1.DelegationStartOutcome

// DelegationComplete is OnDelegationComplete's answer (nil: nothing): Feedback is added as an
// assistant message after the tool results, Bail ends the parent's run after this step.
type DelegationComplete = treadlev1.DelegationCompleteOutcome

// TransformToolPayloadArgs are the arguments of TransformToolPayload: GetTarget() ("display" or
// "transcript"), GetPhase() ("input", "output" or "error"), GetToolName(), GetToolCallId(), and
// Payload, the payload as plain JSON (map[string]any, []any, string, float64, bool or nil).
type TransformToolPayloadArgs struct {
	Call
	*treadlev1.TransformToolPayloadArgs
	Payload any
}

// SkipTool is BeforeToolCall's refusal: the tool does not run and Output (JSON-compatible)
// stands for its result. A nil *SkipTool lets the tool run.
type SkipTool struct {
	Output any
}

// Replace is a hook's replacements; a nil *Replace means unchanged.
type Replace = treadlev1.ReplaceOutcome

// APIErrorDecision is what ProcessAPIError decided; nil means do not retry, change nothing.
type APIErrorDecision struct {
	// Retry the failed provider call.
	Retry bool
	// The message list after the processor's edits; nil keeps it.
	Messages *treadlev1.MessageListReplacement
}

// ProcessInput runs once per call, before the loop.
type ProcessInput interface {
	ProcessInput(ctx context.Context, args *ProcessInputArgs) (*Replace, error)
}

// ProcessInputStep runs at every step, before the provider call.
type ProcessInputStep interface {
	ProcessInputStep(ctx context.Context, args *ProcessInputStepArgs) (*Replace, error)
}

// ProcessLLMRequest runs on the provider prompt, before the call.
type ProcessLLMRequest interface {
	ProcessLLMRequest(ctx context.Context, args *ProcessLLMRequestArgs) (*Replace, error)
}

// ProcessLLMResponse runs after a step's provider response; it may only abort or fail.
type ProcessLLMResponse interface {
	ProcessLLMResponse(ctx context.Context, args *ProcessLLMResponseArgs) error
}

// ProcessAPIError runs when the provider call failed.
type ProcessAPIError interface {
	ProcessAPIError(ctx context.Context, args *ProcessAPIErrorArgs) (*APIErrorDecision, error)
}

// ProcessOutputStream runs on every stream chunk. It returns the chunks that take the part's
// place: []*Chunk{args.Part} passes it unchanged, nil drops it, another chunk replaces it.
// With protocol version 2 (the server's welcome picks it) several chunks replace it, in order,
// and an empty non-nil slice holds it back, to be released with a later chunk (see TextGate);
// released text deltas may leave their id empty. On a version-1 stream more than one chunk is
// answered as an error.
type ProcessOutputStream interface {
	ProcessOutputStream(ctx context.Context, args *ProcessOutputStreamArgs) ([]*treadlev1.Chunk, error)
}

// ProcessOutputStep runs after each step, before tools run.
type ProcessOutputStep interface {
	ProcessOutputStep(ctx context.Context, args *ProcessOutputStepArgs) (*Replace, error)
}

// ProcessToolResult runs on each tool result.
type ProcessToolResult interface {
	ProcessToolResult(ctx context.Context, args *ProcessToolResultArgs) (*Replace, error)
}

// ProcessOutputResult runs once at the end of the call.
type ProcessOutputResult interface {
	ProcessOutputResult(ctx context.Context, args *ProcessOutputResultArgs) (*Replace, error)
}

// BeforeToolCall runs before each tool call of the agents that list the processor (the agent's
// own tool hooks run first); it may refuse the call.
type BeforeToolCall interface {
	BeforeToolCall(ctx context.Context, args *BeforeToolCallArgs) (*SkipTool, error)
}

// AfterToolCall runs after each tool call (not after a refused one) and sees its output or
// error; it may only abort or fail.
type AfterToolCall interface {
	AfterToolCall(ctx context.Context, args *AfterToolCallArgs) error
}

// OnDelegationStart runs before a sub-agent tool (agent-<key>) of the agents that list the
// processor; it may reject the delegation or change its prompt, instructions or step cap.
type OnDelegationStart interface {
	OnDelegationStart(ctx context.Context, args *OnDelegationStartArgs) (*DelegationStart, error)
}

// OnDelegationComplete runs after a sub-agent tool ran, with its result or error.
type OnDelegationComplete interface {
	OnDelegationComplete(ctx context.Context, args *OnDelegationCompleteArgs) (*DelegationComplete, error)
}

// TransformToolPayload (the framework's hooks.transform) returns how one tool payload looks to
// clients (target "display": streams, results, subscriptions) or in the history they read
// ("transcript"). It runs only for agents that list the processor in toolPayloadProcessors, for
// the tools Settings.ToolNames names for it (every tool when none). Returning nil, or an error,
// shows {"message": "Tool <phase> payload unavailable"}: the server fails closed.
type TransformToolPayload interface {
	TransformToolPayload(ctx context.Context, args *TransformToolPayloadArgs) (any, error)
}

// ResolveAgentArgs are the arguments of ResolveAgent: GetAgent() is the agent as its variants
// resolved it for this call; the request context is Call.RequestContext.
type ResolveAgentArgs struct {
	Call
	*treadlev1.ResolveAgentArgs
}

// AgentOverrides are what ResolveAgent changes for one call; nil fields keep their resolved
// values (a non-nil empty slice empties the list).
type AgentOverrides struct {
	// Model is a `provider/model` router string; "" keeps the resolved model.
	Model string
	// Instructions replace the agent's instructions, one system message each.
	Instructions []string
	// Tools replace the agent's tools, by name.
	Tools []string
	// InputProcessors, OutputProcessors and ErrorProcessors replace a lane, by processor id.
	InputProcessors, OutputProcessors, ErrorProcessors []string
	// DefaultOptions are merged over the resolved call defaults, field by field.
	DefaultOptions *treadlev1.CallOptions
}

func (o *AgentOverrides) proto() *treadlev1.AgentOverrides {
	out := &treadlev1.AgentOverrides{DefaultOptions: o.DefaultOptions}
	if o.Model != "" {
		out.Model = &o.Model
	}
	if o.Instructions != nil {
		out.Instructions = &treadlev1.SystemMessages{}
		for _, text := range o.Instructions {
			out.Instructions.Messages = append(out.Instructions.Messages, &treadlev1.SystemMessage{Content: text})
		}
	}
	if o.Tools != nil {
		out.Tools = &treadlev1.ToolNames{Names: o.Tools}
	}
	lane := func(ids []string) *treadlev1.ProcessorList {
		if ids == nil {
			return nil
		}
		l := &treadlev1.ProcessorList{}
		for _, id := range ids {
			l.Processors = append(l.Processors, &treadlev1.ProcessorRef{Id: id})
		}
		return l
	}
	out.InputProcessors, out.OutputProcessors, out.ErrorProcessors = lane(o.InputProcessors), lane(o.OutputProcessors), lane(o.ErrorProcessors)
	return out
}

// ResolveAgent runs once per call, before memory loads, for the processor an agent names as its
// resolver (the framework's function-valued model, instructions, tools, ...); nil overrides
// change nothing.
type ResolveAgent interface {
	ResolveAgent(ctx context.Context, args *ResolveAgentArgs) (*AgentOverrides, error)
}

// Violation is what OnViolation receives (the framework's ProcessorViolation).
type Violation struct {
	// ProcessorID is the processor that aborted; Message the abort's reason.
	ProcessorID, Message string
	// Detail is the abort's metadata as plain JSON, nil when it gave none.
	Detail any
	// Hook is the hook that aborted: "processInput", "processOutputStream", ...
	Hook string
}

// OnViolation is called after the processor aborted a run, from any of its hooks, for side
// effects (an alert, a log line). It is declared with the other hooks, always fire and forget:
// the run never waits for it, and its error is ignored.
type OnViolation interface {
	OnViolation(ctx context.Context, v Violation) error
}

// Settings tune a processor's declaration; a processor that has a Settings() Settings method
// uses them.
type Settings struct {
	Name, Description string
	// Hooks run in OBSERVE mode (fire and forget: the run never waits and no answer is sent).
	Observe []treadlev1.Hook
	// The timeout to ask for, per hook.
	Timeouts map[treadlev1.Hook]Duration
	// BeforeToolCall, AfterToolCall, ProcessToolResult and TransformToolPayload: the tools (by
	// name) the hook is invoked for, per hook; none means every tool.
	ToolNames map[treadlev1.Hook][]string
	// processOutputStream: per-chunk or windowed delivery (default windowed), the most chunks
	// per invocation, invocations in flight (default 4), and whether data-* chunks are sent.
	Delivery         treadlev1.StreamDelivery
	MaxWindow        uint32
	MaxInFlight      uint32
	ProcessDataParts bool
}

// Configured is a processor with Settings.
type Configured interface {
	Settings() Settings
}

// State is a processor's per-run state, a JSON object.
type State map[string]any

// Writer collects custom chunks written by one invocation.
type Writer struct {
	chunks []*treadlev1.DataChunk
}

// Custom emits a `data-*` chunk (name must start with "data-") with a JSON-compatible payload.
func (w *Writer) Custom(name string, data any, opts ...CustomOption) error {
	v, err := structpb.NewValue(normalise(data))
	if err != nil {
		return err
	}
	c := &treadlev1.DataChunk{Name: name, Data: v}
	for _, o := range opts {
		o(c)
	}
	w.chunks = append(w.chunks, c)
	return nil
}

// CustomOption tunes a custom chunk.
type CustomOption func(*treadlev1.DataChunk)

// Transient marks a custom chunk as streamed only, never stored.
func Transient() CustomOption { return func(c *treadlev1.DataChunk) { c.Transient = true } }

// ChunkID gives a custom chunk an id (a later chunk with the same name and id replaces it).
func ChunkID(id string) CustomOption { return func(c *treadlev1.DataChunk) { c.Id = id } }
