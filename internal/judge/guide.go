package judge

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/aiwg/agent-loop/internal/loop"
)

// Reinforcement levels (seed 004 reinforcement_level).
const (
	LevelOff        = "OFF"
	LevelMinimal    = "MINIMAL"
	LevelStandard   = "STANDARD"
	LevelAggressive = "AGGRESSIVE"
	LevelAdaptive   = "ADAPTIVE"
)

// Escalation thresholds. Iteration numbers are those of the iteration the
// guidance is for. STANDARD from iteration 5 follows seed 004's example
// ("Iteration 5 threshold reached"); AGGRESSIVE from 7 leaves a default
// 10-iteration loop four attempts under the strictest wording.
const (
	StandardFrom   = 5
	AggressiveFrom = 7
	// PlateauWindow iterations whose scores stay within PlateauDelta points
	// of each other are a plateau.
	PlateauWindow = 3
	PlateauDelta  = 5.0
	// stallImprovement is the score gain that counts as progress for the
	// fingerprint stall (smaller changes come from run-to-run effort noise).
	stallImprovement = 1.0
)

var levelRank = map[string]int{LevelMinimal: 1, LevelStandard: 2, LevelAggressive: 3}

// ValidateLevel checks a reinforcement level name (case-insensitive).
func ValidateLevel(s string) error {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case LevelOff, LevelMinimal, LevelStandard, LevelAggressive, LevelAdaptive:
		return nil
	}
	return fmt.Errorf("unknown reinforcement level %q: use one of OFF, MINIMAL, STANDARD, AGGRESSIVE, ADAPTIVE", s)
}

// Guide decides the reinforcement level and prompt paragraphs for the next
// iteration, and whether the loop has stalled. history holds the finished
// iterations, oldest first; current is the guidance the last one ran with.
//
// Escalation: start at Options.Reinforcement (MINIMAL); at least STANDARD
// from iteration 5 and AGGRESSIVE from iteration 7; one level up on a
// plateau (the last 3 iterations, all run at the current level, within 5
// score points); AGGRESSIVE at once after an iteration with a critical or
// high regression; ADAPTIVE when the iterations oscillate (failing tests or
// diffs A, B, A). Levels never go down, except that a regression overrides
// ADAPTIVE. OFF never escalates.
//
// Stall: the same failing fingerprint for Options.StallAfter iterations
// without a score gain of 1 point; Options.EmptyDiffStall empty diffs in a
// row; an oscillation that goes on after an iteration run under ADAPTIVE.
func (j *Judge) Guide(history []loop.Record, current loop.Guidance) loop.Guidance {
	n := len(history)
	cur := strings.ToUpper(current.Level)
	if cur == "" && n > 0 {
		cur = strings.ToUpper(history[n-1].Level)
	}
	if n == 0 || cur == "" || ValidateLevel(cur) != nil {
		// Before iteration 1 the level is the configured starting level.
		cur = j.opts.Reinforcement
	}
	next := 1
	if n > 0 {
		next = history[n-1].Iteration + 1
	}
	g := loop.Guidance{Level: cur}
	if n > 0 && history[n-1].Check.Passed && !history[n-1].Rejected && !history[n-1].Verdict.Critical() {
		// Done: nothing to push for and nothing stalled.
		g.Prompt = j.prompt(g.Level, history, guideState{})
		return g
	}
	osc, oscWhy := oscillating(history)
	oscRepeat := osc && n > 0 && (strings.EqualFold(history[n-1].Level, LevelAdaptive) || (j.off(cur) && oscillatingBefore(history)))
	g.Stall = j.stall(history)
	if g.Stall == "" && oscRepeat {
		g.Stall = fmt.Sprintf("Stalled: the iterations keep oscillating (%s) even after an iteration with ADAPTIVE guidance.", oscWhy)
	}
	if j.off(cur) {
		g.Level = LevelOff
		if !strings.EqualFold(current.Level, LevelOff) {
			g.Reason = "Reinforcement is OFF"
		}
		return g
	}
	if n == 0 && !strings.EqualFold(current.Level, cur) {
		g.Reason = "Loop initialization"
	}
	st := guideState{}
	level := cur
	var reason string
	last := loop.Record{}
	if n > 0 {
		last = history[n-1]
	}
	switch {
	case n > 0 && regressed(last):
		level = LevelAggressive
		reason = fmt.Sprintf("Regression detected in iteration %d (%s)", last.Iteration, strings.Join(regressionTypes(last), ", "))
		st.regression = true
	case osc:
		st.oscillation = oscWhy
		if cur != LevelAdaptive {
			level = LevelAdaptive
			reason = "Oscillation detected: " + oscWhy
		}
	case cur == LevelAdaptive:
		// ADAPTIVE stays until a regression.
	default:
		if next >= AggressiveFrom && levelRank[level] < levelRank[LevelAggressive] {
			level, reason = LevelAggressive, fmt.Sprintf("Iteration %d threshold reached", AggressiveFrom)
		} else if next >= StandardFrom && levelRank[level] < levelRank[LevelStandard] {
			level, reason = LevelStandard, fmt.Sprintf("Iteration %d threshold reached", StandardFrom)
		}
		if scores, ok := plateau(history, cur); ok {
			st.plateau = scores
			if up := escalate(level); up != level {
				level = up
				reason = fmt.Sprintf("Quality plateau detected (%d iterations < %s point delta: %s)", PlateauWindow, num(PlateauDelta), scores)
			}
		}
	}
	if level != cur {
		g.Level, g.Reason = level, reason
	}
	g.Prompt = j.prompt(g.Level, history, st)
	return g
}

