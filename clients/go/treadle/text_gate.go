package treadle

import (
	"context"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
)

// Guard is called on each complete span of text and returns the text to release (e.g. redacted).
type Guard func(ctx context.Context, text string) (string, error)

// RunGuard is a Guard that also gets the hook's arguments of the chunk being processed: the
// run's State, its Writer (a custom chunk about what it redacted) and abort (return
// treadle.Abort(...) as the error) are the run's, as in the hook itself.
type RunGuard func(ctx context.Context, a *ProcessOutputStreamArgs, text string) (string, error)

// Boundary gives the byte index of text from which it must be held: len(text) holds nothing,
// 0 holds it all.
type Boundary func(text string) int

// TextGate holds a text part's deltas only while a guarded span is still open.
//
// A streaming guardrail (PII redaction, a banned phrase) must see a whole span before it decides,
// but a span may arrive split across deltas ("jo", "hn@exa", "mple.com"). The gate buffers the
// part's text only from the point where a span that is not yet complete begins, calls the guard
// on the complete text before that point, and releases it at once: text that cannot be part of a
// match is never held, so the guard adds latency only where a match is possible. Whatever is
// still held is released (guarded) before the part's text-end, or before any other chunk of the
// run. It needs protocol version 2 (several chunks, or none, per stream chunk).
//
//	gate := treadle.NewTextGate(redact, treadle.PatternBoundary(email))
//	func (g PIIGuard) ProcessOutputStream(ctx context.Context, a *treadle.ProcessOutputStreamArgs) ([]*treadlev1.Chunk, error) {
//		return g.gate.Process(ctx, a)
//	}
//
// A TextGate is safe for concurrent use by different runs.
type TextGate struct {
	guard    RunGuard
	holdFrom Boundary

	mu   sync.Mutex
	held map[heldKey]string
}

type heldKey struct{ run, text string }

// NewTextGate returns a gate that calls guard on each complete span; boundary nil is WordBoundary.
func NewTextGate(guard Guard, boundary Boundary) *TextGate {
	return NewRunTextGate(func(ctx context.Context, _ *ProcessOutputStreamArgs, text string) (string, error) {
		return guard(ctx, text)
	}, boundary)
}

// NewRunTextGate is NewTextGate with a guard that gets the run's context (state, writer, abort):
// the arguments of the chunk whose processing releases the span.
func NewRunTextGate(guard RunGuard, boundary Boundary) *TextGate {
	if boundary == nil {
		boundary = WordBoundary
	}
	return &TextGate{guard: guard, holdFrom: boundary, held: map[heldKey]string{}}
}

// Held is the text held for run right now (for tests and logs).
func (g *TextGate) Held(run string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var b strings.Builder
	for k, t := range g.held {
		if k.run == run {
			b.WriteString(t)
		}
	}
	return b.String()
}

// Process is the body of a ProcessOutputStream hook: the chunks that take args.Part's place.
func (g *TextGate) Process(ctx context.Context, a *ProcessOutputStreamArgs) ([]*treadlev1.Chunk, error) {
	part := a.Part
	if d := part.GetTextDelta(); d != nil {
		return g.delta(ctx, a, part, d)
	}
	only, one := "", false
	if e := part.GetTextEnd(); e != nil {
		only, one = e.Id, true
	}
	released, err := g.flush(ctx, a, only, one)
	if err != nil {
		return nil, err
	}
	return append(released, part), nil
}

func (g *TextGate) delta(ctx context.Context, a *ProcessOutputStreamArgs, part *treadlev1.Chunk, d *treadlev1.TextDeltaChunk) ([]*treadlev1.Chunk, error) {
	k := heldKey{a.RunID, d.Id}
	g.mu.Lock()
	before := g.held[k]
	delete(g.held, k)
	text := before + d.Text
	cut := g.holdFrom(text)
	if cut < len(text) {
		g.held[k] = text[cut:]
	}
	g.mu.Unlock()
	if cut == 0 {
		return []*treadlev1.Chunk{}, nil
	}
	out, err := g.guard(ctx, a, text[:cut])
	if err != nil {
		return nil, err
	}
	if before == "" && cut == len(text) && out == d.Text {
		return []*treadlev1.Chunk{part}, nil // nothing held and nothing changed: pass the chunk itself
	}
	if out == "" {
		return []*treadlev1.Chunk{}, nil
	}
	return []*treadlev1.Chunk{TextDelta(d.Id, out)}, nil
}

