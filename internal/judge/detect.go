package judge

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/shellcmd"
	"github.com/aiwg/agent-loop/internal/testreport"
)

// The regression types of seed 004.
const (
	TestDeletion       = "test_deletion"
	TestSkipping       = "test_skipping"
	AssertionWeakening = "assertion_weakening"
	ErrorSuppression   = "error_suppression"
	ValidationBypass   = "validation_bypass"
	CoverageRegression = "coverage_regression"
	FeatureRemoval     = "feature_removal"
)

// The severities.
const (
	SeverityCritical = "critical"
	SeverityHigh     = "high"
	SeverityMedium   = "medium"
	SeverityLow      = "low"
)

// typeOrder is the order regressions are reported in.
var typeOrder = map[string]int{
	TestDeletion: 0, TestSkipping: 1, AssertionWeakening: 2, ValidationBypass: 3,
	ErrorSuppression: 4, FeatureRemoval: 5, CoverageRegression: 6,
}

// maxEvidence bounds the evidence listed for one regression.
const maxEvidence = 20

// coverageTolerance is how many points coverage may drop before it counts.
const coverageTolerance = 0.5

// Detect runs every detector on the parsed diff from the baseline commit and
// on the iteration's parsed test results. The result is deterministic: sorted
// by type, then by the first evidence.
func Detect(files []FileDiff, in loop.JudgeInput) []loop.Regression {
	return detect(files, in, shellcmd.Depends{})
}

func detect(files []FileDiff, in loop.JudgeInput, deps shellcmd.Depends) []loop.Regression {
	views := buildViews(files)
	crit := criterionOf(in.Criterion, deps)
	var regs []loop.Regression
	tests := analyseTests(views)
	regs = append(regs, tests.regressions()...)
	regs = append(regs, detectSkips(views, crit)...)
	regs = append(regs, tests.weakening(views)...)
	regs = append(regs, detectBypass(views, crit)...)
	regs = append(regs, detectSuppression(views)...)
	regs = append(regs, detectFeatureRemoval(views)...)
	regs = append(regs, detectFromResults(in, views, crit)...)
	sort.SliceStable(regs, func(i, j int) bool {
		a, b := regs[i], regs[j]
		if typeOrder[a.Type] != typeOrder[b.Type] {
			return typeOrder[a.Type] < typeOrder[b.Type]
		}
		return firstEvidence(a) < firstEvidence(b)
	})
	return regs
}

func firstEvidence(r loop.Regression) string {
	if len(r.Evidence) == 0 {
		return ""
	}
	return fmt.Sprintf("%s:%09d", r.Evidence[0].Path, r.Evidence[0].Line)
}

func capEvidence(ev []loop.Evidence) []loop.Evidence {
	sort.SliceStable(ev, func(i, j int) bool {
		if ev[i].Path != ev[j].Path {
			return ev[i].Path < ev[j].Path
		}
		return ev[i].Line < ev[j].Line
	})
	if len(ev) > maxEvidence {
		return ev[:maxEvidence]
	}
	return ev
}

func evidenceText(s string) string {
	return truncate(strings.TrimSpace(s), 160)
}

// plural returns "1 test" or "3 tests".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func listNames(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:max], ", ") + fmt.Sprintf(" and %d more", len(names)-max)
}

// ---- test deletion and assertion weakening ----

// unitRef is a test found on one side of one hunk of one file.
type unitRef struct {
	v    *fileView
	hunk int
	u    testUnit
	// asserts counts the non-trivial assertions among the changed lines of
	// its span.
	asserts int
	tokens  map[string]bool
}

func (r unitRef) side(old bool) []vline {
	if old {
		return r.v.oldSide[r.hunk]
	}
	return r.v.newSide[r.hunk]
}

type testAnalysis struct {
	removed  []unitRef // test declarations removed and not re-added
	rowsLost []loop.Evidence
	files    []loop.Evidence // test files deleted without recognisable tests
	// inRemovedUnit marks old-side lines that belong to a removed test.
	inRemovedUnit map[*fileView]map[[2]int]bool
}

