package report

import (
	"strings"
	"testing"
	"time"

	"github.com/aiwg/agent-loop/internal/spec"
	"github.com/aiwg/agent-loop/internal/state"
)

// legacyState is the old golden's state, as the engine of today writes it
// (no change from the start, no stop kind), with the details the issue
// found leaking: a criterion "given by the user" under task-verb, a
// recovery outcome, a reinforcement change, an estimated cost, one
// regression recorded twice.
func legacyState() *state.State {
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

// TestNoLeakedInternals renders a state of today's engine in every medium:
// none of the internals the issue lists reach a reader, a regression is
// listed once, and a rejected iteration has no score and no Δ.
func TestNoLeakedInternals(t *testing.T) {
	t.Parallel()
	st := legacyState()
	st.Harness.Spec.Criterion.Evidence = []string{"task-verb: --completion: given by the user"}
	st.Harness.Provider = "scripted"
	st.RegressionEvents = append(st.RegressionEvents, st.RegressionEvents[0])
	for _, target := range []Target{PR, PRBody, Summary, CLI} {
		got := Render(st, Options{Target: target, CommitURL: "https://github.com/o/r/commit/%s"})
		for _, leak := range []string{"task-verb", "recovery:", "MINIMAL", "AGGRESSIVE", "with scripted", "0.0334*", "test_deletion", "(critical)"} {
			if strings.Contains(got, leak) {
				t.Errorf("%s report leaks %q:\n%s", target, leak, got)
			}
		}
		if target == PR && strings.Count(got, "Iteration 1 was rejected") != 1 {
			t.Errorf("the rejection of iteration 1 is not said exactly once:\n%s", got)
		}
		if target == PR && !strings.Contains(got, "| 1 | ⛔ rejected | 3/3 pass | — |") {
			t.Errorf("the rejected iteration has a score in the table:\n%s", got)
		}
	}
}

// TestRenderEdgeStates: a running loop, a loop with nothing to do, and a
// loop whose every iteration was rejected render without a best iteration
// and say so.
func TestRenderEdgeStates(t *testing.T) {
	t.Parallel()
	running := legacyState()
	running.Status, running.CompletedAt, running.BestIteration = state.Running, nil, nil
	running.IterationHistory = running.IterationHistory[:1]
	running.Harness.StopReason = ""
	nothing := legacyState()
	nothing.IterationHistory, nothing.BestIteration, nothing.RegressionEvents = nil, nil, nil
	nothing.Harness.Baseline.Passed = true
	allRejected := legacyState()
	allRejected.Status, allRejected.BestIteration = state.Failed, nil
	allRejected.IterationHistory = allRejected.IterationHistory[:1]
	allRejected.Harness.StopKind = state.StopMaxIterations
	cases := []struct {
		name string
		st   *state.State
		want []string
	}{
		{"running", running, []string{"🔄 agent-loop running: 1 iteration of at most 10 done", "-\\> …", "updated after every iteration"}},
		{"nothing to do", nothing, []string{"✅ agent-loop completed: the check already passes on the starting commit", "**Change:** none.", "Nothing to merge"}},
		{"all rejected", allRejected, []string{"❌ agent-loop not completed: 1 iteration (the limit)", "nothing to publish", "Nothing to merge: no iteration qualified"}},
	}
	for _, c := range cases {
		got := Render(c.st, Options{Target: PR})
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: the report lacks %q:\n%s", c.name, w, got)
			}
		}
		_ = Render(c.st, Options{Target: CLI})
		_ = Render(c.st, Options{Target: PRBody})
	}
	_ = time.Now
}
