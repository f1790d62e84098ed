package treadle

import (
	"context"
	"errors"
	"fmt"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"go.opentelemetry.io/otel/attribute"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// invoke runs one invocation and returns its answer; it never panics and always answers.
func (h *host) invoke(ctx context.Context, inv *treadlev1.Invocation, rs *runState, version uint32) (res *treadlev1.InvocationResult) {
	id := inv.InvocationId
	defer func() {
		if r := recover(); r != nil {
			res = errorResult(id, fmt.Errorf("hook panicked: %v", r))
		}
	}()
	if err := ctx.Err(); err != nil {
		return errorResult(id, err)
	}
	p := h.processors[inv.ProcessorId]
	if p == nil {
		return errorResult(id, fmt.Errorf("processor %q is not served here", inv.ProcessorId))
	}
	// Both sides number one sequence (starting empty at version 0): take the server's state
	// unless it is older than ours; a change made here is sent as the version held plus one.
	if s := inv.GetState(); s != nil && s.Version >= rs.version {
		rs.state = State(s.GetValue().AsMap())
		rs.version = s.Version
	}
	before, _ := stateStruct(rs.state)
	w := &Writer{}
	call := Call{ProcessorID: inv.ProcessorId, RunID: inv.RunId, AgentID: inv.AgentId,
		ThreadID: inv.ThreadId, ResourceID: inv.ResourceId, StepNumber: inv.StepNumber,
		RetryCount: inv.RetryCount, ProcessorIndex: inv.ProcessorIndex,
		RequestContext: inv.RequestContext, State: rs.state, Writer: w}
	if h.o.onInvocation != nil {
		h.o.onInvocation(inv.ProcessorId, inv.Hook)
	}
	ctx, span := startSpan(ctx, h.tracer, hookNames[inv.Hook]+" "+inv.ProcessorId, inv.TraceContext,
		attribute.String("treadle.processor.id", inv.ProcessorId), attribute.String("treadle.processor.hook", hookNames[inv.Hook]),
		attribute.String("treadle.run.id", inv.RunId), attribute.Int("treadle.step.number", int(inv.StepNumber)),
		attribute.Int("treadle.processor.retry_count", int(inv.RetryCount)))
	defer span.End()
	res = h.dispatch(ctx, p, inv, call, rs, version)
	if e := res.GetError(); e != nil {
		markError(span, errors.New(e.Message))
	}
	if o := res.ProtoReflect().WhichOneof(res.ProtoReflect().Descriptor().Oneofs().ByName("outcome")); o != nil {
		span.SetAttributes(attribute.String("treadle.processor.outcome", string(o.Name())))
	}
	if parts := inv.GetProcessOutputStream().GetParts(); parts != nil {
		span.SetAttributes(attribute.Int("treadle.processor.chunk_count", len(parts)))
	}
	res.InvocationId = id
	after, err := stateStruct(rs.state)
	if err != nil {
		return errorResult(id, fmt.Errorf("state is not a JSON object: %w", err))
	}
	if !proto.Equal(before, after) {
		rs.version++
		res.State = &treadlev1.ProcessorState{Value: after, Version: rs.version}
	}
	res.CustomChunks = w.chunks
	return res
}

func (h *host) dispatch(ctx context.Context, p Processor, inv *treadlev1.Invocation, c Call, rs *runState, version uint32) *treadlev1.InvocationResult {
	missing := func() *treadlev1.InvocationResult {
		return errorResult("", fmt.Errorf("processor %q does not serve %s", inv.ProcessorId, inv.Hook))
	}
	switch inv.Hook {
	case treadlev1.Hook_HOOK_PROCESS_INPUT:
		if x, ok := p.(ProcessInput); ok {
			return replaceResult(x.ProcessInput(ctx, &ProcessInputArgs{c, inv.GetProcessInput().GetMessageList()}))
		}
	case treadlev1.Hook_HOOK_PROCESS_INPUT_STEP:
		if x, ok := p.(ProcessInputStep); ok {
			return replaceResult(x.ProcessInputStep(ctx, &ProcessInputStepArgs{c, inv.GetProcessInputStep()}))
		}
	case treadlev1.Hook_HOOK_PROCESS_LLM_REQUEST:
		if x, ok := p.(ProcessLLMRequest); ok {
			return replaceResult(x.ProcessLLMRequest(ctx, &ProcessLLMRequestArgs{c, inv.GetProcessLlmRequest()}))
		}
	case treadlev1.Hook_HOOK_PROCESS_LLM_RESPONSE:
		if x, ok := p.(ProcessLLMResponse); ok {
			return replaceResult(nil, x.ProcessLLMResponse(ctx, &ProcessLLMResponseArgs{c, inv.GetProcessLlmResponse()}))
		}
	case treadlev1.Hook_HOOK_PROCESS_API_ERROR:
		if x, ok := p.(ProcessAPIError); ok {
			d, err := x.ProcessAPIError(ctx, &ProcessAPIErrorArgs{c, inv.GetProcessApiError()})
			if err != nil || d == nil || !d.Retry {
				var r *Replace
				if d != nil && d.Messages != nil {
					r = &Replace{Messages: d.Messages}
				}
				return replaceResult(r, err)
			}
			return &treadlev1.InvocationResult{Outcome: &treadlev1.InvocationResult_Retry{Retry: &treadlev1.RetryOutcome{Messages: d.Messages}}}
		}
	case treadlev1.Hook_HOOK_PROCESS_OUTPUT_STREAM:
		if x, ok := p.(ProcessOutputStream); ok {
			return streamResult(ctx, x, inv.GetProcessOutputStream().GetParts(), c, rs, version)
		}
	case treadlev1.Hook_HOOK_PROCESS_OUTPUT_STEP:
		if x, ok := p.(ProcessOutputStep); ok {
			return replaceResult(x.ProcessOutputStep(ctx, &ProcessOutputStepArgs{c, inv.GetProcessOutputStep()}))
		}
	case treadlev1.Hook_HOOK_PROCESS_TOOL_RESULT:
		if x, ok := p.(ProcessToolResult); ok {
			return replaceResult(x.ProcessToolResult(ctx, &ProcessToolResultArgs{c, inv.GetProcessToolResult()}))
		}
	case treadlev1.Hook_HOOK_PROCESS_OUTPUT_RESULT:
		if x, ok := p.(ProcessOutputResult); ok {
			return replaceResult(x.ProcessOutputResult(ctx, &ProcessOutputResultArgs{c, inv.GetProcessOutputResult()}))
		}
	case treadlev1.Hook_HOOK_BEFORE_TOOL_CALL:
		if x, ok := p.(BeforeToolCall); ok {
			skip, err := x.BeforeToolCall(ctx, &BeforeToolCallArgs{c, inv.GetBeforeToolCall()})
			if err != nil || skip == nil {
				return replaceResult(nil, err)
			}
			out := &treadlev1.SkipToolOutcome{}
			if skip.Output != nil {
				v, err := structpb.NewValue(normalise(skip.Output))
				if err != nil {
					return errorResult("", fmt.Errorf("SkipTool.Output is not JSON: %w", err))
				}
				out.Output = v
			}
			return &treadlev1.InvocationResult{Outcome: &treadlev1.InvocationResult_SkipTool{SkipTool: out}}
		}
	case treadlev1.Hook_HOOK_AFTER_TOOL_CALL:
		if x, ok := p.(AfterToolCall); ok {
			return replaceResult(nil, x.AfterToolCall(ctx, &AfterToolCallArgs{c, inv.GetAfterToolCall()}))
		}
	case treadlev1.Hook_HOOK_ON_DELEGATION_START:
		if x, ok := p.(OnDelegationStart); ok {
			d, err := x.OnDelegationStart(ctx, &OnDelegationStartArgs{c, inv.GetOnDelegationStart()})
			if err != nil || d == nil {
				return replaceResult(nil, err)
			}
			return &treadlev1.InvocationResult{Outcome: &treadlev1.InvocationResult_DelegationStart{DelegationStart: d}}
		}
	case treadlev1.Hook_HOOK_ON_DELEGATION_COMPLETE:
		if x, ok := p.(OnDelegationComplete); ok {
			d, err := x.OnDelegationComplete(ctx, &OnDelegationCompleteArgs{c, inv.GetOnDelegationComplete()})
			if err != nil || d == nil {
				return replaceResult(nil, err)
			}
			return &treadlev1.InvocationResult{Outcome: &treadlev1.InvocationResult_DelegationComplete{DelegationComplete: d}}
		}
	case treadlev1.Hook_HOOK_TRANSFORM_TOOL_PAYLOAD:
		if x, ok := p.(TransformToolPayload); ok {
			a := inv.GetTransformToolPayload()
			var payload any
			if a.GetPayload() != nil {
				payload = a.GetPayload().AsInterface()
			}
			shown, err := x.TransformToolPayload(ctx, &TransformToolPayloadArgs{c, a, payload})
			if err != nil {
				return replaceResult(nil, err)
			}
			out := &treadlev1.TransformedPayload{}
			if shown != nil { // nil: the hook yielded nothing, and the server shows its placeholder
				v, err := structpb.NewValue(normalise(shown))
				if err != nil {
					return errorResult("", fmt.Errorf("TransformToolPayload returned a value that is not JSON: %w", err))
				}
				out.Payload = v
			}
			return &treadlev1.InvocationResult{Outcome: &treadlev1.InvocationResult_Transformed{Transformed: out}}
		}
	case treadlev1.Hook_HOOK_RESOLVE_AGENT:
		if x, ok := p.(ResolveAgent); ok {
			o, err := x.ResolveAgent(ctx, &ResolveAgentArgs{c, inv.GetResolveAgent()})
			if err != nil || o == nil {
				return replaceResult(nil, err)
			}
			return &treadlev1.InvocationResult{Outcome: &treadlev1.InvocationResult_AgentOverrides{AgentOverrides: o.proto()}}
		}
	case treadlev1.Hook_HOOK_ON_VIOLATION:
		if x, ok := p.(OnViolation); ok {
			v := inv.GetOnViolation()
			var detail any
			if v.GetDetail() != nil {
				detail = v.GetDetail().AsInterface()
			}
			_ = x.OnViolation(ctx, Violation{v.GetProcessorId(), v.GetMessage(), detail, v.GetHook()}) // errors are ignored
			return replaceResult(nil, nil)                                                             // observe: never sent
		}
	}
	return missing()
}

// streamResult calls the hook once per part, in order, and answers one outcome per part.
func streamResult(ctx context.Context, x ProcessOutputStream, parts []*treadlev1.Chunk, c Call, rs *runState, version uint32) *treadlev1.InvocationResult {
	out := &treadlev1.StreamOutcomes{}
	for _, part := range parts {
		rs.parts = append(rs.parts, part)
		chunks, err := x.ProcessOutputStream(ctx, &ProcessOutputStreamArgs{Call: c, Part: part, StreamParts: rs.parts})
		var abort *AbortError
		if errors.As(err, &abort) {
			out.Chunks = append(out.Chunks, &treadlev1.ChunkOutcome{Outcome: &treadlev1.ChunkOutcome_Abort{Abort: abort.outcome()}})
			return streamOutcomes(out)
		}
		out.Chunks = append(out.Chunks, chunkOutcome(part, chunks, err, version))
	}
	return streamOutcomes(out)
}

// chunkOutcome is what the hook's answer for part means on the wire. A single chunk travels as
// unchanged or replace (both versions); several, or an empty non-nil slice (a held delta), as
// version 2's `chunks`.
func chunkOutcome(part *treadlev1.Chunk, chunks []*treadlev1.Chunk, err error, version uint32) *treadlev1.ChunkOutcome {
	switch {
	case err != nil:
		return &treadlev1.ChunkOutcome{Outcome: &treadlev1.ChunkOutcome_Error{Error: &treadlev1.ErrorOutcome{Message: err.Error()}}}
	case len(chunks) == 1 && (chunks[0] == part || proto.Equal(chunks[0], part)):
		return &treadlev1.ChunkOutcome{Outcome: &treadlev1.ChunkOutcome_Unchanged{Unchanged: &treadlev1.UnchangedOutcome{}}}
	case len(chunks) == 1:
		return &treadlev1.ChunkOutcome{Outcome: &treadlev1.ChunkOutcome_Replace{Replace: chunks[0]}}
	case chunks == nil || (len(chunks) == 0 && version < 2):
		return &treadlev1.ChunkOutcome{Outcome: &treadlev1.ChunkOutcome_Drop{Drop: &treadlev1.DropOutcome{}}}
	case version < 2:
		return &treadlev1.ChunkOutcome{Outcome: &treadlev1.ChunkOutcome_Error{Error: &treadlev1.ErrorOutcome{
			Message: fmt.Sprintf("returned %d chunks for one; that needs protocol version 2, the server speaks %d", len(chunks), version)}}}
	}
	return &treadlev1.ChunkOutcome{Outcome: &treadlev1.ChunkOutcome_Chunks{Chunks: &treadlev1.ChunkSequence{Chunks: chunks}}}
}

func streamOutcomes(o *treadlev1.StreamOutcomes) *treadlev1.InvocationResult {
	return &treadlev1.InvocationResult{Outcome: &treadlev1.InvocationResult_Stream{Stream: o}}
}

func replaceResult(r *Replace, err error) *treadlev1.InvocationResult {
	var abort *AbortError
	switch {
	case errors.As(err, &abort):
		return &treadlev1.InvocationResult{Outcome: &treadlev1.InvocationResult_Abort{Abort: abort.outcome()}}
	case err != nil:
		return errorResult("", err)
	case r == nil:
		return &treadlev1.InvocationResult{Outcome: &treadlev1.InvocationResult_Unchanged{Unchanged: &treadlev1.UnchangedOutcome{}}}
	}
	return &treadlev1.InvocationResult{Outcome: &treadlev1.InvocationResult_Replace{Replace: r}}
}

func errorResult(id string, err error) *treadlev1.InvocationResult {
	return &treadlev1.InvocationResult{InvocationId: id, Outcome: &treadlev1.InvocationResult_Error{Error: &treadlev1.ErrorOutcome{Message: err.Error()}}}
}