func analyseTests(views []*fileView) *testAnalysis {
	ta := &testAnalysis{inRemovedUnit: map[*fileView]map[[2]int]bool{}}
	oldNames := map[string]bool{}
	newNames := map[string]bool{}
	var removed, added []unitRef
	for _, v := range views {
		if v.ignored || !v.test || !v.lang.isCode() {
			continue
		}
		for h := range v.oldSide {
			for _, u := range findUnits(v.lang, v.oldSide[h]) {
				oldNames[unitKey(v.lang, u.name)] = true
				if u.changed {
					removed = append(removed, newUnitRef(v, h, u, true))
				}
			}
			for _, u := range findUnits(v.lang, v.newSide[h]) {
				newNames[unitKey(v.lang, u.name)] = true
				if u.changed {
					added = append(added, newUnitRef(v, h, u, false))
				}
			}
		}
	}
	// A removed test whose name still exists was modified or moved.
	var gone []unitRef
	for _, r := range removed {
		if !newNames[unitKey(r.v.lang, r.u.name)] {
			gone = append(gone, r)
		}
	}
	var fresh []unitRef
	for _, a := range added {
		if !oldNames[unitKey(a.v.lang, a.u.name)] {
			fresh = append(fresh, a)
		}
	}
	// Pair what is gone with what is new: a rename (only the declaration
	// changed on both sides), a rewrite with a similar body, or a
	// replacement with at least as many real assertions.
	capacity := make([]int, len(fresh))
	for i, a := range fresh {
		capacity[i] = a.asserts
	}
	used := make([]bool, len(fresh))
	budget := maxPairings
	for _, r := range gone {
		matched := false
		for i, a := range fresh {
			if a.v.lang.family() != r.v.lang.family() || a.u.suite != r.u.suite {
				continue
			}
			if budget--; budget < 0 {
				break
			}
			rBody := r.u.bodyChanged(r.side(true))
			aBody := a.u.bodyChanged(a.side(false))
			if !used[i] && rBody == 0 && aBody == 0 && a.v == r.v {
				used[i], matched = true, true
				break
			}
			if !used[i] && jaccard(r.tokens, a.tokens) >= 0.5 {
				used[i], matched = true, true
				break
			}
			need := max(r.asserts, 1)
			if !r.u.suite && capacity[i] >= need {
				capacity[i] -= need
				used[i], matched = true, true
				break
			}
		}
		if !matched {
			ta.removed = append(ta.removed, r)
		}
	}
	// Paired removals still own their old assertions: they were compared
	// as a whole above.
	for _, r := range removed {
		m := ta.inRemovedUnit[r.v]
		if m == nil {
			m = map[[2]int]bool{}
			ta.inRemovedUnit[r.v] = m
		}
		if !newNames[unitKey(r.v.lang, r.u.name)] {
			for i := r.u.start(); i < r.u.end; i++ {
				m[[2]int{r.hunk, i}] = true
			}
		}
	}
	// Table rows: cases removed from a test table, net of cases added.
	for _, v := range views {
		if v.ignored || !v.test || !v.lang.isCode() {
			continue
		}
		var lost []loop.Evidence
		addedRows := 0
		for h := range v.oldSide {
			for _, i := range caseRows(v.lang, v.oldSide[h], v.sections[h]) {
				l := v.oldSide[h][i]
				if l.changed && !ta.inRemovedUnit[v][[2]int{h, i}] {
					lost = append(lost, loop.Evidence{Path: v.path, Line: l.num, Text: evidenceText(l.text)})
				}
			}
			for _, i := range caseRows(v.lang, v.newSide[h], v.sections[h]) {
				if v.newSide[h][i].changed {
					addedRows++
				}
			}
		}
		if len(lost) > addedRows {
			ta.rowsLost = append(ta.rowsLost, lost[:len(lost)-addedRows]...)
		}
	}
	// Deleted test files the test finder could not read.
	for _, v := range views {
		if v.fd.Status != StatusDeleted || v.ignored || !isTestPath(v.fd.OldPath) {
			continue
		}
		found := false
		for h := range v.oldSide {
			if len(findUnits(v.lang, v.oldSide[h])) > 0 {
				found = true
			}
		}
		if !found && v.fd.OldPath != "" && !strings.HasSuffix(v.fd.OldPath, "conftest.py") {
			ta.files = append(ta.files, loop.Evidence{Path: v.fd.OldPath, Text: "test file deleted"})
		}
	}
	return ta
}

