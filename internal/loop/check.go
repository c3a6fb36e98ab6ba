package loop

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/aiwg/agent-loop/internal/state"
)

// The check of an iteration: the planner's runs (or one run of the
// criterion without a planner), and what they found written into the
// state for the report.

// checkTimeout bounds one run of the criterion: the check timeout, and
// never past the wall deadline (minus half the publish margin).
func (e *Engine) checkTimeout(deadline time.Time) time.Duration {
	timeout := e.spec.Limits.CheckTimeout
	if !deadline.IsZero() {
		if left := deadline.Sub(e.now()) - e.Tuning.PublishMargin/2; timeout == 0 || left < timeout {
			timeout = max(left, 30*time.Second)
		}
	}
	return timeout
}

// checkOutput opens iteration n's log for a check's output, teed to the
// terminal unless quiet; the returned function flushes and closes it.
func (e *Engine) checkOutput(n int) (io.Writer, func(), error) {
	logf, err := e.openLog(n)
	if err != nil {
		return nil, nil, err
	}
	out, end := e.teeAgent(logf)
	return out, func() { end(); _ = logf.Close() }, nil
}

// runCheck runs the completion command once (iteration 0 is the
// baseline, which is always one full run).
func (e *Engine) runCheck(ctx context.Context, n int, deadline time.Time) (CheckResult, error) {
	out, end, err := e.checkOutput(n)
	if err != nil {
		return CheckResult{}, err
	}
	defer end()
	fmt.Fprintf(out, "\n--- completion check: %s\n", e.spec.Criterion.Command)
	res, err := e.Verifier.Check(ctx, CheckRequest{
		Command: e.spec.Criterion.Command, Dir: filepath.Join(e.Repo.Root(), e.spec.Criterion.Workdir),
		Env: e.Env, Timeout: e.checkTimeout(deadline), Output: out,
	})
	if err != nil {
		return res, fmt.Errorf("running the completion check: %w", err)
	}
	return res, nil
}

// planRequest is iteration n's request to the planner. The previous check
// is the last one of an iteration that was kept (a rejected iteration's
// pass says nothing of the tree the agent goes on from), else the
// baseline's.
func (e *Engine) planRequest(deadline time.Time) PlanRequest {
	prev := e.baseline.Check
	for i := len(e.records) - 1; i >= 0; i-- {
		if !e.records[i].Rejected {
			prev = e.records[i].Check
			break
		}
	}
	return PlanRequest{
		WorkTree: e.Repo.Root(), Workdir: e.spec.Criterion.Workdir, Env: e.Env,
		Timeout: e.checkTimeout(deadline), Previous: &prev,
	}
}

// checkIteration runs iteration n's check after the agent: the planner's
// first runs, or the criterion once.
func (e *Engine) checkIteration(ctx context.Context, n int, deadline time.Time) (PlanOutcome, error) {
	if e.Planner == nil {
		start := e.now()
		res, err := e.runCheck(ctx, n, deadline)
		if err != nil {
			return PlanOutcome{}, err
		}
		run := RunOf(state.RunFull, "the criterion", e.spec.Criterion.Command, res, e.now().Sub(start))
		return PlanOutcome{Check: res, Runs: []state.CriterionRun{run}}, nil
	}
	out, end, err := e.checkOutput(n)
	if err != nil {
		return PlanOutcome{}, err
	}
	defer end()
	req := e.planRequest(deadline)
	req.Iteration, req.Output = n, out
	po, err := e.Planner.Check(ctx, req)
	if err != nil {
		return po, fmt.Errorf("running the completion check: %w", err)
	}
	return po, nil
}

// settleIteration runs the planner's runs that need the staged change: the
// held-out check (from the starting commit and the staged tree, both in
// the object store the harness trusts) and the confirmation. ran says
// whether it ran anything (a failed check needs nothing more).
func (e *Engine) settleIteration(ctx context.Context, n int, deadline time.Time, po *PlanOutcome) (ran bool, err error) {
	if e.Planner == nil || !po.Check.Passed || po.Focused {
		return false, nil
	}
	trees := Trees{Base: e.st.Harness.BaseSHA}
	if st, ok := e.Repo.(StagedTreer); ok {
		trees.Iteration = st.StagedTree()
	}
	if trees.Iteration == "" {
		e.logf("iteration %d: the repository does not name its staged tree: the held-out check cannot run", n)
	}
	out, end, err := e.checkOutput(n)
	if err != nil {
		return true, err
	}
	defer end()
	req := e.planRequest(deadline)
	req.Iteration, req.Output = n, out
	if err := e.Planner.Settle(ctx, req, po, trees); err != nil {
		return true, fmt.Errorf("checking iteration %d further: %w", n, err)
	}
	return true, nil
}

