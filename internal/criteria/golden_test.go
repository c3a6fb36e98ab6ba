package criteria

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

var update = flag.Bool("update", false, "rewrite golden files")

// goldenCases are the fixture repositories of testdata/repos with the task
// each is asked about. A case's golden file is
// testdata/TestInferGolden/<name>.golden.yaml.
var goldenCases = []struct {
	name, repo, task, hint string
}{
	{"go-ci", "go-ci", "fix the failing tests", ""},
	{"go-ci-lint", "go-ci", "fix the lint errors", ""},
	{"go-ci-coverage", "go-ci", "raise coverage to 85%", ""},
	{"go-ci-refused", "go-ci", "make it better", ""},
	{"node-npm", "node-npm", "fix the failing tests", ""},
	{"node-npm-types", "node-npm", "fix the TypeScript errors", ""},
	{"node-npm-build", "node-npm", "fix the build", ""},
	{"pnpm-monorepo", "pnpm-monorepo", "fix the flaky parser test", ""},
	{"yarn-berry", "yarn-berry", "keep trying", "tests pass"},
	{"bun-trap", "bun-trap", "fix the failing tests", ""},
	{"deno-app", "deno-app", "fix the failing tests", ""},
	{"deno-app-lint", "deno-app", "fix lint", ""},
	{"rust-workspace", "rust-workspace", "fix the failing tests", ""},
	{"rust-workspace-lint", "rust-workspace", "fix the clippy warnings", ""},
	{"python-uv", "python-uv", "fix the failing tests", ""},
	{"python-uv-types", "python-uv", "fix the mypy errors", ""},
	{"python-poetry", "python-poetry", "fix the failing tests", ""},
	{"python-poetry-coverage", "python-poetry", "loop until coverage is above 90%", "coverage is above 90%"},
	{"python-tox", "python-tox", "fix the failing tests", ""},
	{"python-nox", "python-nox", "fix the failing tests", ""},
	{"python-hatch", "python-hatch", "refactor the config loader", ""},
	{"maven", "maven", "fix the failing tests", ""},
	{"gradle", "gradle", "fix the failing tests", ""},
	{"ruby-gem", "ruby-gem", "fix the failing specs", ""},
	{"rails-app", "rails-app", "fix the failing tests", ""},
	{"php-lib", "php-lib", "fix the failing tests", ""},
	{"php-lib-types", "php-lib", "fix the phpstan errors", ""},
	{"elixir-app", "elixir-app", "fix the failing tests", ""},
	{"elixir-app-lint", "elixir-app", "fix the credo warnings", ""},
	{"dotnet-app", "dotnet-app", "fix the failing tests", ""},
	{"cmake-lib", "cmake-lib", "fix the failing tests", ""},
	{"c-make", "c-make", "fix the failing tests", ""},
	{"go-taskfile", "go-taskfile", "fix the race in the cache", ""},
	{"gitlab-python", "gitlab-python", "fix the failing tests", ""},
	{"gitlab-python-lint", "gitlab-python", "fix the ruff errors", ""},
	{"go-work", "go-work", "fix the failing tests", ""},
	{"go-nested", "go-nested", "fix the failing tests", ""},
	{"react-watch", "react-watch", "fix the failing tests", ""},
	{"npm-placeholder", "npm-placeholder", "fix the failing tests", ""},
	{"ci-unresolved", "ci-unresolved", "fix the failing tests", ""},
	{"aiwg-project", "aiwg-project", "fix the failing tests", ""},
	{"context-only", "context-only", "fix the failing tests", ""},
	{"context-only-lint", "context-only", "fix the lint errors", ""},
	{"malformed", "malformed", "fix the failing tests", ""},
	{"no-manifest", "no-manifest", "fix the failing tests", ""},
	{"no-manifest-lint", "no-manifest", "make the linter pass", ""},
	{"turbo-ci", "turbo-ci", "add a --json flag to the CLI", ""},
	{"turbo-ci-types", "turbo-ci", "fix the type errors", ""},
	// Patterns of the inference study (testdata/study/FINDINGS-*.md).
	{"polyglot", "polyglot", "fix the failing tests", ""},
	{"polyglot-named", "polyglot", "fix the failing tests in bindings/node", ""},
	{"tox-env-matrix", "tox-env-matrix", "fix the failing tests", ""},
	{"variant-jobs-only", "variant-jobs-only", "fix the failing tests", ""},
}

// fixtureHost is the machine the fixtures' checks are inferred for, the
// same on every machine the tests run on: Python 3.11, ninja present.
var fixtureHost = StaticHost{PythonVersion: "3.11", Programs: map[string]bool{"ninja": true, "python3.11": true}}

func TestInferGolden(t *testing.T) {
	t.Parallel()
	// Every fixture repository has at least one case.
	ents, err := os.ReadDir(filepath.Join("testdata", "repos"))
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, c := range goldenCases {
		covered[c.repo] = true
	}
	for _, e := range ents {
		if e.IsDir() && !covered[e.Name()] {
			t.Errorf("fixture repository %s has no case in goldenCases", e.Name())
		}
	}
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := InferWith(context.Background(), filepath.Join("testdata", "repos", tc.repo), tc.task, Options{Hint: tc.hint, Host: fixtureHost})
			if err != nil {
				t.Fatalf("Infer: %v", err)
			}
			got, err := p.YAML()
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "TestInferGolden", tc.name+".golden.yaml")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("reading golden file (run go test -update to create it): %v", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("proposal differs from %s (-want +got):\n%s", golden, diff)
			}
			// Deterministic: a second run gives the same bytes.
			p2, err := InferWithHint(context.Background(), filepath.Join("testdata", "repos", tc.repo), tc.task, tc.hint)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := p2.YAML()
			if !bytes.Equal(got, again) {
				t.Errorf("two runs differ:\n%s", cmp.Diff(string(got), string(again)))
			}
		})
	}
}

// moduleRoot finds the directory of go.mod above the test's directory.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// proposalSchema compiles the shared completion-proposal schema, or skips
// the test when ../shared is absent.
func proposalSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	path := filepath.Join(moduleRoot(t), "..", "shared", "schemas", "completion-proposal.schema.json")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		t.Skipf("schema %s is absent (../shared is not beside the module): schema validation skipped", path)
	}
	c := jsonschema.NewCompiler()
	s, err := c.Compile(path)
	if err != nil {
		t.Fatalf("compiling %s: %v", path, err)
	}
	return s
}

func validateProposal(t testing.TB, s *jsonschema.Schema, name string, p Proposal) {
	t.Helper()
	data, err := p.JSON()
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := s.Validate(inst); err != nil {
		t.Errorf("%s does not validate against the schema: %v\n%s", name, err, data)
	}
}

// TestGoldenProposalsValidate validates every golden proposal (read back
// from YAML, marshalled as JSON) against the shared schema.
func TestGoldenProposalsValidate(t *testing.T) {
	t.Parallel()
	s := proposalSchema(t)
	files, err := filepath.Glob(filepath.Join("testdata", "TestInferGolden", "*.golden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < len(goldenCases) {
		t.Fatalf("found %d golden files for %d cases (run go test -update)", len(files), len(goldenCases))
	}
	sort.Strings(files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var p Proposal
		if err := parseYAML(data, &p); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		validateProposal(t, s, f, p)
		// The JSON form round-trips to the same proposal.
		js, _ := p.JSON()
		var back Proposal
		if err := json.Unmarshal(js, &back); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if diff := cmp.Diff(p, back); diff != "" {
			t.Errorf("%s: JSON round trip differs (-yaml +json):\n%s", f, diff)
		}
	}
}
