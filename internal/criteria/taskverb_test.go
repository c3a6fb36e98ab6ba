package criteria

import (
	"strings"
	"testing"
)

func TestClassifyTask(t *testing.T) {
	t.Parallel()
	tests := []struct {
		task, hint string
		class      string
		threshold  int
		command    string
	}{
		{task: "fix the failing tests", class: ClassTestPass},
		{task: "fix the flaky parser test", class: ClassTestPass},
		{task: "fix the crash when the config file is empty", class: ClassTestPass},
		{task: "make CI green", class: ClassTestPass},
		{task: "fix lint", class: ClassLintClean},
		{task: "fix all eslint errors in src/", class: ClassLintClean},
		{task: "fix the clippy warnings", class: ClassLintClean},
		{task: "fix the TypeScript errors", class: ClassTypeClean},
		{task: "fix types", class: ClassTypeClean},
		{task: "make mypy happy", class: ClassTypeClean},
		{task: "fix the build", class: ClassBuildPass},
		{task: "the project doesn't compile on Go 1.23", class: ClassBuildPass},
		{task: "add tests for the parser", class: ClassCoverage},
		{task: "raise coverage to 85%", class: ClassCoverage, threshold: 85},
		{task: "refactor the config loader", class: ClassRegressionGate},
		{task: "migrate lib/ to ESM", class: ClassRegressionGate},
		{task: "upgrade to React 19", class: ClassRegressionGate},
		{task: "add a --json flag to the list command", class: ClassImplementFeature},
		{task: "implement OAuth login", class: ClassImplementFeature},
		{task: "support YAML config files", class: ClassImplementFeature},
		{task: "make it better", class: ClassRefused},
		{task: "improve the code", class: ClassRefused},
		{task: "", class: ClassRefused},
		{task: "update the docs", class: ClassRefused},
		// The hint (a trigger's completion condition) refines the class.
		{task: "work on the parser", hint: "tests pass", class: ClassTestPass},
		{task: "fix the parser", hint: "lint is clean", class: ClassLintClean},
		{task: "add tests to improve coverage", hint: "coverage >80%", class: ClassCoverage, threshold: 80},
		{task: "refactor the store", hint: "tests pass", class: ClassRegressionGate},
		// A task that names its own check.
		{task: "fix the parser until `make check` passes", class: ClassTestPass, command: "make check"},
		{task: "fix things", hint: "go test ./... passes", class: ClassTestPass, command: "go test ./..."},
	}
	for _, tc := range tests {
		t.Run(tc.task+"|"+tc.hint, func(t *testing.T) {
			t.Parallel()
			got := classifyTask(tc.task, tc.hint)
			if got.class != tc.class {
				t.Errorf("class = %s, want %s (matched %q)", got.class, tc.class, got.matched)
			}
			if got.threshold != tc.threshold {
				t.Errorf("threshold = %d, want %d", got.threshold, tc.threshold)
			}
			if got.command != tc.command {
				t.Errorf("command = %q, want %q", got.command, tc.command)
			}
			if got.class == ClassRefused && got.refusal == "" {
				t.Error("a refusal without a reason")
			}
			if got.class != ClassRefused && got.criterion == "" {
				t.Error("no criterion in words")
			}
		})
	}
}

func TestLegacyFallback(t *testing.T) {
	t.Parallel()
	tests := []struct {
		task, class, command string
	}{
		{"fix tests", ClassTestPass, "npm test"},
		{"fix linting", ClassLintClean, "npm run lint"},
		{"fix TypeScript", ClassTypeClean, "npx tsc --noEmit"},
		{"fix build", ClassBuildPass, "npm run build"},
		{"add tests", ClassCoverage, "npm test -- --coverage"},
		{"migrate to ESM", ClassRegressionGate, "node ."},
		{"refactor the parser", ClassRegressionGate, "npm test"},
		{"add a flag", ClassImplementFeature, "npm test"},
	}
	for _, tc := range tests {
		t.Run(tc.task, func(t *testing.T) {
			t.Parallel()
			row, ok := legacyFallback(tc.task, tc.class)
			if !ok || row.command != tc.command {
				t.Errorf("legacyFallback(%q) = %q, %v; want %q", tc.task, row.command, ok, tc.command)
			}
			if !strings.Contains(row.says, "->") {
				t.Errorf("row %q does not quote the seed table", row.says)
			}
		})
	}
}
