package treadle

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// threadFake records the requests and streams a run to each subscriber: idle, the run's
// chunks, idle again.
type threadFake struct {
	treadlev1.UnimplementedThreadServiceServer
	sent    chan *treadlev1.SendMessageRequest
	updates chan *treadlev1.UpdateThreadRequest
	pages   int
}

func (f *threadFake) SendMessage(_ context.Context, r *treadlev1.SendMessageRequest) (*treadlev1.SendMessageResponse, error) {
	f.sent <- r
	return &treadlev1.SendMessageResponse{Accepted: &treadlev1.SignalAccepted{Action: treadlev1.SignalAction_SIGNAL_ACTION_WAKE, RunId: "run-1"}}, nil
}

func (f *threadFake) UpdateThread(_ context.Context, r *treadlev1.UpdateThreadRequest) (*treadlev1.UpdateThreadResponse, error) {
	f.updates <- r
	return &treadlev1.UpdateThreadResponse{Thread: r.Thread}, nil
}

func (f *threadFake) ListMessages(_ context.Context, r *treadlev1.ListMessagesRequest) (*treadlev1.ListMessagesResponse, error) {
	f.pages++
	if r.PageToken == "" {
		return &treadlev1.ListMessagesResponse{Messages: []*treadlev1.Message{{Id: "m1"}}, NextPageToken: "2"}, nil
	}
	return &treadlev1.ListMessagesResponse{Messages: []*treadlev1.Message{{Id: "m2"}}}, nil
}

func (f *threadFake) GetActiveRun(context.Context, *treadlev1.GetActiveRunRequest) (*treadlev1.GetActiveRunResponse, error) {
	return &treadlev1.GetActiveRunResponse{}, nil
}

func (f *threadFake) SubscribeToThread(r *treadlev1.SubscribeToThreadRequest, srv treadlev1.ThreadService_SubscribeToThreadServer) error {
	run := &treadlev1.ActiveRun{RunId: "run-1", AgentId: "echo"}
	text := delta("hi")
	text.RunId = "run-1"
	for _, m := range []*treadlev1.SubscribeToThreadResponse{
		{ActiveRun: &treadlev1.ActiveRun{}},
		{ActiveRun: run},
		{Chunks: []*treadlev1.Chunk{text}},
		{ActiveRun: &treadlev1.ActiveRun{}},
	} {
		if err := srv.Send(m); err != nil {
			return err
		}
	}
	return nil
}

func TestThreadCalls(t *testing.T) {
	f := &threadFake{sent: make(chan *treadlev1.SendMessageRequest, 1), updates: make(chan *treadlev1.UpdateThreadRequest, 1)}
	addr := serve(t, func(g *grpc.Server) { treadlev1.RegisterThreadServiceServer(g, f) })
	c, err := Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	sub, err := c.SubscribeToThread(ctx, "u1", "t1")
	if err != nil || sub.ActiveRun().GetRunId() != "" {
		t.Fatalf("subscribe: %v %v", sub, err)
	}
	defer sub.Close()
	r, err := c.SendMessage(ctx, "echo", InThread("u1", "t1"), "hello",
		WithAttributes(map[string]any{"name": "Devin", "from": "slack"}),
		IfIdle(treadlev1.IdleBehavior_IDLE_BEHAVIOR_WAKE, &treadlev1.CallOptions{MaxSteps: proto.Int32(3)}))
	if err != nil || r.Accepted.GetRunId() != "run-1" {
		t.Fatalf("send: %v %v", r, err)
	}
	req := next(t, f.sent)
	if req.ResourceId != "u1" || req.ThreadId != "t1" || req.Message.Contents != "hello" ||
		req.Message.Attributes.AsMap()["from"] != "slack" || req.IfIdle.StreamOptions.GetMaxSteps() != 3 {
		t.Fatalf("request: %v", req)
	}
	// An ordered list is sent in its order (ordered_attributes), the order the model sees.
	if _, err := c.SendMessage(ctx, "echo", InThread("u1", "t1"), "again",
		WithAttributeList(Attr{Name: "note", Value: "x"}, Attr{Name: "n", Value: 3})); err != nil {
		t.Fatal(err)
	}
	ordered := next(t, f.sent).Message
	if ordered.Attributes != nil || len(ordered.OrderedAttributes) != 2 ||
		ordered.OrderedAttributes[0].Name != "note" || ordered.OrderedAttributes[1].Name != "n" ||
		ordered.OrderedAttributes[1].Value.GetNumberValue() != 3 {
		t.Fatalf("ordered attributes: %v", ordered)
	}
	var texts []string
	for ch, err := range sub.Chunks() {
		if err != nil {
			t.Fatal(err)
		}
		if sub.ActiveRun().GetRunId() != "run-1" || ch.RunId != "run-1" {
			t.Fatalf("chunk %v while %v is active", ch, sub.ActiveRun())
		}
		if ch.Type() != "text-delta" {
			t.Fatalf("chunk type %q", ch.Type())
		}
		texts = append(texts, ch.Text())
	}
	if len(texts) != 1 || texts[0] != "hi" || sub.ActiveRun().GetRunId() != "" {
		t.Fatalf("chunks %v, active %v", texts, sub.ActiveRun())
	}
	if _, err := sub.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the end: %v", err)
	}
	// Events shows the run changes around the chunks.
	sub2, err := c.SubscribeToThread(ctx, "u1", "t1")
	if err != nil {
		t.Fatal(err)
	}
	defer sub2.Close()
	var seen []string
	for e, err := range sub2.Events() {
		if err != nil {
			t.Fatal(err)
		}
		if e.Chunk != nil {
			seen = append(seen, "chunk")
		} else {
			seen = append(seen, "active="+e.ActiveRun.RunId)
		}
	}
	if !slices.Equal(seen, []string{"active=run-1", "chunk", "active="}) {
		t.Fatalf("events: %v", seen)
	}
	// The generated messages stay reachable.
	sub3, err := c.SubscribeToThread(ctx, "u1", "t1")
	if err != nil {
		t.Fatal(err)
	}
	defer sub3.Close()
	var raw []*treadlev1.Chunk
	for ch, err := range sub3.ChunksProto() {
		if err != nil {
			t.Fatal(err)
		}
		raw = append(raw, ch)
	}
	if len(raw) != 1 || raw[0].GetTextDelta().GetText() != "hi" {
		t.Fatalf("raw chunks: %v", raw)
	}

	if _, err := c.UpdateThread(ctx, "u1", "t1", WithTitle("Plans")); err != nil {
		t.Fatal(err)
	}
	if u := next(t, f.updates); u.Thread.Title != "Plans" || len(u.UpdateMask.Paths) != 1 || u.UpdateMask.Paths[0] != "title" {
		t.Fatalf("update: %v", u)
	}
	ms, err := c.ListMessages(ctx, "u1", "t1")
	if err != nil || len(ms) != 2 || ms[1].Id != "m2" || f.pages != 2 {
		t.Fatalf("messages: %v %v", ms, err)
	}
	if a, err := c.GetActiveRun(ctx, "u1", "t1"); err != nil || a.RunId != "" {
		t.Fatalf("active run: %v %v", a, err)
	}
}
