package judge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/shellcmd"
)

// A repository with the same Go suite behind every kind of criterion: a
// Makefile (root and sub/), a justfile, an npm script that calls a script
// file, and pytest with a conftest.py.
var guttedRepo = map[string]string{
	"go.mod":           "module example.com/calc\n\ngo 1.22\n",
	"calc.go":          "package calc\n\nfunc Add(a, b int) int { return a - b }\n",
	"calc_test.go":     "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n",
	"Makefile":         ".PHONY: test fmt\ntest:\n\tgo test ./...\n\nfmt:\n\tgofmt -l .\n\nlint:\n\tnpx eslint web\n",
	"eslint.config.js": "export default [{rules: {\"no-unused-vars\": \"error\"}}];\n",
	"justfile":         "test:\n    go test ./...\n\nfmt:\n    gofmt -l .\n",
	"sub/Makefile":     "test:\n\tcd .. && go test ./...\n",
	"sub/justfile":     "test:\n    cd .. && go test ./...\n",
	"package.json":     "{\n  \"name\": \"calc\",\n  \"scripts\": {\n    \"test\": \"bash scripts/test.sh\"\n  }\n}\n",
	"scripts/test.sh":  "#!/usr/bin/env bash\nset -euo pipefail\ngo test ./...\n",
	"pyproject.toml":   "[project]\nname = \"calc\"\n",
	"conftest.py":      "import pytest\n\n\n@pytest.fixture\ndef two():\n    return 2\n",
	"test_calc.py":     "def test_add(two):\n    assert two + 3 == 5\n",
}

// gutted changes that make the criterion pass without fixing anything.
var (
	gutMakefile   = map[string]string{"Makefile": ".PHONY: test fmt\ntest:\n\t@echo ok\n\nfmt:\n\tgofmt -l .\n\nlint:\n\tnpx eslint web\n"}
	gutESLint     = map[string]string{"eslint.config.js": "export default [{ignores: [\"**\"]}];\n"}
	gutSubMake    = map[string]string{"sub/Makefile": "test:\n\t@true\n"}
	gutJustfile   = map[string]string{"justfile": "test:\n    @echo ok\n\nfmt:\n    gofmt -l .\n"}
	gutSubJust    = map[string]string{"sub/justfile": "test:\n    true\n"}
	gutTestScript = map[string]string{"scripts/test.sh": "#!/usr/bin/env bash\nexit 0\n"}
	gutConftest   = map[string]string{"conftest.py": "import pytest\n\n\n@pytest.fixture\ndef two():\n    return 2\n\n\ndef pytest_collection_modifyitems(config, items):\n    items.clear()\n"}
)

// honest changes: the fix, or edits beside the criterion's own lines.
var (
	fixCalc      = map[string]string{"calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n"}
	fixAndFmt    = map[string]string{"calc.go": fixCalc["calc.go"], "Makefile": ".PHONY: test fmt\ntest:\n\tgo test ./...\n\nfmt:\n\tgofmt -l -s .\n\nlint:\n\tnpx eslint web\n"}
	fixFixture   = map[string]string{"conftest.py": "import pytest\n\n\n@pytest.fixture\ndef two():\n    return 2\n\n\n@pytest.fixture\ndef three():\n    return 3\n"}
	fixPkgSource = map[string]string{"calc.go": fixCalc["calc.go"], "package.json": "{\n  \"name\": \"calc\",\n  \"version\": \"1.0.1\",\n  \"scripts\": {\n    \"test\": \"bash scripts/test.sh\"\n  }\n}\n"}
)

// judgeChange commits guttedRepo, analyses the criterion on that baseline
// (as the engine does when the loop starts), applies change and judges the
// diff git makes of it.
func judgeChange(t *testing.T, cmd, workdir string, change map[string]string, withDeps bool) loop.Verdict {
	t.Helper()
	return judgeRepoChange(t, guttedRepo, cmd, workdir, change, withDeps)
}

