package heldout

import (
	"path"
	"slices"
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// Kind is what a repository path is, for the held-out check.
type Kind string

// The kinds. Only Source (and the product part of Mixed and Inline files)
// keeps the iteration's version in the held-out tree; every other kind is
// exactly the baseline's there.
const (
	// Source is product source: code, resources, dependency manifests.
	Source Kind = "source"
	// Inline is product source that may hold tests inside it (Rust
	// #[cfg(test)] items and doc tests, Python and Elixir doctests): the
	// iteration's code with the baseline's test blocks.
	Inline Kind = "inline-tests"
	// Mixed is a file where only some sections configure the runner
	// (package.json scripts, pyproject's tool tables, Cargo.toml's test
	// keys, the criterion's make targets, CMake's test directives): the
	// iteration's file with the baseline's runner sections.
	Mixed Kind = "mixed"
	// Test is a test file or a file in a test directory.
	Test Kind = "test"
	// Fixture is test data: fixtures, testdata, snapshots, golden files.
	Fixture Kind = "fixture"
	// Config is test or runner configuration (pytest.ini, jest.config.js,
	// .cargo/config.toml, pom.xml, tsconfig.json, ...).
	Config Kind = "config"
	// Criterion is a file the criterion itself runs or reads (a script, a
	// Makefile without targets to restore one by one).
	Criterion Kind = "criterion"
	// CI is a CI pipeline definition.
	CI Kind = "ci"
	// Dotfile is a file or directory whose name starts with a dot (.npmrc,
	// .env, .config/...).
	Dotfile Kind = "dotfile"
	// Docs is documentation (it may hold doctests: README included by
	// rustdoc, pytest --doctest-glob).
	Docs Kind = "docs"
	// RootNew is a file new at the repository root.
	RootNew Kind = "new-at-root"
	// Shadow is a file named like a tool or a standard module the
	// criterion runs (a unittest.py at the root, a jest.js, a
	// sitecustomize.py).
	Shadow Kind = "shadow"
	// Dependency is third-party code kept in the repository (vendor/,
	// node_modules/, third_party/).
	Dependency Kind = "dependency"
)

// Restored reports whether the held-out tree takes this kind whole from
// the baseline.
func (k Kind) Restored() bool {
	switch k {
	case Source, Inline, Mixed:
		return false
	}
	return true
}

// Class is the classification of one path.
type Class struct {
	Kind Kind
	// Ecosystem is the language family whose rule decided ("go", "python",
	// "js", "rust", "java", "ruby", "php", "elixir", "dotnet", "c", or ""
	// for the rules every repository shares).
	Ecosystem string
	// Reason says why, in words for the report.
	Reason string
}

// CriterionDeps is what the shell-command model says the criterion runs and
// depends on. It is plain input: this package does not parse commands.
type CriterionDeps struct {
	// Command is the criterion as the user gave it.
	Command string
	// Runner is the test runner or tool it ends up running ("go", "pytest",
	// "unittest", "node", "jest", "vitest", "cargo", "mvn", "gradle",
	// "rspec", "phpunit", "make", "npm", ...).
	Runner string
	// Files are repository paths the criterion depends on: scripts it runs,
	// the Makefile or package.json whose targets it names, config files it
	// passes.
	Files []string
	// Targets are the make/just/task targets or package.json scripts it
	// runs (empty: the default target, or "test").
	Targets []string
}

// Context is what Classify knows besides the path: the criterion and the
// two trees' path lists.
type Context struct {
	deps      CriterionDeps
	files     map[string]bool
	baseline  map[string]bool
	all       map[string]bool
	rootExts  map[string]bool
	toolNames map[string]bool
}

// NewContext builds the classification context from the criterion's
// dependencies and the paths of the baseline and the iteration trees.
func NewContext(deps CriterionDeps, baseline, iteration []string) *Context {
	c := &Context{
		deps: deps, files: map[string]bool{}, baseline: map[string]bool{},
		all: map[string]bool{}, rootExts: map[string]bool{}, toolNames: map[string]bool{},
	}
	for _, f := range deps.Files {
		c.files[path.Clean(strings.TrimPrefix(f, "./"))] = true
	}
	for _, p := range baseline {
		c.baseline[p] = true
		c.all[p] = true
		if !strings.Contains(p, "/") && codeExt(p) {
			c.rootExts[path.Ext(p)] = true
		}
	}
	for _, p := range iteration {
		c.all[p] = true
	}
	for _, n := range toolNamesOf(deps) {
		c.toolNames[n] = true
	}
	return c
}

// lockFiles pin the product's dependencies: they are product, wherever
// they are and even when new (a check may write one).
var lockFiles = map[string]bool{
	"Cargo.lock": true, "go.sum": true, "package-lock.json": true, "npm-shrinkwrap.json": true, "yarn.lock": true,
	"pnpm-lock.yaml": true, "bun.lockb": true, "bun.lock": true, "poetry.lock": true, "uv.lock": true, "Pipfile.lock": true,
	"pdm.lock": true, "composer.lock": true, "Gemfile.lock": true, "mix.lock": true, "packages.lock.json": true,
	"gradle.lockfile": true, "Package.resolved": true,
}

// codeExt reports extensions of program code that a root package holds.
func codeExt(p string) bool {
	switch path.Ext(p) {
	case ".go", ".py", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".rs", ".java", ".kt", ".rb", ".php",
		".ex", ".exs", ".cs", ".c", ".h", ".cc", ".cpp", ".hpp":
		return true
	}
	return false
}

// commonToolNames are runners and loaders whose name, given to a file, can
// take their place: a module found first on the import path, a script found
// first on PATH, a file preloaded by the interpreter.
var commonToolNames = []string{
	"pytest", "py.test", "_pytest", "unittest", "doctest", "nose", "nose2", "sitecustomize", "usercustomize",
	"jest", "vitest", "mocha", "ava", "tap", "node", "npm", "npx", "yarn", "pnpm", "bun", "deno",
	"rspec", "minitest", "rake", "bundle", "phpunit", "pest", "go", "cargo", "rustc", "make", "just",
	"mvn", "gradle", "java", "javac", "python", "python3", "ruby", "php", "sh", "bash", "mix", "dotnet", "ctest",
}

func toolNamesOf(deps CriterionDeps) []string {
	out := slices.Clone(commonToolNames)
	if deps.Runner != "" {
		out = append(out, path.Base(deps.Runner))
	}
	for _, w := range strings.FieldsFunc(deps.Command, func(r rune) bool {
		return r == ' ' || r == '\t' || r == ';' || r == '&' || r == '|' || r == '(' || r == ')' || r == '\'' || r == '"'
	}) {
		if strings.ContainsAny(w, "=/$") || strings.HasPrefix(w, "-") || w == "" {
			continue
		}
		out = append(out, w)
	}
	return out
}

// Classify returns the class of a repository path (slash-separated,
// relative to the root). It is a pure function of the path and the
// context; a nil context means no criterion and no tree.
func Classify(p string, c *Context) Class {
	if c == nil {
		c = NewContext(CriterionDeps{}, nil, nil)
	}
	p = path.Clean(strings.TrimPrefix(p, "./"))
	base := path.Base(p)
	segs := strings.Split(p, "/")
	dirs := segs[:len(segs)-1]

	if p == "vendor/modules.txt" {
		return Class{Kind: Source, Ecosystem: "go", Reason: "the list of vendored modules (goes with go.mod)"}
	}
	if hasAny(dirs, "vendor", "node_modules", "third_party", "bower_components", "jspm_packages") {
		return Class{Kind: Dependency, Reason: "third-party code kept in the repository"}
	}
	if isCI(p) {
		return Class{Kind: CI, Reason: "CI pipeline definition"}
	}
	// A file the criterion names: restored section by section when the
	// format allows, whole otherwise.
	if c.files[p] {
		if mixedFormat(base) != "" {
			return Class{Kind: Mixed, Reason: "the criterion runs its targets or scripts"}
		}
		// A script or configuration the criterion runs is its own; a
		// program file it runs (`python main.py --self-test`) is still
		// the product, judged by the rules below.
		if isScriptLike(p, base, dirs) {
			return Class{Kind: Criterion, Reason: "the criterion runs or reads this file"}
		}
	}
	if lockFiles[base] {
		return Class{Kind: Source, Ecosystem: ecosystemOf(p), Reason: "dependency lock file (the product's dependencies)"}
	}
	if cl, ok := classifyShadow(p, base, dirs, c); ok {
		return cl
	}
	for _, d := range dirs {
		if strings.HasPrefix(d, ".") && d != "." {
			return Class{Kind: Dotfile, Reason: "inside the hidden directory " + d + "/"}
		}
	}
	if strings.HasPrefix(base, ".") {
		if cl, ok := configName(base); ok {
			return cl
		}
		return Class{Kind: Dotfile, Reason: "a dotfile (tools read these unasked)"}
	}
	if cl, ok := configName(base); ok {
		return cl
	}
	if isSnapshot(p, base, dirs) {
		return Class{Kind: Fixture, Reason: "snapshot or golden file"}
	}
	if hasAny(dirs, "testdata", "fixtures", "fixture", "__fixtures__", "test-fixtures", "__mocks__", "mocks", "test_data", "test-data") {
		return Class{Kind: Fixture, Reason: "test data directory"}
	}
	if cl, ok := classifyTest(p, base, dirs); ok {
		return cl
	}
	if isDocs(p, base, dirs) {
		return Class{Kind: Docs, Reason: "documentation (may hold doctests)"}
	}
	if len(dirs) == 0 && !c.baseline[p] && len(c.baseline) > 0 {
		// A new file at the root: kept only when it is code of a language
		// whose product files already sit at the root (a Go package at the
		// root, a flat Python project); the names that could take a tool's
		// place were refused above.
		if !(codeExt(p) && c.rootExts[path.Ext(p)]) {
			return Class{Kind: RootNew, Reason: "a new file at the repository root"}
		}
	}
	if f := mixedFormat(base); f != "" && (f != "make" || c.deps.Runner == "make") {
		return Class{Kind: Mixed, Ecosystem: ecosystemOf(p), Reason: "manifest with runner sections"}
	}
	switch path.Ext(base) {
	case ".rs":
		return Class{Kind: Inline, Ecosystem: "rust", Reason: "Rust source (its #[cfg(test)] items and doc tests are tests)"}
	case ".py":
		return Class{Kind: Inline, Ecosystem: "python", Reason: "Python source (its doctests are tests)"}
	case ".ex":
		return Class{Kind: Inline, Ecosystem: "elixir", Reason: "Elixir source (its doctests are tests)"}
	}
	return Class{Kind: Source, Ecosystem: ecosystemOf(p), Reason: "product source"}
}

// isScriptLike reports what the criterion owns among the files it names:
// scripts, data and configuration, and anything in a scripts/ci/bin/tools
// directory; a program file of the product elsewhere is not.
func isScriptLike(p, base string, dirs []string) bool {
	if hasAny(dirs, "scripts", "script", "ci", ".ci", "bin", "tools", "hack", "build-support") {
		return true
	}
	return !codeExt(base)
}

func hasAny(dirs []string, names ...string) bool {
	for _, d := range dirs {
		if slices.Contains(names, d) {
			return true
		}
	}
	return false
}

func isCI(p string) bool {
	base := path.Base(p)
	switch {
	case strings.HasPrefix(p, ".github/workflows/"), strings.HasPrefix(p, ".github/actions/"),
		base == ".gitlab-ci.yml", strings.HasPrefix(p, ".gitlab/"), strings.HasPrefix(p, ".circleci/"),
		base == "azure-pipelines.yml", base == ".travis.yml", base == "bitbucket-pipelines.yml",
		base == "Jenkinsfile", strings.HasPrefix(p, ".buildkite/"), strings.HasPrefix(p, ".woodpecker"),
		base == ".drone.yml", base == "cloudbuild.yaml", base == "appveyor.yml", base == ".cirrus.yml":
		return true
	}
	return false
}

// classifyShadow finds files named like a tool or a standard module the
// criterion runs, where the name can take its place.
func classifyShadow(p, base string, dirs []string, c *Context) (Class, bool) {
	if c.baseline[p] {
		// A file that was there at the baseline is the project's own,
		// whatever its name.
		return Class{}, false
	}
	ext := path.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	switch ext {
	case ".pth":
		return Class{Kind: Shadow, Ecosystem: "python", Reason: "a .pth file runs code when Python starts"}, true
	case ".py":
		// A top-level module (not inside a package) named like the
		// standard library or a runner is imported in its place.
		if !c.inPythonPackage(dirs) && (pythonStdlib[stem] || c.toolNames[stem] || strings.HasPrefix(stem, "pytest_")) {
			return Class{Kind: Shadow, Ecosystem: "python", Reason: "named like the module " + stem + ": imported in its place"}, true
		}
	case ".js", ".mjs", ".cjs", ".ts", ".rb", ".php", ".sh", "":
		if c.toolNames[stem] && (len(dirs) == 0 || hasAny(dirs, "bin", "node_modules", "scripts", "lib")) {
			return Class{Kind: Shadow, Reason: "named like the tool " + stem + " the criterion runs"}, true
		}
		if ext == ".rb" && (stem == "minitest" || stem == "rspec" || stem == "test_helper" || stem == "spec_helper") {
			return Class{Kind: Shadow, Ecosystem: "ruby", Reason: "named like the library " + stem + ": required in its place"}, true
		}
	}
	// A Ruby file under lib/rspec/ or lib/minitest/ replaces the runner's
	// own files on the load path.
	if ext == ".rb" && len(dirs) >= 2 && dirs[0] == "lib" && (dirs[1] == "rspec" || dirs[1] == "minitest" || dirs[1] == "test") {
		return Class{Kind: Shadow, Ecosystem: "ruby", Reason: "placed where the test library's own files are loaded from"}, true
	}
	return Class{}, false
}

// inPythonPackage reports whether a directory is a Python package (has an
// __init__.py in either tree): its modules are imported by their dotted
// name and shadow nothing.
func (c *Context) inPythonPackage(dirs []string) bool {
	if len(dirs) == 0 {
		return false
	}
	return c.all[strings.Join(dirs, "/")+"/__init__.py"]
}

// configName classifies test and runner configuration by file name.
func configName(base string) (Class, bool) {
	lower := strings.ToLower(base)
	cfg := func(eco, why string) (Class, bool) { return Class{Kind: Config, Ecosystem: eco, Reason: why}, true }
	switch lower {
	// Python
	case "pytest.ini", "tox.ini", "noxfile.py", ".coveragerc", "conftest.py", "requirements-dev.txt",
		"requirements-test.txt", "requirements_test.txt", "requirements_dev.txt", "test-requirements.txt",
		"dev-requirements.txt", ".pdbrc", "mypy.ini", ".mypy.ini", "ruff.toml", ".ruff.toml", ".flake8", ".pylintrc",
		"pylintrc", "pyrightconfig.json":
		return cfg("python", "Python test or checker configuration")
	// JavaScript / TypeScript
	case ".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", ".nvmrc", ".node-version", "babel.config.js",
		"babel.config.json", "babel.config.cjs", "babel.config.mjs", ".babelrc", ".babelrc.js", ".swcrc",
		"tsconfig.json", "jsconfig.json", ".eslintrc", ".eslintrc.js", ".eslintrc.json", ".eslintrc.cjs",
		".eslintrc.yml", ".prettierrc", "biome.json", "biome.jsonc", "deno.json", "deno.jsonc", "bunfig.toml":
		return cfg("js", "JavaScript runner or checker configuration")
	// Rust
	case "rust-toolchain", "rust-toolchain.toml", "build.rs", "clippy.toml", ".clippy.toml", "rustfmt.toml",
		".rustfmt.toml", "nextest.toml", "deny.toml":
		return cfg("rust", "Rust toolchain, build script or checker configuration")
	// Go
	case "go.work", "go.work.sum", ".golangci.yml", ".golangci.yaml", ".golangci.toml", "staticcheck.conf":
		return cfg("go", "Go workspace or checker configuration")
	// Java / Kotlin
	case "pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts", "gradle.properties",
		"mvnw", "mvnw.cmd", "gradlew", "gradlew.bat", "build.xml", "junit-platform.properties":
		return cfg("java", "Java build and test runner configuration")
	// Ruby
	case ".rspec", ".rspec-local", "rakefile", "gemfile", ".simplecov", ".rubocop.yml", "guardfile":
		return cfg("ruby", "Ruby runner configuration (Rakefile and Gemfile are Ruby code run with the tests)")
	// PHP
	case "phpunit.xml", "phpunit.xml.dist", "phpunit.dist.xml", ".phpunit.result.cache", "phpstan.neon",
		"phpstan.neon.dist", "psalm.xml", "pest.php", "infection.json", "infection.json5":
		return cfg("php", "PHP test runner configuration")
	// Elixir
	case "mix.exs", ".formatter.exs", ".credo.exs", "coveralls.json":
		return cfg("elixir", "Elixir project and runner configuration (mix.exs is code run with the tests)")
	// .NET
	case "directory.build.props", "directory.build.targets", "directory.packages.props", "global.json",
		"nuget.config", "coverlet.runsettings":
		return cfg("dotnet", ".NET build or test configuration")
	// C / C++
	case "ctesttestfile.cmake", "ctestconfig.cmake", "ctestcustom.cmake":
		return cfg("c", "CTest configuration")
	// Shared
	case "codecov.yml", ".codecov.yml", "sonar-project.properties", "lefthook.yml", ".pre-commit-config.yaml",
		"taskfile.yml", "taskfile.yaml", "justfile", ".justfile", "turbo.json", "nx.json", "lerna.json":
		return cfg("", "task runner or CI-side configuration")
	}
	switch {
	case strings.HasSuffix(lower, ".runsettings"), strings.HasSuffix(lower, ".testsettings"):
		return cfg("dotnet", ".NET test settings")
	case matchPrefixExt(lower, []string{"jest.config", "jest.setup", "vitest.config", "vitest.workspace", "vitest.setup",
		"vite.config", "karma.conf", "ava.config", "playwright.config", "cypress.config", "setuptests", "test-setup",
		"wdio.conf", "webpack.test", "nightwatch.conf"}):
		return cfg("js", "JavaScript test runner configuration")
	case strings.HasPrefix(lower, ".mocharc"), strings.HasPrefix(lower, ".nycrc"), strings.HasPrefix(lower, ".c8rc"),
		strings.HasPrefix(lower, ".babelrc"), strings.HasPrefix(lower, ".eslintrc"), strings.HasPrefix(lower, ".prettierrc"),
		strings.HasPrefix(lower, "eslint.config."), strings.HasPrefix(lower, "tsconfig.") && strings.HasSuffix(lower, ".json"):
		return cfg("js", "JavaScript runner or checker configuration")
	}
	return Class{}, false
}

func matchPrefixExt(lower string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(lower, p+".") {
			return true
		}
	}
	return false
}

