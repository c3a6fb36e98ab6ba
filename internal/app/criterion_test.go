package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/agent-loop/internal/criteria"
	"github.com/aiwg/agent-loop/internal/spec"
)

func goRepo(t *testing.T) string {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "m_test.go"), []byte("package m\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {}\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, ".github", "workflows"), 0o755)
	os.WriteFile(filepath.Join(dir, ".github", "workflows", "ci.yml"), []byte("on: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - uses: actions/setup-go@v5\n      - run: go test ./...\n"), 0o644)
	return dir
}

// The interactive confirmation of an inferred criterion (seed 002: Y/n/edit).
func TestResolveCriterionInteractive(t *testing.T) {
	dir := goRepo(t)
	s := spec.Defaults(spec.DoorCLI)
	s.Spec.Task = "fix the failing tests"
	ask := func(answer string, interactive bool) (string, spec.Source, error) {
		var errOut bytes.Buffer
		o := IO{Stdin: strings.NewReader(answer), Stderr: &errOut, Interactive: interactive}
		r, err := resolveCriterion(context.Background(), s, spec.DoorCLI, dir, o, false)
		if interactive && !strings.Contains(errOut.String(), "Use it? [Y/n/edit]") {
			t.Errorf("no question asked:\n%s", errOut.String())
		}
		return r.criterion.Command, r.criterion.Source, err
	}
	cmd, src, err := ask("\n", true)
	if err != nil || src != spec.SourceInferred || !strings.Contains(cmd, "go test") {
		t.Fatalf("Y: %q %q %v", cmd, src, err)
	}
	cmd, src, err = ask("edit\nmake check\n", true)
	if err != nil || cmd != "make check" || src != spec.SourceTyped {
		t.Fatalf("edit: %q %q %v", cmd, src, err)
	}
	_, _, err = ask("n\n", true)
	if !IsUsage(err) || !strings.Contains(err.Error(), "--completion") {
		t.Fatalf("n: %v", err)
	}
}

// Without a terminal only a high-confidence proposal is adopted; anything
// else fails fast (exit 2) printing the proposal.
func TestResolveCriterionNonInteractiveNeedsHighConfidence(t *testing.T) {
	dir := t.TempDir() // nothing to infer from
	s := spec.Defaults(spec.DoorCLI)
	s.Spec.Task = "fix the failing tests"
	_, err := resolveCriterion(context.Background(), s, spec.DoorCLI, dir, IO{Stderr: &bytes.Buffer{}}, false)
	if !IsUsage(err) || !strings.Contains(err.Error(), "--completion") {
		t.Fatalf("err = %v", err)
	}
	// The Action's user is told about the input, not the flag.
	_, err = resolveCriterion(context.Background(), s, spec.DoorAction, dir, IO{Stderr: &bytes.Buffer{}}, false)
	if !IsUsage(err) || !strings.Contains(err.Error(), "input completion") || strings.Contains(err.Error(), "--completion") {
		t.Fatalf("action: err = %v", err)
	}
	s.Spec.Task = "make it better"
	_, err = resolveCriterion(context.Background(), s, spec.DoorCLI, goRepo(t), IO{Stderr: &bytes.Buffer{}}, false)
	if !IsUsage(err) {
		t.Fatalf("vague task: %v", err)
	}
}

