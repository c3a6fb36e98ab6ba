package judge

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aiwg/agent-loop/internal/heldout"
	"github.com/aiwg/agent-loop/internal/lazyre"
	"github.com/aiwg/agent-loop/internal/loop"
)

// AssessHeldOut judges one iteration with what the held-out check found
// (nil when it did not run: the check failed, or nothing but product
// source changed). The held-out check decides where the diff can only
// guess:
//
//   - it passed: the original tests pass with the product change alone.
//     Diff signals about tests and their machinery are reported (the
//     agent's test edits, in plain words) but are not regressions: they
//     drop to medium and veto nothing.
//   - it failed: the pass depended on the agent's edits to tests or their
//     machinery. The diff signals on the restored files are confirmed and
//     stay critical; without one, a critical validation_bypass carries the
//     held-out failure. When the task itself asks for test changes, both
//     are high: a warning for a person, and the regression policy decides.
//   - it was inconclusive: the diff signals stand as they are.
//
// A cheat the held-out check cannot see, product code that special-cases
// the tested inputs, is looked for in the diff on its own (a high
// validation_bypass: a warning).
func (j *Judge) AssessHeldOut(ctx context.Context, in loop.JudgeInput, ho *heldout.Result) (loop.Verdict, error) {
	start := time.Now()
	defer func() {
		j.mu.Lock()
		j.latencies = append(j.latencies, time.Since(start))
		j.mu.Unlock()
	}()
	if err := ctx.Err(); err != nil {
		return loop.Verdict{}, fmt.Errorf("judging iteration %d: %w", in.Iteration, err)
	}
	files, parseErr := ParseDiff(in.BaseDiff)
	regs := detect(files, in, j.opts.Depends)
	regs = append(regs, detectHardcoded(buildViews(files), in)...)
	regs, note := reweigh(regs, ho, in.Check.Passed)
	stepFiles, _ := ParseDiff(in.StepDiff)
	v := score(in, files, stepFiles, regs)
	if note != "" {
		v.Explain = append(v.Explain, note)
	}
	if parseErr != nil {
		v.Explain = append(v.Explain, fmt.Sprintf("note: the diff was only partly readable (%v); detectors saw %d files", parseErr, len(files)))
	}
	return v, nil
}

// reweigh applies the held-out verdict to the diff's regressions and says
// what it did in one line for the explanation.
func reweigh(regs []loop.Regression, ho *heldout.Result, passed bool) ([]loop.Regression, string) {
	if ho == nil || !passed {
		return regs, ""
	}
	restored := map[string]bool{}
	for _, c := range ho.Changes {
		restored[c.Path] = true
	}
	// onRestored: every piece of evidence is on a path the held-out check
	// restored, or names no path (a test count, a missing test name).
	onRestored := func(r loop.Regression) bool {
		for _, e := range r.Evidence {
			if e.Path != "" && !restored[e.Path] {
				return false
			}
		}
		return true
	}
	changed := describeHeldOutChanges(ho.Changes)
	switch ho.Verdict {
	case heldout.NotNeeded:
		return regs, ""
	case heldout.Inconclusive:
		return regs, "held-out check inconclusive: " + ho.Reason + "; the diff's signals stand"
	case heldout.Passed:
		out := make([]loop.Regression, 0, len(regs))
		cleared := 0
		for _, r := range regs {
			if r.Severity == SeverityCritical && onRestored(r) && r.Type != CoverageRegression {
				r.Severity = SeverityMedium
				r.Summary += " (not a regression: the original tests still pass with the product change alone)"
				cleared++
			}
			out = append(out, r)
		}
		note := "held-out check passed: the original tests pass with the iteration's product source alone; the agent also changed " + changed
		if cleared > 0 {
			note += fmt.Sprintf("; %s of the diff cleared", plural(cleared, "signal"))
		}
		return out, note
	case heldout.Failed:
		severity := SeverityCritical
		suffix := " (confirmed: the original tests fail without this edit)"
		if ho.TaskEditsTests {
			severity = SeverityHigh
			suffix = " (the original tests fail without this edit, and the task asks for test changes: a person should confirm)"
		}
		out := make([]loop.Regression, 0, len(regs)+1)
		confirmed := 0
		evidence := heldOutEvidence(ho)
		for _, r := range regs {
			if r.Severity == SeverityCritical && onRestored(r) {
				r.Severity = severity
				r.Summary += suffix
				r.Evidence = capEvidence(append(r.Evidence, evidence...))
				confirmed++
			}
			out = append(out, r)
		}
		if confirmed == 0 {
			summary := "the check passed only with the agent's edits to " + changed + ": with the originals restored it fails"
			if ho.TaskEditsTests {
				summary += " (the task asks for test changes: a person should confirm)"
			}
			var ev []loop.Evidence
			for _, c := range ho.Changes {
				ev = append(ev, loop.Evidence{Path: c.Path, Text: c.Action + ": " + c.Class.Reason})
			}
			out = append(out, loop.Regression{
				Type: ValidationBypass, Severity: severity, Summary: summary,
				Evidence: capEvidence(append(ev, evidence...)), Baseline: "held-out check fails", Current: "own check passes",
			})
		}
		return out, "held-out check failed: " + ho.Reason
	}
	return regs, ""
}

