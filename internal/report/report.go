// Package report renders a loop's state as the Markdown a person reads: the
// CLI's report.md, the PR comment and the step summary. It reads only the
// state (and options saying where the text goes), so every surface shows
// the same facts.
package report

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aiwg/agent-loop/internal/state"
)

// Target says where a report goes.
type Target string

const (
	CLI     Target = "cli"     // report.md and the terminal
	PR      Target = "pr"      // the sticky PR/issue comment
	Summary Target = "summary" // the workflow step summary
)

// Options adjust a report to its target.
type Options struct {
	Target Target
	// CommitURL, when set, links commits: fmt.Sprintf(CommitURL, sha).
	CommitURL string
	// Marker is a hidden line the PR comment starts with.
	Marker string
	// Resume tells how to continue a paused or failed loop.
	Resume string
}

var statusIcon = map[state.Status]string{
	state.Completed: "✅", state.Failed: "❌", state.Aborted: "🛑", state.Paused: "⏸️",
	state.Crashed: "💥", state.Running: "🔄", state.Completing: "🔄",
}

// Render returns the Markdown report of st.
func Render(st *state.State, o Options) string {
	var b strings.Builder
	if o.Marker != "" {
		b.WriteString(o.Marker + "\n")
	}
	h := st.Harness
	title := map[state.Status]string{
		state.Completed: "completed", state.Failed: "not completed", state.Aborted: "aborted", state.Paused: "paused",
		state.Crashed: "crashed", state.Running: "running", state.Completing: "completing",
	}[st.Status]
	fmt.Fprintf(&b, "## %s agent-loop %s\n\n", statusIcon[st.Status], title)
	fmt.Fprintf(&b, "**Task:** %s\n\n", oneLine(st.Task))
	if h.StopReason != "" {
		fmt.Fprintf(&b, "**Why it stopped:** %s\n\n", h.StopReason)
	} else if st.Status == state.Running {
		fmt.Fprintf(&b, "**Progress:** iteration %d of at most %d\n\n", st.Iteration, st.Configuration.MaxIterations)
	}
	crit := h.Spec.Criterion
	src := crit.Source.Phrase()
	if crit.Confidence != "" && crit.Confidence != "given" {
		src += ", " + crit.Confidence + " confidence"
	}
	fmt.Fprintf(&b, "**Completion check** (%s): `%s`", src, crit.Command)
	if crit.Workdir != "" && crit.Workdir != "." {
		fmt.Fprintf(&b, " in `%s`", crit.Workdir)
	}
	b.WriteString("\n")
	for _, ev := range crit.Evidence {
		fmt.Fprintf(&b, "- %s\n", ev)
	}
	b.WriteString("\n")

	if bi := st.BestIteration; bi != nil {
		fmt.Fprintf(&b, "**Best iteration:** %d (score %.0f): %s", bi.Iteration, bi.QualityScore, strings.TrimSpace(bi.SelectionReason))
		if r := strings.TrimSpace(bi.SelectionReason); r != "" && !strings.HasSuffix(r, ".") {
			b.WriteString(".")
		}
		if bi.Commit != "" {
			fmt.Fprintf(&b, " Commit %s.", o.commit(bi.Commit))
		}
		b.WriteString("\n\n")
	} else if len(st.IterationHistory) > 0 {
		b.WriteString("**Best iteration:** none qualified (every iteration failed or was rejected).\n\n")
	}
	m := st.Metrics
	spent := fmt.Sprintf("%d iteration%s, %s", m.TotalIterations, plural(m.TotalIterations), dur(float64(m.TotalDurationSeconds)))
	if m.TotalTokens > 0 {
		spent += fmt.Sprintf(", %s tokens", thousands(m.TotalTokens))
	}
	if m.TotalCostUSD > 0 {
		spent += fmt.Sprintf(", $%.4f", m.TotalCostUSD)
		if anyEstimated(st) {
			spent += " (partly estimated from a price table)"
		}
	}
	if h.Provider != "" {
		spent += " with " + h.Provider
		if h.AgentVersion != "" {
			spent += " " + h.AgentVersion
		}
	}
	fmt.Fprintf(&b, "**Spent:** %s\n\n", spent)

	b.WriteString(iterationTable(st, o))
	b.WriteString(regressions(st))
	b.WriteString(reinforcement(st))
	if o.Target != CLI && len(st.IterationHistory) > 1 {
		b.WriteString(chart(st))
	}
	b.WriteString(scoreNotes(st))
	b.WriteString(nextSteps(st, o))
	return b.String()
}