func newUnitRef(v *fileView, h int, u testUnit, old bool) unitRef {
	side := v.newSide[h]
	if old {
		side = v.oldSide[h]
	}
	r := unitRef{v: v, hunk: h, u: u}
	var body strings.Builder
	for _, a := range findAssertions(v.lang, side[u.start():u.end]) {
		if side[u.start()+a.idx].changed && a.strength > strengthTrivial {
			r.asserts++
		}
	}
	for i := u.start(); i < u.end; i++ {
		if i != u.head && i != u.attr {
			body.WriteString(side[i].text)
			body.WriteByte('\n')
		}
	}
	r.tokens = tokenSet(body.String(), nil)
	return r
}

func unitKey(l language, name string) string {
	return string(l.family()) + "\x00" + norm(name)
}

func (ta *testAnalysis) regressions() []loop.Regression {
	var regs []loop.Regression
	if len(ta.removed) > 0 || len(ta.files) > 0 {
		var ev []loop.Evidence
		var names []string
		for _, r := range ta.removed {
			side := r.side(true)
			l := side[r.u.head]
			if r.u.attr >= 0 && side[r.u.attr].changed && !l.changed {
				// The declaration stayed; its test attribute went.
				a := side[r.u.attr]
				ev = append(ev, loop.Evidence{Path: r.v.fd.OldPath, Line: a.num, Text: evidenceText(a.text)})
				names = append(names, r.u.name+" (test attribute removed)")
				continue
			}
			path := r.v.fd.OldPath
			if path == "" {
				path = r.v.path
			}
			ev = append(ev, loop.Evidence{Path: path, Line: l.num, Text: evidenceText(l.text)})
			if r.u.suite {
				names = append(names, r.u.name+" (suite)")
			} else {
				names = append(names, r.u.name)
			}
		}
		for _, f := range ta.files {
			ev = append(ev, f)
			names = append(names, f.Path)
		}
		summary := fmt.Sprintf("%s deleted: %s", plural(len(names), "test"), listNames(names, 5))
		regs = append(regs, loop.Regression{
			Type: TestDeletion, Severity: SeverityCritical, Summary: summary,
			Evidence: capEvidence(ev), Baseline: names, Current: nil,
		})
	}
	if len(ta.rowsLost) > 0 {
		regs = append(regs, loop.Regression{
			Type: TestDeletion, Severity: SeverityCritical,
			Summary:  fmt.Sprintf("%s removed from test tables", plural(len(ta.rowsLost), "test case")),
			Evidence: capEvidence(ta.rowsLost), Baseline: len(ta.rowsLost), Current: 0,
		})
	}
	return regs
}

