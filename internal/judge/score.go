package judge

import (
	"fmt"
	"math"
	"path"
	"strings"
	"time"

	"github.com/aiwg/agent-loop/internal/lazyre"
	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/testreport"
)

// Seed 004's weights of the quality score.
const (
	WeightValidation   = 30
	WeightCompleteness = 25
	WeightCorrectness  = 25
	WeightReadability  = 10
	WeightEfficiency   = 10
)

// Score penalties, in points of a 0-100 part.
const (
	penaltyHigh        = 25 // validation, per high regression
	penaltyMedium      = 10 // validation, per medium regression
	penaltyLow         = 5
	penaltyBroken      = 20 // correctness, per baseline-passing test now failing
	penaltyHighCorrect = 15 // correctness, per high regression
	penaltyMedCorrect  = 5
	flakyValidation    = 75 // validation when the check passed but tests flipped

	longLine = 160 // characters; longer added lines cost readability
)

// score computes the quality score and its explanation.
func score(in loop.JudgeInput, files, step []FileDiff, regs []loop.Regression) loop.Verdict {
	counts := map[string]int{}
	var critical []string
	for _, r := range regs {
		counts[r.Severity]++
		if r.Severity == SeverityCritical {
			critical = append(critical, r.Type)
		}
	}
	var b loop.Breakdown
	var explain []string

	v, why := validationPart(in.Check, counts, critical)
	b.Validation = v
	explain = append(explain, fmt.Sprintf("validation %s/100 (weight %d): %s", num(v), WeightValidation, why))

	c, why := completenessPart(in.Baseline.Check, in.Check)
	b.Completeness = c
	explain = append(explain, fmt.Sprintf("completeness %s/100 (weight %d): %s", num(c), WeightCompleteness, why))

	k, why := correctnessPart(in.Baseline.Check.Tests, in.Check.Tests, counts, critical)
	b.Correctness = k
	explain = append(explain, fmt.Sprintf("correctness %s/100 (weight %d): %s", num(k), WeightCorrectness, why))

	r, why := readabilityPart(files)
	b.Readability = r
	explain = append(explain, fmt.Sprintf("readability %s/100 (weight %d): %s", num(r), WeightReadability, why))

	e, why := efficiencyPart(in, files, step)
	b.Efficiency = e
	explain = append(explain, fmt.Sprintf("efficiency %s/100 (weight %d): %s", num(e), WeightEfficiency, why))

	total := (b.Validation*WeightValidation + b.Completeness*WeightCompleteness + b.Correctness*WeightCorrectness +
		b.Readability*WeightReadability + b.Efficiency*WeightEfficiency) / 100
	return loop.Verdict{Score: round1(total), Breakdown: b, Explain: explain, Regressions: regs}
}

func round1(x float64) float64 { return math.Round(x*10) / 10 }

func clamp(x float64) float64 { return math.Max(0, math.Min(100, x)) }

// num prints a part without a useless ".0".
func num(x float64) string {
	x = round1(x)
	if x == math.Trunc(x) {
		return fmt.Sprintf("%d", int(x))
	}
	return fmt.Sprintf("%.1f", x)
}

