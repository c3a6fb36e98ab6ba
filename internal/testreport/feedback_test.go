package testreport

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// feedbackMax is the budget the engine gives Feedback in the prompt.
const feedbackMax = 8 << 10

// TestFeedback renders the feedback of every captured output and compares it
// with its golden text (what the agent would read).
func TestFeedback(t *testing.T) {
	t.Parallel()
	for _, f := range outputFiles(t) {
		runner, name := caseName(f)
		t.Run(runner+"/"+name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out := string(data)
			got := Feedback(out, Parse(out), feedbackMax)
			checkFeedback(t, got, feedbackMax)
			golden := filepath.Join("testdata", "TestFeedback", runner+"-"+name+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("reading golden file (run go test -update to create it): %v", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("Feedback differs from %s (-want +got):\n%s", golden, diff)
			}
		})
	}
}

func checkFeedback(t *testing.T, got string, max int) {
	t.Helper()
	if len(got) > max {
		t.Errorf("feedback is %d bytes, over the %d-byte budget", len(got), max)
	}
	if !utf8.ValidString(got) {
		t.Errorf("feedback is not valid UTF-8")
	}
}

// TestFeedbackKeepsWhatMatters checks, for real outputs, that each failing
// test appears with the location and the message of its failure.
func TestFeedbackKeepsWhatMatters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want []string
	}{
		{"go/verbose.txt", []string{
			"Tests: 5 failed, 5 passed, 1 skipped, 11 total (go)",
			"broken/broken_test.go:8:11: undefined: undefinedThing",
			"- example.com/sample/calc.TestSub  (calc_test.go:13)",
			"Sub(5, 3) = 3, want 2",
			"- example.com/sample/panics.TestIndexOutOfRange  (/tmp/gosample/panics/panics_test.go:12)",
			"panic: runtime error: index out of range [5] with length 2",
		}},
		{"go/json.txt", []string{
			"broken/broken_test.go:6:17: cannot use Double(2)",
			"- example.com/sample/calc.TestTable/negative  (calc_test.go:29)",
			"Add(-1, -2) = -3, want -4",
		}},
		{"pytest/fail.txt", []string{
			"- tests/test_py.py::test_sub  (tests/test_py.py:11)",
			"E       assert 3 == 2",
			"- tests/test_py.py::test_uses_broken  (tests/test_py.py:36)",
			"RuntimeError: fixture exploded",
			"5 failed, 2 passed, 1 skipped, 1 xfailed, 1 xpassed, 1 error in 0.03s",
		}},
		{"jest/fail.txt", []string{
			"- calc › subtracts numbers  (jesttests/calc.test.js:8:23)",
			"Expected: 2",
			"Received: 3",
			"Tests:       2 failed, 1 skipped, 1 todo, 3 passed, 7 total",
		}},
		{"cargo/no-fail-fast.txt", []string{
			"- tests::subtracts  (src/lib.rs:29:9)",
			"assertion `left == right` failed",
			"- integration_sub  (tests/integration.rs:8:5)",
			"sub is off by one",
		}},
		{"cargo/build-error.txt", []string{
			"error[E0277]: cannot add `&str` to `i32` --> src/lib.rs:2:7",
		}},
		{"unittest/fail.txt", []string{
			"- tests.test_calc.CalcTest.test_sub  (/tmp/py/tests/test_calc.py:11)",
			"AssertionError: 3 != 2",
		}},
		{"rspec/fail.txt", []string{"- Calc subtracts numbers  (./spec/calc_spec.rb:9)", "expected: 2"}},
		{"phpunit/fail.txt", []string{"- CalcTest::testSub  (/tmp/php/tests/CalcTest.php:13)", "Failed asserting that 3 is identical to 2."}},
		{"exunit/fail.txt", []string{"- test subtracts numbers (CalcTest)  (test/calc_test.exs:8)", "Assertion with == failed"}},
		{"maven/fail.txt", []string{"- com.example.CalcTest.subtracts  (CalcTest.java:13)", "java.lang.AssertionError: expected:<2> but was:<3>"}},
		{"maven/compile-error.txt", []string{"[ERROR] /tmp/mvnbroken/src/main/java/com/example/Calc.java:[4,54] cannot find symbol"}},
		{"dotnet/fail.txt", []string{`- MSTest_Failed_Test  (D:\source\repos\xunitplay\TestProject2\UnitTest1.cs:10)`, "Assert.IsTrue failed."}},
		{"mocha/fail.txt", []string{"- calc subtracts numbers  (mochatests/calc.spec.js:9:12)", "AssertionError [ERR_ASSERTION]"}},
		{"vitest/fail.txt", []string{"- vitests/calc.test.js > calc > subtracts numbers  (vitests/calc.test.js:9:28)", "AssertionError: expected 3 to be 2"}},
		{"nodetest/tap-fail.txt", []string{"- subtracts numbers  (/tmp/js/nodetests/calc.test.js:9:1)", "3 !== 2"}},
		{"unknown/make-c-error.txt", []string{
			"Test results: no test runner output recognised",
			"main.c:1:37: error: expected ‘;’ before ‘}’ token",
			"make: *** [Makefile:2: all] Error 1",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			out := string(data)
			got := Feedback(out, Parse(out), feedbackMax)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("feedback lacks %q:\n%s", w, got)
				}
			}
		})
	}
}

