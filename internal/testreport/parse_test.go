package testreport

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

// outputFiles lists the captured runner outputs: testdata/<runner>/<case>.txt.
func outputFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 40 {
		t.Fatalf("found %d captured outputs under testdata/, want at least 40", len(files))
	}
	return files
}

func caseName(path string) (runner, name string) {
	return filepath.Base(filepath.Dir(path)), strings.TrimSuffix(filepath.Base(path), ".txt")
}

// TestParse parses every captured output and compares the Summary with its
// golden JSON (rewrite with -update after checking the diff by eye).
func TestParse(t *testing.T) {
	t.Parallel()
	for _, f := range outputFiles(t) {
		runner, name := caseName(f)
		t.Run(runner+"/"+name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got := Parse(string(data))
			checkInvariants(t, got)
			golden := filepath.Join("testdata", "TestParse", runner+"-"+name+".golden.json")
			compareGolden(t, golden, got)
		})
	}
}

func compareGolden(t *testing.T, golden string, got Summary) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(got); err != nil {
		t.Fatal(err)
	}
	js := buf.Bytes()
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, js, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("reading golden file (run go test -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(js)); diff != "" {
		t.Errorf("Summary differs from %s (-want +got):\n%s", golden, diff)
	}
}

func checkInvariants(t *testing.T, s Summary) {
	t.Helper()
	if !s.Known {
		if s.Total != 0 || s.Passed != 0 || s.Failed != 0 || s.Skipped != 0 || len(s.Failing) != 0 {
			t.Errorf("unknown summary has counts: %+v", s)
		}
		return
	}
	if s.Passed < 0 || s.Failed < 0 || s.Skipped < 0 {
		t.Errorf("negative count: %+v", s)
	}
	if s.Passed+s.Failed+s.Skipped > s.Total {
		t.Errorf("passed %d + failed %d + skipped %d > total %d", s.Passed, s.Failed, s.Skipped, s.Total)
	}
	if s.Runner == "" {
		t.Errorf("known summary without a runner name")
	}
	for i := 1; i < len(s.Failing); i++ {
		if s.Failing[i-1] >= s.Failing[i] {
			t.Errorf("Failing not sorted and unique at %d: %q, %q", i, s.Failing[i-1], s.Failing[i])
		}
	}
	if s.Failed > 0 && len(s.Failing) == 0 && !strings.HasPrefix(s.Runner, "plain") &&
		!strings.Contains(s.Runner, "nextest") {
		t.Errorf("%d failed but no failing test named", s.Failed)
	}
	if s.Coverage != nil && (*s.Coverage < 0 || *s.Coverage > 100) {
		t.Errorf("coverage %v out of range", *s.Coverage)
	}
}