// weakening finds assertions removed from test code without an equivalent
// replacement, and trivial assertions added.
func (ta *testAnalysis) weakening(views []*fileView) []loop.Regression {
	type found struct {
		v    *fileView
		a    assertion
		l    vline
		test string // the enclosing test (or the hunk's section)
	}
	var removed, added []found
	removedTrivial := lineBag{}
	for _, v := range views {
		if v.ignored || !v.test || !v.lang.isCode() {
			continue
		}
		for h := range v.oldSide {
			oldTests := enclosingTests(v, h, v.oldSide[h])
			newTests := enclosingTests(v, h, v.newSide[h])
			for _, a := range findAssertions(v.lang, v.oldSide[h]) {
				l := v.oldSide[h][a.idx]
				if !l.changed {
					continue
				}
				if a.strength == strengthTrivial {
					removedTrivial[norm(l.text)]++
					continue
				}
				if ta.inRemovedUnit[v][[2]int{h, a.idx}] {
					continue
				}
				removed = append(removed, found{v, a, l, oldTests[a.idx]})
			}
			for _, a := range findAssertions(v.lang, v.newSide[h]) {
				l := v.newSide[h][a.idx]
				if l.changed {
					added = append(added, found{v, a, l, newTests[a.idx]})
				}
			}
		}
	}
	var regs []loop.Regression
	// Trivial assertions added.
	var trivial []loop.Evidence
	for _, f := range added {
		if f.a.strength == strengthTrivial && !removedTrivial.take(f.l.text) {
			trivial = append(trivial, loop.Evidence{Path: f.v.path, Line: f.l.num, Text: evidenceText(f.l.text)})
		}
	}
	if len(trivial) > 0 {
		regs = append(regs, loop.Regression{
			Type: AssertionWeakening, Severity: SeverityCritical,
			Summary:  fmt.Sprintf("%s that cannot fail added to tests", plural(len(trivial), "trivial assertion")),
			Evidence: capEvidence(trivial), Baseline: nil, Current: len(trivial),
		})
	}
	// Removed assertions without an equivalent replacement: an added
	// assertion at least as strong, about the same things.
	var lost []loop.Evidence
	weaker := 0
	// Index the real added assertions: by token, by enclosing test, and
	// per file for those without tokens.
	byToken := map[string][]int{}
	byTest := map[string][]int{}
	byFile := map[*fileView][]int{}
	noTokens := map[*fileView][]int{}
	for i, a := range added {
		if a.a.strength == strengthTrivial {
			continue
		}
		for tok := range a.a.tokens {
			byToken[tok] = append(byToken[tok], i)
		}
		byTest[a.v.path+"\x00"+a.test] = append(byTest[a.v.path+"\x00"+a.test], i)
		byFile[a.v] = append(byFile[a.v], i)
		if len(a.a.tokens) == 0 {
			noTokens[a.v] = append(noTokens[a.v], i)
		}
	}
	for _, r := range removed {
		covered, weak := false, false
		seen := map[int]bool{}
		lists := [][]int{byTest[r.v.path+"\x00"+r.test], noTokens[r.v]}
		if len(r.a.tokens) == 0 {
			lists = append(lists, byFile[r.v])
		}
		for tok := range r.a.tokens {
			lists = append(lists, byToken[tok])
		}
		budget := maxCandidates
	candidates:
		for _, list := range lists {
			for _, i := range list {
				if seen[i] {
					continue
				}
				seen[i] = true
				if budget--; budget < 0 {
					break candidates
				}
				a := added[i]
				if a.v.lang.family() != r.v.lang.family() {
					continue
				}
				if a.a.strength >= r.a.strength {
					covered = true
					break candidates
				}
				weak = true
			}
		}
		if !covered {
			if weak {
				weaker++
			}
			lost = append(lost, loop.Evidence{Path: r.v.fd.OldPath, Line: r.l.num, Text: evidenceText(r.l.text)})
		}
	}
	if len(lost) > 0 {
		summary := fmt.Sprintf("%s removed from tests without an equivalent replacement", plural(len(lost), "assertion"))
		if weaker == len(lost) {
			summary = fmt.Sprintf("%s loosened to weaker checks", plural(len(lost), "assertion"))
		} else if weaker > 0 {
			summary = fmt.Sprintf("%s removed from tests or loosened to weaker checks", plural(len(lost), "assertion"))
		}
		regs = append(regs, loop.Regression{
			Type: AssertionWeakening, Severity: SeverityCritical, Summary: summary,
			Evidence: capEvidence(lost), Baseline: len(removed), Current: len(removed) - len(lost),
		})
	}
	return regs
}

// enclosingTests names, for each line of a hunk side, the test it belongs
// to ("test:NAME"), or the hunk's section when no test is visible.
func enclosingTests(v *fileView, h int, side []vline) []string {
	out := make([]string, len(side))
	for i := range out {
		out[i] = "section:" + v.sections[h]
	}
	for _, u := range findUnits(v.lang, side) {
		if u.suite {
			continue
		}
		for i := u.start(); i < u.end && i < len(out); i++ {
			out[i] = "test:" + u.name
		}
	}
	return out
}

// maxCandidates bounds the comparisons made for one removed test or
// assertion, so that a huge diff is judged in bounded time.
const maxCandidates = 2000

