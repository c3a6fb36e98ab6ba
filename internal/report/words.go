package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aiwg/agent-loop/internal/spec"
	"github.com/aiwg/agent-loop/internal/state"
)

// Rejection words, in a few words, why an iteration was rejected
// ("deleted 2 tests", "passed only with edited tests"), from its
// first critical regression event (events are ordered most severe first)
// or else its held-out check; "rejected" when nothing explains it. The engine uses it for the commit subject
// and trailer of a rejected iteration (CommitSubject); the report for the
// iteration line.
func Rejection(events []state.RegressionEvent, held *state.HeldOut) string {
	for _, ev := range events {
		if ev.Severity == "critical" {
			return shortRegression(ev)
		}
	}
	if held != nil && held.Verdict == state.HeldOutFail {
		return "passed only with edited tests"
	}
	return "rejected"
}

func shortRegression(ev state.RegressionEvent) string {
	n := len(ev.Details.Tests)
	switch ev.RegressionType {
	case "test_deletion":
		if n > 0 {
			return "deleted " + plural(n, "test", "tests")
		}
		return "deleted tests"
	case "test_skipping":
		if n > 0 {
			return "skipped " + plural(n, "test", "tests")
		}
		return "skipped tests"
	case "assertion_weakening":
		return "weakened assertions"
	case "validation_bypass":
		return "changed the check"
	case "error_suppression":
		return "silenced errors"
	case "coverage_regression":
		return "lowered coverage"
	case "feature_removal":
		return "removed code"
	}
	return strings.ReplaceAll(ev.RegressionType, "_", " ")
}

// regressionClause words one regression as what the agent did: "deleted 2
// failing tests (`TestSubZero`, `TestSub`)", "changed `test.sh`"; verb is
// false when only the judge's own summary words it ("tests deleted:
// ...").
func regressionClause(ev state.RegressionEvent, baselineFailing []string) (phrase, bool) {
	t, p := ev.Details.Tests, ev.Details.Paths
	withNames := func(verb, one, many string, list []string) phrase {
		if len(list) == 0 {
			return nil
		}
		return words(verb + " " + plural(len(list), one, many) + " (").then(names(list)).add(")")
	}
	var out phrase
	switch ev.RegressionType {
	case "test_deletion":
		kind := "test"
		if len(t) > 0 && allIn(t, baselineFailing) {
			kind = "failing test"
		}
		out = withNames("deleted", kind, kind+"s", t)
		if out == nil && len(p) > 0 {
			out = words("deleted tests in ").then(names(p))
		}
	case "test_skipping":
		out = withNames("skipped", "test", "tests", t)
	case "assertion_weakening":
		out = withNames("weakened the assertions of", "test", "tests", t)
		if out == nil && len(p) > 0 {
			out = words("weakened assertions in ").then(names(p))
		}
	case "validation_bypass":
		if len(p) > 0 {
			out = words("changed ").then(names(p))
		}
	case "error_suppression":
		if len(p) > 0 {
			out = words("silenced errors in ").then(names(p))
		}
	case "coverage_regression":
		if b, okb := ev.Details.BaselineValue.(float64); okb {
			if c, okc := ev.Details.CurrentValue.(float64); okc {
				out = words(fmt.Sprintf("lowered coverage from %.1f%% to %.1f%%", b, c))
			}
		}
	case "feature_removal":
		if len(p) > 0 {
			out = words("removed code from ").then(names(p))
		}
	}
	if out != nil {
		return out, true
	}
	noun := map[string]string{
		"test_deletion": "tests deleted", "test_skipping": "tests skipped", "assertion_weakening": "assertions weakened",
		"validation_bypass": "the check changed", "error_suppression": "errors silenced", "coverage_regression": "coverage lowered",
		"feature_removal": "code removed",
	}[ev.RegressionType]
	noun = nonEmpty(noun, strings.ReplaceAll(ev.RegressionType, "_", " "))
	if s := strings.TrimSpace(ev.Details.Summary); s != "" {
		return words(noun + " (").then(words(s)).add(")"), false
	}
	return words(noun), false
}

