package treadle

import (
	"fmt"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// AbortError is a hook's abort (the Mastra `abort(reason, {retry, metadata})`): return it from
// any hook to stop the run with a tripwire, or with Retry to redo the step.
type AbortError struct {
	Reason   string
	Retry    bool
	Metadata any
}

func (e *AbortError) Error() string { return fmt.Sprintf("processor aborted: %s", e.Reason) }

// AbortOption tunes an abort.
type AbortOption func(*AbortError)

// WithRetry asks for the step to be redone with the reason as feedback.
func WithRetry() AbortOption { return func(e *AbortError) { e.Retry = true } }

// WithMetadata attaches JSON-compatible data to the tripwire chunk.
func WithMetadata(m any) AbortOption { return func(e *AbortError) { e.Metadata = m } }

// Abort returns the error a hook returns to abort: `return nil, treadle.Abort("no")`.
func Abort(reason string, opts ...AbortOption) *AbortError {
	e := &AbortError{Reason: reason}
	for _, o := range opts {
		o(e)
	}
	return e
}

func (e *AbortError) outcome() *treadlev1.AbortOutcome {
	out := &treadlev1.AbortOutcome{Reason: e.Reason, Retry: e.Retry}
	if e.Metadata != nil {
		if v, err := structpb.NewValue(normalise(e.Metadata)); err == nil {
			out.Metadata = v
		}
	}
	return out
}
