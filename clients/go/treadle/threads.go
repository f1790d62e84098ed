package treadle

import (
	"context"
	"errors"
	"io"
	"iter"
	"sync"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/structpb"
)

// The thread calls of the agent client, over treadle.v1.ThreadService: memory threads, their
// messages and runs, signals into them, and subscriptions. Every call names the thread's
// resource as well as the thread.

// ThreadOption sets a field of a thread on CreateThread and UpdateThread.
type ThreadOption func(t *treadlev1.Thread, paths *[]string) error

// WithTitle sets the thread's title.
func WithTitle(title string) ThreadOption {
	return func(t *treadlev1.Thread, paths *[]string) error {
		t.Title = title
		*paths = append(*paths, "title")
		return nil
	}
}

// WithThreadMetadata sets the thread's metadata (a JSON object).
func WithThreadMetadata(m map[string]any) ThreadOption {
	return func(t *treadlev1.Thread, paths *[]string) error {
		s, err := structpb.NewStruct(normalise(m).(map[string]any))
		if err != nil {
			return err
		}
		t.Metadata = s
		*paths = append(*paths, "metadata")
		return nil
	}
}

func thread(resourceID, threadID string, opts []ThreadOption) (*treadlev1.Thread, []string, error) {
	t := &treadlev1.Thread{Id: threadID, ResourceId: resourceID}
	var paths []string
	for _, o := range opts {
		if err := o(t, &paths); err != nil {
			return nil, nil, err
		}
	}
	return t, paths, nil
}

// CreateThread creates the thread threadID of resourceID.
func (c *Client) CreateThread(ctx context.Context, resourceID, threadID string, opts ...ThreadOption) (*treadlev1.Thread, error) {
	t, _, err := thread(resourceID, threadID, opts)
	if err != nil {
		return nil, err
	}
	r, err := c.Threads.CreateThread(ctx, &treadlev1.CreateThreadRequest{Thread: t})
	return r.GetThread(), err
}

// GetThread returns a thread; a missing one is codes.NotFound.
func (c *Client) GetThread(ctx context.Context, resourceID, threadID string) (*treadlev1.Thread, error) {
	r, err := c.Threads.GetThread(ctx, &treadlev1.GetThreadRequest{ResourceId: resourceID, ThreadId: threadID})
	return r.GetThread(), err
}

// UpdateThread sets the fields the options name (and only those).
func (c *Client) UpdateThread(ctx context.Context, resourceID, threadID string, opts ...ThreadOption) (*treadlev1.Thread, error) {
	t, paths, err := thread("", threadID, opts)
	if err != nil {
		return nil, err
	}
	r, err := c.Threads.UpdateThread(ctx, &treadlev1.UpdateThreadRequest{ResourceId: resourceID, Thread: t,
		UpdateMask: &fieldmaskpb.FieldMask{Paths: paths}})
	return r.GetThread(), err
}

// DeleteThread deletes the thread with its messages and runs.
func (c *Client) DeleteThread(ctx context.Context, resourceID, threadID string) error {
	_, err := c.Threads.DeleteThread(ctx, &treadlev1.DeleteThreadRequest{ResourceId: resourceID, ThreadId: threadID})
	return err
}

// pages reads every page of a listing.
func pages[T any](ctx context.Context, page func(ctx context.Context, token string) ([]T, string, error)) ([]T, error) {
	var out []T
	token := ""
	for {
		items, next, err := page(ctx, token)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		if next == "" {
			return out, nil
		}
		token = next
	}
}

// ListThreads returns every thread of the resource, most recently updated first.
func (c *Client) ListThreads(ctx context.Context, resourceID string) ([]*treadlev1.Thread, error) {
	return pages(ctx, func(ctx context.Context, token string) ([]*treadlev1.Thread, string, error) {
		r, err := c.Threads.ListThreads(ctx, &treadlev1.ListThreadsRequest{ResourceId: resourceID, PageToken: token})
		return r.GetThreads(), r.GetNextPageToken(), err
	})
}

// ListMessages returns every message of the thread, oldest first, in the stored form.
func (c *Client) ListMessages(ctx context.Context, resourceID, threadID string) ([]*treadlev1.Message, error) {
	return pages(ctx, func(ctx context.Context, token string) ([]*treadlev1.Message, string, error) {
		r, err := c.Threads.ListMessages(ctx, &treadlev1.ListMessagesRequest{ResourceId: resourceID, ThreadId: threadID, PageToken: token})
		return r.GetMessages(), r.GetNextPageToken(), err
	})
}

