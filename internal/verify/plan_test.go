package verify

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/agent-loop/internal/heldout"
	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/testreport"
)

func TestFocusCommand(t *testing.T) {
	t.Parallel()
	cases := []struct {
		cmd, runner string
		failing     []string
		want        string
	}{
		{"go test ./...", "go", []string{"example.com/sample/calc.TestSub", "example.com/sample/calc.TestTable/negative", "example.com/sample/calc.TestTable"},
			"go test ./... -run '^(?:TestSub|TestTable)$'"},
		{"go test -race ./...", "", []string{"example.com/x.TestA/case_1.5"}, "go test -race ./... -run '^(?:TestA)$'"},
		{"go test ./...", "go", []string{"example.com/sample/broken [build failed]"}, ""},
		{"go test -run TestX ./...", "go", []string{"example.com/a.TestX"}, ""},
		{"python3 -m pytest -q", "", []string{"tests/test_py.py::TestDiv::test_div_zero", "tests/test_py.py::test_sub_param[0-0-0]", "tests/test_py.py::test_sub_param[1-1-0]"},
			"python3 -m pytest -q -k 'test_div_zero or test_sub_param'"},
		{"python -m unittest", "", []string{"tests.test_calc.CalcTest.test_sub"}, "python -m unittest -k test_sub"},
		{"node --test", "", []string{"div > throws on zero", "subtracts numbers"}, "node --test '--test-name-pattern=^(?:div|throws on zero|subtracts numbers)$'"},
		{"npm test", "node", []string{"adds"}, "npm test -- '--test-name-pattern=^(?:adds)$'"},
		{"npx jest", "", []string{"calc › div › throws on zero"}, "npx jest -t '^(?:calc div throws on zero)$'"},
		{"npx vitest run", "", []string{"vitests/calc.test.js > calc > subtracts numbers"}, "npx vitest run vitests/calc.test.js -t '^(?:calc subtracts numbers)$'"},
		{"cargo test", "", []string{"tests::subtracts", "integration_sub"}, "cargo test -- tests::subtracts integration_sub"},
		{"cargo test -- --nocapture", "", []string{"tests::subtracts"}, "cargo test -- --nocapture tests::subtracts"},
		{"mvn -q test", "mvn", []string{"com.example.CalcTest.dividesByZero", "com.example.CalcTest.subtracts"},
			"mvn -q test -Dtest=CalcTest#dividesByZero+subtracts -Dsurefire.failIfNoSpecifiedTests=false"},
		{"gradle test", "gradle", []string{"com.example.CalcTest > adds"}, "gradle test --tests com.example.CalcTest.adds"},
		{"bundle exec rspec", "", []string{"Calc subtracts numbers"}, "bundle exec rspec -e 'Calc subtracts numbers'"},
		{"phpunit tests", "phpunit", []string{`CalcTest::testCases with data set "two"`, "CalcTest::testSub"}, "phpunit tests --filter '/(?:testCases|testSub)/'"},
		{"make test", "make", []string{"x"}, ""},
		{"go test ./... && npm test", "go", []string{"a.TestA"}, ""},
		{"go test $(go list ./...)", "go", []string{"a.TestA"}, ""},
	}
	for _, tc := range cases {
		got, ok := FocusCommand(heldout.CriterionDeps{Command: tc.cmd, Runner: tc.runner}, tc.failing)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("FocusCommand(%q, %v) = %q %v, want %q", tc.cmd, tc.failing, got, ok, tc.want)
		}
	}
}

// scripted answers each run with the next result.
type scripted struct {
	results []loop.CheckResult
	cmds    []string
}

func (s *scripted) Check(_ context.Context, req loop.CheckRequest) (loop.CheckResult, error) {
	s.cmds = append(s.cmds, req.Command)
	r := s.results[0]
	s.results = s.results[1:]
	return r, nil
}

