package treadle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Default processOutputStream settings: chunks ready together travel together and a few
// invocations may be in flight, so latency does not cap the stream's throughput. The hook is
// still called once per chunk, in order.
const (
	DefaultDelivery    = treadlev1.StreamDelivery_STREAM_DELIVERY_WINDOWED
	DefaultMaxInFlight = 4
)

// toolFiltered are the hooks a tool-name filter applies to.
var toolFiltered = map[treadlev1.Hook]bool{treadlev1.Hook_HOOK_BEFORE_TOOL_CALL: true,
	treadlev1.Hook_HOOK_AFTER_TOOL_CALL: true, treadlev1.Hook_HOOK_PROCESS_TOOL_RESULT: true,
	treadlev1.Hook_HOOK_TRANSFORM_TOOL_PAYLOAD: true}

// hooksOf lists the hooks p implements, in the Processor API's order.
func hooksOf(p Processor) []treadlev1.Hook {
	var hooks []treadlev1.Hook
	add := func(ok bool, h treadlev1.Hook) {
		if ok {
			hooks = append(hooks, h)
		}
	}
	_, ok := p.(ProcessInput)
	add(ok, treadlev1.Hook_HOOK_PROCESS_INPUT)
	_, ok = p.(ProcessInputStep)
	add(ok, treadlev1.Hook_HOOK_PROCESS_INPUT_STEP)
	_, ok = p.(ProcessLLMRequest)
	add(ok, treadlev1.Hook_HOOK_PROCESS_LLM_REQUEST)
	_, ok = p.(ProcessLLMResponse)
	add(ok, treadlev1.Hook_HOOK_PROCESS_LLM_RESPONSE)
	_, ok = p.(ProcessAPIError)
	add(ok, treadlev1.Hook_HOOK_PROCESS_API_ERROR)
	_, ok = p.(ProcessOutputStream)
	add(ok, treadlev1.Hook_HOOK_PROCESS_OUTPUT_STREAM)
	_, ok = p.(ProcessOutputStep)
	add(ok, treadlev1.Hook_HOOK_PROCESS_OUTPUT_STEP)
	_, ok = p.(ProcessToolResult)
	add(ok, treadlev1.Hook_HOOK_PROCESS_TOOL_RESULT)
	_, ok = p.(ProcessOutputResult)
	add(ok, treadlev1.Hook_HOOK_PROCESS_OUTPUT_RESULT)
	_, ok = p.(BeforeToolCall)
	add(ok, treadlev1.Hook_HOOK_BEFORE_TOOL_CALL)
	_, ok = p.(AfterToolCall)
	add(ok, treadlev1.Hook_HOOK_AFTER_TOOL_CALL)
	_, ok = p.(OnDelegationStart)
	add(ok, treadlev1.Hook_HOOK_ON_DELEGATION_START)
	_, ok = p.(OnDelegationComplete)
	add(ok, treadlev1.Hook_HOOK_ON_DELEGATION_COMPLETE)
	_, ok = p.(TransformToolPayload)
	add(ok, treadlev1.Hook_HOOK_TRANSFORM_TOOL_PAYLOAD)
	_, ok = p.(ResolveAgent)
	add(ok, treadlev1.Hook_HOOK_RESOLVE_AGENT)
	_, ok = p.(OnViolation)
	add(ok, treadlev1.Hook_HOOK_ON_VIOLATION)
	return hooks
}