// gated reports an iteration held for the regression policy although no
// critical regression vetoes it: the original tests fail without the
// agent's test edits and the task asks for test edits. Under human-gate a
// person decides; under fail the loop stops; revert and warn keep it, a
// warning in the report.
func (e *Engine) gated(h *HeldOut) bool {
	if !h.Warning() {
		return false
	}
	return e.spec.Policy.Regression == "human-gate" || e.spec.Policy.Regression == "fail"
}

// heldOutNote is the log's words for a held-out result ("" when none ran).
func heldOutNote(h *HeldOut) string {
	if h == nil || h.Verdict == HeldOutNotNeeded {
		return ""
	}
	switch {
	case h.Warning():
		return "; held-out check: the original tests fail (the task asks to change tests: a warning for a person)"
	case h.Verdict == HeldOutFailed:
		return "; held-out check: the original tests fail with this product code"
	case h.Verdict == HeldOutPassed:
		return "; held-out check: the original tests pass"
	}
	return "; held-out check inconclusive"
}

// runsNote says how many criterion runs an iteration cost.
func runsNote(runs []state.CriterionRun) string {
	if len(runs) <= 1 {
		return ""
	}
	var kinds []string
	for _, r := range runs {
		kinds = append(kinds, r.Purpose)
	}
	return fmt.Sprintf(" [%d criterion runs: %s]", len(runs), strings.Join(kinds, ", "))
}

// heldOutEntry is the report's record of a held-out check: the verdict in
// the state's words, the tests that fail with the originals restored, and
// the agent's edits to non-source files in plain words (with what the
// diff shows of each, from the judge's signals on that path).
func heldOutEntry(h *HeldOut, v Verdict) *state.HeldOut {
	if h == nil || h.Verdict == HeldOutNotNeeded {
		return nil
	}
	out := &state.HeldOut{Reason: h.Reason}
	switch {
	case h.Warning():
		out.Verdict = state.HeldOutWarning
	case h.Verdict == HeldOutFailed:
		out.Verdict = state.HeldOutFail
	case h.Verdict == HeldOutPassed:
		out.Verdict = state.HeldOutPass
	default:
		out.Verdict = state.HeldOutInconclusive
	}
	if h.Verdict == HeldOutFailed && h.Run != nil {
		out.Failed = capList(h.Run.Tests.Failing, 20)
		if h.Run.Tests.Known {
			out.FailedCount = h.Run.Tests.Failed
		}
	}
	shown := map[string][]string{}
	for _, r := range v.Regressions {
		for _, ev := range r.Evidence {
			if ev.Path == "" {
				continue
			}
			w := regressionWords[r.Type]
			if w == "" {
				w = strings.ReplaceAll(r.Type, "_", " ")
			}
			if !slices.Contains(shown[ev.Path], w) {
				shown[ev.Path] = append(shown[ev.Path], w)
			}
		}
	}
	for _, c := range h.Changes {
		change := actionWords(c) + " (" + kindWords(c.Kind) + ")"
		if s := shown[c.Path]; len(s) > 0 {
			change += ": " + strings.Join(s, ", ")
		}
		out.Edits = append(out.Edits, state.TestEdit{Path: c.Path, Change: change})
	}
	return out
}

var regressionWords = map[string]string{
	"test_deletion": "removed tests", "test_skipping": "added a skip", "assertion_weakening": "weakened an assertion",
	"error_suppression": "silenced an error", "validation_bypass": "changed what the check runs",
	"feature_removal": "removed code", "coverage_regression": "lowered coverage",
}

func actionWords(c HeldOutChange) string {
	switch c.Action {
	case "restored":
		return "changed"
	case "put back":
		return "deleted"
	case "removed":
		return "added"
	case "merged":
		if c.Kind == "inline-tests" {
			return "changed the tests inside it"
		}
		return "changed its runner sections"
	}
	return c.Action
}

func kindWords(kind string) string {
	if w, ok := map[string]string{
		"test": "a test file", "fixture": "test data", "config": "test or runner configuration",
		"criterion": "a file the check runs", "ci": "a CI workflow", "dotfile": "a dotfile", "docs": "documentation",
		"new-at-root": "a new file at the root", "shadow": "named like a tool the check runs",
		"dependency": "third-party code", "mixed": "a manifest with runner sections", "inline-tests": "source with tests inside",
	}[kind]; ok {
		return w
	}
	return kind
}
