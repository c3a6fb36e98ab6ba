package app

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/agent-loop/internal/config"
	"github.com/aiwg/agent-loop/internal/loop"
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
	cfg := config.Defaults()
	cfg.Task = "fix the failing tests"
	ask := func(answer string, interactive bool) (string, string, error) {
		var errOut bytes.Buffer
		o := IO{Stdin: strings.NewReader(answer), Stderr: &errOut, Interactive: interactive}
		p, src, err := resolveCriterion(context.Background(), cfg, dir, o, Hooks{})
		if interactive && !strings.Contains(errOut.String(), "Use it? [Y/n/edit]") {
			t.Errorf("no question asked:\n%s", errOut.String())
		}
		return p.Command, src, err
	}
	cmd, src, err := ask("\n", true)
	if err != nil || src != "inferred" || !strings.Contains(cmd, "go test") {
		t.Fatalf("Y: %q %q %v", cmd, src, err)
	}
	cmd, src, err = ask("edit\nmake check\n", true)
	if err != nil || cmd != "make check" || src != "flag" {
		t.Fatalf("edit: %q %q %v", cmd, src, err)
	}
	_, _, err = ask("n\n", true)
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != loop.ExitConfig || !strings.Contains(err.Error(), "--completion") {
		t.Fatalf("n: %v", err)
	}
}

// Without a terminal only a high-confidence proposal is adopted; anything
// else fails fast (exit 2) printing the proposal.
func TestResolveCriterionNonInteractiveNeedsHighConfidence(t *testing.T) {
	dir := t.TempDir() // nothing to infer from
	cfg := config.Defaults()
	cfg.Task = "fix the failing tests"
	_, _, err := resolveCriterion(context.Background(), cfg, dir, IO{Stderr: &bytes.Buffer{}}, Hooks{})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != loop.ExitConfig || !strings.Contains(err.Error(), "--completion") {
		t.Fatalf("err = %v", err)
	}
	cfg.Task = "make it better"
	_, _, err = resolveCriterion(context.Background(), cfg, goRepo(t), IO{Stderr: &bytes.Buffer{}}, Hooks{})
	if !errors.As(err, &ee) || ee.Code != loop.ExitConfig {
		t.Fatalf("vague task: %v", err)
	}
}