// Declaration is the handshake's declaration of p; the error says what is wrong.
func Declaration(p Processor) (*treadlev1.ProcessorDeclaration, error) {
	id := p.ID()
	if id == "" {
		return nil, fmt.Errorf("%T needs a non-empty ID()", p)
	}
	hooks := hooksOf(p)
	if len(hooks) == 0 {
		return nil, fmt.Errorf("processor %q implements no hook (e.g. ProcessInput)", id)
	}
	var s Settings
	if c, ok := p.(Configured); ok {
		s = c.Settings()
	}
	has := map[treadlev1.Hook]bool{}
	for _, h := range hooks {
		has[h] = true
	}
	observe := map[treadlev1.Hook]bool{}
	for _, h := range s.Observe {
		if !has[h] {
			return nil, fmt.Errorf("processor %q: Observe names %s, which it does not implement", id, h)
		}
		observe[h] = true
	}
	for h := range s.Timeouts {
		if !has[h] {
			return nil, fmt.Errorf("processor %q: Timeouts names %s, which it does not implement", id, h)
		}
	}
	for h := range s.ToolNames {
		if !has[h] || !toolFiltered[h] {
			return nil, fmt.Errorf("processor %q: ToolNames names %s, which it does not implement or which takes no tool filter", id, h)
		}
	}
	d := &treadlev1.ProcessorDeclaration{Id: id, Name: s.Name, Description: s.Description}
	for _, h := range hooks {
		hd := &treadlev1.HookDeclaration{Hook: h, Mode: treadlev1.HookMode_HOOK_MODE_MUTATE}
		if observe[h] || h == treadlev1.Hook_HOOK_ON_VIOLATION { // onViolation: always fire and forget
			hd.Mode = treadlev1.HookMode_HOOK_MODE_OBSERVE
		}
		if t, ok := s.Timeouts[h]; ok {
			hd.Timeout = durationpb.New(t)
		}
		if toolFiltered[h] {
			hd.ToolNames = slices.Sorted(slices.Values(s.ToolNames[h]))
		}
		if h == treadlev1.Hook_HOOK_PROCESS_OUTPUT_STREAM {
			hd.ProcessDataParts = s.ProcessDataParts
			hd.Delivery = s.Delivery
			if hd.Delivery == treadlev1.StreamDelivery_STREAM_DELIVERY_UNSPECIFIED {
				hd.Delivery = DefaultDelivery
			}
			hd.MaxWindow = s.MaxWindow
			hd.MaxInFlight = s.MaxInFlight
			if hd.MaxInFlight == 0 {
				hd.MaxInFlight = DefaultMaxInFlight
			}
		}
		d.Hooks = append(d.Hooks, hd)
	}
	return d, nil
}

// runState is one processor's state for one run.
type runState struct {
	state   State
	version uint64
	parts   []*treadlev1.Chunk
	tail    chan struct{} // closed when the last queued invocation of this run is done
	touched time.Time
}

type runKey struct{ run, processor string }

// host is what outlives one stream: the processors and their per-run state.
type host struct {
	processors   map[string]Processor
	declarations []*treadlev1.ProcessorDeclaration
	observe      map[string]map[treadlev1.Hook]bool
	o            options
	tracer       trace.Tracer

	mu    sync.Mutex
	runs  map[runKey]*runState
	now   func() time.Time
	swept time.Time
}

// Attach serves processors to the server at target (HOST:PORT) over one long-lived stream,
// reopened with exponential backoff and jitter when it ends, never after a refused handshake.
// It returns at once; Ready waits for the welcome.
func Attach(ctx context.Context, target string, processors []Processor, opts ...Option) (*Attachment, error) {
	if len(processors) == 0 {
		return nil, errors.New("give at least one processor")
	}
	h := &host{processors: map[string]Processor{}, observe: map[string]map[treadlev1.Hook]bool{},
		o: buildOptions(opts), runs: map[runKey]*runState{}, now: time.Now}
	h.tracer = h.o.tracer()
	for _, p := range processors {
		d, err := Declaration(p)
		if err != nil {
			return nil, err
		}
		if _, dup := h.processors[d.Id]; dup {
			return nil, fmt.Errorf("processor id %q is given twice", d.Id)
		}
		h.processors[d.Id] = p
		h.declarations = append(h.declarations, d)
		h.observe[d.Id] = map[treadlev1.Hook]bool{}
		for _, hd := range d.Hooks {
			if hd.Mode == treadlev1.HookMode_HOOK_MODE_OBSERVE {
				h.observe[d.Id][hd.Hook] = true
			}
		}
	}
	label := "processor"
	for _, d := range h.declarations {
		label += " " + d.Id
	}
	return start(ctx, target, h.o, label, h.stream)
}