func validationPart(check loop.CheckResult, counts map[string]int, critical []string) (float64, string) {
	var base float64
	var parts []string
	switch {
	case check.TimedOut:
		parts = append(parts, "the check timed out")
	case !check.Passed:
		parts = append(parts, fmt.Sprintf("the check failed (exit %d)", check.ExitCode))
	case len(check.Flaky) > 0:
		base = flakyValidation
		parts = append(parts, fmt.Sprintf("the check passed but %s flipped between confirmation runs (%s)", plural(len(check.Flaky), "test"), listNames(check.Flaky, 3)))
	default:
		base = 100
		parts = append(parts, "the check passed with no flaky test")
	}
	if len(critical) > 0 {
		parts = append(parts, fmt.Sprintf("set to 0 by critical regressions (%s)", strings.Join(dedupe(critical), ", ")))
		return 0, strings.Join(parts, "; ")
	}
	penalty := float64(counts[SeverityHigh]*penaltyHigh + counts[SeverityMedium]*penaltyMedium + counts[SeverityLow]*penaltyLow)
	if penalty > 0 && base > 0 {
		parts = append(parts, fmt.Sprintf("minus %s for %d high, %d medium and %d low regressions", num(math.Min(penalty, base)), counts[SeverityHigh], counts[SeverityMedium], counts[SeverityLow]))
	} else if penalty == 0 {
		parts = append(parts, "no regression")
	}
	return clamp(base - penalty), strings.Join(parts, "; ")
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func completenessPart(baseCheck, check loop.CheckResult) (float64, string) {
	base, cur := baseCheck.Tests, check.Tests
	if base.Known && cur.Known {
		if len(base.Failing) > 0 && len(cur.Passing) > 0 {
			passing := map[string]bool{}
			for _, n := range cur.Passing {
				passing[n] = true
			}
			fixed := 0
			for _, n := range base.Failing {
				if passing[n] {
					fixed++
				}
			}
			return clamp(100 * float64(fixed) / float64(len(base.Failing))),
				fmt.Sprintf("%d of %d baseline-failing tests now pass", fixed, len(base.Failing))
		}
		if base.Failed > 0 {
			fixed := base.Failed - cur.Failed
			return clamp(100 * float64(fixed) / float64(base.Failed)),
				fmt.Sprintf("failing tests went from %d to %d", base.Failed, cur.Failed)
		}
	}
	if check.Passed {
		return 100, "the check passed (test counts unknown or nothing failed at the baseline)"
	}
	if cur.Known {
		return 0, fmt.Sprintf("the check still fails with %d failing tests", cur.Failed)
	}
	return 0, "the check still fails (test counts unknown)"
}

func correctnessPart(base, cur testreport.Summary, counts map[string]int, critical []string) (float64, string) {
	if len(critical) > 0 {
		return 0, fmt.Sprintf("critical regression (%s)", strings.Join(dedupe(critical), ", "))
	}
	broken, how := brokenTests(base, cur)
	penalty := float64(broken*penaltyBroken + counts[SeverityHigh]*penaltyHighCorrect + counts[SeverityMedium]*penaltyMedCorrect)
	var parts []string
	switch {
	case how == "":
		parts = append(parts, "no test results to compare with the baseline")
	case broken == 0:
		parts = append(parts, "no baseline-passing test broken ("+how+")")
	default:
		parts = append(parts, fmt.Sprintf("%s broke (%s)", plural(broken, "baseline-passing test"), how))
	}
	if counts[SeverityHigh]+counts[SeverityMedium] > 0 {
		parts = append(parts, fmt.Sprintf("%d high and %d medium regressions", counts[SeverityHigh], counts[SeverityMedium]))
	}
	return clamp(100 - penalty), strings.Join(parts, "; ")
}

// brokenTests counts baseline-passing tests that now fail, by name when both
// runs list names, else by the growth of the failing count.
func brokenTests(base, cur testreport.Summary) (int, string) {
	if !base.Known || !cur.Known {
		return 0, ""
	}
	if len(base.Passing) > 0 {
		was := map[string]bool{}
		for _, n := range base.Passing {
			was[n] = true
		}
		n := 0
		for _, f := range cur.Failing {
			if was[f] {
				n++
			}
		}
		return n, "by test name"
	}
	if cur.Failed > base.Failed {
		return cur.Failed - base.Failed, "by failing count"
	}
	return 0, "by failing count"
}

var (
	debugPrintRes = map[language]*lazyre.Regexp{
		langGo:     lazyre.New(`\bfmt\.Print(?:ln|f)?\(|^\s*println\(|\bspew\.Dump\(`),
		langPython: lazyre.New(`^\s*print\(|\bbreakpoint\(\)|\bpdb\.set_trace\(\)|\bpprint\(`),
		langJS:     lazyre.New(`\bconsole\.(?:log|debug|dir|trace)\(|^\s*debugger;?\s*$`),
		langRust:   lazyre.New(`\bdbg!\(|^\s*eprintln!\("DEBUG`),
		langJava:   lazyre.New(`\bSystem\.(?:out|err)\.print(?:ln)?\(|\.printStackTrace\(\)`),
		langKotlin: lazyre.New(`^\s*println\(`),
		langCSharp: lazyre.New(`\bConsole\.Write(?:Line)?\(|Debug\.WriteLine\(`),
		langRuby:   lazyre.New(`^\s*(?:puts|p|pp)\s|\bbinding\.pry\b|\bbyebug\b|\bdebugger\b`),
		langPHP:    lazyre.New(`\bvar_dump\(|\bprint_r\(|\bdd\(|\bdump\(`),
		langElixir: lazyre.New(`\bIO\.inspect\(|\bIEx\.pry\b|\bdbg\(`),
	}
	todoRe        = lazyre.New(`\b(?:TODO|FIXME|XXX|HACK)\b`)
	codeCommentRe = lazyre.New(`(?:^\s*(?:if|for|while|return|func|def|fn|let|var|const|import|class)\b.*[({:;=]|[;{}]\s*$|^\s*\w+(?:\.\w+)*\s*(?::=|=)\s*\S|^\s*\w+(?:\.\w+)*\(.*\)\s*;?\s*$)`)
)

func readabilityPart(files []FileDiff) (float64, string) {
	var long, debug, commented, todo, added, touched int
	for _, f := range files {
		p := f.Path()
		lang := langOf(p)
		if isIgnoredPath(p) || isSnapshotPath(p) || f.Binary {
			continue
		}
		touched++
		if !lang.isCode() {
			continue
		}
		test := isTestPath(p)
		cliFile := hasDir(p, "cmd", "bin", "scripts", "examples", "tools") || path.Base(p) == "main.go" || path.Base(p) == "__main__.py" || path.Base(p) == "cli.py"
		for _, l := range f.Added() {
			added++
			if len([]rune(l.Text)) > longLine {
				long++
			}
			if comment := commentText(lang, l.Text); comment != "" {
				if todoRe.MatchString(comment) {
					todo++
				} else if isCommentLine(lang, l.Text) && codeCommentRe.MatchString(stripCommentMarker(comment)) {
					commented++
				}
				continue
			}
			if re := debugPrintRes[lang]; re != nil && !test && !cliFile && re.MatchString(l.Text) {
				debug++
			}
		}
	}
	penalty := math.Min(float64(long*5), 30) + math.Min(float64(debug*10), 30) +
		math.Min(float64(commented*5), 20) + math.Min(float64(todo*5), 20)
	spread := 0
	if touched > 15 {
		spread = touched - 15
		penalty += math.Min(float64(spread*2), 20)
	}
	if added == 0 && touched == 0 {
		return 100, "no change to read"
	}
	var found []string
	if long > 0 {
		found = append(found, fmt.Sprintf("%s over %d characters", plural(long, "line"), longLine))
	}
	if debug > 0 {
		found = append(found, plural(debug, "debug print"))
	}
	if commented > 0 {
		found = append(found, plural(commented, "commented-out code line"))
	}
	if todo > 0 {
		found = append(found, plural(todo, "TODO/FIXME"))
	}
	if spread > 0 {
		found = append(found, fmt.Sprintf("%d files touched (more than 15)", touched))
	}
	what := "none of: long lines, debug prints, commented-out code, TODOs, scattered files"
	if len(found) > 0 {
		what = strings.Join(found, ", ")
	}
	return clamp(100 - penalty), fmt.Sprintf("%s added across %s: %s", plural(added, "code line"), plural(touched, "file"), what)
}

// stripCommentMarker removes the leading comment marker.
func stripCommentMarker(s string) string {
	s = strings.TrimSpace(s)
	for _, m := range []string{"//", "/*", "#", "*", "--", ";"} {
		if strings.HasPrefix(s, m) {
			return strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(s, m), "*/"))
		}
	}
	return s
}