// ListRuns returns every run recorded on the thread, newest first.
func (c *Client) ListRuns(ctx context.Context, resourceID, threadID string) ([]*treadlev1.Run, error) {
	return pages(ctx, func(ctx context.Context, token string) ([]*treadlev1.Run, string, error) {
		r, err := c.Threads.ListRuns(ctx, &treadlev1.ListRunsRequest{ResourceId: resourceID, ThreadId: threadID, PageToken: token})
		return r.GetRuns(), r.GetNextPageToken(), err
	})
}

// Target is where a signal goes: a running run (ToRun) or a thread (InThread).
type Target struct {
	RunID, ResourceID, ThreadID string
}

// InThread targets the thread threadID of resourceID: its active run, or a new run when idle.
func InThread(resourceID, threadID string) Target {
	return Target{ResourceID: resourceID, ThreadID: threadID}
}

// ToRun targets a running run.
func ToRun(runID string) Target { return Target{RunID: runID} }

// signalRequest is what the send calls share.
type signalRequest struct {
	attributes map[string]any
	ordered    []Attr
	ifActive   *treadlev1.IfActive
	ifIdle     *treadlev1.IfIdle
}

// Attr is one attribute of a signal. A list of them keeps its order, which is the order the
// model sees: Attrs(Attr{"note", "x"}, Attr{"n", 3}) renders <user note="x" n="3">.
type Attr struct {
	Name  string
	Value any
}

// Attrs turns an ordered attribute list into the proto's ordered_attributes, for the signal
// messages built by hand (Signal, StateSignal, Notification and the IfActive and IfIdle
// branches). A value JSON cannot hold is an error.
func Attrs(attrs ...Attr) ([]*treadlev1.SignalAttribute, error) {
	out := make([]*treadlev1.SignalAttribute, 0, len(attrs))
	for _, a := range attrs {
		v, err := structpb.NewValue(normalise(a.Value))
		if err != nil {
			return nil, err
		}
		out = append(out, &treadlev1.SignalAttribute{Name: a.Name, Value: v})
	}
	return out, nil
}

// SignalOption tunes one send call.
type SignalOption func(*signalRequest)

// WithAttributes sets a message's attributes from a map, which has no order: they render
// "id", "name", "from" first, then the rest alphabetically ({"name": "Devin", "from": "slack"}
// reaches the model as <user name="Devin" from="slack">...</user>). WithAttributeList keeps an
// order of your own.
func WithAttributes(a map[string]any) SignalOption {
	return func(r *signalRequest) { r.attributes = a }
}

// WithAttributeList sets a message's attributes in the order given, the order they render:
// WithAttributeList(Attr{"note", "x"}, Attr{"n", 3}) gives <user note="x" n="3">.
func WithAttributeList(attrs ...Attr) SignalOption {
	return func(r *signalRequest) { r.ordered = attrs }
}

// IfActive says what happens when the thread is running (default: delivered into the run).
func IfActive(behavior treadlev1.ActiveBehavior) SignalOption {
	return func(r *signalRequest) { r.ifActive = &treadlev1.IfActive{Behavior: behavior} }
}

// IfIdle says what happens when the thread is idle (default: a run wakes), and the woken run's
// call options (nil: the agent's).
func IfIdle(behavior treadlev1.IdleBehavior, options *treadlev1.CallOptions) SignalOption {
	return func(r *signalRequest) { r.ifIdle = &treadlev1.IfIdle{Behavior: behavior, StreamOptions: options} }
}

func buildSignal(opts []SignalOption) signalRequest {
	var r signalRequest
	for _, o := range opts {
		o(&r)
	}
	return r
}

func (r signalRequest) message(text string) (*treadlev1.SignalMessage, error) {
	m := &treadlev1.SignalMessage{Contents: text}
	if r.ordered != nil {
		list, err := Attrs(r.ordered...)
		if err != nil {
			return nil, err
		}
		m.OrderedAttributes = list
	} else if r.attributes != nil {
		s, err := structpb.NewStruct(normalise(r.attributes).(map[string]any))
		if err != nil {
			return nil, err
		}
		m.Attributes = s
	}
	return m, nil
}

// SendMessage sends a user message to the target: delivered into its running run, or waking a
// run of agentID on an idle thread (see IfActive, IfIdle).
func (c *Client) SendMessage(ctx context.Context, agentID string, to Target, text string, opts ...SignalOption) (*treadlev1.SendMessageResponse, error) {
	r := buildSignal(opts)
	m, err := r.message(text)
	if err != nil {
		return nil, err
	}
	return c.Threads.SendMessage(ctx, &treadlev1.SendMessageRequest{AgentId: agentID, RunId: to.RunID,
		ResourceId: to.ResourceID, ThreadId: to.ThreadID, Message: m, IfActive: r.ifActive, IfIdle: r.ifIdle})
}

