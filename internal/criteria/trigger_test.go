package criteria

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseTrigger(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		want Trigger
		ok   bool
	}{
		{"ralph this", "ralph this: fix all lint errors", Trigger{Task: "fix all lint errors", Phrase: "ralph this:"}, true},
		{"ralph colon", "Ralph: migrate src/ to ESM", Trigger{Task: "migrate src/ to ESM", Phrase: "ralph:"}, true},
		{"al", "al: fix all lint errors.", Trigger{Task: "fix all lint errors", Phrase: "al:"}, true},
		{"ralph it", "ralph it", Trigger{Phrase: "ralph it"}, true},
		{"keep trying until", "keep trying until tests pass", Trigger{Task: "fix the failing tests", Hint: "tests pass", Phrase: "keep trying until"}, true},
		{"loop until coverage", "loop until coverage >80%", Trigger{Task: "add tests to improve coverage", Hint: "coverage >80%", Phrase: "loop until"}, true},
		{"iterate until", "iterate until no errors", Trigger{Task: "fix the errors", Hint: "no errors", Phrase: "iterate until"}, true},
		{"fix until green", "fix until green", Trigger{Task: "fix the failing tests", Hint: "tests pass", Phrase: "fix until green"}, true},
		{"keep fixing until", "keep fixing until lint is clean", Trigger{Task: "fix the lint errors", Hint: "lint is clean", Phrase: "keep fixing until"}, true},
		{"keep fixing tests green", "keep fixing until the tests are green", Trigger{Task: "fix the failing tests", Hint: "the tests are green", Phrase: "keep fixing until"}, true},
		{"run until passes", "run until passes", Trigger{Task: "make the tests pass", Hint: "tests pass", Phrase: "run until passes"}, true},
		{"prefix with phrase", "/agent-loop fix until green", Trigger{Task: "fix the failing tests", Hint: "tests pass", Phrase: "fix until green"}, true},
		{"prefix with task", "/agent-loop fix the flaky parser test", Trigger{Task: "fix the flaky parser test", Phrase: "/agent-loop"}, true},
		{"prefix with until", "/agent-loop fix the parser until lint is clean", Trigger{Task: "fix the parser", Hint: "lint is clean", Phrase: "/agent-loop"}, true},
		{"later line", "Thanks for the report!\n\nralph this: fix the race in the cache\nand add a test\n\nCheers", Trigger{Task: "fix the race in the cache and add a test", Phrase: "ralph this:"}, true},
		{"case insensitive", "RALPH THIS: Fix It", Trigger{Task: "Fix It", Phrase: "ralph this:"}, true},
		{"quoted is ignored", "> ralph this: fix tests\n\nI agree", Trigger{}, false},
		{"code block is ignored", "```\nralph this: fix tests\n```", Trigger{}, false},
		{"mid sentence is ignored", "I will keep trying until it works", Trigger{}, false},
		{"plain comment", "LGTM, merging.", Trigger{}, false},
		{"empty task", "ralph:", Trigger{}, false},
		{"bare prefix", "/agent-loop", Trigger{}, false},
		{"other command", "/agent-loopy fix it", Trigger{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := ParseTrigger(tc.text)
			if ok != tc.ok {
				t.Fatalf("ParseTrigger(%q) ok = %v, want %v (got %+v)", tc.text, ok, tc.ok, got)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseTrigger(%q) (-want +got):\n%s", tc.text, diff)
			}
		})
	}
}

// The hint a trigger returns refines inference: "loop until coverage >80%"
// on a Python repository with pytest-cov gives an enforced threshold.
func TestTriggerHintDrivesInference(t *testing.T) {
	t.Parallel()
	tr, ok := ParseTrigger("loop until coverage is above 90%")
	if !ok {
		t.Fatal("no trigger")
	}
	p, err := InferWithHint(t.Context(), "testdata/repos/python-poetry", tr.Task, tr.Hint)
	if err != nil {
		t.Fatal(err)
	}
	if p.Class != ClassCoverage || p.Command != "poetry run pytest --cov --cov-fail-under=90" {
		t.Errorf("got class %s command %q", p.Class, p.Command)
	}
}

// TestParseTriggerLongComment: a request at the end of a comment as long as
// GitHub allows (65,536 characters) in one paragraph of short lines is found,
// and a quoted request in such a comment is not. Before matchParagraph this
// input took seconds (every line re-joined the rest of its paragraph); the
// speed itself is measured by BenchmarkParseTriggerLongComment.
func TestParseTriggerLongComment(t *testing.T) {
	filler := strings.Repeat("a\n", 32000)
	tr, ok := ParseTrigger(filler + "\n/agent-loop fix the parser until tests pass\n")
	if !ok || tr.Task != "fix the parser" || tr.Hint != "tests pass" {
		t.Fatalf("got %+v, %v", tr, ok)
	}
	if tr, ok := ParseTrigger(filler + "> ralph: fix it\n"); ok {
		t.Fatalf("a quoted request triggered: %+v", tr)
	}
	// The paragraph rule still holds: a trigger on a later line of a
	// paragraph takes the rest of that paragraph as its task.
	tr, ok = ParseTrigger("thanks!\nralph: fix the\nflaky test\n\nunrelated")
	if !ok || tr.Task != "fix the flaky test" {
		t.Fatalf("got %+v, %v", tr, ok)
	}
}

func BenchmarkParseTriggerLongComment(b *testing.B) {
	comment := strings.Repeat("a\n", 32000) + "\n/agent-loop fix the parser until tests pass\n"
	b.SetBytes(int64(len(comment)))
	for b.Loop() {
		if _, ok := ParseTrigger(comment); !ok {
			b.Fatal("no trigger")
		}
	}
}
