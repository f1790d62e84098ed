package treadle

import (
	"context"
	"errors"
	"testing"
	"time"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"google.golang.org/grpc"
)

// fakeScorers is an in-process ScorerService that records the handshake and sends each invocation once.
type fakeScorers struct {
	treadlev1.UnimplementedScorerServiceServer
	handshakes  chan *treadlev1.ScorerHandshake
	invocations []*treadlev1.ScoreInvocation
	results     chan *treadlev1.ScoreInvocationResult
}

func (f *fakeScorers) Attach(srv treadlev1.ScorerService_AttachServer) error {
	m, err := srv.Recv()
	if err != nil {
		return err
	}
	f.handshakes <- m.GetHandshake()
	if err := srv.Send(&treadlev1.ScorerServiceAttachResponse{Message: &treadlev1.ScorerServiceAttachResponse_Welcome{Welcome: &treadlev1.ScorerWelcome{ProtocolVersion: 1}}}); err != nil {
		return err
	}
	for _, inv := range f.invocations {
		if err := srv.Send(&treadlev1.ScorerServiceAttachResponse{Message: &treadlev1.ScorerServiceAttachResponse_Invocation{Invocation: inv}}); err != nil {
			return err
		}
	}
	for {
		m, err := srv.Recv()
		if err != nil {
			return err
		}
		f.results <- m.GetResult()
	}
}

func text(role treadlev1.MessageRole, s string) *treadlev1.Message {
	return &treadlev1.Message{Role: role, Content: &treadlev1.MessageContent{Parts: []*treadlev1.Part{
		{Part: &treadlev1.Part_Text{Text: &treadlev1.TextPart{Text: s}}}}}}
}

func TestServeScorersAnswersEachInvocation(t *testing.T) {
	f := &fakeScorers{handshakes: make(chan *treadlev1.ScorerHandshake, 1), results: make(chan *treadlev1.ScoreInvocationResult, 4),
		invocations: []*treadlev1.ScoreInvocation{
			{InvocationId: "1", ScorerId: "paris", RunId: "r1",
				Input:  &treadlev1.ScorerInput{InputMessages: []*treadlev1.Message{text(treadlev1.MessageRole_MESSAGE_ROLE_USER, "Capital?")}},
				Output: []*treadlev1.Message{text(treadlev1.MessageRole_MESSAGE_ROLE_ASSISTANT, "Paris")}},
			{InvocationId: "2", ScorerId: "paris", RunId: "r2",
				Output: []*treadlev1.Message{text(treadlev1.MessageRole_MESSAGE_ROLE_ASSISTANT, "")}},
		}}
	target := serve(t, func(g *grpc.Server) { treadlev1.RegisterScorerServiceServer(g, f) })
	paris := Scorer{ID: "paris", Description: "1 when the answer is Paris", Score: func(_ context.Context, run *ScorerRun) (Score, error) {
		if run.Answer() == "" {
			return Score{}, errors.New("no answer")
		}
		s := 0.0
		if run.Answer() == "Paris" {
			s = 1
		}
		return Score{Score: s, Reason: "asked " + run.Question(), Details: map[string]any{"run": run.RunID}}, nil
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, err := ServeScorers(ctx, target, paris)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	hs := <-f.handshakes
	if len(hs.Scorers) != 1 || hs.Scorers[0].Id != "paris" || hs.Scorers[0].Description != "1 when the answer is Paris" {
		t.Fatalf("handshake %v", hs)
	}
	got := map[string]*treadlev1.ScoreInvocationResult{}
	for range f.invocations {
		r := <-f.results
		got[r.InvocationId] = r
	}
	if r := got["1"]; r.Score != 1 || r.Reason != "asked Capital?" || r.Details.AsMap()["run"] != "r1" || r.Error != "" {
		t.Fatalf("result 1: %v", r)
	}
	if r := got["2"]; r.Error != "no answer" {
		t.Fatalf("result 2: %v", r)
	}
}
