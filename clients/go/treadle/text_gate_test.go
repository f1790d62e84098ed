package treadle

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	treadlev1 "github.com/treadle-dev/treadle/clients/go/gen/treadle/v1"
)

// gateRun is what the gate released for each delta of text part t1, then for its text-end.
func gateRun(t *testing.T, g *TextGate, texts ...string) [][]string {
	t.Helper()
	var out [][]string
	parts := make([]*treadlev1.Chunk, 0, len(texts)+1)
	for _, s := range texts {
		parts = append(parts, TextDelta("t1", s))
	}
	parts = append(parts, &treadlev1.Chunk{Chunk: &treadlev1.Chunk_TextEnd{TextEnd: &treadlev1.TextEndChunk{Id: "t1"}}})
	for _, p := range parts {
		chunks, err := g.Process(context.Background(), &ProcessOutputStreamArgs{Call: Call{RunID: "r1"}, Part: p})
		if err != nil {
			t.Fatal(err)
		}
		got := []string{}
		for _, c := range chunks {
			if d := c.GetTextDelta(); d != nil {
				got = append(got, d.Text)
			} else {
				got = append(got, "<end>")
			}
		}
		out = append(out, got)
	}
	return out
}

func same(a, b [][]string) bool { return slices.EqualFunc(a, b, slices.Equal) }

func unchanged(_ context.Context, s string) (string, error) { return s, nil }

var email = regexp.MustCompile(`[\w.+-]+@[\w-]+(?:\.[\w-]+)+`)

func TestTextGateReleasesAtOnceWhatCannotMatch(t *testing.T) {
	g := NewTextGate(unchanged, PatternBoundary(email))
	// Spaces and punctuation close every possible address: nothing is held past them.
	if got := gateRun(t, g, "Hello, ", "world! ", "Bye. "); !same(got, [][]string{{"Hello, "}, {"world! "}, {"Bye. "}, {"<end>"}}) {
		t.Fatalf("got %q", got)
	}
	// A word could still become an address: held until the next delta shows it does not.
	if got := gateRun(t, g, "Hi th", "ere. "); !same(got, [][]string{{"Hi "}, {"there. "}, {"<end>"}}) {
		t.Fatalf("got %q", got)
	}
}

func TestTextGateWordAndSentenceBoundariesGuardWholeSpans(t *testing.T) {
	var spans []string
	words := NewTextGate(func(_ context.Context, s string) (string, error) {
		spans = append(spans, s)
		return strings.ReplaceAll(s, "darn", "****"), nil
	}, WordBoundary)
	if got := gateRun(t, words, "oh da", "rn it"); !same(got, [][]string{{"oh "}, {"**** "}, {"it", "<end>"}}) {
		t.Fatalf("got %q", got)
	}
	if !slices.Equal(spans, []string{"oh ", "darn ", "it"}) {
		t.Fatalf("spans %q", spans)
	}
	sentences := NewTextGate(func(_ context.Context, s string) (string, error) {
		if strings.Contains(s, "bad") {
			return strings.ToUpper(s), nil
		}
		return s, nil
	}, SentenceBoundary)
	if got := gateRun(t, sentences, "A good one. A b", "ad one. Ok"); !same(got, [][]string{{"A good one."}, {" A BAD ONE."}, {" Ok", "<end>"}}) {
		t.Fatalf("got %q", got)
	}
}

func TestTextGateRedactsAnAddressSplitAcrossDeltas(t *testing.T) {
	redact := func(_ context.Context, s string) (string, error) { return email.ReplaceAllString(s, "[email]"), nil }
	for _, pieces := range [][]string{
		{"Write to ", "jane.doe@e", "xample.com", " or call. ", "Thanks!"},
		{"Write to ", "ja", "ne.doe@", "example", ".com or", " call. ", "Thanks!"},
	} {
		g := NewTextGate(redact, PatternBoundary(email))
		var text strings.Builder
		for _, released := range gateRun(t, g, pieces...) {
			for _, s := range released {
				if strings.Contains(s, "jane") {
					t.Fatalf("released %q", s)
				}
				if s != "<end>" {
					text.WriteString(s)
				}
			}
		}
		if text.String() != "Write to [email] or call. Thanks!" || g.Held("r1") != "" {
			t.Fatalf("%q: %q, held %q", pieces, text.String(), g.Held("r1"))
		}
	}
}

func TestPatternBoundary(t *testing.T) {
	hold := PatternBoundary(email)
	for text, want := range map[string]int{
		"":                   0,
		"no address here. ":  17,
		"mail jo":            5,  // "jo" may become an address
		"mail jo@ex.com":     5,  // complete, but it reaches the end and may grow
		"mail jo@ex.com now": 15, // complete and closed, but "now" may start one
		"a@b.c then x@":      11, // the second one is open
		"@@@ ":               4,
		"café jo@":           6, // byte offsets
	} {
		if got := hold(text); got != want {
			t.Errorf("hold(%q) = %d, want %d", text, got, want)
		}
	}
}
