package study

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, got string) {
	t.Helper()
	name := filepath.Join("testdata", t.Name()+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", name, diff)
	}
}

func sampleResults() []Result {
	tg := func(c, w string) Target { return Target{Command: c, Workdir: w} }
	return []Result{
		{Repo: "a/right", Ecosystem: "go", Verdict: VerdictRight, Confidence: "high", Proposed: tg("go test ./...", "."), Expected: tg("go test ./...", ".")},
		{Repo: "b/equiv", Ecosystem: "rust", Verdict: VerdictEquivalent, Confidence: "high", Proposed: tg("cargo test --all", "."), Expected: tg("cargo test --workspace", ".")},
		{Repo: "c/bench", Ecosystem: "go", Verdict: VerdictWrong, Confidence: "high", Proposed: tg("go test -bench .", "."), Setup: "go mod download", Expected: tg("go test ./...", ".")},
		{Repo: "d/medium", Ecosystem: "node", Verdict: VerdictRight, Confidence: "medium", Proposed: tg("npm test", "web"), Expected: tg("npm test", "web")},
		{Repo: "e/mwrong", Ecosystem: "node", Verdict: VerdictWrong, Confidence: "medium", Proposed: tg("npm run lint", "."), Expected: tg("npm test", "."), Several: true},
		{Repo: "f/refused", Ecosystem: "php", Verdict: VerdictRefused, Confidence: "low", Expected: tg("vendor/bin/phpunit", ".")},
		{Repo: "g/error", Ecosystem: "c-cpp", Verdict: VerdictError, Error: "infer exited 1: boom", Expected: tg("make test", ".")},
		{Repo: "h/missing", Ecosystem: "jvm", Verdict: VerdictMissing, Error: "no checkout at /x/h__missing", Expected: tg("mvn verify", ".")},
	}
}

func TestSummarise(t *testing.T) {
	r := Summarise(sampleResults())
	want := Totals{
		Labels: 8, Scored: 7, Missing: 1, Right: 2, Equivalent: 1, Wrong: 2, Refused: 1, Errors: 1,
		Accuracy: 3.0 / 7, PrecisionAtHigh: 2.0 / 3,
	}
	if diff := cmp.Diff(want, r.Totals); diff != "" {
		t.Errorf("totals (-want +got):\n%s", diff)
	}
	wantCal := []Level{
		{Level: "high", Count: 3, Right: 2, Precision: 2.0 / 3},
		{Level: "medium", Count: 2, Right: 1, Precision: 0.5},
		{Level: "low", Count: 1, Right: 0, Precision: 0},
	}
	if diff := cmp.Diff(wantCal, r.Calibration); diff != "" {
		t.Errorf("calibration (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"c/bench"}, r.WrongHigh); diff != "" {
		t.Errorf("wrong high (-want +got):\n%s", diff)
	}
	empty := Summarise(nil)
	if empty.Totals.Accuracy != 0 || empty.Totals.PrecisionAtHigh != 0 || len(empty.Calibration) != 3 {
		t.Errorf("empty summary: %+v", empty)
	}
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	if err := Summarise(sampleResults()).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, b.String())
}

func TestJSONRoundTripAndCompare(t *testing.T) {
	before := Summarise(sampleResults())
	var b bytes.Buffer
	if err := before.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	back, err := ReadReport(&b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, back); diff != "" {
		t.Fatalf("JSON round trip (-want +got):\n%s", diff)
	}
	results := sampleResults()
	results[2].Verdict, results[2].Proposed = VerdictRight, results[0].Proposed
	results = append(results[:5], results[6:]...) // f/refused gone
	results = append(results, Result{Repo: "i/new", Verdict: VerdictWrong, Confidence: "low", Proposed: Target{"make", "."}})
	var out bytes.Buffer
	Compare(&out, before, Summarise(results))
	golden(t, out.String())
	if _, err := ReadReport(strings.NewReader("{")); err == nil {
		t.Error("truncated report accepted")
	}
}
