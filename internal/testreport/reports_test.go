package testreport

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseJUnitXML(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file                           string
		total, passed, failed, skipped int
		failing                        []string
	}{
		// Surefire 2.22.3, JUnit 4: adds passes, subtracts fails, dividesByZero errors, multiplies is @Ignore'd.
		{"surefire-CalcTest.xml", 4, 1, 2, 1, []string{"com.example.CalcTest.dividesByZero", "com.example.CalcTest.subtracts"}},
		{"surefire-OtherTest.xml", 1, 1, 0, 0, nil},
		// JUnit Platform legacy XML: 7 tests found, 1 skipped, 3 failed (one is an error), 3 successful.
		{"junit5-jupiter.xml", 7, 3, 3, 1, []string{"com.example.CalcTest$Inner.innerFails()", "com.example.CalcTest.dividesByZero()", "com.example.CalcTest.subtracts()"}},
		// pytest --junitxml over tests/: tests="18" failures="8" errors="1" skipped="4".
		{"pytest.xml", 18, 5, 9, 4, nil},
		// jest-junit writes todo tests as passing test cases (jest itself says 3 passed, 1 todo).
		{"jest-junit.xml", 7, 4, 2, 1, []string{"calc div throws on zero", "calc subtracts numbers"}},
		// PHPUnit 9 --log-junit, nested suites: tests="9" errors="1" failures="2" skipped="2".
		{"phpunit.xml", 9, 4, 3, 2, []string{"CalcTest.testCases with data set \"two\"", "CalcTest.testDivZero", "CalcTest.testSub"}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			f, err := os.Open(filepath.Join("testdata", "junit", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			s, err := ParseJUnitXML(f)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, s)
			got := []int{s.Total, s.Passed, s.Failed, s.Skipped}
			if diff := cmp.Diff([]int{tc.total, tc.passed, tc.failed, tc.skipped}, got); diff != "" {
				t.Errorf("total, passed, failed, skipped (-want +got):\n%s", diff)
			}
			if tc.failing != nil {
				if diff := cmp.Diff(tc.failing, s.Failing); diff != "" {
					t.Errorf("failing (-want +got):\n%s", diff)
				}
			}
			if s.Runner != "junit-xml" || !s.Known {
				t.Errorf("Known=%v Runner=%q, want true, junit-xml", s.Known, s.Runner)
			}
		})
	}
}

func TestParseJUnitXMLErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, wantErr string
		wantTotal         int
	}{
		{"empty", "", "no XML element", 0},
		{"not junit", `<?xml version="1.0"?><coverage line-rate="0.5"/>`, "root element is <coverage>", 0},
		{"not xml", "PASS ok 1", "no XML element", 0},
		{"cut short", `<testsuite><testcase name="a"/><testcase name="b"><failure>boom`, "cut short", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := ParseJUnitXML(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
			if s.Total != tc.wantTotal {
				t.Errorf("Total = %d, want %d", s.Total, tc.wantTotal)
			}
		})
	}
}

func TestParseJUnitXMLSuiteAttributes(t *testing.T) {
	t.Parallel()
	// No <testcase> elements: counts come from the innermost suites only.
	in := `<testsuites tests="10" failures="3"><testsuite name="a" tests="6" failures="1" errors="1" skipped="1"/>` +
		`<testsuite name="b" tests="4" failures="1"/></testsuites>`
	s, err := ParseJUnitXML(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := Summary{Known: true, Runner: "junit-xml", Total: 10, Passed: 6, Failed: 3, Skipped: 1}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	latin := "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><testsuite><testcase classname=\"Caf\xe9Test\" name=\"t\"><failure/></testcase></testsuite>"
	s, err = ParseJUnitXML(strings.NewReader(latin))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"CaféTest.t"}, s.Failing); diff != "" {
		t.Errorf("Latin-1 name (-want +got):\n%s", diff)
	}
}

