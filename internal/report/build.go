package report

import (
	"fmt"
	"strings"

	"github.com/aiwg/agent-loop/internal/state"
)

// builder turns the facts into blocks for one target.
type builder struct {
	f *facts
	o Options
	l Links
}

func (b *builder) cli() bool { return b.o.Target == CLI }

// report is the loop's report: the PR comment, the step summary and the
// CLI report.
func (b *builder) report() []block {
	f := b.f
	doc := []block{statusBlock{p: words(f.status.icon + " agent-loop " + f.status.word + ": ").then(f.status.why)}}
	doc = append(doc, b.change()...)
	doc = append(doc, b.check(), para{lead: "Iterations:", p: b.iterationLine()})
	if tr := b.trust(); len(tr.items) > 0 {
		doc = append(doc, tr)
	}
	if len(f.iterations()) > 0 {
		doc = append(doc, b.table())
		doc = append(doc, details{summary: "Time, size and cost of each iteration", body: b.perIteration()})
		if sc := b.scoreBreakdown(); sc != nil {
			doc = append(doc, *sc)
		}
		if ch := b.chart(); ch != nil && !b.cli() {
			doc = append(doc, *ch)
		}
	}
	doc = append(doc, b.next()...)
	return doc
}

// body is the pull request's description: the change and how to take it;
// the loop's story stays in the report comment.
func (b *builder) body() []block {
	f := b.f
	doc := []block{para{lead: "Task:", p: words(f.st.Task)}}
	doc = append(doc, b.change()...)
	if f.pub != nil {
		if c := size(f.pub.it); c != nil && len(c.Paths) > 0 {
			var l list
			for i, p := range c.Paths {
				if i == 20 {
					l.items = append(l.items, item{p: words(fmt.Sprintf("and %d more", len(c.Paths)-20))})
					break
				}
				l.items = append(l.items, item{p: code(p.Path).add(fmt.Sprintf(" +%d −%d", p.Additions, p.Deletions)).then(fileStatus(p.Status))})
			}
			doc = append(doc, l)
		}
	}
	check := b.check()
	check.p = check.p.add("; ").then(b.checkResult())
	doc = append(doc, check)
	if f.pub != nil {
		if h := heldOutLine(f.pub.it.HeldOut); h != nil {
			doc = append(doc, para{lead: "Held-out check:", p: h})
			if len(f.pub.it.HeldOut.Edits) > 0 {
				var l list
				for _, e := range f.pub.it.HeldOut.Edits {
					l.items = append(l.items, item{p: editLine(e)})
				}
				doc = append(doc, l)
			}
		}
	}
	var next list
	for _, p := range b.recommend() {
		next.items = append(next.items, item{p: p})
	}
	if len(next.items) > 0 {
		doc = append(doc, para{lead: "Next:"}, next)
	}
	where := words("the agent-loop comment on this pull request")
	if b.l.Report != "" {
		where = link("the agent-loop comment", b.l.Report)
	}
	doc = append(doc, para{p: words("Every iteration, the checks on the agent, time and cost: see ").then(where).add(" (loop ").then(code(f.st.LoopID)).add(").")})
	return doc
}

func fileStatus(s string) phrase {
	switch s {
	case "added", "deleted", "renamed":
		return words(" (" + s + ")")
	}
	return nil
}

// change is the change from the starting commit to the published result,
// and the agent's own summary of it.
func (b *builder) change() []block {
	f := b.f
	if f.pub == nil {
		if len(f.iterations()) == 0 {
			return []block{para{lead: "Change:", p: words("none.")}}
		}
		if !f.st.Status.Terminal() {
			return []block{para{lead: "Change:", p: words("none yet: no iteration has qualified so far.")}}
		}
		return []block{para{lead: "Change:", p: words("nothing to publish: no iteration qualified; the branch is back at the starting commit.")}}
	}
	c := size(f.pub.it)
	p := words(sizeText(c))
	if c != nil && len(c.Paths) > 0 {
		var ps []string
		for _, x := range c.Paths {
			ps = append(ps, x.Path)
		}
		shown := ps
		if len(shown) > 3 {
			shown = shown[:3]
		}
		p = p.add(" in ").then(names(shown))
		if len(ps) > 3 {
			p = p.add(fmt.Sprintf(" and %d more", len(ps)-3))
		}
	}
	p = p.add(fmt.Sprintf(", from the starting commit to iteration %d", f.pub.n))
	if l := f.pubLabel(); l != "published" {
		p = p.add(" (" + l + ")")
	}
	if u := b.l.compare(f.st.Harness.BaseSHA, f.publishedSHA()); u != "" && !b.cli() {
		p = p.add(" · ").then(link("compare", u))
	}
	out := []block{para{lead: "Change:", p: p}}
	if lines := agentSummary(f.pub.it); len(lines) > 0 {
		out = append(out, quote{lines: lines})
	}
	return out
}

