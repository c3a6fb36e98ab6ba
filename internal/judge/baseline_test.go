package judge

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/testreport"
)

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// tree has 3 source files with 2 + 3 + 1 = 6 non-blank lines, and files
// that are not counted: docs, data, vendored and dependency code, binaries.
var tree = map[string]string{
	"main.go":                   "package main\n\nfunc main() {}\n",
	"lib/util.py":               "def f():\n\n    return 1\n# comment\n",
	"scripts/run.sh":            "echo hi\n",
	"README.md":                 "# readme\nlots\nof\nlines\n",
	"data.json":                 "{\"a\": 1}\n",
	"vendor/dep/dep.go":         "package dep\nfunc X() {}\n",
	"package-lock.json":         "{}\n",
	"assets/logo.go":            "\x00\x01binary with a code extension\n",
	"node_modules/x/index.js":   "module.exports = 1;\n",
	"web/src/app.generated.ts":  "export const x = 1;\n",
	"internal/x/testdata/in.go": "package in\n",
}

func TestBaselineGit(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	writeTree(t, dir, tree)
	gitRun(t, dir, "init", "-q", "-b", "main")
	// node_modules is ignored, as in a real repository; an untracked file
	// is not counted either.
	writeTree(t, dir, map[string]string{".gitignore": "node_modules/\n"})
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "init")
	writeTree(t, dir, map[string]string{"untracked.go": "package main\nvar x = 1\n"})
	// A hook and an fsmonitor command the repository asks for must not run.
	marker := filepath.Join(t.TempDir(), "ran")
	writeTree(t, dir, map[string]string{".git/hooks/post-index-change": "#!/bin/sh\ntouch " + marker + "\n"})
	if err := os.Chmod(filepath.Join(dir, ".git/hooks/post-index-change"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitRun(t, dir, "config", "core.fsmonitor", "touch "+marker+" #")

	check := loop.CheckResult{ExitCode: 1, Tests: testreport.Summary{Known: true, Total: 3, Failed: 1}}
	m, err := New(Options{}).Baseline(context.Background(), dir, check)
	if err != nil {
		t.Fatal(err)
	}
	if m.FileCount != 3 || m.LinesOfCode != 6 {
		t.Errorf("FileCount, LinesOfCode = %d, %d; want 3, 6", m.FileCount, m.LinesOfCode)
	}
	if m.Check.Tests.Total != 3 || m.Check.ExitCode != 1 {
		t.Errorf("the check result was not copied: %+v", m.Check)
	}
	if m.CapturedAt.IsZero() {
		t.Error("CapturedAt not set")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a repository hook or fsmonitor command ran during the baseline")
	}
}

func TestBaselineWalkFallback(t *testing.T) {
	t.Parallel()
	dir := t.TempDir() // not a git repository
	writeTree(t, dir, tree)
	writeTree(t, dir, map[string]string{"target/debug/build.rs": "fn main() {}\n", ".hidden/x.go": "package x\n"})
	m, err := New(Options{}).Baseline(context.Background(), dir, loop.CheckResult{Passed: true})
	if err != nil {
		t.Fatal(err)
	}
	if m.FileCount != 3 || m.LinesOfCode != 6 {
		t.Errorf("FileCount, LinesOfCode = %d, %d; want 3, 6", m.FileCount, m.LinesOfCode)
	}
	if !m.Check.Passed {
		t.Error("the check result was not copied")
	}
}

func TestBaselineMissingDir(t *testing.T) {
	t.Parallel()
	_, err := New(Options{}).Baseline(context.Background(), filepath.Join(t.TempDir(), "nope"), loop.CheckResult{})
	if err == nil {
		t.Fatal("Baseline of a missing directory returned no error")
	}
}
