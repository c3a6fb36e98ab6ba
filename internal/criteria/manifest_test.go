package criteria

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aiwg/agent-loop/internal/shellcmd"
)

// manifestCommands infers from the manifests of a generated repository only
// (no CI, no context file) and returns the proposal.
func manifestProposal(t *testing.T, files map[string]string, task string) Proposal {
	t.Helper()
	p, err := Infer(t.Context(), writeRepo(t, files), task)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestManifestLayer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		files   map[string]string
		task    string
		command string
		workdir string
		setup   string
	}{
		{"npm lockfile", map[string]string{"package.json": `{"scripts":{"test":"jest"}}`, "package-lock.json": "{}"}, "fix the tests", "npm test", ".", "npm ci"},
		{"pnpm from packageManager", map[string]string{"package.json": `{"packageManager":"pnpm@9.1.0","scripts":{"test":"vitest run"}}`}, "fix the tests", "pnpm test", ".", "pnpm install"},
		{"yarn classic", map[string]string{"package.json": `{"scripts":{"lint":"eslint ."}}`, "yarn.lock": ""}, "fix lint", "yarn lint", ".", "yarn install --frozen-lockfile"},
		{"bun", map[string]string{"package.json": `{"scripts":{"test":"bun test"}}`, "bun.lockb": ""}, "fix the tests", "bun run test", ".", "bun install --frozen-lockfile"},
		{"typescript without script", map[string]string{"package.json": `{"devDependencies":{"typescript":"5"}}`, "tsconfig.json": "{}", "package-lock.json": "{}"}, "fix the type errors", "npx tsc --noEmit", ".", "npm ci"},
		{"deno task", map[string]string{"deno.json": `{"tasks":{"test":"deno test -A"}}`}, "fix the tests", "deno task test", ".", ""},
		{"go module", map[string]string{"go.mod": "module x\n\ngo 1.22\n", "x_test.go": "package x"}, "fix the tests", "go test ./...", ".", "go mod download"},
		{"go lint with config", map[string]string{"go.mod": "module x\n", ".golangci.yml": ""}, "fix lint", "golangci-lint run", ".", "go mod download"},
		{"cargo package", map[string]string{"Cargo.toml": "[package]\nname = \"x\"\n"}, "fix the tests", "cargo test", ".", ""},
		{"cargo workspace clippy", map[string]string{"Cargo.toml": "[workspace]\nmembers = [\"a\"]\n"}, "fix the clippy warnings", "cargo clippy --workspace --all-targets -- -D warnings", ".", ""},
		{"uv", map[string]string{"pyproject.toml": "[project]\nname='x'\n[tool.pytest.ini_options]\n", "uv.lock": ""}, "fix the tests", "uv run pytest", ".", "uv sync"},
		{"pdm script", map[string]string{"pyproject.toml": "[tool.pdm.scripts]\ntest = \"pytest -q\"\n", "pdm.lock": ""}, "fix the tests", "pdm run test", ".", "pdm install"},
		{"plain pip with extras", map[string]string{"pyproject.toml": "[project]\nname='x'\n[project.optional-dependencies]\ntest=['pytest']\n"}, "fix the tests", "python -m pytest", ".", "python -m pip install -e '.[test]'"},
		{"tox in pyproject", map[string]string{"pyproject.toml": "[tool.tox]\nenv_list = [\"3.12\", \"lint\"]\n"}, "fix the lint errors", "tox -e lint", ".", "python -m pip install tox"},
		{"maven wrapper", map[string]string{"pom.xml": "<project></project>", "mvnw": ""}, "fix the tests", "./mvnw -B test", ".", ""},
		{"gradle no wrapper", map[string]string{"build.gradle": "plugins { id 'java' }"}, "fix the tests", "gradle test", ".", ""},
		{"android gradle", map[string]string{"build.gradle.kts": "plugins { id(\"com.android.application\") }", "gradlew": ""}, "fix the tests", "./gradlew testDebugUnitTest", ".", ""},
		{"rails", map[string]string{"Gemfile": "", "bin/rails": "", "config/application.rb": "", "test/a_test.rb": ""}, "fix the tests", "bin/rails test", ".", "bundle install"},
		{"rspec gem", map[string]string{"Gemfile": "", "spec/a_spec.rb": ""}, "fix the specs", "bundle exec rspec", ".", "bundle install"},
		{"composer script", map[string]string{"composer.json": `{"scripts":{"test":["@php vendor/bin/phpunit"]}}`}, "fix the tests", "composer test", ".", "composer install"},
		{"laravel", map[string]string{"composer.json": `{"require":{"laravel/framework":"^11"}}`, "artisan": "", "phpunit.xml": ""}, "fix the tests", "php artisan test", ".", "composer install"},
		{"mix", map[string]string{"mix.exs": "defmodule X do end"}, "fix the tests", "mix test", ".", "mix deps.get"},
		{"dotnet slnx", map[string]string{"App.slnx": "<Solution/>", "src/App/App.csproj": ""}, "fix the tests", "dotnet test", ".", "dotnet restore"},
		{"dotnet two solutions", map[string]string{"A.sln": "", "B.sln": ""}, "fix the tests", "dotnet test A.sln", ".", "dotnet restore A.sln"},
		{"cmake ctest", map[string]string{"CMakeLists.txt": "enable_testing()\nadd_test(NAME t COMMAND t)\n"}, "fix the tests", "cmake -S . -B build && cmake --build build && ctest --test-dir build", ".", ""},
		{"cmake build", map[string]string{"CMakeLists.txt": "project(x)\n"}, "fix the build", "cmake --build build", ".", "cmake -S . -B build"},
		{"meson", map[string]string{"meson.build": "project('x')\ntest('t', exe)\n"}, "fix the tests", "meson test -C build", ".", "meson setup build"},
		{"justfile", map[string]string{"justfile": "test:\n    cargo test --all\n", "Cargo.toml": "[package]\nname='x'\n"}, "fix the tests", "just test", ".", ""},
		{"taskfile", map[string]string{"Taskfile.yml": "version: '3'\ntasks:\n  lint:\n    cmds: [ruff check .]\n"}, "fix lint", "task lint", ".", ""},
		{"subdirectory project", map[string]string{"backend/go.mod": "module b\n", "backend/b_test.go": "package b", "README.md": "# x"}, "fix the tests", "go test ./...", "backend", "go mod download"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := manifestProposal(t, tc.files, tc.task)
			if p.Command != tc.command || p.Workdir != tc.workdir || p.Setup != tc.setup {
				t.Errorf("got %q in %q setup %q; want %q in %q setup %q\n%s", p.Command, p.Workdir, p.Setup, tc.command, tc.workdir, tc.setup, p.Summary())
			}
		})
	}
}

