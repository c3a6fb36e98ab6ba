package report

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/aiwg/agent-loop/internal/schemas"
	"github.com/aiwg/agent-loop/internal/state"
)

// storyProblems lists what makes a state a story that could not happen:
// a stop reason that does not match the status or the history, a last
// iteration that is not the state's, a best iteration that is rejected or
// not the top, totals that do not add up, a score whose parts do not make
// it, a Δ the report would compute against a rejected iteration.
func storyProblems(st *state.State) []string {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	h := st.Harness
	hist := st.IterationHistory
	n := len(hist)

	// The numbering, the last iteration and the totals.
	var tokens int64
	var cost, secs float64
	for i, it := range hist {
		if it.Iteration != i+1 {
			bad("iteration %d is number %d in the history", it.Iteration, i+1)
		}
		if t := it.TestResults; t != nil && t.Passed+t.Failed+t.Skipped != t.Total {
			bad("iteration %d: %d passed + %d failed + %d skipped != %d tests", it.Iteration, t.Passed, t.Failed, t.Skipped, t.Total)
		}
		if t := it.TestResults; t != nil && it.CheckPassed && t.Failed > 0 {
			bad("iteration %d passed the check with %d failing tests", it.Iteration, t.Failed)
		}
		if t := it.TestResults; t != nil && len(it.Failing) != t.Failed {
			bad("iteration %d: %d failing tests named, %d counted", it.Iteration, len(it.Failing), t.Failed)
		}
		tokens += it.Tokens
		cost += it.CostUSD
		secs += it.DurationSeconds
		var sum float64
		b, w := it.QualityBreakdown, state.ScoreWeights
		sum = (b.Validation*w.Validation + b.Completeness*w.Completeness + b.Correctness*w.Correctness + b.Readability*w.Readability + b.Efficiency*w.Efficiency) / 100
		if math.Abs(sum-it.QualityScore) > 0.05 {
			bad("iteration %d: the score parts add up to %.2f, the score is %.1f", it.Iteration, sum, it.QualityScore)
		}
		critical := false
		for _, ev := range st.RegressionEvents {
			if ev.Iteration == it.Iteration && ev.Severity == "critical" && (ev.HumanDecision == nil || *ev.HumanDecision != "approve") {
				critical = true
			}
		}
		heldFail := it.HeldOut != nil && it.HeldOut.Verdict == state.HeldOutFail
		if it.Rejected != (critical || heldFail) {
			bad("iteration %d: rejected=%v but critical regression=%v, held-out failure=%v", it.Iteration, it.Rejected, critical, heldFail)
		}
		if it.FromStart != nil {
			c := it.FromStart
			add, del := 0, 0
			for _, p := range c.Paths {
				add += p.Additions
				del += p.Deletions
			}
			if len(c.Paths) > 0 && (len(c.Paths) != c.Files || add != c.Additions || del != c.Deletions) {
				bad("iteration %d: the change from the start says %d files +%d −%d, its files add up to %d +%d −%d", it.Iteration, c.Files, c.Additions, c.Deletions, len(c.Paths), add, del)
			}
		}
	}
	for _, ev := range st.RegressionEvents {
		if ev.Iteration < 1 || ev.Iteration > n {
			bad("a regression event names iteration %d of %d", ev.Iteration, n)
		}
	}
	if st.Iteration != n {
		bad("the state says iteration %d, the history ends at %d", st.Iteration, n)
	}
	m := st.Metrics
	if m.TotalIterations != n || m.TotalTokens != tokens || math.Abs(m.TotalCostUSD-cost) > 1e-6 || m.TotalDurationSeconds != int(secs+0.5) {
		bad("metrics say %d iterations, %d tokens, $%.4f, %ds; the history adds up to %d, %d, $%.4f, %.0fs",
			m.TotalIterations, m.TotalTokens, m.TotalCostUSD, m.TotalDurationSeconds, n, tokens, cost, secs)
	}
	if b := h.Baseline; b != nil && b.Known && (b.Passing+b.Failed > b.Total || len(b.Failing) != b.Failed) {
		bad("the baseline says %d passing + %d failing of %d, naming %d", b.Passing, b.Failed, b.Total, len(b.Failing))
	}
	if b := h.Baseline; b != nil && b.Passed && n > 0 {
		bad("the check passed on the starting commit, yet %d iterations ran", n)
	}

	// An accepted pass ends the loop: none before the last.
	for _, it := range hist[:max(n-1, 0)] {
		if it.CheckPassed && !it.Rejected {
			bad("iteration %d passed the check and was accepted, but the loop went on to iteration %d", it.Iteration, n)
		}
	}

	// The stop reason against the status and the history.
	var last *state.IterationEntry
	if n > 0 {
		last = &hist[n-1]
	}
	kinds := map[state.Status][]state.StopKind{
		state.Completed: {state.StopPassed, state.StopAlreadyPassing},
		state.Failed:    {state.StopMaxIterations, state.StopTimeout, state.StopBudget, state.StopStalled, state.StopCheatPolicy, state.StopAgentError, state.StopPublishFailed},
		state.Paused:    {state.StopHumanGate, state.StopCancelled, state.StopPaused},
		state.Aborted:   {state.StopAborted},
		state.Crashed:   {state.StopCrashed},
		state.Running:   {""},
	}
	if !slices.Contains(kinds[st.Status], h.StopKind) {
		bad("status %s cannot have stopped for %q", st.Status, h.StopKind)
	}
	switch h.StopKind {
	case state.StopPassed:
		if last == nil || !last.CheckPassed || last.Rejected {
			bad("stopped because the check passed, but the last iteration did not pass it")
		}
	case state.StopAlreadyPassing:
		if n != 0 || h.Baseline == nil || !h.Baseline.Passed {
			bad("stopped because the check already passed, but the baseline failed or iterations ran")
		}
	case state.StopMaxIterations:
		if n != st.Configuration.MaxIterations {
			bad("stopped at the limit of %d iterations after %d", st.Configuration.MaxIterations, n)
		}
	case state.StopStalled:
		if n < 3 || !(same(hist[n-3:], func(e state.IterationEntry) string { return e.Fingerprint }) ||
			same(hist[n-2:], func(e state.IterationEntry) string { return fmt.Sprint(e.FilesChanged == 0) }) && hist[n-1].FilesChanged == 0) {
			bad("stalled, but the last iterations neither failed the same way three times nor changed nothing twice")
		}
	case state.StopHumanGate:
		g := h.PendingGate
		if g == nil || g.Decision != "" || last == nil || g.Iteration != last.Iteration || !last.Rejected || h.Spec.Policy.Regression != "human-gate" {
			bad("waiting at a human gate needs an undecided gate on the last, rejected iteration under the human-gate policy")
		}
	case state.StopTimeout:
		if st.Configuration.TimeoutMinutes == nil || secs > float64(*st.Configuration.TimeoutMinutes*60) {
			bad("stopped on the time limit, but there is none or the iterations took longer than it")
		}
	}
	if h.PendingGate != nil && h.StopKind != state.StopHumanGate {
		bad("a gate is pending but the loop stopped for %q", h.StopKind)
	}
	for _, r := range h.Resumes {
		if r.AfterIteration >= n {
			bad("resumed after iteration %d of %d", r.AfterIteration, n)
		}
	}

	// The best iteration: not rejected, a pass before a failure, then the
	// top score; the branch head holds its tree.
	best := st.BestIteration
	var cands []state.IterationEntry
	for _, it := range hist {
		if !it.Rejected {
			cands = append(cands, it)
		}
	}
	switch {
	case len(cands) == 0 && best != nil:
		bad("every iteration was rejected, yet iteration %d is the best", best.Iteration)
	case len(cands) > 0 && best == nil:
		bad("no best iteration, though %d were not rejected", len(cands))
	case best != nil:
		var b *state.IterationEntry
		for i := range hist {
			if hist[i].Iteration == best.Iteration {
				b = &hist[i]
			}
		}
		if b == nil {
			bad("the best iteration %d is not in the history", best.Iteration)
			break
		}
		if b.Rejected {
			bad("the best iteration %d was rejected", b.Iteration)
		}
		if b.QualityScore != best.QualityScore || b.Commit != best.Commit {
			bad("the best iteration says score %.1f commit %.7s, the history %.1f %.7s", best.QualityScore, best.Commit, b.QualityScore, b.Commit)
		}
		for _, c := range cands {
			if c.CheckPassed && !b.CheckPassed || c.CheckPassed == b.CheckPassed && c.QualityScore > b.QualityScore {
				bad("iteration %d (score %.0f, pass %v) beats the best iteration %d (score %.0f, pass %v)", c.Iteration, c.QualityScore, c.CheckPassed, b.Iteration, b.QualityScore, b.CheckPassed)
			}
		}
		if st.Status.Terminal() && last != nil {
			switch {
			case b.Iteration == last.Iteration && h.HeadSHA != b.Commit:
				bad("the best is the last iteration, but the branch head %.7s is not its commit", h.HeadSHA)
			case b.Iteration != last.Iteration && (h.HeadSHA == "" || slices.ContainsFunc(hist, func(e state.IterationEntry) bool { return e.Commit == h.HeadSHA })):
				bad("the best (%d) is not the last iteration, so the branch must end with a commit restoring its tree, not %.7s", b.Iteration, h.HeadSHA)
			}
		}
	}

	// The report's Δ is against the best score so far, never a rejected
	// iteration's.
	f := newFacts(st)
	top := math.Inf(-1)
	for _, r := range f.iterations() {
		switch {
		case r.it.Rejected && r.delta != "—":
			bad("the report gives rejected iteration %d a Δ of %s", r.n, r.delta)
		case !r.it.Rejected && math.IsInf(top, -1) && r.delta != "first":
			bad("iteration %d is the first scored, the report says Δ %s", r.n, r.delta)
		case !r.it.Rejected && !math.IsInf(top, -1) && r.delta != signed(r.it.QualityScore-top):
			bad("iteration %d: Δ should be %s on the best so far, the report says %s", r.n, signed(r.it.QualityScore-top), r.delta)
		}
		if !r.it.Rejected {
			top = math.Max(top, r.it.QualityScore)
		}
	}
	return errs
}

