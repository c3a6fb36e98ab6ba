package judge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/testreport"
)

// fixDiff changes only code: an honest fix.
const fixDiff = `diff --git a/calc/calc.go b/calc/calc.go
index 1111111..2222222 100644
--- a/calc/calc.go
+++ b/calc/calc.go
@@ -1,5 +1,8 @@
 package calc
 
 func Div(a, b int) (int, error) {
+	if b == 0 {
+		return 0, ErrZero
+	}
 	return a / b, nil
 }
`

// skipDiff skips the failing test: a critical regression.
const skipDiff = `diff --git a/calc/calc_test.go b/calc/calc_test.go
index 1111111..2222222 100644
--- a/calc/calc_test.go
+++ b/calc/calc_test.go
@@ -3,4 +3,5 @@ package calc
 import "testing"
 
 func TestDivByZero(t *testing.T) {
+	t.Skip("later")
 	if _, err := Div(1, 0); err == nil {
`

// swallowDiff hides an error: a high regression.
const swallowDiff = `diff --git a/calc/calc.go b/calc/calc.go
index 1111111..2222222 100644
--- a/calc/calc.go
+++ b/calc/calc.go
@@ -1,6 +1,7 @@
 package calc
 
 func Load(p string) error {
 	err := read(p)
-	return err
+	_ = err
+	return nil
 }
`

// messyDiff works but leaves debug prints, a TODO and a long line.
var messyDiff = `diff --git a/calc/calc.go b/calc/calc.go
index 1111111..2222222 100644
--- a/calc/calc.go
+++ b/calc/calc.go
@@ -1,5 +1,9 @@
 package calc
 
 func Div(a, b int) (int, error) {
+	fmt.Println("debug", a, b)
+	// TODO: handle negative numbers
+	// x := a % b
+	var message = "` + strings.Repeat("x", 170) + `"
 	return a / b, nil
 }
`

func summary(total, passed, failed int, passing, failing []string) testreport.Summary {
	return testreport.Summary{Known: true, Runner: "go", Total: total, Passed: passed, Failed: failed, Passing: passing, Failing: failing}
}

func TestScore(t *testing.T) {
	t.Parallel()
	base := summary(10, 8, 2, nil, nil)
	baseNamed := summary(4, 2, 2, []string{"TestA", "TestB"}, []string{"TestC", "TestD"})
	tests := []struct {
		name  string
		in    loop.JudgeInput
		want  loop.Breakdown
		score float64
	}{
		{
			name: "honest fix that passes",
			in: loop.JudgeInput{
				BaseDiff: fixDiff, Baseline: loop.BaselineMetrics{Check: loop.CheckResult{Tests: base}},
				Check: loop.CheckResult{Passed: true, Tests: summary(10, 10, 0, nil, nil)},
				Agent: loop.AgentResult{Turns: 12, Duration: 3 * time.Minute, CostUSD: 0.4},
			},
			want:  loop.Breakdown{Validation: 100, Completeness: 100, Correctness: 100, Readability: 100, Efficiency: 100},
			score: 100,
		},
		{
			name: "passed but flaky",
			in: loop.JudgeInput{
				BaseDiff: fixDiff, Baseline: loop.BaselineMetrics{Check: loop.CheckResult{Tests: base}},
				Check: loop.CheckResult{Passed: true, Flaky: []string{"TestNet"}, Tests: summary(10, 10, 0, nil, nil)},
			},
			want:  loop.Breakdown{Validation: 75, Completeness: 100, Correctness: 100, Readability: 100, Efficiency: 100},
			score: 92.5,
		},
		{
			name: "passed by skipping the failing test",
			in: loop.JudgeInput{
				BaseDiff: skipDiff, Baseline: loop.BaselineMetrics{Check: loop.CheckResult{Tests: base}},
				Check: loop.CheckResult{Passed: true, Tests: testreport.Summary{Known: true, Total: 10, Passed: 8, Skipped: 2}},
			},
			want:  loop.Breakdown{Validation: 0, Completeness: 100, Correctness: 0, Readability: 100, Efficiency: 100},
			score: 45,
		},
		{
			name: "passed while swallowing an error",
			in: loop.JudgeInput{
				BaseDiff: swallowDiff, Baseline: loop.BaselineMetrics{Check: loop.CheckResult{Tests: base}},
				Check: loop.CheckResult{Passed: true, Tests: summary(10, 10, 0, nil, nil)},
			},
			want:  loop.Breakdown{Validation: 75, Completeness: 100, Correctness: 85, Readability: 100, Efficiency: 100},
			score: 88.8,
		},
		{
			name: "half of the failing tests fixed, one passing test broken",
			in: loop.JudgeInput{
				BaseDiff: fixDiff, Baseline: loop.BaselineMetrics{Check: loop.CheckResult{Tests: baseNamed}},
				Check: loop.CheckResult{ExitCode: 1, Tests: summary(4, 2, 2, []string{"TestA", "TestC"}, []string{"TestB", "TestD"})},
			},
			want:  loop.Breakdown{Validation: 0, Completeness: 50, Correctness: 80, Readability: 100, Efficiency: 100},
			score: 52.5,
		},
		{
			name: "failing count trend without names",
			in: loop.JudgeInput{
				BaseDiff: fixDiff, Baseline: loop.BaselineMetrics{Check: loop.CheckResult{Tests: summary(10, 6, 4, nil, nil)}},
				Check: loop.CheckResult{ExitCode: 1, Tests: summary(10, 7, 3, nil, nil)},
			},
			want:  loop.Breakdown{Validation: 0, Completeness: 25, Correctness: 100, Readability: 100, Efficiency: 100},
			score: 51.3,
		},
		{
			name: "messy diff and an expensive agent",
			in: loop.JudgeInput{
				BaseDiff: messyDiff, Baseline: loop.BaselineMetrics{Check: loop.CheckResult{Tests: base}},
				Check: loop.CheckResult{Passed: true, Tests: summary(10, 10, 0, nil, nil)},
				Agent: loop.AgentResult{Turns: 150, Duration: 2 * time.Hour, CostUSD: 20},
			},
			// one long line (-5), one debug print (-10), one commented-out
			// line (-5), one TODO (-5); effort 0 of its 40 points.
			want:  loop.Breakdown{Validation: 100, Completeness: 100, Correctness: 100, Readability: 75, Efficiency: 60},
			score: 93.5,
		},
		{
			name: "unknown counts and a failing check",
			in: loop.JudgeInput{
				BaseDiff: fixDiff,
				Check:    loop.CheckResult{ExitCode: 2},
			},
			want:  loop.Breakdown{Validation: 0, Completeness: 0, Correctness: 100, Readability: 100, Efficiency: 100},
			score: 45,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			j := New(Options{})
			v, err := j.Assess(context.Background(), tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, v.Breakdown); d != "" {
				t.Errorf("breakdown (-want +got):\n%s\n%s", d, strings.Join(v.Explain, "\n"))
			}
			if v.Score != tt.score {
				t.Errorf("score = %v, want %v", v.Score, tt.score)
			}
			if len(v.Explain) != 5 {
				t.Fatalf("Explain has %d lines, want one per part:\n%s", len(v.Explain), strings.Join(v.Explain, "\n"))
			}
			for i, part := range []string{"validation", "completeness", "correctness", "readability", "efficiency"} {
				if !strings.HasPrefix(v.Explain[i], part+" ") {
					t.Errorf("Explain[%d] = %q, want it to start with %q", i, v.Explain[i], part)
				}
			}
			again, _ := j.Assess(context.Background(), tt.in)
			if d := cmp.Diff(v, again); d != "" {
				t.Errorf("Assess is not deterministic:\n%s", d)
			}
		})
	}
}

