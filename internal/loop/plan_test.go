package loop_test

import (
	"context"
	"testing"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/spec"
	"github.com/aiwg/agent-loop/internal/state"
)

// fakePlanner runs the criterion once through the engine's Verifier and
// answers Settle with a scripted held-out result; it records what the
// engine handed it.
type fakePlanner struct {
	v        loop.Verifier
	heldOut  *loop.HeldOut
	trees    []loop.Trees
	previous []*loop.CheckResult
}

func (p *fakePlanner) Check(ctx context.Context, req loop.PlanRequest) (loop.PlanOutcome, error) {
	p.previous = append(p.previous, req.Previous)
	res, err := p.v.Check(ctx, loop.CheckRequest{Command: "check", Dir: req.WorkTree, Env: req.Env, Output: req.Output})
	return loop.PlanOutcome{Check: res, Runs: []state.CriterionRun{loop.RunOf(state.RunFull, "the criterion", "check", res, 0)}}, err
}

func (p *fakePlanner) Settle(ctx context.Context, req loop.PlanRequest, o *loop.PlanOutcome, trees loop.Trees) error {
	p.trees = append(p.trees, trees)
	if p.heldOut != nil {
		ho := *p.heldOut
		o.HeldOut = &ho
		o.Runs = append(o.Runs, ho.Runs...)
	}
	return nil
}

// judgeOfHeldOut is the judge's rule for a held-out result, as far as the
// engine cares: a failure is critical unless the task asks for test edits
// (then high).
type judgeOfHeldOut struct{ fakeJudge }

func (j judgeOfHeldOut) Assess(ctx context.Context, in loop.JudgeInput) (loop.Verdict, error) {
	v, _ := j.fakeJudge.Assess(ctx, in)
	if h := in.HeldOut; h != nil && h.Verdict == loop.HeldOutFailed {
		sev := "critical"
		if h.TaskEditsTests {
			sev = "high"
		}
		v.Regressions = append(v.Regressions, loop.Regression{Type: "validation_bypass", Severity: sev, Summary: "the original tests fail",
			Evidence: []loop.Evidence{{Path: "calc_test.go", Text: "edited"}, {Text: "held-out run: TestB fails"}}})
	}
	return v, nil
}

func failedHeldOut(taskEditsTests bool) *loop.HeldOut {
	return &loop.HeldOut{
		Verdict: loop.HeldOutFailed, Reason: "with the original test files the criterion fails", TaskEditsTests: taskEditsTests,
		Changes: []loop.HeldOutChange{{Path: "calc_test.go", Kind: "test", Reason: "Go test file", Action: "restored"}},
		Run:     &loop.CheckResult{ExitCode: 1},
		Runs: []state.CriterionRun{{Purpose: state.RunHeldOut, Why: "the change touches test files"},
			{Purpose: state.RunHeldOutControl, Passed: true}, {Purpose: state.RunHeldOutAgain}},
	}
}

// TestPlannerHeldOutDecides drives the engine with a planner whose held-out
// check fails: the iteration is rejected and its runs and verdict are in
// the state; when the task asks for test edits, the regression policy
// decides (human-gate and fail hold the iteration, revert and warn keep it
// with the warning).
func TestPlannerHeldOutDecides(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		heldOut  *loop.HeldOut
		policy   string
		status   state.Status
		rejected bool
		verdict  string
	}{
		{"held-out failure: rejected", failedHeldOut(false), "revert", state.Failed, true, state.HeldOutFail},
		{"task edits tests, revert: kept with a warning", failedHeldOut(true), "revert", state.Completed, false, state.HeldOutWarning},
		{"task edits tests, warn: kept with a warning", failedHeldOut(true), "warn", state.Completed, false, state.HeldOutWarning},
		{"task edits tests, human-gate: a person decides", failedHeldOut(true), "human-gate", state.Paused, true, state.HeldOutWarning},
		{"task edits tests, fail: the loop stops", failedHeldOut(true), "fail", state.Failed, true, state.HeldOutWarning},
		{"held-out pass: completed, edits reported", &loop.HeldOut{Verdict: loop.HeldOutPassed,
			Changes: []loop.HeldOutChange{{Path: "calc_test.go", Kind: "test", Action: "restored"}},
			Runs:    []state.CriterionRun{{Purpose: state.RunHeldOut, Passed: true}}}, "revert", state.Completed, false, state.HeldOutPass},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, repo := newRepo(t)
			agent := agentFunc(func(ctx context.Context, req loop.AgentRequest) (loop.AgentResult, error) {
				writeFile(req.Dir, "fixed", "yes\n")
				return loop.AgentResult{}, nil
			})
			e, st := newEngine(t, dir, repo, agent, judgeOfHeldOut{}, func(sp *spec.Spec) {
				sp.Policy.Regression = tc.policy
				sp.Limits.MaxIterations = 1
			})
			p := &fakePlanner{v: e.Verifier, heldOut: tc.heldOut}
			e.Planner = p
			out, err := e.Run(context.Background(), st)
			if err != nil {
				t.Fatal(err)
			}
			got := validState(t, e.Dir)
			if out.Status != tc.status {
				t.Fatalf("status %s (%s), want %s", out.Status, out.StopReason, tc.status)
			}
			it := got.IterationHistory[0]
			if it.Rejected != tc.rejected {
				t.Errorf("rejected = %v, want %v", it.Rejected, tc.rejected)
			}
			if it.HeldOut == nil || it.HeldOut.Verdict != tc.verdict || len(it.HeldOut.Edits) != 1 || it.HeldOut.Edits[0].Path != "calc_test.go" {
				t.Fatalf("held_out = %+v, want verdict %s with the edit of calc_test.go", it.HeldOut, tc.verdict)
			}
			if want := 1 + len(tc.heldOut.Runs); len(it.CriterionRuns) != want || it.CriterionRuns[0].Purpose != state.RunFull {
				t.Errorf("criterion runs %+v, want the full run and the held-out check's %d", it.CriterionRuns, len(tc.heldOut.Runs))
			}
			// Settle got the starting commit and the tree Stage wrote.
			if len(p.trees) != 1 || p.trees[0].Base != got.Harness.BaseSHA || p.trees[0].Iteration == "" || p.trees[0].Iteration == p.trees[0].Base {
				t.Errorf("trees %+v, base %s", p.trees, got.Harness.BaseSHA)
			}
			// The first check's previous is the baseline's.
			if len(p.previous) != 1 || p.previous[0] == nil || p.previous[0].Passed || len(p.previous[0].Tests.Failing) != 1 {
				t.Errorf("previous %+v, want the baseline's failing check", p.previous)
			}
		})
	}
}