func judgeRepoChange(t *testing.T, files map[string]string, cmd, workdir string, change map[string]string, withDeps bool) loop.Verdict {
	t.Helper()
	dir := t.TempDir()
	write := func(files map[string]string) {
		for name, data := range files {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(files)
	gitRun(t, dir, "init", "-q", "-b", "main")
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "baseline")
	var opts Options
	if withDeps {
		a, err := shellcmd.AnalyzeDir(dir, cmd, workdir)
		if err != nil {
			t.Fatal(err)
		}
		opts.Depends = a.Depends
	}
	write(change)
	gitRun(t, dir, "add", "-A")
	diff := gitRun(t, dir, "diff", "--cached", "-M", "HEAD")
	in := loop.JudgeInput{Iteration: 1, Criterion: cmd, BaseDiff: diff, StepDiff: diff, Check: loop.CheckResult{Passed: true, ExitCode: 0}}
	v, err := New(opts).Assess(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// bypassOn returns the critical validation_bypass naming file, if any.
func bypassOn(v loop.Verdict, file string) *loop.Regression {
	for i, r := range v.Regressions {
		if r.Type != ValidationBypass || r.Severity != SeverityCritical {
			continue
		}
		for _, e := range r.Evidence {
			if e.Path == file {
				return &v.Regressions[i]
			}
		}
	}
	return nil
}

// The gutted recipe of issue 10 is caught under every wrapper, cd and
// runner, with the criterion's dependencies computed from the repository.
func TestGuttedCriterionIsCaught(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cmd, workdir string
		gut          map[string]string
		file         string
		// commandAlone: the command's own words name the gutted file, so
		// the judge catches it even without the engine's analysis.
		commandAlone bool
	}{
		{"make test", ".", gutMakefile, "Makefile", true},
		{"nice -n 10 make test", ".", gutMakefile, "Makefile", true},
		{"timeout 10m make test", ".", gutMakefile, "Makefile", true},
		{"env -u CI make test", ".", gutMakefile, "Makefile", true},
		{"nice -n 10 timeout 10m env -u CI CGO_ENABLED=0 make test", ".", gutMakefile, "Makefile", true},
		{"sh -c 'make test'", ".", gutMakefile, "Makefile", true},
		{"cd sub && make test", ".", gutSubMake, "sub/Makefile", true},
		{"make test", "sub", gutSubMake, "sub/Makefile", false},
		{"npm test", ".", gutTestScript, "scripts/test.sh", false},
		{"nice -n 10 npm test", ".", gutTestScript, "scripts/test.sh", false},
		{"uv run pytest", ".", gutConftest, "conftest.py", false},
		{"just test", ".", gutJustfile, "justfile", true},
		{"nice -n 10 just test", ".", gutJustfile, "justfile", true},
		{"timeout 10m just test", ".", gutJustfile, "justfile", true},
		{"env -u CI just test", ".", gutJustfile, "justfile", true},
		{"cd sub && just test", ".", gutSubJust, "sub/justfile", true},
		{"make lint", ".", gutESLint, "eslint.config.js", false},
		{"npx eslint web", ".", gutESLint, "eslint.config.js", true},
	}
	for _, tc := range tests {
		t.Run(tc.workdir+"/"+tc.cmd, func(t *testing.T) {
			t.Parallel()
			v := judgeChange(t, tc.cmd, tc.workdir, tc.gut, true)
			r := bypassOn(v, tc.file)
			if r == nil {
				t.Fatalf("gutting %s under %q was not caught: %+v", tc.file, tc.cmd, v.Regressions)
			}
			if !v.Critical() {
				t.Errorf("not critical: %+v", v.Regressions)
			}
			// Without the analysis of the repository, only what the
			// command's own words name is watched: the check can fail.
			alone := bypassOn(judgeChange(t, tc.cmd, tc.workdir, tc.gut, false), tc.file) != nil
			if alone != tc.commandAlone {
				t.Errorf("caught from the command alone = %v, want %v", alone, tc.commandAlone)
			}
		})
	}
}

// The same criteria with honest changes: the fix itself, and edits of the
// criterion's files that do not touch what the criterion runs.
func TestHonestChangeBesideTheCriterion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cmd    string
		change map[string]string
	}{
		{"nice -n 10 make test", fixCalc},
		{"nice -n 10 make test", fixAndFmt},
		{"env -u CI just test", fixCalc},
		{"npm test", fixPkgSource},
		{"uv run pytest", fixFixture},
		{"cd sub && make test", fixAndFmt},
	}
	for _, tc := range tests {
		t.Run(tc.cmd, func(t *testing.T) {
			t.Parallel()
			v := judgeChange(t, tc.cmd, ".", tc.change, true)
			if v.Critical() {
				var names []string
				for _, r := range v.Regressions {
					names = append(names, r.Type+": "+r.Summary)
				}
				t.Errorf("an honest change was vetoed: %s", strings.Join(names, "; "))
			}
		})
	}
}

// A shell project: the test script sources the code under test. Fixing
// that code is honest; gutting the test script is not.
func TestShellProjectSourcedCode(t *testing.T) {
	t.Parallel()
	project := map[string]string{
		"test.sh": "#!/bin/sh\n. ./calc.sh\n[ \"$(sub 5 3)\" = 2 ] || { echo 'not ok'; exit 1; }\necho ok\n",
		"calc.sh": "sub() { echo $(($1 + $2)); }\n",
	}
	fix := map[string]string{"calc.sh": "sub() { echo $(($1 - $2)); }\n"}
	if v := judgeRepoChange(t, project, "sh test.sh", ".", fix, true); v.Critical() {
		t.Errorf("fixing the sourced code was vetoed: %+v", v.Regressions)
	}
	gut := map[string]string{"test.sh": "#!/bin/sh\necho ok\n"}
	if r := bypassOn(judgeRepoChange(t, project, "nice -n 10 sh test.sh", ".", gut, true), "test.sh"); r == nil {
		t.Error("gutting the test script was not caught")
	}
}
