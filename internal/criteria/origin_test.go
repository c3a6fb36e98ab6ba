package criteria

import (
	"context"
	"testing"
)

// TestProposalOrigin: the proposal says where its command was found as
// data, for the report ("`sh test.sh`, inferred from
// .github/workflows/ci.yml, job test, step Run tests").
func TestProposalOrigin(t *testing.T) {
	ci := `on: [push, pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Run tests
        run: go test ./...
`
	cases := []struct {
		name       string
		files      map[string]string
		task, hint string
		want       Origin
	}{
		{"a CI step", map[string]string{"go.mod": "module x\n\ngo 1.22\n", "x_test.go": "package x\n", ".github/workflows/ci.yml": ci},
			"fix the failing tests", "", Origin{File: ".github/workflows/ci.yml", Job: "test", Step: "Run tests"}},
		{"a CI step without a name", map[string]string{"go.mod": "module x\n\ngo 1.22\n", "x_test.go": "package x\n",
			".github/workflows/ci.yml": "on: push\njobs:\n  unit:\n    runs-on: ubuntu-latest\n    steps:\n      - run: go test ./...\n"},
			"fix the failing tests", "", Origin{File: ".github/workflows/ci.yml", Job: "unit", Step: "Run go test ./..."}},
		{"a manifest", map[string]string{"package.json": `{"scripts": {"test": "jest"}, "devDependencies": {"jest": "29"}}`},
			"fix the failing tests", "", Origin{File: "package.json"}},
		{"the task names it", map[string]string{"Makefile": "check:\n\ttrue\n"},
			"fix the parser until `make check` passes", "", Origin{Named: "task"}},
		{"the hint names it", map[string]string{"Makefile": "check:\n\ttrue\n"},
			"fix the parser", "`make check` passes", Origin{Named: "hint"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := InferWithHint(context.Background(), writeRepo(t, c.files), c.task, c.hint)
			if err != nil {
				t.Fatal(err)
			}
			if p.Origin == nil || *p.Origin != c.want {
				t.Errorf("origin %+v, want %+v (command %q, rationale %+v)", p.Origin, c.want, p.Command, p.Rationale)
			}
		})
	}
}