func allIn(list, set []string) bool {
	for _, s := range list {
		if !slices.Contains(set, s) {
			return false
		}
	}
	return len(list) > 0
}

// heldOutLine is the held-out verdict of an iteration in one sentence.
func heldOutLine(h *state.HeldOut) phrase {
	if h == nil {
		return nil
	}
	failed := len(h.Failed)
	if failed == 0 {
		failed = h.FailedCount
	}
	fails := "With the original tests restored, " + plural(failed, "test fails", "tests fail")
	if failed == 0 {
		fails = "With the original tests restored, the check fails"
	}
	var p phrase
	switch h.Verdict {
	case state.HeldOutPass:
		p = words("The original tests pass with the agent's code alone")
		if len(h.Edits) > 0 {
			p = p.add("; its test edits are listed below.")
		} else {
			p = p.add(".")
		}
	case state.HeldOutFail:
		p = words(fails)
		if len(h.Failed) > 0 {
			p = p.add(" (").then(names(h.Failed)).add(")")
		}
		p = p.add(": the pass depended on editing tests.")
	case state.HeldOutWarning:
		p = words(fails)
		if len(h.Failed) > 0 {
			p = p.add(" (").then(names(h.Failed)).add(")")
		}
		p = p.add("; the task asks to change tests, so review the test edits below.")
	case state.HeldOutInconclusive:
		p = words("The check with the original tests restored was inconclusive")
		if h.Reason != "" {
			p = p.add(": ").then(words(h.Reason))
		}
		p = p.add("; the diff's signals decided alone.")
	default:
		return nil
	}
	return p
}

// editLine words one test edit: "`calc_test.go`: removed `TestSub`".
func editLine(e state.TestEdit) phrase {
	p := code(e.Path).add(": ").then(words(e.Change))
	if e.Test != "" {
		p = p.add(" ").then(code(e.Test))
	}
	return p
}

// criterionOrigin says where the completion check came from (the Spec's
// criterion: its source, and for an inferred one where it was found).
func criterionOrigin(h state.Harness) phrase {
	c := h.Spec.Criterion
	var p phrase
	switch c.Source {
	case spec.SourceFlag:
		p = words("given with --completion")
	case spec.SourceTyped:
		p = words("typed in when asked")
	case spec.SourceInput:
		p = words("given as the ").then(code("completion")).add(" input")
	case spec.SourceTask:
		p = words("named in the task")
	case spec.SourceTrigger:
		p = words("named in the trigger comment")
	case spec.SourceCI:
		p = words("the failed CI step")
		if o := c.Origin; o != nil && o.File != "" {
			p = p.add(" ").then(code(o.Step)).add(" of job ").then(code(o.Job)).add(" in ").then(code(o.File))
			if o.Run != "" {
				p = p.add(" (").then(link("the failed run", o.Run)).add(")")
			}
		}
	case spec.SourceInferred, spec.SourceHint:
		switch o := c.Origin; {
		case o != nil && o.File != "":
			p = words("inferred from ").then(code(o.File))
			if o.Job != "" {
				p = p.add(", job ").then(code(o.Job))
			}
			if o.Step != "" {
				p = p.add(", step ").then(code(o.Step))
			}
			if c.Source == spec.SourceHint {
				p = p.add(", as the trigger comment asked")
			}
		case c.Source == spec.SourceHint:
			p = words("inferred from the trigger comment")
		default:
			p = words("inferred from the repository")
		}
		if cf := c.Confidence; cf != "" && cf != "high" && cf != "given" {
			p = p.add(" (" + cf + " confidence)")
		}
	default:
		p = words("given")
	}
	return p
}