func isSnapshot(p, base string, dirs []string) bool {
	switch {
	case hasAny(dirs, "__snapshots__", "__snapshot__", "snapshots", "golden", "goldens", "approved", "cassettes"),
		strings.HasSuffix(base, ".snap"), strings.HasSuffix(base, ".snap.new"), strings.HasSuffix(base, ".pending-snap"),
		strings.HasSuffix(base, ".golden"), strings.Contains(base, ".approved."), strings.Contains(base, ".received."),
		strings.HasSuffix(base, ".ambr"):
		return true
	}
	return false
}

// classifyTest recognises test files and test directories per ecosystem.
func classifyTest(p, base string, dirs []string) (Class, bool) {
	ext := strings.ToLower(path.Ext(base))
	stem := strings.TrimSuffix(base, path.Ext(base))
	test := func(eco, why string) (Class, bool) { return Class{Kind: Test, Ecosystem: eco, Reason: why}, true }
	switch ext {
	case ".go":
		if strings.HasSuffix(base, "_test.go") {
			return test("go", "Go test file")
		}
	case ".py", ".pyi":
		if strings.HasPrefix(base, "test_") || strings.HasSuffix(stem, "_test") || strings.HasSuffix(stem, "_tests") ||
			strings.HasPrefix(stem, "runtest") || strings.HasPrefix(stem, "run_test") || base == "tests.py" || base == "test.py" {
			return test("python", "Python test module")
		}
	case ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".vue", ".svelte":
		if strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") || strings.Contains(base, ".e2e.") ||
			strings.Contains(base, ".e2e-spec.") || strings.HasPrefix(base, "test-") || strings.HasPrefix(base, "test.") ||
			strings.HasSuffix(stem, "_test") || strings.HasSuffix(stem, "-test") || stem == "test" {
			return test("js", "JavaScript/TypeScript test file")
		}
		if hasAny(dirs, "__tests__", "cypress", "playwright") {
			return test("js", "in a JavaScript test directory")
		}
	case ".rs":
		if hasAny(dirs, "tests", "benches", "examples") {
			return test("rust", "Rust integration test, bench or example (built by cargo test)")
		}
		if base == "tests.rs" || base == "test.rs" || strings.HasSuffix(stem, "_tests") || strings.HasSuffix(stem, "_test") {
			return test("rust", "Rust test module file")
		}
	case ".java", ".kt", ".kts", ".groovy", ".scala":
		if strings.Contains(p, "src/test/") || strings.Contains(p, "src/androidTest/") || strings.Contains(p, "src/integrationTest/") ||
			strings.Contains(p, "src/testFixtures/") || strings.Contains(p, "src/it/") || strings.Contains(p, "src/jmh/") {
			return test("java", "under a Maven/Gradle test source set")
		}
		for _, suf := range []string{"Test", "Tests", "IT", "Spec", "TestCase"} {
			if strings.HasSuffix(stem, suf) && !strings.Contains(p, "src/main/") {
				return test("java", "JUnit test class")
			}
		}
	case ".rb":
		if strings.HasSuffix(stem, "_spec") || strings.HasSuffix(stem, "_test") || strings.HasPrefix(stem, "test_") {
			return test("ruby", "RSpec or Minitest file")
		}
		if base == "spec_helper.rb" || base == "rails_helper.rb" || base == "test_helper.rb" {
			return test("ruby", "test helper loaded before every test")
		}
	case ".php":
		if strings.HasSuffix(stem, "Test") || strings.HasSuffix(stem, "TestCase") || strings.HasSuffix(stem, ".test") {
			return test("php", "PHPUnit test class")
		}
	case ".ex", ".exs":
		if strings.HasSuffix(stem, "_test") || base == "test_helper.exs" {
			return test("elixir", "ExUnit test file")
		}
		if path.Join(path.Join(dirs...), base) == "config/test.exs" {
			return Class{Kind: Config, Ecosystem: "elixir", Reason: "the test environment's configuration"}, true
		}
	case ".cs", ".fs", ".vb":
		if strings.HasSuffix(stem, "Tests") || strings.HasSuffix(stem, "Test") {
			return test("dotnet", ".NET test class")
		}
		for _, d := range dirs {
			if strings.HasSuffix(d, ".Tests") || strings.HasSuffix(d, ".Test") || strings.HasSuffix(d, ".UnitTests") ||
				strings.HasSuffix(d, ".IntegrationTests") || strings.HasSuffix(d, ".Specs") {
				return test("dotnet", "in a .NET test project")
			}
		}
	case ".csproj", ".fsproj", ".vbproj":
		if strings.Contains(stem, "Test") || strings.Contains(stem, "Spec") {
			return test("dotnet", ".NET test project file")
		}
	case ".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp":
		if strings.HasSuffix(stem, "_test") || strings.HasSuffix(stem, "_unittest") || strings.HasPrefix(stem, "test_") ||
			strings.HasSuffix(stem, "_tests") || strings.HasPrefix(stem, "test-") {
			return test("c", "C/C++ test source")
		}
	}
	// Test directories, for every language and for the data inside them.
	for _, d := range dirs {
		switch d {
		case "test", "tests", "spec", "specs", "__tests__", "e2e", "Tests", "integration_tests", "testing", "testutil",
			"testutils", "testhelpers", "testhelper", "testsupport", "testkit", "testenv", "unittests", "UnitTests",
			"functional_tests", "acceptance":
			return test(ecosystemOf(p), "in the test directory "+d+"/")
		}
		if strings.HasSuffix(d, ".Tests") || strings.HasSuffix(d, "_tests") || strings.HasSuffix(d, "-tests") {
			return test(ecosystemOf(p), "in the test directory "+d+"/")
		}
	}
	return Class{}, false
}

