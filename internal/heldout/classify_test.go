package heldout

import "testing"

func TestClassify(t *testing.T) {
	t.Parallel()
	baseline := []string{
		"main.go", "calc.go", "go.mod", "calc.py", "README.md", "Makefile", "package.json", "src/app.js",
		"pkg/__init__.py", "pkg/core.py", "scripts/test.sh", "calendar.py", "pyproject.toml", "setup.cfg", "Cargo.toml",
		"composer.json", "CMakeLists.txt",
	}
	iteration := append([]string{"unittest.py", "helper.go", "notes.txt", "jest.js", "pkg/json.py", "sitecustomize.py", "go"}, baseline...)
	ctx := NewContext(CriterionDeps{Command: "make test", Runner: "make", Files: []string{"Makefile", "scripts/test.sh"}, Targets: []string{"test"}}, baseline, iteration)
	cases := []struct {
		path string
		want Kind
	}{
		// Go
		{"calc.go", Source},
		{"calc_test.go", Test},
		{"internal/x/x_test.go", Test},
		{"internal/x/testdata/in.txt", Fixture},
		{"internal/x/testdata/out.golden", Fixture},
		{"internal/testutil/skip.go", Test},
		{"go.mod", Source},
		{"go.work", Config},
		{"go.sum", Source},
		{"Cargo.lock", Source}, // new at the root, written by cargo test
		{"package-lock.json", Source},
		{"helper.go", Source}, // new at the root, but the root is a Go package
		{".golangci.yml", Config},
		// Python
		{"pkg/core.py", Inline},
		{"tests/test_core.py", Test},
		{"test_core.py", Test},
		{"pkg/core_test.py", Test},
		{"conftest.py", Config},
		{"tests/conftest.py", Config},
		{"pytest.ini", Config},
		{"tox.ini", Config},
		{"noxfile.py", Config},
		{"pyproject.toml", Mixed},
		{"setup.cfg", Mixed},
		{"unittest.py", Shadow},
		{"sitecustomize.py", Shadow},
		{"pkg/json.py", Inline}, // inside a package: imported as pkg.json
		{"calendar.py", Inline}, // the project's own module at the baseline
		{"requirements-dev.txt", Config},
		{"run_tests.py", Test},
		{"x.pth", Shadow},
		// JavaScript / TypeScript
		{"src/app.js", Source},
		{"src/app.test.js", Test},
		{"src/app.spec.ts", Test},
		{"src/__tests__/app.js", Test},
		{"src/__mocks__/fs.js", Fixture},
		{"src/__snapshots__/app.test.js.snap", Fixture},
		{"test/app.js", Test},
		{"package.json", Mixed},
		{".npmrc", Config},
		{"jest.config.js", Config},
		{"vitest.config.ts", Config},
		{"vite.config.mts", Config},
		{"tsconfig.json", Config},
		{"tsconfig.build.json", Config},
		{".mocharc.yml", Config},
		{"jest.js", Shadow},
		// Rust
		{"src/lib.rs", Inline},
		{"tests/it.rs", Test},
		{"benches/b.rs", Test},
		{"src/parser/tests.rs", Test},
		{"Cargo.toml", Mixed},
		{".cargo/config.toml", Dotfile},
		{"build.rs", Config},
		{"rust-toolchain.toml", Config},
		{"src/snapshots/x__y.snap", Fixture},
		// Java / Kotlin
		{"src/main/java/a/Calc.java", Source},
		{"src/test/java/a/CalcTest.java", Test},
		{"src/test/resources/data.json", Test},
		{"src/main/resources/messages.properties", Source},
		{"app/src/test/kotlin/CalcTest.kt", Test},
		{"pom.xml", Config},
		{"build.gradle.kts", Config},
		// Ruby
		{"lib/calc.rb", Source},
		{"spec/calc_spec.rb", Test},
		{"test/calc_test.rb", Test},
		{".rspec", Config},
		{"Rakefile", Config},
		{"Gemfile", Config},
		{"lib/rspec/expectations.rb", Shadow},
		// PHP
		{"src/Calc.php", Source},
		{"tests/CalcTest.php", Test},
		{"phpunit.xml.dist", Config},
		{"composer.json", Mixed},
		// Elixir
		{"lib/calc.ex", Inline},
		{"test/calc_test.exs", Test},
		{"test/test_helper.exs", Test},
		{"mix.exs", Config},
		{"config/test.exs", Config},
		// .NET
		{"src/Calc/Calc.cs", Source},
		{"tests/Calc.Tests/CalcTests.cs", Test},
		{"Calc.Tests/Helpers.cs", Test},
		{"Calc.Tests/Calc.Tests.csproj", Test},
		{"Directory.Build.props", Config},
		{"test.runsettings", Config},
		// C / C++
		{"src/calc.c", Source},
		{"src/calc_test.cc", Test},
		{"tests/main.c", Test},
		{"CMakeLists.txt", Mixed},
		{"tests/CMakeLists.txt", Test},
		// The criterion's own files, CI, dotfiles, docs, the root
		{"Makefile", Mixed},
		{"scripts/test.sh", Criterion},
		{".github/workflows/ci.yml", CI},
		{".gitlab-ci.yml", CI},
		{"Jenkinsfile", CI},
		{".env", Dotfile},
		{".vscode/settings.json", Dotfile},
		{"README.md", Docs},
		{"docs/guide.txt", Docs},
		{"notes.txt", RootNew},
		{"go", Shadow},
		{"vendor/github.com/stretchr/testify/assert/assertions.go", Dependency},
		{"node_modules/vitest/index.js", Dependency},
	}
	for _, tc := range cases {
		got := Classify(tc.path, ctx)
		if got.Kind != tc.want {
			t.Errorf("Classify(%q) = %s (%s), want %s", tc.path, got.Kind, got.Reason, tc.want)
		}
		if got.Reason == "" {
			t.Errorf("Classify(%q): no reason", tc.path)
		}
		if got.Kind.Restored() == (tc.want == Source || tc.want == Inline || tc.want == Mixed) {
			t.Errorf("Classify(%q).Restored() = %v", tc.path, got.Kind.Restored())
		}
	}
}

