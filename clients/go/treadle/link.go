package treadle

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// ProtocolVersion is the highest processor protocol version this SDK speaks; the handshake
// offers ProtocolVersions and the server's welcome picks one. Version 2 lets ProcessOutputStream
// replace a chunk by several (hold and release, see TextGate).
const ProtocolVersion = 2

// ProtocolVersions are the processor protocol versions offered in the handshake.
var ProtocolVersions = []uint32{1, 2}

// toolProtocolVersion is the tool protocol's version (it has one).
const toolProtocolVersion = 1

// A handshake refused with one of these codes would be refused again: the SDK does not retry.
var fatal = map[codes.Code]bool{
	codes.InvalidArgument: true, codes.FailedPrecondition: true, codes.PermissionDenied: true,
	codes.Unauthenticated: true, codes.Unimplemented: true,
}

// AttachError is a handshake the server refused; the SDK does not retry it.
type AttachError struct {
	Target  string
	Code    codes.Code
	Details string
}

func (e *AttachError) Error() string { return fmt.Sprintf("%s: %s: %s", e.Target, e.Code, e.Details) }

// Option configures Attach, ServeTools and Dial.
type Option func(*options)

type options struct {
	instanceID             string
	backoffMin, backoffMax time.Duration
	logger                 *slog.Logger
	dial                   []grpc.DialOption
	stateTTL               time.Duration
	onInvocation           func(processorID string, hook treadlev1.Hook)
	tracerProvider         trace.TracerProvider
	tls                    *tls.Config
	token                  *string // nil: TREADLE_TOKEN
}