func TestPlanRuns(t *testing.T) {
	t.Parallel()
	failing := &loop.CheckResult{Tests: testreport.Summary{Known: true, Total: 40, Failed: 1, Failing: []string{"example.com/a.TestAdd"}}}
	pass := loop.CheckResult{Passed: true, Tests: testreport.Summary{Known: true, Total: 40, Passed: 40}}
	fail := loop.CheckResult{ExitCode: 1, Tests: testreport.Summary{Known: true, Runner: "go", Total: 1, Failed: 1, Failing: []string{"example.com/a.TestAdd"}}}
	crit := heldout.CriterionDeps{Command: "go test ./...", Runner: "go"}
	cases := []struct {
		name    string
		prev    *loop.CheckResult
		results []loop.CheckResult
		kinds   string
		passed  bool
		focused bool
	}{
		{"focused run fails: the full criterion does not run", failing, []loop.CheckResult{fail}, "focused", false, true},
		{"focused run passes: full, then confirmation", failing, []loop.CheckResult{pass, pass, pass}, "focused full confirmation", true, false},
		{"no previous failure: full only when it fails", nil, []loop.CheckResult{fail}, "full", false, false},
		{"a flaky pass is not trusted", nil, []loop.CheckResult{pass, fail}, "full confirmation", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := &scripted{results: tc.results}
			p := &Plan{Runner: r, Criterion: crit, ConfirmRuns: 1}
			req := Request{Iteration: 2, WorkTree: t.TempDir(), Previous: tc.prev}
			o, err := p.Check(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Settle(context.Background(), req, &o, Trees{}, false); err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, run := range o.Runs {
				kinds = append(kinds, run.Kind)
				if run.Why == "" {
					t.Errorf("run %s has no reason", run.Kind)
				}
			}
			if strings.Join(kinds, " ") != tc.kinds {
				t.Errorf("runs %v, want %s", kinds, tc.kinds)
			}
			if o.Check.Passed != tc.passed || o.Focused != tc.focused {
				t.Errorf("passed %v focused %v, want %v %v", o.Check.Passed, o.Focused, tc.passed, tc.focused)
			}
			if o.Focused && o.Check.Tests.Known {
				t.Errorf("a focused run's counts are not comparable with the baseline's: Known must be false")
			}
			if len(r.results) != 0 {
				t.Errorf("%d scripted results left over", len(r.results))
			}
		})
	}
}

// TestFocusedGoRunIsNarrow runs a real go test suite: the focused command
// runs only the failing test.
func TestFocusedGoRunIsNarrow(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not installed")
	}
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":        "module example.com/focus\n\ngo 1.21\n",
		"a.go":          "package focus\n\nfunc Add(a, b int) int { return a - b }\n",
		"a_test.go":     "package focus\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"Add(2, 3) != 5\")\n\t}\n}\n\nfunc TestOther(t *testing.T) {}\n",
		"sub/b_test.go": "package sub\n\nimport \"testing\"\n\nfunc TestElsewhere(t *testing.T) {}\n",
	}
	for p, body := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sh := &Shell{}
	crit := heldout.CriterionDeps{Command: "go test -v ./...", Runner: "go"}
	base, err := sh.Check(context.Background(), loop.CheckRequest{Command: crit.Command, Dir: dir, Env: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	if base.Passed || len(base.Tests.Failing) != 1 {
		t.Fatalf("the baseline should fail TestAdd: %+v", base.Tests)
	}
	p := &Plan{Runner: sh, Criterion: crit}
	o, err := p.Check(context.Background(), Request{WorkTree: dir, Env: os.Environ(), Previous: &base})
	if err != nil {
		t.Fatal(err)
	}
	if !o.Focused || len(o.Runs) != 1 {
		t.Fatalf("want one focused run, got %+v", o.Runs)
	}
	if !strings.Contains(o.Check.Output, "--- FAIL: TestAdd") || strings.Contains(o.Check.Output, "TestOther") || strings.Contains(o.Check.Output, "TestElsewhere") {
		t.Errorf("the focused run ran more than the failing test:\n%s", o.Check.Output)
	}
}
