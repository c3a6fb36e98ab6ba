package criteria

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/aiwg/agent-loop/internal/lazyre"
	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/shellcmd"
	"github.com/aiwg/agent-loop/internal/testreport"
)

// Verification by running. Inference reads files; `infer --verify` (and
// the Action, before it adopts a proposal) then runs the top candidates
// once, bounded in time, in the repository: a candidate qualifies only
// when the run executes the project's tests (a test report the harness
// parses with at least one test, or the runner's own summary). A command
// that is not found, a usage error, a missing file or a run of zero tests
// is refused and the next candidate tried.

// Runner runs one command for verification. It has the method of
// loop.Verifier, so the harness's own verifier (verify.Shell, and at
// integration the sandbox's confined one: the same process.Run under a
// context carrying the jail) verifies candidates as it runs the check:
// verification runs repository code and must be confined the same way.
type Runner interface {
	Check(ctx context.Context, req loop.CheckRequest) (loop.CheckResult, error)
}

// VerifyOptions bound a verification.
type VerifyOptions struct {
	// Runner runs the commands (required).
	Runner Runner
	// Env is the environment of the commands (filtered of secrets).
	Env []string
	// PerCandidate bounds one candidate's command (default 3 minutes);
	// its setup gets as long again.
	PerCandidate time.Duration
	// Total bounds the whole verification (default 8 minutes): candidates
	// left when it is spent are not run.
	Total time.Duration
	// MaxCandidates is how many candidates are tried at most (default 3).
	MaxCandidates int
	// NoSetup skips the candidates' setup commands (the caller ran them,
	// or they are too costly here).
	NoSetup bool
}

// Verdicts of one verification run.
const (
	VerifyQualified    = "qualified"    // it ran the project's tests
	VerifyRefused      = "refused"      // it ran no test: not found, usage error, missing file, zero tests
	VerifyInconclusive = "inconclusive" // timed out, its setup failed, or no test report could be read
)

// Verification is what running one candidate showed.
type Verification struct {
	Command string `json:"command" yaml:"command"`
	Workdir string `json:"workdir" yaml:"workdir"`
	Setup   string `json:"setup,omitempty" yaml:"setup,omitempty"`
	// Verdict is qualified, refused or inconclusive; Result says what the
	// run showed ("ran 412 tests, 3 failed", "command not found: jest").
	Verdict  string `json:"verdict" yaml:"verdict"`
	Result   string `json:"result" yaml:"result"`
	ExitCode int    `json:"exit_code" yaml:"exit_code"`
	// Tests are the counts parsed from the run (Known=false when none).
	Tests      testreport.Summary `json:"tests" yaml:"tests"`
	DurationMS int64              `json:"duration_ms" yaml:"duration_ms"`
}

// verifyCandidate is one command to try.
type verifyCandidate struct {
	command, workdir, setup, source string
}

