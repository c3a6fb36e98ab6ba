package report

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/state"
)

var update = flag.Bool("update", false, "rewrite golden files")

// goldenPath is testdata/<TestName>.golden (a subtest's name is a folder).
func goldenPath(t *testing.T) string {
	return filepath.Join("testdata", filepath.FromSlash(t.Name())+".golden")
}

func golden(t *testing.T, got string) {
	t.Helper()
	path := goldenPath(t)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/report -update)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("report differs from %s (-want +got):\n%s", path, d)
	}
}

// media are the four places a report goes.
var media = []struct {
	test string
	opts func(st *state.State) Options
}{
	{"TestComment", func(st *state.State) Options {
		return Options{Target: PR, Marker: "<!-- agent-loop:sticky loop=" + st.LoopID + " -->"}
	}},
	{"TestPRBody", func(*state.State) Options { return Options{Target: PRBody} }},
	{"TestStepSummary", func(*state.State) Options { return Options{Target: Summary} }},
	{"TestCLI", func(*state.State) Options { return Options{Target: CLI} }},
}

// TestGoldens renders every story in every medium: testdata/<Medium>/<story>.golden.
func TestGoldens(t *testing.T) {
	all := append(stories(), hostileStory())
	for _, m := range media {
		t.Run(m.test, func(t *testing.T) {
			for _, s := range all {
				t.Run(s.name, func(t *testing.T) {
					golden(t, Render(s.st, m.opts(s.st)))
				})
			}
		})
	}
}