// check is the completion check and where it came from.
func (b *builder) check() para {
	h := b.f.st.Harness
	p := code(b.f.st.CompletionCriteria)
	if wd := h.Spec.Criterion.Workdir; wd != "" && wd != "." {
		p = p.add(" in ").then(code(wd))
	}
	return para{lead: "Check:", p: p.add(", ").then(criterionOrigin(h))}
}

// checkResult says whether the check passes on the published commit.
func (b *builder) checkResult() phrase {
	f := b.f
	if f.pub == nil {
		return words("no iteration passes it")
	}
	t := f.pub.it.TestResults
	counts := ""
	if t != nil {
		counts = fmt.Sprintf(" (%d of %d tests)", t.Passed, t.Total)
	}
	if f.pub.it.CheckPassed {
		return words(fmt.Sprintf("it passes on iteration %d", f.pub.n) + counts)
	}
	return words(fmt.Sprintf("it does not pass yet: iteration %d, the closest, passes%s", f.pub.n, nonEmpty(counts, " some")))
}

// iterationLine is one line of outcomes, verdict first:
// "start ❌ 2/4 -> 1 ⛔ deleted 2 tests -> 2 ✅ 4/4 (published)".
func (b *builder) iterationLine() phrase {
	var ps []phrase
	for _, r := range b.f.rows {
		name := "start"
		if r.n > 0 {
			name = fmt.Sprint(r.n)
		}
		p := words(name + " " + r.mark + " ").then(r.short)
		if r.pub {
			p = p.add(" (" + b.f.pubLabel() + ")")
		}
		ps = append(ps, p)
	}
	if b.f.st.Status == state.Running || b.f.st.Status == state.Completing {
		ps = append(ps, words("…"))
	}
	return join(ps, " -> ")
}