// Below high the proposal is not adopted, and the error carries it for the
// Action's comment; at high the Action verifies it by running it first.
func TestResolveCriterionNotAdoptedCarriesTheProposal(t *testing.T) {
	s := spec.Defaults(spec.DoorAction)
	s.Spec.Task = "fix the failing tests"
	dir := t.TempDir() // a Go module with no CI: the manifest alone, medium
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "m_test.go"), []byte("package m\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {}\n"), 0o644)
	_, err := resolveCriterion(context.Background(), s, spec.DoorAction, dir, IO{Stderr: &bytes.Buffer{}}, false)
	prop, ok := NotAdopted(err)
	if !IsUsage(err) || !ok || prop.Command != "go test ./..." || prop.Confidence == "high" {
		t.Fatalf("err %v, proposal %q %s (not adopted: %v)", err, prop.Command, prop.Confidence, ok)
	}
	if c := prop.AdoptionComment(criteria.InputNames{Completion: "completion"}); !strings.Contains(c, `completion: "go test ./..."`) {
		t.Errorf("comment:\n%s", c)
	}
	// goRepo's CI states `go test ./...`: high, verified by running it (a
	// real go test), then adopted.
	var errOut bytes.Buffer
	r, err := resolveCriterion(context.Background(), s, spec.DoorAction, goRepo(t), IO{Stderr: &errOut, Environ: os.Environ()}, false)
	if err != nil || r.criterion.Command != "go test ./..." {
		t.Fatalf("high: %q %v\n%s", r.criterion.Command, err, errOut.String())
	}
	if !strings.Contains(errOut.String(), "(qualified)") || !strings.Contains(string(r.yaml), "verdict: qualified") {
		t.Errorf("the adoption was not verified:\n%s\n%s", errOut.String(), r.yaml)
	}
}

// Where the criterion came from is right for each door and for a trigger
// comment's hint.
func TestCriterionSource(t *testing.T) {
	dir := goRepo(t)
	s := spec.Defaults(spec.DoorAction)
	s.Spec.Task = "fix the failing tests"
	s.Spec.Criterion.Command = "go test ./..."
	r, err := resolveCriterion(context.Background(), s, spec.DoorAction, dir, IO{}, false)
	if err != nil || r.criterion.Source != spec.SourceInput || r.criterion.Source.Phrase() != "given as the completion input" {
		t.Fatalf("completion input: %+v %v", r.criterion, err)
	}
	r, err = resolveCriterion(context.Background(), s, spec.DoorCLI, dir, IO{}, false)
	if err != nil || r.criterion.Source != spec.SourceFlag || r.criterion.Confidence != "given" {
		t.Fatalf("--completion: %+v %v", r.criterion, err)
	}
	s.Spec.Criterion.Command, s.Spec.Criterion.Hint = "", "tests pass"
	// The Action verifies an inferred check by running it: with the
	// harness's environment (PATH), go test runs.
	r, err = resolveCriterion(context.Background(), s, spec.DoorAction, dir, IO{Environ: os.Environ()}, false)
	if err != nil || r.criterion.Source != spec.SourceHint || r.criterion.Hint != "tests pass" || !strings.Contains(r.criterion.Command, "go test") {
		t.Fatalf("comment hint: %+v %v", r.criterion, err)
	}
	if len(r.yaml) == 0 {
		t.Error("an inferred criterion keeps its proposal")
	}
	if o := r.criterion.Origin; o == nil || *o != (spec.Origin{File: ".github/workflows/ci.yml", Job: "test", Step: "Run go test ./..."}) {
		t.Errorf("the inferred criterion's origin %+v, want the CI workflow's step", o)
	}
	// A check the trigger comment names is the comment's; one the task
	// names is the task's.
	s.Spec.Task, s.Spec.Criterion.Hint = "fix the failing tests", "`go vet ./...` passes"
	r, err = resolveCriterion(context.Background(), s, spec.DoorAction, dir, IO{}, false)
	if err != nil || r.criterion.Source != spec.SourceTrigger || r.criterion.Command != "go vet ./..." {
		t.Errorf("named in the hint: %+v %v", r.criterion, err)
	}
	s.Spec.Task, s.Spec.Criterion.Hint = "fix the tests until `go vet ./...` passes", ""
	for _, fromComment := range []bool{true, false} {
		want := map[bool]spec.Source{true: spec.SourceTrigger, false: spec.SourceTask}[fromComment]
		r, err = resolveCriterion(context.Background(), s, spec.DoorAction, dir, IO{}, fromComment)
		if err != nil || r.criterion.Source != want || r.criterion.Origin != nil {
			t.Errorf("named in the task (from a comment: %v): %+v %v, want source %s", fromComment, r.criterion, err, want)
		}
	}
}