// flush releases what is held for a's run (only text part id when one), guarded.
func (g *TextGate) flush(ctx context.Context, a *ProcessOutputStreamArgs, id string, one bool) ([]*treadlev1.Chunk, error) {
	run := a.RunID
	g.mu.Lock()
	var keys []heldKey
	texts := map[heldKey]string{}
	for k, t := range g.held {
		if k.run == run && (!one || k.text == id) {
			keys = append(keys, k)
			texts[k] = t
			delete(g.held, k)
		}
	}
	g.mu.Unlock()
	var out []*treadlev1.Chunk
	for _, k := range keys {
		t, err := g.guard(ctx, a, texts[k])
		if err != nil {
			return nil, err
		}
		if t != "" {
			out = append(out, TextDelta(k.text, t))
		}
	}
	return out, nil
}

// WordBoundary holds a trailing partial word.
func WordBoundary(text string) int {
	if text == "" {
		return 0
	}
	if r, _ := utf8.DecodeLastRuneInString(text); unicode.IsSpace(r) {
		return len(text)
	}
	return strings.LastIndexFunc(text, unicode.IsSpace) + 1 // 0 when there is no space
}

// SentenceBoundary holds a trailing partial sentence: text after the last ".", "!", "?" or "…"
// followed by white space, or after the last newline.
func SentenceBoundary(text string) int {
	last := 0
	for i, r := range text {
		switch r {
		case '\n':
			last = i + 1
		case '.', '!', '?', '…':
			if n, _ := utf8.DecodeRuneInString(text[i+utf8.RuneLen(r):]); n != utf8.RuneError && unicode.IsSpace(n) {
				last = i + utf8.RuneLen(r)
			}
		}
	}
	return last
}

// PatternBoundary holds from the earliest place where a match of re could still be in progress:
// a partial match (one the next delta may complete), or a complete one that reaches the end of
// the text and might grow.
func PatternBoundary(re *regexp.Regexp) Boundary {
	parsed, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		panic(fmt.Sprintf("PatternBoundary: %v", err)) // re compiled, so its source parses
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		panic(fmt.Sprintf("PatternBoundary: %v", err))
	}
	return func(text string) int { return holdFromPattern(re, prog, text) }
}

func holdFromPattern(re *regexp.Regexp, prog *syntax.Prog, text string) int {
	end := len(text)
	pos := 0
	for pos <= end {
		complete := re.FindStringIndex(text[pos:]) // the leftmost complete match from pos
		last := end
		if complete != nil {
			complete[0], complete[1] = complete[0]+pos, complete[1]+pos
			last = complete[0]
		}
		// A partial match that starts before it (or where it does) holds from its start.
		for start := pos; start <= last; {
			if aliveAtEnd(prog, text, start) {
				return start
			}
			if start == end {
				break
			}
			_, size := utf8.DecodeRuneInString(text[start:])
			start += size
		}
		switch {
		case complete == nil:
			return end
		case complete[1] == end:
			if complete[1] > complete[0] {
				return complete[0]
			}
			return end
		case complete[1] > complete[0]:
			pos = complete[1]
		default:
			_, size := utf8.DecodeRuneInString(text[complete[1]:])
			pos = complete[1] + max(size, 1)
		}
	}
	return end
}

// aliveAtEnd reports whether a match of prog starting at start could still be under way at the
// end of text: some thread waits for the next rune. Zero-width assertions at the very end are
// taken as passing (the text may go on).
func aliveAtEnd(prog *syntax.Prog, text string, start int) bool {
	var add func(list []uint32, seen []bool, pc uint32, pos int) []uint32
	add = func(list []uint32, seen []bool, pc uint32, pos int) []uint32 {
		if seen[pc] {
			return list
		}
		seen[pc] = true
		inst := &prog.Inst[pc]
		switch inst.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			list = add(list, seen, inst.Out, pos)
			return add(list, seen, inst.Arg, pos)
		case syntax.InstCapture, syntax.InstNop:
			return add(list, seen, inst.Out, pos)
		case syntax.InstEmptyWidth:
			if pos == len(text) {
				return add(list, seen, inst.Out, pos)
			}
			before := rune(-1)
			if pos > 0 {
				before, _ = utf8.DecodeLastRuneInString(text[:pos])
			}
			after, _ := utf8.DecodeRuneInString(text[pos:])
			if syntax.EmptyOp(inst.Arg)&^syntax.EmptyOpContext(before, after) == 0 {
				return add(list, seen, inst.Out, pos)
			}
			return list
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			return append(list, pc)
		}
		return list // InstMatch, InstFail
	}
	list := add(nil, make([]bool, len(prog.Inst)), uint32(prog.Start), start)
	for pos := start; pos < len(text) && len(list) > 0; {
		r, size := utf8.DecodeRuneInString(text[pos:])
		pos += size
		seen := make([]bool, len(prog.Inst))
		var next []uint32
		for _, pc := range list {
			if prog.Inst[pc].MatchRune(r) {
				next = add(next, seen, prog.Inst[pc].Out, pos)
			}
		}
		list = next
	}
	return len(list) > 0
}
