package criteria

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeLookup serves scripts from a map keyed by runner and name.
type fakeLookup map[string]string

func (f fakeLookup) script(runner, dir, name string) (string, bool) {
	if runner == "exists" {
		_, ok := f["file:"+name]
		return "", ok
	}
	s, ok := f[runner+":"+name]
	return s, ok
}

func TestClassify(t *testing.T) {
	t.Parallel()
	scripts := fakeLookup{
		"npm:test":          "vitest run",
		"npm:test:ci":       "npm run lint && vitest run --coverage",
		"npm:lint":          "eslint .",
		"npm:typecheck":     "tsc --noEmit",
		"npm:dev":           "vite",
		"npm:watch":         "jest --watch",
		"make:test":         "go test ./...",
		"make:check":        "make lint\nmake test",
		"make:lint":         "golangci-lint run",
		"just:ci":           "cargo clippy -- -D warnings\ncargo test",
		"rake:default":      "rake spec",
		"rake:spec":         "rspec",
		"composer:test":     "phpunit",
		"file:scripts/test": "#!/bin/sh\nset -e\n${PREFIX}pytest \"$@\"\n",
	}
	cl := classifier{lookup: scripts}
	tests := []struct {
		cmd  string
		kind kind
		sig  string
	}{
		{"go test -race ./...", kTest, "go test"},
		{"go test -coverprofile=c.out ./...", kTest | kCoverage, "go test"},
		{"go vet ./...", kLint | kType, "go vet"},
		{"go install golang.org/x/tools/cmd/goimports@latest", kToolchain, ""},
		{"gotestsum --format testname -- -race ./...", kTest, "go test"},
		{"cargo +nightly test --workspace", kTest, "cargo test"},
		{"cargo clippy --all-targets -- -D warnings", kLint, "cargo clippy"},
		{"cargo fmt --all -- --check", kFormat, "cargo fmt"},
		{"cargo fmt --all", 0, ""},
		{"cargo llvm-cov --lcov", kTest | kCoverage, "cargo llvm-cov"},
		{"npm test", kTest, "npm test"},
		{"npm run test", kTest, "npm test"},
		{"npm run test:ci", kTest | kLint | kCoverage, "npm test:ci"},
		{"pnpm lint", kLint, "pnpm lint"},
		{"yarn typecheck", kType, "yarn typecheck"},
		{"npm ci", kInstall, "npm install"},
		{"npm install -g pnpm", kToolchain, ""},
		{"npm install --save-dev mocha@3", kCIOnly, ""},
		{"npm publish", kDeploy, ""},
		{"bun test", kTest, "bun test"},
		{"bun run test", kTest, "bun run test"},
		{"npx jest --ci", kTest, "jest"},
		{"npx tsc --noEmit", kType, "tsc"},
		{"npx turbo run lint test", kLint | kTest, "turbo lint test"},
		{"npx nx run-many -t test", kTest, "nx test"},
		{"jest --watch", kTest | kWatch, "jest"},
		{"python -m pytest -x tests", kTest, "pytest"},
		{"pytest --cov=src", kTest | kCoverage, "pytest"},
		{"uv run pytest", kTest, "pytest"},
		{"poetry run mypy src", kType, "mypy"},
		{"tox -e py312", kTest, "tox"},
		{"tox -e lint", kLint, "tox"},
		{"nox -s tests-3.12", kTest, "nox"},
		{"hatch test --cover", kTest | kCoverage, "hatch test"},
		{"coverage run -m pytest", kTest | kCoverage, "pytest"},
		{"pip install -e .[test]", kInstall, "pip install"},
		{"pip install tox", kToolchain, "pip install"},
		{"python -m pip install --upgrade pip", kToolchain, "pip install"},
		{"./mvnw -B verify", kTest | kBuild, "mvn verify"},
		{"mvn -B -DskipTests package", kBuild, "mvn package"},
		{"./gradlew check", kTest | kLint, "gradle check"},
		{"./gradlew build -x test", kBuild | kLint, "gradle build"},
		{"bundle exec rake", kTest, "rake default"},
		{"bundle exec rspec", kTest, "rspec"},
		{"bundle exec rubocop", kLint, "rubocop"},
		{"bin/rails db:prepare test", kTest | kService | kInstall, "rails test"},
		{"composer test", kTest, "composer test"},
		{"vendor/bin/phpunit --colors=always", kTest, "phpunit"},
		{"composer install --prefer-dist", kInstall, "composer install"},
		{"mix test --cover", kTest | kCoverage, "mix test"},
		{"mix format --check-formatted", kFormat, "mix format"},
		{"mix deps.get", kInstall, "mix deps.get"},
		{"dotnet test --no-build", kTest, "dotnet test"},
		{"dotnet restore", kInstall, "dotnet restore"},
		{"dotnet format --verify-no-changes", kFormat | kLint, "dotnet format"},
		{"cmake -B build -DCMAKE_BUILD_TYPE=Release", kInstall, "cmake configure"},
		{"cmake --build build", kBuild, "cmake --build"},
		{"ctest --test-dir build", kTest, "ctest"},
		{"make test", kTest, "make test"},
		{"make check", kLint | kTest, "make check"},
		{"make", kBuild, "make"},
		{"just ci", kLint | kTest, "just ci"},
		{"deno task test", kTest, "deno task test"},
		{"deno fmt --check", kFormat, "deno fmt"},
		{"sudo apt-get install -y libpq-dev", kToolchain, ""},
		{"echo hello", kCIOnly, ""},
		{"docker compose up -d", kService, "docker compose up"},
		{"timeout 10m go test ./...", kTest, "go test"},
		{"xvfb-run -a npm test", kTest, "npm test"},
		{"env CGO_ENABLED=1 go test ./...", kTest, "go test"},
		{"scripts/test", kTest, "scripts/test"},
		{"goreleaser release --clean", kDeploy, ""},
	}
	for _, tc := range tests {
		t.Run(tc.cmd, func(t *testing.T) {
			t.Parallel()
			cmds, err := splitScript(tc.cmd)
			if err != nil || len(cmds) != 1 {
				t.Fatalf("splitScript(%q) = %v, %v", tc.cmd, cmds, err)
			}
			got := cl.classify(cmds[0].args, ".")
			if got.kind != tc.kind || got.sig != tc.sig {
				t.Errorf("classify(%q) = %s %q, want %s %q", tc.cmd, got.kind, got.sig, tc.kind, tc.sig)
			}
		})
	}
}

