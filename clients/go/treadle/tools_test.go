package treadle

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/structpb"
)

// fakeTools is an in-process ToolService that records the handshake and calls each tool once.
type fakeTools struct {
	treadlev1.UnimplementedToolServiceServer
	handshakes chan *treadlev1.ToolHandshake
	calls      []*treadlev1.ToolInvocation
	results    chan *treadlev1.ToolCallResult
}

func (f *fakeTools) Attach(srv treadlev1.ToolService_AttachServer) error {
	m, err := srv.Recv()
	if err != nil {
		return err
	}
	f.handshakes <- m.GetHandshake()
	if err := srv.Send(&treadlev1.ToolServiceAttachResponse{Message: &treadlev1.ToolServiceAttachResponse_Welcome{Welcome: &treadlev1.ToolWelcome{ProtocolVersion: 1}}}); err != nil {
		return err
	}
	for _, c := range f.calls {
		if err := srv.Send(&treadlev1.ToolServiceAttachResponse{Message: &treadlev1.ToolServiceAttachResponse_Call{Call: c}}); err != nil {
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

// agentFake answers Generate with a tripwire and Stream with two chunks.
type agentFake struct {
	treadlev1.UnimplementedAgentServiceServer
}

func (agentFake) Generate(_ context.Context, r *treadlev1.GenerateRequest) (*treadlev1.GenerateResponse, error) {
	return &treadlev1.GenerateResponse{RunId: r.RunId, Text: "echo " + r.Prompt, Tripwire: &treadlev1.Tripwire{Reason: "blocked"}}, nil
}

func (agentFake) Stream(r *treadlev1.StreamRequest, srv treadlev1.AgentService_StreamServer) error {
	for _, s := range []string{"he", "llo"} {
		if err := srv.Send(&treadlev1.StreamResponse{Chunks: []*treadlev1.Chunk{delta(s)}}); err != nil {
			return err
		}
	}
	return nil
}

func serve(t *testing.T, register func(*grpc.Server)) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	register(g)
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	return lis.Addr().String()
}

func TestServeToolsAnswersEachCall(t *testing.T) {
	args, _ := structpb.NewValue(map[string]any{"city": "Oslo"})
	f := &fakeTools{handshakes: make(chan *treadlev1.ToolHandshake, 1), results: make(chan *treadlev1.ToolCallResult, 4),
		calls: []*treadlev1.ToolInvocation{
			{InvocationId: "1", ToolName: "weather", Args: args, RunId: "r"},
			{InvocationId: "2", ToolName: "weather"},
			{InvocationId: "3", ToolName: "missing"},
		}}
	addr := serve(t, func(g *grpc.Server) { treadlev1.RegisterToolServiceServer(g, f) })
	weather := Tool{Name: "weather", Description: "Weather of a city",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
		Run: func(ctx context.Context, c *ToolCall) (any, error) {
			a, _ := c.Args.(map[string]any)
			if a["city"] == nil {
				return nil, errors.New("city is required")
			}
			_ = c.Writer.Custom("data-progress", map[string]any{"run": c.RunID})
			return map[string]any{"city": a["city"], "celsius": 21}, nil
		}}
	a, err := ServeTools(context.Background(), addr, weather)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	h := next(t, f.handshakes)
	if len(h.Tools) != 1 || h.Tools[0].Name != "weather" || h.Tools[0].InputSchema.AsMap()["type"] != "object" {
		t.Fatalf("handshake: %v", h)
	}
	got := map[string]*treadlev1.ToolCallResult{}
	for range 3 {
		r := next(t, f.results)
		got[r.InvocationId] = r
	}
	if out := got["1"].GetOutput().GetStructValue().AsMap(); out["celsius"] != 21.0 || len(got["1"].CustomChunks) != 1 {
		t.Fatalf("call 1: %v", got["1"])
	}
	if got["2"].GetError() != "city is required" || got["3"].GetError() != `tool "missing" is not served by this process` {
		t.Fatalf("errors: %v %v", got["2"], got["3"])
	}
}

func TestClientGenerateAndStream(t *testing.T) {
	addr := serve(t, func(g *grpc.Server) { treadlev1.RegisterAgentServiceServer(g, agentFake{}) })
	c, err := Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := c.Generate(ctx, "a", "hi", WithRunID("run-1"))
	if err != nil || r.Text != "echo hi" || r.RunId != "run-1" || r.Tripwire == nil || r.Tripwire.Reason != "blocked" || r.GenerateResponse.GetTripwire().GetReason() != "blocked" {
		t.Fatalf("generate: %v %v", r, err)
	}
	text := ""
	for ch, err := range c.Stream(ctx, "a", "hi") {
		if err != nil {
			t.Fatal(err)
		}
		text += ch.GetTextDelta().GetText()
	}
	if text != "hello" {
		t.Fatalf("stream: %q", text)
	}
}
