// Command tierresolver is a remote `resolveAgent` processor written with the Go SDK: the
// per-request agent of the framework's function-valued fields, served from another process.
//
//	tierresolver HOST:PORT
//
// serves tenant-router: for a request context with `tenant: acme` it answers the model
// `openai/gpt-4.1` and Acme's instructions; with `slow: true` it answers
// after 5 s (past any short timeout); otherwise it changes nothing. It prints "ready" once the
// server's welcome arrived. It lives under internal/ so it never becomes part of the SDK's public
// surface.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/treadle-dev/treadle/clients/go/treadle"
)

// TenantRouter picks the model, instructions and tools of a call from its request context.
type TenantRouter struct{}

// ID names the processor for the agents that use it as their resolver.
func (TenantRouter) ID() string { return "tenant-router" }

// ResolveAgent answers the overrides for one call.
func (TenantRouter) ResolveAgent(ctx context.Context, args *treadle.ResolveAgentArgs) (*treadle.AgentOverrides, error) {
	request := args.RequestContext.AsMap()
	if request["slow"] == true {
		select {
		case <-time.After(5 * time.Second):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if request["tenant"] != "acme" {
		return nil, nil
	}
	return &treadle.AgentOverrides{
		Model:        "openai/gpt-4.1",
		Instructions: []string{"You answer for Acme. The agent was " + args.GetAgent().GetModel() + "."},
	}, nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: tierresolver HOST:PORT")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a, err := treadle.Attach(ctx, os.Args[1], []treadle.Processor{TenantRouter{}},
		treadle.WithBackoff(50*time.Millisecond, 500*time.Millisecond))
	if err == nil {
		err = a.Ready(ctx)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tierresolver:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	<-ctx.Done()
	a.Close()
}
