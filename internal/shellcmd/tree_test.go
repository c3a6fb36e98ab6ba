package shellcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTreeScripts(t *testing.T) {
	t.Parallel()
	tr := repo(map[string]string{
		"composer.json":  `{"scripts": {"test": ["@php vendor/bin/phpunit", "@lint", "App\\Build::run"], "lint": "phpcs"}}`,
		"deno.jsonc":     "{\n // tasks\n \"tasks\": {\"test\": \"deno test -A\", \"fmt\": {\"command\": \"deno fmt --check\"},},\n}",
		"pyproject.toml": "[tool.hatch.envs.default.scripts]\ncov = [\"coverage run -m pytest\", \"coverage report\"]\n[tool.hatch.envs.test.scripts]\nrun = {cmd = \"pytest -x\"}\n[tool.pdm.scripts]\n_ = {env = {A = \"1\"}}\nt = \"pytest\"\n[tool.poe.tasks]\nlint = {shell = \"ruff check .\"}\n",
		"tox.ini":        "[tox]\nenv_list = py{311,312}-django{42,50}, lint\n[testenv]\ncommands_pre = python -V\ncommands =\n    - coverage erase\n    {envpython} -m pytest {posargs} {toxinidir}/tests\n[testenv:lint]\ncommands = ruff check {posargs:.}\n",
		"package.json":   `{"scripts": {"test": "jest", "n": 1}}`,
	})
	s := tr.Dir(".")
	checks := []struct{ runner, name, body string }{
		{"composer", "test", "php vendor/bin/phpunit\ncomposer lint\n"},
		{"deno", "test", "deno test -A"},
		{"deno", "fmt", "deno fmt --check"},
		{"hatch", "cov", "coverage run -m pytest\ncoverage report"},
		{"hatch", "test:run", "pytest -x"},
		{"pdm", "t", "pytest"},
		{"poe", "lint", "ruff check ."},
		{"tox", "lint", "ruff check ."},
		{"tox", "py312-django50", "python -V\ncoverage erase\npython -m pytest  ./tests"},
		{"npm", "test", "jest"},
	}
	for _, c := range checks {
		body, _, ok := tr.Script(c.runner, ".", c.name)
		if !ok || body != c.body {
			t.Errorf("Script(%s, %s) = %q, %v; want %q", c.runner, c.name, body, ok, c.body)
		}
	}
	if _, ok := s.NPM["n"]; ok {
		t.Error("a script that is not a string was kept")
	}
	if _, ok := s.PDM["_"]; ok {
		t.Error("pdm's _ settings table was kept as a script")
	}
	if d := cmp.Diff([]string{"py311-django42", "py311-django50", "py312-django42", "py312-django50", "lint"}, s.ToxEnvs); d != "" {
		t.Errorf("tox envs (-want +got):\n%s", d)
	}
	if len(s.Errors) != 0 {
		t.Errorf("errors: %v", s.Errors)
	}
}

// hatch.toml holds hatch's tables without the tool.hatch prefix.
func TestTreeHatchToml(t *testing.T) {
	t.Parallel()
	tr := repo(map[string]string{
		"pyproject.toml": "[project]\nname = \"x\"\n",
		"hatch.toml":     "[envs.default.scripts]\nfull = \"pytest --cov {args:tests}\"\n[envs.types.scripts]\ncheck = \"mypy src\"\n",
	})
	for _, c := range []struct{ name, body string }{{"full", "pytest --cov {args:tests}"}, {"types:check", "mypy src"}} {
		body, file, ok := tr.Script("hatch", ".", c.name)
		if !ok || body != c.body || file != "hatch.toml" {
			t.Errorf("Script(hatch, %s) = %q in %q, %v; want %q in hatch.toml", c.name, body, file, ok, c.body)
		}
	}
}

func TestTreeErrors(t *testing.T) {
	t.Parallel()
	tr := repo(map[string]string{
		"package.json":   `{"scripts": `,
		"Taskfile.yml":   "tasks: {a: [\n",
		"pyproject.toml": "[tool\n",
	})
	s := tr.Dir(".")
	var got []string
	for _, e := range s.Errors {
		got = append(got, e.Path)
	}
	if d := cmp.Diff([]string{"Taskfile.yml", "package.json", "pyproject.toml"}, got); d != "" {
		t.Errorf("errors (-want +got):\n%s", d)
	}
}

// Tree reads through an os.Root: a symlink out of the repository is not
// followed, a file over the limit is named, not read.
func TestTreeOnDisk(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "Makefile"), []byte("test:\n\tgo test ./...\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(outside, "Makefile"), filepath.Join(dir, "Makefile")); err != nil {
		t.Fatal(err)
	}
	write("package.json", `{"scripts": {"test": "./ci/test.sh", "big": "./ci/big.sh", "py": "./ci/run.py"}}`)
	write("ci/test.sh", "#!/bin/sh\nexec pytest -q\n")
	write("ci/big.sh", "#!/bin/sh\n"+strings.Repeat("# padding\n", MaxScript/10+1)+"pytest\n")
	write("ci/run.py", "#!/usr/bin/env python3\nimport pytest\n")
	write("huge/package.json", `{"scripts": {"test": "jest"}, "x": "`+strings.Repeat("a", MaxFile)+`"}`)

	a, err := AnalyzeDir(dir, "make test", ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Steps) != 1 || renderStep(a.Steps[0]) != "make test (test)" {
		t.Errorf("a Makefile outside the repository was followed: %+v", a.Steps)
	}
	a, _ = AnalyzeDir(dir, "npm test", ".")
	if got := renderStep(a.Steps[0]); got != "pytest -q (test pytest) wrapped exec via package.json:test > ci/test.sh" {
		t.Errorf("npm test: %s", got)
	}
	a, _ = AnalyzeDir(dir, "npm run big", ".")
	if got := renderStep(a.Steps[0]); got != "./ci/big.sh (unknown) via package.json:big" {
		t.Errorf("a script over the limit is not read: %s", got)
	}
	a, _ = AnalyzeDir(dir, "npm run py", ".")
	if d := cmp.Diff([]string{"ci/run.py", "package.json"}, a.Depends.Files); d != "" {
		t.Errorf("a Python script is a dependency, not followed as shell (-want +got):\n%s", d)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tr := NewTree(r.FS())
	if s := tr.Dir("huge"); len(s.Errors) != 1 || !strings.Contains(s.Errors[0].Error(), "too large") {
		t.Errorf("huge package.json: %v", s.Errors)
	}
	if tr.Exists("../x") || tr.Exists("/etc/passwd") {
		t.Error("paths outside the repository exist")
	}
	if _, err := AnalyzeDir(filepath.Join(dir, "missing"), "make", "."); err == nil {
		t.Error("a missing repository analysed")
	}
}