func isDocs(p, base string, dirs []string) bool {
	lower := strings.ToLower(base)
	switch path.Ext(lower) {
	case ".md", ".markdown", ".rst", ".adoc", ".asciidoc", ".org", ".rdoc":
		return true
	}
	if hasAny(dirs, "docs", "doc", "documentation") {
		return true
	}
	stem := strings.TrimSuffix(lower, path.Ext(lower))
	switch stem {
	case "readme", "changelog", "changes", "history", "news", "authors", "contributors", "license", "licence",
		"copying", "notice", "contributing", "code_of_conduct", "security":
		return len(dirs) == 0
	}
	return false
}

// mixedFormat names the section merge of a file that is partly runner
// configuration, "" for other files.
func mixedFormat(base string) string {
	switch base {
	case "package.json":
		return "package.json"
	case "composer.json":
		return "composer.json"
	case "pyproject.toml":
		return "pyproject.toml"
	case "setup.cfg":
		return "setup.cfg"
	case "Cargo.toml":
		return "Cargo.toml"
	case "Makefile", "makefile", "GNUmakefile":
		return "make"
	case "CMakeLists.txt":
		return "cmake"
	case "meson.build":
		return "meson"
	}
	return ""
}

func ecosystemOf(p string) string {
	switch strings.ToLower(path.Ext(p)) {
	case ".go":
		return "go"
	case ".py", ".pyi":
		return "python"
	case ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts":
		return "js"
	case ".rs":
		return "rust"
	case ".java", ".kt", ".kts", ".groovy", ".scala":
		return "java"
	case ".rb", ".rake":
		return "ruby"
	case ".php":
		return "php"
	case ".ex", ".exs":
		return "elixir"
	case ".cs", ".fs", ".vb", ".csproj", ".fsproj":
		return "dotnet"
	case ".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp":
		return "c"
	}
	switch path.Base(p) {
	case "package.json", "composer.json":
		if path.Base(p) == "composer.json" {
			return "php"
		}
		return "js"
	case "pyproject.toml", "setup.cfg":
		return "python"
	case "Cargo.toml":
		return "rust"
	case "CMakeLists.txt", "meson.build", "Makefile":
		return "c"
	}
	return ""
}

