package treadle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/structpb"
)

// Scorer is a scorer served to agents, which name it by ID in their scorers: Score judges one
// finished run with a score in [0, 1]; an error fails the scoring (the server retries it as the
// scorer's failure policy says).
type Scorer struct {
	ID          string
	Name        string
	Description string
	Score       func(ctx context.Context, run *ScorerRun) (Score, error)
}

// Score is a scorer's answer.
type Score struct {
	// Score is in [0, 1].
	Score  float64
	Reason string
	// Details are stored with the score; JSON-compatible values.
	Details map[string]any
}

// ScorerRun is one finished run, as a scorer sees it.
type ScorerRun struct {
	RunID              string
	AgentID            string
	ThreadID           string
	ResourceID         string
	RequestContext     *structpb.Struct
	InputMessages      []*treadlev1.Message
	RememberedMessages []*treadlev1.Message
	SystemMessages     []*treadlev1.SystemMessage
	// Output is the run's response messages, as stored.
	Output []*treadlev1.Message
	// Source is "live", or "test" when the run is scored on demand (ScoreRun).
	Source       string
	AgentVersion string
}

func messageText(m *treadlev1.Message) string {
	var b strings.Builder
	for _, p := range m.GetContent().GetParts() {
		b.WriteString(p.GetText().GetText())
	}
	return b.String()
}

// Answer is the text of the run's assistant messages.
func (r *ScorerRun) Answer() string {
	var b strings.Builder
	for _, m := range r.Output {
		if m.GetRole() == treadlev1.MessageRole_MESSAGE_ROLE_ASSISTANT {
			b.WriteString(messageText(m))
		}
	}
	return b.String()
}

// Question is the text of the run's last user input message.
func (r *ScorerRun) Question() string {
	for i := len(r.InputMessages) - 1; i >= 0; i-- {
		if m := r.InputMessages[i]; m.GetRole() == treadlev1.MessageRole_MESSAGE_ROLE_USER && messageText(m) != "" {
			return messageText(m)
		}
	}
	return ""
}

// ServeScorers serves scorers to the server at target until the returned attachment is closed.
func ServeScorers(ctx context.Context, target string, scorers ...Scorer) (*Attachment, error) {
	return ServeScorersWith(ctx, target, scorers)
}

// ServeScorersWith is ServeScorers with options (backoff, instance id, logger, dial options).
func ServeScorersWith(ctx context.Context, target string, scorers []Scorer, opts ...Option) (*Attachment, error) {
	if len(scorers) == 0 {
		return nil, errors.New("give at least one scorer")
	}
	byID := map[string]Scorer{}
	var decls []*treadlev1.ScorerDeclaration
	label := "scorer"
	for _, s := range scorers {
		if s.ID == "" || s.Score == nil {
			return nil, fmt.Errorf("scorer %q needs an ID and a Score function", s.ID)
		}
		if _, dup := byID[s.ID]; dup {
			return nil, fmt.Errorf("scorer %q is given twice", s.ID)
		}
		byID[s.ID] = s
		decls = append(decls, &treadlev1.ScorerDeclaration{Id: s.ID, Name: s.Name, Description: s.Description})
		label += " " + s.ID
	}
	o := buildOptions(opts)
	once := func(ctx context.Context, conn *grpc.ClientConn, welcomed func()) error {
		return serveScorerStream(ctx, conn, welcomed, byID, decls, o)
	}
	return start(ctx, target, o, label, once)
}

