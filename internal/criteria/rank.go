package criteria

import (
	"slices"
	"strings"
	"unicode"

	"github.com/aiwg/agent-loop/internal/shellcmd"
)

// The role of a CI job: the gate is the job that runs the project's own
// suite on the default matrix entry; a variant runs it on another platform
// or toolchain, runs a part or another kind of suite (integration, browser,
// leak detection), or tests something else (another repository, a built
// artifact, the documentation site). The role is decided from what the job
// runs and its context, never from its position in the file.

// variantWords are the words of a job's id, name or workflow that say it
// tests a variant, with what they mean.
var variantWords = map[string]string{}

func init() {
	for what, words := range map[string][]string{
		"another platform":             {"windows", "win", "win32", "win64", "macos", "mac", "osx", "darwin", "ios", "android", "freebsd", "netbsd", "openbsd", "bsd", "solaris", "illumos", "wasm", "wasi", "wasm32", "emscripten", "arm", "arm64", "aarch64", "armv7", "386", "i386", "i686", "32bit", "s390x", "ppc64le", "ppc64", "riscv", "riscv64", "musl", "alpine", "cross", "qemu", "msvc", "mingw", "cygwin"},
		"another toolchain":            {"nightly", "beta", "canary", "experimental", "msrv", "minimal", "minimum", "min", "lowest", "oldest", "old", "legacy", "prerelease", "pypy", "freethreaded", "nogil", "jruby", "truffleruby", "head", "future"},
		"another kind of suite":        {"e2e", "integration", "integ", "acceptance", "smoke", "browser", "browsers", "playwright", "cypress", "selenium", "puppeteer", "webdriver", "visual", "a11y", "bench", "benchmark", "benchmarks", "perf", "performance", "fuzz", "fuzzing", "stress", "soak", "leak", "leaks", "mutation", "flaky", "slow", "long", "failpoint", "failpoints", "chaos", "sanitizer", "sanitizers", "sanitize", "asan", "tsan", "msan", "ubsan", "lsan", "valgrind", "miri", "memcheck", "intl", "upgrade", "downgrade", "tools"},
		"something else than the code": {"downstream", "dependents", "ecosystem", "external", "compat", "compatibility", "interop", "docs", "doc", "documentation", "website", "site", "examples", "example", "container", "containers", "docker", "graalvm", "native", "production", "prod", "bundle", "bundler", "bundlers", "dist", "packaging", "release", "semver", "wheel", "wheels", "sdist", "install", "installation", "standalone", "offline", "vendored", "deps", "lockfile", "citgm"},
	} {
		for _, w := range words {
			variantWords[w] = what
		}
	}
}

// words splits a name into lower-case words at punctuation, white space,
// digits-to-letters boundaries and camelCase: "nativeTest" -> native, test;
// "test_go_386" -> test, go, 386.
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if i > 0 && len(cur) > 0 {
				prev := rs[i-1]
				if unicode.IsUpper(r) && unicode.IsLower(prev) {
					flush()
				}
			}
			cur = append(cur, r)
		default:
			flush()
		}
	}
	flush()
	return out
}

// variantWord returns the first word of name that names a variant, and
// what it means.
func variantWord(name string) (string, string) {
	ws := words(name)
	for i, w := range ws {
		if w == "integration" && i > 0 && ws[i-1] == "continuous" {
			continue // "Continuous Integration" is CI itself
		}
		if what, ok := variantWords[w]; ok {
			return w, what
		}
	}
	return "", ""
}

