package shellcmd

import "strings"

// runners maps the signature of a test command to its runner.
var runners = map[string]string{
	"go test": "go test", "pytest": "pytest", "python -m unittest": "unittest", "python manage.py test": "django",
	"jest": "jest", "vitest": "vitest", "mocha": "mocha", "ava": "ava", "tap": "tap", "borp": "borp", "tape": "tape", "uvu": "uvu",
	"jasmine": "jasmine", "karma": "karma", "playwright": "playwright", "cypress": "cypress", "wdio": "wdio",
	"testcafe": "testcafe", "qunit": "qunit", "lab": "lab", "web-test-runner": "web-test-runner", "wtr": "web-test-runner",
	"node --test": "node --test", "bun test": "bun test", "deno test": "deno test", "ng test": "karma",
	"react-scripts test": "jest", "cargo test": "cargo test", "cargo nextest": "cargo nextest", "cargo llvm-cov": "cargo test",
	"cargo tarpaulin": "cargo test", "cargo miri": "cargo test", "cargo bench": "cargo bench", "mix test": "mix test",
	"dotnet test": "dotnet test", "ctest": "ctest", "meson test": "meson test", "tox": "tox", "nox": "nox",
	"hatch test": "pytest", "rails test": "rails test", "artisan test": "phpunit", "phpunit": "phpunit",
	"zig build test": "zig build test", "R check": "R",
}

// runnerOf is the runner of a test command's signature ("" when unknown).
func runnerOf(sig string) string {
	if r, ok := runners[sig]; ok {
		return r
	}
	switch {
	case strings.HasPrefix(sig, "mvn "):
		return "mvn"
	case strings.HasPrefix(sig, "gradle "):
		return "gradle"
	case strings.HasPrefix(sig, "cargo hack "):
		return "cargo test"
	case strings.HasPrefix(sig, "bazel test"), strings.HasPrefix(sig, "bazelisk test"), strings.HasPrefix(sig, "buck2 test"), strings.HasPrefix(sig, "pants test"):
		return strings.Fields(sig)[0] + " test"
	}
	for _, tool := range []string{"swift", "stack", "cabal", "dune", "dart", "flutter", "gleam", "sbt", "lein", "mill", "rebar3", "elm-test", "julia", "crystal", "nimble", "raco", "xcodebuild"} {
		if strings.HasPrefix(sig, tool+" ") && strings.Contains(sig, "test") {
			return tool + " test"
		}
	}
	return ""
}

// flagSpec sorts a runner's arguments: selection changes which tests run
// (kept), decoration only changes how results are reported (strippable).
// A flag in either table with true takes the next word as its value.
type flagSpec struct {
	sel, dec map[string]bool
	// selPrefix and decPrefix match flags by prefix (-Dtest=, --cov).
	selPrefix, decPrefix []string
	// posSelect: positional arguments (paths, packages, names) select.
	posSelect bool
	// commands are the leading words that name the runner (go test).
	commands int
	// subcommands are words skipped where the first positional stands.
	subcommands []string
}

func flagMap(valued []string, plain ...string) map[string]bool {
	m := map[string]bool{}
	for _, v := range valued {
		m[v] = true
	}
	for _, p := range plain {
		m[p] = false
	}
	return m
}

