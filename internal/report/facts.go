package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/aiwg/agent-loop/internal/state"
)

// facts is everything the report shows, computed once from the state so
// that every medium shows the same figures from the same source: one
// function per figure (size, verdict, score, Δ, status).
type facts struct {
	st   *state.State
	rows []row // the starting commit, then every iteration in order
	// pub is the row of the published iteration (completed), the closest
	// one (not completed) or the best so far (running or stopped); nil when
	// no iteration qualifies.
	pub    *row
	status status
}

// row is one line of the table: the starting commit (n == 0) or an
// iteration.
type row struct {
	n    int
	it   *state.IterationEntry // nil for the start
	mark string                // ✅ ❌ ⛔
	// short is the verdict in a few words for the iteration line: "4/4",
	// "deleted 2 tests".
	short  phrase
	tests  string // "4/4 pass", "—"
	score  string // "91/100", "—" for a rejected iteration and the start
	delta  string // against the best score so far: "+12", "−3", "first", "—"
	commit string
	pub    bool
}

// status is the first line: an icon, a word and why, in plain words.
type status struct {
	icon, word string
	why        phrase
}

func newFacts(st *state.State) *facts {
	f := &facts{st: st}
	f.rows = append(f.rows, f.startRow())
	best := 0
	if st.BestIteration != nil {
		best = st.BestIteration.Iteration
	}
	bestSoFar := math.Inf(-1)
	for i := range st.IterationHistory {
		it := &st.IterationHistory[i]
		r := row{n: it.Iteration, it: it, commit: it.Commit, tests: testsCell(it.TestResults)}
		r.mark, r.short = f.verdict(it)
		switch {
		case it.Rejected:
			r.score, r.delta = "—", "—"
		default:
			r.score = fmt.Sprintf("%.0f/100", it.QualityScore)
			if math.IsInf(bestSoFar, -1) {
				r.delta = "first"
			} else {
				r.delta = signed(it.QualityScore - bestSoFar)
			}
			bestSoFar = math.Max(bestSoFar, it.QualityScore)
		}
		r.pub = it.Iteration == best && !it.Rejected
		f.rows = append(f.rows, r)
	}
	for i := range f.rows {
		if f.rows[i].pub {
			f.pub = &f.rows[i]
		}
	}
	f.status = f.statusLine()
	return f
}

func (f *facts) startRow() row {
	r := row{n: 0, mark: "❌", short: words("fail"), tests: "—", score: "—", delta: "—", commit: f.st.Harness.BaseSHA}
	if b := f.st.Harness.Baseline; b != nil {
		if b.Passed {
			r.mark, r.short = "✅", words("pass")
		}
		if b.Known {
			r.tests = fmt.Sprintf("%d/%d pass", b.Passing, b.Total)
			r.short = words(fmt.Sprintf("%d/%d", b.Passing, b.Total))
		}
	}
	return r
}

// iterations returns the rows of the iterations (without the start).
func (f *facts) iterations() []row { return f.rows[1:] }

// size is the one source of an iteration's size: its tree against the
// starting commit. nil when the state does not record it.
func size(it *state.IterationEntry) *state.Change {
	if it == nil {
		return nil
	}
	return it.FromStart
}

func testsCell(t *state.TestResults) string {
	if t == nil {
		return "—"
	}
	return fmt.Sprintf("%d/%d pass", t.Passed, t.Total)
}

// verdict is an iteration's mark and its verdict in a few words.
func (f *facts) verdict(it *state.IterationEntry) (string, phrase) {
	if it.Rejected {
		return "⛔", words(f.rejectionShort(it.Iteration))
	}
	counts := ""
	if t := it.TestResults; t != nil {
		counts = fmt.Sprintf("%d/%d", t.Passed, t.Total)
	}
	if it.CheckPassed {
		return "✅", words(nonEmpty(counts, "pass"))
	}
	if why := agentTrouble(it.AgentClass); why != "" {
		return "❌", words(why)
	}
	return "❌", words(nonEmpty(counts, "fail"))
}

// rejectionShort words why iteration n was rejected in a few words.
func (f *facts) rejectionShort(n int) string {
	return Rejection(f.events(n), f.heldOut(n))
}

func (f *facts) heldOut(n int) *state.HeldOut {
	for _, it := range f.st.IterationHistory {
		if it.Iteration == n {
			return it.HeldOut
		}
	}
	return nil
}