// QueueMessage sends a user message that runs after the thread's active run.
func (c *Client) QueueMessage(ctx context.Context, agentID string, to Target, text string, opts ...SignalOption) (*treadlev1.QueueMessageResponse, error) {
	r := buildSignal(opts)
	m, err := r.message(text)
	if err != nil {
		return nil, err
	}
	return c.Threads.QueueMessage(ctx, &treadlev1.QueueMessageRequest{AgentId: agentID, RunId: to.RunID,
		ResourceId: to.ResourceID, ThreadId: to.ThreadID, Message: m, IfActive: r.ifActive, IfIdle: r.ifIdle})
}

// SendSignal sends a signal ({Type: "notification", TagName: "github-review", Contents: ...}).
func (c *Client) SendSignal(ctx context.Context, agentID string, to Target, s *treadlev1.Signal, opts ...SignalOption) (*treadlev1.SendSignalResponse, error) {
	r := buildSignal(opts)
	return c.Threads.SendSignal(ctx, &treadlev1.SendSignalRequest{AgentId: agentID, RunId: to.RunID,
		ResourceId: to.ResourceID, ThreadId: to.ThreadID, Signal: s, IfActive: r.ifActive, IfIdle: r.ifIdle})
}

// SendStateSignal sets named thread state ({Id: "browser", CacheKey: ..., Value: ...}); an
// unchanged cache key answers Skipped.
func (c *Client) SendStateSignal(ctx context.Context, agentID string, to Target, s *treadlev1.StateSignal, opts ...SignalOption) (*treadlev1.SendStateSignalResponse, error) {
	r := buildSignal(opts)
	return c.Threads.SendStateSignal(ctx, &treadlev1.SendStateSignalRequest{AgentId: agentID, RunId: to.RunID,
		ResourceId: to.ResourceID, ThreadId: to.ThreadID, State: s, IfActive: r.ifActive, IfIdle: r.ifIdle})
}

// SendNotificationSignal records a notification in the thread's inbox; the agent's policy
// decides when it reaches the model.
func (c *Client) SendNotificationSignal(ctx context.Context, agentID, resourceID, threadID string, n *treadlev1.Notification, opts ...SignalOption) (*treadlev1.SendNotificationSignalResponse, error) {
	r := buildSignal(opts)
	return c.Threads.SendNotificationSignal(ctx, &treadlev1.SendNotificationSignalRequest{AgentId: agentID,
		ResourceId: resourceID, ThreadId: threadID, Notification: n, IfIdle: r.ifIdle})
}

// ListNotifications returns the thread's inbox records (only those of the given statuses, if any).
func (c *Client) ListNotifications(ctx context.Context, resourceID, threadID string, statuses ...treadlev1.NotificationStatus) ([]*treadlev1.NotificationRecord, error) {
	r, err := c.Threads.ListNotifications(ctx, &treadlev1.ListNotificationsRequest{ResourceId: resourceID, ThreadId: threadID, Statuses: statuses})
	return r.GetNotifications(), err
}

// AbortRun stops the target's run (a run, or a thread's active run); false when none was running.
func (c *Client) AbortRun(ctx context.Context, to Target) (bool, error) {
	r, err := c.Threads.AbortRun(ctx, &treadlev1.AbortRunRequest{RunId: to.RunID, ResourceId: to.ResourceID, ThreadId: to.ThreadID})
	return r.GetAborted(), err
}

// GetActiveRun returns the thread's running run; its RunId is "" when the thread is idle.
func (c *Client) GetActiveRun(ctx context.Context, resourceID, threadID string) (*treadlev1.ActiveRun, error) {
	r, err := c.Threads.GetActiveRun(ctx, &treadlev1.GetActiveRunRequest{ResourceId: resourceID, ThreadId: threadID})
	if err != nil {
		return nil, err
	}
	if r.ActiveRun == nil {
		return &treadlev1.ActiveRun{}, nil
	}
	return r.ActiveRun, nil
}

// ThreadSubscription is the chunks of every run on a thread, from the moment of subscribing.
//
// It is a handle with a Recv loop (like a gRPC stream) rather than a bare iterator because
// subscribing is an act of its own: SubscribeToThread returns once the server holds the
// subscription, so a message sent after it is seen whole; a lazy iter.Seq2 would only subscribe
// when ranged over, after the send. Chunks and Events give the range-over-func form of the
// same stream (use one reader at a time).
type ThreadSubscription struct {
	stream treadlev1.ThreadService_SubscribeToThreadClient
	cancel context.CancelFunc
	client *Client
	thread Target

	mu      sync.Mutex
	active  *treadlev1.ActiveRun
	pending []ThreadEvent
}