var flagSpecs = map[string]flagSpec{
	"go test": {commands: 2, posSelect: true,
		sel: flagMap([]string{"-run", "-skip", "-tags", "-bench"}, "-short"),
		dec: flagMap([]string{"-coverprofile", "-covermode", "-coverpkg", "-outputdir", "-o"}, "-v", "-json", "-cover")},
	"pytest": {commands: 1, posSelect: true,
		sel:       flagMap([]string{"-k", "-m", "--deselect", "--ignore", "--ignore-glob", "--confcutdir"}, "--lf", "--last-failed", "--sw", "--stepwise"),
		dec:       flagMap([]string{"--tb", "--color", "--junitxml", "--junit-xml", "--html", "--durations", "-r", "--report-log", "--log-level", "-o", "--cov-report", "--cov-config", "--cov-context", "-n", "--numprocesses", "--dist", "--maxprocesses", "-p", "--reruns", "--reruns-delay", "--randomly-seed", "--timeout"}, "-v", "-vv", "-vvv", "--verbose", "-q", "-qq", "--quiet", "--no-header", "--no-summary", "-ra", "-rA", "-rfE", "-rs", "--showlocals", "-l", "--cov-append", "--cov-branch"),
		decPrefix: []string{"--cov", "--no-cov", "--junit", "--html=", "-r"}},
	"unittest": {commands: 1, posSelect: true, subcommands: []string{"discover"},
		sel: flagMap([]string{"-k", "-p", "--pattern", "-s", "--start-directory", "-t", "--top-level-directory"}),
		dec: flagMap(nil, "-v", "--verbose", "-q", "--quiet", "-b", "--buffer", "--locals", "--durations")},
	"jest": {commands: 1, posSelect: true,
		sel: flagMap([]string{"-t", "--testNamePattern", "--testPathPattern", "--testPathPatterns", "--testPathIgnorePatterns", "--selectProjects", "--shard", "--changedSince", "--config", "-c"}, "-o", "--onlyChanged", "--findRelatedTests", "--runTestsByPath", "--onlyFailures"),
		dec: flagMap([]string{"--outputFile", "--reporters", "--coverageReporters", "--coverageDirectory"}, "--coverage", "--verbose", "--silent", "--json", "--colors", "--no-colors", "--logHeapUsage", "--useStderr")},
	"vitest": {commands: 1, posSelect: true, subcommands: []string{"run"},
		sel:       flagMap([]string{"-t", "--testNamePattern", "--project", "--dir", "--shard", "--exclude", "--config", "-c", "--root", "-r"}, "--changed"),
		dec:       flagMap([]string{"--reporter", "--outputFile", "--coverage.reporter"}, "--coverage", "--silent", "--color", "--no-color"),
		decPrefix: []string{"--coverage.", "--reporter=", "--outputFile="}},
	"mocha": {commands: 1, posSelect: true,
		sel: flagMap([]string{"-g", "--grep", "-f", "--fgrep", "--spec", "--config", "--ignore", "--exclude"}, "-i", "--invert", "--recursive"),
		dec: flagMap([]string{"-R", "--reporter", "-O", "--reporter-option", "--reporter-options"}, "-c", "--colors", "--no-colors", "--color", "--no-color", "--exit")},
	"node --test": {commands: 1, posSelect: true,
		sel:       flagMap([]string{"--test-name-pattern", "--test-skip-pattern", "--test-shard"}, "--test-only"),
		dec:       flagMap([]string{"--test-reporter", "--test-reporter-destination"}, "--test", "--experimental-test-coverage"),
		decPrefix: []string{"--test-coverage-", "--test-reporter"}},
	"bun test": {commands: 2, posSelect: true,
		sel: flagMap([]string{"-t", "--test-name-pattern", "--preload"}, "--only", "--todo"),
		dec: flagMap([]string{"--coverage-reporter", "--coverage-dir", "--reporter", "--reporter-outfile"}, "--coverage", "--bail")},
	"deno test": {commands: 2, posSelect: true,
		sel:       flagMap([]string{"--filter", "--ignore", "--config", "-c"}, "--doc"),
		dec:       flagMap([]string{"--reporter", "--junit-path"}, "--coverage", "--quiet", "-q", "--no-check"),
		decPrefix: []string{"--coverage=", "--reporter=", "--junit-path="}},
	"cargo test": {commands: 2, posSelect: true,
		sel: flagMap([]string{"-p", "--package", "--exclude", "--bin", "--test", "--example", "--bench", "--features", "-F", "--manifest-path", "--skip", "--target"}, "--workspace", "--all", "--lib", "--bins", "--tests", "--doc", "--examples", "--all-targets", "--all-features", "--no-default-features", "--exact", "--ignored", "--include-ignored"),
		dec: flagMap([]string{"--color", "--message-format", "--format", "-Z"}, "-v", "--verbose", "-vv", "-q", "--quiet", "--nocapture", "--no-capture", "--show-output", "--locked", "--frozen")},
	"cargo nextest": {commands: 3, posSelect: true,
		sel: flagMap([]string{"-E", "--filter-expr", "-p", "--package", "--exclude", "--partition", "--features", "-F", "--bin", "--test", "--manifest-path", "--config-file", "--config"}, "--workspace", "--all", "--lib", "--bins", "--tests", "--all-targets", "--all-features", "--no-default-features", "--run-ignored"),
		dec: flagMap([]string{"--message-format", "--failure-output", "--success-output", "--final-status-level", "--status-level", "--color", "--hide-progress-bar", "--profile", "-P"}, "-v", "--verbose", "--cargo-quiet", "--no-capture", "--locked", "--frozen")},
	"mvn": {commands: 1,
		sel:       flagMap([]string{"-pl", "--projects", "-P", "--activate-profiles", "-f", "--file"}, "-am", "--also-make"),
		selPrefix: []string{"-Dtest=", "-Dit.test=", "-Dgroups=", "-DexcludedGroups=", "-Dsurefire.", "-Dfailsafe.", "-DskipTests", "-DskipITs", "-Dmaven.test.skip"},
		dec:       flagMap([]string{"-l", "--log-file", "-T", "--threads"}, "-B", "--batch-mode", "-q", "--quiet", "-e", "--errors", "-X", "--debug", "-ntp", "--no-transfer-progress", "-V", "--show-version", "-U", "-ff", "--fail-fast", "-fae", "--fail-at-end", "-fn", "--fail-never"),
		decPrefix: []string{"-Dstyle.color", "-Djacoco.", "-Dorg.slf4j.simpleLogger"}},
	"gradle": {commands: 1,
		sel: flagMap([]string{"--tests", "-x", "--exclude-task", "-p", "--project-dir"}),
		dec: flagMap([]string{"--console", "--warning-mode"}, "--info", "-i", "--debug", "-d", "--stacktrace", "-s", "--full-stacktrace", "-S", "--scan", "-q", "--quiet", "--no-daemon", "--build-cache", "--no-build-cache", "--parallel", "--continue")},
	"rspec": {commands: 1, posSelect: true,
		sel: flagMap([]string{"-e", "--example", "-t", "--tag", "--pattern", "-P", "--exclude-pattern", "-E", "--example-matches"}, "--only-failures", "--next-failure", "-n"),
		dec: flagMap([]string{"-f", "--format", "-o", "--out", "--seed"}, "--color", "--force-color", "--no-color", "-c", "-b", "--backtrace", "--profile", "-p", "--warnings", "-w", "--fail-fast")},
	"phpunit": {commands: 1, posSelect: true,
		sel:       flagMap([]string{"--filter", "--group", "--exclude-group", "--testsuite", "--exclude-testsuite", "-c", "--configuration", "--covers", "--uses"}),
		dec:       flagMap([]string{"--log-junit", "--log-teamcity", "--testdox-html", "--testdox-text", "--printer", "--coverage-clover", "--coverage-cobertura", "--coverage-crap4j", "--coverage-html", "--coverage-php", "--coverage-xml"}, "--testdox", "--colors", "--no-coverage", "--teamcity", "--verbose", "-v", "--debug", "--no-progress", "--no-output", "--display-warnings", "--display-deprecations"),
		decPrefix: []string{"--coverage-", "--colors=", "--log-"}},
	"mix test": {commands: 2, posSelect: true,
		sel: flagMap([]string{"--only", "--exclude", "--include", "--partitions"}, "--failed", "--stale"),
		dec: flagMap([]string{"--formatter", "--slowest", "--seed"}, "--cover", "--color", "--no-color", "--trace", "--warnings-as-errors")},
	"dotnet test": {commands: 2, posSelect: true,
		sel:       flagMap([]string{"--filter", "-f", "--framework", "-s", "--settings"}),
		dec:       flagMap([]string{"-l", "--logger", "-v", "--verbosity", "--collect", "--results-directory", "--diag", "-d"}, "--nologo", "--blame", "--blame-crash", "--blame-hang"),
		decPrefix: []string{"/p:CollectCoverage", "-p:CollectCoverage", "/p:CoverletOutput", "-p:CoverletOutput", "--logger:", "--blame-"}},
	"ctest": {commands: 1,
		sel: flagMap([]string{"-R", "--tests-regex", "-E", "--exclude-regex", "-L", "--label-regex", "-LE", "--label-exclude", "-I", "--tests-information", "-C", "--build-config"}, "--rerun-failed"),
		dec: flagMap([]string{"--output-junit", "--output-log", "-O"}, "-V", "--verbose", "-VV", "--extra-verbose", "--output-on-failure", "--progress", "-Q", "--quiet")},
	"hatch test": {commands: 2, posSelect: true,
		sel: flagMap([]string{"-k", "-m"}),
		dec: flagMap([]string{"-py", "--python", "-i", "--include", "-x", "--exclude", "--retries", "--retry-delay", "--cover-quiet"}, "--cover", "--cover-quiet", "-c", "-r", "--randomize", "-p", "--parallel", "--all", "-a", "-v", "--verbose", "-q", "--quiet")},
	"tox": {commands: 1,
		sel: flagMap([]string{"-e", "--env", "-m", "-f"}),
		dec: flagMap([]string{"--result-json", "--colored"}, "-v", "-vv", "-q", "-qq", "--parallel-live", "-o")},
}