// maxPairings bounds the comparisons between removed and added tests (or
// symbols) of one diff. Past it, what is left unpaired counts as removed.
const maxPairings = 200_000

// ---- skipping ----

func detectSkips(views []*fileView, crit criterion) []loop.Regression {
	removed := lineBag{}
	for _, v := range views {
		for _, l := range changedLines(v.oldSide) {
			if isSkipLine(v, l.text) || isFilterLine(v, l.text, crit) {
				removed[norm(l.text)]++
			}
		}
	}
	var markers, filters []loop.Evidence
	for _, v := range views {
		if v.ignored {
			continue
		}
		for _, l := range changedLines(v.newSide) {
			switch {
			case isSkipLine(v, l.text):
				if !removed.take(l.text) {
					markers = append(markers, loop.Evidence{Path: v.path, Line: l.num, Text: evidenceText(l.text)})
				}
			case isFilterLine(v, l.text, crit):
				if !removed.take(l.text) {
					filters = append(filters, loop.Evidence{Path: v.path, Line: l.num, Text: evidenceText(l.text)})
				}
			}
		}
	}
	var regs []loop.Regression
	if len(markers) > 0 {
		only := 0
		for _, e := range markers {
			if strings.Contains(e.Text, ".only") || strings.HasPrefix(e.Text, "fit") || strings.HasPrefix(e.Text, "fdescribe") {
				only++
			}
		}
		summary := fmt.Sprintf("%s added to tests", plural(len(markers), "skip marker"))
		if only == len(markers) {
			summary = fmt.Sprintf("%s added: every other test is skipped", plural(len(markers), ".only focus marker"))
		}
		regs = append(regs, loop.Regression{
			Type: TestSkipping, Severity: SeverityCritical, Summary: summary,
			Evidence: capEvidence(markers), Baseline: 0, Current: len(markers),
		})
	}
	if len(filters) > 0 {
		regs = append(regs, loop.Regression{
			Type: TestSkipping, Severity: SeverityCritical,
			Summary:  fmt.Sprintf("%s narrowing which tests run added to the test command or its configuration", plural(len(filters), "filter")),
			Evidence: capEvidence(filters), Baseline: nil, Current: len(filters),
		})
	}
	return regs
}

func isSkipLine(v *fileView, text string) bool {
	if !v.lang.isCode() || isCommentLine(v.lang, text) {
		return false
	}
	if !v.test && v.lang != langRust {
		return false
	}
	for _, re := range skipRes[v.lang] {
		if re.MatchString(text) {
			return true
		}
	}
	return false
}

func isFilterLine(v *fileView, text string, crit criterion) bool {
	if !crit.isTestConfig(v.path) || isCommentLine(v.lang, text) {
		return false
	}
	for _, re := range filterRes {
		if re.MatchString(text) {
			return true
		}
	}
	return false
}

// ---- from the parsed test results ----

