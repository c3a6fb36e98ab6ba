package criteria

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

// writeRepo writes files (path -> content) into a new temporary repository.
func writeRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestPickMatrixCell(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		matrix string
		want   map[string]string
	}{
		{"linux and newest", "os: [windows-latest, macos-latest, ubuntu-latest]\ngo: ['1.21', '1.22', '1.20']", map[string]string{"os": "ubuntu-latest", "go": "1.22"}},
		{"stable toolchain", "rust: [nightly, beta, stable, 1.70.0]", map[string]string{"rust": "stable"}},
		{"exclude skips a cell", "php: ['8.2', '8.3']\ndeps: [lowest, highest]\nexclude:\n  - php: '8.3'\n    deps: lowest", map[string]string{"php": "8.3", "deps": "highest"}},
		{"include extends the cell", "python: ['3.11', '3.12']\ninclude:\n  - python: '3.12'\n    toxenv: py312\n  - python: '3.11'\n    toxenv: py311", map[string]string{"python": "3.12", "toxenv": "py312"}},
		{"include only: first Linux", "include:\n  - {os: windows-latest, target: win}\n  - {os: ubuntu-latest, target: linux}", map[string]string{"os": "ubuntu-latest", "target": "linux"}},
		{"embedded versions", "name: ['Node.js 0.10', 'Node.js 18.x', 'Node.js 9.x']", map[string]string{"name": "Node.js 18.x"}},
		{"object values", "config:\n  - {name: a, cc: gcc}\n  - {name: b, cc: clang}", map[string]string{"config": "", "config.name": "a", "config.cc": "gcc"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var n yaml.Node
			if err := yaml.Unmarshal([]byte(tc.matrix), &n); err != nil {
				t.Fatal(err)
			}
			got, note := pickMatrixCell(&n, nil)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("cell (-want +got):\n%s", diff)
			}
			if note == "" {
				t.Error("no note says which cell was picked")
			}
		})
	}
}

func TestExprEnv(t *testing.T) {
	t.Parallel()
	e := exprEnv{matrix: map[string]string{"os": "ubuntu-latest", "go": "1.22", "target": ""}, env: map[string]string{"CARGO": "cargo"}, inputs: map[string]string{"level": "full"}}
	subs := []struct{ in, out string }{
		{"go test ${{ matrix.go }}", "go test 1.22"},
		{"${{ env.CARGO }} test", "cargo test"},
		{"${{ github.workspace }}/build", "build"},
		{"make ${{ inputs.level }}", "make full"},
		{"${{ matrix.os == 'ubuntu-latest' && 'linux' || 'other' }}", "linux"},
		{"echo ${{ format('{0}-{1}', matrix.os, matrix.go) }}", "echo ubuntu-latest-1.22"},
	}
	for _, s := range subs {
		got, un := e.substitute(s.in)
		if got != s.out || len(un) != 0 {
			t.Errorf("substitute(%q) = %q %v, want %q", s.in, got, un, s.out)
		}
	}
	if got, un := e.substitute("go test ${{ steps.list.outputs.pkgs }}"); len(un) != 1 || !placeholderRe.MatchString(got) {
		t.Errorf("an unknown expression resolved: %q %v", got, un)
	}
	conds := []struct {
		cond string
		want bool
	}{
		{"matrix.os == 'ubuntu-latest'", true},
		{"${{ matrix.os == 'windows-latest' }}", false},
		{"runner.os == 'Linux'", true},
		{"startsWith(matrix.os, 'ubuntu')", true},
		{"matrix.target != ''", false},
		{"failure()", false},
		{"always()", true},
		{"github.event_name == 'push'", true}, // unknown: the step may run
		{"github.event_name == 'push' && matrix.os == 'windows-latest'", false},
		{"!cancelled()", true},
	}
	for _, c := range conds {
		if got := e.condition(c.cond); got != c.want {
			t.Errorf("condition(%q) = %v, want %v", c.cond, got, c.want)
		}
	}
}

