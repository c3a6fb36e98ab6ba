package verify

import (
	"context"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aiwg/agent-loop/internal/heldout"
	"github.com/aiwg/agent-loop/internal/lazyre"
	"github.com/aiwg/agent-loop/internal/loop"
)

// Plan decides the criterion runs of one iteration, so that verification
// costs little: when the previous check had failing tests and the runner is
// one it understands, just those run first and the full criterion only
// when they pass; the held-out check only when the change touches anything
// but product source; the confirmation only on a pass. Every run is listed,
// with why it ran and how long it took, for the report.
//
// The engine calls Check after the agent (in place of its runCheck), stages
// the work tree, then calls Settle with the baseline and the staged tree.
type Plan struct {
	// Runner runs the criterion once (the sandboxed check).
	Runner heldout.Runner
	// Criterion is the command with what it depends on.
	Criterion heldout.CriterionDeps
	// ConfirmRuns is how many times a pass is re-run (0: none).
	ConfirmRuns int
	// HeldOut runs held-out checks (nil: none).
	HeldOut *heldout.Checker
	// NoFocus turns focused runs off.
	NoFocus bool
}

// Request is one iteration's check.
type Request struct {
	Iteration int
	// WorkTree is the repository's work tree; Workdir the criterion's
	// directory relative to it.
	WorkTree string
	Workdir  string
	Env      []string
	Timeout  time.Duration
	Output   io.Writer
	// Previous is the previous check (the baseline's for iteration 1).
	Previous *loop.CheckResult
}

// Outcome is the verdict of one iteration's runs.
type Outcome struct {
	// Check is the result that counts: the full run (with the
	// confirmation's flakes folded in), or the focused run that failed.
	Check loop.CheckResult
	// Focused is true when Check is a focused run: only the previously
	// failing tests ran. Its counts are then unknown (Tests.Known false),
	// its failing names kept.
	Focused bool
	HeldOut *heldout.Result
	Runs    []heldout.Run
}

// Trees names the baseline and the iteration's staged tree in the trusted
// object store, for the held-out check.
type Trees struct{ Base, Iteration string }

// Check runs the focused run when it applies, then the full criterion when
// the focused run passed (or did not apply).
func (p *Plan) Check(ctx context.Context, req Request) (Outcome, error) {
	var o Outcome
	if cmd, names, ok := p.focus(req.Previous); ok {
		res, run, err := p.run(ctx, req, cmd, "focused", fmt.Sprintf("the previous check failed %s: they run first", plural(len(names), "test")))
		if err != nil {
			return o, err
		}
		o.Runs = append(o.Runs, run)
		if !res.Passed {
			res.Tests.Known = false
			res.Tests.Total, res.Tests.Passed, res.Tests.Failed, res.Tests.Skipped = 0, 0, len(res.Tests.Failing), 0
			res.Tests.Passing = nil
			if res.Tests.Runner != "" {
				res.Tests.Runner += " (focused)"
			}
			o.Check, o.Focused = res, true
			return o, nil
		}
	}
	why := "the criterion"
	if len(o.Runs) > 0 {
		why = "the previously failing tests pass: the whole criterion"
	}
	res, run, err := p.run(ctx, req, p.Criterion.Command, "full", why)
	if err != nil {
		return o, err
	}
	o.Runs = append(o.Runs, run)
	o.Check = res
	return o, nil
}

// Settle finishes a passing iteration once its change is staged: the
// held-out check when the change touches anything but product source, and
// the confirmation run(s), unless a passing held-out run already confirmed
// the product code. A failed iteration is left as it is.
func (p *Plan) Settle(ctx context.Context, req Request, o *Outcome, trees Trees, taskEditsTests bool) error {
	if !o.Check.Passed || o.Focused {
		return nil
	}
	if p.HeldOut != nil && trees.Base != "" && trees.Iteration != "" {
		ho, err := p.HeldOut.Check(ctx, heldout.Request{
			Base: trees.Base, Iteration: trees.Iteration, Deps: p.Criterion, Workdir: req.Workdir,
			WorkTree: req.WorkTree, Env: req.Env, Timeout: req.Timeout, Output: req.Output, TaskEditsTests: taskEditsTests,
		})
		if err != nil {
			return err
		}
		o.HeldOut = &ho
		o.Runs = append(o.Runs, ho.Runs...)
		switch ho.Verdict {
		case heldout.Passed:
			// The held-out run passed the same product code: that is the
			// confirmation.
			return nil
		case heldout.Failed:
			// Vetoed either way: a confirmation would change nothing.
			return nil
		}
	}
	flips := map[string]bool{}
	for i := 0; i < p.ConfirmRuns && ctx.Err() == nil; i++ {
		again, run, err := p.run(ctx, req, p.Criterion.Command, "confirmation", "the check passed: once more, to rule out a flaky pass")
		if err != nil {
			return err
		}
		o.Runs = append(o.Runs, run)
		for _, f := range symmetricDiff(o.Check.Tests.Failing, again.Tests.Failing) {
			flips[f] = true
		}
		if !again.Passed {
			o.Check.Passed = false
			if len(flips) == 0 {
				flips[fmt.Sprintf("(whole check: exit %d then %d)", o.Check.ExitCode, again.ExitCode)] = true
			}
		}
	}
	for f := range flips {
		o.Check.Flaky = append(o.Check.Flaky, f)
	}
	sort.Strings(o.Check.Flaky)
	return nil
}

