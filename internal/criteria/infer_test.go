package criteria

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Dependencies and build output are never read: manifests planted there
// would otherwise be found.
func TestSkipsDependencyAndBuildDirs(t *testing.T) {
	t.Parallel()
	files := map[string]string{"README.md": "# x\n"}
	for _, d := range []string{"node_modules/pkg", "vendor/lib", "target/debug", "dist/app", "build/gen", ".venv/lib", "__pycache__/m", ".git/hooks"} {
		files[d+"/package.json"] = `{"scripts":{"test":"planted-test-command"}}`
		files[d+"/go.mod"] = "module planted\n"
		files[d+"/Makefile"] = "test:\n\tplanted\n"
	}
	dir := writeRepo(t, files)
	p, err := Infer(t.Context(), dir, "fix the failing tests")
	if err != nil {
		t.Fatal(err)
	}
	y, _ := p.YAML()
	if strings.Contains(string(y), "planted") {
		t.Errorf("read a manifest inside a dependency or build directory:\n%s", y)
	}
	// A real project beside them is found.
	files["app/go.mod"] = "module app\n"
	files["app/app_test.go"] = "package app\n"
	p, err = Infer(t.Context(), writeRepo(t, files), "fix the failing tests")
	if err != nil {
		t.Fatal(err)
	}
	if p.Command != "go test ./..." || p.Workdir != "app" {
		t.Errorf("got %q in %q", p.Command, p.Workdir)
	}
}

// Malformed YAML, JSON and TOML are named as unreadable; the other layers
// go on.
func TestMalformedFilesAreNamed(t *testing.T) {
	t.Parallel()
	dir := writeRepo(t, map[string]string{
		"package.json":                  `{"scripts": {`,
		"deno.json":                     `{"tasks": [}`,
		"composer.json":                 `not json`,
		"Cargo.toml":                    "[package\n",
		"pyproject.toml":                "[tool.poetry\n",
		"pnpm-workspace.yaml":           "packages: [\n",
		"Taskfile.yml":                  "tasks: {test: [\n",
		".github/workflows/ci.yml":      "jobs: [\n",
		".github/workflows/notamap.yml": "- just\n- a list\n",
		".gitlab-ci.yml":                "test: {script: [\n",
		"go.mod":                        "module ok\n",
		"ok_test.go":                    "package ok\n",
	})
	p, err := Infer(t.Context(), dir, "fix the failing tests")
	if err != nil {
		t.Fatal(err)
	}
	if p.Command != "go test ./..." {
		t.Errorf("the Go layer did not go on: %q", p.Command)
	}
	for _, f := range []string{"package.json", "deno.json", "composer.json", "Cargo.toml", "pyproject.toml", ".github/workflows/ci.yml", ".github/workflows/notamap.yml", ".gitlab-ci.yml", "Taskfile.yml"} {
		found := false
		for _, r := range p.Rationale {
			if r.Source == f && strings.Contains(r.Finding, "unreadable") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s is not named as unreadable", f)
		}
	}
	validateProposal(t, proposalSchema(t), "malformed", p)
}

func TestInferErrors(t *testing.T) {
	t.Parallel()
	if _, err := Infer(context.Background(), filepath.Join(t.TempDir(), "missing"), "fix tests"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing dir: err = %v", err)
	}
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Infer(context.Background(), file, "fix tests"); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("file: err = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Infer(ctx, t.TempDir(), "fix tests"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
	// An empty directory is readable: the fallback answers, at low confidence.
	p, err := Infer(context.Background(), t.TempDir(), "fix the failing tests")
	if err != nil || p.Confidence != ConfidenceLow || p.Rationale[len(p.Rationale)-2].Layer != LayerFallback {
		t.Errorf("empty dir: %+v %v", p, err)
	}
}

// A symlink in the repository cannot make inference read outside it.
func TestSymlinkOutsideRepo(t *testing.T) {
	t.Parallel()
	outside := writeRepo(t, map[string]string{"package.json": `{"scripts":{"test":"secret-outside"}}`})
	dir := writeRepo(t, map[string]string{"README.md": "# x"})
	if err := os.Symlink(filepath.Join(outside, "package.json"), filepath.Join(dir, "package.json")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	p, err := Infer(t.Context(), dir, "fix the failing tests")
	if err != nil {
		t.Fatal(err)
	}
	y, _ := p.YAML()
	if strings.Contains(string(y), "secret-outside") {
		t.Errorf("followed a symlink out of the repository:\n%s", y)
	}
}
