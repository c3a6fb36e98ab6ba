package shellcmd

import "testing"

// runnersRepo has the same gate under make, just and task, and a sub
// directory with its own Makefile.
var runnersRepo = map[string]string{
	"Makefile":          "GO ?= go\n.PHONY: all test lint check\nall: build\nbuild:\n\t$(GO) build ./...\ntest: ## run tests\n\t@$(GO) test -race ./...\ncheck: lint test\nlint:\n\t-golangci-lint run\n",
	"justfile":          "test:\n    go test -race ./...\n",
	"Taskfile.yml":      "version: '3'\ntasks:\n  test:\n    deps: [lint]\n    cmds:\n      - go test -race ./...\n  lint: golangci-lint run\n",
	"sub/Makefile":      "test:\n\t./run-tests.sh\n",
	"sub/run-tests.sh":  "#!/bin/sh\nexec pytest -q\n",
	"go.mod":            "module x\n",
	"loop/Makefile":     "test:\n\t$(MAKE) test\n",
	"deep/Makefile":     "a:\n\tmake b\nb:\n\tmake c\nc:\n\tmake d\nd:\n\tmake e\ne:\n\tmake f\nf:\n\tmake g\ng:\n\tgo test ./...\n",
	"compound/Makefile": "test:\n\tfor d in a b; do (cd $$d && go test ./...); done\n",
}

func TestRunnersClassify(t *testing.T) {
	t.Parallel()
	checkClassify(t, runnersRepo, []classifyCase{
		{"make test", Test, "make test", "go test"},
		{"make check", Lint | Test, "make check", "go test"},
		{"make", Build, "make", ""},
		{"make -C sub test", Test, "make test", "pytest"},
		{"just test", Test, "just test", "go test"},
		{"task test", Test | Lint, "task test", "go test"},
		{"make unknown-target", 0, "make unknown-target", ""},
	})
}

func TestRunnersClassifyWithoutFiles(t *testing.T) {
	t.Parallel()
	checkClassify(t, nil, []classifyCase{
		{"make test", Test, "make test", "-"},
		{"make check", Test, "make check", "-"},
		{"just ci", Test, "just ci", "-"},
	})
}

// The completion commands of issue 10: the same gate behind every wrapper
// is followed to the same recipe and the same dependencies.
func TestRunnersAnalyzeWrapped(t *testing.T) {
	t.Parallel()
	deps := Depends{Files: []string{"Makefile", "go.mod"}, Targets: []string{"Makefile:test"}, Runner: "go test"}
	var cases []analyzeCase
	for _, tc := range []struct{ cmd, via string }{
		{"make test", ""},
		{"nice -n 10 make test", ""},
		{"nice -10 make test", ""},
		{"timeout 10m make test", ""},
		{"timeout --signal=KILL 600 make test", ""},
		{"env -u CI make test", ""},
		{"env -i PATH=/usr/bin make test", ""},
		{"CI=1 make test", ""},
		{"sudo -u build make test", ""},
		{"stdbuf -oL make test", ""},
		{"time make test", ""},
		{"ionice -c 3 make test", ""},
		{"taskset -c 0-3 make test", ""},
		{"xvfb-run -a make test", ""},
		{"(make test)", ""},
		{"true; make test", ""},
		{"make -f Makefile test", ""},
		{"command make test", ""},
		{"nice -n 5 timeout 10m env -u CI make test", ""},
		{"sh -c 'make test'", "sh -c > "},
		{"bash -ec \"make test\"", "bash -c > "},
		{"flock /tmp/lock -c 'make test'", "sh -c > "},
	} {
		steps := []string{"go test -race ./... (test go test) via " + tc.via + "Makefile:test"}
		cases = append(cases, analyzeCase{cmd: tc.cmd, files: runnersRepo, steps: steps, deps: deps})
	}
	checkAnalyze(t, cases)
}