// runsLine says how many criterion runs an iteration cost, and why.
func runsLine(runs []state.CriterionRun) phrase {
	if len(runs) == 0 {
		return nil
	}
	var ps []phrase
	for _, r := range runs {
		what := map[string]string{
			state.RunFailingFirst:   "the failing tests alone",
			state.RunFull:           "the full check",
			state.RunConfirm:        "the full check again to confirm the pass",
			state.RunHeldOut:        "the check with the original tests restored",
			state.RunHeldOutControl: "the agent's own tree outside the work tree (a control)",
			state.RunHeldOutAgain:   "the check with the original tests restored again",
		}[r.Purpose]
		if what == "" {
			what = r.Purpose
		}
		ps = append(ps, words(fmt.Sprintf("%s (%s, %s)", what, passFail(r.Passed), dur(r.Seconds))))
	}
	return words(plural(len(runs), "check run", "check runs") + ": ").then(join(ps, ", then "))
}

func passFail(ok bool) string {
	if ok {
		return "passed"
	}
	return "failed"
}

// scoreParts returns the lines of a score breakdown that adds up: each
// part times its weight gives its points, shown exactly, and the total is
// their sum (the score the table shows, rounded).
func scoreParts(it *state.IterationEntry) ([]phrase, string) {
	b, w := it.QualityBreakdown, state.ScoreWeights
	parts := []struct {
		name      string
		val, wght float64
	}{
		{"validation", b.Validation, w.Validation}, {"completeness", b.Completeness, w.Completeness},
		{"correctness", b.Correctness, w.Correctness}, {"readability", b.Readability, w.Readability},
		{"efficiency", b.Efficiency, w.Efficiency},
	}
	var lines []phrase
	sum := 0.0
	for _, p := range parts {
		pts := math.Round(p.val*p.wght*10) / 1000 // exact to 3 decimals: parts have one
		sum += pts
		line := words(fmt.Sprintf("%s %s/100 × %.0f%% = %s", p.name, num(p.val), p.wght, exact(pts)))
		if why := explainFor(it.Explain, p.name); why != "" {
			line = line.add(": ").then(words(why))
		}
		lines = append(lines, line)
	}
	sum = math.Round(sum*1000) / 1000
	total := exact(sum) + " of 100"
	if r := math.Round(it.QualityScore); math.Abs(sum-it.QualityScore) < 0.05 && sum == r {
		return lines, total
	}
	return lines, fmt.Sprintf("%s (shown as %.0f)", total, math.Round(it.QualityScore))
}

// exact prints x with as many decimals as it has (at most three).
func exact(x float64) string {
	return strconv.FormatFloat(math.Round(x*1000)/1000, 'f', -1, 64)
}

// explainFor finds the judge's reason for a score part ("validation
// 100/100 (weight 30): the check passed" -> "the check passed").
func explainFor(explain []string, part string) string {
	for _, e := range explain {
		if !strings.HasPrefix(e, part+" ") {
			continue
		}
		if i := strings.Index(e, "): "); i >= 0 {
			return e[i+3:]
		}
		if i := strings.Index(e, ": "); i >= 0 {
			return e[i+2:]
		}
	}
	return ""
}

// sizeText is an iteration's size as "2 files, +3 −1".
func sizeText(c *state.Change) string {
	if c == nil {
		return "size not recorded"
	}
	if c.Files == 0 {
		return "no change"
	}
	return fmt.Sprintf("%s, +%d −%d", plural(c.Files, "file", "files"), c.Additions, c.Deletions)
}

