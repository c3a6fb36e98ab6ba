package criteria

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/testreport"
)

// TestJudgeRun sorts real runners' output: a run of tests qualifies (failing
// tests too: the task is to fix them), a command that is not found, a usage
// error, a missing file or zero tests is refused, the rest is inconclusive.
func TestJudgeRun(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		exit    int
		out     string
		timeout bool
		want    string
		result  string
	}{
		{"go test failing", 1, "--- FAIL: TestAdd (0.00s)\n    add_test.go:9: got 3\nFAIL\nFAIL\texample.com/m\t0.002s\nFAIL\n", false, VerifyQualified, "ran 1 test package, 1 failed"},
		{"pytest", 1, "============================= test session starts ==============================\ncollected 4 items\n\ntests/test_a.py ..F.                                                     [100%]\n\n=========================== short test summary info ============================\nFAILED tests/test_a.py::test_c - assert 1 == 2\n========================= 1 failed, 3 passed in 0.05s =========================\n", false, VerifyQualified, "ran 4 tests, 1 failed"},
		{"node --test", 0, "✔ adds (0.5ms)\nℹ tests 2\nℹ suites 0\nℹ pass 2\nℹ fail 0\nℹ cancelled 0\nℹ skipped 0\nℹ todo 0\nℹ duration_ms 40.1\n", false, VerifyQualified, "ran 2 tests, all passed"},
		{"cargo test", 0, "running 3 tests\ntest a ... ok\ntest b ... ok\ntest c ... ok\n\ntest result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n", false, VerifyQualified, "ran 3 tests, all passed"},
		{"sh: not found", 127, "sh: 1: jest: not found\n", false, VerifyRefused, "command not found"},
		{"npm missing script", 1, "npm error Missing script: \"test:unit\"\n", false, VerifyRefused, "command not found"},
		{"make no rule", 2, "make: *** No rule to make target 'tests'.  Stop.\n", false, VerifyRefused, "command not found"},
		{"go usage", 2, "flag provided but not defined: -badflag\nusage: go test [build/test flags] [packages] [build/test flags & test binary flags]\n", false, VerifyRefused, "usage error"},
		{"pytest usage", 4, "ERROR: usage: pytest [options] [file_or_dir] [file_or_dir] [...]\npytest: error: unrecognized arguments: --bogus\n", false, VerifyRefused, "usage error"},
		{"pytest no tests", 5, "============================= test session starts ==============================\ncollected 0 items\n\n============================ no tests ran in 0.01s =============================\n", false, VerifyRefused, "ran no tests"},
		{"unittest no tests", 5, "\n----------------------------------------------------------------------\nRan 0 tests in 0.000s\n\nNO TESTS RAN\n", false, VerifyRefused, "ran no tests"},
		{"node --test zero", 0, "ℹ tests 0\nℹ suites 0\nℹ pass 0\nℹ fail 0\n", false, VerifyRefused, "ran no tests"},
		{"go no test files", 0, "?   \texample.com/m\t[no test files]\n", false, VerifyRefused, "ran no tests"},
		{"missing file", 2, "python3: can't open file '/repo/runtests.py': [Errno 2] No such file or directory\n", false, VerifyRefused, "a file it needs is missing"},
		{"timeout", -1, "compiling...\n", true, VerifyInconclusive, "did not finish"},
		{"unknown output, exit 0", 0, "all good\n", false, VerifyInconclusive, "exit 0, but no test report"},
		{"unknown output, exit 1", 1, "Segmentation fault\n", false, VerifyInconclusive, "exit 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := loop.CheckResult{ExitCode: tc.exit, Output: tc.out, TimedOut: tc.timeout, Duration: time.Second, Tests: testreport.Parse(tc.out)}
			got, result := judgeRun(res)
			if got != tc.want || !strings.Contains(result, tc.result) {
				t.Errorf("judgeRun = %s %q, want %s containing %q (tests %+v)", got, result, tc.want, tc.result, res.Tests)
			}
		})
	}
}