// trust is the list of plain sentences a reviewer needs to trust the
// result.
func (b *builder) trust() list {
	f := b.f
	var l list
	base := []string(nil)
	if f.st.Harness.Baseline != nil {
		base = f.st.Harness.Baseline.Failing
	}
	for _, r := range f.iterations() {
		it := r.it
		evs := f.events(r.n)
		var critical, warn []phrase
		verbs := true
		decision := ""
		for _, ev := range evs {
			c, verb := regressionClause(ev, base)
			if ev.Severity == "critical" {
				critical = append(critical, c)
				verbs = verbs && verb
			} else {
				warn = append(warn, c)
			}
			if ev.HumanDecision != nil {
				decision = *ev.HumanDecision
			}
		}
		switch {
		case it.Rejected:
			p := words(fmt.Sprintf("Iteration %d was rejected", r.n))
			switch {
			case len(critical) > 0 && verbs:
				p = p.add(": it ").then(andList(critical))
			case len(critical) > 0:
				p = p.add(": ").then(join(critical, "; "))
			}
			p = p.add("; " + b.consequence(r.n, decision))
			if h := it.HeldOut; h != nil && h.Verdict == state.HeldOutFail {
				p = p.add(" ").then(heldOutLine(h))
			}
			l.items = append(l.items, item{p: p})
		case decision == "approve" && len(critical) > 0:
			l.items = append(l.items, item{p: words(fmt.Sprintf("Iteration %d was flagged (", r.n)).then(join(critical, "; ")).add(") and a person approved it.")})
		case r.pub && len(warn) > 0:
			l.items = append(l.items, item{p: words(fmt.Sprintf("Iteration %d has a warning: ", r.n)).then(join(warn, "; ")).add(".")})
		}
		if r.pub {
			if h := heldOutLine(it.HeldOut); h != nil {
				var sub []phrase
				if it.HeldOut.Verdict != state.HeldOutFail {
					for _, e := range it.HeldOut.Edits {
						sub = append(sub, editLine(e))
					}
				}
				l.items = append(l.items, item{p: h, sub: sub})
			}
		}
		if len(it.Excluded) > 0 {
			l.items = append(l.items, item{p: words(fmt.Sprintf("Iteration %d also changed ", r.n)).then(names(it.Excluded)).add(", left out of its commit: the workflow token cannot push workflow files.")})
		}
		if len(it.Reverted) > 0 {
			l.items = append(l.items, item{p: revertedLine(r.n, it.Reverted)})
		}
		if len(it.Flaky) > 0 {
			l.items = append(l.items, item{p: words(fmt.Sprintf("In iteration %d, ", r.n)).then(names(it.Flaky)).add(" passed and failed on the same code (flaky).")})
		}
		if it.Rebuilt {
			l.items = append(l.items, item{p: words(fmt.Sprintf("Iteration %d was rebuilt from its commit after a crash: only its check result, score and size are known.", r.n))})
		}
	}
	for _, m := range f.st.Harness.Merges {
		if p := mergeLine(m); p != nil {
			l.items = append(l.items, item{p: p})
		}
	}
	for _, rs := range f.st.Harness.Resumes {
		why := map[state.StopKind]string{
			state.StopCancelled: "was cancelled", state.StopCrashed: "stopped unexpectedly", state.StopPaused: "was paused",
			state.StopHumanGate: "waited for a person",
		}[rs.Why]
		p := words(fmt.Sprintf("The run %s after %s and resumed from its saved state", nonEmpty(why, "stopped"), plural(rs.AfterIteration, "iteration", "iterations")))
		if rs.SetAside {
			p = p.add(fmt.Sprintf("; the unfinished iteration %d was set aside and ran again", rs.AfterIteration+1))
		}
		l.items = append(l.items, item{p: p.add(".")})
	}
	if pe := f.st.Harness.PushErrors; len(pe) > 0 {
		l.items = append(l.items, item{p: words(plural(len(pe), "push", "pushes") + " failed; the commits are kept locally. The last error: ").then(words(pe[len(pe)-1]))})
	}
	return l
}

// consequence says what became of a rejected iteration's changes.
func (b *builder) consequence(n int, decision string) string {
	if g := b.f.st.Harness.PendingGate; g != nil && g.Iteration == n && g.Decision == "" {
		return "it waits for a person's decision."
	}
	if decision == "reject" {
		return "a person rejected it and its changes were reverted."
	}
	switch b.f.st.Harness.Spec.Policy.Regression {
	case "warn":
		return "its changes stayed for the next iteration, but it can never be published."
	case "fail":
		return "the loop stopped there."
	}
	return "its changes were reverted."
}

// table is the five-column table: iteration, verdict, tests, score, commit.
func (b *builder) table() table {
	t := table{head: []string{"#", "verdict", "tests", "score", "commit"}}
	for _, r := range b.f.rows {
		name := "start"
		if r.n > 0 {
			name = fmt.Sprint(r.n)
		}
		if r.pub {
			name += " ★"
		}
		verdict := map[string]string{"✅": "✅ pass", "❌": "❌ fail", "⛔": "⛔ rejected"}[r.mark]
		commit := phrase{}
		if sha := validSHA(r.commit); sha != "" {
			if u := b.l.commit(sha); u != "" && !b.cli() {
				commit = link(shortSHA(sha), u)
			} else {
				commit = words(shortSHA(sha))
			}
		}
		t.rows = append(t.rows, []phrase{words(name), words(verdict), words(r.tests), words(r.score), commit})
	}
	return t
}