func TestAssessExplainGolden(t *testing.T) {
	t.Parallel()
	in := loop.JudgeInput{
		Iteration: 3, Criterion: "go test ./...",
		BaseDiff: swallowDiff + skipDiff, StepDiff: skipDiff,
		Baseline: loop.BaselineMetrics{Check: loop.CheckResult{Tests: summary(4, 2, 2, []string{"TestA", "TestB"}, []string{"TestC", "TestDivByZero"})}},
		Check:    loop.CheckResult{Passed: true, Tests: summary(4, 3, 0, []string{"TestA", "TestB", "TestC"}, nil)},
		Agent:    loop.AgentResult{Turns: 40, Duration: 12 * time.Minute, CostUSD: 1.75},
	}
	v, err := New(Options{}).Assess(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "score %s\n", num(v.Score))
	for _, e := range v.Explain {
		fmt.Fprintln(&b, e)
	}
	for _, r := range v.Regressions {
		fmt.Fprintf(&b, "%s %s: %s\n", r.Severity, r.Type, r.Summary)
		for _, e := range r.Evidence {
			fmt.Fprintf(&b, "  %s:%d %s\n", e.Path, e.Line, e.Text)
		}
		fmt.Fprintf(&b, "  baseline %v, current %v\n", r.Baseline, r.Current)
	}
	golden(t, "TestAssessExplain.golden", b.String())
}

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, d)
	}
}

func TestAssessLatenciesAndCancel(t *testing.T) {
	t.Parallel()
	j := New(Options{})
	for i := 0; i < 3; i++ {
		if _, err := j.Assess(context.Background(), loop.JudgeInput{Iteration: i + 1, BaseDiff: fixDiff}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := j.Assess(ctx, loop.JudgeInput{Iteration: 4, BaseDiff: fixDiff}); err == nil {
		t.Error("Assess with a cancelled context returned no error")
	}
	lat := j.Latencies()
	if len(lat) != 4 {
		t.Fatalf("Latencies() has %d entries, want 4", len(lat))
	}
	for i, d := range lat {
		if d <= 0 {
			t.Errorf("latency %d = %v, want > 0", i, d)
		}
	}
	lat[0] = 0
	if j.Latencies()[0] == 0 {
		t.Error("Latencies returned its internal slice")
	}
}

func TestAssessPartialDiff(t *testing.T) {
	t.Parallel()
	// A diff cut off inside a hunk still gets judged on what was read.
	cut := strings.TrimSuffix(skipDiff, " \tif _, err := Div(1, 0); err == nil {\n")
	v, err := New(Options{}).Assess(context.Background(), loop.JudgeInput{BaseDiff: cut})
	if err != nil {
		t.Fatal(err)
	}
	if !v.Critical() {
		t.Errorf("the skip in the readable part was missed: %+v", v.Regressions)
	}
	if last := v.Explain[len(v.Explain)-1]; !strings.Contains(last, "partly readable") {
		t.Errorf("no note about the unreadable diff: %q", last)
	}
}
