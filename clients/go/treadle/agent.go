package treadle

import (
	"context"
	"errors"
	"io"
	"iter"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
)

// Client calls agents on a Treadle server.
type Client struct {
	conn *grpc.ClientConn
	// Agents is the generated AgentService client (Client wraps each of its calls).
	Agents treadlev1.AgentServiceClient
	// Threads is the generated ThreadService client (Client wraps each of its calls).
	Threads treadlev1.ThreadServiceClient
}

// Dial connects to the server at target (HOST:PORT); the connection is made lazily.
func Dial(target string, opts ...Option) (*Client, error) {
	o := buildOptions(opts)
	conn, err := grpc.NewClient(target, o.dialOptions()...)
	if err != nil {
		return nil, err
	}
	return &Client{conn: conn, Agents: treadlev1.NewAgentServiceClient(conn), Threads: treadlev1.NewThreadServiceClient(conn)}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Generate runs the agent on prompt and returns the whole result, in the framework's shape (text,
// finish reason, usage, tool calls and results, steps, tripwire) over the generated response.
func (c *Client) Generate(ctx context.Context, agentID, prompt string, options ...CallOption) (*Result, error) {
	r, err := c.GenerateProto(ctx, agentID, prompt, options...)
	if err != nil {
		return nil, err
	}
	return ResultOf(r), nil
}

// GenerateProto is Generate answered with the generated GenerateResponse.
func (c *Client) GenerateProto(ctx context.Context, agentID, prompt string, options ...CallOption) (*treadlev1.GenerateResponse, error) {
	req := &treadlev1.GenerateRequest{AgentId: agentID, Prompt: prompt}
	for _, o := range options {
		o(&callRequest{messages: &req.Messages, options: &req.Options, runID: &req.RunId})
	}
	return c.Agents.Generate(ctx, req)
}

// Stream runs the agent on prompt and yields its chunks as they come (Chunk: Type() is the
// framework's chunk type, the generated message's getters work on it); a failed call yields
// one final error.
func (c *Client) Stream(ctx context.Context, agentID, prompt string, options ...CallOption) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		for ch, err := range c.StreamProto(ctx, agentID, prompt, options...) {
			if !yield(Chunk{ch}, err) {
				return
			}
		}
	}
}

// StreamProto is Stream yielding the generated Chunk messages.
func (c *Client) StreamProto(ctx context.Context, agentID, prompt string, options ...CallOption) iter.Seq2[*treadlev1.Chunk, error] {
	return func(yield func(*treadlev1.Chunk, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		req := &treadlev1.StreamRequest{AgentId: agentID, Prompt: prompt}
		for _, o := range options {
			o(&callRequest{messages: &req.Messages, options: &req.Options, runID: &req.RunId})
		}
		st, err := c.Agents.Stream(ctx, req)
		if err != nil {
			yield(nil, err)
			return
		}
		for {
			m, err := st.Recv()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			for _, ch := range m.Chunks {
				if !yield(ch, nil) {
					return
				}
			}
		}
	}
}

type callRequest struct {
	messages *[]*treadlev1.Message
	options  **treadlev1.CallOptions
	runID    *string
}

// CallOption tunes one Generate or Stream call.
type CallOption func(*callRequest)

// WithMessages sends messages instead of (or after) the prompt.
func WithMessages(m ...*treadlev1.Message) CallOption {
	return func(r *callRequest) { *r.messages = append(*r.messages, m...) }
}

// WithCallOptions sets the call's options (memory thread, max steps, ...).
func WithCallOptions(o *treadlev1.CallOptions) CallOption {
	return func(r *callRequest) { *r.options = o }
}

// WithRunID sets the run's id (default: the server makes one).
func WithRunID(id string) CallOption { return func(r *callRequest) { *r.runID = id } }

// CreateAgent stores a new agent (it needs an admin credential when the server has auth).
func (c *Client) CreateAgent(ctx context.Context, a *treadlev1.Agent) (*treadlev1.Agent, error) {
	r, err := c.Agents.CreateAgent(ctx, &treadlev1.CreateAgentRequest{Agent: a})
	return r.GetAgent(), err
}

// GetAgent returns an agent; a missing one is codes.NotFound.
func (c *Client) GetAgent(ctx context.Context, id string) (*treadlev1.Agent, error) {
	r, err := c.Agents.GetAgent(ctx, &treadlev1.GetAgentRequest{Id: id})
	return r.GetAgent(), err
}

// ListAgents returns every agent the caller may see (page after page).
func (c *Client) ListAgents(ctx context.Context) ([]*treadlev1.Agent, error) {
	return pages(ctx, func(ctx context.Context, token string) ([]*treadlev1.Agent, string, error) {
		r, err := c.Agents.ListAgents(ctx, &treadlev1.ListAgentsRequest{PageToken: token})
		return r.GetAgents(), r.GetNextPageToken(), err
	})
}

// UpdateAgent sets the fields of a named by paths ("instructions", "model", ...; none: all).
func (c *Client) UpdateAgent(ctx context.Context, a *treadlev1.Agent, paths ...string) (*treadlev1.Agent, error) {
	req := &treadlev1.UpdateAgentRequest{Agent: a}
	if len(paths) > 0 {
		req.UpdateMask = &fieldmaskpb.FieldMask{Paths: paths}
	}
	r, err := c.Agents.UpdateAgent(ctx, req)
	return r.GetAgent(), err
}

// DeleteAgent deletes an agent.
func (c *Client) DeleteAgent(ctx context.Context, id string) error {
	_, err := c.Agents.DeleteAgent(ctx, &treadlev1.DeleteAgentRequest{Id: id})
	return err
}