// perIteration is the time, size, tokens, cost, score change and check
// runs of every iteration.
func (b *builder) perIteration() []block {
	f := b.f
	var l list
	if bl := f.st.Harness.Baseline; bl != nil {
		l.items = append(l.items, item{p: words(fmt.Sprintf("start %s: the check took %s", f.rows[0].mark, dur(bl.Seconds)))})
	}
	for _, r := range f.iterations() {
		it := r.it
		sz := "size not recorded"
		if c := size(it); c != nil {
			sz = sizeText(c) + " from the start"
		}
		parts := []string{dur(it.DurationSeconds), sz}
		if it.Tokens > 0 {
			parts = append(parts, thousands(it.Tokens)+" tokens")
		}
		if it.CostUSD > 0 {
			c := usd(it.CostUSD)
			if it.CostEstimated {
				c += " (estimated)"
			}
			parts = append(parts, c)
		}
		switch r.delta {
		case "—":
			parts = append(parts, "no score (rejected)")
		case "first":
			parts = append(parts, "score "+r.score+" (the first score)")
		default:
			parts = append(parts, "score "+r.score+" ("+r.delta+" on the best so far)")
		}
		var sub []phrase
		if rl := runsLine(it.CriterionRuns); rl != nil {
			sub = append(sub, rl)
		}
		if t := agentTrouble(it.AgentClass); t != "" {
			sub = append(sub, words(t+": ").then(words(nonEmpty(it.AgentDetail, "no detail"))))
		}
		l.items = append(l.items, item{p: words(fmt.Sprintf("%d %s: %s", r.n, r.mark, strings.Join(parts, ", "))), sub: sub})
	}
	m := f.st.Metrics
	secs := 0.0 // the iterations' own durations, as listed above
	for _, it := range f.st.IterationHistory {
		secs += it.DurationSeconds
	}
	total := []string{plural(m.TotalIterations, "iteration", "iterations"), dur(secs)}
	if m.TotalTokens > 0 {
		total = append(total, thousands(m.TotalTokens)+" tokens")
	}
	if m.TotalCostUSD > 0 {
		c := usd(m.TotalCostUSD)
		for _, it := range f.st.IterationHistory {
			if it.CostEstimated {
				c += " (partly estimated from a price table)"
				break
			}
		}
		total = append(total, c)
	}
	h := f.st.Harness
	switch h.Provider {
	case "":
	case "scripted":
		total = append(total, "the demo's scripted agent")
	default:
		total = append(total, strings.TrimSpace(h.Provider+" "+h.AgentVersion))
	}
	return []block{l, para{lead: "In all:", p: words(strings.Join(total, ", ") + ".")}}
}

// scoreBreakdown shows how the published iteration's score adds up.
func (b *builder) scoreBreakdown() *details {
	p := b.f.pub
	if p == nil || p.it.QualityBreakdown == (state.QualityBreakdown{}) {
		return nil // not recorded
	}
	lines, total := scoreParts(p.it)
	var l list
	for _, x := range lines {
		l.items = append(l.items, item{p: x})
	}
	return &details{
		summary: fmt.Sprintf("How iteration %d scored %s", p.n, p.score),
		body:    []block{l, para{lead: "Total:", p: words(total + ".")}},
	}
}

// chart plots the tests passing per iteration, when there are four
// iterations or more and every check's tests are known.
func (b *builder) chart() *details {
	f := b.f
	if len(f.iterations()) < 4 || f.st.Harness.Baseline == nil || !f.st.Harness.Baseline.Known {
		return nil
	}
	labels := []string{`"start"`}
	vals := []string{fmt.Sprint(f.st.Harness.Baseline.Passing)}
	top := f.st.Harness.Baseline.Total
	for _, r := range f.iterations() {
		t := r.it.TestResults
		if t == nil {
			return nil
		}
		label := fmt.Sprint(r.n)
		switch {
		case r.mark == "⛔":
			label += " ⛔"
		case r.pub:
			label += " ★"
		}
		labels = append(labels, `"`+label+`"`)
		vals = append(vals, fmt.Sprint(t.Passed))
		top = max(top, t.Total)
	}
	src := fmt.Sprintf("xychart-beta\n  title \"Tests passing\"\n  x-axis [%s]\n  y-axis \"tests passing\" 0 --> %d\n  line [%s]\n",
		strings.Join(labels, ", "), top, strings.Join(vals, ", "))
	return &details{summary: "Tests passing per iteration (chart)", body: []block{chart{src: src}}}
}