// events returns the regression events of iteration n, one per type
// (the most severe first), so none is listed twice.
func (f *facts) events(n int) []state.RegressionEvent {
	var out []state.RegressionEvent
	for _, ev := range f.st.RegressionEvents {
		if ev.Iteration != n {
			continue
		}
		if i := slices.IndexFunc(out, func(o state.RegressionEvent) bool { return o.RegressionType == ev.RegressionType }); i >= 0 {
			out[i].Details.Tests = union(out[i].Details.Tests, ev.Details.Tests)
			out[i].Details.Paths = union(out[i].Details.Paths, ev.Details.Paths)
			if severityRank(ev.Severity) < severityRank(out[i].Severity) {
				out[i].Severity = ev.Severity
			}
			continue
		}
		ev.Details.Tests = slices.Clone(ev.Details.Tests)
		ev.Details.Paths = slices.Clone(ev.Details.Paths)
		out = append(out, ev)
	}
	slices.SortStableFunc(out, func(a, b state.RegressionEvent) int { return severityRank(a.Severity) - severityRank(b.Severity) })
	return out
}

func severityRank(s string) int {
	switch s {
	case "critical":
		return 0
	case "high":
		return 1
	case "medium":
		return 2
	}
	return 3
}

func union(a, b []string) []string {
	for _, s := range b {
		if !slices.Contains(a, s) {
			a = append(a, s)
		}
	}
	return a
}

// agentTrouble words an agent run that did not end normally.
func agentTrouble(class string) string {
	return map[string]string{
		"timeout": "agent timed out", "idle_timeout": "agent went silent", "max_turns": "agent hit its turn limit",
		"budget": "agent hit its budget", "crash": "agent crashed", "tool_failure": "agent's tools failed",
		"cancelled": "agent cancelled", "auth": "agent could not log in",
	}[class]
}

// outcome says what the published row is to the reader.
func (f *facts) pubLabel() string {
	switch {
	case f.st.Status == state.Completed:
		return "published"
	case f.st.Status == state.Failed:
		return "closest"
	}
	return "best so far"
}

// publishedSHA is the commit that holds the published tree: the branch
// head once the loop has published (it may be a commit that restores the
// best iteration's tree), the best iteration's own commit before.
func (f *facts) publishedSHA() string {
	if f.pub == nil {
		return ""
	}
	if h := f.st.Harness.HeadSHA; h != "" && (f.st.Status == state.Completed || f.st.Status == state.Failed) {
		return h
	}
	return f.pub.commit
}

// lastIteration is the number of the last iteration recorded.
func (f *facts) lastIteration() int {
	if n := len(f.st.IterationHistory); n > 0 {
		return f.st.IterationHistory[n-1].Iteration
	}
	return 0
}

// stopKind is the state's StopKind, or the one the status implies when an
// older engine did not record it.
func (f *facts) stopKind() state.StopKind {
	h := f.st.Harness
	if h.StopKind != "" {
		return h.StopKind
	}
	switch f.st.Status {
	case state.Completed:
		if len(f.st.IterationHistory) == 0 {
			return state.StopAlreadyPassing
		}
		return state.StopPassed
	case state.Paused:
		if g := h.PendingGate; g != nil && g.Decision == "" {
			return state.StopHumanGate
		}
	case state.Aborted:
		return state.StopAborted
	case state.Crashed:
		return state.StopCrashed
	}
	return ""
}

