package verify

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aiwg/agent-loop/internal/heldout"
	"github.com/aiwg/agent-loop/internal/loop"
)

// TestBenchmarkCriterionTime is the benchmark of issue 12 (run it with
// AGENT_LOOP_BENCH=1; AGENT_LOOP_BENCH_SUITE_SECONDS sets the suite's
// length, 30 by default): a generated Go repository whose suite takes about
// that long with one failing test, and a five-iteration loop fixed on
// iteration 5. It adds up the criterion time of Plan (focused runs first,
// the full criterion only when they pass, confirmation only on a pass,
// held-out only when the change touches tests) and of today's engine (the
// full criterion every iteration, one confirmation on the pass), both
// against the full-suite time measured in the same run. Two variants: the
// fix touches product source only, or it also adds a test (the held-out
// run then stands in for the confirmation).
func TestBenchmarkCriterionTime(t *testing.T) {
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
	for _, variant := range []string{"fix only", "fix and a new test"} {
		t.Run(variant, func(t *testing.T) {
			dir := generateSlowRepo(t, suite)
			crit := heldout.CriterionDeps{Command: "go test -count=1 ./...", Runner: "go"}
			env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
			sh := &Shell{}
			ctx := context.Background()
			run := func() loop.CheckResult {
				res, err := sh.Check(ctx, loop.CheckRequest{Command: crit.Command, Dir: dir, Env: env})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			// Warm the build cache so that both policies pay the same
			// compile cost, then measure the full suite (the baseline).
			run()
			baseline := run()
			if baseline.Passed || len(baseline.Tests.Failing) != 1 {
				t.Fatalf("the baseline should fail exactly one test: %+v\n%s", baseline.Tests, baseline.Output)
			}
			full := baseline.Duration

			// Today's engine: the full criterion after every iteration, one
			// confirmation on the pass.
			var today time.Duration = full
			checker := &heldout.Checker{Objects: &heldout.Git{Dir: dir}, Runner: sh, ScratchRoot: t.TempDir()}
			plan := &Plan{Runner: sh, Criterion: crit, ConfirmRuns: 1, HeldOut: checker}
			var planned time.Duration = full
			var runs []string
			prev := baseline
			base := strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD"))
			for it := 1; it <= 5; it++ {
				agentIteration(t, dir, it, variant == "fix and a new test")
				// Today.
				res := run()
				today += res.Duration
				if res.Passed {
					today += run().Duration
				}
				// Plan.
				req := Request{Iteration: it, WorkTree: dir, Env: env, Previous: &prev}
				o, err := plan.Check(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				gitOut(t, dir, "add", "-A")
				tree := strings.TrimSpace(gitOut(t, dir, "write-tree"))
				if err := plan.Settle(ctx, req, &o, Trees{Base: base, Iteration: tree}, false); err != nil {
					t.Fatal(err)
				}
				for _, r := range o.Runs {
					planned += r.Duration
					runs = append(runs, fmt.Sprintf("%d:%s(%.1fs)", it, r.Kind, r.Duration.Seconds()))
				}
				if (it == 5) != o.Check.Passed {
					t.Fatalf("iteration %d: passed=%v", it, o.Check.Passed)
				}
				if o.HeldOut != nil && o.HeldOut.Verdict == heldout.Failed {
					t.Fatalf("iteration %d: the honest fix was held out as a failure: %s", it, o.HeldOut.Reason)
				}
				prev = o.Check
			}
			t.Logf("suite %.1fs; runs of the plan: %s", full.Seconds(), strings.Join(runs, " "))
			fmt.Printf("criterion time, %s: full suite %.1fs; today's engine %.1fs = %.2f full runs; Plan %.1fs = %.2f full runs (target <= 3.5)\n",
				variant, full.Seconds(), today.Seconds(), today.Seconds()/full.Seconds(), planned.Seconds(), planned.Seconds()/full.Seconds())
			if planned.Seconds()/full.Seconds() > 3.5 {
				t.Errorf("Plan spent %.2f full-suite runs, want at most 3.5", planned.Seconds()/full.Seconds())
			}
		})
	}
}

// generateSlowRepo writes a Go module whose suite takes about suite seconds
// (sixty tests sleeping in one package, so that go test cannot run them in
// parallel) with one failing test, and commits it.
func generateSlowRepo(t *testing.T, suite float64) string {
	t.Helper()
	dir := t.TempDir()
	const n = 60
	per := time.Duration(suite / n * float64(time.Second))
	var tests strings.Builder
	tests.WriteString("package slow\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&tests, "func TestSlow%02d(t *testing.T) {\n\ttime.Sleep(%d * time.Microsecond)\n\tif Double(%d) != %d {\n\t\tt.Fatal(\"Double\")\n\t}\n}\n\n", i, per.Microseconds(), i, 2*i)
	}
	tests.WriteString("func TestTarget(t *testing.T) {\n\tif got := Target(20); got != 210 {\n\t\tt.Fatalf(\"Target(20) = %d, want 210\", got)\n\t}\n}\n")
	files := map[string]string{
		"go.mod":        "module example.com/slow\n\ngo 1.21\n",
		"slow.go":       "package slow\n\n// Double doubles.\nfunc Double(x int) int { return 2 * x }\n",
		"target.go":     targetSource(0),
		"slow_test.go":  tests.String(),
		"README.md":     "A generated repository for agent-loop's criterion-time benchmark.\n",
		".gitignore":    "",
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
	gitOut(t, dir, "init", "-q", "-b", "main")
	gitOut(t, dir, "add", "-A")
	gitOut(t, dir, "commit", "-q", "-m", "generated")
	return dir
}

// targetSource is the product code of attempt n: wrong until attempt 5.
func targetSource(attempt int) string {
	body := fmt.Sprintf("n * (n + 1) / 2 + %d", attempt+1)
	if attempt >= 5 {
		body = "n * (n + 1) / 2"
	}
	return "package slow\n\n// Target sums 1..n.\nfunc Target(n int) int { return " + body + " }\n"
}

// agentIteration is the scripted agent: a wrong attempt on iterations 1-4,
// the fix on 5 (with a new test when withTest is set).
func agentIteration(t *testing.T, dir string, it int, withTest bool) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "target.go"), []byte(targetSource(it)), 0o644); err != nil {
		t.Fatal(err)
	}
	if it == 5 && withTest {
		test := "package slow\n\nimport \"testing\"\n\nfunc TestTargetZero(t *testing.T) {\n\tif Target(0) != 0 {\n\t\tt.Fatal(\"Target(0)\")\n\t}\n}\n"
		if err := os.WriteFile(filepath.Join(dir, "target_test.go"), []byte(test), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
