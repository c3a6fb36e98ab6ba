package gitrepo

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/loop"
)

func TestBuildMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		req  loop.CommitRequest
		want string
	}{
		{
			name: "subject body trailers",
			req: loop.CommitRequest{Subject: " agent-loop: iteration 2 ", Body: "Fixed the parser.\r\n\r\nSecond paragraph.\n\n",
				Trailers: []loop.Trailer{{Key: "Agent-Loop-Id", Value: "ralph-x-01234567"}, {Key: "Agent-Loop-Check", Value: " pass "}}},
			want: "agent-loop: iteration 2\n\nFixed the parser.\n\nSecond paragraph.\n\nAgent-Loop-Id: ralph-x-01234567\nAgent-Loop-Check: pass\n",
		},
		{
			name: "no body",
			req:  loop.CommitRequest{Subject: "s", Trailers: []loop.Trailer{{Key: "Agent-Loop-Score", Value: "81.5"}}},
			want: "s\n\nAgent-Loop-Score: 81.5\n",
		},
		{name: "subject only", req: loop.CommitRequest{Subject: "s"}, want: "s\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := buildMessage(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("message (-want +got):\n%s", d)
			}
		})
	}
}

// trailerCorpus are commit messages whose trailers parseTrailers must read
// exactly as git does.
var trailerCorpus = []string{
	"Fix: x\n",
	"subj\n\nA: 1\nB: 2\n",
	"subj\n\nbody\n\nA: 1\n  cont\nnot a trailer\nB: 2\n",
	"subj\n\nbody\n\nA: 1\nnot a trailer\nnot\nnot\nnot\n",
	"subj\n\nbody\n\nSigned-off-by: x\nnot a trailer\nnot\nnot\nnot\n",
	"subj\n\nbody\n\nSigned-off-by: x\nnot a trailer\nnot\n",
	"subj\n\nA: 1\n\n",
	"subj\n\nA : 1\nB:2\n# comment\n",
	"subj\n\nbody\n---\nA: 1\n",
	"subj\nA: 1\n",
	"subj\n\nA: 1\nB: x: y\n A2\n",
	"subj\n\nA: 1\nA: 2\n",
	"subj\n\nKey-With-Digits9: v\n(cherry picked from commit abc)\n",
	"subj\n\n  indented: no\nA: 1\n",
	"subj\n\nA:  spaced   value  \n",
	"subj\n\nbody\n\nAgent-Loop-Id: ralph-demo-0123abcd\nAgent-Loop-Iteration: 3\nAgent-Loop-Check: pass\nAgent-Loop-Score: 73\n",
	"# only a comment\n\nA: 1\n",
	"subj\n\n\n\nA: 1\n\n\n",
	"subj\n\nA: 1\n\t\tfolded\n\t\tagain\n",
	"subj\n\nnot: a: trailer?\nx\n",
	"subj\n\nA:\n",
	"",
	"\n\n",
	"subj\n\nbody text\nA: 1\n",
	"subj\n\nbody\n \nA: 1\n",
	"subj\r\n\r\nA: 1\r\n",
}

func TestParseTrailersMatchesGit(t *testing.T) {
	t.Parallel()
	for _, msg := range trailerCorpus {
		out, err := runGitErr(t.TempDir(), []byte(msg), "interpret-trailers", "--parse", "--no-divider")
		if err != nil {
			t.Fatalf("git interpret-trailers: %v\n%s", err, out)
		}
		var want map[string]string
		for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			k, v, ok := strings.Cut(line, ": ")
			if !ok {
				k, v, ok = strings.Cut(line, ":")
			}
			if !ok {
				continue
			}
			if want == nil {
				want = map[string]string{}
			}
			want[k] = strings.TrimSpace(v)
		}
		if d := cmp.Diff(want, parseTrailers(msg)); d != "" {
			t.Errorf("parseTrailers(%q) differs from git (-git +ours):\n%s", msg, d)
		}
	}
}

func TestSubjectOf(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]string{
		"one\n":              "one",
		"one\ntwo\n\nbody\n": "one two",
		"\n\n  lead\n\nbody": "lead",
		"":                   "",
	} {
		if got := subjectOf(msg); got != want {
			t.Errorf("subjectOf(%q) = %q, want %q", msg, got, want)
		}
	}
}

func FuzzParseTrailers(f *testing.F) {
	for _, m := range trailerCorpus {
		f.Add(m)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		got := parseTrailers(msg)
		for k, v := range got {
			if k == "" || findSeparator(k+":") != len(k) {
				t.Errorf("key %q is not a trailer token", k)
			}
			if strings.ContainsAny(v, "\n") || v != strings.TrimSpace(v) {
				t.Errorf("value %q of %q is not one trimmed line", v, k)
			}
		}
		// Whatever the body, trailers the harness writes are read back.
		req := loop.CommitRequest{Subject: "s", Body: msg,
			Trailers: []loop.Trailer{{Key: "Agent-Loop-Check", Value: "pass"}, {Key: "Agent-Loop-Score", Value: "7"}}}
		built, err := buildMessage(req)
		if err != nil {
			return
		}
		back := parseTrailers(built)
		if back["Agent-Loop-Check"] != "pass" || back["Agent-Loop-Score"] != "7" {
			t.Errorf("trailers of %q not read back: %v", built, back)
		}
	})
}
