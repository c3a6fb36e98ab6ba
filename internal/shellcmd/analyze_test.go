package shellcmd

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestAnalyzeGates(t *testing.T) {
	t.Parallel()
	a := Analyze(nil, "npm ci && npm run build && go vet ./... && go test ./... | tee out.txt; codecov || true; npm test || true", ".")
	var gates []string
	for _, s := range a.Gates() {
		gates = append(gates, s.Sig)
	}
	if d := cmp.Diff([]string{"npm build", "go vet", "go test"}, gates); d != "" {
		t.Errorf("gates (-want +got):\n%s", d)
	}
	if a.Depends.Runner != "go test" {
		t.Errorf("runner = %q", a.Depends.Runner)
	}
}

func TestSplitTarget(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][2]string{
		"Makefile:test":              {"Makefile", "test"},
		"web/package.json:test:unit": {"web/package.json", "test:unit"},
		"Makefile":                   {"Makefile", ""},
	} {
		f, n := SplitTarget(in)
		if f != want[0] || n != want[1] {
			t.Errorf("SplitTarget(%q) = %q, %q", in, f, n)
		}
	}
}

func TestAnalyzeWorkdirOutside(t *testing.T) {
	t.Parallel()
	a := Analyze(repo(map[string]string{"Makefile": "test:\n\tgo test ./...\n"}), "make test", "../elsewhere")
	if a.Workdir != "." || len(a.Problems) == 0 || !strings.Contains(a.Problems[0], "outside the repository") {
		t.Errorf("workdir %q problems %q", a.Workdir, a.Problems)
	}
	a = Analyze(repo(map[string]string{"Makefile": "test:\n\tcd ../.. && make x\n"}), "make test && cat ../../etc/x", ".")
	for _, f := range a.Depends.Files {
		if strings.HasPrefix(f, "..") {
			t.Errorf("a dependency outside the repository: %q", f)
		}
	}
}

// A Makefile whose targets each run every other target many times is
// followed within a bounded amount of work.
func TestAnalyzeBounded(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "t%d:\n", i)
		for j := 0; j < 40; j++ {
			fmt.Fprintf(&b, "\tmake t%d\n", j)
		}
	}
	fmt.Fprintf(&b, "test:\n")
	for j := 0; j < 40; j++ {
		fmt.Fprintf(&b, "\tmake t%d\n", j)
	}
	start := time.Now()
	a := Analyze(repo(map[string]string{"Makefile": b.String()}), "make test", ".")
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %s", d)
	}
	found := false
	for _, p := range a.Problems {
		if strings.HasPrefix(p, "stopped following after") {
			found = true
		}
	}
	if !found {
		t.Errorf("problems = %q", a.Problems)
	}
	if len(a.Steps) > maxVisits {
		t.Errorf("%d steps", len(a.Steps))
	}
}

// Without the repository, the command alone still names the files it
// depends on: where its runners keep their scripts.
func TestAnalyzeCommandOnly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cmd  string
		deps Depends
	}{
		{"nice -n 10 make test", Depends{Files: []string{"Makefile"}, Targets: []string{"Makefile:test"}}},
		{"cd sub && timeout 10m make -C api check lint", Depends{Files: []string{"sub/api/Makefile"}, Targets: []string{"sub/api/Makefile:check", "sub/api/Makefile:lint"}}},
		{"make", Depends{Files: []string{"Makefile"}}},
		{"env -u CI just test", Depends{Files: []string{"justfile"}, Targets: []string{"justfile:test"}}},
		{"npm test", Depends{Files: []string{"package.json"}, Targets: []string{"package.json:test"}}},
		{"cd web && npm run test:unit -- --ci", Depends{Files: []string{"web/package.json"}, Targets: []string{"web/package.json:test:unit"}}},
		{"composer test", Depends{Files: []string{"composer.json"}, Targets: []string{"composer.json:test"}}},
		{"uv run pytest", Depends{Runner: "pytest"}},
		{"go test ./...", Depends{Runner: "go test"}},
	}
	for _, tc := range tests {
		a := Analyze(nil, tc.cmd, ".")
		if d := cmp.Diff(tc.deps, a.Depends); d != "" {
			t.Errorf("Analyze(nil, %q) depends (-want +got):\n%s", tc.cmd, d)
		}
	}
}