// commentText returns the comment of a line (a whole-line comment or a
// trailing one).
func commentText(lang language, s string) string {
	if isCommentLine(lang, s) {
		return strings.TrimSpace(s)
	}
	return lineComment(lang, s)
}

// Efficiency bounds: the agent effort that costs nothing, and where it
// costs everything.
var effortBounds = struct {
	turns    [2]float64
	duration [2]time.Duration
	cost     [2]float64
}{
	turns:    [2]float64{30, 150},
	duration: [2]time.Duration{10 * time.Minute, 60 * time.Minute},
	cost:     [2]float64{1, 10},
}

func efficiencyPart(in loop.JudgeInput, files, step []FileDiff) (float64, string) {
	lines := changedSize(files)
	need := 1
	if t := in.Baseline.Check.Tests; t.Known && t.Failed > 0 {
		need = t.Failed
	}
	budget := 60 + 40*need
	size := 100.0
	if lines > budget {
		size = clamp(100 * (1 - float64(lines-budget)/float64(4*budget)))
	}
	var signals []float64
	var effort []string
	a := in.Agent
	if a.Turns > 0 {
		signals = append(signals, scale(float64(a.Turns), effortBounds.turns[0], effortBounds.turns[1]))
		effort = append(effort, plural(a.Turns, "turn"))
	}
	if a.Duration > 0 {
		signals = append(signals, scale(a.Duration.Seconds(), effortBounds.duration[0].Seconds(), effortBounds.duration[1].Seconds()))
		effort = append(effort, a.Duration.Round(time.Second).String())
	}
	if a.CostUSD > 0 {
		signals = append(signals, scale(a.CostUSD, effortBounds.cost[0], effortBounds.cost[1]))
		effort = append(effort, fmt.Sprintf("$%.2f", a.CostUSD))
	}
	effortScore := 100.0
	if len(signals) > 0 {
		sum := 0.0
		for _, s := range signals {
			sum += s
		}
		effortScore = sum / float64(len(signals))
	}
	total := 0.6*size + 0.4*effortScore
	effortText := "agent effort unknown"
	if len(effort) > 0 {
		effortText = "agent " + strings.Join(effort, ", ")
	}
	return clamp(total), fmt.Sprintf("%d changed lines against a budget of %d for %s (this iteration: %d); %s",
		lines, budget, plural(need, "failing test"), changedSize(step), effortText)
}

// scale maps x to 100 at or below good, 0 at or above bad, linear between.
func scale(x, good, bad float64) float64 {
	if x <= good {
		return 100
	}
	if x >= bad {
		return 0
	}
	return 100 * (bad - x) / (bad - good)
}

// changedSize counts added and removed lines, leaving out what tools write
// (snapshots, lock files, vendored code) and binaries.
func changedSize(files []FileDiff) int {
	n := 0
	for _, f := range files {
		p := f.Path()
		if f.Binary || isSnapshotPath(p) || isIgnoredPath(p) || isLockFile(p) {
			continue
		}
		a, r := f.Counts()
		n += a + r
	}
	return n
}

func isLockFile(p string) bool {
	switch path.Base(p) {
	case "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "go.sum", "Cargo.lock", "poetry.lock", "Gemfile.lock",
		"composer.lock", "mix.lock", "uv.lock", "Pipfile.lock", "bun.lockb", "packages.lock.json":
		return true
	}
	return false
}