func TestCICandidates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		files   map[string]string
		class   string
		command string
		workdir string
		setup   string
		finding string // a rationale finding that must be there
	}{
		{
			name: "working directory and setup",
			files: map[string]string{
				"web/package.json":      `{"scripts": {"test": "vitest run"}}`,
				"web/package-lock.json": "{}",
				".github/workflows/ci.yml": `on: [push]
defaults:
  run:
    working-directory: web
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-node@v4
      - run: npm ci
      - run: npm test -- --reporter=dot
      - uses: codecov/codecov-action@v4
`},
			class: ClassTestPass, command: "npm test -- --reporter=dot", workdir: "web", setup: "npm ci",
			finding: "CI-only steps left out: codecov/codecov-action",
		},
		{
			name: "cd in the script",
			files: map[string]string{
				"go.mod": "module x\n", "api/go.mod": "module api\n",
				".github/workflows/test.yml": `on: pull_request
jobs:
  api:
    runs-on: ubuntu-latest
    steps:
      - run: |
          cd api
          go mod download
          go test -race ./...
`},
			class: ClassTestPass, command: "go test -race ./...", workdir: "api", setup: "go mod download",
		},
		{
			name: "step working-directory and matrix substitution",
			files: map[string]string{
				"Cargo.toml": "[workspace]\nmembers = []\n",
				".github/workflows/ci.yml": `on: [push, pull_request]
jobs:
  test:
    strategy:
      matrix:
        features: ["--all-features", "--no-default-features"]
        os: [macos-latest, ubuntu-latest]
    runs-on: ${{ matrix.os }}
    steps:
      - uses: dtolnay/rust-toolchain@stable
      - run: cargo test --workspace ${{ matrix.features }} --locked
`},
			class: ClassTestPass, command: "cargo test --workspace --all-features", workdir: ".", // --locked only guards the lockfile

			finding: "picked features=--all-features, os=ubuntu-latest",
		},
		{
			name: "release and schedule workflows are ignored",
			files: map[string]string{
				"package.json": `{"scripts": {"test": "jest"}}`,
				".github/workflows/release.yml": `on:
  release:
    types: [published]
jobs:
  publish:
    runs-on: ubuntu-latest
    steps:
      - run: npm ci
      - run: npm run test:release
      - run: npm publish
`,
				".github/workflows/nightly.yml": `on:
  schedule:
    - cron: '0 0 * * *'
jobs:
  e2e:
    runs-on: ubuntu-latest
    steps:
      - run: npm run test:nightly
`},
			class: ClassTestPass, command: "npm test", workdir: ".", setup: "npm install",
			finding: "the workflow runs only on release",
		},
		{
			name: "a job without services wins over one with a database",
			files: map[string]string{
				"go.mod": "module x\n",
				".github/workflows/ci.yml": `on: [push]
jobs:
  integration:
    runs-on: ubuntu-latest
    services:
      postgres:
        image: postgres:16
    steps:
      - run: go test -tags integration ./...
  unit:
    runs-on: ubuntu-latest
    steps:
      - run: go test -short ./...
`},
			class: ClassTestPass, command: "go test -short ./...", workdir: ".", setup: "go mod download",
			finding: "the job starts services",
		},
		{
			name: "lint task picks the lint action",
			files: map[string]string{
				"go.mod": "module x\n",
				".github/workflows/ci.yml": `on: [push]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: go test ./...
  golangci:
    runs-on: ubuntu-latest
    steps:
      - uses: golangci/golangci-lint-action@v6
        with:
          args: --timeout 5m
          working-directory: .
`},
			class: ClassLintClean, command: "golangci-lint run --timeout 5m", workdir: ".",
		},
		{
			name: "unresolvable expression makes a command unusable",
			files: map[string]string{
				"Makefile": "test:\n\tgo test ./...\n",
				".github/workflows/ci.yml": `on: [push]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: make test PKGS=${{ needs.list.outputs.pkgs }}
`},
			class: ClassTestPass, command: "make test", workdir: ".",
		},
		{
			name: "composite action installs",
			files: map[string]string{
				"package.json":                     `{"scripts": {"test": "node --test"}}`,
				".github/actions/setup/action.yml": "runs:\n  using: composite\n  steps:\n    - run: pnpm install --frozen-lockfile\n      shell: bash\n",
				".github/workflows/ci.yml": `on: [push]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: ./.github/actions/setup
      - run: pnpm test
`},
			class: ClassTestPass, command: "pnpm test", workdir: ".", setup: "pnpm install --frozen-lockfile",
		},
		{
			name: "gitlab ci",
			files: map[string]string{
				".gitlab-ci.yml": `default:
  before_script:
    - bundle install
stages: [test, deploy]
rspec:
  stage: test
  script:
    - bundle exec rspec
deploy:
  stage: deploy
  script:
    - cap production deploy
`},
			class: ClassTestPass, command: "bundle exec rspec", workdir: ".", setup: "bundle install",
			finding: "a deploy/release job",
		},
		{
			name: "powershell steps are not shell commands",
			files: map[string]string{
				"App.sln": "",
				".github/workflows/ci.yml": `on: [push]
jobs:
  build:
    runs-on: windows-latest
    steps:
      - shell: pwsh
        run: ./build.ps1 -Test
`},
			class: ClassTestPass, command: "dotnet test", workdir: ".", setup: "dotnet restore",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := writeRepo(t, tc.files)
			task := map[string]string{ClassTestPass: "fix the failing tests", ClassLintClean: "fix the lint errors"}[tc.class]
			p, err := Infer(t.Context(), dir, task)
			if err != nil {
				t.Fatal(err)
			}
			if p.Command != tc.command || p.Workdir != tc.workdir || p.Setup != tc.setup {
				t.Errorf("got command %q workdir %q setup %q; want %q %q %q\n%s", p.Command, p.Workdir, p.Setup, tc.command, tc.workdir, tc.setup, p.Summary())
			}
			if tc.finding != "" && !hasFinding(p, tc.finding) {
				t.Errorf("no finding contains %q:\n%+v", tc.finding, p.Rationale)
			}
		})
	}
}

func hasFinding(p Proposal, s string) bool {
	for _, f := range p.Rationale {
		if strings.Contains(f.Finding, s) || strings.Contains(f.Source, s) {
			return true
		}
	}
	for _, a := range p.Alternatives {
		if strings.Contains(a.WhyNot, s) {
			return true
		}
	}
	return false
}