// scripted is a Runner that answers each command from a table (and
// records what it ran, where).
type scripted struct {
	answers map[string]loop.CheckResult
	ran     []string
	dirs    []string
}

func (s *scripted) Check(_ context.Context, req loop.CheckRequest) (loop.CheckResult, error) {
	s.ran = append(s.ran, req.Command)
	s.dirs = append(s.dirs, req.Dir)
	if r, ok := s.answers[req.Command]; ok {
		r.Tests = testreport.Parse(r.Output)
		return r, nil
	}
	return loop.CheckResult{ExitCode: 127, Output: "sh: 1: " + strings.Fields(req.Command)[0] + ": not found\n"}, nil
}

func proposalWith(command string, alts ...string) Proposal {
	p := Proposal{Task: "fix the failing tests", Class: ClassTestPass, Command: command, Workdir: ".", Confidence: ConfidenceHigh,
		Rationale: []Finding{finding(LayerCIConfig, "ci.yml", "runs `"+command+"`")}}
	for _, a := range alts {
		p.Alternatives = append(p.Alternatives, Alternative{Command: a, Source: "package.json", WhyNot: "less specific"})
	}
	return p
}

const goPass = "ok  \texample.com/m\t0.01s\n"

func TestVerifyKeepsAQualifiedProposal(t *testing.T) {
	t.Parallel()
	r := &scripted{answers: map[string]loop.CheckResult{"go test ./...": {Output: goPass}}}
	dir := t.TempDir()
	p, err := Verify(context.Background(), dir, proposalWith("go test ./...", "make test"), VerifyOptions{Runner: r})
	if err != nil {
		t.Fatal(err)
	}
	if p.Command != "go test ./..." || p.Confidence != ConfidenceHigh || len(r.ran) != 1 {
		t.Fatalf("got %q %s after running %q", p.Command, p.Confidence, r.ran)
	}
	if len(p.Verification) != 1 || p.Verification[0].Verdict != VerifyQualified || !strings.Contains(p.Verification[0].Result, "ran 1 test package, all passed") {
		t.Errorf("verification = %+v", p.Verification)
	}
	if r.dirs[0] != dir {
		t.Errorf("ran in %q, want the repository %q", r.dirs[0], dir)
	}
	if !strings.Contains(p.Summary(), "Verified:") {
		t.Errorf("the summary does not say what the run showed:\n%s", p.Summary())
	}
}

// A candidate that runs no test is refused and the next one tried; the
// one that ran the tests becomes the criterion, at most at medium.
func TestVerifyRefusesAndTriesTheNext(t *testing.T) {
	t.Parallel()
	r := &scripted{answers: map[string]loop.CheckResult{
		"npm test":     {ExitCode: 0, Output: "ℹ tests 0\nℹ pass 0\nℹ fail 0\n"},
		"npm run unit": {ExitCode: 1, Output: "ℹ tests 5\nℹ pass 4\nℹ fail 1\n"},
	}}
	p, err := Verify(context.Background(), t.TempDir(), proposalWith("npm test", "cd web && npm run e2e", "npm run unit"), VerifyOptions{Runner: r})
	if err != nil {
		t.Fatal(err)
	}
	if p.Command != "npm run unit" || p.Confidence != ConfidenceMedium {
		t.Fatalf("got %q %s, want the alternative that ran tests at medium; ran %q", p.Command, p.Confidence, r.ran)
	}
	if got := strings.Join(r.ran, " | "); got != "npm test | npm run e2e | npm run unit" {
		t.Errorf("ran %q", got)
	}
	if r.dirs[1] != filepath.Join(r.dirs[0], "web") {
		t.Errorf("the alternative's cd was not its workdir: %q", r.dirs)
	}
	verdicts := []string{}
	for _, v := range p.Verification {
		verdicts = append(verdicts, v.Verdict)
	}
	if strings.Join(verdicts, ",") != "refused,refused,qualified" {
		t.Errorf("verdicts %v", verdicts)
	}
}

