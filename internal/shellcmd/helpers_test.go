package shellcmd

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// repo is an in-memory repository of the given files.
func repo(files map[string]string) *Tree {
	m := fstest.MapFS{}
	for p, data := range files {
		m[p] = &fstest.MapFile{Data: []byte(data), Mode: 0o644}
	}
	return NewTree(m)
}

// classifyCase is a command and what it is.
type classifyCase struct {
	cmd  string
	kind Kind
	sig  string
	// runner is checked when set ("-" for none).
	runner string
}

// checkClassify classifies each command in a repository of files.
func checkClassify(t *testing.T, files map[string]string, cases []classifyCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.cmd, func(t *testing.T) {
			t.Parallel()
			cmds, err := Parse(tc.cmd)
			if err != nil || len(cmds) != 1 {
				t.Fatalf("Parse(%q) = %v, %v", tc.cmd, cmds, err)
			}
			var cl Classifier
			if files != nil {
				cl.Lookup = repo(files)
			}
			got := cl.Classify(cmds[0].Args, ".")
			if got.Kind != tc.kind || got.Sig != tc.sig {
				t.Errorf("Classify(%q) = %s %q, want %s %q", tc.cmd, got.Kind, got.Sig, tc.kind, tc.sig)
			}
			want := tc.runner
			if want == "-" {
				want = ""
			}
			if tc.runner != "" && got.Runner != want {
				t.Errorf("Classify(%q).Runner = %q, want %q", tc.cmd, got.Runner, want)
			}
		})
	}
}

// analyzeCase is a completion command in a repository and what it
// reaches: steps rendered by renderStep, and its dependencies.
type analyzeCase struct {
	name    string
	files   map[string]string
	cmd     string
	workdir string
	steps   []string
	deps    Depends
}

// renderStep shows a step as "args (role runner) via ...".
func renderStep(s Step) string {
	out := strings.Join(s.Args, " ") + " (" + string(s.Role)
	if s.Runner != "" {
		out += " " + s.Runner
	}
	out += ")"
	if len(s.Wrappers) > 0 {
		out += " wrapped " + strings.Join(s.Wrappers, ", ")
	}
	if len(s.Via) > 0 {
		out += " via " + strings.Join(s.Via, " > ")
	}
	if s.Dir != "." {
		out += " in " + s.Dir
	}
	if s.Fallback {
		out += " or-fallback"
	}
	return out
}

func checkAnalyze(t *testing.T, cases []analyzeCase) {
	t.Helper()
	for _, tc := range cases {
		name := tc.name
		if name == "" {
			name = tc.cmd
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a := Analyze(repo(tc.files), tc.cmd, tc.workdir)
			var steps []string
			for _, s := range a.Steps {
				steps = append(steps, renderStep(s))
			}
			if d := cmp.Diff(tc.steps, steps); d != "" {
				t.Errorf("Analyze(%q) steps (-want +got):\n%s", tc.cmd, d)
			}
			if d := cmp.Diff(tc.deps, a.Depends); d != "" {
				t.Errorf("Analyze(%q) depends (-want +got):\n%s", tc.cmd, d)
			}
		})
	}
}
