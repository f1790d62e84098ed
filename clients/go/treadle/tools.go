package treadle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/structpb"
)

// Tool is a tool served to agents: a name, a description, a JSON schema for its input, and Run.
type Tool struct {
	Name        string
	Description string
	// InputSchema is the JSON schema of the input, e.g. {"type": "object", "properties": ...}.
	InputSchema map[string]any
	// Run returns a JSON-compatible value; an error reaches the model as a tool error.
	Run func(ctx context.Context, call *ToolCall) (any, error)
}

// ToolCall is one call of a tool.
type ToolCall struct {
	// Args are the arguments the model passed, decoded from JSON (map[string]any for objects).
	Args           any
	ToolCallID     string
	RunID          string
	AgentID        string
	ThreadID       string
	ResourceID     string
	RequestContext *structpb.Struct
	// Writer emits custom data-* chunks into the run's stream.
	Writer *Writer
}

// ServeTools serves tools to the server at target until the returned attachment is closed.
func ServeTools(ctx context.Context, target string, tools ...Tool) (*Attachment, error) {
	return ServeToolsWith(ctx, target, tools)
}

// ServeToolsWith is ServeTools with options (backoff, instance id, logger, dial options).
func ServeToolsWith(ctx context.Context, target string, tools []Tool, opts ...Option) (*Attachment, error) {
	if len(tools) == 0 {
		return nil, errors.New("give at least one tool")
	}
	byName := map[string]Tool{}
	var defs []*treadlev1.ToolDefinition
	for _, t := range tools {
		if t.Name == "" || t.Run == nil {
			return nil, fmt.Errorf("tool %q needs a name and a Run function", t.Name)
		}
		if _, dup := byName[t.Name]; dup {
			return nil, fmt.Errorf("tool %q is given twice", t.Name)
		}
		schema := t.InputSchema
		if schema == nil {
			schema = map[string]any{"type": "object"}
		}
		s, err := structpb.NewStruct(normalise(schema).(map[string]any))
		if err != nil {
			return nil, fmt.Errorf("tool %q: input schema: %w", t.Name, err)
		}
		byName[t.Name] = t
		defs = append(defs, &treadlev1.ToolDefinition{Name: t.Name, Description: t.Description, InputSchema: s})
	}
	o := buildOptions(opts)
	label := "tool"
	for _, d := range defs {
		label += " " + d.Name
	}
	once := func(ctx context.Context, conn *grpc.ClientConn, welcomed func()) error {
		return serveToolStream(ctx, conn, welcomed, byName, defs, o)
	}
	return start(ctx, target, o, label, once)
}

func serveToolStream(ctx context.Context, conn *grpc.ClientConn, welcomed func(), tools map[string]Tool,
	defs []*treadlev1.ToolDefinition, o options) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	st, err := treadlev1.NewToolServiceClient(conn).Attach(ctx)
	if err != nil {
		return err
	}
	var sendMu sync.Mutex
	send := func(m *treadlev1.ToolServiceAttachRequest) {
		sendMu.Lock()
		defer sendMu.Unlock()
		_ = st.Send(m)
	}
	send(&treadlev1.ToolServiceAttachRequest{Message: &treadlev1.ToolServiceAttachRequest_Handshake{
		Handshake: &treadlev1.ToolHandshake{ProtocolVersions: []uint32{toolProtocolVersion}, Tools: defs, InstanceId: o.instanceID}}})
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
		case *treadlev1.ToolServiceAttachResponse_Welcome:
			welcomed()
		case *treadlev1.ToolServiceAttachResponse_Call:
			call := msg.Call
			cctx, ccancel := context.WithCancel(ctx)
			if d := call.GetDeadline(); d != nil {
				ccancel()
				cctx, ccancel = context.WithDeadline(ctx, d.AsTime())
			}
			mu.Lock()
			running[call.InvocationId] = ccancel
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() {
					mu.Lock()
					delete(running, call.InvocationId)
					mu.Unlock()
					ccancel()
				}()
				send(&treadlev1.ToolServiceAttachRequest{Message: &treadlev1.ToolServiceAttachRequest_Result{Result: runTool(cctx, tracer, tools, call)}})
			}()
		case *treadlev1.ToolServiceAttachResponse_Cancel:
			mu.Lock()
			if c := running[msg.Cancel.InvocationId]; c != nil {
				c()
			}
			mu.Unlock()
		case *treadlev1.ToolServiceAttachResponse_Drain:
			o.logger.Info("server is draining; will reconnect when it closes the stream")
		}
	}
}

func runTool(ctx context.Context, tracer trace.Tracer, tools map[string]Tool, call *treadlev1.ToolInvocation) (res *treadlev1.ToolCallResult) {
	res = &treadlev1.ToolCallResult{InvocationId: call.InvocationId}
	w := &Writer{}
	ctx, span := startSpan(ctx, tracer, "execute_tool "+call.ToolName, call.TraceContext,
		attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.name", call.ToolName),
		attribute.String("gen_ai.tool.call.id", call.ToolCallId), attribute.String("treadle.run.id", call.RunId))
	defer span.End()
	fail := func(err error) {
		markError(span, err)
		res.Outcome = &treadlev1.ToolCallResult_Error{Error: err.Error()}
	}
	defer func() {
		if r := recover(); r != nil {
			fail(fmt.Errorf("tool panicked: %v", r))
		}
		res.CustomChunks = w.chunks
	}()
	t, ok := tools[call.ToolName]
	if !ok {
		fail(fmt.Errorf("tool %q is not served by this process", call.ToolName))
		return res
	}
	var args any
	if call.Args != nil {
		args = call.Args.AsInterface()
	}
	out, err := t.Run(ctx, &ToolCall{Args: args, ToolCallID: call.ToolCallId, RunID: call.RunId, AgentID: call.AgentId,
		ThreadID: call.ThreadId, ResourceID: call.ResourceId, RequestContext: call.RequestContext, Writer: w})
	if err != nil {
		fail(err)
		return res
	}
	v, err := structpb.NewValue(normalise(out))
	if err != nil {
		fail(fmt.Errorf("tool %q returned a value that is not JSON: %w", call.ToolName, err))
		return res
	}
	res.Outcome = &treadlev1.ToolCallResult_Output{Output: v}
	return res
}
