package treadle

import (
	"context"
	"testing"
	"time"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
)

// retrier observes processOutputStep and retries API errors with a 5xx status.
type retrier struct{ observed chan int32 }

func (retrier) ID() string { return "retrier" }

func (retrier) Settings() Settings {
	return Settings{Observe: []treadlev1.Hook{treadlev1.Hook_HOOK_PROCESS_OUTPUT_STEP}}
}

func (r retrier) ProcessOutputStep(_ context.Context, a *ProcessOutputStepArgs) (*Replace, error) {
	r.observed <- a.StepNumber
	return nil, nil
}

func (retrier) ProcessAPIError(_ context.Context, a *ProcessAPIErrorArgs) (*APIErrorDecision, error) {
	return &APIErrorDecision{Retry: a.GetError().GetStatusCode() >= 500}, nil
}

func TestObserveHooksAreNotAnsweredAndAPIErrorsRetry(t *testing.T) {
	r := retrier{observed: make(chan int32, 1)}
	_, s := attachTo(t, &fakeServer{}, r)
	hooks := s.handshake.Processors[0].Hooks
	if len(hooks) != 2 || hooks[0].Hook != treadlev1.Hook_HOOK_PROCESS_API_ERROR || hooks[1].Mode != treadlev1.HookMode_HOOK_MODE_OBSERVE {
		t.Fatalf("hooks: %v", hooks)
	}
	s.invoke(t, &treadlev1.Invocation{InvocationId: "o", ProcessorId: "retrier", RunId: "r", StepNumber: 3,
		Hook: treadlev1.Hook_HOOK_PROCESS_OUTPUT_STEP, Args: &treadlev1.Invocation_ProcessOutputStep{ProcessOutputStep: &treadlev1.ProcessOutputStepArgs{}}})
	if next(t, r.observed) != 3 {
		t.Fatal("observe hook saw the wrong step")
	}
	for _, code := range []int32{503, 400} {
		s.invoke(t, &treadlev1.Invocation{InvocationId: "e", ProcessorId: "retrier", RunId: "r", Hook: treadlev1.Hook_HOOK_PROCESS_API_ERROR,
			Args: &treadlev1.Invocation_ProcessApiError{ProcessApiError: &treadlev1.ProcessAPIErrorArgs{Error: &treadlev1.APIError{StatusCode: code}}}})
		// The observe invocation of the same run ran first and sent nothing: this is the next answer.
		res := s.result(t)
		if res.InvocationId != "e" || (code == 503) != (res.GetRetry() != nil) || (code == 400) != (res.GetUnchanged() != nil) {
			t.Fatalf("status %d: %v", code, res)
		}
	}
}

func TestDrainThenCloseReconnects(t *testing.T) {
	f := &fakeServer{}
	a, s := attachTo(t, f, &guard{})
	s.send(t, &treadlev1.ProcessorServiceAttachResponse{Message: &treadlev1.ProcessorServiceAttachResponse_Drain{Drain: &treadlev1.Drain{}}})
	s.end <- nil // the server closes the stream once drained
	next(t, f.streams)
	if a.StreamsOpened() != 2 {
		t.Fatalf("%d streams", a.StreamsOpened())
	}
}

func TestIdleRunsAreForgottenAfterTheStateTTL(t *testing.T) {
	clock := time.Unix(1000, 0)
	h := &host{o: buildOptions([]Option{WithStateTTL(time.Minute)}), runs: map[runKey]*runState{}, now: func() time.Time { return clock }}
	_, q := h.queue(input("1", "idle"))
	close(q.tail)
	_, busy := h.queue(input("2", "busy")) // still in flight
	clock = clock.Add(2 * time.Minute)
	h.queue(input("3", "new"))
	if _, ok := h.runs[runKey{"idle", "guard"}]; ok {
		t.Fatal("idle run kept past its TTL")
	}
	if _, ok := h.runs[runKey{"busy", "guard"}]; !ok {
		t.Fatal("a run with an invocation in flight was forgotten")
	}
	close(busy.tail)
}
