package report

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/spec"
	"github.com/aiwg/agent-loop/internal/state"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, got string) {
	t.Helper()
	path := filepath.Join("testdata", t.Name()+".golden")
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
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

func sampleState() *state.State {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	done := t0.Add(3 * time.Minute)
	rej := "success"
	return &state.State{
		Version: "2.0.0", LoopID: "ralph-fix-the-parser-0a1b2c3d", Status: state.Completed, Iteration: 3,
		Task: "fix the failing parser tests", CompletionCriteria: "go test ./...", StartedAt: t0, CompletedAt: &done,
		Configuration: state.Configuration{MaxIterations: 10},
		Metrics:       state.Metrics{TotalIterations: 3, TotalTokens: 45210, TotalCostUSD: 0.1234, TotalDurationSeconds: 171},
		BestIteration: &state.BestIteration{Iteration: 2, QualityScore: 91, SelectionReason: "Iteration 2: passed the check with no regression and the highest score (91).", Commit: "2222222222222222222222222222222222222222"},
		IterationHistory: []state.IterationEntry{
			{Iteration: 1, QualityScore: 12, QualityDelta: 12, CheckPassed: true, Rejected: true, TestResults: &state.TestResults{Total: 3, Passed: 3}, DurationSeconds: 40, FilesChanged: 1, Deletions: 12, Tokens: 15000, CostUSD: 0.04, Commit: "1111111111111111111111111111111111111111"},
			{Iteration: 2, QualityScore: 91, QualityDelta: 79, CheckPassed: true, TestResults: &state.TestResults{Total: 4, Passed: 4}, DurationSeconds: 65, FilesChanged: 2, Additions: 9, Deletions: 3, Tokens: 20000, CostUSD: 0.05, Commit: "2222222222222222222222222222222222222222",
				Explain: []string{"validation 100: the check passed and was confirmed by a second run", "completeness 100: the 1 failing test now passes"}},
			{Iteration: 3, QualityScore: 70, QualityDelta: -21, CheckPassed: false, TestResults: &state.TestResults{Total: 4, Passed: 3, Failed: 1}, DurationSeconds: 66, FilesChanged: 1, Additions: 2, Deletions: 2, Tokens: 10210, CostUSD: 0.0334, CostEstimated: true, Commit: "3333333333333333333333333333333333333333"},
		},
		ReinforcementHistory: []state.ReinforcementChange{{Iteration: 2, FromLevel: "MINIMAL", ToLevel: "AGGRESSIVE", Reason: "Regression detected in iteration 1 (test_deletion)"}},
		RegressionEvents:     []state.RegressionEvent{{Iteration: 1, RegressionType: "test_deletion", Severity: "critical", RecoveryOutcome: &rej, Details: state.RegressionDetails{Summary: "TestParseEmpty deleted from parser_test.go"}}},
		Harness: state.Harness{Provider: "claude", AgentVersion: "2.1.330", Branch: "agent-loop/ralph-fix-the-parser-0a1b2c3d", OriginalBranch: "main",
			BaseSHA: "0000000000000000000000000000000000000000",
			Spec: spec.Spec{Task: "fix the failing parser tests", Criterion: spec.Criterion{Command: "go test ./...", Workdir: ".", Source: spec.SourceInferred, Confidence: "high",
				Evidence: []string{"ci-config: .github/workflows/ci.yml job test, step 'Test' runs `go test ./...`", "manifest: go.mod declares module example.com/parser"}},
				Limits: spec.Limits{MaxIterations: 10}},
			StopReason: "the completion check passed on iteration 2",
			Baseline:   &state.BaselineCheck{Passed: false, ExitCode: 1, Known: true, Total: 4, Passing: 3, Failed: 1, Seconds: 1.5}},
	}
}

func TestRenderCLI(t *testing.T) {
	golden(t, Render(sampleState(), Options{Target: CLI}))
}

func TestRenderPR(t *testing.T) {
	golden(t, Render(sampleState(), Options{Target: PR, Marker: "<!-- agent-loop:sticky loop=ralph-fix-the-parser-0a1b2c3d -->", CommitURL: "https://github.com/o/r/commit/%s"}))
}

func TestRenderPausedWithResume(t *testing.T) {
	st := sampleState()
	st.Status = state.Paused
	st.BestIteration = nil
	st.IterationHistory = st.IterationHistory[:1]
	st.Harness.StopReason = "interrupted by a signal during iteration 2"
	st.Harness.PushErrors = []string{"2026-11-22T10:01:00Z: push failed: non-fast-forward"}
	golden(t, Render(st, Options{Target: CLI, Resume: "`agent-loop resume ralph-fix-the-parser-0a1b2c3d`"}))
}