// jobVariant says why a CI job tests a variant rather than the project's
// own suite on the default entry ("" when it is a gate job). linuxJobs:
// its workflow has Linux jobs, so another platform is a variant (a
// workflow that runs only on macOS tests there).
func jobVariant(j *ciJob, a *jobAnalysis, cat kind, linuxJobs bool, rootEcos []string) string {
	if len(j.otherRepos) > 0 {
		return "the job checks out or clones another repository (" + j.otherRepos[0] + ") and tests it"
	}
	if a != nil && a.windows && linuxJobs {
		return "the job runs on " + j.runsOn + ", not Linux"
	}
	if j.artifacts {
		return "the job tests what another job built (it downloads an artifact first)"
	}
	base := j.file
	if i := strings.LastIndex(base, "/"); i >= 0 {
		base = base[i+1:]
	}
	base = strings.TrimSuffix(strings.TrimSuffix(base, ".yml"), ".yaml")
	// The job's display name is what its authors read; its id only when
	// it has none.
	jobName := firstNonEmpty(j.name, j.id)
	names := []struct{ what, name string }{{"job", jobName}, {"workflow", j.workflow}, {"workflow file", base}}
	for _, n := range names {
		if w, what := variantWord(n.name); w != "" {
			return "the " + n.what + " name " + quote(n.name) + " says it tests " + what + " (" + w + ")"
		}
	}
	if len(rootEcos) > 0 {
		// A workflow named after a language the root's manifests do not
		// use tests that part of a polyglot project (the Rust components
		// of a C library).
		for _, n := range names[1:] {
			for _, w := range words(n.name) {
				if eco, ok := ecosystemWords[w]; ok && !slices.Contains(rootEcos, eco) && !(eco == "jvm" && (slices.Contains(rootEcos, "maven") || slices.Contains(rootEcos, "gradle"))) {
					return "the " + n.what + " name " + quote(n.name) + " says it tests the " + w + " part of the project, which the root's manifests do not use"
				}
			}
		}
	}
	for _, n := range names {
		if cat != kTest {
			break // a lint job's name says lint: that is its gate
		}
		// A job or workflow named after a static check (phpstan, lint,
		// typecheck) runs the suite only as a means to that end.
		if k := shellcmd.ClassifyName(n.name); k&(kLint|kFormat|kType) != 0 && !k.Has(kTest) {
			return "the " + n.what + " name " + quote(n.name) + " says it is a static check, not the test suite"
		}
	}
	return ""
}

// stepVariant says why the gate step of a job runs a variant of the suite:
// a named script whose name says so (test:bun, test-leak, nativeTest), or
// an end-to-end suite.
func stepVariant(g jobCmd) string {
	if g.info.kind.Has(kE2E) {
		return "an end-to-end suite"
	}
	// A step's name says what kind of suite it runs ("Integration tests");
	// its other words (install, build, docs) describe the step's chores.
	if w, what := variantWord(g.step.name); w != "" && what == "another kind of suite" && w != "update" && w != "tools" {
		return "the step name " + quote(g.step.name) + " says it runs " + what + " (" + w + ")"
	}
	if s := g.info.script; s != "" {
		if w, what := variantWord(s); w != "" {
			return "the script " + quote(s) + " runs " + what + " (" + w + ")"
		}
		for _, w := range words(s) {
			if runtimeWords[w] {
				return "the script " + quote(s) + " runs the suite on one runtime (" + w + ")"
			}
		}
	}
	// Gradle and Maven tasks named in the arguments: :graalvm-tests:nativeTest.
	args := shellcmd.StripWrappers(g.args).Args
	if len(args) > 0 && (strings.HasPrefix(g.info.sig, "gradle") || strings.HasPrefix(g.info.sig, "mvn")) {
		for _, a := range args[1:] {
			if strings.HasPrefix(a, "-") {
				continue
			}
			if w, what := variantWord(a); w != "" {
				return "the task " + quote(a) + " runs " + what + " (" + w + ")"
			}
		}
	}
	return ""
}

// ecosystemWords name a language or its toolchain in a workflow's name.
var ecosystemWords = map[string]string{
	"rust": "rust", "cargo": "rust", "python": "python", "pytest": "python", "node": "node", "nodejs": "node", "npm": "node",
	"javascript": "node", "typescript": "node", "go": "go", "golang": "go", "java": "jvm", "kotlin": "jvm", "jvm": "jvm",
	"ruby": "ruby", "php": "php", "dotnet": "dotnet", "csharp": "dotnet", "elixir": "elixir",
}

// runtimeWords name one JavaScript runtime of several: a script named after
// one (test:bun) runs the suite there only.
var runtimeWords = map[string]bool{"bun": true, "deno": true, "node": true, "workerd": true, "edge": true, "lambda": true, "fastly": true, "browser": true}

func quote(s string) string { return "\"" + s + "\"" }
