package treadle

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// guard implements ProcessInput and ProcessOutputStream only.
type guard struct {
	release chan struct{} // ProcessInput on run "slow" waits for it
	started chan string
}

func (g *guard) ID() string { return "guard" }

func (g *guard) Settings() Settings {
	return Settings{Description: "blocks secrets", Delivery: treadlev1.StreamDelivery_STREAM_DELIVERY_PER_CHUNK}
}

func (g *guard) ProcessInput(ctx context.Context, a *ProcessInputArgs) (*Replace, error) {
	if g.started != nil {
		g.started <- a.RunID
	}
	if a.RunID == "slow" {
		select {
		case <-g.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	n, _ := a.State["calls"].(float64)
	a.State["calls"] = n + 1
	for _, m := range a.MessageList.GetMessages() {
		if strings.Contains(m.GetMessage().GetId(), "secret") {
			return nil, Abort("no secrets", WithMetadata(map[string]int{"at": 1}))
		}
	}
	if err := a.Writer.Custom("data-seen", map[string]any{"run": a.RunID}); err != nil {
		return nil, err
	}
	return nil, nil
}

func (g *guard) ProcessOutputStream(ctx context.Context, a *ProcessOutputStreamArgs) ([]*treadlev1.Chunk, error) {
	a.State["parts"] = len(a.StreamParts)
	switch d := a.Part.GetTextDelta().GetText(); d {
	case "drop":
		return nil, nil
	case "boom":
		return nil, errors.New("boom")
	case "stop":
		return nil, Abort("stopped")
	case "split":
		return []*treadlev1.Chunk{delta("sp"), delta("lit")}, nil
	case "hold":
		return []*treadlev1.Chunk{}, nil
	case "shout":
		return []*treadlev1.Chunk{{Chunk: &treadlev1.Chunk_TextDelta{TextDelta: &treadlev1.TextDeltaChunk{Text: "SHOUT"}}}}, nil
	}
	return []*treadlev1.Chunk{a.Part}, nil
}

func delta(s string) *treadlev1.Chunk {
	return &treadlev1.Chunk{Chunk: &treadlev1.Chunk_TextDelta{TextDelta: &treadlev1.TextDeltaChunk{Text: s}}}
}

func input(id, run string, msgIDs ...string) *treadlev1.Invocation {
	snap := &treadlev1.MessageListSnapshot{}
	for _, m := range msgIDs {
		snap.Messages = append(snap.Messages, &treadlev1.ListedMessage{Message: &treadlev1.Message{Id: m}})
	}
	return &treadlev1.Invocation{InvocationId: id, ProcessorId: "guard", Hook: treadlev1.Hook_HOOK_PROCESS_INPUT, RunId: run,
		Args: &treadlev1.Invocation_ProcessInput{ProcessInput: &treadlev1.ProcessInputArgs{MessageList: snap}}}
}

func stream(id, run string, parts ...string) *treadlev1.Invocation {
	a := &treadlev1.ProcessOutputStreamArgs{}
	for _, p := range parts {
		a.Parts = append(a.Parts, delta(p))
	}
	return &treadlev1.Invocation{InvocationId: id, ProcessorId: "guard", Hook: treadlev1.Hook_HOOK_PROCESS_OUTPUT_STREAM, RunId: run,
		Args: &treadlev1.Invocation_ProcessOutputStream{ProcessOutputStream: a}}
}

func TestHandshakeDeclaresExactlyTheImplementedHooks(t *testing.T) {
	_, s := attachTo(t, &fakeServer{}, &guard{})
	h := s.handshake
	if !slices.Equal(h.ProtocolVersions, []uint32{1, 2}) || len(h.Processors) != 1 {
		t.Fatalf("handshake: %v", h)
	}
	d := h.Processors[0]
	if d.Id != "guard" || d.Description != "blocks secrets" || len(d.Hooks) != 2 ||
		d.Hooks[0].Hook != treadlev1.Hook_HOOK_PROCESS_INPUT || d.Hooks[1].Hook != treadlev1.Hook_HOOK_PROCESS_OUTPUT_STREAM ||
		d.Hooks[1].Delivery != treadlev1.StreamDelivery_STREAM_DELIVERY_PER_CHUNK || d.Hooks[1].MaxInFlight != DefaultMaxInFlight {
		t.Fatalf("declaration: %v", d)
	}
}

func TestOutcomesStateVersionsAndCustomChunks(t *testing.T) {
	_, s := attachTo(t, &fakeServer{}, &guard{})
	s.invoke(t, input("1", "r", "m1"))
	r := s.result(t)
	if r.InvocationId != "1" || r.GetUnchanged() == nil || r.State.GetVersion() != 1 ||
		r.State.Value.AsMap()["calls"] != 1.0 || len(r.CustomChunks) != 1 || r.CustomChunks[0].Name != "data-seen" {
		t.Fatalf("first answer: %v", r)
	}
	// The server sends a newer state (another replica changed it): the SDK numbers on from it.
	st, _ := structpb.NewStruct(map[string]any{"calls": 10})
	inv := input("2", "r", "secret-1")
	inv.State = &treadlev1.ProcessorState{Value: st, Version: 5}
	s.invoke(t, inv)
	r = s.result(t)
	if r.GetAbort().GetReason() != "no secrets" || r.GetAbort().GetMetadata().GetStructValue().AsMap()["at"] != 1.0 ||
		r.State.GetVersion() != 6 || r.State.Value.AsMap()["calls"] != 11.0 {
		t.Fatalf("abort answer: %v", r)
	}
}

func TestStreamOutcomesPerChunkAndStreamParts(t *testing.T) {
	_, s := attachTo(t, &fakeServer{}, &guard{})
	s.invoke(t, stream("1", "r", "keep", "drop", "shout", "boom", "stop", "never"))
	r := s.result(t)
	got := r.GetStream().GetChunks()
	if len(got) != 5 || got[0].GetUnchanged() == nil || got[1].GetDrop() == nil ||
		got[2].GetReplace().GetTextDelta().GetText() != "SHOUT" || got[3].GetError().GetMessage() != "boom" ||
		got[4].GetAbort().GetReason() != "stopped" {
		t.Fatalf("outcomes: %v", got)
	}
	s.invoke(t, stream("2", "r", "keep"))
	if r := s.result(t); r.State.Value.AsMap()["parts"] != 6.0 {
		t.Fatalf("stream parts were not kept per run: %v", r)
	}
	// run_ended frees the run: a new invocation of it starts from no parts.
	s.send(t, &treadlev1.ProcessorServiceAttachResponse{Message: &treadlev1.ProcessorServiceAttachResponse_RunEnded{RunEnded: &treadlev1.RunEnded{RunId: "r"}}})
	s.invoke(t, stream("3", "r", "keep"))
	if r := s.result(t); r.State.Value.AsMap()["parts"] != 1.0 || r.State.Version != 1 {
		t.Fatalf("state survived run_ended: %v", r)
	}
}

func TestVersion2AnswersSeveralChunksAndHolds(t *testing.T) {
	_, s := attachTo(t, &fakeServer{}, &guard{})
	s.invoke(t, stream("1", "r", "split", "hold", "keep", "drop"))
	got := s.result(t).GetStream().GetChunks()
	if len(got) != 4 || got[2].GetUnchanged() == nil || got[3].GetDrop() == nil {
		t.Fatalf("outcomes: %v", got)
	}
	if seq := got[0].GetChunks().GetChunks(); len(seq) != 2 || seq[0].GetTextDelta().GetText() != "sp" || seq[1].GetTextDelta().GetText() != "lit" {
		t.Fatalf("split: %v", got[0])
	}
	if seq := got[1].GetChunks(); seq == nil || len(seq.Chunks) != 0 {
		t.Fatalf("hold: %v", got[1])
	}
}

func TestVersion1RefusesSeveralChunksPerChunk(t *testing.T) {
	_, s := attachTo(t, &fakeServer{version: 1}, &guard{})
	s.invoke(t, stream("1", "r", "split", "hold", "shout"))
	got := s.result(t).GetStream().GetChunks()
	if len(got) != 3 || got[1].GetDrop() == nil || got[2].GetReplace().GetTextDelta().GetText() != "SHOUT" ||
		got[0].GetError().GetMessage() != "returned 2 chunks for one; that needs protocol version 2, the server speaks 1" {
		t.Fatalf("outcomes: %v", got)
	}
}

func TestAnswersOneRunInOrderAndRunsConcurrently(t *testing.T) {
	g := &guard{release: make(chan struct{}), started: make(chan string, 8)}
	_, s := attachTo(t, &fakeServer{}, g)
	s.invoke(t, input("a", "slow"))
	if next(t, g.started) != "slow" {
		t.Fatal("slow did not start")
	}
	s.invoke(t, input("b", "slow"))
	s.invoke(t, input("c", "fast"))
	// Another run is answered while "slow" is blocked; "b" waits behind "a".
	if r := s.result(t); r.InvocationId != "c" {
		t.Fatalf("first answer %s, want c", r.InvocationId)
	}
	close(g.release)
	a, b := s.result(t), s.result(t)
	if a.InvocationId != "a" || b.InvocationId != "b" || b.State.Value.AsMap()["calls"] != 2.0 {
		t.Fatalf("order: %s then %s (%v)", a.InvocationId, b.InvocationId, b.State)
	}
}

func TestCancelAndDeadlineEndTheHook(t *testing.T) {
	g := &guard{release: make(chan struct{}), started: make(chan string, 8)}
	_, s := attachTo(t, &fakeServer{}, g)
	s.invoke(t, input("a", "slow"))
	next(t, g.started)
	s.send(t, &treadlev1.ProcessorServiceAttachResponse{Message: &treadlev1.ProcessorServiceAttachResponse_Cancel{Cancel: &treadlev1.CancelInvocation{InvocationId: "a"}}})
	if r := s.result(t); r.GetError().GetMessage() != context.Canceled.Error() {
		t.Fatalf("cancelled: %v", r)
	}
	inv := input("b", "slow")
	inv.Deadline = timestamppb.Now()
	s.invoke(t, inv)
	if r := s.result(t); r.GetError().GetMessage() != context.DeadlineExceeded.Error() {
		t.Fatalf("past deadline: %v", r)
	}
	// `timeout` wins over `deadline` (the server's clock may be ahead or behind).
	inv = input("c", "slow")
	inv.Deadline = timestamppb.New(time.Now().Add(time.Hour))
	inv.Timeout = durationpb.New(time.Millisecond)
	s.invoke(t, inv)
	if r := s.result(t); r.GetError().GetMessage() != context.DeadlineExceeded.Error() {
		t.Fatalf("timeout: %v", r)
	}
}

func TestRefusedHandshakeIsNotRetried(t *testing.T) {
	f := &fakeServer{refuse: status.Error(codes.InvalidArgument, "unknown hook")}
	addr := startFake(t, f)
	a, err := Attach(context.Background(), addr, []Processor{&guard{}}, WithBackoff(time.Millisecond, 2*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var ae *AttachError
	if err := a.Ready(context.Background()); !errors.As(err, &ae) || ae.Code != codes.InvalidArgument || ae.Details != "unknown hook" {
		t.Fatalf("Ready: %v", err)
	}
	<-a.Done()
	if a.StreamsOpened() != 1 {
		t.Fatalf("opened %d streams after a refusal", a.StreamsOpened())
	}
}

func TestReconnectsAfterTheStreamEnds(t *testing.T) {
	f := &fakeServer{}
	a, s := attachTo(t, f, &guard{})
	s.end <- status.Error(codes.Unavailable, "restarting")
	s2 := next(t, f.streams)
	s2.invoke(t, input("1", "r"))
	if r := s2.result(t); r.GetUnchanged() == nil || a.StreamsOpened() != 2 {
		t.Fatalf("after reconnect: %v, %d streams", r, a.StreamsOpened())
	}
}

func TestDeclarationErrors(t *testing.T) {
	if _, err := Attach(context.Background(), "127.0.0.1:1", []Processor{&guard{}, &guard{}}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("duplicate id: %v", err)
	}
	if _, err := Attach(context.Background(), "127.0.0.1:1", []Processor{idOnly{}}); err == nil || !strings.Contains(err.Error(), "implements no hook") {
		t.Fatalf("no hook: %v", err)
	}
}

type idOnly struct{}

func (idOnly) ID() string { return "empty" }
