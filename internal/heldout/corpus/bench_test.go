package corpus_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aiwg/agent-loop/internal/sandbox/sandboxtest"
	"github.com/aiwg/agent-loop/internal/state"
)

// TestBenchmarkLoopCriterionTime is the benchmark of issue 12 through the
// binary (run it with AGENT_LOOP_BENCH=1; AGENT_LOOP_BENCH_SUITE_SECONDS
// sets the suite's length, 30 by default): a generated Go repository whose
// suite takes about that long with one failing test, and a loop of
// `agent-loop run` whose agent gets the fix right on iteration 5. It adds up
// the time of every criterion run the loop made (the baseline, and each
// iteration's runs as the state records them) and divides it by the time
// of one full run of the suite measured in the same run, beside the same
// loop under the engine's policy from before the held-out check (the full
// criterion every iteration, a confirmation on the pass: the test-only
// switch AGENT_LOOP_TEST_WEAKEN=plan). Two variants: the fix touches product
// source only, or it also adds a test (the held-out run then stands in for
// the confirmation).
func TestBenchmarkLoopCriterionTime(t *testing.T) {
	if os.Getenv("AGENT_LOOP_BENCH") != "1" {
		t.Skip("a benchmark: set AGENT_LOOP_BENCH=1")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not installed")
	}
	suite := 30.0
	if s := os.Getenv("AGENT_LOOP_BENCH_SUITE_SECONDS"); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v <= 0 {
			t.Fatalf("AGENT_LOOP_BENCH_SUITE_SECONDS=%q: want a positive number of seconds", s)
		}
		suite = v
	}
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOPROXY=off",
		"GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.invalid", "GIT_COMMITTER_NAME=bench",
		"GIT_COMMITTER_EMAIL=bench@example.invalid", "GIT_CONFIG_NOSYSTEM=1", "CI=true")
	const criterion = "go test -count=1 ./..."
	for _, variant := range []string{"fix only", "fix and a new test"} {
		t.Run(variant, func(t *testing.T) {
			withTest := variant == "fix and a new test"
			// The full suite, measured in this run: once to warm the build
			// cache (every loop below starts warm), once to time it.
			ref := generateSlowRepo(t, suite)
			timeSuite := func() float64 {
				cmd := exec.Command("sh", "-c", criterion)
				cmd.Dir, cmd.Env = ref, env
				start := time.Now()
				out, err := cmd.CombinedOutput()
				var exit *exec.ExitError
				if err != nil && !errors.As(err, &exit) {
					t.Fatalf("%s: %v\n%s", criterion, err, out)
				}
				if !bytes.Contains(out, []byte("--- FAIL: TestTarget")) {
					t.Fatalf("the generated suite should fail TestTarget:\n%s", out)
				}
				return time.Since(start).Seconds()
			}
			timeSuite()
			full := timeSuite()
			loops := map[string]loopCost{}
			for _, policy := range []string{"plan", "before"} {
				loops[policy] = benchLoop(t, suite, env, criterion, withTest, policy == "before")
			}
			p, b := loops["plan"], loops["before"]
			t.Logf("plan: %s\nbefore: %s", p.runs, b.runs)
			fmt.Printf("criterion time through the binary, %s: full suite %.1fs; the loop %.1fs = %.2f full runs (%d runs); "+
				"the same loop with the engine's policy before the held-out check %.1fs = %.2f full runs (%d runs) (target <= 3.5)\n",
				variant, full, p.seconds, p.seconds/full, len(p.runs), b.seconds, b.seconds/full, len(b.runs))
			fmt.Printf("runs of the loop, %s: %s\n", variant, strings.Join(p.runs, " "))
			if p.seconds/full > 3.5 {
				t.Errorf("the loop spent %.2f full-suite runs on its criterion, want at most 3.5", p.seconds/full)
			}
		})
	}
}

// loopCost is the criterion time of one loop, and its runs
// ("iteration:purpose(seconds)").
type loopCost struct {
	seconds float64
	runs    []string
}

