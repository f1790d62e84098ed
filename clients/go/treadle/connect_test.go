package treadle

import (
	"context"
	"net"
	"testing"
	"time"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// authSeen serves AgentService and records each call's authorization metadata.
func authSeen(t *testing.T) (string, chan []string) {
	t.Helper()
	seen := make(chan []string, 8)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		seen <- md.Get("authorization")
		return h(ctx, req)
	}))
	treadlev1.RegisterAgentServiceServer(g, agentFake{})
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	return lis.Addr().String(), seen
}

func TestTokenFromTheOptionOrTheEnvironment(t *testing.T) {
	addr, seen := authSeen(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	t.Setenv(TokenEnv, "from-env")
	for _, tc := range []struct {
		opts []Option
		want []string
	}{
		{nil, []string{"Bearer from-env"}},
		{[]Option{WithToken("given")}, []string{"Bearer given"}},
		{[]Option{WithToken("")}, nil},
	} {
		c, err := Dial(addr, tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Generate(ctx, "a", "hi"); err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
		if got := next(t, seen); len(got) != len(tc.want) || (len(got) == 1 && got[0] != tc.want[0]) {
			t.Fatalf("authorization %q, want %q", got, tc.want)
		}
	}
}

func TestLoadTLSNeedsBothHalvesOfAClientCertificate(t *testing.T) {
	if _, err := LoadTLS("", "cert.pem", ""); err == nil || err.Error() != "a client certificate needs both cert and key" {
		t.Fatalf("LoadTLS: %v", err)
	}
	if cfg, err := LoadTLS("", "", ""); err != nil || cfg.RootCAs != nil {
		t.Fatalf("system roots: %v %v", cfg, err)
	}
}