// decorationValue is what CI alone prints: log groups and annotations.
func decorationValue(v string) bool {
	return strings.HasPrefix(v, "::group::") || strings.HasPrefix(v, "::endgroup::") || strings.HasPrefix(v, "::add-matcher::") || strings.HasPrefix(v, "##[group]")
}

// splitArgs sorts a test command's arguments into selection and
// decoration, and returns the command without its decoration (plain).
func splitArgs(runner string, args []string) (selection, decoration, plain []string) {
	spec, ok := flagSpecs[runner]
	if !ok {
		spec = flagSpec{commands: 1}
	}
	if runner == "pytest" && len(args) > 1 && ToolName(args[0]) == "hatch" {
		// hatch test: its own flags say how to run pytest, not which
		// tests (the interpreter, randomised order, parallelism, retries).
		spec = flagSpecs["hatch test"]
	}
	if runner == "pytest" || runner == "unittest" {
		// python -m pytest: the runner's words end after the module.
		for i, a := range args {
			if a == "-m" && i+1 < len(args) {
				spec.commands = i + 2
				break
			}
		}
	}
	if spec.commands > len(args) {
		spec.commands = len(args)
	}
	plain = append(plain, args[:spec.commands]...)
	rest := args[spec.commands:]
	afterDashes := false
	first := true
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" && !afterDashes {
			afterDashes = true
			plain = append(plain, a)
			continue
		}
		flag, _, inline := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "-") {
			if first && hasAny(spec.subcommands, a) {
				plain = append(plain, a)
				first = false
				continue
			}
			first = false
			if decorationValue(a) {
				decoration = append(decoration, a)
				continue
			}
			if spec.posSelect && a != "" {
				selection = append(selection, a)
			}
			plain = append(plain, a)
			continue
		}
		word := []string{a}
		takes := func(m map[string]bool) bool { v, ok := m[flag]; return ok && v && !inline && i+1 < len(rest) }
		_, isSel := spec.sel[flag]
		_, isDec := spec.dec[flag]
		if !isSel && !isDec {
			isSel = hasPrefixIn(a, spec.selPrefix)
			isDec = !isSel && hasPrefixIn(a, spec.decPrefix)
		}
		switch {
		case isDec:
			if takes(spec.dec) {
				i++
				word = append(word, rest[i])
			}
			decoration = append(decoration, strings.Join(word, " "))
			continue
		case isSel:
			if takes(spec.sel) {
				i++
				word = append(word, rest[i])
			}
			selection = append(selection, strings.Join(word, " "))
		default:
			if inline && decorationValue(a[len(flag)+1:]) || i+1 < len(rest) && decorationValue(rest[i+1]) {
				if !inline {
					i++
					word = append(word, rest[i])
				}
				decoration = append(decoration, strings.Join(word, " "))
				continue
			}
		}
		plain = append(plain, word...)
	}
	return selection, decoration, plain
}

func hasPrefixIn(a string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(a, p) {
			return true
		}
	}
	return false
}