func (p *Plan) run(ctx context.Context, req Request, cmd, kind, why string) (loop.CheckResult, heldout.Run, error) {
	if req.Output != nil {
		fmt.Fprintf(req.Output, "\n--- %s run (%s): %s\n", kind, why, cmd)
	}
	start := time.Now()
	res, err := p.Runner.Check(ctx, loop.CheckRequest{
		Command: cmd, Dir: filepath.Join(req.WorkTree, filepath.FromSlash(req.Workdir)), Env: req.Env, Timeout: req.Timeout, Output: req.Output,
	})
	if err != nil {
		return res, heldout.Run{}, fmt.Errorf("running the %s check %q: %w", kind, cmd, err)
	}
	d := res.Duration
	if d == 0 {
		d = time.Since(start)
	}
	return res, heldout.Run{Kind: kind, Command: cmd, Why: why, Duration: d, Passed: res.Passed, ExitCode: res.ExitCode}, nil
}

func (p *Plan) focus(prev *loop.CheckResult) (string, []string, bool) {
	if p.NoFocus || prev == nil || prev.Passed || len(prev.Tests.Failing) == 0 {
		return "", nil, false
	}
	cmd, ok := FocusCommand(p.Criterion, prev.Tests.Failing)
	return cmd, prev.Tests.Failing, ok
}

func plural(n int, w string) string {
	if n == 1 {
		return "1 " + w
	}
	return fmt.Sprintf("%d %ss", n, w)
}

func symmetricDiff(a, b []string) []string {
	in := func(s []string, x string) bool { return slices.Contains(s, x) }
	var out []string
	for _, x := range a {
		if !in(b, x) {
			out = append(out, x)
		}
	}
	for _, x := range b {
		if !in(a, x) {
			out = append(out, x)
		}
	}
	return out
}

// ---- focused commands ----

// maxFocused bounds the tests a focused run names; past it, the full
// criterion runs.
const maxFocused = 50

var (
	unsafeShellRe = lazyre.New("[;&|<>`$\\n(){}]")
	paramRe       = lazyre.New(`\[.*\]$`)
	dataSetRe     = lazyre.New(`\s+with data set .*$`)
	goTestNameRe  = lazyre.New(`(?:^|\.)((?:Test|Example|Fuzz)[A-Za-z0-9_]*)(?:/|$)`)
)