// Verify runs the proposal's command, then its other candidates (the
// suites it lists, then its test alternatives), until one qualifies, at
// most opts.MaxCandidates, within opts.Total. It returns the proposal as
// the runs leave it:
//
//   - the proposal's own command qualified: unchanged, with the run's
//     result in its evidence;
//   - it was refused and another candidate qualified: that candidate,
//     with at most medium confidence (inference's first choice was wrong);
//   - every candidate tried was refused: a refusal that names what each
//     run showed;
//   - nothing qualified but something was inconclusive (a timeout, a
//     failed setup, output no parser reads): the first inconclusive
//     candidate, with at most medium confidence.
//
// The error is for a runner that cannot run at all or a cancelled
// context; a command that fails is a result, not an error.
func Verify(ctx context.Context, dir string, p Proposal, opts VerifyOptions) (Proposal, error) {
	if opts.Runner == nil {
		return p, errors.New("verifying the completion command: no runner given")
	}
	if p.Class == ClassRefused || p.Command == "" {
		return p, nil
	}
	if opts.PerCandidate <= 0 {
		opts.PerCandidate = 3 * time.Minute
	}
	if opts.Total <= 0 {
		opts.Total = 8 * time.Minute
	}
	if opts.MaxCandidates <= 0 {
		opts.MaxCandidates = 3
	}
	deadline := time.Now().Add(opts.Total)
	var runs []Verification
	var qualified, inconclusive *Verification
	var chosen verifyCandidate
	for i, c := range verifyCandidates(p) {
		if i >= opts.MaxCandidates {
			break
		}
		left := time.Until(deadline)
		if left <= 5*time.Second {
			break
		}
		if err := ctx.Err(); err != nil {
			return p, fmt.Errorf("verifying the completion command: %w", err)
		}
		v, err := runCandidate(ctx, dir, c, opts, left)
		if err != nil {
			return p, err
		}
		runs = append(runs, v)
		switch v.Verdict {
		case VerifyQualified:
			qualified, chosen = &runs[len(runs)-1], c
		case VerifyInconclusive:
			if inconclusive == nil {
				inconclusive = &runs[len(runs)-1]
			}
		}
		if qualified != nil {
			break
		}
	}
	out := p
	out.Verification = runs
	src := "agent-loop infer --verify"
	layer := firstLayer(p)
	for _, v := range runs {
		out.Rationale = append(out.Rationale, finding(layer, src, fmt.Sprintf("ran `%s` in %s: %s (%s)", v.Command, v.Workdir, v.Result, v.Verdict)))
	}
	switch {
	case qualified != nil && qualified.Command == p.Command && qualified.Workdir == nonEmptyDir(p.Workdir):
		// The proposal stands, now with what its run showed.
	case qualified != nil:
		out.Command, out.Workdir, out.Setup = chosen.command, chosen.workdir, chosen.setup
		if out.Confidence == ConfidenceHigh {
			out.Confidence = ConfidenceMedium
		}
		out.Rationale = append(out.Rationale, finding(layer, src, fmt.Sprintf("`%s` ran no test (%s); `%s` (%s) ran the tests instead, so it is the criterion; confidence at most medium", p.Command, runs[0].Result, chosen.command, chosen.source)))
		out.Suites = nil
	case inconclusive != nil:
		if inconclusive.Command != p.Command || inconclusive.Workdir != nonEmptyDir(p.Workdir) {
			out.Command, out.Workdir, out.Setup = inconclusive.Command, inconclusive.Workdir, inconclusive.Setup
		}
		if out.Confidence == ConfidenceHigh {
			out.Confidence = ConfidenceMedium
		}
		out.Rationale = append(out.Rationale, finding(layer, src, "verification could not show the tests running ("+inconclusive.Result+"): confidence at most medium"))
	case len(runs) > 0:
		var what []string
		for _, v := range runs {
			what = append(what, fmt.Sprintf("`%s`: %s", v.Command, v.Result))
		}
		out.Class = ClassRefused
		out.Criterion = ""
		out.Command, out.Setup = "", ""
		out.Suites = nil
		out.RefusalReason = "no candidate ran the project's tests when verified (" + strings.Join(what, "; ") + "): give --completion CMD"
	default:
		out.Rationale = append(out.Rationale, finding(layer, src, "no time left to verify any candidate"))
		if out.Confidence == ConfidenceHigh {
			out.Confidence = ConfidenceMedium
		}
	}
	return out, nil
}

func nonEmptyDir(d string) string {
	if d == "" {
		return "."
	}
	return d
}

// firstLayer is the layer of the proposal's evidence that named the
// command (verification findings are filed under it).
func firstLayer(p Proposal) string {
	for _, f := range p.Rationale {
		if f.Layer != LayerTaskVerb {
			return f.Layer
		}
	}
	return LayerTaskVerb
}

