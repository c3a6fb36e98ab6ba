package judge

import (
	"testing"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/testreport"
)

func rec(it int, passed bool, score float64, passing int, regs ...loop.Regression) loop.Record {
	return loop.Record{
		Iteration: it,
		Check:     loop.CheckResult{Passed: passed, Tests: testreport.Summary{Known: true, Passed: passing, Total: 10}},
		Verdict:   loop.Verdict{Score: score, Regressions: regs},
	}
}

var (
	critical = loop.Regression{Type: TestDeletion, Severity: SeverityCritical, Summary: "1 test deleted: TestX"}
	high     = loop.Regression{Type: ErrorSuppression, Severity: SeverityHigh, Summary: "1 error swallowed"}
)

func TestBest(t *testing.T) {
	t.Parallel()
	rejected := rec(3, true, 99, 10)
	rejected.Rejected = true
	tests := []struct {
		name       string
		history    []loop.Record
		want       int
		wantReason string
	}{
		{
			name:    "empty history",
			history: nil,
			want:    0,
		},
		{
			name:    "only critical iterations",
			history: []loop.Record{rec(1, true, 90, 10, critical), rejected},
			want:    0,
		},
		{
			name:       "a single clean iteration",
			history:    []loop.Record{rec(1, false, 40, 7)},
			want:       1,
			wantReason: "Iteration 1: did not pass the check but had no regression (score 40)",
		},
		{
			name:       "passed beats a higher-scoring failure",
			history:    []loop.Record{rec(1, false, 70, 9), rec(2, true, 60, 10)},
			want:       2,
			wantReason: "Iteration 2: passed the check with no regression and is the only iteration that passed (score 60)",
		},
		{
			name:       "never a critical iteration, even with the best score",
			history:    []loop.Record{rec(1, true, 80, 10), rec(2, true, 99, 10, critical), rejected},
			want:       1,
			wantReason: "Iteration 1: passed the check with no regression and is the only iteration without a critical regression (score 80); 2 iterations excluded for critical regressions",
		},
		{
			name:       "higher score among passes",
			history:    []loop.Record{rec(1, true, 80, 10), rec(2, true, 87, 10), rec(3, false, 95, 9)},
			want:       2,
			wantReason: "Iteration 2: passed the check with no regression and the highest score (87)",
		},
		{
			name:       "non-critical regressions still qualify",
			history:    []loop.Record{rec(1, true, 70, 10, high), rec(2, false, 90, 9)},
			want:       1,
			wantReason: "Iteration 1: passed the check with 1 regression, none critical, and is the only iteration that passed (score 70)",
		},
		{
			name:       "tie on score: more passing tests",
			history:    []loop.Record{rec(1, false, 50, 6), rec(2, false, 50, 8)},
			want:       2,
			wantReason: "Iteration 2: did not pass the check but had no regression and, tied on score (50), the most passing tests (8)",
		},
		{
			name:       "full tie: the earlier iteration",
			history:    []loop.Record{rec(1, false, 50, 6), rec(2, false, 50, 6)},
			want:       1,
			wantReason: "Iteration 1: did not pass the check but had no regression and is the earliest of the iterations tied at score 50",
		},
	}
	j := New(Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, reason := j.Best(tt.history)
			if got != tt.want {
				t.Errorf("Best = %d, want %d (%s)", got, tt.want, reason)
			}
			if reason != tt.wantReason {
				t.Errorf("reason = %q\nwant     %q", reason, tt.wantReason)
			}
		})
	}
}