func buildOptions(opts []Option) options {
	host, _ := os.Hostname()
	o := options{
		instanceID: fmt.Sprintf("%s:%d", host, os.Getpid()),
		backoffMin: 100 * time.Millisecond, backoffMax: 5 * time.Second,
		logger: slog.Default(), stateTTL: 10 * time.Minute,
	}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// WithInstanceID names this process in the server's logs (default host:pid).
func WithInstanceID(id string) Option { return func(o *options) { o.instanceID = id } }

// WithBackoff sets the first and the longest wait between reconnects (default 100ms, 5s).
func WithBackoff(initial, maximum time.Duration) Option {
	return func(o *options) { o.backoffMin, o.backoffMax = initial, maximum }
}

// WithStateTTL sets how long a run's state is kept after its last invocation when neither
// run_ended nor its processOutputResult ends it (default 10 minutes).
func WithStateTTL(d time.Duration) Option { return func(o *options) { o.stateTTL = d } }

// WithInvocationObserver calls f before each processor invocation runs (metrics, logs); it
// must not block.
func WithInvocationObserver(f func(processorID string, hook treadlev1.Hook)) Option {
	return func(o *options) { o.onInvocation = f }
}

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithDialOptions adds gRPC dial options (interceptors, keepalive, ...; they come after, so
// override, the ones WithTLS and WithToken make).
func WithDialOptions(d ...grpc.DialOption) Option {
	return func(o *options) { o.dial = append(o.dial, d...) }
}

// WithTLS connects over TLS with cfg (its RootCAs verify the server, nil meaning the system's;
// Certificates hold a client certificate for mutual TLS; ServerName overrides the name the
// server's certificate must carry). LoadTLS reads one from PEM files. The default is plaintext,
// which a server without TLS accepts on loopback.
func WithTLS(cfg *tls.Config) Option { return func(o *options) { o.tls = cfg } }

// WithToken sends `authorization: Bearer <token>` on every call; "" sends none. Without this
// option the token is TREADLE_TOKEN's value, when set.
func WithToken(token string) Option { return func(o *options) { o.token = &token } }

// TokenEnv is the environment variable that holds the default token.
const TokenEnv = "TREADLE_TOKEN"

// LoadTLS reads a TLS configuration from PEM files: ca verifies the server ("" for the system's
// roots), cert and key are a client certificate for mutual TLS (both "" for none).
func LoadTLS(ca, cert, key string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s holds no PEM certificate", ca)
		}
	}
	if (cert == "") != (key == "") {
		return nil, errors.New("a client certificate needs both cert and key")
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// bearer is the token as per-call credentials; plaintext is allowed (loopback servers).
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

func (bearer) RequireTransportSecurity() bool { return false }

func (o options) dialOptions() []grpc.DialOption {
	transport := insecure.NewCredentials()
	if o.tls != nil {
		transport = credentials.NewTLS(o.tls)
	}
	d := []grpc.DialOption{
		grpc.WithTransportCredentials(transport),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(16<<20), grpc.MaxCallSendMsgSize(16<<20)),
	}
	token := os.Getenv(TokenEnv)
	if o.token != nil {
		token = *o.token
	}
	if token != "" {
		d = append(d, grpc.WithPerRPCCredentials(bearer(token)))
	}
	return append(d, o.dial...)
}

// streamOnce runs one stream: it returns whether the server welcomed it, and why it ended.
type streamOnce func(ctx context.Context, conn *grpc.ClientConn, welcomed func()) error

// Attachment is a live attachment to one server; Close detaches.
type Attachment struct {
	target string
	cancel context.CancelFunc
	done   chan struct{}
	ready  chan struct{}

	mu       sync.Mutex
	err      error
	attached bool
	opened   int
	readyOne sync.Once
}

func start(ctx context.Context, target string, o options, label string, once streamOnce) (*Attachment, error) {
	if o.backoffMin <= 0 || o.backoffMax < o.backoffMin {
		return nil, fmt.Errorf("backoff must be initial > 0 and maximum >= initial, got %v, %v", o.backoffMin, o.backoffMax)
	}
	conn, err := grpc.NewClient(target, o.dialOptions()...)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	a := &Attachment{target: target, cancel: cancel, done: make(chan struct{}), ready: make(chan struct{})}
	go func() {
		defer close(a.done)
		defer conn.Close()
		a.run(ctx, conn, o, label, once)
	}()
	return a, nil
}

func (a *Attachment) run(ctx context.Context, conn *grpc.ClientConn, o options, label string, once streamOnce) {
	delay := o.backoffMin
	for ctx.Err() == nil {
		welcomed := false
		a.mu.Lock()
		a.opened++
		a.mu.Unlock()
		err := once(ctx, conn, func() {
			welcomed = true
			a.mu.Lock()
			a.attached = true
			a.mu.Unlock()
			a.readyOne.Do(func() { close(a.ready) })
			o.logger.Info(label+" attached", "target", a.target)
		})
		a.mu.Lock()
		a.attached = false
		a.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		if st, ok := status.FromError(err); ok && err != nil && fatal[st.Code()] {
			a.mu.Lock()
			a.err = &AttachError{Target: a.target, Code: st.Code(), Details: st.Message()}
			a.mu.Unlock()
			o.logger.Error(label+": attach refused", "error", a.err)
			a.readyOne.Do(func() { close(a.ready) })
			return
		}
		if welcomed {
			delay = o.backoffMin
		}
		// Full jitter keeps a fleet of processes from reconnecting in lock-step.
		wait := delay/2 + time.Duration(rand.Int64N(int64(delay/2)+1))
		o.logger.Warn(label+": stream ended; retrying", "target", a.target, "error", err, "in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		delay = min(delay*2, o.backoffMax)
	}
}

// Ready waits for the server's first welcome; it returns the *AttachError of a refused handshake.
func (a *Attachment) Ready(ctx context.Context) error {
	select {
	case <-a.ready:
		return a.Err()
	case <-a.done:
		if err := a.Err(); err != nil {
			return err
		}
		return errors.New("attachment closed")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Err is the refusal that ended the attachment, or nil.
func (a *Attachment) Err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err == nil {
		return nil
	}
	return a.err
}

// Attached reports whether a welcomed stream is open now.
func (a *Attachment) Attached() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.attached
}

// StreamsOpened counts the streams opened so far (reconnects included).
func (a *Attachment) StreamsOpened() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.opened
}

// Done is closed once the attachment has stopped (closed, or refused).
func (a *Attachment) Done() <-chan struct{} { return a.done }

// Close detaches: the stream is closed and in-flight invocations are cancelled.
func (a *Attachment) Close() error {
	a.cancel()
	<-a.done
	return nil
}
