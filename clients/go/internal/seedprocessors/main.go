// Command seedprocessors is a remote processor process written with the Go SDK (package
// treadle): the Mastra processor docs' examples (processors.go), served over one Attach stream.
//
//	seedprocessors HOST:PORT
//
// serves word-counter (its total as a data-word-count custom chunk {"words": N} on the finish
// chunk) and redact-tool-result, for tests/test_go_processor.py;
//
//	seedprocessors HOST:PORT --seed-test TEST
//
// serves the processors that test of tests/test_seed_processors.py gives its agent, for
// tests/test_go_seed_processors.py: on stdin, `sync` prints `sync {json}`, how many invocations
// each id handled and, per processor in the test's order, what it recorded, named as the Python
// twin names it (see tests/remote/processor_main.py). Exits when stdin closes.
//
// Both print "ready" once the server's welcome arrived. It lives under internal/ so it never
// becomes part of the SDK's public surface.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
	"github.com/treadle-dev/treadle/clients/go/treadle"
)

func main() {
	args := os.Args[1:]
	if len(args) != 1 && (len(args) != 3 || args[1] != "--seed-test") {
		fmt.Fprintln(os.Stderr, "usage: seedprocessors HOST:PORT [--seed-test TEST]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if len(args) == 1 {
		err = serveReporting(ctx, args[0])
	} else {
		err = serveTest(ctx, args[0], args[2])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "seedprocessors:", err)
		os.Exit(1)
	}
}

func attach(ctx context.Context, target string, ps []treadle.Processor, opts ...treadle.Option) (*treadle.Attachment, error) {
	opts = append(opts, treadle.WithBackoff(50*time.Millisecond, 500*time.Millisecond))
	a, err := treadle.Attach(ctx, target, ps, opts...)
	if err != nil {
		return nil, err
	}
	if err := a.Ready(ctx); err != nil {
		a.Close()
		return nil, err
	}
	fmt.Println("ready")
	return a, nil
}

// serveReporting serves word-counter (reporting its total as a custom chunk) and
// redact-tool-result until a signal, or a refused handshake after a reconnect.
func serveReporting(ctx context.Context, target string) error {
	counter := WordCounter{Report: func(a *treadle.ProcessOutputStreamArgs, total int) error {
		return a.Writer.Custom("data-word-count", map[string]any{"words": total})
	}}
	a, err := attach(ctx, target, []treadle.Processor{counter, RedactToolResult{}})
	if err != nil {
		return err
	}
	defer a.Close()
	select {
	case <-ctx.Done():
		return nil
	case <-a.Done():
		return a.Err()
	}
}

// recorder is what a processor of one of those tests recorded, by the Python twin's container name.
type recorder struct {
	mu   sync.Mutex
	seen map[string][]any
}

func (r *recorder) add(name string, v any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[name] = append(r.seen[name], v)
}

func (r *recorder) mirror() map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]any{}
	for k, v := range r.seen {
		out[k] = v
	}
	return out
}

// setup is one test's processors, in the order it gives them to its agent, each with its
// recorder; served lists them as attached (processors sharing an id are one).
type setup struct {
	recorders []*recorder
	served    []treadle.Processor
}

func quality(text string) float64 {
	if strings.Contains(text, "detailed") {
		return 0.9
	}
	return 0.2
}

func setupOf(test string) (setup, bool) {
	r := func() *recorder { return &recorder{seen: map[string][]any{}} }
	one := func(p treadle.Processor) setup {
		return setup{recorders: []*recorder{r()}, served: []treadle.Processor{p}}
	}
	switch test {
	case "test_lowercase_input_processor":
		return one(LowercaseProcessor{}), true
	case "test_content_filter_blocks_input_before_the_model", "test_content_filter_stops_the_stream_at_the_blocked_chunk":
		return one(ContentFilter{BlockedWords: []string{"secret"}}), true
	case "test_on_violation_is_called_on_abort_and_its_errors_are_swallowed":
		rec := r()
		return setup{recorders: []*recorder{rec}, served: []treadle.Processor{AlertingContentFilter{
			BlockedWords: []string{"secret"},
			Record: func(v treadle.Violation) {
				rec.add("attr:violations", map[string]any{"processorId": v.ProcessorID, "message": v.Message,
					"detail": v.Detail, "hook": snake(v.Hook)})
			},
		}}}, true
	case "test_word_counter_keeps_state_across_chunks_and_not_across_calls":
		rec := r()
		counter := WordCounter{Report: func(_ *treadle.ProcessOutputStreamArgs, total int) error {
			rec.add("attr:totals", total)
			return nil
		}}
		return setup{recorders: []*recorder{rec}, served: []treadle.Processor{counter}}, true
	case "test_quality_guardrail_retries_with_feedback_then_accepts", "test_quality_guardrail_aborts_after_three_retries",
		"test_retry_without_budget_is_an_abort":
		return one(QualityGuardrail{Evaluate: quality}), true
	case "test_redact_tool_result_reaches_stream_and_next_step":
		return one(RedactToolResult{}), true
	case "test_scan_tool_result_blocks_prompt_injection":
		return one(ScanToolResult{}), true
	case "test_input_step_adds_a_tool_that_the_model_sees_and_that_runs":
		return one(AddToolProcessor{}), true
	case "test_error_recovery_trims_and_retries_context_length":
		return one(ErrorRecoveryProcessor{}), true
	case "test_moderation_collector_sees_data_parts":
		blind, report := r(), r()
		return setup{
			recorders: []*recorder{r(), r(), blind, report},
			served: []treadle.Processor{moderationEmitter{}, collectorAndReporter{reporter{report}},
				blindProcessor{blind}},
		}, true
	}
	return setup{}, false
}