// verifyCandidates are the proposal's command, the other suites it lists,
// then the test alternatives that can run (in their order).
func verifyCandidates(p Proposal) []verifyCandidate {
	seen := map[string]bool{}
	var out []verifyCandidate
	add := func(c verifyCandidate) {
		c.workdir = nonEmptyDir(c.workdir)
		key := c.workdir + "\x00" + normalizeCmd(c.command)
		if c.command == "" || seen[key] {
			return
		}
		seen[key] = true
		out = append(out, c)
	}
	add(verifyCandidate{command: p.Command, workdir: p.Workdir, setup: p.Setup, source: "the proposal"})
	for _, s := range p.Suites {
		add(verifyCandidate{command: s.Command, workdir: s.Workdir, setup: p.Setup, source: s.Source})
	}
	for _, a := range p.Alternatives {
		if strings.HasPrefix(a.WhyNot, "cannot run locally") || strings.Contains(a.WhyNot, "lints or type-checks") {
			continue
		}
		wd, cmd := splitCd(a.Command)
		add(verifyCandidate{command: cmd, workdir: wd, source: a.Source})
	}
	return out
}

// splitCd moves a leading `cd DIR &&` of an alternative into its workdir.
func splitCd(command string) (string, string) {
	wd := "."
	for {
		rest, ok := strings.CutPrefix(strings.TrimSpace(command), "cd ")
		if !ok {
			return wd, command
		}
		d, tail, ok := strings.Cut(rest, " && ")
		if !ok || strings.ContainsAny(d, " ;|&$`\"'") {
			return wd, command
		}
		wd, command = join(wd, d), tail
	}
}

// runCandidate runs one candidate (its setup first, unless told not to)
// and judges what the run showed.
func runCandidate(ctx context.Context, dir string, c verifyCandidate, opts VerifyOptions, left time.Duration) (Verification, error) {
	v := Verification{Command: c.command, Workdir: c.workdir, Setup: c.setup}
	workdir := filepath.Join(dir, filepath.FromSlash(c.workdir))
	start := time.Now()
	if c.setup != "" && !opts.NoSetup && !localSetup(c.setup) {
		v.Setup = ""
		v.Result = "(its setup `" + c.setup + "` was not run: it installs outside the repository) "
	}
	if v.Setup != "" && !opts.NoSetup {
		res, err := opts.Runner.Check(ctx, loop.CheckRequest{Command: c.setup, Dir: workdir, Env: opts.Env, Timeout: min(opts.PerCandidate, left)})
		if err != nil {
			return v, fmt.Errorf("verifying %q: running its setup: %w", c.command, err)
		}
		left -= time.Since(start)
		if res.TimedOut || res.ExitCode != 0 {
			v.Verdict, v.ExitCode = VerifyInconclusive, res.ExitCode
			v.Result = fmt.Sprintf("its setup `%s` failed (%s)", c.setup, exitText(res))
			v.DurationMS = time.Since(start).Milliseconds()
			return v, nil
		}
		if left <= time.Second {
			v.Verdict, v.Result = VerifyInconclusive, "no time left after its setup"
			return v, nil
		}
	}
	res, err := opts.Runner.Check(ctx, loop.CheckRequest{Command: c.command, Dir: workdir, Env: opts.Env, Timeout: min(opts.PerCandidate, left)})
	if err != nil {
		return v, fmt.Errorf("verifying %q: %w", c.command, err)
	}
	v.ExitCode, v.Tests = res.ExitCode, res.Tests
	v.DurationMS = time.Since(start).Milliseconds()
	verdict, result := judgeRun(res)
	v.Verdict, v.Result = verdict, v.Result+result
	return v, nil
}