func iterationTable(st *state.State, o Options) string {
	var b strings.Builder
	b.WriteString("| # | check | tests (pass/fail/skip) | score | Δ | duration | diff | tokens | cost | commit | notes |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	if bc := st.Harness.Baseline; bc != nil {
		tests := "unknown"
		if bc.Known {
			tests = fmt.Sprintf("%d/%d/%d", bc.Passing, bc.Failed, bc.Total-bc.Passing-bc.Failed)
		}
		fmt.Fprintf(&b, "| start | %s | %s | | | %s | | | | %s | starting commit |\n", check(bc.Passed), tests, dur(bc.Seconds), o.commit(st.Harness.BaseSHA))
	}
	best := 0
	if st.BestIteration != nil {
		best = st.BestIteration.Iteration
	}
	levelAt := map[int]string{}
	for _, rc := range st.ReinforcementHistory {
		levelAt[rc.Iteration] = rc.ToLevel
	}
	for _, it := range st.IterationHistory {
		tests := "unknown"
		if it.TestResults != nil {
			tests = fmt.Sprintf("%d/%d/%d", it.TestResults.Passed, it.TestResults.Failed, it.TestResults.Skipped)
		}
		var notes []string
		if it.Iteration == best {
			notes = append(notes, "**best**")
		}
		if lv, ok := levelAt[it.Iteration]; ok {
			notes = append(notes, "prompt: "+strings.ToLower(lv)+" reinforcement")
		}
		if it.Rejected {
			notes = append(notes, "rejected")
		}
		seen := map[string]bool{}
		for _, ev := range st.RegressionEvents {
			if ev.Iteration == it.Iteration && !seen[ev.RegressionType] {
				seen[ev.RegressionType] = true
				notes = append(notes, fmt.Sprintf("%s (%s)", ev.RegressionType, ev.Severity))
			}
		}
		if len(it.Flaky) > 0 {
			notes = append(notes, fmt.Sprintf("flaky: %s", strings.Join(it.Flaky, ", ")))
		}
		if it.AgentClass != "" {
			notes = append(notes, "agent: "+it.AgentClass)
		}
		if len(it.Excluded) > 0 {
			notes = append(notes, "not committed: "+strings.Join(it.Excluded, ", "))
		}
		if it.Rebuilt {
			notes = append(notes, "rebuilt after a crash")
		}
		cost := ""
		if it.CostUSD > 0 {
			cost = fmt.Sprintf("$%.4f", it.CostUSD)
			if it.CostEstimated {
				cost += "*"
			}
		}
		tokens := ""
		if it.Tokens > 0 {
			tokens = thousands(it.Tokens)
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %.0f | %s | %s | %s | %s | %s | %s | %s |\n",
			it.Iteration, check(it.CheckPassed), tests, it.QualityScore, delta(it.QualityDelta), dur(it.DurationSeconds),
			diffSize(it), tokens, cost, o.commit(it.Commit), strings.Join(notes, "; "))
	}
	b.WriteString("\n")
	return b.String()
}

// reinforcement lists how the prompt changed along the loop.
func reinforcement(st *state.State) string {
	if len(st.ReinforcementHistory) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("### How the prompt changed\n\n")
	for _, rc := range st.ReinforcementHistory {
		fmt.Fprintf(&b, "- from iteration %d: %s -> %s (%s)\n", rc.Iteration, rc.FromLevel, rc.ToLevel, oneLine(rc.Reason))
	}
	b.WriteString("\n")
	return b.String()
}