func (f *facts) statusLine() status {
	st, h := f.st, f.st.Harness
	last := f.lastIteration()
	var s status
	switch st.Status {
	case state.Completed:
		s.icon, s.word = "✅", "completed"
	case state.Failed:
		s.icon, s.word = "❌", "not completed"
	case state.Running, state.Completing:
		s.icon, s.word = "🔄", "running"
		s.why = words(fmt.Sprintf("%s of at most %d done", plural(last, "iteration", "iterations"), st.Configuration.MaxIterations))
		return s
	default:
		s.icon, s.word = "⛔", "stopped"
	}
	switch f.stopKind() {
	case state.StopPassed:
		s.why = words(fmt.Sprintf("the check passes on iteration %d", nonZero(bestN(st), last)))
	case state.StopAlreadyPassing:
		s.why = words("the check already passes on the starting commit, so there was nothing to do")
	case state.StopMaxIterations:
		s.why = words(fmt.Sprintf("%s (the limit) without passing the check", plural(last, "iteration", "iterations")))
	case state.StopTimeout:
		lim := "the time limit"
		if t := st.Configuration.TimeoutMinutes; t != nil {
			lim = fmt.Sprintf("the time limit of %d minutes", *t)
		}
		s.why = words(lim + fmt.Sprintf(" was reached after %s", plural(last, "iteration", "iterations")))
	case state.StopBudget:
		lim := "the budget"
		switch {
		case h.Spec.Limits.BudgetUSD > 0:
			lim = "the budget of " + usd(h.Spec.Limits.BudgetUSD)
		case h.Spec.Limits.MaxTokens > 0:
			lim = "the budget of " + thousands(h.Spec.Limits.MaxTokens) + " tokens"
		}
		s.why = words(lim + fmt.Sprintf(" was spent after %s", plural(last, "iteration", "iterations")))
	case state.StopStalled:
		s.why = f.stallWhy()
	case state.StopCheatPolicy:
		s.why = words(fmt.Sprintf("iteration %d was rejected and the regression policy stops the loop at the first rejection", last))
	case state.StopHumanGate:
		n := last
		if g := h.PendingGate; g != nil {
			n = g.Iteration
		}
		s.why = words(fmt.Sprintf("waiting for a person to approve or reject iteration %d, which %s", n, f.rejectionShort(n)))
	case state.StopCancelled:
		s.why = words(fmt.Sprintf("the run was cancelled after %s; it can resume from its saved state", plural(last, "iteration", "iterations")))
	case state.StopPaused:
		s.why = words(fmt.Sprintf("paused by request after %s", plural(last, "iteration", "iterations")))
	case state.StopAborted:
		s.why = words(fmt.Sprintf("aborted by request after %s", plural(last, "iteration", "iterations")))
	case state.StopAgentError:
		s.why = words("the agent could not run: ").then(words(h.StopReason))
	case state.StopCrashed:
		s.why = words(fmt.Sprintf("agent-loop itself stopped unexpectedly after %s; it can resume from its saved state", plural(last, "iteration", "iterations")))
	case state.StopPublishFailed:
		s.why = words("publishing the result failed: ").then(words(h.StopReason))
	default:
		s.why = words(nonEmpty(h.StopReason, "no reason was recorded"))
		if st.Status == state.Paused {
			s.why = words("paused (").then(s.why).add(")")
		}
	}
	if st.Status == state.Failed && f.pub != nil {
		s.why = s.why.add(fmt.Sprintf("; iteration %d came closest", f.pub.n))
		if t := f.pub.it.TestResults; t != nil {
			s.why = s.why.add(fmt.Sprintf(" (%d of %d tests pass)", t.Passed, t.Total))
		}
	}
	return s
}

// stallWhy words a stall from the history: the same failing tests, or no
// change, in the last iterations.
func (f *facts) stallWhy() phrase {
	hist := f.st.IterationHistory
	n := len(hist)
	if n >= 2 {
		fp := hist[n-1].Fingerprint
		run := 1
		for run < n && fp != "" && hist[n-1-run].Fingerprint == fp {
			run++
		}
		if run >= 2 {
			var its []string
			for _, it := range hist[n-run:] {
				its = append(its, fmt.Sprint(it.Iteration))
			}
			failing := hist[n-1].Failing
			p := words("stalled: ")
			if len(failing) > 0 {
				which := "the same test ("
				if len(failing) > 1 {
					which = fmt.Sprintf("the same %d tests (", len(failing))
				}
				p = p.add(which).then(names(failing)).add(") failed")
			} else {
				p = p.add("the check failed the same way")
			}
			return p.add(" in iterations " + andWords(its))
		}
		run = 0
		for run < n && hist[n-1-run].FilesChanged == 0 {
			run++
		}
		if run >= 2 {
			var its []string
			for _, it := range hist[n-run:] {
				its = append(its, fmt.Sprint(it.Iteration))
			}
			return words("stalled: the agent changed nothing in iterations " + andWords(its))
		}
	}
	return words("stalled: ").then(words(strings.TrimPrefix(f.st.Harness.StopReason, "stalled: ")))
}

func bestN(st *state.State) int {
	if st.BestIteration != nil {
		return st.BestIteration.Iteration
	}
	return 0
}