func (j *Judge) off(cur string) bool {
	return j.opts.Reinforcement == LevelOff || cur == LevelOff
}

func escalate(level string) string {
	switch level {
	case LevelMinimal:
		return LevelStandard
	case LevelStandard:
		return LevelAggressive
	}
	return level
}

// regressed reports an iteration with a critical or high regression.
func regressed(r loop.Record) bool {
	if r.Rejected {
		return true
	}
	for _, g := range r.Verdict.Regressions {
		if g.Severity == SeverityCritical || g.Severity == SeverityHigh {
			return true
		}
	}
	return false
}

func regressionTypes(r loop.Record) []string {
	var out []string
	for _, g := range r.Verdict.Regressions {
		if !slices.Contains(out, g.Type) {
			out = append(out, g.Type)
		}
	}
	if len(out) == 0 {
		out = append(out, "rejected")
	}
	return out
}

// plateau reports the last PlateauWindow iterations, all run at level, whose
// scores stay within PlateauDelta points.
func plateau(h []loop.Record, level string) (string, bool) {
	if len(h) < PlateauWindow {
		return "", false
	}
	w := h[len(h)-PlateauWindow:]
	lo, hi := math.Inf(1), math.Inf(-1)
	var scores []string
	for _, r := range w {
		if r.Check.Passed || (r.Level != "" && !strings.EqualFold(r.Level, level)) {
			return "", false
		}
		lo = math.Min(lo, r.Verdict.Score)
		hi = math.Max(hi, r.Verdict.Score)
		scores = append(scores, num(r.Verdict.Score))
	}
	if hi-lo >= PlateauDelta {
		return "", false
	}
	return strings.Join(scores, ", "), true
}

// oscillating reports the last three iterations going A, B, A: the same
// failing tests in the first and third with others in between, or a diff
// undone and redone.
func oscillating(h []loop.Record) (bool, string) {
	n := len(h)
	if n < 3 {
		return false, ""
	}
	a, b, c := h[n-3], h[n-2], h[n-1]
	if a.Check.Passed || b.Check.Passed || c.Check.Passed {
		return false, ""
	}
	if a.Fingerprint != "" && b.Fingerprint != "" && a.Fingerprint == c.Fingerprint && b.Fingerprint != a.Fingerprint {
		return true, fmt.Sprintf("iterations %d and %d ended with the same failing tests, iteration %d with different ones", a.Iteration, c.Iteration, b.Iteration)
	}
	if a.Stat.Files > 0 && sameStat(a.Stat, c.Stat) && reversedStat(a.Stat, b.Stat) {
		return true, fmt.Sprintf("iteration %d undid the change of iteration %d and iteration %d made it again", b.Iteration, a.Iteration, c.Iteration)
	}
	return false, ""
}