// stream runs one Attach stream until it ends.
func (h *host) stream(ctx context.Context, conn *grpc.ClientConn, welcomed func()) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel() // the stream is gone: in-flight invocations are cancelled
	st, err := treadlev1.NewProcessorServiceClient(conn).Attach(ctx)
	if err != nil {
		return err
	}
	var sendMu sync.Mutex
	send := func(m *treadlev1.ProcessorServiceAttachRequest) {
		sendMu.Lock()
		defer sendMu.Unlock()
		_ = st.Send(m) // a failed send surfaces as the stream's end in Recv
	}
	send(&treadlev1.ProcessorServiceAttachRequest{Message: &treadlev1.ProcessorServiceAttachRequest_Handshake{
		Handshake: &treadlev1.ProcessorHandshake{ProtocolVersions: ProtocolVersions,
			Processors: h.declarations, InstanceId: h.o.instanceID}}})
	var runMu sync.Mutex
	running := map[string]context.CancelFunc{}
	version := uint32(1) // the welcome's choice; each invocation's goroutine takes a copy
	for {
		m, err := st.Recv()
		if err == io.EOF {
			return errors.New("the server ended the stream")
		}
		if err != nil {
			return err
		}
		switch msg := m.Message.(type) {
		case *treadlev1.ProcessorServiceAttachResponse_Welcome:
			if v := msg.Welcome.GetProtocolVersion(); v != 0 {
				version = v
			}
			welcomed()
		case *treadlev1.ProcessorServiceAttachResponse_Invocation:
			inv := msg.Invocation
			ictx, icancel := invocationContext(ctx, inv)
			runMu.Lock()
			running[inv.InvocationId] = icancel
			runMu.Unlock()
			prev, rs := h.queue(inv)
			wg.Add(1)
			version := version
			go func() {
				defer wg.Done()
				defer close(rs.tail)
				defer func() {
					runMu.Lock()
					delete(running, inv.InvocationId)
					runMu.Unlock()
					icancel()
				}()
				// One (run, processor) answers its invocations one at a time, in arrival order:
				// its state is a sequence. Different runs go concurrently.
				<-prev
				res := h.invoke(ictx, inv, rs.run, version)
				if !h.observe[inv.ProcessorId][inv.Hook] {
					send(&treadlev1.ProcessorServiceAttachRequest{Message: &treadlev1.ProcessorServiceAttachRequest_Result{Result: res}})
				}
				if inv.Hook == treadlev1.Hook_HOOK_PROCESS_OUTPUT_RESULT {
					h.forget(runKey{inv.RunId, inv.ProcessorId}, rs.run)
				}
			}()
		case *treadlev1.ProcessorServiceAttachResponse_Cancel:
			runMu.Lock()
			if c := running[msg.Cancel.InvocationId]; c != nil {
				c()
			}
			runMu.Unlock()
		case *treadlev1.ProcessorServiceAttachResponse_RunEnded:
			h.endRun(msg.RunEnded.RunId)
		case *treadlev1.ProcessorServiceAttachResponse_Drain:
			h.o.logger.Info("server is draining; will reconnect when it closes the stream")
		}
	}
}

type queued struct {
	run  *runState
	tail chan struct{}
}

// queue puts inv behind the last invocation of its run and processor.
func (h *host) queue(inv *treadlev1.Invocation) (<-chan struct{}, queued) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sweep()
	k := runKey{inv.RunId, inv.ProcessorId}
	rs := h.runs[k]
	if rs == nil {
		rs = &runState{state: State{}}
		h.runs[k] = rs
	}
	prev := rs.tail
	if prev == nil {
		c := make(chan struct{})
		close(c)
		prev = c
	}
	rs.tail = make(chan struct{})
	rs.touched = h.now()
	return prev, queued{run: rs, tail: rs.tail}
}

// sweep forgets runs idle for longer than the state TTL (a server that died mid-run sends no
// run_ended); a run with an invocation in flight is kept. Called with h.mu held.
func (h *host) sweep() {
	now := h.now()
	if now.Sub(h.swept) < h.o.stateTTL/10 {
		return
	}
	h.swept = now
	for k, rs := range h.runs {
		select {
		case <-rs.tail:
			if now.Sub(rs.touched) > h.o.stateTTL {
				delete(h.runs, k)
			}
		default:
		}
	}
}

func (h *host) forget(k runKey, rs *runState) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.runs[k] == rs {
		delete(h.runs, k)
	}
}

// endRun forgets a run's state (hooks still running keep theirs).
func (h *host) endRun(run string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for k := range h.runs {
		if k.run == run {
			delete(h.runs, k)
		}
	}
}

// invocationContext ends when the server stops waiting, on cancel, or when the stream ends.
// `timeout` (counted from now, as the invocation just arrived) is preferred to `deadline`,
// which is on the server's clock.
func invocationContext(ctx context.Context, inv *treadlev1.Invocation) (context.Context, context.CancelFunc) {
	if t := inv.GetTimeout(); t != nil && t.AsDuration() > 0 {
		return context.WithTimeout(ctx, t.AsDuration())
	}
	if d := inv.GetDeadline(); d != nil {
		return context.WithDeadline(ctx, d.AsTime())
	}
	return context.WithCancel(ctx)
}