func TestVerifyRefusesWhenNothingRunsTests(t *testing.T) {
	t.Parallel()
	r := &scripted{answers: map[string]loop.CheckResult{
		"pytest": {ExitCode: 5, Output: "collected 0 items\n\n no tests ran in 0.01s \n"},
	}}
	p, err := Verify(context.Background(), t.TempDir(), proposalWith("pytest", "tox -e py"), VerifyOptions{Runner: r})
	if err != nil {
		t.Fatal(err)
	}
	if p.Class != ClassRefused || p.Command != "" || !strings.Contains(p.RefusalReason, "ran no tests") || !strings.Contains(p.RefusalReason, "command not found") {
		t.Fatalf("got class %s command %q reason %q", p.Class, p.Command, p.RefusalReason)
	}
}

// Setup runs first; a setup that fails leaves the candidate inconclusive
// (not refused), and the proposal stays, at most at medium.
func TestVerifySetup(t *testing.T) {
	t.Parallel()
	r := &scripted{answers: map[string]loop.CheckResult{"npm ci": {ExitCode: 1, Output: "npm error network\n"}}}
	p := proposalWith("npm test")
	p.Setup = "npm ci"
	got, err := Verify(context.Background(), t.TempDir(), p, VerifyOptions{Runner: r, MaxCandidates: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got.Command != "npm test" || got.Confidence != ConfidenceMedium || got.Verification[0].Verdict != VerifyInconclusive || !strings.Contains(got.Verification[0].Result, "setup") {
		t.Fatalf("got %q %s %+v", got.Command, got.Confidence, got.Verification)
	}
	if strings.Join(r.ran, "|") != "npm ci" {
		t.Errorf("ran %q: the command must not run after its setup failed", r.ran)
	}
	r2 := &scripted{answers: map[string]loop.CheckResult{"npm ci": {}, "npm test": {Output: "ℹ tests 1\nℹ pass 1\nℹ fail 0\n"}}}
	if got, _ = Verify(context.Background(), t.TempDir(), p, VerifyOptions{Runner: r2}); got.Confidence != ConfidenceHigh || strings.Join(r2.ran, "|") != "npm ci|npm test" {
		t.Errorf("with a working setup: %s after %q", got.Confidence, r2.ran)
	}
	r3 := &scripted{answers: map[string]loop.CheckResult{"npm test": {Output: "ℹ tests 1\nℹ pass 1\nℹ fail 0\n"}}}
	if _, _ = Verify(context.Background(), t.TempDir(), p, VerifyOptions{Runner: r3, NoSetup: true}); strings.Join(r3.ran, "|") != "npm test" {
		t.Errorf("NoSetup ran %q", r3.ran)
	}
}

// The total bound stops verification: no candidate starts once it is
// spent, and the per-candidate bound is what the runner is given.
func TestVerifyBounds(t *testing.T) {
	t.Parallel()
	var timeouts []time.Duration
	r := runnerFunc(func(_ context.Context, req loop.CheckRequest) (loop.CheckResult, error) {
		timeouts = append(timeouts, req.Timeout)
		return loop.CheckResult{ExitCode: -1, TimedOut: true, Duration: req.Timeout}, nil
	})
	p, err := Verify(context.Background(), t.TempDir(), proposalWith("go test ./...", "make test", "make check"), VerifyOptions{Runner: r, PerCandidate: 2 * time.Minute, Total: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if len(timeouts) != 3 || timeouts[0] != 2*time.Minute {
		t.Errorf("timeouts given %v", timeouts)
	}
	if p.Command != "go test ./..." || p.Confidence != ConfidenceMedium {
		t.Errorf("after timeouts: %q %s", p.Command, p.Confidence)
	}
	timeouts = nil
	if _, err := Verify(context.Background(), t.TempDir(), proposalWith("go test ./..."), VerifyOptions{Runner: r, Total: time.Second}); err != nil || len(timeouts) != 0 {
		t.Errorf("with no time left it ran %d commands (err %v)", len(timeouts), err)
	}
	if _, err := Verify(context.Background(), t.TempDir(), proposalWith("go test ./..."), VerifyOptions{}); err == nil {
		t.Error("no runner: no error")
	}
	failing := runnerFunc(func(context.Context, loop.CheckRequest) (loop.CheckResult, error) {
		return loop.CheckResult{}, errors.New("cannot start sh")
	})
	if _, err := Verify(context.Background(), t.TempDir(), proposalWith("go test ./..."), VerifyOptions{Runner: failing}); err == nil || !strings.Contains(err.Error(), "go test ./...") {
		t.Errorf("runner error: %v", err)
	}
}

type runnerFunc func(context.Context, loop.CheckRequest) (loop.CheckResult, error)

func (f runnerFunc) Check(ctx context.Context, req loop.CheckRequest) (loop.CheckResult, error) {
	return f(ctx, req)
}

// go test hands an unknown flag to the test binary, which prints its usage:
// the parser sees a failed package, the message says no test ran.
func TestJudgeRunUsageThroughAFailedPackage(t *testing.T) {
	t.Parallel()
	out := "flag provided but not defined: -bogus\nUsage of /tmp/go-build1/b001/calc.test:\n  -test.bench regexp\n    \trun only benchmarks matching regexp\nFAIL\texample.com/calc\t0.002s\nFAIL\n"
	res := loop.CheckResult{ExitCode: 1, Output: out, Tests: testreport.Parse(out)}
	if got, why := judgeRun(res); got != VerifyRefused || !strings.Contains(why, "usage error") {
		t.Errorf("judgeRun = %s %q (tests %+v)", got, why, res.Tests)
	}
	// A real failing test with the same package line still qualifies.
	out = "--- FAIL: TestAdd (0.00s)\n    calc_test.go:7: 2+3\nFAIL\nFAIL\texample.com/calc\t0.002s\nFAIL\n"
	res = loop.CheckResult{ExitCode: 1, Output: out, Tests: testreport.Parse(out)}
	if got, why := judgeRun(res); got != VerifyQualified {
		t.Errorf("a failing test: judgeRun = %s %q (tests %+v)", got, why, res.Tests)
	}
}

func TestLocalSetup(t *testing.T) {
	t.Parallel()
	for setup, want := range map[string]bool{
		"npm ci":                            true,
		"pnpm install --frozen-lockfile":    true,
		"bundle install":                    true,
		"uv sync --locked":                  true,
		"go mod download":                   true,
		"cmake -S . -B build":               true,
		"cd web && npm ci":                  true,
		"python -m pip install -e .":        false,
		"pip install -r requirements.txt":   false,
		"npm install -g jest":               false,
		"sudo apt-get install -y libpq-dev": false,
		"npm ci && pip install tox":         false,
	} {
		if got := localSetup(setup); got != want {
			t.Errorf("localSetup(%q) = %v, want %v", setup, got, want)
		}
	}
}

// A setup that installs outside the repository is not run; the command
// still is, and the result says so.
func TestVerifySkipsAGlobalSetup(t *testing.T) {
	t.Parallel()
	r := &scripted{answers: map[string]loop.CheckResult{"python3 -m unittest": {Output: "Ran 2 tests in 0.001s\n\nOK\n"}}}
	p := proposalWith("python3 -m unittest")
	p.Setup = "python -m pip install -e ."
	got, err := Verify(context.Background(), t.TempDir(), p, VerifyOptions{Runner: r})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(r.ran, "|") != "python3 -m unittest" || got.Verification[0].Verdict != VerifyQualified || !strings.Contains(got.Verification[0].Result, "was not run") {
		t.Fatalf("ran %q: %+v", r.ran, got.Verification)
	}
}