func TestClassifyProgramTheCriterionRuns(t *testing.T) {
	t.Parallel()
	ctx := NewContext(CriterionDeps{Command: "python3 main.py --self-test && sh ci/check.sh", Files: []string{"main.py", "ci/check.sh"}},
		[]string{"main.py", "ci/check.sh"}, []string{"main.py", "ci/check.sh"})
	if got := Classify("main.py", ctx); got.Kind != Inline {
		t.Errorf("the product program the criterion runs: %s, want it kept as product", got.Kind)
	}
	if got := Classify("ci/check.sh", ctx); got.Kind != Criterion {
		t.Errorf("the criterion's script: %s, want criterion", got.Kind)
	}
}

func TestClassifyMakefileWithoutMake(t *testing.T) {
	t.Parallel()
	ctx := NewContext(CriterionDeps{Command: "go test ./...", Runner: "go"}, []string{"Makefile"}, []string{"Makefile"})
	if got := Classify("Makefile", ctx); got.Kind != Source {
		t.Errorf("a Makefile the criterion does not run: %s, want source", got.Kind)
	}
}

func TestRefine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		path, body string
		want       Kind
	}{
		{"internal/helpers/skip.go", "package helpers\n\nimport \"testing\"\n\nfunc Skip(t *testing.T) { t.Skip() }\n", Test},
		{"internal/helpers/skip.go", "package helpers\n\nimport (\n\t\"fmt\"\n\t\"github.com/stretchr/testify/assert\"\n)\n", Test},
		{"calc.go", "package calc\n\nimport \"strings\"\n", Source},
		{"pkg/fixtures.py", "import pytest\n", Test},
		{"pkg/core.py", "import os\n", Inline},
		{"src/setup.js", "import { beforeEach } from 'vitest'\n", Test},
		{"src/app.js", "import assert from 'node:assert'\n", Source},
		{"lib/support.rb", "require 'minitest/autorun'\n", Test},
		{"src/Helper.java", "import org.junit.jupiter.api.Assertions;\n", Test},
	}
	for _, tc := range cases {
		cl := Refine(tc.path, Classify(tc.path, nil), nil, []byte(tc.body))
		if cl.Kind != tc.want {
			t.Errorf("Refine(%q) = %s, want %s", tc.path, cl.Kind, tc.want)
		}
	}
}