func TestToxAndNox(t *testing.T) {
	t.Parallel()
	envs := shellcmd.ExpandEnvList("py3{10,11,12}-django{42,50}, lint\n  docs")
	if len(envs) != 8 || envs[0] != "py310-django42" || envs[6] != "lint" {
		t.Errorf("expandEnvList = %v", envs)
	}
	if got := pickToxEnv([]string{"lint", "py311", "py312"}, kTest); got != "py" {
		t.Errorf("pickToxEnv test = %q, want py", got)
	}
	if got := pickToxEnv([]string{"py312-django42"}, kTest); got != "py312-django42" {
		t.Errorf("pickToxEnv factor = %q", got)
	}
	sessions := shellcmd.NoxSessions("import nox\n\n@nox.session(python=['3.11'])\ndef tests(session):\n    pass\n\n@nox.session(name='lint')\ndef run_lint(session):\n    pass\n\n@nox.session\n@nox.parametrize('x', [1])\ndef docs(session, x):\n    pass\n")
	sort.Strings(sessions)
	if diff := cmp.Diff([]string{"docs", "lint", "tests"}, sessions); diff != "" {
		t.Errorf("nox sessions (-want +got):\n%s", diff)
	}
}

func TestParseGoWork(t *testing.T) {
	t.Parallel()
	got := parseGoWork([]byte("go 1.22\n\nuse ./tools\nuse (\n\t./api // the API\n\t\"./worker\"\n)\n"))
	if diff := cmp.Diff([]string{"tools", "api", "worker"}, got); diff != "" {
		t.Errorf("go.work members (-want +got):\n%s", diff)
	}
}

func TestPackageJSONLenient(t *testing.T) {
	t.Parallel()
	p, err := parsePackageJSON([]byte(`{"scripts": {"test": "jest", "weird": 42}, "workspaces": {"packages": ["packages/*"]}, "devDependencies": {"jest": "29"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Scripts["test"] != "jest" || len(p.Scripts) != 1 || p.Workspaces[0] != "packages/*" || !p.Deps["jest"] {
		t.Errorf("parsed %+v", p)
	}
	if _, err := parsePackageJSON([]byte(`{"scripts": `)); err == nil {
		t.Error("truncated JSON parsed")
	}
}