func detectFromResults(in loop.JudgeInput, views []*fileView, crit criterion) []loop.Regression {
	var regs []loop.Regression
	base, cur := in.Baseline.Check.Tests, in.Check.Tests
	// Counts only mean something when the run produced results: a change
	// that breaks the build also "loses" tests. Trust a drop when the check
	// passed or the diff touched tests or the criterion's files.
	trusted := in.Check.Passed || touchesTests(views, crit)
	if base.Known && cur.Known && trusted && cur.Total < base.Total {
		ev := touchedTestEvidence(views, crit)
		if len(ev) == 0 {
			ev = []loop.Evidence{{Text: fmt.Sprintf("%s reported %d tests at the baseline and %d now", cur.Runner, base.Total, cur.Total)}}
		}
		regs = append(regs, loop.Regression{
			Type: TestDeletion, Severity: SeverityCritical,
			Summary:  fmt.Sprintf("test count dropped from %d to %d", base.Total, cur.Total),
			Evidence: capEvidence(ev), Baseline: base.Total, Current: cur.Total,
		})
	}
	if base.Known && cur.Known && trusted && cur.Skipped > base.Skipped {
		ev := touchedTestEvidence(views, crit)
		if len(ev) == 0 {
			ev = []loop.Evidence{{Text: fmt.Sprintf("%s reported %d skipped tests at the baseline and %d now", cur.Runner, base.Skipped, cur.Skipped)}}
		}
		regs = append(regs, loop.Regression{
			Type: TestSkipping, Severity: SeverityCritical,
			Summary:  fmt.Sprintf("skipped tests went from %d to %d", base.Skipped, cur.Skipped),
			Evidence: capEvidence(ev), Baseline: base.Skipped, Current: cur.Skipped,
		})
	}
	if missing := missingTests(base, cur); len(missing) > 0 && trusted {
		var ev []loop.Evidence
		for _, n := range missing {
			ev = append(ev, loop.Evidence{Text: n})
		}
		regs = append(regs, loop.Regression{
			Type: TestDeletion, Severity: SeverityCritical,
			Summary:  fmt.Sprintf("%s of the baseline no longer ran: %s", plural(len(missing), "test"), listNames(missing, 5)),
			Evidence: capEvidence(ev), Baseline: missing, Current: nil,
		})
	}
	if base.Coverage != nil && cur.Coverage != nil && *cur.Coverage < *base.Coverage-coverageTolerance {
		ev := untestedCodeEvidence(views)
		if len(ev) == 0 {
			ev = []loop.Evidence{{Text: fmt.Sprintf("coverage %.1f%% at the baseline, %.1f%% now", *base.Coverage, *cur.Coverage)}}
		}
		regs = append(regs, loop.Regression{
			Type: CoverageRegression, Severity: SeverityMedium,
			Summary:  fmt.Sprintf("coverage dropped from %.1f%% to %.1f%%", *base.Coverage, *cur.Coverage),
			Evidence: capEvidence(ev), Baseline: *base.Coverage, Current: *cur.Coverage,
		})
	}
	return regs
}

// missingTests lists baseline tests (passing or failing) the current run
// no longer reports at all. It needs both runs to list passing names.
func missingTests(base, cur testreport.Summary) []string {
	if !base.Known || !cur.Known || len(base.Passing) == 0 || len(cur.Passing) == 0 {
		return nil
	}
	now := map[string]bool{}
	for _, n := range cur.Passing {
		now[n] = true
	}
	for _, n := range cur.Failing {
		now[n] = true
	}
	seen := map[string]bool{}
	var out []string
	for _, list := range [][]string{base.Passing, base.Failing} {
		for _, n := range list {
			if !now[n] && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out
}

// touchedTestEvidence lists the test and criterion files the diff changed.
func touchedTestEvidence(views []*fileView, crit criterion) []loop.Evidence {
	var ev []loop.Evidence
	for _, v := range views {
		if v.ignored || !(v.test || crit.isTestConfig(v.path) || isSnapshotPath(v.path)) {
			continue
		}
		a, r := v.fd.Counts()
		ev = append(ev, loop.Evidence{Path: v.path, Text: fmt.Sprintf("%s (+%d -%d)", v.fd.Status, a, r)})
	}
	return ev
}

// untestedCodeEvidence lists code files that gained lines while no test
// file in the same directory changed.
func untestedCodeEvidence(views []*fileView) []loop.Evidence {
	testedDirs := map[string]bool{}
	for _, v := range views {
		if v.test {
			testedDirs[path.Dir(v.path)] = true
		}
	}
	var ev []loop.Evidence
	for _, v := range views {
		if v.ignored || v.test || !v.lang.isCode() || testedDirs[path.Dir(v.path)] {
			continue
		}
		added := changedLines(v.newSide)
		if len(added) == 0 {
			continue
		}
		ev = append(ev, loop.Evidence{Path: v.path, Line: added[0].num, Text: fmt.Sprintf("%s added with no test change beside them", plural(len(added), "line"))})
	}
	return ev
}

func touchesTests(views []*fileView, crit criterion) bool {
	for _, v := range views {
		if v.test || crit.isTestConfig(v.path) || isSnapshotPath(v.path) {
			return true
		}
	}
	return false
}