// oscillatingBefore reports an oscillation that ended one iteration earlier.
func oscillatingBefore(h []loop.Record) bool {
	if len(h) < 4 {
		return false
	}
	ok, _ := oscillating(h[:len(h)-1])
	return ok
}

func sameStat(a, b loop.DiffStat) bool {
	return a.Files == b.Files && a.Additions == b.Additions && a.Deletions == b.Deletions && sameSet(a.Paths, b.Paths)
}

func reversedStat(a, b loop.DiffStat) bool {
	return a.Files == b.Files && a.Additions == b.Deletions && a.Deletions == b.Additions && sameSet(a.Paths, b.Paths)
}

func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// stall explains why the loop should stop, or returns "".
func (j *Judge) stall(h []loop.Record) string {
	n := len(h)
	if k := j.opts.EmptyDiffStall; n >= k {
		empty := true
		for _, r := range h[n-k:] {
			if r.Stat.Files != 0 {
				empty = false
				break
			}
		}
		if empty {
			return fmt.Sprintf("Stalled: the agent changed nothing in %d iterations in a row (iterations %d-%d).", k, h[n-k].Iteration, h[n-1].Iteration)
		}
	}
	if k := j.opts.StallAfter; n >= k {
		w := h[n-k:]
		fp := w[0].Fingerprint
		same := fp != ""
		for _, r := range w {
			if r.Fingerprint != fp || r.Check.Passed {
				same = false
				break
			}
		}
		if same {
			first := w[0].Verdict.Score
			bestLater := math.Inf(-1)
			for _, r := range w[1:] {
				bestLater = math.Max(bestLater, r.Verdict.Score)
			}
			if bestLater < first+stallImprovement {
				failing := describeFailing(w[len(w)-1])
				return fmt.Sprintf("Stalled: %s failed the same way for %d iterations in a row (iterations %d-%d, fingerprint %s) with no score improvement (scores %s).",
					failing, k, w[0].Iteration, w[len(w)-1].Iteration, shortFP(fp), scoreList(w))
			}
		}
	}
	return ""
}

func describeFailing(r loop.Record) string {
	if f := r.Check.Tests.Failing; len(f) > 0 {
		return "the check (" + listNames(f, 3) + ")"
	}
	return "the check"
}

func shortFP(fp string) string {
	if len(fp) > 12 {
		return fp[:12]
	}
	return fp
}

func scoreList(rs []loop.Record) string {
	var s []string
	for _, r := range rs {
		s = append(s, num(r.Verdict.Score))
	}
	return strings.Join(s, ", ")
}

// guideState is what the prompt must talk about besides the level.
type guideState struct {
	regression  bool
	oscillation string
	plateau     string
}

