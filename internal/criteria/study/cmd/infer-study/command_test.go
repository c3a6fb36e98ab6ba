package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/agent-loop/internal/criteria/study"
)

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

const labelJSON = `{
  "repo": "acme/widget", "commit": "%s", "ecosystem": "go", "task": "fix the failing tests",
  "command": "go test ./...", "workdir": ".", "equivalents": ["go test -race ./..."], "several": false,
  "alternatives": [], "evidence": [{"file": "Makefile", "where": "test", "text": "go test ./..."}],
  "traps": [], "notes": "small"
}`

// fixture writes a labels directory with one label and a checkouts directory
// holding its checkout (an unpacked snapshot, no .git) whose fake infer
// prints proposal.
func fixture(t *testing.T, proposal string) (labels, checkouts, bin string) {
	t.Helper()
	labels, checkouts, bin = t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "agent-loop")
	body := strings.Replace(labelJSON, "%s", strings.Repeat("c", 40), 1)
	if err := os.WriteFile(filepath.Join(labels, "acme__widget.json"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(checkouts, "acme__widget"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\ncat <<'EOF'\n" + proposal + "\nEOF\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return labels, checkouts, bin
}

const highRight = `{"task":"fix the failing tests","criterion_class":"test-pass","command":"go test -race ./...","workdir":".","setup":null,"confidence":"high","rationale":[],"refusal_reason":null}`

func TestUsageErrorsExit2(t *testing.T) {
	labels, checkouts, _ := fixture(t, highRight)
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "acme__widget.json"), []byte(`{"repo":"acme/widget"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	inside, err := study.ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{nil, "usage: infer-study"},
		{[]string{"frobnicate"}, `unknown command "frobnicate" (valid: validate, prepare, eval, compare)`},
		{[]string{"validate", "--labels", bad}, "missing key"},
		{[]string{"validate", "--labels", t.TempDir()}, "no label files"},
		{[]string{"eval", "--labels", labels, "--timeout", "0s", checkouts}, "positive duration"},
		{[]string{"eval", "--labels", labels, "--run", "(", checkouts}, "--run"},
		{[]string{"eval", "--labels", labels, "--run", "nomatch", "--bin", "/bin/true", checkouts}, "matches no labelled repository"},
		{[]string{"eval", "--labels", labels, filepath.Join(checkouts, "nope")}, "run `.ci/infer-study prepare` first"},
		{[]string{"prepare", "--labels", labels, "--checkouts", filepath.Join(inside, "testdata", "x")}, "is inside the repository"},
		{[]string{"compare", "one.json"}, "two reports"},
		{[]string{"eval", "--no-such-flag"}, "flag provided but not defined"},
	}
	for _, tc := range tests {
		code, _, stderr := runCmd(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(inside, "testdata", "x")); err == nil {
		t.Error("refused prepare still created its directory inside the repository")
	}
}

func TestValidateCounts(t *testing.T) {
	labels, _, _ := fixture(t, highRight)
	code, stdout, stderr := runCmd(t, "validate", "--labels", labels)
	if code != exitOK || stdout != "1 labels valid: go 1\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestEvalTextJSONAndCompare(t *testing.T) {
	labels, checkouts, bin := fixture(t, highRight)
	code, stdout, stderr := runCmd(t, "eval", "--labels", labels, "--bin", bin, "--quiet", checkouts)
	if code != exitOK {
		t.Fatalf("eval exit %d: %s", code, stderr)
	}
	for _, want := range []string{"acme/widget", "equivalent", "accuracy (right or equivalent / scored): 100.0% (1/1)", "precision at high: 100.0% (1/1)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("text report lacks %q:\n%s", want, stdout)
		}
	}

	out := filepath.Join(t.TempDir(), "run.json")
	code, stdout, stderr = runCmd(t, "eval", "--labels", labels, "--bin", bin, "--quiet", "--json", "--out", out, checkouts)
	if code != exitOK {
		t.Fatalf("eval --json exit %d: %s", code, stderr)
	}
	var printed study.Report
	if err := json.Unmarshal([]byte(stdout), &printed); err != nil {
		t.Fatalf("--json output is not a report: %v\n%s", err, stdout)
	}
	saved, err := os.ReadFile(out)
	if err != nil || !bytes.Equal(saved, []byte(stdout)) {
		t.Fatalf("--out file differs from the printed report (%v)", err)
	}
	if printed.Totals.Equivalent != 1 || printed.Totals.PrecisionAtHigh != 1 {
		t.Errorf("totals %+v", printed.Totals)
	}

	// A later run where the proposal turned wrong: compare names the change.
	_, _, bin2 := fixture(t, strings.Replace(highRight, "go test -race ./...", "go test -bench .", 1))
	later := filepath.Join(t.TempDir(), "later.json")
	if code, _, stderr = runCmd(t, "eval", "--labels", labels, "--bin", bin2, "--quiet", "--out", later, checkouts); code != exitOK {
		t.Fatalf("second eval exit %d: %s", code, stderr)
	}
	code, stdout, _ = runCmd(t, "compare", out, later)
	if code != exitOK || !strings.Contains(stdout, "changed  acme/widget: equivalent (high) go test -race ./... -> wrong (high) go test -bench .") ||
		!strings.Contains(stdout, "wrong high: 0 -> 1") {
		t.Errorf("compare exit %d:\n%s", code, stdout)
	}
}

func TestEvalMissingCheckoutFailsUnlessAllowed(t *testing.T) {
	labels, checkouts, bin := fixture(t, highRight)
	if err := os.RemoveAll(filepath.Join(checkouts, "acme__widget")); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd(t, "eval", "--labels", labels, "--bin", bin, "--quiet", checkouts)
	if code != exitFailure || !strings.Contains(stderr, "totals are partial") || !strings.Contains(stdout, "missing") {
		t.Errorf("missing checkout: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if code, _, stderr = runCmd(t, "eval", "--labels", labels, "--bin", bin, "--quiet", "--allow-missing", checkouts); code != exitOK {
		t.Errorf("--allow-missing: exit %d: %s", code, stderr)
	}
}