// localSetup reports a setup whose every command installs into the
// repository (a lockfile's packages, a project virtualenv, a build
// directory): cheap to run once and undone by deleting what it wrote. A
// setup that installs into the machine's own interpreter or system (pip
// install without a virtualenv, apt-get, npm install -g) is not run by
// verification.
func localSetup(setup string) bool {
	cmds, err := shellcmd.Parse(setup)
	if err != nil || len(cmds) == 0 {
		return false
	}
	for _, sc := range cmds {
		args := shellcmd.StripWrappers(sc.Args).Args
		if len(args) == 0 {
			continue
		}
		tool := shellcmd.ToolName(args[0])
		sub := ""
		if len(args) > 1 {
			sub = args[1]
		}
		switch {
		case tool == "npm" && (sub == "ci" || sub == "install" || sub == "i") && !shellcmd.HasFlag(args, "-g") && !shellcmd.HasFlag(args, "--global"):
		case (tool == "pnpm" || tool == "yarn" || tool == "bun") && (sub == "install" || sub == "i" || sub == "" || strings.HasPrefix(sub, "--")):
		case tool == "composer" && (sub == "install" || sub == "update"):
		case tool == "bundle" && (sub == "install" || sub == "config"):
		case tool == "go" && sub == "mod":
		case tool == "cargo" && (sub == "fetch" || sub == "build"):
		case tool == "uv" && (sub == "sync" || sub == "venv"):
		case tool == "poetry" && sub == "install":
		case tool == "pdm" && sub == "install":
		case tool == "hatch" && sub == "env":
		case tool == "mix" && (strings.HasPrefix(sub, "deps") || sub == "compile"):
		case tool == "dotnet" && (sub == "restore" || sub == "build"):
		case tool == "cmake" || tool == "meson" || tool == "mkdir" || tool == "autoreconf" || strings.HasSuffix(args[0], "configure") || strings.HasSuffix(args[0], "autogen.sh"):
		case tool == "make" || tool == "ninja":
		case tool == "cd":
		default:
			return false
		}
	}
	return true
}

func exitText(res loop.CheckResult) string {
	if res.TimedOut {
		return "stopped after " + res.Duration.Round(time.Second).String()
	}
	return fmt.Sprintf("exit %d", res.ExitCode)
}

var (
	notFoundRe = lazyre.New(`(?im)(command not found|no module named |: not found$|not found in \$?path|is not recognized as an internal or external command|no such command|unknown command|missing script:|couldn't find a script named|script not found|error: no such subcommand|no rule to make target|don't know how to build task|task "[^"]+" (?:does )?not (?:found|exist)|no task named|could not find task|unrecognized subcommand|command .* not found)`)
	usageRe    = lazyre.New(`(?im)(^usage:|\busage: |unknown (?:option|flag|argument)|unrecognized (?:option|argument|arguments)|invalid (?:option|flag|argument)|flag provided but not defined|error: unexpected argument|error: unrecognized|no such option|illegal option|requires an argument|missing required argument)`)
	missingRe  = lazyre.New(`(?im)(no such file or directory|cannot find (?:the )?(?:file|path|module)|file not found|enoent|can't open file|could not find (?:a |the )?(?:file|directory|project)|does not exist|no test files|cannot find package|module not found|modulenotfounderror|couldn't find (?:a )?(?:file|directory))`)
	zeroTestRe = lazyre.New(`(?im)(no tests? (?:ran|run|found|to run|were found|executed|collected)|collected 0 items|ran 0 tests|0 tests? (?:ran|run|passed|collected)|tests:\s+0 total|# tests 0|test result: ok\. 0 passed; 0 failed|no test suites? found|no specs found|0 examples, 0 failures|0 runs, 0 assertions|running 0 tests)`)
)

