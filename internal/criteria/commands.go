package criteria

import (
	"path"
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// scriptLookup gives the body of a named script of a task runner, so that
// `npm run ci` or `make check` is classified by what it runs.
type scriptLookup interface {
	// script returns the body of script name of runner ("npm", "make",
	// "just", "task", "composer", "deno", "hatch", "pdm", "tox", "nox",
	// "rake") as defined in dir (relative to the repository root).
	script(runner, dir, name string) (body string, ok bool)
}

// cmdInfo is what one simple command is.
type cmdInfo struct {
	kind kind
	// sig identifies the command for agreement between layers:
	// "go test", "npm test", "pytest", "make test".
	sig string
	// runner and script are set when the command runs a named script of a
	// task runner (runner "npm", script "test").
	runner, script string
	// inner is the signature of what a named script runs, when it runs
	// one command: `npm run typecheck` -> "tsc"; inners lists the
	// signatures of all the gates its body runs.
	inner  string
	inners []string
	// note explains a trap (watch mode, a script that always fails).
	note string
	// fix, when set, is a local equivalent that avoids the trap.
	fix string
}

const maxScriptDepth = 4

// wrappers are commands that run their arguments: sudo go test, timeout 10m
// npm test, xvfb-run -a npm test. The flags they take with a value are listed.
var wrappers = map[string]map[string]bool{
	"sudo": {"-u": true, "-g": true}, "env": {"-u": true, "-C": true}, "time": {}, "nice": {"-n": true},
	"timeout": {"-s": true, "-k": true, "--signal": true, "--kill-after": true}, "xvfb-run": {"-s": true, "-n": true, "--server-args": true, "-e": true},
	"stdbuf": {}, "command": {}, "exec": {}, "dbus-run-session": {}, "catchsegv": {}, "unbuffer": {}, "nohup": {},
	"retry": {}, "ionice": {"-c": true, "-n": true}, "taskset": {},
}

// stripWrappers removes leading env assignments and wrapper commands.
func stripWrappers(args []string) []string {
	for len(args) > 0 {
		a := args[0]
		if isAssignment(a) {
			args = args[1:]
			continue
		}
		flags, ok := wrappers[path.Base(a)]
		if !ok {
			return args
		}
		name := path.Base(a)
		args = args[1:]
		for len(args) > 0 {
			b := args[0]
			if isAssignment(b) && name == "env" {
				args = args[1:]
				continue
			}
			if strings.HasPrefix(b, "-") {
				args = args[1:]
				if flags[b] && len(args) > 0 {
					args = args[1:]
				}
				continue
			}
			break
		}
		if name == "timeout" && len(args) > 0 && timeoutDurationRe.MatchString(args[0]) {
			args = args[1:]
		}
		if name == "retry" && len(args) > 0 && args[0] == "--" {
			args = args[1:]
		}
	}
	return args
}

var assignmentRe = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*=`)

func isAssignment(s string) bool { return assignmentRe.MatchString(s) }

// positional returns the arguments that are not flags, after skipping flags
// that take values (listed in valued).
func positional(args []string, valued map[string]bool) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			out = append(out, args[i+1:]...)
			break
		}
		if strings.HasPrefix(a, "-") {
			if valued[a] && !strings.Contains(a, "=") {
				i++
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

func hasFlag(args []string, flags ...string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		for _, f := range flags {
			if a == f || strings.HasPrefix(a, f+"=") {
				return true
			}
		}
	}
	return false
}

func hasArgPrefix(args []string, prefixes ...string) bool {
	for _, a := range args {
		for _, p := range prefixes {
			if strings.HasPrefix(a, p) {
				return true
			}
		}
	}
	return false
}

// toolName normalises the program name: ./gradlew -> gradle, ./mvnw -> mvn,
// vendor/bin/phpunit -> phpunit, python3.12 -> python.
func toolName(a string) string {
	b := path.Base(a)
	switch {
	case b == "gradlew" || b == "gradlew.bat" || b == "gradle":
		return "gradle"
	case b == "mvnw" || b == "mvnw.cmd" || b == "mvn":
		return "mvn"
	case b == "py.test":
		return "pytest"
	case strings.HasPrefix(b, "python") || b == "py":
		return "python"
	case b == "pip3" || strings.HasPrefix(b, "pip3."):
		return "pip"
	case b == "docker-compose":
		return "docker-compose"
	case b == "bunx":
		return "bunx"
	}
	return b
}

// classifyName gives the kind a script, target, session or env name stands
// for: "test:unit" is a test, "lint:fix" is not a gate, "typecheck" is a
// type check.
func classifyName(name string) kind {
	n := strings.ToLower(name)
	if n == "" {
		return 0
	}
	words := strings.FieldsFunc(n, func(r rune) bool { return r == ':' || r == '-' || r == '_' || r == '.' || r == '/' || r == ' ' })
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
	case has("watch", "dev", "serve", "start"):
		return kWatch
	case has("deploy", "release", "publish", "upload", "docker", "pages"):
		return kDeploy
	case has("bench", "benchmark", "benchmarks", "perf"):
		return kBench
	case has("e2e", "playwright", "cypress", "integration", "acceptance", "browser", "smoke"):
		return kTest | kE2E
	case has("coverage", "cov", "cover"):
		return kTest | kCoverage
	case has("typecheck", "types", "typing", "tsc", "mypy", "pyright", "typecheck", "dialyzer", "type", "typings", "phpstan", "psalm", "sorbet", "steep"):
		if has("lint") && !has("type", "types", "typecheck") {
			return kLint
		}
		return kType
	case has("fmt", "prettier") || (has("format") && has("check", "verify", "ci")):
		return kFormat
	case has("lint", "linter", "eslint", "clippy", "vet", "rubocop", "ruff", "flake8", "pylint", "credo", "style", "stylelint", "biome", "golangci", "staticcheck", "checkstyle", "spotless", "detekt", "ktlint", "standard", "phpcs", "precommit", "pre"):
		if has("pre") && !has("commit") {
			return 0
		}
		return kLint
	case has("test", "tests", "spec", "specs", "unit", "jest", "vitest", "mocha", "ava", "pytest", "tap", "phpunit", "rspec", "unittest", "unittests", "ctest", "nextest", "karma", "pest", "minitest", "runtest", "runtests", "selftest", "selftests", "functest", "functests", "testsuite", "check_tests"):
		return kTest
	case has("build", "compile", "bundle", "assemble", "dist", "package"):
		return kBuild
	case has("install", "bootstrap", "setup", "prepare", "deps", "postinstall", "restore", "sync"):
		return kInstall
	case has("clean", "docs", "doc", "changelog", "version"):
		return 0
	}
	return 0
}

// composite script names ("ci", "check", "verify") are classified by their
// body only.
func isCompositeName(name string) bool {
	switch strings.ToLower(name) {
	case "ci", "check", "checks", "verify", "validate", "all", "default", "precommit", "pre-commit", "prepush", "pre-push", "qa", "review", "test:all", "test-all", "ci:test", "test:ci":
		return true
	}
	return false
}

// classifier classifies commands, resolving named scripts through lookup.
type classifier struct {
	lookup scriptLookup
}

// classify returns what the command args (already split into words; a
// non-literal word is "") does when run in dir.
func (c classifier) classify(args []string, dir string) cmdInfo {
	return c.classifyDepth(args, dir, 0)
}

func (c classifier) classifyDepth(raw []string, dir string, depth int) cmdInfo {
	args := stripWrappers(raw)
	if len(args) == 0 {
		return cmdInfo{kind: kCIOnly}
	}
	tool := toolName(args[0])
	rest := args[1:]
	if strings.Contains(args[0], "/") && (repoScriptNames[strings.TrimSuffix(path.Base(args[0]), path.Ext(args[0]))] || strings.HasSuffix(args[0], ".sh")) {
		// scripts/test, ./ci/install.sh: the repository's own scripts,
		// not the shell's test builtin or a tool of the same name.
		return c.classifyFile(args[0], dir, depth)
	}
	if inner, ok := unwrapRunner(tool, rest); ok {
		if inner.script != "" {
			if depth >= maxScriptDepth {
				return cmdInfo{}
			}
			return c.classifyScript(inner.script, dir, depth+1)
		}
		return c.classifyDepth(inner.args, dir, depth+1)
	}
	switch tool {
	case "":
		return cmdInfo{}
	case "go":
		return classifyGo(rest)
	case "gotestsum":
		k := kTest
		if hasArgPrefix(rest, "-cover", "-coverprofile") {
			k |= kCoverage
		}
		return cmdInfo{kind: k, sig: "go test"}
	case "golangci-lint", "staticcheck", "revive", "golint", "errcheck", "ineffassign", "shellcheck", "hadolint", "actionlint", "markdownlint", "markdownlint-cli2", "yamllint", "stylelint", "htmlhint", "swiftlint", "ktlint", "detekt", "cpplint", "clang-tidy", "cppcheck", "luacheck", "selene", "tflint", "buf", "eslint", "oxlint", "xo", "standard", "tslint", "flake8", "pylint", "pycodestyle", "pydocstyle", "bandit", "vulture", "rubocop", "standardrb", "phpcs", "phpmd", "credo", "codespell", "typos", "commitlint", "cspell", "semgrep", "brakeman", "erb_lint", "erblint", "haml-lint", "slim-lint", "reek", "bundler-audit":
		if tool == "buf" && !hasAny(rest, "lint", "breaking") {
			return cmdInfo{kind: kBuild, sig: "buf"}
		}
		if hasFlag(rest, "--fix") {
			return cmdInfo{}
		}
		return cmdInfo{kind: kLint, sig: tool}
	case "gofmt", "goimports", "gofumpt":
		if hasFlag(rest, "-w") {
			return cmdInfo{}
		}
		return cmdInfo{kind: kFormat, sig: tool}
	case "clang-format", "rustfmt", "black", "isort", "yapf", "autopep8", "ktfmt", "shfmt", "stylua", "dprint", "taplo", "buildifier":
		if hasFlag(rest, "--check", "-check", "--dry-run", "-d", "--diff", "-l", "--verify", "--list-different", "-n") || hasAny(rest, "check", "--check") {
			return cmdInfo{kind: kFormat, sig: tool}
		}
		return cmdInfo{}
	case "prettier", "biome", "@biomejs/biome":
		if tool == "prettier" {
			if hasFlag(rest, "--check", "-c", "--list-different", "-l") {
				return cmdInfo{kind: kFormat, sig: "prettier"}
			}
			return cmdInfo{}
		}
		if hasFlag(rest, "--write", "--apply", "--fix") {
			return cmdInfo{}
		}
		return cmdInfo{kind: kLint | kFormat, sig: "biome"}
	case "cargo":
		return classifyCargo(rest)
	case "npm", "pnpm", "yarn", "bun":
		return c.classifyNode(tool, rest, dir, depth)
	case "npx", "bunx":
		return c.classifyDepth(dropRunnerFlags(rest, map[string]bool{"-p": true, "--package": true}), dir, depth+1)
	case "deno":
		return c.classifyDeno(rest, dir, depth)
	case "node":
		if hasFlag(rest, "--test") {
			return cmdInfo{kind: kTest, sig: "node --test"}
		}
		if p := positional(rest, nil); len(p) > 0 {
			return withSig(nameKindOfPath(p[0]), "node "+p[0])
		}
		return cmdInfo{}
	case "jest", "vitest", "mocha", "ava", "tap", "tape", "uvu", "c8", "nyc", "karma", "ng", "react-scripts", "craco", "playwright", "cypress", "wdio", "testcafe", "jasmine", "lab", "qunit", "web-test-runner", "wtr", "vue-cli-service":
		return classifyJSTest(tool, rest)
	case "tsc", "vue-tsc", "svelte-check", "tsgo":
		if hasFlag(rest, "--watch", "-w") {
			return cmdInfo{kind: kType | kWatch, sig: "tsc", note: "`tsc --watch` never exits"}
		}
		if tool == "tsc" && !hasFlag(rest, "--noEmit", "--noemit") && !hasFlag(rest, "-b", "--build") {
			return cmdInfo{kind: kType | kBuild, sig: "tsc"}
		}
		return cmdInfo{kind: kType, sig: "tsc"}
	case "turbo", "nx", "lerna", "ultra", "wireit", "moon":
		return classifyMonorepoRunner(tool, rest)
	case "webpack", "rollup", "tsup", "esbuild", "parcel", "unbuild", "swc", "babel", "rspack", "ncc", "microbundle", "vite", "next", "nuxt", "astro", "svelte-kit", "gatsby", "electron-builder":
		p := positional(rest, nil)
		if tool == "vite" || tool == "next" || tool == "nuxt" || tool == "astro" || tool == "gatsby" {
			if len(p) == 0 || p[0] == "dev" || p[0] == "serve" || p[0] == "start" || p[0] == "preview" {
				return cmdInfo{kind: kWatch, sig: tool}
			}
			if p[0] == "lint" {
				return cmdInfo{kind: kLint, sig: tool + " lint"}
			}
		}
		if hasFlag(rest, "--watch", "-w") {
			return cmdInfo{kind: kWatch, sig: tool}
		}
		return cmdInfo{kind: kBuild, sig: tool}
	case "python":
		return c.classifyPython(rest, dir, depth)
	case "pytest":
		k := kTest
		if hasArgPrefix(rest, "--cov") {
			k |= kCoverage
		}
		return cmdInfo{kind: k, sig: "pytest"}
	case "coverage":
		p := positional(rest, map[string]bool{"--rcfile": true, "--source": true})
		if len(p) > 0 && p[0] == "run" {
			inner := c.classifyDepth(dropRunnerFlags(rest[1:], map[string]bool{"--source": true, "--rcfile": true, "--omit": true, "--include": true, "--concurrency": true, "--data-file": true, "--context": true}), dir, depth+1)
			if inner.kind.has(kTest) {
				return cmdInfo{kind: kTest | kCoverage, sig: inner.sig}
			}
			return cmdInfo{kind: kTest | kCoverage, sig: "coverage run"}
		}
		if len(p) > 0 && p[0] == "report" && hasArgPrefix(rest, "--fail-under") {
			return cmdInfo{kind: kCoverage, sig: "coverage report"}
		}
		return cmdInfo{kind: kCIOnly}
	case "ruff":
		p := positional(rest, nil)
		if len(p) > 0 && p[0] == "format" {
			if hasFlag(rest, "--check", "--diff") {
				return cmdInfo{kind: kFormat, sig: "ruff format"}
			}
			return cmdInfo{}
		}
		if hasFlag(rest, "--fix") {
			return cmdInfo{}
		}
		return cmdInfo{kind: kLint, sig: "ruff check"}
	case "mypy", "pyright", "basedpyright", "pytype", "pyre", "dmypy", "ty", "phpstan", "psalm", "srb", "steep", "flow", "mypyc":
		if tool == "mypyc" {
			return cmdInfo{kind: kBuild, sig: tool}
		}
		return cmdInfo{kind: kType, sig: tool}
	case "tox":
		return c.classifyTox(rest)
	case "nox":
		return classifyNox(rest)
	case "hatch":
		return c.classifyHatch(rest, dir, depth)
	case "uv", "poetry", "pipenv", "pdm", "rye", "uvx", "pipx":
		return c.classifyPyRunner(tool, rest, dir, depth)
	case "pip", "conda", "mamba", "micromamba":
		return classifyPip(tool, rest)
	case "pre-commit", "prek":
		p := positional(rest, nil)
		if len(p) > 0 && (p[0] == "run" || p[0] == "try-repo") {
			return cmdInfo{kind: kLint, sig: "pre-commit run"}
		}
		return cmdInfo{kind: kToolchain}
	case "mvn":
		return classifyMaven(rest)
	case "gradle":
		return classifyGradle(rest)
	case "sbt":
		return classifyNamesCmd("sbt", rest)
	case "lein":
		return classifyNamesCmd("lein", rest)
	case "ant":
		return classifyNamesCmd("ant", rest)
	case "bazel", "bazelisk", "buck2", "pants", "please":
		p := positional(rest, nil)
		if len(p) > 0 {
			switch p[0] {
			case "test":
				return cmdInfo{kind: kTest, sig: tool + " test"}
			case "build":
				return cmdInfo{kind: kBuild, sig: tool + " build"}
			case "lint":
				return cmdInfo{kind: kLint, sig: tool + " lint"}
			}
		}
		return cmdInfo{}
	case "bundle", "bundler":
		return c.classifyBundle(rest, dir, depth)
	case "rake":
		return c.classifyRake(rest, dir, depth)
	case "rspec", "cucumber", "minitest", "m", "testrb":
		return cmdInfo{kind: kTest, sig: "rspec"}
	case "rails":
		var k kind
		for _, a := range positional(rest, nil) {
			switch {
			case a == "test:system" || a == "spec:system":
				k |= kTest | kE2E
			case strings.HasPrefix(a, "test") || strings.HasPrefix(a, "spec"):
				k |= kTest
			case strings.HasPrefix(a, "db:"):
				k |= kService | kInstall
			}
		}
		if k.has(kTest) {
			return cmdInfo{kind: k, sig: "rails test"}
		}
		if k != 0 {
			return cmdInfo{kind: k, sig: "rails db"}
		}
		return cmdInfo{}
	case "ruby":
		if hasArgPrefix(rest, "-Itest", "-Ilib") || hasArgPrefix(positional(rest, nil), "test/", "spec/") {
			return cmdInfo{kind: kTest, sig: "ruby test"}
		}
		return cmdInfo{}
	case "gem":
		p := positional(rest, nil)
		if len(p) > 0 && p[0] == "build" {
			return cmdInfo{kind: kBuild, sig: "gem build"}
		}
		if len(p) > 0 && p[0] == "push" {
			return cmdInfo{kind: kDeploy}
		}
		return cmdInfo{kind: kToolchain}
	case "composer":
		return c.classifyComposer(rest, dir, depth)
	case "phpunit", "pest", "paratest", "codecept", "phpspec", "infection", "atoum", "kahlan", "simple-phpunit":
		k := kTest
		if hasArgPrefix(rest, "--coverage") {
			k |= kCoverage
		}
		return cmdInfo{kind: k, sig: "phpunit"}
	case "php-cs-fixer", "pint", "php-cs", "ecs", "rector":
		if hasFlag(rest, "--dry-run", "--test") || tool == "ecs" && !hasFlag(rest, "--fix") {
			return cmdInfo{kind: kFormat | kLint, sig: tool}
		}
		return cmdInfo{}
	case "php":
		p := positional(rest, nil)
		if len(p) > 0 && (strings.HasSuffix(p[0], "phpunit") || strings.HasSuffix(p[0], "pest")) {
			return cmdInfo{kind: kTest, sig: "phpunit"}
		}
		if len(p) > 1 && p[0] == "artisan" && p[1] == "test" {
			return cmdInfo{kind: kTest, sig: "artisan test"}
		}
		if len(p) > 0 {
			return c.classifyDepth(p, dir, depth+1)
		}
		return cmdInfo{kind: kCIOnly}
	case "mix":
		return classifyMix(rest)
	case "rebar3":
		return classifyNamesCmd("rebar3", rest)
	case "dotnet":
		return classifyDotnet(rest)
	case "msbuild", "xbuild":
		return cmdInfo{kind: kBuild, sig: "msbuild"}
	case "vstest.console", "xunit.console", "nunit3-console":
		return cmdInfo{kind: kTest, sig: "dotnet test"}
	case "cmake":
		return classifyCMake(rest)
	case "ctest":
		return cmdInfo{kind: kTest, sig: "ctest"}
	case "make", "gmake", "mingw32-make":
		return c.classifyMake(rest, dir, depth)
	case "ninja", "samu":
		p := positional(rest, map[string]bool{"-C": true, "-j": true, "-f": true, "-l": true, "-k": true})
		if hasAny(p, "test", "check") {
			return cmdInfo{kind: kTest, sig: "ninja test"}
		}
		return cmdInfo{kind: kBuild, sig: "ninja"}
	case "meson":
		p := positional(rest, nil)
		if len(p) > 0 {
			switch p[0] {
			case "test":
				return cmdInfo{kind: kTest, sig: "meson test"}
			case "compile":
				return cmdInfo{kind: kBuild, sig: "meson compile"}
			case "setup", "configure":
				return cmdInfo{kind: kInstall, sig: "meson setup"}
			}
			return cmdInfo{kind: kInstall, sig: "meson setup"}
		}
		return cmdInfo{}
	case "configure", "autogen.sh", "autoreconf", "bootstrap", "bootstrap.sh", "vcpkg", "conan", "autoconf", "aclocal", "automake", "libtoolize":
		return cmdInfo{kind: kInstall, sig: tool}
	case "just", "task", "go-task", "mage", "invoke", "inv", "cake", "nake", "doit", "poe", "xc", "earthly", "dagger", "moon run":
		return c.classifyRunner(tool, rest, dir, depth)
	case "swift":
		return classifyNamesCmd("swift", rest)
	case "zig":
		p := positional(rest, nil)
		if len(p) > 1 && p[0] == "build" && p[1] == "test" || len(p) > 0 && p[0] == "test" {
			return cmdInfo{kind: kTest, sig: "zig build test"}
		}
		if len(p) > 0 && p[0] == "build" {
			return cmdInfo{kind: kBuild, sig: "zig build"}
		}
		return cmdInfo{}
	case "stack", "cabal", "dune", "opam", "elm-test", "spago", "lake", "nimble", "crystal", "shards", "julia", "raco", "clj", "clojure", "dart", "flutter", "melos", "gleam", "v", "scala-cli", "mill", "coursier", "cs", "xcodebuild":
		return classifyNamesCmd(tool, rest)
	case "prove", "bats", "busted", "shellspec", "roundup", "tusk", "kcov":
		return cmdInfo{kind: kTest, sig: tool}
	case "codecov", "coveralls", "goveralls", "gcovr", "lcov", "genhtml", "gcov", "llvm-cov", "grcov", "codacy-coverage-reporter", "coveralls-lcov", "covector", "cc-test-reporter", "go-junit-report", "junit-report", "tparse", "gotestfmt", "reviewdog", "danger", "sonar-scanner", "trunk":
		return cmdInfo{kind: kCIOnly}
	case "echo", "printf", "cat", "ls", "pwd", "env", "printenv", "set", "true", ":", "tee", "sleep", "rm", "cp", "mv", "chmod", "chown", "tar", "unzip", "zip", "gzip", "sha256sum", "shasum", "md5sum", "which", "type", "whoami", "uname", "date", "df", "free", "nproc", "ulimit", "git", "gh", "curl", "wget", "jq", "yq", "sed", "awk", "grep", "find", "xargs", "head", "tail", "wc", "sort", "uniq", "cut", "tr", "touch", "ln", "source", ".", "export", "unset", "shopt", "trap", "exit", "return", "test", "[", "[[", "read", "eval", "ccache", "sccache", "du", "mkdir", "cd", "pushd", "popd", "hash", "diff", "cmp", "base64", "openssl", "ssh", "ssh-keyscan", "scp", "rsync", "install", "dirname", "basename", "realpath", "readlink", "file", "id", "hostname", "locale", "systemctl", "service", "caffeinate", "python-version", "node-version", "lscpu", "vmstat", "iconv", "bash", "sh", "zsh", "pwsh", "powershell", "cmd":
		if tool == "bash" || tool == "sh" || tool == "zsh" {
			return c.classifyShell(rest, dir, depth)
		}
		if tool == "git" && hasAny(rest, "diff") && hasFlag(rest, "--exit-code", "--quiet") {
			return cmdInfo{kind: kCIOnly, note: "checks that the job left no changes"}
		}
		if tool == "git" && hasAny(rest, "submodule") {
			return cmdInfo{kind: kInstall, sig: "git submodule"}
		}
		if tool == "mkdir" {
			return cmdInfo{kind: kInstall | kCIOnly, sig: "mkdir"}
		}
		if tool == "chmod" {
			return cmdInfo{kind: kCIOnly, sig: "chmod"}
		}
		return cmdInfo{kind: kCIOnly}
	case "apt-get", "apt", "aptitude", "brew", "choco", "yum", "dnf", "apk", "snap", "pacman", "zypper", "port", "winget", "scoop", "rustup", "nvm", "fnm", "volta", "sdk", "asdf", "mise", "rtx", "pyenv", "rbenv", "corepack", "sdkmanager", "emerge", "nix-env", "add-apt-repository", "update-alternatives", "dpkg", "rpm", "ldconfig", "cpanm", "cpan", "luarocks", "opam-install", "tlmgr", "R", "Rscript", "ghcup", "juliaup", "elan", "xcode-select", "setup-envtest", "cosign":
		if tool == "R" || tool == "Rscript" {
			if hasAny(rest, "check") || strings.Contains(strings.Join(rest, " "), "test") {
				return cmdInfo{kind: kTest, sig: "R check"}
			}
			return cmdInfo{}
		}
		return cmdInfo{kind: kToolchain}
	case "docker", "podman", "docker-compose", "kind", "minikube", "k3d", "helm", "kubectl", "skaffold", "tilt":
		return classifyDocker(tool, rest)
	case "pg_isready", "mysqladmin", "redis-cli", "mongosh", "mongo", "psql", "mysql", "wait-for-it", "wait-for-it.sh", "dockerize", "createdb", "sqlcmd":
		return cmdInfo{kind: kService, sig: tool}
	case "goreleaser", "twine", "semantic-release", "changeset", "changesets", "release-it", "np", "vsce", "ovsx", "firebase", "vercel", "netlify", "wrangler", "fly", "flyctl", "heroku", "aws", "gcloud", "az", "terraform", "pulumi", "cdk", "serverless", "sls", "ghp-import", "mkdocs", "sphinx-build", "jekyll", "hugo", "typedoc", "jsdoc", "mdbook", "doxygen", "gh-pages":
		if tool == "terraform" && hasAny(rest, "validate", "fmt") {
			return cmdInfo{kind: kLint, sig: "terraform " + positional(rest, nil)[0]}
		}
		if tool == "mdbook" && hasAny(rest, "test") {
			return cmdInfo{kind: kTest, sig: "mdbook test"}
		}
		return cmdInfo{kind: kDeploy}
	}
	// Scripts in the repository: ./test.sh, scripts/ci/test, ./run-tests.
	if strings.Contains(args[0], "/") || strings.HasSuffix(args[0], ".sh") {
		return c.classifyFile(args[0], dir, depth)
	}
	// An unknown tool that runs a known command: `vp exec pnpm test`,
	// `toolbox run -- make test`.
	if len(rest) > 1 && (rest[0] == "exec" || rest[0] == "run" || rest[0] == "x" || rest[0] == "--") && depth < maxScriptDepth {
		inner := c.classifyDepth(dropRunnerFlags(rest[1:], nil), dir, depth+1)
		if inner.kind&gateKinds != 0 && inner.sig != "" {
			return inner
		}
	}
	return cmdInfo{}
}

// classifyFile classifies a script of the repository by its content when
// it can be read (a shell script), by its name otherwise.
func (c classifier) classifyFile(p, dir string, depth int) cmdInfo {
	byName := nameKindOfPath(p)
	sig := clean(p)
	if c.lookup != nil {
		if _, exists := c.lookup.script("exists", dir, p); !exists && !strings.HasPrefix(p, "/") {
			// Not in the repository: CI downloaded or generated it.
			return cmdInfo{kind: kToolchain, sig: sig}
		}
	}
	if c.lookup != nil && depth < maxScriptDepth {
		if body, ok := c.lookup.script("file", dir, p); ok {
			info := c.classifyScript(body, dir, depth+1)
			info.kind &^= kDeploy | kService
			switch {
			case info.kind&gateKinds == 0 && info.kind.has(kInstall):
				return cmdInfo{kind: kInstall, sig: sig}
			case info.kind&gateKinds == 0 && info.kind.has(kToolchain):
				return cmdInfo{kind: kToolchain, sig: sig}
			}
			info.kind &^= kInstall | kToolchain
			if info.kind&gateKinds != 0 {
				k := info.kind
				if byName&gateKinds != 0 && byName&^kWatch != 0 && !isCompositeName(strings.TrimSuffix(path.Base(p), path.Ext(p))) {
					// The name says what the script is for; the body may
					// also build or install on the way.
					k = byName&gateKinds | k&(kCoverage|kE2E)
				}
				return cmdInfo{kind: k, sig: sig, inner: info.sig, inners: info.inners}
			}
		}
	}
	return withSig(byName, sig)
}

type unwrapped struct {
	args   []string
	script string
}

// unwrapRunner sees through environment runners that run a command they are
// given: cross-env A=1 jest, dotenv -- jest, nix develop -c make test,
// nix-shell --run "make test", devbox run make test, mise exec -- pytest.
func unwrapRunner(tool string, rest []string) (unwrapped, bool) {
	afterDashes := func() ([]string, bool) {
		for i, a := range rest {
			if a == "--" && i+1 < len(rest) {
				return rest[i+1:], true
			}
		}
		return nil, false
	}
	switch tool {
	case "cross-env", "cross-env-shell":
		args := rest
		for len(args) > 0 && isAssignment(args[0]) {
			args = args[1:]
		}
		if len(args) > 0 {
			return unwrapped{args: args}, true
		}
	case "dotenv", "dotenvx", "env-cmd", "op", "doppler", "with-contenv":
		if args, ok := afterDashes(); ok {
			return unwrapped{args: args}, true
		}
	case "nix", "devbox", "mise", "rtx", "flox", "pixi", "conda", "micromamba":
		for i, a := range rest {
			if (a == "-c" || a == "--command") && i+1 < len(rest) {
				return unwrapped{args: rest[i+1:]}, true
			}
		}
		if args, ok := afterDashes(); ok {
			return unwrapped{args: args}, true
		}
		if len(rest) > 1 && (rest[0] == "run" || rest[0] == "exec") && tool != "nix" && tool != "conda" && tool != "micromamba" {
			return unwrapped{args: rest[1:]}, true
		}
	case "nix-shell":
		for i, a := range rest {
			if (a == "--run" || a == "--command") && i+1 < len(rest) {
				return unwrapped{script: rest[i+1]}, true
			}
		}
	}
	return unwrapped{}, false
}

// repoScriptNames are names of scripts a repository keeps in scripts/ or
// ci/ that clash with builtins or tools.
var repoScriptNames = map[string]bool{
	"test": true, "tests": true, "install": true, "coverage": true, "check": true, "build": true, "lint": true,
	"ci": true, "setup": true, "bootstrap": true, "format": true, "fmt": true, "typecheck": true, "run": true,
	"run-tests": true, "runtests": true, "run_tests": true, "cibuild": true, "release": true, "publish": true,
	"deploy": true, "sync": true, "clean": true, "docs": true, "e2e": true, "unit": true, "type": true, "verify": true,
}

func withSig(k kind, sig string) cmdInfo {
	if k == 0 {
		return cmdInfo{}
	}
	return cmdInfo{kind: k, sig: sig}
}

// nameKindOfPath classifies a script by its file name: scripts/test.sh is a
// test, ./ci/lint.sh lints.
func nameKindOfPath(p string) kind {
	b := path.Base(p)
	b = strings.TrimSuffix(b, path.Ext(b))
	if b == "ci" || b == "cibuild" || b == "check" {
		return kTest
	}
	return classifyName(b)
}

func hasAny(args []string, words ...string) bool {
	for _, a := range args {
		for _, w := range words {
			if a == w {
				return true
			}
		}
	}
	return false
}

// dropRunnerFlags skips the flags of a runner (npx -y, uv run --frozen) and
// returns the command it runs.
func dropRunnerFlags(args []string, valued map[string]bool) []string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return args[i+1:]
		}
		if strings.HasPrefix(a, "-") {
			if valued[a] {
				i++
			}
			continue
		}
		return args[i:]
	}
	return nil
}

func classifyGo(rest []string) cmdInfo {
	p := positional(rest, map[string]bool{"-run": true, "-tags": true, "-timeout": true, "-p": true, "-count": true, "-coverprofile": true, "-covermode": true, "-coverpkg": true, "-o": true, "-bench": true, "-parallel": true, "-exec": true, "-ldflags": true, "-gcflags": true, "-mod": true, "-C": true, "-skip": true, "-shuffle": true})
	if len(p) == 0 {
		return cmdInfo{}
	}
	switch p[0] {
	case "test":
		k := kTest
		if hasArgPrefix(rest, "-cover", "-coverprofile", "-covermode", "-coverpkg") {
			k |= kCoverage
		}
		if hasArgPrefix(rest, "-bench") && hasFlag(rest, "-run") {
			k = kBench
		}
		return cmdInfo{kind: k, sig: "go test"}
	case "vet":
		return cmdInfo{kind: kLint | kType, sig: "go vet"}
	case "build":
		return cmdInfo{kind: kBuild | kType, sig: "go build"}
	case "install":
		for _, a := range p[1:] {
			if strings.Contains(a, "@") {
				return cmdInfo{kind: kToolchain}
			}
		}
		return cmdInfo{kind: kBuild, sig: "go install"}
	case "mod":
		if len(p) > 1 && p[1] == "verify" {
			return cmdInfo{kind: kCIOnly}
		}
		return cmdInfo{kind: kInstall, sig: "go mod " + strings.Join(p[1:2], "")}
	case "get", "generate", "work":
		return cmdInfo{kind: kInstall, sig: "go " + p[0]}
	case "fmt":
		return cmdInfo{}
	case "run":
		if len(p) > 1 {
			name := p[1]
			if i := strings.LastIndex(name, "@"); i > 0 {
				name = name[:i]
			}
			if k := classifyName(path.Base(name)); k != 0 {
				return cmdInfo{kind: k, sig: "go run " + path.Base(name)}
			}
			if strings.Contains(name, "golangci-lint") || strings.Contains(name, "staticcheck") {
				return cmdInfo{kind: kLint, sig: "golangci-lint"}
			}
		}
		return cmdInfo{}
	case "version", "env", "list", "clean", "tool", "doc":
		return cmdInfo{kind: kCIOnly}
	}
	return cmdInfo{}
}

func classifyCargo(rest []string) cmdInfo {
	args := rest
	if len(args) > 0 && strings.HasPrefix(args[0], "+") {
		args = args[1:] // toolchain override: cargo +nightly test
	}
	p := positional(args, map[string]bool{"-p": true, "--package": true, "--features": true, "-F": true, "--target": true, "--manifest-path": true, "-j": true, "--jobs": true, "--bin": true, "--test": true, "--example": true, "--exclude": true, "--profile": true, "--color": true, "--config": true, "-Z": true, "--target-dir": true})
	if len(p) == 0 {
		return cmdInfo{}
	}
	switch p[0] {
	case "test", "t":
		if hasFlag(args, "--no-run") {
			return cmdInfo{kind: kBuild, sig: "cargo build"}
		}
		return cmdInfo{kind: kTest, sig: "cargo test"}
	case "nextest":
		return cmdInfo{kind: kTest, sig: "cargo nextest"}
	case "clippy":
		if hasFlag(args, "--fix") {
			return cmdInfo{}
		}
		return cmdInfo{kind: kLint, sig: "cargo clippy"}
	case "fmt":
		if hasAny(args, "--check") {
			return cmdInfo{kind: kFormat, sig: "cargo fmt"}
		}
		return cmdInfo{}
	case "build", "b":
		return cmdInfo{kind: kBuild | kType, sig: "cargo build"}
	case "check", "c":
		return cmdInfo{kind: kType, sig: "cargo check"}
	case "tarpaulin", "llvm-cov":
		return cmdInfo{kind: kTest | kCoverage, sig: "cargo " + p[0]}
	case "hack":
		if len(p) > 1 {
			inner := classifyCargo(p[1:])
			return cmdInfo{kind: inner.kind, sig: "cargo hack " + strings.TrimPrefix(inner.sig, "cargo ")}
		}
		return cmdInfo{}
	case "miri":
		return cmdInfo{kind: kTest, sig: "cargo miri"}
	case "bench":
		return cmdInfo{kind: kBench, sig: "cargo bench"}
	case "fetch", "generate-lockfile", "update":
		return cmdInfo{kind: kInstall, sig: "cargo fetch"}
	case "install", "binstall":
		return cmdInfo{kind: kToolchain}
	case "publish", "release", "dist":
		return cmdInfo{kind: kDeploy}
	case "deny", "audit", "udeps", "machete", "semver-checks", "msrv", "vet", "outdated", "sort", "spellcheck", "shear":
		return cmdInfo{kind: kLint, sig: "cargo " + p[0]}
	case "doc":
		return cmdInfo{kind: kBuild, sig: "cargo doc"}
	case "xtask", "make", "run":
		if len(p) > 1 {
			if k := classifyName(p[1]); k != 0 {
				return cmdInfo{kind: k, sig: "cargo " + p[0] + " " + p[1]}
			}
		}
		return cmdInfo{}
	}
	return cmdInfo{}
}

func classifyJSTest(tool string, rest []string) cmdInfo {
	switch tool {
	case "c8", "nyc":
		if len(rest) > 0 && (rest[0] == "report" || rest[0] == "check-coverage") {
			return cmdInfo{kind: kCoverage, sig: tool + " " + rest[0]}
		}
		return cmdInfo{kind: kTest | kCoverage, sig: tool}
	case "vitest":
		p := positional(rest, nil)
		k := kTest
		if hasFlag(rest, "--coverage") || hasArgPrefix(rest, "--coverage.") {
			k |= kCoverage
		}
		if len(p) > 0 && (p[0] == "bench") {
			return cmdInfo{kind: kBench}
		}
		if hasFlag(rest, "--watch", "-w") || len(p) > 0 && (p[0] == "watch" || p[0] == "dev") {
			return cmdInfo{kind: k | kWatch, sig: "vitest", note: "`vitest --watch` never exits", fix: "vitest run"}
		}
		if !(len(p) > 0 && p[0] == "run") && !hasFlag(rest, "--run") {
			return cmdInfo{kind: k, sig: "vitest", note: "plain `vitest` watches when it has a terminal; without one (as in the loop) it runs once"}
		}
		return cmdInfo{kind: k, sig: "vitest"}
	case "jest":
		k := kTest
		if hasFlag(rest, "--coverage") {
			k |= kCoverage
		}
		if hasFlag(rest, "--watch", "--watchAll") && !hasFlag(rest, "--watchAll=false", "--watch=false") {
			return cmdInfo{kind: k | kWatch, sig: "jest", note: "`jest --watch` never exits", fix: "jest"}
		}
		return cmdInfo{kind: k, sig: "jest"}
	case "mocha", "ava", "tap", "tape", "uvu", "jasmine", "lab", "qunit", "web-test-runner", "wtr":
		if hasFlag(rest, "--watch", "-w") {
			return cmdInfo{kind: kTest | kWatch, sig: tool, note: "`" + tool + " --watch` never exits"}
		}
		return cmdInfo{kind: kTest, sig: tool}
	case "karma":
		if hasFlag(rest, "--single-run") && !hasFlag(rest, "--single-run=false") {
			return cmdInfo{kind: kTest | kE2E, sig: "karma"}
		}
		return cmdInfo{kind: kTest | kE2E | kWatch, sig: "karma", note: "`karma start` watches unless given --single-run", fix: "karma start --single-run"}
	case "ng":
		p := positional(rest, nil)
		if len(p) > 0 && (p[0] == "test" || p[0] == "t") {
			if hasFlag(rest, "--watch=false", "--no-watch") || hasAny(rest, "--watch=false") {
				return cmdInfo{kind: kTest, sig: "ng test"}
			}
			return cmdInfo{kind: kTest | kWatch, sig: "ng test", note: "`ng test` watches by default", fix: "ng test --watch=false"}
		}
		if len(p) > 0 && p[0] == "lint" {
			return cmdInfo{kind: kLint, sig: "ng lint"}
		}
		if len(p) > 0 && (p[0] == "build" || p[0] == "b") {
			return cmdInfo{kind: kBuild, sig: "ng build"}
		}
		if len(p) > 0 && p[0] == "e2e" {
			return cmdInfo{kind: kTest | kE2E, sig: "ng e2e"}
		}
		return cmdInfo{kind: kWatch, sig: "ng"}
	case "react-scripts", "craco":
		p := positional(rest, nil)
		if len(p) > 0 && p[0] == "test" {
			if hasFlag(rest, "--watchAll=false") || hasAny(rest, "--watchAll=false") {
				return cmdInfo{kind: kTest, sig: "react-scripts test"}
			}
			return cmdInfo{kind: kTest | kWatch, sig: "react-scripts test", note: "`react-scripts test` watches unless CI=true"}
		}
		if len(p) > 0 && p[0] == "build" {
			return cmdInfo{kind: kBuild, sig: "react-scripts build"}
		}
		return cmdInfo{kind: kWatch, sig: "react-scripts"}
	case "vue-cli-service":
		p := positional(rest, nil)
		if len(p) > 0 && strings.HasPrefix(p[0], "test") {
			return cmdInfo{kind: kTest, sig: "vue-cli-service " + p[0]}
		}
		if len(p) > 0 && p[0] == "lint" {
			return cmdInfo{kind: kLint, sig: "vue-cli-service lint"}
		}
		if len(p) > 0 && p[0] == "build" {
			return cmdInfo{kind: kBuild, sig: "vue-cli-service build"}
		}
		return cmdInfo{kind: kWatch}
	case "playwright", "cypress", "wdio", "testcafe":
		p := positional(rest, nil)
		if tool == "playwright" && len(p) > 0 && p[0] == "install" {
			return cmdInfo{kind: kToolchain}
		}
		if tool == "cypress" && len(p) > 0 && (p[0] == "open" || p[0] == "install" || p[0] == "verify") {
			return cmdInfo{kind: kToolchain}
		}
		return cmdInfo{kind: kTest | kE2E, sig: tool}
	}
	return cmdInfo{kind: kTest, sig: tool}
}

// classifyMonorepoRunner handles turbo run test lint, nx run-many -t test,
// lerna run test: the kinds are the union of the task names.
func classifyMonorepoRunner(tool string, rest []string) cmdInfo {
	var tasks []string
	valued := map[string]bool{"--filter": true, "-F": true, "--scope": true, "--concurrency": true, "--projects": true, "-p": true, "--cache-dir": true, "--team": true, "--token": true, "--base": true, "--head": true, "--parallel": true, "--output-logs": true, "--log-order": true, "--exclude": true, "--configuration": true, "-c": true, "--env-mode": true, "--cache": true, "--graph": true, "--summarize": true, "--ignore": true, "--since": true, "--nx-bail": true}
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "-t" || a == "--target" || a == "--targets":
			if i+1 < len(rest) {
				tasks = append(tasks, strings.Split(rest[i+1], ",")...)
				i++
			}
		case strings.HasPrefix(a, "--target=") || strings.HasPrefix(a, "--targets=") || strings.HasPrefix(a, "-t="):
			tasks = append(tasks, strings.Split(a[strings.Index(a, "=")+1:], ",")...)
		case strings.HasPrefix(a, "-"):
			if valued[a] {
				i++
			}
		default:
			tasks = append(tasks, a)
		}
	}
	// Drop the runner's own subcommands.
	var k kind
	var names []string
	for _, t := range tasks {
		switch t {
		case "run", "run-many", "affected", "exec", "--":
			continue
		}
		if tool == "nx" && strings.Contains(t, ":") {
			t = t[strings.LastIndex(t, ":")+1:] // nx run project:test
		}
		if tool == "lerna" && (t == "bootstrap" || t == "publish" || t == "version") {
			if t == "bootstrap" {
				return cmdInfo{kind: kInstall, sig: "lerna bootstrap"}
			}
			return cmdInfo{kind: kDeploy}
		}
		nk := classifyName(t)
		if nk.has(kWatch) || nk.has(kDeploy) {
			continue
		}
		if nk != 0 {
			names = append(names, t)
		}
		k |= nk
	}
	if k == 0 {
		return cmdInfo{}
	}
	return cmdInfo{kind: k, sig: tool + " " + strings.Join(names, " ")}
}

func classifyMaven(rest []string) cmdInfo {
	goals := positional(rest, map[string]bool{"-pl": true, "--projects": true, "-P": true, "--activate-profiles": true, "-f": true, "--file": true, "-s": true, "--settings": true, "-T": true, "--threads": true, "-rf": true, "--resume-from": true, "-gs": true, "-t": true, "-l": true, "--log-file": true, "-amd": false})
	skipTests := hasFlag(rest, "-DskipTests", "-Dmaven.test.skip", "-DskipUTs") && !hasFlag(rest, "-DskipTests=false", "-Dmaven.test.skip=false")
	var k kind
	var sig []string
	for _, g := range goals {
		switch {
		case g == "test" || g == "surefire:test":
			k |= kTest
			sig = append(sig, "test")
		case g == "verify" || g == "install" || g == "integration-test":
			k |= kTest | kBuild
			sig = append(sig, g)
		case g == "package":
			k |= kBuild | kTest
			sig = append(sig, g)
		case g == "compile" || g == "test-compile":
			k |= kBuild | kType
			sig = append(sig, g)
		case strings.HasPrefix(g, "jacoco:") || strings.HasPrefix(g, "cobertura:"):
			k |= kCoverage
		case strings.HasSuffix(g, ":check") || strings.HasSuffix(g, "spotless:check") || strings.HasPrefix(g, "checkstyle:") || strings.HasPrefix(g, "pmd:") || strings.HasPrefix(g, "spotbugs:") || strings.HasPrefix(g, "fmt:") || strings.HasPrefix(g, "sortpom:") || strings.HasPrefix(g, "license:") || strings.HasPrefix(g, "enforcer:") || strings.HasPrefix(g, "formatter:validate") || strings.HasPrefix(g, "apache-rat:") || strings.HasPrefix(g, "rat:"):
			k |= kLint
			sig = append(sig, g)
		case g == "deploy" || strings.HasPrefix(g, "release:") || strings.HasPrefix(g, "deploy:") || g == "site-deploy":
			return cmdInfo{kind: kDeploy}
		case strings.HasPrefix(g, "dependency:"):
			k |= kInstall
			sig = append(sig, g)
		}
	}
	if skipTests {
		k &^= kTest
	}
	if k.has(kCoverage) && !k.has(kTest) {
		k &^= kCoverage
	}
	if k == 0 {
		return cmdInfo{}
	}
	return cmdInfo{kind: k, sig: "mvn " + strings.Join(sig, " ")}
}

func classifyGradle(rest []string) cmdInfo {
	tasks := positional(rest, map[string]bool{"-x": true, "--exclude-task": true, "-p": true, "--project-dir": true, "-D": false, "-P": false, "--max-workers": true, "-I": true, "--init-script": true, "-c": true, "--settings-file": true, "-b": true, "--build-file": true, "-g": true, "--gradle-user-home": true})
	excluded := map[string]bool{}
	for i := 0; i < len(rest)-1; i++ {
		if rest[i] == "-x" || rest[i] == "--exclude-task" {
			excluded[rest[i+1]] = true
		}
	}
	var k kind
	var sig []string
	for _, t := range tasks {
		name := t
		if i := strings.LastIndex(t, ":"); i >= 0 {
			name = t[i+1:]
		}
		switch {
		case name == "test" || strings.HasSuffix(name, "Test") && !strings.HasPrefix(name, "compile") || name == "allTests" || name == "jvmTest" || name == "testDebugUnitTest" || name == "testReleaseUnitTest":
			k |= kTest
		case name == "check":
			k |= kTest | kLint
		case name == "build":
			k |= kTest | kBuild | kLint
		case name == "assemble" || strings.HasPrefix(name, "compile") || name == "classes" || name == "jar" || strings.HasPrefix(name, "assemble") || name == "shadowJar":
			k |= kBuild
		case strings.HasPrefix(name, "jacoco") || strings.HasPrefix(name, "koverXml") || strings.HasPrefix(name, "kover"):
			k |= kCoverage
		case strings.HasPrefix(name, "spotless") && strings.HasSuffix(name, "Check") || strings.HasPrefix(name, "ktlint") || strings.HasPrefix(name, "detekt") || strings.HasPrefix(name, "checkstyle") || name == "lint" || strings.HasPrefix(name, "lint") || strings.HasPrefix(name, "pmd") || strings.HasPrefix(name, "spotbugs") || name == "apiCheck":
			k |= kLint
		case strings.HasPrefix(name, "publish") || strings.HasPrefix(name, "release") || name == "uploadArchives":
			return cmdInfo{kind: kDeploy}
		case name == "dependencies" || name == "downloadDependencies":
			k |= kInstall
		default:
			continue
		}
		sig = append(sig, name)
	}
	if excluded["test"] {
		k &^= kTest
	}
	if k.has(kCoverage) && !k.has(kTest) {
		k |= kTest
	}
	if k == 0 {
		return cmdInfo{}
	}
	return cmdInfo{kind: k, sig: "gradle " + strings.Join(sig, " ")}
}

// classifyNamesCmd handles tools whose first positional argument names what
// they do: swift test, stack test, dart analyze, sbt test.
func classifyNamesCmd(tool string, rest []string) cmdInfo {
	p := positional(rest, map[string]bool{"--project": true, "-p": true, "--package-path": true, "-C": true, "--scheme": true, "-scheme": true, "-project": true, "-workspace": true, "-destination": true, "-sdk": true, "-configuration": true, "-e": true})
	var k kind
	var sig []string
	for _, a := range p {
		name := strings.Trim(a, "\"'")
		if tool == "sbt" && strings.Contains(name, "/") {
			name = name[strings.LastIndex(name, "/")+1:]
		}
		var nk kind
		switch name {
		case "analyze", "analyse":
			nk = kLint | kType
		case "eunit", "ct", "runtest", "check":
			nk = kTest
			if tool == "dune" && name == "check" || tool == "gleam" && name == "check" {
				nk = kType
			}
		case "xref", "dialyzer":
			nk = kType
		case "scalafmtCheck", "scalafmtCheckAll", "scalafmtSbtCheck":
			nk = kFormat
		case "coverage":
			nk = kCoverage
		default:
			nk = classifyName(name)
			if nk.has(kWatch) || nk.has(kInstall) && tool != "cabal" && tool != "stack" {
				nk &^= kWatch
			}
		}
		if nk != 0 {
			sig = append(sig, name)
		}
		k |= nk
		if tool != "sbt" && tool != "rebar3" && tool != "mill" && tool != "lein" && tool != "ant" {
			break // the first positional is the subcommand
		}
	}
	if tool == "xcodebuild" && hasAny(rest, "test") {
		k |= kTest
	}
	if tool == "dart" || tool == "flutter" {
		if len(p) > 0 && (p[0] == "pub" || p[0] == "packages") {
			return cmdInfo{kind: kInstall, sig: tool + " pub get"}
		}
		if len(p) > 0 && p[0] == "format" {
			if hasFlag(rest, "--set-exit-if-changed") || hasFlag(rest, "-o") {
				return cmdInfo{kind: kFormat, sig: tool + " format"}
			}
			return cmdInfo{}
		}
	}
	if (tool == "cabal" || tool == "stack") && len(p) > 0 && (p[0] == "update" || p[0] == "setup") {
		return cmdInfo{kind: kInstall, sig: tool + " " + p[0]}
	}
	if k == 0 {
		return cmdInfo{}
	}
	return cmdInfo{kind: k &^ kWatch, sig: tool + " " + strings.Join(sig, " ")}
}

func classifyMix(rest []string) cmdInfo {
	p := positional(rest, map[string]bool{"--only": true, "--exclude": true, "--include": true, "--seed": true, "--max-failures": true, "--partitions": true})
	if len(p) == 0 {
		return cmdInfo{kind: kBuild, sig: "mix"}
	}
	switch p[0] {
	case "test":
		k := kTest
		if hasFlag(rest, "--cover") {
			k |= kCoverage
		}
		return cmdInfo{kind: k, sig: "mix test"}
	case "coveralls", "coveralls.json", "coveralls.github", "coveralls.html", "coveralls.lcov":
		return cmdInfo{kind: kTest | kCoverage, sig: "mix coveralls"}
	case "format":
		if hasFlag(rest, "--check-formatted") {
			return cmdInfo{kind: kFormat, sig: "mix format"}
		}
		return cmdInfo{}
	case "credo", "sobelow", "hex.audit", "deps.unlock", "xref", "deps.audit", "doctor":
		if p[0] == "deps.unlock" && !hasFlag(rest, "--check-unused") {
			return cmdInfo{kind: kInstall}
		}
		return cmdInfo{kind: kLint, sig: "mix " + p[0]}
	case "dialyzer":
		if hasFlag(rest, "--plt") {
			return cmdInfo{kind: kInstall, sig: "mix dialyzer --plt"}
		}
		return cmdInfo{kind: kType, sig: "mix dialyzer"}
	case "compile":
		return cmdInfo{kind: kBuild | kType, sig: "mix compile"}
	case "deps.get", "deps.compile", "local.hex", "local.rebar", "archive.install", "setup", "ecto.create", "ecto.setup", "ecto.migrate", "assets.setup":
		if strings.HasPrefix(p[0], "ecto.") {
			return cmdInfo{kind: kInstall | kService, sig: "mix " + p[0]}
		}
		if p[0] == "local.hex" || p[0] == "local.rebar" || p[0] == "archive.install" {
			return cmdInfo{kind: kToolchain}
		}
		return cmdInfo{kind: kInstall, sig: "mix " + p[0]}
	case "hex.publish", "hex.build", "docs":
		return cmdInfo{kind: kDeploy}
	}
	return withSig(classifyName(p[0])&^kWatch, "mix "+p[0])
}

func classifyDotnet(rest []string) cmdInfo {
	p := positional(rest, map[string]bool{"-c": true, "--configuration": true, "-f": true, "--framework": true, "-v": true, "--verbosity": true, "--logger": true, "-l": true, "--collect": true, "-r": true, "--runtime": true, "--filter": true, "-s": true, "--settings": true, "--results-directory": true, "-o": true, "--output": true, "-p": true, "--project": true, "--arch": true, "-a": true, "--blame-hang-timeout": true, "--blame-crash-dump-type": true, "--diag": true, "-bl": false, "--source": true})
	if len(p) == 0 {
		return cmdInfo{}
	}
	switch p[0] {
	case "test", "vstest":
		k := kTest
		if hasFlag(rest, "--collect") || hasArgPrefix(rest, "/p:CollectCoverage", "-p:CollectCoverage") {
			k |= kCoverage
		}
		return cmdInfo{kind: k, sig: "dotnet test"}
	case "build", "msbuild", "pack", "publish":
		if p[0] == "publish" && hasFlag(rest, "--no-build") {
			return cmdInfo{kind: kDeploy}
		}
		return cmdInfo{kind: kBuild | kType, sig: "dotnet build"}
	case "restore":
		return cmdInfo{kind: kInstall, sig: "dotnet restore"}
	case "format":
		if hasFlag(rest, "--verify-no-changes") {
			return cmdInfo{kind: kFormat | kLint, sig: "dotnet format"}
		}
		return cmdInfo{}
	case "tool":
		if len(p) > 1 && p[1] == "restore" {
			return cmdInfo{kind: kInstall, sig: "dotnet tool restore"}
		}
		if len(p) > 1 && p[1] == "run" && len(p) > 2 {
			return withSig(classifyName(p[2]), "dotnet tool run "+p[2])
		}
		return cmdInfo{kind: kToolchain}
	case "nuget":
		return cmdInfo{kind: kDeploy}
	case "workload":
		return cmdInfo{kind: kToolchain}
	case "--info", "--version", "--list-sdks":
		return cmdInfo{kind: kCIOnly}
	case "run":
		return cmdInfo{}
	}
	return cmdInfo{}
}

func classifyCMake(rest []string) cmdInfo {
	switch {
	case hasFlag(rest, "--build"):
		if hasAny(rest, "--target") {
			for i := 0; i < len(rest)-1; i++ {
				if (rest[i] == "--target" || rest[i] == "-t") && (rest[i+1] == "test" || rest[i+1] == "check") {
					return cmdInfo{kind: kTest, sig: "cmake --target test"}
				}
			}
		}
		return cmdInfo{kind: kBuild, sig: "cmake --build"}
	case hasFlag(rest, "--install"):
		return cmdInfo{kind: kInstall}
	case hasFlag(rest, "-E") && hasAny(rest, "make_directory"):
		return cmdInfo{kind: kInstall | kCIOnly, sig: "mkdir"}
	case hasFlag(rest, "-E", "-P", "--version", "--help"):
		return cmdInfo{kind: kCIOnly}
	case hasFlag(rest, "--workflow"):
		return cmdInfo{kind: kTest | kBuild, sig: "cmake --workflow"}
	}
	return cmdInfo{kind: kInstall, sig: "cmake configure"}
}

// pyToolPackages are Python packages that are tools of the environment, not
// the project's dependencies.
var pyToolPackages = map[string]bool{
	"pip": true, "setuptools": true, "wheel": true, "tox": true, "nox": true, "uv": true, "poetry": true, "hatch": true,
	"pipx": true, "pipenv": true, "pdm": true, "virtualenv": true, "tox-gh-actions": true, "tox-uv": true, "build": true,
	"twine": true, "pre-commit": true, "codecov": true, "coveralls": true, "nox-uv": true, "hatchling": true, "rye": true,
}

func classifyPip(tool string, rest []string) cmdInfo {
	p := positional(rest, map[string]bool{"-r": true, "--requirement": true, "-c": true, "--constraint": true, "-e": true, "--editable": true, "-i": true, "--index-url": true, "--extra-index-url": true, "-f": true, "--find-links": true, "-n": true, "--name": true, "-p": true, "--prefix": true, "--python": true, "--group": true, "--only-binary": true, "--no-binary": true})
	if len(p) == 0 || (p[0] != "install" && p[0] != "sync" && p[0] != "create" && p[0] != "env") {
		return cmdInfo{kind: kCIOnly}
	}
	if hasFlag(rest, "-r", "--requirement", "-e", "--editable", "--group") || hasAny(rest, ".") || hasArgPrefix(rest, ".[", "-e.", "./", "-r", "--requirement=") || tool != "pip" && (p[0] == "create" || p[0] == "env") {
		return cmdInfo{kind: kInstall, sig: "pip install"}
	}
	for _, a := range p[1:] {
		if strings.HasPrefix(a, ".") || strings.Contains(a, "requirements") {
			return cmdInfo{kind: kInstall, sig: "pip install"}
		}
	}
	// pip install pytest pytest-cov: the test dependencies, unless every
	// package is an environment manager (tox, poetry, uv, pip itself).
	for _, a := range p[1:] {
		name := strings.ToLower(pyReqNameRe.FindString(a))
		if name != "" && !pyToolPackages[strings.TrimSpace(name)] {
			return cmdInfo{kind: kInstall, sig: "pip install"}
		}
	}
	return cmdInfo{kind: kToolchain, sig: "pip install"}
}

func classifyDocker(tool string, rest []string) cmdInfo {
	p := positional(rest, map[string]bool{"-f": true, "--file": true, "-p": true, "--project-name": true, "--profile": true, "--env-file": true, "-t": true, "--tag": true, "--name": true, "-e": true, "-v": true, "-w": true, "--network": true, "--platform": true})
	if tool == "docker" && len(p) > 0 && p[0] == "compose" {
		p = p[1:]
		tool = "docker-compose"
	}
	if len(p) == 0 {
		return cmdInfo{kind: kCIOnly}
	}
	switch p[0] {
	case "up", "start", "create":
		return cmdInfo{kind: kService, sig: "docker compose up"}
	case "run", "exec":
		if tool == "docker-compose" && len(p) > 2 {
			return cmdInfo{kind: kService | (classifier{}.classify(p[2:], ".").kind & (gateKinds | kE2E)), sig: "docker compose run"}
		}
		if hasFlag(rest, "-d", "--detach") {
			return cmdInfo{kind: kService, sig: "docker run"}
		}
		return cmdInfo{kind: kCIOnly}
	case "push", "login", "tag", "buildx":
		if p[0] == "buildx" && len(p) > 1 && p[1] == "build" && !hasFlag(rest, "--push") {
			return cmdInfo{kind: kCIOnly}
		}
		return cmdInfo{kind: kDeploy}
	}
	return cmdInfo{kind: kCIOnly}
}

func (c classifier) classifyShell(rest []string, dir string, depth int) cmdInfo {
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "-c" && i+1 < len(rest) {
			if depth >= maxScriptDepth {
				return cmdInfo{}
			}
			return c.classifyScript(rest[i+1], dir, depth+1)
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		return c.classifyFile(a, dir, depth)
	}
	return cmdInfo{kind: kCIOnly}
}

// classifyScript classifies a whole script body by the union of its commands.
func (c classifier) classifyScript(body, dir string, depth int) cmdInfo {
	cmds, err := splitScript(body)
	if err != nil {
		return cmdInfo{}
	}
	var out cmdInfo
	var sigs []string
	for _, sc := range cmds {
		d := join(dir, sc.dir)
		info := c.classifyDepth(sc.args, d, depth)
		if sc.orFallback {
			continue
		}
		if info.kind&gateKinds != 0 {
			sigs = append(sigs, info.sig)
			out.inners = append(out.inners, info.sig)
			out.inners = append(out.inners, info.inners...)
		}
		out.kind |= info.kind & (gateKinds | kWatch | kE2E | kService | kDeploy | kInstall | kToolchain)
		if out.note == "" {
			out.note = info.note
		}
	}
	if len(sigs) == 1 {
		out.sig = sigs[0]
	}
	return out
}

// resolveScript classifies a named script of a runner by its name and body.
func (c classifier) resolveScript(runner, dir, name string, depth int) (cmdInfo, bool) {
	if c.lookup == nil || depth >= maxScriptDepth {
		return cmdInfo{}, false
	}
	body, ok := c.lookup.script(runner, dir, name)
	if !ok {
		return cmdInfo{}, false
	}
	info := c.classifyScript(body, dir, depth+1)
	return info, true
}

// scriptInfo gives the kind of a named script: by its body when it can be
// read, by its name otherwise. Composite names (ci, check) need the body.
func (c classifier) scriptInfo(runner, sig, dir, name string, depth int) cmdInfo {
	byName := classifyName(name)
	body, ok := c.resolveScript(runner, dir, name, depth)
	out := cmdInfo{sig: sig, runner: runner, script: name}
	body.kind &^= kInstall | kToolchain
	switch {
	case ok && body.kind != 0:
		out.kind = body.kind
		out.note = body.note
		out.inner = body.sig
		out.inners = body.inners
		if byName.has(kCoverage) {
			out.kind |= kCoverage
		}
		if byName != 0 && !byName.has(kWatch) && body.kind&gateKinds == 0 {
			out.kind |= byName
		}
	case ok:
		out.kind = byName &^ kWatch
	case isCompositeName(name):
		out.kind = kTest // ci/check scripts run the tests, almost always
	default:
		out.kind = byName
	}
	return out
}

func (c classifier) classifyNode(pm string, rest []string, dir string, depth int) cmdInfo {
	valued := map[string]bool{"--filter": true, "-F": true, "--prefix": true, "-C": true, "--dir": true, "--cwd": true, "-w": true, "--workspace": true, "--scope": true}
	if pm == "yarn" && len(rest) > 0 && rest[0] == "workspace" && len(rest) > 2 {
		inner := c.classifyNode(pm, rest[2:], dir, depth)
		return inner
	}
	p := positional(rest, valued)
	recursive := hasFlag(rest, "-r", "--recursive", "--workspaces", "-ws", "--filter", "-F", "--workspace", "-w")
	if len(p) == 0 {
		if pm == "yarn" || pm == "bun" {
			return cmdInfo{kind: kInstall, sig: pm + " install"}
		}
		return cmdInfo{}
	}
	sub := p[0]
	if (sub == "install" || sub == "i") && len(p) > 1 || sub == "add" || sub == "remove" || sub == "rm" || sub == "uninstall" || sub == "un" {
		if !hasFlag(rest, "-g", "--global") {
			// npm install --save-dev pkg@1, yarn add: changes the manifest
			// for one CI cell, not an install of the project's dependencies.
			return cmdInfo{kind: kCIOnly, note: "changes the manifest"}
		}
	}
	switch sub {
	case "install", "i", "ci", "add", "rebuild", "link":
		if hasFlag(rest, "-g", "--global") || sub == "add" && hasFlag(rest, "--global") {
			return cmdInfo{kind: kToolchain}
		}
		if pm == "npm" && sub == "i" || sub == "install" || sub == "ci" {
			if pm == "npm" && hasFlag(rest, "-g", "--global") {
				return cmdInfo{kind: kToolchain}
			}
		}
		return cmdInfo{kind: kInstall, sig: pm + " install"}
	case "global":
		return cmdInfo{kind: kToolchain}
	case "publish", "pack", "version", "release", "deploy":
		if sub == "pack" {
			return cmdInfo{kind: kBuild, sig: pm + " pack"}
		}
		return cmdInfo{kind: kDeploy}
	case "audit", "outdated", "ls", "list", "config", "cache", "store", "why", "info", "view", "whoami", "--version", "-v", "set", "prune", "dedupe", "licenses", "doctor", "fetch":
		if sub == "fetch" {
			return cmdInfo{kind: kInstall, sig: pm + " fetch"}
		}
		return cmdInfo{kind: kCIOnly}
	case "exec", "dlx", "x":
		return c.classifyDepth(p[1:], dir, depth+1)
	case "workspaces":
		if pm == "yarn" {
			// yarn workspaces run test | yarn workspaces foreach -A run test
			q := p[1:]
			for len(q) > 0 && (q[0] == "foreach" || q[0] == "run") {
				q = q[1:]
			}
			if len(q) > 0 {
				k := classifyName(q[0])
				return cmdInfo{kind: k &^ kWatch, sig: "yarn " + q[0], runner: "npm", script: q[0]}
			}
		}
		return cmdInfo{}
	case "test", "t", "tst":
		if pm == "bun" && sub == "test" {
			k := kTest
			if hasFlag(rest, "--coverage") {
				k |= kCoverage
			}
			if hasFlag(rest, "--watch") {
				k |= kWatch
			}
			return cmdInfo{kind: k, sig: "bun test", note: "`bun test` runs Bun's built-in test runner, not the package.json test script (that is `bun run test`)"}
		}
		info := c.scriptInfo("npm", pm+" test", dir, "test", depth)
		if recursive {
			info.sig = pm + " -r test"
		}
		return c.nodeScriptTraps(info, pm, dir, "test")
	case "run", "run-script", "rum", "urn":
		if len(p) < 2 {
			return cmdInfo{kind: kCIOnly}
		}
		name := p[1]
		sig := pm + " " + name
		if pm == "bun" {
			sig = "bun run " + name
		}
		if name == "test" && pm != "bun" {
			sig = pm + " test"
		}
		info := c.scriptInfo("npm", sig, dir, name, depth)
		if recursive {
			info.sig = pm + " -r " + name
		}
		return c.nodeScriptTraps(info, pm, dir, name)
	}
	if pm == "npm" {
		switch sub {
		case "start", "restart", "stop":
			return cmdInfo{kind: kWatch, sig: "npm " + sub}
		}
		return cmdInfo{}
	}
	if pm == "bun" {
		// bun x.ts runs a file; bun <script> runs a script when one exists.
		if strings.Contains(sub, ".") || strings.Contains(sub, "/") {
			return withSig(nameKindOfPath(sub), "bun "+sub)
		}
	}
	// pnpm/yarn/bun shorthand: `pnpm lint` runs the lint script, or a binary.
	if c.lookup != nil {
		if _, ok := c.lookup.script("npm", dir, sub); ok {
			sig := pm + " " + sub
			if pm == "bun" {
				sig = "bun run " + sub
			}
			info := c.scriptInfo("npm", sig, dir, sub, depth)
			if recursive {
				info.sig = pm + " -r " + sub
			}
			return c.nodeScriptTraps(info, pm, dir, sub)
		}
	}
	// A binary from node_modules/.bin (pnpm vitest, yarn eslint .).
	inner := c.classifyDepth(p, dir, depth+1)
	if inner.kind != 0 {
		return inner
	}
	info := cmdInfo{kind: classifyName(sub), sig: pm + " " + sub, runner: "npm", script: sub}
	if recursive {
		info.sig = pm + " -r " + sub
	}
	return info
}

// defaultNpmTest is the test script `npm init` writes: it always fails.
const defaultNpmTest = `echo "Error: no test specified" && exit 1`

func (c classifier) nodeScriptTraps(info cmdInfo, pm, dir, name string) cmdInfo {
	if c.lookup == nil {
		return info
	}
	body, ok := c.lookup.script("npm", dir, name)
	if !ok {
		return info
	}
	if strings.Contains(body, "no test specified") && strings.Contains(body, "exit 1") {
		info.kind = 0
		info.note = "the " + name + " script is npm init's placeholder (`" + defaultNpmTest + "`): it always fails"
		return info
	}
	if info.kind.has(kWatch) && info.fix == "" {
		switch {
		case strings.Contains(body, "react-scripts test") || strings.Contains(body, "craco test"):
			info.fix = "CI=true " + pm + " " + runWord(pm, name)
		case strings.Contains(body, "jest"):
			info.fix = pm + " " + runWord(pm, name) + " -- --watchAll=false"
		case strings.Contains(body, "vitest"):
			info.fix = pm + " " + runWord(pm, name) + " -- --run"
		case strings.Contains(body, "ng test"):
			info.fix = pm + " " + runWord(pm, name) + " -- --watch=false"
		case strings.Contains(body, "karma"):
			info.fix = pm + " " + runWord(pm, name) + " -- --single-run"
		}
	} else if info.fix != "" {
		info.fix = "" // the fix of an inner command does not apply to the script
	}
	return info
}

// runWord is how a package manager runs a script: npm test, npm run lint,
// pnpm lint, bun run test.
func runWord(pm, name string) string {
	if name == "test" && pm != "bun" {
		return "test"
	}
	if pm == "npm" || pm == "bun" {
		return "run " + name
	}
	return name
}

func (c classifier) classifyDeno(rest []string, dir string, depth int) cmdInfo {
	p := positional(rest, map[string]bool{"--config": true, "-c": true, "--import-map": true, "--lock": true, "--reporter": true, "--filter": true, "--coverage": false})
	if len(p) == 0 {
		return cmdInfo{}
	}
	switch p[0] {
	case "test":
		k := kTest
		if hasArgPrefix(rest, "--coverage") {
			k |= kCoverage
		}
		if hasFlag(rest, "--watch") {
			k |= kWatch
		}
		return cmdInfo{kind: k, sig: "deno test"}
	case "lint":
		return cmdInfo{kind: kLint, sig: "deno lint"}
	case "fmt":
		if hasFlag(rest, "--check") {
			return cmdInfo{kind: kFormat, sig: "deno fmt"}
		}
		return cmdInfo{}
	case "check":
		return cmdInfo{kind: kType, sig: "deno check"}
	case "task":
		if len(p) > 1 {
			return c.scriptInfo("deno", "deno task "+p[1], dir, p[1], depth)
		}
	case "install", "cache":
		return cmdInfo{kind: kInstall, sig: "deno install"}
	case "compile", "bundle":
		return cmdInfo{kind: kBuild, sig: "deno " + p[0]}
	case "publish":
		return cmdInfo{kind: kDeploy}
	case "coverage":
		return cmdInfo{kind: kCoverage, sig: "deno coverage"}
	}
	return cmdInfo{}
}

func (c classifier) classifyPython(rest []string, dir string, depth int) cmdInfo {
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "-m" && i+1 < len(rest):
			mod := rest[i+1]
			tail := rest[i+2:]
			switch mod {
			case "pytest", "py.test":
				k := kTest
				if hasArgPrefix(tail, "--cov") {
					k |= kCoverage
				}
				return cmdInfo{kind: k, sig: "pytest"}
			case "unittest":
				return cmdInfo{kind: kTest, sig: "python -m unittest"}
			case "pip":
				return classifyPip("pip", tail)
			case "build":
				return cmdInfo{kind: kBuild, sig: "python -m build"}
			case "twine":
				return cmdInfo{kind: kDeploy}
			case "venv", "virtualenv", "ensurepip", "site", "uv", "pipx":
				if mod == "uv" {
					return c.classifyPyRunner("uv", tail, dir, depth)
				}
				return cmdInfo{kind: kCIOnly}
			case "nox":
				return classifyNox(tail)
			case "tox":
				return c.classifyTox(tail)
			case "coverage":
				return c.classifyDepth(append([]string{"coverage"}, tail...), dir, depth+1)
			case "mypy", "pyright", "pytype":
				return cmdInfo{kind: kType, sig: mod}
			case "ruff", "flake8", "pylint", "black", "isort", "pycodestyle", "pydocstyle", "bandit":
				return c.classifyDepth(append([]string{mod}, tail...), dir, depth+1)
			case "pre_commit":
				return c.classifyDepth(append([]string{"pre-commit"}, tail...), dir, depth+1)
			case "django", "sphinx", "mkdocs":
				return cmdInfo{}
			}
			return withSig(classifyName(mod)&^kWatch, "python -m "+mod)
		case a == "-c":
			return cmdInfo{kind: kCIOnly}
		case strings.HasPrefix(a, "-"):
			continue
		default:
			base := path.Base(a)
			switch {
			case base == "setup.py":
				if hasAny(rest[i+1:], "test", "pytest") {
					return cmdInfo{kind: kTest, sig: "python setup.py test"}
				}
				if hasAny(rest[i+1:], "build", "build_ext", "sdist", "bdist_wheel", "develop", "install") {
					return cmdInfo{kind: kBuild | kInstall, sig: "python setup.py build"}
				}
				return cmdInfo{}
			case base == "manage.py":
				if hasAny(rest[i+1:], "test") {
					return cmdInfo{kind: kTest, sig: "python manage.py test"}
				}
				if hasAny(rest[i+1:], "migrate", "collectstatic", "check") {
					if hasAny(rest[i+1:], "check") {
						return cmdInfo{kind: kLint, sig: "python manage.py check"}
					}
					return cmdInfo{kind: kInstall | kService, sig: "python manage.py migrate"}
				}
				return cmdInfo{}
			}
			return withSig(nameKindOfPath(a), "python "+clean(a))
		}
	}
	return cmdInfo{kind: kCIOnly}
}

func (c classifier) classifyTox(rest []string) cmdInfo {
	envs := toxEnvs(rest)
	if len(envs) == 0 {
		p := positional(rest, map[string]bool{"-c": true, "--conf": true, "-f": true, "-m": true, "--workdir": true, "-x": true})
		if len(p) > 0 && (p[0] == "run" || p[0] == "r" || p[0] == "run-parallel" || p[0] == "p") || len(p) == 0 {
			return cmdInfo{kind: kTest, sig: "tox"}
		}
		return cmdInfo{kind: kCIOnly}
	}
	var k kind
	for _, e := range envs {
		k |= toxEnvKind(e)
	}
	return cmdInfo{kind: k, sig: "tox"}
}

// toxEnvs returns the environments named with -e.
func toxEnvs(rest []string) []string {
	var envs []string
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case (a == "-e" || a == "--env" || a == "-s" || a == "--session" || a == "--sessions") && i+1 < len(rest):
			envs = append(envs, strings.Split(rest[i+1], ",")...)
			i++
		case strings.HasPrefix(a, "-e") && len(a) > 2 && !strings.HasPrefix(a, "--"):
			envs = append(envs, strings.Split(strings.TrimPrefix(a[2:], "="), ",")...)
		case strings.HasPrefix(a, "--env="):
			envs = append(envs, strings.Split(a[len("--env="):], ",")...)
		}
	}
	return envs
}

var pyEnvRe = lazyre.New(`^(py|pypy)[0-9.]*$`)

// toxEnvKind classifies a tox environment or nox session by name: py312 and
// py312-django42 are tests, lint is lint.
func toxEnvKind(e string) kind {
	e = strings.ToLower(e)
	factors := strings.Split(e, "-")
	for _, f := range factors {
		if pyEnvRe.MatchString(f) || f == "py" {
			return kTest
		}
	}
	if k := classifyName(e); k != 0 {
		return k &^ kWatch
	}
	return 0
}

func classifyNox(rest []string) cmdInfo {
	sessions := toxEnvs(rest)
	for i := 0; i < len(rest); i++ {
		if (rest[i] == "-t" || rest[i] == "--tags" || rest[i] == "-k") && i+1 < len(rest) {
			sessions = append(sessions, rest[i+1])
			i++
		}
	}
	if len(sessions) == 0 {
		return cmdInfo{kind: kTest, sig: "nox"}
	}
	var k kind
	for _, s := range sessions {
		if i := strings.Index(s, "("); i > 0 {
			s = s[:i]
		}
		if i := strings.Index(s, "-"); i > 0 && pyEnvRe.MatchString(s[i+1:]) {
			s = s[:i]
		}
		k |= toxEnvKind(s)
	}
	return cmdInfo{kind: k, sig: "nox"}
}

func (c classifier) classifyHatch(rest []string, dir string, depth int) cmdInfo {
	p := positional(rest, map[string]bool{"-e": true, "--env": true, "-i": true, "--include": true, "-x": true, "--exclude": true, "--python": true, "-py": true})
	if len(p) == 0 {
		return cmdInfo{}
	}
	switch p[0] {
	case "test":
		k := kTest
		if hasFlag(rest, "--cover", "-c") {
			k |= kCoverage
		}
		return cmdInfo{kind: k, sig: "hatch test"}
	case "fmt":
		if hasFlag(rest, "--check") {
			return cmdInfo{kind: kLint | kFormat, sig: "hatch fmt"}
		}
		return cmdInfo{}
	case "build":
		return cmdInfo{kind: kBuild, sig: "hatch build"}
	case "publish":
		return cmdInfo{kind: kDeploy}
	case "env":
		return cmdInfo{kind: kInstall, sig: "hatch env create"}
	case "run":
		if len(p) < 2 {
			return cmdInfo{}
		}
		// hatch run test:cov runs script cov of env test; hatch run cov
		// runs it in the default env.
		env, name, scoped := strings.Cut(p[1], ":")
		if !scoped {
			name, env = env, ""
		}
		for _, key := range []string{p[1], name} {
			if c.lookup == nil {
				break
			}
			if body, ok := c.lookup.script("hatch", dir, key); ok {
				info := c.scriptInfo("hatch", "hatch run "+p[1], dir, key, depth)
				if info.kind == 0 && strings.TrimSpace(body) == "" {
					info.kind = classifyName(env) &^ (kWatch | kInstall)
				}
				return info
			}
		}
		inner := c.classifyDepth(p[1:], dir, depth+1)
		if inner.kind != 0 {
			return inner
		}
		k := classifyName(name) | classifyName(env)
		return cmdInfo{kind: k &^ (kWatch | kInstall), sig: "hatch run " + p[1]}
	}
	return cmdInfo{}
}

func (c classifier) classifyPyRunner(tool string, rest []string, dir string, depth int) cmdInfo {
	p := positional(rest, map[string]bool{"--with": true, "--python": true, "-p": true, "--extra": true, "--group": true, "--only-group": true, "--package": true, "--directory": true, "--project": true, "-E": true, "--extras": true, "--with-requirements": true, "--env-file": true, "--from": true, "--only": true, "--without": true, "-G": true})
	if len(p) == 0 {
		return cmdInfo{}
	}
	if tool == "uvx" || tool == "pipx" && p[0] == "run" {
		if tool == "pipx" {
			p = p[1:]
		}
		return c.classifyDepth(p, dir, depth+1)
	}
	switch p[0] {
	case "run":
		if len(p) < 2 {
			return cmdInfo{}
		}
		if tool == "pdm" {
			if _, ok := c.resolveScript("pdm", dir, p[1], depth); ok {
				return c.scriptInfo("pdm", "pdm run "+p[1], dir, p[1], depth)
			}
		}
		if tool == "poetry" {
			if _, ok := c.resolveScript("poe", dir, p[1], depth); ok {
				return c.scriptInfo("poe", "poe "+p[1], dir, p[1], depth)
			}
		}
		inner := c.classifyDepth(dropRunnerFlags(rest[indexOf(rest, "run")+1:], map[string]bool{"--with": true, "--python": true, "-p": true, "--extra": true, "--group": true, "--package": true, "--directory": true, "--project": true, "--env-file": true, "--only-group": true, "--with-requirements": true}), dir, depth+1)
		return inner
	case "sync", "install", "lock", "venv", "add":
		if tool == "pipx" || tool == "uv" && p[0] == "tool" {
			return cmdInfo{kind: kToolchain}
		}
		return cmdInfo{kind: kInstall, sig: tool + " " + p[0]}
	case "pip":
		return classifyPip("pip", p[1:])
	case "tool":
		if len(p) > 1 && p[1] == "run" {
			return c.classifyDepth(p[2:], dir, depth+1)
		}
		return cmdInfo{kind: kToolchain}
	case "build":
		return cmdInfo{kind: kBuild, sig: tool + " build"}
	case "publish", "upload":
		return cmdInfo{kind: kDeploy}
	case "check":
		if tool == "poetry" {
			return cmdInfo{kind: kLint, sig: "poetry check"}
		}
	case "test":
		if tool == "rye" || tool == "pdm" {
			return cmdInfo{kind: kTest, sig: "pytest"}
		}
	case "lint":
		return cmdInfo{kind: kLint, sig: tool + " lint"}
	case "self", "config", "env", "python", "cache", "--version", "version", "show", "export":
		return cmdInfo{kind: kCIOnly}
	}
	if tool == "pdm" {
		// pdm <script>
		if _, ok := c.resolveScript("pdm", dir, p[0], depth); ok {
			return c.scriptInfo("pdm", "pdm run "+p[0], dir, p[0], depth)
		}
	}
	return cmdInfo{}
}

func indexOf(args []string, w string) int {
	for i, a := range args {
		if a == w {
			return i
		}
	}
	return len(args) - 1
}

func (c classifier) classifyBundle(rest []string, dir string, depth int) cmdInfo {
	p := positional(rest, map[string]bool{"--gemfile": true, "--jobs": true, "-j": true, "--retry": true, "--path": true, "--without": true, "--with": true})
	if len(p) == 0 {
		return cmdInfo{kind: kInstall, sig: "bundle install"}
	}
	switch p[0] {
	case "install", "update", "config", "lock", "check", "binstubs", "cache", "package":
		if p[0] == "config" {
			return cmdInfo{kind: kCIOnly}
		}
		return cmdInfo{kind: kInstall, sig: "bundle install"}
	case "exec", "ex":
		return c.classifyDepth(p[1:], dir, depth+1)
	case "audit":
		return cmdInfo{kind: kLint, sig: "bundle audit"}
	}
	return cmdInfo{}
}

func (c classifier) classifyRake(rest []string, dir string, depth int) cmdInfo {
	p := positional(rest, map[string]bool{"-f": true, "--rakefile": true, "-I": true, "-r": true})
	tasks := []string{}
	for _, a := range p {
		if isAssignment(a) {
			continue
		}
		tasks = append(tasks, a)
	}
	if len(tasks) == 0 {
		tasks = []string{"default"}
	}
	var k kind
	for _, t := range tasks {
		name := t
		if i := strings.Index(name, "["); i > 0 {
			name = name[:i]
		}
		if i := strings.LastIndex(name, ":"); i >= 0 && i < len(name)-1 {
			// spec:unit, test:system
			if nk := classifyName(name[:i]); nk.has(kTest) {
				k |= nk
				continue
			}
			name = name[i+1:]
		}
		if name == "default" {
			if info, ok := c.resolveScript("rake", dir, "default", depth); ok && info.kind != 0 {
				k |= info.kind
			} else {
				k |= kTest // the default rake task runs the tests in almost every gem
			}
			continue
		}
		if info, ok := c.resolveScript("rake", dir, name, depth); ok && info.kind != 0 {
			k |= info.kind
			continue
		}
		k |= classifyName(name) &^ kWatch
	}
	if k == 0 {
		return cmdInfo{}
	}
	return cmdInfo{kind: k, sig: "rake " + strings.Join(tasks, " "), runner: "rake", script: strings.Join(tasks, " ")}
}

func (c classifier) classifyComposer(rest []string, dir string, depth int) cmdInfo {
	p := positional(rest, map[string]bool{"-d": true, "--working-dir": true, "--timeout": true})
	if len(p) == 0 {
		return cmdInfo{}
	}
	switch p[0] {
	case "require", "remove", "config":
		if hasFlag(rest, "--global", "-g") || p[0] == "config" {
			return cmdInfo{kind: kCIOnly}
		}
		return cmdInfo{kind: kCIOnly, note: "changes composer.json"}
	case "install", "update", "i", "u", "dump-autoload", "dumpautoload":
		return cmdInfo{kind: kInstall, sig: "composer install"}
	case "validate", "audit", "normalize", "check-platform-reqs", "outdated", "diagnose", "self-update", "global", "show":
		if p[0] == "validate" || p[0] == "normalize" {
			return cmdInfo{kind: kLint, sig: "composer " + p[0]}
		}
		if p[0] == "global" {
			return cmdInfo{kind: kToolchain}
		}
		return cmdInfo{kind: kCIOnly}
	case "run-script", "run", "exec":
		if len(p) < 2 {
			return cmdInfo{}
		}
		if p[0] == "exec" {
			return c.classifyDepth(p[1:], dir, depth+1)
		}
		return c.scriptInfo("composer", "composer "+p[1], dir, p[1], depth)
	}
	return c.scriptInfo("composer", "composer "+p[0], dir, p[0], depth)
}

func (c classifier) classifyMake(rest []string, dir string, depth int) cmdInfo {
	valued := map[string]bool{"-C": true, "-f": true, "--file": true, "-j": true, "--jobs": true, "-l": true, "-o": true, "-W": true, "-I": true}
	d := dir
	for i := 0; i < len(rest)-1; i++ {
		if rest[i] == "-C" || rest[i] == "--directory" {
			d = join(dir, rest[i+1])
		}
	}
	var targets []string
	for _, a := range positional(rest, valued) {
		if !isAssignment(a) {
			targets = append(targets, a)
		}
	}
	if len(targets) == 0 {
		targets = []string{""}
	}
	var k kind
	var note string
	for _, t := range targets {
		name := t
		if name == "" {
			// Plain `make` runs the default goal, which by convention
			// builds; it tests only when the goal is named for it.
			name = c.defaultTarget("make", d)
			if nk := classifyName(name); nk&gateKinds == 0 || nk.has(kBuild) {
				k |= kBuild
				continue
			}
		}
		if name == "" {
			k |= kBuild
			continue
		}
		info := c.scriptInfo("make", "make "+t, d, name, depth)
		if t == "" && info.kind == 0 {
			info.kind = kBuild
		}
		if name == "check" && info.kind == 0 {
			info.kind = kTest
		}
		k |= info.kind
		if note == "" {
			note = info.note
		}
	}
	sig := strings.TrimSpace("make " + strings.Join(targets, " "))
	return cmdInfo{kind: k, sig: sig, runner: "make", script: strings.Join(targets, " "), note: note}
}

// defaultTarget is the first target of a Makefile (what plain `make` runs).
func (c classifier) defaultTarget(runner, dir string) string {
	if c.lookup == nil {
		return ""
	}
	name, _ := c.lookup.script(runner, dir, "\x00default")
	return name
}

func (c classifier) classifyRunner(tool string, rest []string, dir string, depth int) cmdInfo {
	runner := tool
	if tool == "go-task" {
		runner = "task"
	}
	if tool == "poe" {
		runner = "poe"
	}
	p := positional(rest, map[string]bool{"-d": true, "--dir": true, "-t": true, "--taskfile": true, "-f": true, "--justfile": true, "--working-directory": true, "--set": true, "-c": true, "--collection": true})
	var names []string
	for _, a := range p {
		if !isAssignment(a) {
			names = append(names, a)
		}
	}
	if len(names) == 0 {
		names = []string{c.defaultTarget(runner, dir)}
		if names[0] == "" {
			names[0] = "default"
		}
	}
	name := names[0]
	if tool == "just" || tool == "task" || tool == "go-task" || tool == "mage" {
		// The first name is the recipe; the rest are its arguments.
		names = names[:1]
	}
	var k kind
	var note string
	for _, n := range names {
		info := c.scriptInfo(runner, tool+" "+n, dir, n, depth)
		k |= info.kind
		if note == "" {
			note = info.note
		}
	}
	return cmdInfo{kind: k &^ kWatch, sig: tool + " " + name, runner: runner, script: name, note: note}
}

// timeoutDurationRe is the duration argument of timeout(1).
var timeoutDurationRe = lazyre.New(`^[0-9.]+[smhd]?$`)