// agentSummary is at most three lines of the agent's own summary of its
// change: the recorded summary, or else the first lines of its final
// message.
func agentSummary(it *state.IterationEntry) []string {
	if it == nil {
		return nil
	}
	src := it.AgentSummary
	if strings.TrimSpace(src) == "" {
		src = it.AgentMessage
	}
	var out []string
	for line := range strings.SplitSeq(src, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "```") {
			continue
		}
		out = append(out, line)
		if len(out) == 3 {
			break
		}
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// andWords joins words as "a, b and c".
func andWords(list []string) string {
	switch len(list) {
	case 0:
		return ""
	case 1:
		return list[0]
	}
	return strings.Join(list[:len(list)-1], ", ") + " and " + list[len(list)-1]
}

func signed(d float64) string {
	d = math.Round(d)
	switch {
	case d > 0:
		return fmt.Sprintf("+%.0f", d)
	case d < 0:
		return fmt.Sprintf("−%.0f", -d)
	}
	return "±0"
}

func num(x float64) string {
	if x == math.Trunc(x) {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.1f", x)
}

func usd(x float64) string {
	if x > 0 && x < 0.005 {
		return "<$0.01"
	}
	return fmt.Sprintf("$%.2f", x)
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

func dur(secs float64) string {
	d := time.Duration(secs * float64(time.Second)).Round(time.Second)
	switch {
	case secs < 0.05:
		return "<0.1s"
	case secs < 1:
		return fmt.Sprintf("%.1fs", secs)
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm %ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
}

func shortSHA(s string) string {
	if len(s) > 7 {
		return s[:7]
	}
	return s
}

// validSHA keeps only a hexadecimal commit id (the state is written by the
// harness, but a commit id goes into URLs and table cells unescaped).
func validSHA(s string) string {
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return ""
		}
	}
	return s
}

func nonEmpty(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

func nonZero(n, alt int) int {
	if n == 0 {
		return alt
	}
	return n
}

// revertedLine says which of an iteration's changes to protected paths
// were undone before it was checked and committed.
func revertedLine(n int, rs []state.ProtectedRevert) phrase {
	verbs := map[string]string{"A": "added", "M": "changed", "D": "deleted", "R": "renamed", "C": "copied", "T": "changed the type of"}
	var ps []phrase
	for _, r := range rs {
		v := nonEmpty(verbs[r.Status], "changed")
		p := words(v + " ")
		if r.OldPath != "" {
			p = p.then(code(r.OldPath)).add(" to ")
		}
		p = p.then(code(r.Path)).add(" (protected by ").then(code(r.Pattern)).add(")")
		ps = append(ps, p)
	}
	what := "changed protected paths"
	if len(rs) == 1 {
		what = "changed a protected path"
	}
	return words(fmt.Sprintf("Iteration %d %s, which agent-loop reverted before checking and committing it: ", n, what)).then(join(ps, "; ")).add(".")
}

// mergeLine says what became of the new commits of the branch the result
// is for.
func mergeLine(m state.Merge) phrase {
	var list []phrase
	for i, c := range m.Commits {
		if i == 5 {
			list = append(list, words(fmt.Sprintf("and %d more", len(m.Commits)-i)))
			break
		}
		list = append(list, code(shortSHA(c.SHA)).add(" ").then(words(c.Subject)))
	}
	what := words(fmt.Sprintf("%s got %s while the loop ran", m.Target, plural(len(m.Commits), "new commit", "new commits")))
	if len(list) > 0 {
		what = what.add(" (").then(join(list, ", ")).add(")")
	}
	switch m.Outcome {
	case state.MergeMerged:
		if m.ByIteration {
			return what.add(fmt.Sprintf("; iteration %d merged them into the loop branch (", m.Iteration)).then(code(shortSHA(m.Commit))).add(").")
		}
		return what.add("; they were merged into the loop branch (").then(code(shortSHA(m.Commit))).add(") and the check passes on the merge.")
	case state.MergeConflict:
		return what.add(fmt.Sprintf("; merging them conflicted (%s), left to iteration %d.", strings.Join(m.Conflicts, ", "), m.Iteration+1))
	case state.MergeBroke:
		return what.add(fmt.Sprintf("; the merge broke the check, left to iteration %d.", m.Iteration+1))
	case state.MergeUnresolved:
		return words(fmt.Sprintf("Iteration %d left conflict markers in %s: its merge of %s was undone.", m.Iteration, strings.Join(m.Conflicts, ", "), m.Target))
	case state.MergeNotMerged:
		return what.add("; they were not merged: ").then(words(m.Detail)).add(".")
	}
	return nil
}