// recommend is what to do now, in a sentence or two.
func (b *builder) recommend() []phrase {
	f := b.f
	st := f.st
	id := st.LoopID
	var out []phrase
	switch st.Status {
	case state.Completed:
		if f.pub == nil {
			return []phrase{words("Nothing to merge: the check already passes.")}
		}
		var reverted []string
		later := false
		for _, r := range f.iterations() {
			if r.it.Rejected && r.commit != "" {
				reverted = append(reverted, fmt.Sprint(r.n))
			}
			if r.n > f.pub.n {
				later = true
			}
		}
		switch {
		case len(reverted) == 1:
			out = append(out, words(fmt.Sprintf("Squash-merge recommended: iteration %s's reverted commit is in the history.", reverted[0])))
		case len(reverted) > 1:
			out = append(out, words(fmt.Sprintf("Squash-merge recommended: the reverted commits of iterations %s are in the history.", andWords(reverted))))
		case later:
			out = append(out, words("Squash-merge recommended: iterations after the published one are in the history."))
		}
		if h := f.pub.it.HeldOut; h != nil && (len(h.Edits) > 0 || h.Verdict == state.HeldOutWarning) {
			out = append(out, words("Review the test edits before merging."))
		}
		if len(out) == 0 {
			out = append(out, words("Review the change and merge it."))
		}
	case state.Failed:
		if f.pub == nil {
			out = append(out, words("Nothing to merge: no iteration qualified. Run the loop again with a clearer task, or check that the completion check can pass."))
			break
		}
		out = append(out, words(fmt.Sprintf("Do not merge as it is: iteration %d, on the branch, does not pass the check. Finish it from the branch, or run the loop again with more iterations or a narrower task.", f.pub.n)))
	case state.Paused, state.Crashed:
		if g := st.Harness.PendingGate; g != nil && g.Decision == "" {
			if b.cli() {
				out = append(out, words("Run ").then(code("agent-loop resume --approve "+id)).add(fmt.Sprintf(" to accept iteration %d, or ", g.Iteration)).
					then(code("agent-loop resume --reject "+id)).add(" to revert it and go on."))
			} else {
				tp := nonEmpty(b.o.TriggerPhrase, "/agent-loop")
				out = append(out, words("Comment ").then(code(tp+" approve")).add(fmt.Sprintf(" to accept iteration %d, or ", g.Iteration)).
					then(code(tp+" reject")).add(" to revert it and go on."))
			}
			break
		}
		if b.cli() {
			out = append(out, words("Run ").then(code("agent-loop resume "+id)).add(fmt.Sprintf(" to go on after iteration %d.", f.lastIteration())))
		} else {
			out = append(out, words(fmt.Sprintf("Re-run this workflow (or trigger it again on the same issue or pull request) to go on after iteration %d.", f.lastIteration())))
		}
	case state.Aborted:
		out = append(out, words("Aborted: the branch keeps every iteration; nothing was published."))
	case state.Running, state.Completing:
		if b.cli() {
			out = append(out, words("Follow it with ").then(code("agent-loop attach "+id)).add("."))
		} else {
			out = append(out, words("The loop is running; this report is updated after every iteration."))
		}
	}
	return out
}

// next is the recommendation, the links (Markdown) or the git commands
// (terminal).
func (b *builder) next() []block {
	f := b.f
	h := f.st.Harness
	var l list
	for _, p := range b.recommend() {
		l.items = append(l.items, item{p: p})
	}
	if !b.cli() {
		var ls []phrase
		if b.l.Run != "" {
			ls = append(ls, link("run log", b.l.Run))
		}
		if u := b.l.branch(h.Branch); u != "" {
			ls = append(ls, link("branch", u))
		}
		if f.pub != nil {
			if u := b.l.compare(h.BaseSHA, f.publishedSHA()); u != "" {
				ls = append(ls, link("compare view", u))
			}
		}
		if u := b.l.checks(); u != "" {
			ls = append(ls, link("the pull request's checks", u))
		}
		if len(ls) > 0 {
			l.items = append(l.items, item{p: join(ls, " · ")})
		}
	}
	doc := []block{para{lead: "Next:"}, l}
	if b.cli() && h.Branch != "" && len(f.iterations()) > 0 {
		back := nonEmpty(h.OriginalBranch, shortSHA(h.BaseSHA))
		base := shortSHA(h.BaseSHA)
		doc = append(doc, commands{lines: [][2]string{
			{"git log --oneline " + base + ".." + shellWord(h.Branch), "one commit per iteration"},
			{"git diff " + base + " " + shellWord(h.Branch), "the result"},
			{"git switch " + shellWord(h.Branch), "try it"},
			{"git switch " + shellWord(back), "and back"},
		}})
	}
	return doc
}

// shellWord quotes s for a POSIX shell when it holds anything but safe
// characters (a branch name may hold $ or a backtick).
func shellWord(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./+@%=:,", r)) {
			safe = false
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