func serveScorerStream(ctx context.Context, conn *grpc.ClientConn, welcomed func(), scorers map[string]Scorer,
	decls []*treadlev1.ScorerDeclaration, o options) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	st, err := treadlev1.NewScorerServiceClient(conn).Attach(ctx)
	if err != nil {
		return err
	}
	var sendMu sync.Mutex
	send := func(m *treadlev1.ScorerServiceAttachRequest) {
		sendMu.Lock()
		defer sendMu.Unlock()
		_ = st.Send(m)
	}
	send(&treadlev1.ScorerServiceAttachRequest{Message: &treadlev1.ScorerServiceAttachRequest_Handshake{
		Handshake: &treadlev1.ScorerHandshake{ProtocolVersions: []uint32{toolProtocolVersion}, Scorers: decls, InstanceId: o.instanceID}}})
	var mu sync.Mutex
	running := map[string]context.CancelFunc{}
	tracer := o.tracer()
	for {
		m, err := st.Recv()
		if err == io.EOF {
			return errors.New("the server ended the stream")
		}
		if err != nil {
			return err
		}
		switch msg := m.Message.(type) {
		case *treadlev1.ScorerServiceAttachResponse_Welcome:
			welcomed()
		case *treadlev1.ScorerServiceAttachResponse_Invocation:
			inv := msg.Invocation
			cctx, ccancel := context.WithCancel(ctx)
			mu.Lock()
			running[inv.InvocationId] = ccancel
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				result := runScorer(cctx, tracer, scorers, inv)
				mu.Lock()
				_, wanted := running[inv.InvocationId]
				delete(running, inv.InvocationId)
				mu.Unlock()
				ccancel()
				if wanted {
					send(&treadlev1.ScorerServiceAttachRequest{Message: &treadlev1.ScorerServiceAttachRequest_Result{Result: result}})
				}
			}()
		case *treadlev1.ScorerServiceAttachResponse_Cancel:
			mu.Lock()
			if c := running[msg.Cancel.InvocationId]; c != nil {
				c()
				delete(running, msg.Cancel.InvocationId)
			}
			mu.Unlock()
		case *treadlev1.ScorerServiceAttachResponse_Drain:
			o.logger.Info("server is draining; will reconnect when it closes the stream")
		}
	}
}

func runScorer(ctx context.Context, tracer trace.Tracer, scorers map[string]Scorer, inv *treadlev1.ScoreInvocation) (res *treadlev1.ScoreInvocationResult) {
	res = &treadlev1.ScoreInvocationResult{InvocationId: inv.InvocationId}
	ctx, span := startSpan(ctx, tracer, "score "+inv.ScorerId, inv.TraceContext,
		attribute.String("gen_ai.operation.name", "evaluate"), attribute.String("treadle.scorer.id", inv.ScorerId),
		attribute.String("treadle.run.id", inv.RunId))
	defer span.End()
	fail := func(err error) {
		markError(span, err)
		res.Error = err.Error()
	}
	defer func() {
		if r := recover(); r != nil {
			fail(fmt.Errorf("scorer panicked: %v", r))
		}
	}()
	s, ok := scorers[inv.ScorerId]
	if !ok {
		fail(fmt.Errorf("scorer %q is not served by this process", inv.ScorerId))
		return res
	}
	source := "live"
	if inv.Source == treadlev1.ScoreSource_SCORE_SOURCE_TEST {
		source = "test"
	}
	run := &ScorerRun{RunID: inv.RunId, AgentID: inv.AgentId, ThreadID: inv.ThreadId, ResourceID: inv.ResourceId,
		RequestContext: inv.RequestContext, InputMessages: inv.GetInput().GetInputMessages(),
		RememberedMessages: inv.GetInput().GetRememberedMessages(), SystemMessages: inv.GetInput().GetSystemMessages(),
		Output: inv.Output, Source: source, AgentVersion: inv.AgentVersion}
	out, err := s.Score(ctx, run)
	if err != nil {
		fail(err)
		return res
	}
	res.Score, res.Reason = out.Score, out.Reason
	if out.Details != nil {
		d, err := structpb.NewStruct(normalise(out.Details).(map[string]any))
		if err != nil {
			fail(fmt.Errorf("scorer %q returned details that are not JSON: %w", inv.ScorerId, err))
			return res
		}
		res.Details = d
	}
	return res
}
