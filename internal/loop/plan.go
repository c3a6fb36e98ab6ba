package loop

import (
	"context"
	"io"
	"time"

	"github.com/aiwg/agent-loop/internal/state"
)

// Planner decides and runs the criterion runs of one iteration, so that
// verification is earned and costs little: the tests that failed last time
// first, the full criterion only when they pass, the held-out check (the
// original tests against the agent's product code) only when the change
// touches anything but product source, a confirmation only on a pass.
// internal/verify.Plan is the real one; without a Planner the engine runs
// the criterion once per iteration through its Verifier.
//
// The engine calls Check after the agent, stages the work tree, then calls
// Settle with the starting commit and the staged tree.
type Planner interface {
	// Check runs the criterion (focused first when it can) and returns
	// the result that counts.
	Check(ctx context.Context, req PlanRequest) (PlanOutcome, error)
	// Settle finishes an iteration whose check passed, once its change is
	// staged: the held-out check and the confirmation runs. It changes out
	// in place (a flaky confirmation fails the check; the held-out result
	// and its runs are added). An iteration that failed is left as it is.
	Settle(ctx context.Context, req PlanRequest, out *PlanOutcome, trees Trees) error
}

// PlanRequest is one iteration's check.
type PlanRequest struct {
	Iteration int
	// WorkTree is the repository's work tree; Workdir the criterion's
	// directory relative to it.
	WorkTree string
	Workdir  string
	Env      []string
	Timeout  time.Duration
	// Output receives every run's output (the iteration log and, unless
	// quiet, the terminal).
	Output io.Writer
	// Previous is the previous iteration's check (the baseline's for
	// iteration 1): its failing tests are the ones a focused run names.
	Previous *CheckResult
}

// PlanOutcome is what an iteration's runs decided.
type PlanOutcome struct {
	// Check is the result that counts: the full run (with a flaky
	// confirmation folded in), or the focused run that failed.
	Check CheckResult
	// Focused is true when Check is a focused run: only the previously
	// failing tests ran (Check.Tests.Known is then false; the failing
	// names are kept).
	Focused bool
	// HeldOut is the held-out check (nil when it did not run).
	HeldOut *HeldOut
	// Runs lists every criterion run, in order, with why it ran.
	Runs []state.CriterionRun
}

// Trees names the starting commit and the iteration's staged tree in the
// object store the harness trusts (the held-out tree is built from them).
type Trees struct{ Base, Iteration string }

// StagedTreer is implemented by repos that name the tree their last Stage
// wrote (the held-out check reads it). Without it the held-out check
// cannot run.
type StagedTreer interface {
	StagedTree() string
}

// HeldOutVerdict is the held-out check's answer.
type HeldOutVerdict string

// The held-out verdicts.
const (
	// HeldOutNotNeeded: the change touches product source only.
	HeldOutNotNeeded HeldOutVerdict = "not-needed"
	// HeldOutPassed: the original tests pass with the iteration's product
	// source alone; its other edits are reported and veto nothing.
	HeldOutPassed HeldOutVerdict = "passed"
	// HeldOutFailed: the iteration's pass depended on its edits to tests
	// or their machinery.
	HeldOutFailed HeldOutVerdict = "failed"
	// HeldOutInconclusive: the iteration's own tree did not pass in the
	// scratch setup either, or the held-out run flipped: no veto.
	HeldOutInconclusive HeldOutVerdict = "inconclusive"
)

// HeldOut is what the held-out check found for one iteration: the
// criterion re-run in a scratch tree whose product source is the
// iteration's and whose everything else is the starting commit's.
type HeldOut struct {
	Verdict HeldOutVerdict
	// Reason says the verdict in a sentence for the report.
	Reason string
	// Changes are the paths where the held-out tree differs from the
	// iteration's: what the agent changed besides product source.
	Changes []HeldOutChange
	// Run is the run on the held-out tree (the last one when it ran
	// twice); Control the run on the iteration's own tree in the same
	// scratch setup (only after a held-out failure).
	Run     *CheckResult
	Control *CheckResult
	// Runs are the held-out check's criterion runs.
	Runs []state.CriterionRun
	// TaskEditsTests: the task asks for changes to tests, so a failure is
	// a warning for a person and the regression policy decides.
	TaskEditsTests bool
}

// HeldOutChange is one path the held-out tree takes from the starting
// commit (or merges section by section).
type HeldOutChange struct {
	Path string
	// Kind is the path's class ("test", "fixture", "config", "criterion",
	// "ci", "dotfile", "docs", "new-at-root", "shadow", "dependency",
	// "mixed", "inline-tests"); Reason says why, in words.
	Kind   string
	Reason string
	// Action: "restored" (the iteration changed it), "put back" (the
	// iteration deleted it), "removed" (the iteration added it), "merged"
	// (its runner sections or inline tests are the starting commit's).
	Action string
}

// Warning reports a held-out failure that is a warning for a person, not
// a veto: the task itself asks to change tests.
func (h *HeldOut) Warning() bool {
	return h != nil && h.Verdict == HeldOutFailed && h.TaskEditsTests
}

// RunOf is the report's record of one criterion run: its purpose (a
// state.Run* constant), why it ran, the command, and what it measured
// (elapsed counts when the runner did not time the run).
func RunOf(purpose, why, cmd string, res CheckResult, elapsed time.Duration) state.CriterionRun {
	d := res.Duration
	if d == 0 {
		d = elapsed
	}
	r := state.CriterionRun{Purpose: purpose, Why: why, Command: cmd, Passed: res.Passed, ExitCode: res.ExitCode,
		Seconds: float64(d.Milliseconds()) / 1000}
	if res.Tests.Known {
		r.Tests = res.Tests.Total
	}
	return r
}