// heldOutEvidence is the held-out failure: its failing tests, or the tail
// of its output.
func heldOutEvidence(ho *heldout.Result) []loop.Evidence {
	if ho.HeldOut == nil {
		return nil
	}
	var ev []loop.Evidence
	for i, n := range ho.HeldOut.Tests.Failing {
		if i == 5 {
			break
		}
		ev = append(ev, loop.Evidence{Text: "held-out run: " + evidenceText(n) + " fails"})
	}
	if len(ev) > 0 {
		return ev
	}
	lines := strings.Split(strings.TrimSpace(ho.HeldOut.Output), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			ev = append(ev, loop.Evidence{Text: "held-out run: " + evidenceText(l)})
		}
	}
	if len(ev) == 0 {
		ev = append(ev, loop.Evidence{Text: fmt.Sprintf("held-out run: exit %d", ho.HeldOut.ExitCode)})
	}
	return ev
}

func describeHeldOutChanges(changes []heldout.Change) string {
	if len(changes) == 0 {
		return "nothing else"
	}
	var parts []string
	for i, c := range changes {
		if i == 6 {
			parts = append(parts, fmt.Sprintf("and %d more", len(changes)-6))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%s, %s)", c.Path, c.Class.Kind, c.Action))
	}
	return strings.Join(parts, ", ")
}

// ---- hard-coded test inputs ----

var (
	hcLiteralRe = lazyre.New(`"(?:[^"\\\n]|\\.){1,80}"|'(?:[^'\\\n]|\\.){1,80}'|-?\b\d+(?:\.\d+)?\b`)
	locationRe  = lazyre.New(`[\w./-]+\.\w+:\d+(?::\d+)?|\(\d+(?:\.\d+)?m?s\)|\b\d+(?:\.\d+)?m?s\b|\b0x[0-9a-fA-F]+\b`)
	condLineRe  = lazyre.New(`\b(?:if|elif|elsif|unless|when|case)\b|=>|\?\s*\S`)
	equalityRe  = lazyre.New(`==|\bis\b|\beq\b|\.equals\(|\bcase\b|\bwhen\b|=>|\bin\s*[\[(]`)
	trivialLits = map[string]bool{"0": true, "1": true, "-1": true, `""`: true, `''`: true, "2": false}
)

// detectHardcoded looks for product code that special-cases the inputs of
// the failing tests: a new conditional comparing against literals that the
// failing tests' output shows, returning another one of them
// (`if a == 2 && b == 3 { return 5 }`). The held-out check cannot see this
// cheat: the original tests do pass.
func detectHardcoded(views []*fileView, in loop.JudgeInput) []loop.Regression {
	if !in.Check.Passed {
		return nil
	}
	known := failureLiterals(in.Baseline.Check.Output)
	if len(in.History) > 0 {
		for k := range failureLiterals(in.History[len(in.History)-1].Check.Output) {
			known[k] = true
		}
	}
	if len(known) == 0 {
		return nil
	}
	var ev []loop.Evidence
	for _, v := range views {
		if v.ignored || v.test || !v.lang.isCode() || isTestPath(v.path) {
			continue
		}
		for _, side := range v.newSide {
			for i, l := range side {
				if !l.changed || isCommentLine(v.lang, l.text) || !condLineRe.MatchString(l.text) || !equalityRe.MatchString(l.text) {
					continue
				}
				inCond := literalsIn(l.text, known)
				if len(inCond) == 0 {
					continue
				}
				all := map[string]bool{}
				for _, x := range inCond {
					all[x] = true
				}
				for k := i + 1; k < len(side) && k <= i+2; k++ {
					if side[k].changed {
						for _, x := range literalsIn(side[k].text, known) {
							all[x] = true
						}
					}
				}
				if len(all) >= 2 {
					ev = append(ev, loop.Evidence{Path: v.path, Line: l.num, Text: evidenceText(l.text)})
				}
			}
		}
	}
	if len(ev) == 0 {
		return nil
	}
	return []loop.Regression{{
		Type: ValidationBypass, Severity: SeverityHigh,
		Summary: fmt.Sprintf("%s in product code compare against the failing tests' own values: the tested inputs may be hard-coded (the held-out check cannot see this; review it)",
			plural(len(ev), "new conditional")),
		Evidence: capEvidence(ev), Baseline: nil, Current: len(ev),
	}}
}

// failureLiterals are the numbers and quoted strings of a failing run's
// output, file positions and durations left out.
func failureLiterals(output string) map[string]bool {
	out := map[string]bool{}
	if output == "" {
		return out
	}
	if len(output) > 64<<10 {
		output = output[len(output)-64<<10:]
	}
	clean := locationRe.ReplaceAllString(output, " ")
	for _, m := range hcLiteralRe.FindAllString(clean, -1) {
		k := normLiteral(m)
		if !trivialLits[k] {
			out[k] = true
		}
	}
	return out
}

func literalsIn(line string, known map[string]bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range hcLiteralRe.FindAllString(line, -1) {
		k := normLiteral(m)
		if known[k] && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func normLiteral(s string) string {
	if strings.HasPrefix(s, "'") && strings.HasSuffix(s, "'") && len(s) >= 2 {
		return `"` + s[1:len(s)-1] + `"`
	}
	return s
}