// TestParseCounts checks the counts of every captured output against the
// runner's own summary line (what the runner printed, read by hand), and the
// failing names against the failures the output lists.
func TestParseCounts(t *testing.T) {
	t.Parallel()
	type counts struct {
		runner                         string
		total, passed, failed, skipped int
		failing                        []string
		coverage                       float64 // 0: none expected
	}
	tests := map[string]counts{
		// Package mode: broken (build failed), calc (FAIL), clean (ok), panics (FAIL); nt has no test files.
		"go/plain": {"go-packages", 4, 1, 3, 0, []string{
			"example.com/sample/broken [build failed]", "example.com/sample/calc.TestSub",
			"example.com/sample/calc.TestTable", "example.com/sample/calc.TestTable/negative",
			"example.com/sample/panics.TestIndexOutOfRange"}, 0},
		// Tests and subtests: 7 in calc, 1 in clean, 2 in panics, plus the package that did not build.
		"go/verbose": {"go", 11, 5, 5, 1, []string{
			"example.com/sample/broken [build failed]", "example.com/sample/calc.TestSub",
			"example.com/sample/calc.TestTable", "example.com/sample/calc.TestTable/negative",
			"example.com/sample/panics.TestIndexOutOfRange"}, 0},
		"go/json": {"go", 11, 5, 5, 1, []string{
			"example.com/sample/broken [build failed]", "example.com/sample/calc.TestSub",
			"example.com/sample/calc.TestTable", "example.com/sample/calc.TestTable/negative",
			"example.com/sample/panics.TestIndexOutOfRange"}, 0},
		"go/pass":         {"go-packages", 1, 1, 0, 0, nil, 0},
		"go/cover":        {"go-packages", 2, 1, 1, 0, []string{"example.com/sample/calc.TestSub", "example.com/sample/calc.TestTable", "example.com/sample/calc.TestTable/negative"}, 66.65},
		"go/setup-failed": {"go-packages", 1, 0, 1, 0, []string{"example.com/setup/badimp [setup failed]"}, 0},
		"go/timeout":      {"go-packages", 1, 0, 1, 0, []string{"example.com/slow.TestSlow"}, 0},
		// Tests: 2 failed, 1 skipped, 1 todo, 3 passed, 7 total
		"jest/fail":     {"jest", 7, 3, 2, 2, []string{"calc › div › throws on zero", "calc › subtracts numbers"}, 0},
		"jest/verbose":  {"jest", 7, 3, 2, 2, []string{"calc › div › throws on zero", "calc › subtracts numbers"}, 0},
		"jest/coverage": {"jest", 7, 3, 2, 2, []string{"calc › div › throws on zero", "calc › subtracts numbers"}, 70},
		"jest/pass":     {"jest", 2, 1, 0, 1, nil, 0},
		// Tests: 1 todo, 1 passed, 2 total; plus the suite that failed to run (Test Suites: 1 failed).
		"jest/suite-error": {"jest", 3, 1, 1, 1, []string{"jestbroken/broken.test.js › Test suite failed to run"}, 0},
		// Tests  2 failed | 3 passed | 1 skipped | 1 todo (7)
		"vitest/fail":    {"vitest", 7, 3, 2, 2, []string{"vitests/calc.test.js > calc > div > throws on zero", "vitests/calc.test.js > calc > subtracts numbers"}, 0},
		"vitest/verbose": {"vitest", 7, 3, 2, 2, []string{"vitests/calc.test.js > calc > div > throws on zero", "vitests/calc.test.js > calc > subtracts numbers"}, 0},
		"vitest/pass":    {"vitest", 2, 1, 0, 1, nil, 0},
		// Test Files  1 failed (1), Tests  no tests: the file that did not load is the failure.
		"vitest/import-error": {"vitest", 1, 0, 1, 0, []string{"vitbroken/broken.test.js"}, 0},
		// 2 passing, 2 pending, 2 failing
		"mocha/fail": {"mocha", 6, 2, 2, 2, []string{"calc div throws on zero", "calc subtracts numbers"}, 0},
		"mocha/pass": {"mocha", 1, 1, 0, 0, nil, 0},
		"tap/mocha":  {"tap", 6, 2, 2, 2, []string{"calc div throws on zero", "calc subtracts numbers"}, 0},
		// ℹ tests 6, pass 2, fail 2, cancelled 0, skipped 1, todo 1
		"nodetest/spec-fail": {"node-test", 6, 2, 2, 2, []string{"div > throws on zero", "subtracts numbers"}, 0},
		"nodetest/tap-fail":  {"node-test", 6, 2, 2, 2, []string{"div > throws on zero", "subtracts numbers"}, 0},
		"nodetest/spec-pass": {"node-test", 6, 1, 0, 5, nil, 0},
		"nodetest/tap-pass":  {"node-test", 6, 1, 0, 5, nil, 0},
		// test result: FAILED. 1 passed; 2 failed; 1 ignored (lib only: cargo stops at the first failing binary)
		"cargo/fail-backtrace": {"cargo", 4, 1, 2, 1, []string{"tests::divides_by_zero", "tests::subtracts"}, 0},
		// lib 1/2/1, tests/integration.rs 1/1/0, doc-tests 1/0/0
		"cargo/no-fail-fast": {"cargo", 7, 3, 3, 1, []string{"integration_sub", "tests::divides_by_zero", "tests::subtracts"}, 0},
		"cargo/pass":         {"cargo", 1, 1, 0, 0, nil, 0},
		"cargo/build-error":  {"cargo", 2, 0, 2, 0, []string{"calc (lib test) [build failed]", "calc (lib) [build failed]"}, 0},
		// Ran 7 tests; FAILED (failures=3, errors=1, skipped=1, expected failures=1): 3 distinct tests failed.
		"unittest/fail":    {"unittest", 7, 2, 3, 2, []string{"tests.test_calc.CalcTest.test_div_zero", "tests.test_calc.CalcTest.test_sub", "tests.test_calc.CalcTest.test_sub_cases"}, 0},
		"unittest/verbose": {"unittest", 7, 2, 3, 2, []string{"tests.test_calc.CalcTest.test_div_zero", "tests.test_calc.CalcTest.test_sub", "tests.test_calc.CalcTest.test_sub_cases"}, 0},
		"unittest/pass":    {"unittest", 1, 1, 0, 0, nil, 0},
		// 5 failed, 2 passed, 1 skipped, 1 xfailed, 1 xpassed, 1 error
		"pytest/fail":             {"pytest", 11, 3, 6, 2, pytestFailing, 0},
		"pytest/quiet":            {"pytest", 11, 3, 6, 2, pytestFailing, 0},
		"pytest/verbose":          {"pytest", 11, 3, 6, 2, pytestFailing, 0},
		"pytest/cov":              {"pytest", 11, 3, 6, 2, pytestFailing, 70},
		"pytest/pass":             {"pytest", 2, 2, 0, 0, nil, 0},
		"pytest/collection-error": {"pytest", 1, 0, 1, 0, []string{"colerr/test_bad.py"}, 0},
		"pytest/no-tests":         {"pytest", 0, 0, 0, 0, nil, 0},
		// 6 examples, 2 failures, 2 pending
		"rspec/fail": {"rspec", 6, 2, 2, 2, []string{"Calc subtracts numbers", "Calc.div raises on zero"}, 0},
		"rspec/doc":  {"rspec", 6, 2, 2, 2, []string{"Calc subtracts numbers", "Calc.div raises on zero"}, 0},
		"rspec/pass": {"rspec", 1, 1, 0, 0, nil, 0},
		// Tests: 9, Assertions: 6, Errors: 1, Failures: 2, Skipped: 1, Incomplete: 1.
		"phpunit/fail":    {"phpunit", 9, 4, 3, 2, []string{"CalcTest::testCases with data set \"two\"", "CalcTest::testDivZero", "CalcTest::testSub"}, 0},
		"phpunit/testdox": {"phpunit", 9, 4, 3, 2, nil, 0},
		"phpunit/pass":    {"phpunit", 2, 2, 0, 0, nil, 0},
		// 5 tests, 2 failures, 1 skipped / 5 tests, 0 failures, 4 excluded
		"exunit/fail":     {"exunit", 5, 2, 2, 1, []string{"test div/2 raises on zero (CalcTest)", "test subtracts numbers (CalcTest)"}, 0},
		"exunit/excluded": {"exunit", 5, 1, 0, 4, nil, 0},
		// 67% tests passed, 2 tests failed out of 6 (one did not run)
		"ctest/fail":              {"ctest", 6, 3, 2, 1, []string{"crashes", "sub_works"}, 0},
		"ctest/output-on-failure": {"ctest", 6, 3, 2, 1, []string{"crashes", "sub_works"}, 0},
		"ctest/pass":              {"ctest", 3, 3, 0, 0, nil, 0},
		// Tests run: 5, Failures: 1, Errors: 1, Skipped: 1
		"maven/fail":          {"maven", 5, 2, 2, 1, []string{"com.example.CalcTest.dividesByZero", "com.example.CalcTest.subtracts"}, 0},
		"maven/pass":          {"maven", 5, 4, 0, 1, nil, 0},
		"maven/compile-error": {},
		// 4 runs, 2 assertions, 1 failures, 1 errors, 1 skips
		"minitest/fail": {"minitest", 4, 1, 2, 1, []string{"CalcTest#test_div", "CalcTest#test_sub"}, 0},
		"minitest/pass": {"minitest", 1, 1, 0, 0, nil, 0},
		// Summary [...] 2 tests run: 1 passed, 1 failed, 0 skipped
		"nextest/fail": {"nextest", 2, 1, 1, 0, []string{"workspace_crate2::workspace_integration test_fail"}, 0},
		// 5 passed; then 8/10 run: 5 passed, 2 failed, 1 exec failed, 1 timed out, 2 skipped; then 0.
		"nextest/summary-variants": {"nextest", 17, 10, 4, 2, nil, 0},
		"dotnet/fail":              {"dotnet", 2, 1, 1, 0, []string{"MSTest_Failed_Test"}, 0},
		"dotnet/pass":              {"dotnet", 183, 183, 0, 0, nil, 0},
		"dotnet/legacy":            {"dotnet", 39, 33, 4, 2, []string{"Microsoft.DotNet.Migration.Tests.GivenThatIWantToMigrateTestApps.It_migrates_project_with_output_name"}, 0},
		"gradle/fail":              {"gradle", 4, 2, 2, 0, []string{"com.example.lint.detectors.AndroidLogDetectorTest > test_detector_not_triggering", "com.example.lint.detectors.AndroidLogDetectorTest > test_detector_triggering"}, 0},
		"gradle/single":            {"gradle", 1, 0, 1, 0, []string{"GreeterTest > testThatGreeterReturnsTheCorrectGreeting"}, 0},
		// go test ./calc ./clean, then jest: the two runners add up.
		"mixed/go-then-jest": {"go-packages+jest", 9, 4, 3, 2, []string{
			"calc › div › throws on zero", "calc › subtracts numbers", "example.com/sample/calc.TestSub",
			"example.com/sample/calc.TestTable", "example.com/sample/calc.TestTable/negative"}, 0},
		"plain/wrapper":        {"plain", 15, 12, 1, 2, nil, 0},
		"unknown/make-c-error": {},
	}
	seen := map[string]bool{}
	for _, f := range outputFiles(t) {
		runner, name := caseName(f)
		key := runner + "/" + name
		seen[key] = true
		want, ok := tests[key]
		if !ok {
			t.Errorf("%s has no expected counts in TestParseCounts", f)
			continue
		}
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			s := Parse(string(data))
			got := counts{s.Runner, s.Total, s.Passed, s.Failed, s.Skipped, nil, 0}
			if want.failing != nil {
				got.failing = s.Failing
			}
			if s.Coverage != nil {
				got.coverage = *s.Coverage
			}
			if want.runner == "" && s.Known {
				t.Errorf("want Known=false, got %+v", s)
			}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(counts{})); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
		})
	}
	for k := range tests {
		if !seen[k] {
			t.Errorf("expected counts for %s, but testdata/%s.txt does not exist", k, k)
		}
	}
}

var pytestFailing = []string{
	"tests/test_py.py::TestDiv::test_div_zero", "tests/test_py.py::test_sub",
	"tests/test_py.py::test_sub_param[0-0-0]", "tests/test_py.py::test_sub_param[1-1-0]",
	"tests/test_py.py::test_sub_param[4-2-2]", "tests/test_py.py::test_uses_broken",
}