// ThreadEvent is one thing a subscription saw: a chunk of a run (as Stream yields it: Type(),
// Text(), FinishReason(), the generated getters), or (Chunk nil) a change of the thread's active
// run, ActiveRun.RunId "" meaning the thread went idle.
type ThreadEvent struct {
	Chunk     *Chunk
	ActiveRun *treadlev1.ActiveRun
}

// SubscribeToThread subscribes to a thread; it returns once the server confirmed (its first
// response, the thread's active run). Close it when done; cancelling ctx also ends it.
func (c *Client) SubscribeToThread(ctx context.Context, resourceID, threadID string) (*ThreadSubscription, error) {
	ctx, cancel := context.WithCancel(ctx)
	st, err := c.Threads.SubscribeToThread(ctx, &treadlev1.SubscribeToThreadRequest{ResourceId: resourceID, ThreadId: threadID})
	if err != nil {
		cancel()
		return nil, err
	}
	s := &ThreadSubscription{stream: st, cancel: cancel, client: c, thread: InThread(resourceID, threadID)}
	first, err := st.Recv()
	if err != nil {
		cancel()
		return nil, err
	}
	s.active = first.GetActiveRun()
	for _, ch := range first.Chunks {
		s.pending = append(s.pending, ThreadEvent{Chunk: &Chunk{ch}})
	}
	return s, nil
}

// ActiveRun is the thread's running run as last seen (RunId "" when idle).
func (s *ThreadSubscription) ActiveRun() *treadlev1.ActiveRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active == nil {
		return &treadlev1.ActiveRun{}
	}
	return s.active
}

// Next returns the next event; io.EOF once the stream ended, codes.Canceled after Close.
func (s *ThreadSubscription) Next() (ThreadEvent, error) {
	for {
		s.mu.Lock()
		if len(s.pending) > 0 {
			e := s.pending[0]
			s.pending = s.pending[1:]
			if e.ActiveRun != nil {
				s.active = e.ActiveRun
			}
			s.mu.Unlock()
			return e, nil
		}
		s.mu.Unlock()
		r, err := s.stream.Recv()
		if err != nil {
			return ThreadEvent{}, err
		}
		s.mu.Lock()
		// The server sends a run change before the run's chunks and after them.
		if r.ActiveRun != nil {
			s.pending = append(s.pending, ThreadEvent{ActiveRun: r.ActiveRun})
		}
		for _, ch := range r.Chunks {
			s.pending = append(s.pending, ThreadEvent{Chunk: &Chunk{ch}})
		}
		s.mu.Unlock()
	}
}

// Recv returns the next chunk, as Stream yields it (each carries its RunId), skipping run
// changes (ActiveRun keeps the last one); io.EOF once the stream ended, codes.Canceled after
// Close.
func (s *ThreadSubscription) Recv() (Chunk, error) {
	for {
		e, err := s.Next()
		if err != nil {
			return Chunk{}, err
		}
		if e.Chunk != nil {
			return *e.Chunk, nil
		}
	}
}

// RecvProto is Recv returning the generated message.
func (s *ThreadSubscription) RecvProto() (*treadlev1.Chunk, error) {
	c, err := s.Recv()
	return c.Chunk, err
}

// Chunks yields the subscription's chunks, as Stream yields them, until the stream ends (io.EOF
// ends it quietly) or the loop breaks; a failure is yielded once, last.
func (s *ThreadSubscription) Chunks() iter.Seq2[Chunk, error] {
	return each(s.Recv)
}

// ChunksProto is Chunks yielding the generated messages.
func (s *ThreadSubscription) ChunksProto() iter.Seq2[*treadlev1.Chunk, error] {
	return each(s.RecvProto)
}

// Events yields chunks and run changes, as Chunks does.
func (s *ThreadSubscription) Events() iter.Seq2[ThreadEvent, error] {
	return each(s.Next)
}

func each[T any](next func() (T, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for {
			v, err := next()
			if errors.Is(err, io.EOF) {
				return
			}
			if !yield(v, err) || err != nil {
				return
			}
		}
	}
}

// Abort stops the thread's active run (the subscription stays open); false when it was idle.
func (s *ThreadSubscription) Abort(ctx context.Context) (bool, error) {
	return s.client.AbortRun(ctx, s.thread)
}

// Close ends the subscription (it aborts nothing); Recv then fails with codes.Canceled.
func (s *ThreadSubscription) Close() error {
	s.cancel()
	return nil
}