// snake names a hook as the Python twin records it: "processInput" -> "process_input".
func snake(hook string) string {
	hook = strings.NewReplacer("LLM", "Llm", "API", "Api").Replace(hook)
	var b strings.Builder
	for _, r := range hook {
		if unicode.IsUpper(r) {
			b.WriteByte('_')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

func serveTest(ctx context.Context, target, test string) error {
	s, ok := setupOf(test)
	if !ok {
		return fmt.Errorf("no Go processors for %s", test)
	}
	var mu sync.Mutex
	counts := map[string]int{}
	observe := treadle.WithInvocationObserver(func(id string, _ treadlev1.Hook) {
		mu.Lock()
		counts[id]++
		mu.Unlock()
	})
	a, err := attach(ctx, target, s.served, observe)
	if err != nil {
		return err
	}
	defer a.Close()
	lines := bufio.NewScanner(os.Stdin)
	for lines.Scan() {
		if strings.TrimSpace(lines.Text()) != "sync" {
			continue
		}
		mirror := make([]map[string]any, len(s.recorders))
		for i, r := range s.recorders {
			mirror[i] = r.mirror()
		}
		mu.Lock()
		report, err := json.Marshal(map[string]any{"invocations": counts, "mirror": mirror})
		mu.Unlock()
		if err != nil {
			return err
		}
		fmt.Printf("sync %s\n", report)
	}
	return lines.Err()
}

// The moderation test's own helpers (they are not framework examples).

// moderationEmitter writes a data-moderation chunk and a transient data-progress one per step.
type moderationEmitter struct{}

func (moderationEmitter) ID() string { return "moderation-emitter" }

func (moderationEmitter) ProcessOutputStep(_ context.Context, a *treadle.ProcessOutputStepArgs) (*treadle.Replace, error) {
	if err := a.Writer.Custom("data-moderation", map[string]any{"level": "warn", "reason": "Possibly unsafe"}); err != nil {
		return nil, err
	}
	return nil, a.Writer.Custom("data-progress", map[string]any{"status": "Processing"}, treadle.Transient())
}

// blindProcessor records the type of every chunk it sees (it does not ask for data chunks).
type blindProcessor struct{ r *recorder }

func (blindProcessor) ID() string { return "blind" }

func (b blindProcessor) ProcessOutputStream(_ context.Context, a *treadle.ProcessOutputStreamArgs) ([]*treadlev1.Chunk, error) {
	b.r.add("class:seen", treadle.ChunkType(a.Part))
	return []*treadlev1.Chunk{a.Part}, nil
}

// reporter shares the collector's id, so it reads the same state at the end of the run.
type reporter struct{ r *recorder }

func (p reporter) ProcessOutputResult(_ context.Context, a *treadle.ProcessOutputResultArgs) (*treadle.Replace, error) {
	warnings, _ := a.State["warnings"].([]any)
	p.r.add("cell:process_output_result:states", append([]any{}, warnings...))
	return nil, nil
}

// collectorAndReporter serves ModerationCollector and reporter as the one processor they are.
type collectorAndReporter struct {
	reporter
}

func (collectorAndReporter) ID() string { return ModerationCollector{}.ID() }

func (collectorAndReporter) Settings() treadle.Settings { return ModerationCollector{}.Settings() }

func (collectorAndReporter) ProcessOutputStream(ctx context.Context, a *treadle.ProcessOutputStreamArgs) ([]*treadlev1.Chunk, error) {
	return ModerationCollector{}.ProcessOutputStream(ctx, a)
}