// TestFeedbackHugeOutput buries two real failures in 5 MB of passing tests
// and log noise: the feedback must still name them with their messages.
func TestFeedbackHugeOutput(t *testing.T) {
	t.Parallel()
	size := 5 << 20
	if raceEnabled || testing.Short() {
		size = 1 << 20 // same shape, fewer repetitions
	}
	out := largeGoOutput(size)
	s := Parse(out)
	if s.Failed != 2 {
		t.Fatalf("Parse found %d failures, want 2 (%+v)", s.Failed, s.Runner)
	}
	got := Feedback(out, s, feedbackMax)
	checkFeedback(t, got, feedbackMax)
	for _, w := range []string{
		"- example.com/big/pkg7.TestBroken  (big_test.go:42)", "got 3, want 4",
		"- example.com/big/pkg13.TestAlsoBroken  (other_test.go:7)", "unexpected EOF",
		"FAIL\texample.com/big/pkg7",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("feedback lacks %q:\n%s", w, got)
		}
	}
}

// largeGoOutput builds `go test -v` output of at least size bytes: many
// packages of passing tests with log lines, and two failures.
func largeGoOutput(size int) string {
	var b strings.Builder
	for pkg := 0; b.Len() < size; pkg++ {
		for i := 0; i < 200; i++ {
			fmt.Fprintf(&b, "=== RUN   TestCase%d\n    case_test.go:%d: step %d of a long log line that says nothing useful at all\n--- PASS: TestCase%d (0.00s)\n", i, i+10, i, i)
		}
		switch pkg {
		case 7:
			b.WriteString("=== RUN   TestBroken\n    big_test.go:42: got 3, want 4\n--- FAIL: TestBroken (0.01s)\nFAIL\n")
			fmt.Fprintf(&b, "FAIL\texample.com/big/pkg%d\t0.120s\n", pkg)
		case 13:
			b.WriteString("=== RUN   TestAlsoBroken\n    other_test.go:7: reading config: unexpected EOF\n--- FAIL: TestAlsoBroken (0.00s)\nFAIL\n")
			fmt.Fprintf(&b, "FAIL\texample.com/big/pkg%d\t0.050s\n", pkg)
		default:
			fmt.Fprintf(&b, "PASS\nok  \texample.com/big/pkg%d\t0.100s\n", pkg)
		}
	}
	return b.String()
}

func TestFeedbackBudget(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("testdata", "go", "verbose.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out := string(data) + "\nnon-ASCII tail: héllo wörld ✓ ✕ — ünïcödé\n"
	s := Parse(out)
	for _, max := range []int{0, 1, 2, 3, 10, 50, 100, 257, 1000, 4096} {
		got := Feedback(out, s, max)
		checkFeedback(t, got, max)
		if max >= 100 && !strings.HasPrefix(got, "Tests: ") {
			t.Errorf("max %d: feedback does not start with the header: %q", max, got)
		}
		if again := Feedback(out, s, max); again != got {
			t.Errorf("max %d: Feedback is not deterministic", max)
		}
	}
}
