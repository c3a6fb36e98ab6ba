package shellcmd

import (
	"strings"
	"testing"
)

func TestScriptsClassify(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"scripts/test.sh":  "#!/usr/bin/env bash\nset -euo pipefail\nnpm ci\nnpx jest --ci\n",
		"ci/install.sh":    "#!/bin/sh\npip install -r requirements.txt\n",
		"scripts/lint":     "#!/bin/sh\nruff check .\n",
		"scripts/check.sh": "#!/bin/sh\nruff check .\npytest\n",
		"tools/run.py":     "print(1)\n",
	}
	checkClassify(t, files, []classifyCase{
		{"./scripts/test.sh", Test, "scripts/test.sh", "jest"},
		{"bash scripts/test.sh --fast", Test, "scripts/test.sh", "jest"},
		{"bash -e scripts/test.sh", Test, "scripts/test.sh", "jest"},
		{"sh -c 'npm ci && npx jest'", Install | Test, "jest", "jest"},
		{"./ci/install.sh", Install, "ci/install.sh", ""},
		{"scripts/lint", Lint, "scripts/lint", ""},
		{"scripts/check.sh", Lint | Test, "scripts/check.sh", "pytest"},
		{"./scripts/missing.sh", Toolchain, "scripts/missing.sh", ""},
		{"bats test/", Test, "bats", "bats"},
		{"source ci/env.sh", CIOnly, "", ""},
	})
}

func TestScriptsAnalyze(t *testing.T) {
	t.Parallel()
	checkAnalyze(t, []analyzeCase{
		{
			name: "a script that sources a file and calls a function",
			cmd:  "./ci/test.sh",
			files: map[string]string{
				"ci/test.sh": "#!/bin/bash\n. ci/env.sh\nrun_suite() {\n  go test \"$@\" ./...\n}\nif [ -n \"$CI\" ]; then go vet ./...; fi\nrun_suite -count=1 || exit 1\n",
				"ci/env.sh":  "export GOFLAGS=-mod=mod\n",
				"go.mod":     "module x\n",
			},
			steps: []string{"go vet ./... (lint) via ci/test.sh", "go test  ./... (test go test) via ci/test.sh or-fallback"},
			deps:  Depends{Files: []string{"ci/test.sh", "go.mod"}, Runner: "go test"},
		},
		{
			name: "what a test script runs or sources is what the tests exercise, not the criterion",
			cmd:  "sh test.sh",
			files: map[string]string{
				"test.sh":      "#!/bin/sh\n. ./calc.sh\n./bin/check.sh add 2 3\n",
				"calc.sh":      "add() { echo $(($1 + $2)); }\n",
				"bin/check.sh": "#!/bin/sh\n. ./calc.sh\n\"$@\"\n",
			},
			steps: []string{" (unknown) via test.sh > bin/check.sh"},
			deps:  Depends{Files: []string{"test.sh"}},
		},
		{
			name:  "what the command and its named scripts source is the criterion's",
			cmd:   ". ./ci/env.sh && make test",
			files: map[string]string{"ci/env.sh": "export CGO_ENABLED=0\n", "Makefile": "test:\n\t. ./ci/more.sh && go test ./...\n", "ci/more.sh": "export X=1\n"},
			steps: []string{"go test ./... (test go test) via Makefile:test"},
			deps:  Depends{Files: []string{"Makefile", "ci/env.sh", "ci/more.sh"}, Targets: []string{"Makefile:test"}, Runner: "go test"},
		},
		{
			name:  "a pipe into xargs",
			cmd:   "git ls-files '*.sh' | xargs shellcheck",
			steps: []string{"git ls-files *.sh (unknown)", "shellcheck (lint) wrapped xargs"},
			deps:  Depends{},
		},
		{
			name:  "a broken script is a problem, not a failure",
			cmd:   "bash -c 'if then'",
			steps: []string{"bash -c if then (unknown)"},
			deps:  Depends{},
		},
	})
}

func TestScriptsProblems(t *testing.T) {
	t.Parallel()
	a := Analyze(nil, "bash -c 'if then'", ".")
	if len(a.Problems) != 1 || !strings.HasPrefix(a.Problems[0], "bash -c: does not parse as shell: ") {
		t.Errorf("problems = %q", a.Problems)
	}
	a = Analyze(nil, "echo $((", ".")
	if len(a.Problems) != 1 || len(a.Steps) != 0 {
		t.Errorf("a command that does not parse: %+v", a)
	}
}