func regressions(st *state.State) string {
	if len(st.RegressionEvents) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("### Regressions caught\n\n")
	for _, ev := range st.RegressionEvents {
		fmt.Fprintf(&b, "- iteration %d: **%s** (%s)", ev.Iteration, ev.RegressionType, ev.Severity)
		if ev.Details.Summary != "" {
			fmt.Fprintf(&b, ": %s", oneLine(ev.Details.Summary))
		}
		if ev.RecoveryOutcome != nil {
			fmt.Fprintf(&b, " (recovery: %s)", *ev.RecoveryOutcome)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	return b.String()
}

func chart(st *state.State) string {
	var xs, ys []string
	for _, it := range st.IterationHistory {
		xs = append(xs, fmt.Sprint(it.Iteration))
		ys = append(ys, fmt.Sprintf("%.0f", it.QualityScore))
	}
	return "```mermaid\nxychart-beta\n  title \"Quality score per iteration\"\n  x-axis [" + strings.Join(xs, ", ") +
		"]\n  y-axis \"score\" 0 --> 100\n  bar [" + strings.Join(ys, ", ") + "]\n```\n\n"
}

func scoreNotes(st *state.State) string {
	if st.BestIteration == nil {
		return ""
	}
	for _, it := range st.IterationHistory {
		if it.Iteration == st.BestIteration.Iteration && len(it.Explain) > 0 {
			var b strings.Builder
			fmt.Fprintf(&b, "<details><summary>How iteration %d was scored</summary>\n\n", it.Iteration)
			for _, e := range it.Explain {
				fmt.Fprintf(&b, "- %s\n", e)
			}
			b.WriteString("\n</details>\n\n")
			return b.String()
		}
	}
	return ""
}

func nextSteps(st *state.State, o Options) string {
	var b strings.Builder
	h := st.Harness
	if o.Target == CLI && h.Branch != "" && len(st.IterationHistory) > 0 {
		back := h.OriginalBranch
		if back == "" {
			back = shortSHA(h.BaseSHA)
		}
		b.WriteString("### Look at the result\n\n```sh\n")
		fmt.Fprintf(&b, "git log --oneline %s..%s   # one commit per iteration\n", shortSHA(h.BaseSHA), h.Branch)
		fmt.Fprintf(&b, "git diff %s %s            # the published result\n", shortSHA(h.BaseSHA), h.Branch)
		fmt.Fprintf(&b, "git switch %s                  # try it\n", h.Branch)
		fmt.Fprintf(&b, "git switch %s                  # and back\n", back)
		b.WriteString("```\n\n")
	}
	if (st.Status == state.Paused || st.Status == state.Crashed) && o.Resume != "" {
		fmt.Fprintf(&b, "**Resume:** %s\n\n", o.Resume)
	}
	if len(h.PushErrors) > 0 {
		fmt.Fprintf(&b, "**Push problems:** %d push(es) failed; the commits are kept locally. Last: %s\n\n", len(h.PushErrors), h.PushErrors[len(h.PushErrors)-1])
	}
	return b.String()
}

func (o Options) commit(sha string) string {
	if sha == "" {
		return ""
	}
	if o.CommitURL != "" {
		return fmt.Sprintf("[`%s`](%s)", shortSHA(sha), fmt.Sprintf(o.CommitURL, sha))
	}
	return "`" + shortSHA(sha) + "`"
}

func check(ok bool) string {
	if ok {
		return "✅ pass"
	}
	return "❌ fail"
}

func delta(d float64) string {
	switch {
	case d > 0:
		return fmt.Sprintf("+%.0f", d)
	case d < 0:
		return fmt.Sprintf("%.0f", d)
	}
	return "0"
}

func diffSize(it state.IterationEntry) string {
	if it.FilesChanged == 0 {
		return "no change"
	}
	return fmt.Sprintf("%d file%s +%d −%d", it.FilesChanged, plural(it.FilesChanged), it.Additions, it.Deletions)
}

func dur(secs float64) string {
	d := time.Duration(secs * float64(time.Second))
	switch {
	case d < time.Second:
		return fmt.Sprintf("%.1fs", secs)
	case d < time.Minute:
		return fmt.Sprintf("%.0fs", secs)
	}
	return d.Round(time.Second).String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func thousands(n int64) string {
	s := fmt.Sprint(n)
	var out []string
	for len(s) > 3 {
		out = append([]string{s[len(s)-3:]}, out...)
		s = s[:len(s)-3]
	}
	return strings.Join(append([]string{s}, out...), ",")
}

func shortSHA(s string) string {
	if len(s) > 8 {
		return s[:8]
	}
	return s
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return strings.ReplaceAll(s, "|", "\\|")
}

func anyEstimated(st *state.State) bool {
	for _, it := range st.IterationHistory {
		if it.CostEstimated {
			return true
		}
	}
	return false
}

// Sorted regression types of an iteration (for one-line summaries).
func regressionTypes(st *state.State, n int) []string {
	set := map[string]bool{}
	for _, ev := range st.RegressionEvents {
		if ev.Iteration == n {
			set[ev.RegressionType] = true
		}
	}
	var out []string
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// OneLine is a one-line summary for logs and outputs.
func OneLine(st *state.State) string {
	s := fmt.Sprintf("%s after %d iteration%s", st.Status, st.Iteration, plural(st.Iteration))
	if st.BestIteration != nil {
		s += fmt.Sprintf("; best is %d", st.BestIteration.Iteration)
		if rt := regressionTypes(st, st.BestIteration.Iteration); len(rt) > 0 {
			s += " (" + strings.Join(rt, ", ") + ")"
		}
	}
	return s
}
