package treadle

import (
	"cmp"
	"context"
	"net"
	"testing"
	"time"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"google.golang.org/grpc"
)

// fakeServer is an in-process ProcessorService: each Attach stream is handed to the test.
type fakeServer struct {
	treadlev1.UnimplementedProcessorServiceServer
	streams chan *fakeStream
	refuse  error
	version uint32 // the welcome's protocol version (default 2, the highest both speak)
}

type fakeStream struct {
	handshake *treadlev1.ProcessorHandshake
	srv       treadlev1.ProcessorService_AttachServer
	results   chan *treadlev1.InvocationResult
	end       chan error
}

func (f *fakeServer) Attach(srv treadlev1.ProcessorService_AttachServer) error {
	m, err := srv.Recv()
	if err != nil {
		return err
	}
	if f.refuse != nil {
		return f.refuse
	}
	s := &fakeStream{handshake: m.GetHandshake(), srv: srv, results: make(chan *treadlev1.InvocationResult, 64), end: make(chan error, 1)}
	if err := srv.Send(&treadlev1.ProcessorServiceAttachResponse{Message: &treadlev1.ProcessorServiceAttachResponse_Welcome{
		Welcome: &treadlev1.ProcessorWelcome{ProtocolVersion: cmp.Or(f.version, 2), Processors: s.handshake.Processors}}}); err != nil {
		return err
	}
	go func() {
		for {
			m, err := srv.Recv()
			if err != nil {
				return
			}
			s.results <- m.GetResult()
		}
	}()
	f.streams <- s
	return <-s.end
}

func startFake(t *testing.T, f *fakeServer) string {
	t.Helper()
	f.streams = make(chan *fakeStream, 8)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	treadlev1.RegisterProcessorServiceServer(g, f)
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	return lis.Addr().String()
}

func (s *fakeStream) send(t *testing.T, m *treadlev1.ProcessorServiceAttachResponse) {
	t.Helper()
	if err := s.srv.Send(m); err != nil {
		t.Fatal(err)
	}
}

func (s *fakeStream) invoke(t *testing.T, inv *treadlev1.Invocation) {
	s.send(t, &treadlev1.ProcessorServiceAttachResponse{Message: &treadlev1.ProcessorServiceAttachResponse_Invocation{Invocation: inv}})
}

func (s *fakeStream) result(t *testing.T) *treadlev1.InvocationResult {
	t.Helper()
	select {
	case r := <-s.results:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
		return nil
	}
}

func next[T any](t *testing.T, c chan T) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("nothing arrived")
		var zero T
		return zero
	}
}

func attachTo(t *testing.T, f *fakeServer, ps ...Processor) (*Attachment, *fakeStream) {
	t.Helper()
	addr := startFake(t, f)
	a, err := Attach(context.Background(), addr, ps, WithBackoff(5*time.Millisecond, 20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	return a, next(t, f.streams)
}
