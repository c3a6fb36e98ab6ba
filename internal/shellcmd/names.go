package shellcmd

import (
	"path"
	"strings"
)

// ClassifyName gives the kind a script, target, session or env name stands
// for: "test:unit" is a test, "lint:fix" is not a gate, "typecheck" is a
// type check.
func ClassifyName(name string) Kind {
	n := strings.ToLower(name)
	if n == "" {
		return 0
	}
	words := nameWords(n)
	has := func(ws ...string) bool {
		for _, w := range words {
			for _, x := range ws {
				if w == x {
					return true
				}
			}
		}
		return false
	}
	switch {
	case has("fix", "write", "format") && !has("check", "verify", "ci") && !has("test"):
		return 0 // rewrites files: never a gate
	case has("update", "regenerate", "regen", "bless", "accept") && !has("check", "verify"):
		return 0 // rewrites snapshots or expectations: never a gate
	case has("setup", "bootstrap", "prepare", "teardown", "migrate", "seed") && has("test", "tests", "spec", "specs", "db", "database"):
		return Install // test.setup, test:prepare: makes the suite's databases, runs nothing
	case has("watch", "dev", "serve", "start"):
		return Watch
	case has("deploy", "release", "publish", "upload", "docker", "pages"):
		return Deploy
	case has("bench", "benchmark", "benchmarks", "perf"):
		return Bench
	case has("combine", "report", "reports", "merge", "upload", "badge", "badges", "summary") && !has("test", "tests", "spec", "specs", "unit"):
		// coverage:combine, merge-reports: they collect the results of
		// earlier runs and test nothing themselves.
		return Report
	case has("e2e", "playwright", "cypress", "integration", "acceptance", "browser", "smoke"):
		return Test | E2E
	case has("coverage", "cov", "cover"):
		return Test | Coverage
	case has("typecheck", "types", "typing", "tsc", "mypy", "pyright", "dialyzer", "type", "typings", "phpstan", "psalm", "sorbet", "steep"):
		if has("lint") && !has("type", "types", "typecheck") {
			return Lint
		}
		return Type
	case has("fmt", "prettier") || (has("format") && has("check", "verify", "ci")):
		return Format
	case has("lint", "linter", "eslint", "clippy", "vet", "rubocop", "ruff", "flake8", "pylint", "credo", "style", "stylelint", "biome", "golangci", "staticcheck", "checkstyle", "spotless", "detekt", "ktlint", "standard", "phpcs", "precommit", "pre", "static", "analyse", "analysis", "sast"):
		if has("pre") && !has("commit") {
			return 0
		}
		return Lint
	case has("test", "tests", "spec", "specs", "unit", "jest", "vitest", "mocha", "ava", "pytest", "tap", "phpunit", "rspec", "unittest", "unittests", "ctest", "nextest", "karma", "pest", "minitest", "runtest", "runtests", "selftest", "selftests", "functest", "functests", "testsuite", "check_tests", "cucumber", "behave", "behat", "features", "feature"):
		return Test
	case has("build", "compile", "bundle", "assemble", "dist", "package"):
		return Build
	case has("install", "bootstrap", "setup", "prepare", "deps", "postinstall", "restore", "sync"):
		return Install
	case has("clean", "docs", "doc", "changelog", "version"):
		return 0
	}
	return 0
}

// IsCompositeName reports script names ("ci", "check", "verify") that say
// nothing of what they run: they are classified by their body only.
func IsCompositeName(name string) bool {
	switch strings.ToLower(name) {
	case "ci", "check", "checks", "verify", "validate", "all", "default", "precommit", "pre-commit", "prepush", "pre-push", "qa", "review", "test:all", "test-all", "ci:test", "test:ci":
		return true
	}
	return false
}

// nameKindOfPath classifies a script by its file name: scripts/test.sh is a
// test, ./ci/lint.sh lints.
func nameKindOfPath(p string) Kind {
	b := path.Base(p)
	b = strings.TrimSuffix(b, path.Ext(b))
	if b == "ci" || b == "cibuild" || b == "check" {
		return Test
	}
	return ClassifyName(b)
}

// repoScriptNames are names of scripts a repository keeps in scripts/ or
// ci/ that clash with builtins or tools.
var repoScriptNames = map[string]bool{
	"test": true, "tests": true, "install": true, "coverage": true, "check": true, "build": true, "lint": true,
	"ci": true, "setup": true, "bootstrap": true, "format": true, "fmt": true, "typecheck": true, "run": true,
	"run-tests": true, "runtests": true, "run_tests": true, "cibuild": true, "release": true, "publish": true,
	"deploy": true, "sync": true, "clean": true, "docs": true, "e2e": true, "unit": true, "type": true, "verify": true,
}