func TestParseCoverage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want float64
	}{
		// go test -coverprofile over ./clean and ./calc: 8 statements, 4 covered (deduplicated blocks).
		{"go-coverage.out", 50},
		// jest --coverage: LF:8 LH:5.
		{"jest-lcov.info", 62.5},
		// jest's clover.xml (istanbul counts lines as statements): statements="8" coveredstatements="5".
		{"jest-clover.xml", 62.5},
		// pytest-cov --cov-report=xml: lines-valid="10" lines-covered="7".
		{"pytest-cobertura.xml", 70},
		// JaCoCo 0.8.6 XMLFormatter, report-level LINE counter: missed 1, covered 3.
		{"jacoco.xml", 75},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join("testdata", "coverage", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			got, ok := ParseCoverage(tc.file, data)
			if !ok || got != tc.want {
				t.Errorf("ParseCoverage = %v, %v; want %v, true", got, ok, tc.want)
			}
		})
	}
}

func TestParseCoverageFormats(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     float64
		ok       bool
	}{
		{"go profile repeated blocks", "mode: atomic\na.go:1.1,2.2 2 0\na.go:1.1,2.2 2 5\nb.go:1.1,3.1 2 0\n", 50, true},
		{"go profile without blocks", "mode: set\n", 0, false},
		{"lcov from DA lines", "SF:a.js\nDA:1,1\nDA:2,0\nDA:3,4\nend_of_record\n", 66.67, true},
		{"cobertura rate only", `<coverage line-rate="0.835" branch-rate="0"/>`, 83.5, true},
		{"istanbul summary", `{"total":{"lines":{"total":40,"covered":30,"skipped":0,"pct":75}}}`, 75, true},
		{"coverage.py json", `{"meta":{},"totals":{"covered_lines":9,"num_statements":12,"percent_covered":75.0}}`, 75, true},
		{"junit is not coverage", `<testsuite tests="1"><testcase name="x"/></testsuite>`, 0, false},
		{"garbage", "hello world", 0, false},
		{"empty", "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := ParseCoverage("report", []byte(tc.in))
			if ok != tc.ok || got != tc.want {
				t.Errorf("ParseCoverage = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// copyTestdata copies testdata/<from> to dir/<to>, creating directories.
func copyTestdata(t *testing.T, dir, from, to string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", from))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, to)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestScanReports(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	since := time.Now()
	old := since.Add(-time.Hour)

	// This run's reports, in the usual places.
	copyTestdata(t, dir, "junit/surefire-CalcTest.xml", "target/surefire-reports/TEST-com.example.CalcTest.xml")
	copyTestdata(t, dir, "junit/surefire-OtherTest.xml", "target/surefire-reports/TEST-com.example.OtherTest.xml")
	copyTestdata(t, dir, "junit/pytest.xml", "py/junit.xml")
	copyTestdata(t, dir, "coverage/jacoco.xml", "target/site/jacoco/jacoco.xml")
	// Both written by one jest run: only lcov.info (preferred) counts for that directory.
	copyTestdata(t, dir, "coverage/jest-lcov.info", "web/coverage/lcov.info")
	copyTestdata(t, dir, "coverage/jest-clover.xml", "web/coverage/clover.xml")
	// Surefire's plain-text summaries are not XML reports.
	copyTestdata(t, dir, "maven/fail.txt", "target/surefire-reports/com.example.CalcTest.txt")

	// A report from an earlier run must be ignored.
	stale := copyTestdata(t, dir, "junit/junit5-jupiter.xml", "build/test-results/test/TEST-junit-jupiter.xml")
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	// Reports inside dependencies and VCS data are never read.
	copyTestdata(t, dir, "junit/jest-junit.xml", "node_modules/pkg/junit.xml")
	copyTestdata(t, dir, "junit/jest-junit.xml", ".git/junit.xml")
	// A symbolic link is not followed.
	if err := os.Symlink(filepath.Join(dir, "py", "junit.xml"), filepath.Join(dir, "junit-link.xml")); err != nil {
		t.Fatal(err)
	}

	s, err := ScanReports(dir, since)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, s)
	// Surefire 4+1 and pytest 18 test cases.
	got := []int{s.Total, s.Passed, s.Failed, s.Skipped}
	if diff := cmp.Diff([]int{23, 7, 11, 5}, got); diff != "" {
		t.Errorf("total, passed, failed, skipped (-want +got):\n%s", diff)
	}
	if s.Runner != "junit-xml" {
		t.Errorf("Runner = %q, want junit-xml", s.Runner)
	}
	// JaCoCo 3 of 4 lines plus lcov 5 of 8 lines: 8 of 12.
	if s.Coverage == nil || *s.Coverage != 66.67 {
		t.Errorf("Coverage = %v, want 66.67", s.Coverage)
	}
	for _, name := range s.Failing {
		if strings.Contains(name, "Inner") || strings.Contains(name, "calc div") {
			t.Errorf("failing test %q comes from a stale or skipped report", name)
		}
	}
}

func TestScanReportsGoCoverage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyTestdata(t, dir, "coverage/go-coverage.out", "coverage.out")
	// coverage.txt that is not a Go profile is ignored.
	if err := os.WriteFile(filepath.Join(dir, "coverage.txt"), []byte("nothing to see\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ScanReports(dir, time.Now().Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if s.Known {
		t.Errorf("Known = true with no JUnit report")
	}
	if s.Coverage == nil || *s.Coverage != 50 {
		t.Errorf("Coverage = %v, want 50", s.Coverage)
	}
}

func TestScanReportsBounds(t *testing.T) {
	t.Parallel()
	t.Run("depth", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		copyTestdata(t, dir, "junit/surefire-OtherTest.xml", "a/b/c/d/e/test-results/TEST-ok.xml")      // depth 6: found
		copyTestdata(t, dir, "junit/surefire-CalcTest.xml", "a/b/c/d/e/f/g/test-results/TEST-deep.xml") // deeper: not
		s, err := ScanReports(dir, time.Now().Add(-time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if s.Total != 1 {
			t.Errorf("Total = %d, want 1 (only the report within 6 levels)", s.Total)
		}
	})
	t.Run("entries", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		// 2100 entries at the top level, in name order before the report's directory.
		for i := 0; i < 2100; i++ {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("a%04d", i)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		copyTestdata(t, dir, "junit/surefire-OtherTest.xml", "zz/junit.xml")
		s, err := ScanReports(dir, time.Now().Add(-time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if s.Known {
			t.Errorf("found a report beyond the 2000-entry bound: %+v", s)
		}
	})
	t.Run("missing dir", func(t *testing.T) {
		t.Parallel()
		_, err := ScanReports(filepath.Join(t.TempDir(), "nope"), time.Now())
		if err == nil || !strings.Contains(err.Error(), "scanning") {
			t.Errorf("error = %v, want one naming the directory", err)
		}
	})
}

func TestMerge(t *testing.T) {
	t.Parallel()
	cov := func(f float64) *float64 { return &f }
	out := Summary{Known: true, Runner: "go", Total: 3, Passed: 1, Failed: 2, Failing: []string{"p.TestA", "p [build failed]"}, Coverage: cov(40)}
	tests := []struct {
		name string
		a, b Summary
		want Summary
	}{
		{"no reports", out, Summary{}, out},
		{"reports win on counts and coverage", out,
			Summary{Known: true, Runner: "junit-xml", Total: 10, Passed: 8, Failed: 2, Failing: []string{"p.TestA", "p.TestB"}, Coverage: cov(70)},
			Summary{Known: true, Runner: "junit-xml", Total: 10, Passed: 8, Failed: 2, Failing: []string{"p.TestA", "p.TestB"}, Coverage: cov(70)}},
		{"output coverage kept when reports have none", out,
			Summary{Known: true, Runner: "junit-xml", Total: 10, Passed: 8, Failed: 2, Failing: []string{"p.TestA", "p.TestB"}},
			Summary{Known: true, Runner: "junit-xml", Total: 10, Passed: 8, Failed: 2, Failing: []string{"p.TestA", "p.TestB"}, Coverage: cov(40)}},
		{"a failure only the output shows is kept", out,
			Summary{Known: true, Runner: "junit-xml", Total: 5, Passed: 5, Passing: []string{"q.TestC"}},
			Summary{Known: true, Runner: "junit-xml+go", Total: 7, Passed: 5, Failed: 2, Failing: []string{"p [build failed]", "p.TestA"}, Passing: []string{"q.TestC"}, Coverage: cov(40)}},
		{"coverage only from reports", Summary{}, Summary{Coverage: cov(12.5)}, Summary{Coverage: cov(12.5)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Merge(tc.a, tc.b)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestFingerprint(t *testing.T) {
	t.Parallel()
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	verbose, js := read("go/verbose.txt"), read("go/json.txt")

	// The same failing set from -v and -json output: same id.
	if a, b := Fingerprint(Parse(verbose), verbose), Fingerprint(Parse(js), js); a != b {
		t.Errorf("same failures, different fingerprints: %s vs %s", a, b)
	}
	// Another failing set: another id.
	plain := read("go/plain.txt")
	cover := read("go/cover.txt")
	if Fingerprint(Parse(plain), plain) == Fingerprint(Parse(cover), cover) {
		t.Errorf("different failing sets share a fingerprint")
	}
	if got := Fingerprint(Parse(read("go/pass.txt")), read("go/pass.txt")); got != "t:none" {
		t.Errorf("passing run: fingerprint %q, want t:none", got)
	}

	// Unknown output: durations, numbers, addresses, temp paths and line
	// order do not matter; the failure itself does.
	run1 := "building\nerror: connection refused after 1.52s at 0x7ffd1234 in /tmp/build-83731/x\nFAILED step 3 of 9\n"
	run2 := "building again\nFAILED step 4 of 9\nerror: connection refused after 12.04s at 0x7ffd9999 in /tmp/build-11/x\n"
	other := "building\nerror: permission denied\n"
	f1, f2, f3 := Fingerprint(Summary{}, run1), Fingerprint(Summary{}, run2), Fingerprint(Summary{}, other)
	if f1 != f2 {
		t.Errorf("same failure with different noise: %s vs %s", f1, f2)
	}
	if f1 == f3 {
		t.Errorf("different failures share fingerprint %s", f1)
	}
	if !strings.HasPrefix(f1, "o:") || len(f1) != 18 {
		t.Errorf("fingerprint %q, want o: and 16 hex digits", f1)
	}
	// No failure line at all: the normalised last lines decide.
	if Fingerprint(Summary{}, "step 1\nstep 2\n") == Fingerprint(Summary{}, "step 1\nstep 3 done\n") {
		t.Errorf("outputs with different endings share a fingerprint")
	}
}

func TestStripANSI(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"\x1b[31mred\x1b[39m and \x1b[1m\x1b[32mgreen\x1b[0m", "red and green"},
		{"\x1b]8;;http://x\x07link\x1b]8;;\x07", "link"},
		{"\x1b]0;title\x1b\\text", "text"},
		{"cut \x1b[", "cut "},
		{"trailing \x1b", "trailing "},
		{"\x1b(Bcharset", "charset"},
	}
	for _, tc := range tests {
		if got := stripANSI(tc.in); got != tc.want {
			t.Errorf("stripANSI(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// Colour codes and CR-redrawn progress do not hide a summary line.
	s := Parse("\x1b[2K\rrunning 1/9\rrunning 9/9\r\n\x1b[1m\x1b[31m3 passed, 1 failed\x1b[0m\r\n")
	if !s.Known || s.Passed != 3 || s.Failed != 1 {
		t.Errorf("Parse through ANSI and CR: %+v", s)
	}
}