func TestSplitScript(t *testing.T) {
	t.Parallel()
	type cmd struct {
		Text, Dir string
		Or        bool
		Pipe      string
		Compound  bool
	}
	tests := []struct {
		name   string
		script string
		want   []cmd
	}{
		{"lines", "npm ci\nnpm test", []cmd{{Text: "npm ci", Dir: "."}, {Text: "npm test", Dir: "."}}},
		{"cd chain", "cd frontend && npm ci && npm test", []cmd{{Text: "npm ci", Dir: "frontend"}, {Text: "npm test", Dir: "frontend"}}},
		{"subshell scope", "(cd a && make)\nmake test", []cmd{{Text: "make", Dir: "a"}, {Text: "make test", Dir: "."}}},
		{"pushd popd", "pushd build\nctest\npopd\nls", []cmd{{Text: "ctest", Dir: "build"}, {Text: "ls", Dir: "."}}},
		{"or fallback", "npm test || true", []cmd{{Text: "npm test", Dir: ".", Or: true}}},
		{"pipe", "go test ./... 2>&1 | tee out.txt", []cmd{{Text: "go test ./...", Dir: ".", Pipe: "tee"}}},
		{"continuation", "cmake -B build \\\n  -DX=1", []cmd{{Text: "cmake -B build -DX=1", Dir: "."}}},
		{"export and set", "set -eux\nexport GOFLAGS=-mod=mod\ngo test ./...", []cmd{{Text: "set -eux", Dir: "."}, {Text: "go test ./...", Dir: "."}}},
		{"compound", "for d in a b; do (cd $d && go test ./...); done", []cmd{{Text: "for d in a b; do (cd $d && go test ./...); done", Dir: ".", Compound: true}}},
		{"workspace var", "cd $GITHUB_WORKSPACE/app && make", []cmd{{Text: "make", Dir: "app"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := splitScript(tc.script)
			if err != nil {
				t.Fatal(err)
			}
			var out []cmd
			for _, c := range got {
				out = append(out, cmd{Text: c.text, Dir: c.dir, Or: c.orFallback, Pipe: c.pipedTo, Compound: c.compound})
			}
			if diff := cmp.Diff(tc.want, out); diff != "" {
				t.Errorf("splitScript(%q) (-want +got):\n%s", tc.script, diff)
			}
		})
	}
	if _, err := splitScript("if then fi ((("); err == nil {
		t.Error("a broken script parsed without error")
	}
}

func TestClassifyName(t *testing.T) {
	t.Parallel()
	tests := map[string]kind{
		"test": kTest, "test:unit": kTest, "test:e2e": kTest | kE2E, "test:watch": kWatch, "lint": kLint,
		"lint:fix": 0, "typecheck": kType, "type-check": kType, "build": kBuild, "coverage": kTest | kCoverage,
		"format": 0, "format:check": kFormat, "dev": kWatch, "release": kDeploy, "bench": kBench, "docs": 0,
	}
	for name, want := range tests {
		if got := classifyName(name); got != want {
			t.Errorf("classifyName(%q) = %s, want %s", name, got, want)
		}
	}
}

func TestUnwrapRunners(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{
		"cross-env NODE_ENV=test jest",
		"dotenv -e .env.test -- jest",
		"nix develop -c jest --ci",
		"nix-shell --run 'jest --ci'",
		"devbox run jest",
		"mise exec -- jest",
	} {
		cmds, err := splitScript(cmd)
		if err != nil {
			t.Fatal(err)
		}
		if got := (classifier{}).classify(cmds[0].args, "."); got.kind != kTest || got.sig != "jest" {
			t.Errorf("classify(%q) = %s %q, want test jest", cmd, got.kind, got.sig)
		}
	}
}

func TestExpandKnownVars(t *testing.T) {
	t.Parallel()
	env := map[string]string{"PY": "3.12", "FLAGS": "--all-features --locked"}
	tests := []struct{ in, out string }{
		{"tox -e py${PY//./}-tests", "tox -e py312-tests"},
		{"cargo test $FLAGS", "cargo test --all-features --locked"},
		{`cargo test "$FLAGS"`, "cargo test '--all-features --locked'"},
		{"go test $(go list ./...)", "go test $(go list ./...)"},
		{"pytest $UNKNOWN", "pytest $UNKNOWN"},
		{"make test", "make test"},
	}
	for _, tc := range tests {
		if got, _ := expandKnownVars(tc.in, env); got != tc.out {
			t.Errorf("expandKnownVars(%q) = %q, want %q", tc.in, got, tc.out)
		}
	}
}

func TestGithubEnvWrites(t *testing.T) {
	t.Parallel()
	got := githubEnvWrites("echo \"PYVER=312\" >> $GITHUB_ENV\necho PLAIN=1 >> \"$GITHUB_ENV\"\necho \"OUT=2\" >> $GITHUB_OUTPUT\necho \"DYN=$(date)\" >> $GITHUB_ENV\n")
	if diff := cmp.Diff(map[string]string{"PYVER": "312", "PLAIN": "1"}, got); diff != "" {
		t.Errorf("githubEnvWrites (-want +got):\n%s", diff)
	}
}