func TestRunnersAnalyze(t *testing.T) {
	t.Parallel()
	checkAnalyze(t, []analyzeCase{
		{
			name:  "cd dir && make test follows the directory's Makefile",
			cmd:   "cd sub && make test",
			files: runnersRepo,
			steps: []string{"pytest -q (test pytest) wrapped exec via sub/Makefile:test > sub/run-tests.sh in sub"},
			deps:  Depends{Files: []string{"sub/Makefile", "sub/run-tests.sh"}, Targets: []string{"sub/Makefile:test"}, Runner: "pytest"},
		},
		{
			name:  "make -C dir",
			cmd:   "make -C sub test",
			files: runnersRepo,
			steps: []string{"pytest -q (test pytest) wrapped exec via sub/Makefile:test > sub/run-tests.sh in sub"},
			deps:  Depends{Files: []string{"sub/Makefile", "sub/run-tests.sh"}, Targets: []string{"sub/Makefile:test"}, Runner: "pytest"},
		},
		{
			name:    "the workdir",
			cmd:     "make test",
			workdir: "sub",
			files:   runnersRepo,
			steps:   []string{"pytest -q (test pytest) wrapped exec via sub/Makefile:test > sub/run-tests.sh in sub"},
			deps:    Depends{Files: []string{"sub/Makefile", "sub/run-tests.sh"}, Targets: []string{"sub/Makefile:test"}, Runner: "pytest"},
		},
		{
			name:  "prerequisites run first",
			cmd:   "make check",
			files: runnersRepo,
			steps: []string{"golangci-lint run (lint) via Makefile:check > Makefile:lint", "go test -race ./... (test go test) via Makefile:check > Makefile:test"},
			deps:  Depends{Files: []string{"Makefile", "go.mod"}, Targets: []string{"Makefile:check", "Makefile:lint", "Makefile:test"}, Runner: "go test"},
		},
		{
			name:  "plain make follows the default goal",
			cmd:   "make",
			files: runnersRepo,
			steps: []string{"go build ./... (build) via Makefile:all > Makefile:build"},
			deps:  Depends{Files: []string{"Makefile"}, Targets: []string{"Makefile:all", "Makefile:build"}},
		},
		{
			name:  "just",
			cmd:   "just test",
			files: runnersRepo,
			steps: []string{"go test -race ./... (test go test) via justfile:test"},
			deps:  Depends{Files: []string{"go.mod", "justfile"}, Targets: []string{"justfile:test"}, Runner: "go test"},
		},
		{
			name:  "wrapped just",
			cmd:   "nice -n 10 timeout 10m just test",
			files: runnersRepo,
			steps: []string{"go test -race ./... (test go test) via justfile:test"},
			deps:  Depends{Files: []string{"go.mod", "justfile"}, Targets: []string{"justfile:test"}, Runner: "go test"},
		},
		{
			name:  "task with deps",
			cmd:   "task test",
			files: runnersRepo,
			steps: []string{"golangci-lint run (lint) via Taskfile.yml:test > Taskfile.yml:lint", "go test -race ./... (test go test) via Taskfile.yml:test"},
			deps:  Depends{Files: []string{"Taskfile.yml", "go.mod"}, Targets: []string{"Taskfile.yml:test", "Taskfile.yml:lint"}, Runner: "go test"},
		},
		{
			name:  "a recipe that calls itself stops",
			cmd:   "make -C loop test",
			files: runnersRepo,
			steps: []string{"make test (test) via loop/Makefile:test in loop"},
			deps:  Depends{Files: []string{"loop/Makefile"}, Targets: []string{"loop/Makefile:test"}},
		},
		{
			name:  "a loop in a recipe",
			cmd:   "make -C compound test",
			files: runnersRepo,
			steps: []string{"go test ./... (test go test) via compound/Makefile:test in compound"},
			deps:  Depends{Files: []string{"compound/Makefile", "go.mod"}, Targets: []string{"compound/Makefile:test"}, Runner: "go test"},
		},
	})
}

func TestRunnersProblems(t *testing.T) {
	t.Parallel()
	a := Analyze(repo(runnersRepo), "make -C loop test", ".")
	if len(a.Problems) != 1 || a.Problems[0] != "a cycle: make test runs itself" {
		t.Errorf("cycle problems = %q", a.Problems)
	}
	a = Analyze(repo(runnersRepo), "make -C deep a", ".")
	want := "stopped following at depth 6: make g"
	if len(a.Problems) != 1 || a.Problems[0] != want {
		t.Errorf("depth problems = %q, want %q", a.Problems, want)
	}
	if got := len(a.Depends.Targets); got != 6 {
		t.Errorf("followed %d targets (%q), want 6", got, a.Depends.Targets)
	}
}