// testImportRes find test frameworks imported by a file that is not named
// like a test: helper packages (a Go testutil package, a Python helper
// module, a shared Jest setup) are tests too.
var testImportRes = map[string]*lazyre.Regexp{
	"go":     lazyre.New(`(?m)^\s*(?:import\s+)?(?:\w+\s+)?"(?:testing|github\.com/stretchr/testify[^"]*|gotest\.tools[^"]*|github\.com/onsi/(?:ginkgo|gomega)[^"]*)"`),
	"python": lazyre.New(`(?m)^\s*(?:import|from)\s+(?:unittest|pytest|_pytest|nose2?|hypothesis)\b`),
	"js":     lazyre.New(`(?:from\s+|require\(\s*|import\(\s*)['"](?:node:test|vitest|@jest/globals|mocha|chai|ava|tap|uvu|@testing-library/[^'"]+)['"]`),
	"ruby":   lazyre.New(`(?m)^\s*require\s*\(?\s*['"](?:rspec[^'"]*|minitest[^'"]*|test/unit)['"]`),
	"php":    lazyre.New(`PHPUnit\\Framework`),
	"java":   lazyre.New(`(?m)^\s*import\s+(?:static\s+)?(?:org\.junit|org\.testng|org\.assertj|org\.hamcrest|io\.kotest)\b`),
	"elixir": lazyre.New(`ExUnit\.`),
	"dotnet": lazyre.New(`(?m)^\s*using\s+(?:Xunit|NUnit|Microsoft\.VisualStudio\.TestTools)\b`),
	"c":      lazyre.New(`(?m)^\s*#\s*include\s*[<"](?:gtest|gmock|catch2?|doctest|CUnit|check\.h|cmocka|unity\.h|criterion)`),
}

// Refine looks inside a product file (either version; nil when absent):
// one that imports a test framework is test support, restored whole.
func Refine(p string, cl Class, base, iter []byte) Class {
	if cl.Kind != Source && cl.Kind != Inline {
		return cl
	}
	eco := ecosystemOf(p)
	re := testImportRes[eco]
	if re == nil {
		return cl
	}
	for _, b := range [][]byte{base, iter} {
		if b != nil && re.Match(b) {
			return Class{Kind: Test, Ecosystem: eco, Reason: "test support code: it imports a test framework"}
		}
	}
	return cl
}
