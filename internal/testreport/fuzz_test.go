package testreport

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// seedFiles adds every file matching pattern under testdata as a seed.
func seedFiles(f *testing.F, pattern string, add func(data []byte)) {
	f.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", pattern))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed files for %s: %v", pattern, err)
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		add(data)
	}
}

func checkSummary(t *testing.T, s Summary) {
	t.Helper()
	if !s.Known {
		if s.Total|s.Passed|s.Failed|s.Skipped != 0 || len(s.Failing) != 0 {
			t.Fatalf("unknown summary with counts: %+v", s)
		}
		return
	}
	if s.Passed < 0 || s.Failed < 0 || s.Skipped < 0 || s.Passed+s.Failed+s.Skipped > s.Total {
		t.Fatalf("inconsistent counts: total %d passed %d failed %d skipped %d", s.Total, s.Passed, s.Failed, s.Skipped)
	}
	if s.Coverage != nil && (math.IsNaN(*s.Coverage) || *s.Coverage < 0 || *s.Coverage > 100) {
		t.Fatalf("coverage %v out of range", *s.Coverage)
	}
}

func FuzzParse(f *testing.F) {
	seedFiles(f, "*/*.txt", func(d []byte) { f.Add(string(d)) })
	f.Fuzz(func(t *testing.T, in string) {
		s := Parse(in)
		checkSummary(t, s)
		if fp := Fingerprint(s, in); len(fp) != 18 && fp != "t:none" {
			t.Fatalf("fingerprint %q", fp)
		}
	})
}

func FuzzParseJUnitXML(f *testing.F) {
	seedFiles(f, "junit/*.xml", func(d []byte) { f.Add(d) })
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := ParseJUnitXML(bytes.NewReader(in))
		if err != nil && !s.Known && s.Total != 0 {
			t.Fatalf("error %v with counts %+v", err, s)
		}
		checkSummary(t, s)
	})
}

func FuzzParseCoverage(f *testing.F) {
	seedFiles(f, "coverage/*", func(d []byte) { f.Add(d) })
	f.Fuzz(func(t *testing.T, in []byte) {
		p, ok := ParseCoverage("report", in)
		if !ok && p != 0 {
			t.Fatalf("not ok but %v", p)
		}
		if math.IsNaN(p) || p < 0 || p > 100 {
			t.Fatalf("coverage %v out of range", p)
		}
	})
}

func FuzzFeedback(f *testing.F) {
	seedFiles(f, "*/*.txt", func(d []byte) { f.Add(string(d), 8192) })
	f.Add("--- FAIL: TestX (0.00s)\n    x_test.go:1: \xff\xfe broken UTF-8 ✓\nFAIL\tpkg\t0.1s\n", 37)
	f.Fuzz(func(t *testing.T, in string, max int) {
		if max < 0 {
			max = -max
		}
		max %= 20000
		s := Parse(in)
		got := Feedback(in, s, max)
		if len(got) > max {
			t.Fatalf("feedback %d bytes > max %d", len(got), max)
		}
		if !utf8.ValidString(got) {
			t.Fatalf("feedback is not valid UTF-8: %q", got)
		}
		if again := Feedback(in, s, max); again != got {
			t.Fatalf("Feedback is not deterministic")
		}
		if max >= 200 && !strings.HasPrefix(got, "Test") {
			t.Fatalf("feedback does not start with the header: %q", got)
		}
	})
}

// largeMixedOutput repeats every captured output until size bytes: all the
// parsers have lines to work on.
func largeMixedOutput(tb testing.TB, size int) string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*", "*.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	var all strings.Builder
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		all.Write(data)
	}
	chunk := all.String()
	var b strings.Builder
	for b.Len() < size {
		b.WriteString(chunk)
	}
	return b.String()[:size]
}

// BenchmarkParseLarge parses 5 MB of output; the 1 MB and 5 MB cases show
// the cost per byte stays flat (linear time).
func BenchmarkParseLarge(b *testing.B) {
	for _, bc := range []struct {
		name string
		gen  func(testing.TB, int) string
	}{
		{"go-v", func(_ testing.TB, n int) string { return largeGoOutput(n) }},
		{"mixed", largeMixedOutput},
	} {
		for _, size := range []int{1 << 20, 5 << 20} {
			out := bc.gen(b, size)
			b.Run(bc.name+"/"+byteSize(size), func(b *testing.B) {
				b.SetBytes(int64(len(out)))
				for b.Loop() {
					Parse(out)
				}
			})
		}
	}
}

func BenchmarkFeedbackLarge(b *testing.B) {
	out := largeMixedOutput(b, 5<<20)
	s := Parse(out)
	b.SetBytes(int64(len(out)))
	for b.Loop() {
		Feedback(out, s, feedbackMax)
	}
}

func byteSize(n int) string { return fmt.Sprintf("%dMB", n>>20) }