func same(list []state.IterationEntry, key func(state.IterationEntry) string) bool {
	for _, e := range list[1:] {
		if key(e) == "" || key(e) != key(list[0]) {
			return false
		}
	}
	return len(list) > 1
}

// TestStoriesAreConsistent checks that every golden tells a story that
// could happen, and that each state validates against the shared schema.
func TestStoriesAreConsistent(t *testing.T) {
	for _, s := range append(stories(), hostileStory()) {
		t.Run(s.name, func(t *testing.T) {
			for _, p := range storyProblems(s.st) {
				t.Error(p)
			}
			if !schemas.Available() {
				t.Skipf("the shared schemas are not at %s", schemas.Dir())
			}
			b, err := json.Marshal(s.st)
			if err != nil {
				t.Fatal(err)
			}
			if err := schemas.Validate(schemas.LoopState, b); err != nil {
				t.Errorf("the state does not validate against %s: %v", schemas.LoopState, err)
			}
		})
	}
}

// TestConsistencyCheckCatches shows the check failing on stories that
// could not happen, the old golden's among them (it stopped on iteration 2
// and then showed an iteration 3, and gave a rejected iteration a score).
func TestConsistencyCheckCatches(t *testing.T) {
	byName := map[string]*state.State{}
	for _, s := range stories() {
		byName[s.name] = s.st
	}
	cases := []struct {
		name  string
		story string
		spoil func(st *state.State)
		want  string
	}{
		{"stopped on 2, shows 3", "cheat_then_fixed", func(st *state.State) {
			extra := st.IterationHistory[1]
			extra.Iteration, extra.CheckPassed, extra.Commit = 3, false, sha('3')
			st.IterationHistory = append(st.IterationHistory, extra)
			st.Iteration = 3
		}, "but the loop went on to iteration 3"},
		{"rejected best", "cheat_then_fixed", func(st *state.State) {
			st.BestIteration.Iteration, st.BestIteration.QualityScore, st.BestIteration.Commit = 1, 35, st.IterationHistory[0].Commit
		}, "was rejected"},
		{"parts do not add up", "first_try", func(st *state.State) {
			st.IterationHistory[0].QualityBreakdown.Readability = 100
		}, "the score parts add up to"},
		{"completed but failing", "first_try", func(st *state.State) {
			st.IterationHistory[0].CheckPassed = false
		}, "the last iteration did not pass it"},
		{"best not on the branch", "best_not_last", func(st *state.State) {
			st.Harness.HeadSHA = st.IterationHistory[2].Commit
		}, "restoring its tree"},
		{"a lower best", "max_iterations_closest", func(st *state.State) {
			st.BestIteration.Iteration, st.BestIteration.QualityScore, st.BestIteration.Commit = 3, 61, st.IterationHistory[2].Commit
		}, "beats the best iteration"},
		{"stall that is not one", "stalled", func(st *state.State) {
			st.IterationHistory[2].Fingerprint = "other"
		}, "stalled, but"},
		{"limit not reached", "max_iterations_closest", func(st *state.State) {
			st.Configuration.MaxIterations = 10
		}, "stopped at the limit of 10"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := byName[c.story]
			// A deep copy through JSON: the spoiling must not leak.
			b, _ := json.Marshal(st)
			var cp state.State
			if err := json.Unmarshal(b, &cp); err != nil {
				t.Fatal(err)
			}
			c.spoil(&cp)
			probs := storyProblems(&cp)
			if !slices.ContainsFunc(probs, func(p string) bool { return strings.Contains(p, c.want) }) {
				t.Errorf("the consistency check missed %q; it found %q", c.want, probs)
			}
		})
	}
}