// prompt builds the paragraphs for a level.
func (j *Judge) prompt(level string, h []loop.Record, st guideState) []string {
	var last *loop.Record
	if len(h) > 0 {
		last = &h[len(h)-1]
	}
	var p []string
	switch level {
	case LevelOff:
		return nil
	case LevelMinimal:
		p = append(p, "Make the completion command pass by fixing the code under test. Keep the tests, their assertions and the test configuration as they are.")
	case LevelStandard:
		p = append(p, fmt.Sprintf("Earlier attempts did not make the completion command pass (%s so far). Read the failure output in full before editing, find the root cause, and make the smallest change to the code under test that fixes it.", plural(len(h), "iteration")),
			"Do not modify, skip or delete tests, test configuration, CI workflows, snapshots or coverage thresholds; do not swallow errors. Such changes are detected and the iteration is rejected.")
	case LevelAggressive:
		p = append(p, "Do not modify, skip or delete tests. Do not weaken assertions, change test configuration, CI workflows, the test script, snapshots or coverage thresholds, and do not swallow errors: every such change is detected, the iteration is rejected and its work reverted. Fix the code under test.")
		if r := lastRegressed(h); r != nil {
			p = append(p, regressionParagraph(*r)...)
		}
		p = append(p, fmt.Sprintf("%s used so far. Before editing, state the root cause of the failure in one sentence; then change only the code that the failing tests exercise.", plural(len(h), "iteration")))
	case LevelAdaptive:
		why := st.oscillation
		if why == "" {
			why = "recent iterations went back and forth between the same states"
		}
		p = append(p, fmt.Sprintf("Your attempts are oscillating: %s. The approach you keep returning to does not converge.", why),
			"Step back: re-read the failing output from the start, form a different hypothesis about the root cause, and try a different fix rather than undoing or redoing your previous change. Do not modify, skip or delete tests.")
		if st.regression {
			if r := lastRegressed(h); r != nil {
				p = append(p, regressionParagraph(*r)...)
			}
		}
	}
	if st.plateau != "" {
		p = append(p, fmt.Sprintf("The last %d iterations scored %s: the current approach is not making progress. Try a different one.", PlateauWindow, st.plateau))
	}
	if last != nil && level != LevelMinimal {
		if f := last.Check.Tests.Failing; len(f) > 0 {
			p = append(p, fmt.Sprintf("Still failing after iteration %d: %s.", last.Iteration, listNames(f, 10)))
		}
	}
	return p
}

// lastRegressed returns the most recent iteration with a critical or high
// regression.
func lastRegressed(h []loop.Record) *loop.Record {
	for i := len(h) - 1; i >= 0; i-- {
		if regressed(h[i]) {
			return &h[i]
		}
	}
	return nil
}

// regressionParagraph tells the agent exactly what it did wrong, with the
// evidence.
func regressionParagraph(r loop.Record) []string {
	var out []string
	for _, g := range r.Verdict.Regressions {
		if g.Severity != SeverityCritical && g.Severity != SeverityHigh {
			continue
		}
		var where []string
		for i, e := range g.Evidence {
			if i == 3 {
				break
			}
			loc := e.Path
			if e.Line > 0 {
				loc = fmt.Sprintf("%s:%d", e.Path, e.Line)
			}
			switch {
			case loc != "" && e.Text != "":
				where = append(where, fmt.Sprintf("%s `%s`", loc, e.Text))
			case loc != "":
				where = append(where, loc)
			case e.Text != "":
				where = append(where, e.Text)
			}
		}
		verb := "flagged"
		if r.Rejected && g.Severity == SeverityCritical {
			verb = "rejected"
		}
		s := fmt.Sprintf("The attempt in iteration %d was %s for %s: %s", r.Iteration, verb, g.Type, g.Summary)
		if len(where) > 0 {
			s += " (" + strings.Join(where, "; ") + ")"
		}
		out = append(out, s+". "+advice(g.Type))
	}
	if len(out) == 0 && r.Rejected {
		out = append(out, fmt.Sprintf("The attempt in iteration %d was rejected. Do not repeat it.", r.Iteration))
	}
	return out
}

func advice(kind string) string {
	switch kind {
	case TestDeletion:
		return "Restore the tests and fix the code under test instead."
	case TestSkipping:
		return "Remove the skip markers and filters; every test must run."
	case AssertionWeakening:
		return "Keep the assertions exact; change the code so they hold."
	case ValidationBypass:
		return "Leave the test configuration, CI, test script, snapshots and thresholds unchanged."
	case ErrorSuppression:
		return "Handle or return the errors instead of hiding them."
	case FeatureRemoval:
		return "Keep the public API; fix its behaviour instead of deleting it."
	case CoverageRegression:
		return "Keep the tested code covered."
	}
	return "Do not repeat it."
}