// benchLoop runs a five-iteration loop of the binary on a fresh generated
// repository (its build cache is the warm one) and adds up its criterion
// time from the state.
func benchLoop(t *testing.T, suite float64, env []string, criterion string, withTest, before bool) loopCost {
	t.Helper()
	dir := generateSlowRepo(t, suite)
	work := sandboxtest.TempDir(t)
	// The agent: attempt n of target.go (right from attempt 5 on), with a
	// new test on attempt 5 in the second variant.
	script := fmt.Sprintf("set -e\nn=$AGENT_LOOP_ITERATION\ncp %s/attempt-$n.go target.go\n", shq(work))
	if withTest {
		script += fmt.Sprintf("if [ \"$n\" -ge 5 ]; then cp %s target_test.go; fi\n", shq(filepath.Join(work, "new_test.go")))
	}
	files := map[string]string{
		"agent.sh":    script,
		"new_test.go": "package slow\n\nimport \"testing\"\n\nfunc TestTargetZero(t *testing.T) {\n\tif Target(0) != 0 {\n\t\tt.Fatal(\"Target(0)\")\n\t}\n}\n",
	}
	for n := 1; n <= 5; n++ {
		files[fmt.Sprintf("attempt-%d.go", n)] = targetSource(n)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(work, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	id := "ralph-bench-0000000c"
	cmd := exec.Command("agent-loop", "run", "--provider", "command", "--agent-command", "sh "+shq(filepath.Join(work, "agent.sh")),
		"--completion", criterion, "--max-iterations", "5", "--loop-id", id, "--quiet", "make TestTarget pass")
	cmd.Dir = dir
	cmd.Env = env
	if before {
		cmd.Env = append(append([]string(nil), env...), "AGENT_LOOP_TEST_WEAKEN=plan")
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("agent-loop run: %v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, ".aiwg", "ralph", "loops", id, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st state.State
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if st.Status != state.Completed || len(st.IterationHistory) != 5 || st.Harness.Baseline == nil {
		t.Fatalf("want a loop completed on iteration 5, got %s after %d iterations\n%s", st.Status, len(st.IterationHistory), out)
	}
	c := loopCost{seconds: st.Harness.Baseline.Seconds, runs: []string{fmt.Sprintf("0:baseline(%.1fs)", st.Harness.Baseline.Seconds)}}
	for _, it := range st.IterationHistory {
		for _, r := range it.CriterionRuns {
			c.seconds += r.Seconds
			c.runs = append(c.runs, fmt.Sprintf("%d:%s(%.1fs)", it.Iteration, r.Purpose, r.Seconds))
		}
	}
	return c
}

// generateSlowRepo writes a Go module whose suite takes about suite seconds
// (sixty tests that sleep, in one package, so that go test cannot run them
// in parallel) with one failing test, and commits it.
func generateSlowRepo(t *testing.T, suite float64) string {
	t.Helper()
	dir := sandboxtest.TempDir(t)
	const n = 60
	per := time.Duration(suite / n * float64(time.Second))
	var tests strings.Builder
	tests.WriteString("package slow\n\nimport (\n\t\"strconv\"\n\t\"testing\"\n\t\"time\"\n)\n\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&tests, "func TestSlow%02d(t *testing.T) {\n\ttime.Sleep(%d * time.Microsecond)\n\tif Double(%d) != %d {\n\t\tt.Fatal(\"Double\")\n\t}\n}\n\n", i, per.Microseconds(), i, 2*i)
	}
	// TestTarget's cases fail one fewer with each wrong attempt: each
	// iteration fails differently (no stall), and only TestTarget fails.
	tests.WriteString("func TestTarget(t *testing.T) {\n\tfor n := 10; n <= 50; n += 10 {\n\t\tt.Run(strconv.Itoa(n), func(t *testing.T) {\n" +
		"\t\t\tif got, want := Target(n), n*(n+1)/2; got != want {\n\t\t\t\tt.Fatalf(\"Target(%d) = %d, want %d\", n, got, want)\n\t\t\t}\n\t\t})\n\t}\n}\n")
	files := map[string]string{
		"go.mod":        "module example.com/slow\n\ngo 1.21\n",
		"slow.go":       "package slow\n\n// Double doubles.\nfunc Double(x int) int { return 2 * x }\n",
		"target.go":     targetSource(0),
		"slow_test.go":  tests.String(),
		"README.md":     "A generated repository for agent-loop's criterion-time benchmark.\n",
		"doc/notes.txt": "notes\n",
	}
	for p, body := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cgit(t, dir, "init", "-q", "-b", "main")
	cgit(t, dir, "add", "-A")
	cgit(t, dir, "commit", "-q", "-m", "generated")
	return dir
}

// targetSource is the product code of attempt n: until attempt 5 each
// attempt gets one more range of inputs right (a branch added, none
// undone: the judge sees progress, neither a stall nor an oscillation),
// from attempt 5 on all of them.
func targetSource(attempt int) string {
	if attempt >= 5 {
		return "package slow\n\n// Target sums 1..n.\nfunc Target(n int) int { return n * (n + 1) / 2 }\n"
	}
	var b strings.Builder
	b.WriteString("package slow\n\n// Target sums 1..n.\nfunc Target(n int) int {\n")
	for i := 1; i <= attempt; i++ {
		fmt.Fprintf(&b, "\tif n <= %d {\n\t\treturn n * (n + 1) / 2\n\t}\n", 10*i)
	}
	b.WriteString("\treturn 0\n}\n")
	return b.String()
}