// judgeRun sorts one run: qualified when it ran tests (the harness's parsed
// counts), refused when it shows it ran none (not found, usage, missing
// file, zero tests), inconclusive otherwise.
func judgeRun(res loop.CheckResult) (string, string) {
	out := res.Output
	t := res.Tests
	// A usage error or a missing runner can still look like a failed
	// package or suite to a parser (go test prints FAIL for a test binary
	// that rejected its flags): with no test passing and none named as
	// failing, the message decides.
	noTestRan := t.Passed == 0 && !namesTests(t)
	switch {
	case res.ExitCode != 0 && noTestRan && usageRe.MatchString(out):
		return VerifyRefused, "usage error: " + firstMatch(usageRe, out, res.ExitCode)
	case res.ExitCode != 0 && noTestRan && notFoundRe.MatchString(out):
		return VerifyRefused, "command not found: " + firstMatch(notFoundRe, out, res.ExitCode)
	case t.Known && t.Total > 0:
		return VerifyQualified, ranText(t)
	case res.TimedOut:
		return VerifyInconclusive, fmt.Sprintf("did not finish within %s", res.Duration.Round(time.Second))
	case res.ExitCode == 127 || res.ExitCode != 0 && notFoundRe.MatchString(out):
		return VerifyRefused, "command not found: " + firstMatch(notFoundRe, out, res.ExitCode)
	case res.ExitCode != 0 && usageRe.MatchString(out) && !zeroTestRe.MatchString(out):
		return VerifyRefused, "usage error: " + firstMatch(usageRe, out, res.ExitCode)
	case t.Known && t.Total == 0 || zeroTestRe.MatchString(out):
		return VerifyRefused, "ran no tests: " + firstMatch(zeroTestRe, out, res.ExitCode)
	case res.ExitCode != 0 && missingRe.MatchString(out):
		return VerifyRefused, "a file it needs is missing: " + firstMatch(missingRe, out, res.ExitCode)
	case res.ExitCode == 0:
		return VerifyInconclusive, "exit 0, but no test report or runner summary the harness can read"
	}
	return VerifyInconclusive, fmt.Sprintf("exit %d, and no test report or runner summary the harness can read", res.ExitCode)
}

// namesTests reports a summary that names a failing test (not only a
// package or a suite that failed as a whole).
func namesTests(t testreport.Summary) bool {
	for _, f := range t.Failing {
		if i := strings.LastIndexAny(f, "./:"); i >= 0 && i+1 < len(f) && (strings.HasPrefix(f[i+1:], "Test") || strings.Contains(f, "::") || strings.Contains(f, " ")) {
			return true
		}
		if !strings.Contains(f, "/") && !strings.Contains(f, ".") {
			return true
		}
	}
	return false
}

// ranText says what a run's tests did: "ran 412 tests, 3 failed".
func ranText(t testreport.Summary) string {
	unit := "tests"
	switch {
	case t.Runner == "go-packages" && t.Total == 1:
		unit = "test package"
	case t.Runner == "go-packages":
		unit = "test packages"
	case t.Total == 1:
		unit = "test"
	}
	s := fmt.Sprintf("ran %d %s", t.Total, unit)
	switch {
	case t.Failed > 0 && t.Skipped > 0:
		s += fmt.Sprintf(", %d failed, %d skipped", t.Failed, t.Skipped)
	case t.Failed > 0:
		s += fmt.Sprintf(", %d failed", t.Failed)
	case t.Skipped > 0:
		s += fmt.Sprintf(", all passed but %d skipped", t.Skipped)
	default:
		s += ", all passed"
	}
	if t.Runner != "" {
		s += " (" + t.Runner + ")"
	}
	return s
}

// firstMatch quotes the line of out that matched re (bounded), or the exit
// code when nothing did.
func firstMatch(re *lazyre.Regexp, out string, code int) string {
	for _, line := range strings.Split(out, "\n") {
		if re.MatchString(line) {
			line = strings.TrimSpace(line)
			if len(line) > 160 {
				line = line[:160] + "..."
			}
			return quoteLine(line)
		}
	}
	return fmt.Sprintf("exit %d", code)
}

// quoteLine quotes a line of output for the rationale.
func quoteLine(s string) string { return fmt.Sprintf("%q", s) }