// FocusCommand returns the criterion narrowed to the given failing tests
// (names as testreport prints them), or false when the runner is not one
// it understands or the command is not a single simple command to which
// arguments can be added. The runners: go test (-run), pytest (-k),
// python -m unittest (-k), node --test (--test-name-pattern), Jest and
// Vitest (-t, Vitest also by file), cargo test (filters), Maven (-Dtest),
// Gradle (--tests), RSpec (-e) and PHPUnit (--filter); npm/yarn/pnpm test
// wrappers of Jest, Vitest and node's runner take the same arguments.
func FocusCommand(c heldout.CriterionDeps, failing []string) (string, bool) {
	cmd := strings.TrimSpace(c.Command)
	if cmd == "" || len(failing) == 0 || len(failing) > maxFocused || unsafeShellRe.MatchString(cmd) {
		return "", false
	}
	words := strings.Fields(cmd)
	for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") {
		words = words[1:]
	}
	if len(words) == 0 {
		return "", false
	}
	wrapper := ""
	switch path.Base(words[0]) {
	case "npm":
		if len(words) >= 2 && (words[1] == "test" || words[1] == "t" || words[1] == "run" && len(words) >= 3) {
			wrapper = "npm"
		}
	case "yarn", "pnpm":
		wrapper = "yarn"
	}
	runner := ""
	if c.Runner != "" {
		runner = strings.ToLower(path.Base(c.Runner))
	}
	if runner == "" {
		runner = inferRunner(words)
	}
	var args []string
	switch runner {
	case "go":
		var names []string
		for _, f := range failing {
			if strings.Contains(f, "[build failed]") || strings.Contains(f, " ") {
				return "", false
			}
			m := goTestNameRe.FindStringSubmatch(f)
			if m == nil {
				return "", false
			}
			name := m[1]
			names = appendUnique(names, regexp.QuoteMeta(name))
		}
		if slices.Contains(words, "-run") || strings.Contains(cmd, "-run=") {
			return "", false
		}
		args = []string{"-run", "^(?:" + strings.Join(names, "|") + ")$"}
	case "pytest", "py.test":
		var names []string
		for _, f := range failing {
			name := f
			if i := strings.LastIndex(name, "::"); i >= 0 {
				name = name[i+2:]
			}
			name = paramRe.ReplaceAllString(name, "")
			if !identifier(name) {
				return "", false
			}
			names = appendUnique(names, name)
		}
		args = []string{"-k", strings.Join(names, " or ")}
	case "unittest":
		for _, f := range failing {
			name := f[strings.LastIndex(f, ".")+1:]
			if !identifier(name) {
				return "", false
			}
			args = append(args, "-k", name)
		}
	case "node":
		var names []string
		for _, f := range failing {
			for _, part := range strings.Split(f, " > ") {
				names = appendUnique(names, regexp.QuoteMeta(strings.TrimSpace(part)))
			}
		}
		args = []string{"--test-name-pattern=^(?:" + strings.Join(names, "|") + ")$"}
	case "jest":
		var names []string
		for _, f := range failing {
			names = appendUnique(names, regexp.QuoteMeta(strings.ReplaceAll(f, " › ", " ")))
		}
		args = []string{"-t", "^(?:" + strings.Join(names, "|") + ")$"}
	case "vitest":
		var names, files []string
		for _, f := range failing {
			parts := strings.Split(f, " > ")
			if len(parts) > 1 && strings.Contains(parts[0], ".") {
				files = appendUnique(files, parts[0])
				parts = parts[1:]
			}
			names = appendUnique(names, regexp.QuoteMeta(strings.Join(parts, " ")))
		}
		args = append(files, "-t", "^(?:"+strings.Join(names, "|")+")$")
	case "cargo":
		for _, f := range failing {
			if strings.Contains(f, " ") {
				return "", false
			}
			args = appendUnique(args, f)
		}
		if !slices.Contains(words, "--") {
			args = append([]string{"--"}, args...)
		}
	case "mvn", "maven", "mvnw":
		byClass := map[string][]string{}
		var classes []string
		for _, f := range failing {
			i := strings.LastIndex(f, ".")
			if i < 0 {
				return "", false
			}
			cls, m := f[:i], f[i+1:]
			cls = cls[strings.LastIndex(cls, ".")+1:]
			if _, ok := byClass[cls]; !ok {
				classes = append(classes, cls)
			}
			byClass[cls] = append(byClass[cls], m)
		}
		var specs []string
		for _, cls := range classes {
			specs = append(specs, cls+"#"+strings.Join(byClass[cls], "+"))
		}
		args = []string{"-Dtest=" + strings.Join(specs, ","), "-Dsurefire.failIfNoSpecifiedTests=false"}
	case "gradle", "gradlew":
		for _, f := range failing {
			args = append(args, "--tests", strings.ReplaceAll(f, " > ", "."))
		}
	case "rspec":
		for _, f := range failing {
			args = append(args, "-e", f)
		}
	case "phpunit":
		var names []string
		for _, f := range failing {
			name := dataSetRe.ReplaceAllString(f, "")
			if i := strings.LastIndex(name, "::"); i >= 0 {
				name = name[i+2:]
			}
			names = appendUnique(names, regexp.QuoteMeta(name))
		}
		args = []string{"--filter", "/(?:" + strings.Join(names, "|") + ")/"}
	default:
		return "", false
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellQuote(a)
	}
	extra := strings.Join(quoted, " ")
	if wrapper == "npm" && !slices.Contains(words, "--") {
		extra = "-- " + extra
	}
	return cmd + " " + extra, true
}

// inferRunner names the runner of a plain command when the shell-command
// model did not.
func inferRunner(words []string) string {
	w := func(i int) string {
		if i < len(words) {
			return path.Base(words[i])
		}
		return ""
	}
	switch w(0) {
	case "go":
		if w(1) == "test" {
			return "go"
		}
	case "python", "python3":
		if w(1) == "-m" {
			return w(2)
		}
	case "node":
		if slices.Contains(words, "--test") {
			return "node"
		}
	case "npx", "bunx", "pnpx":
		return w(1)
	case "cargo":
		if w(1) == "test" {
			return "cargo"
		}
	case "bundle":
		if w(1) == "exec" {
			return w(2)
		}
	}
	return w(0)
}

func identifier(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func appendUnique(s []string, x string) []string {
	if slices.Contains(s, x) {
		return s
	}
	return append(s, x)
}

func shellQuote(s string) string {
	if s != "" && !strings.HasPrefix(s, "#") && !strings.HasPrefix(s, "~") && !strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}()<>|&;!^") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
