package judge

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
	"github.com/aiwg/agent-loop/internal/loop"
	"github.com/aiwg/agent-loop/internal/shellcmd"
)

// criterion is what the completion command depends on: shellcmd's
// analysis of the command (wrappers, cd, named scripts) merged with the
// dependencies the engine computed from the repository (Options.Depends).
type criterion struct {
	// makeFiles are the Makefiles/justfiles/Taskfiles the command runs, with
	// the targets it follows (none: the default target, any change).
	makeFiles map[string][]string
	// scriptManifests are package.json, composer.json and deno.json files
	// and the scripts the command runs from them.
	scriptManifests map[string][]string
	// files are whole files the criterion depends on: scripts it runs and
	// its runners' configuration.
	files map[string]bool
	// support are test support files judged by the lines that decide what
	// runs (conftest.py: pytest's collection and run hooks).
	support map[string]bool
	// manifests are build manifests the runners read (go.mod, pom.xml,
	// Cargo.toml, ...): a change there is no bypass by itself, but a test
	// filter set in one is.
	manifests map[string]bool
	tools     map[string]bool
}

// toolConfigRes are the configuration files of checkers a criterion may
// run: relaxing them makes the criterion pass without fixing anything.
var toolConfigRes = map[string]*lazyre.Regexp{
	"tsc":           lazyre.New(`^tsconfig(?:\..+)?\.json$`),
	"vue-tsc":       lazyre.New(`^tsconfig(?:\..+)?\.json$`),
	"eslint":        lazyre.New(`^(?:\.eslintrc(?:\..+)?|eslint\.config\.[cm]?[jt]s)$`),
	"mypy":          lazyre.New(`^\.?mypy\.ini$`),
	"ruff":          lazyre.New(`^\.?ruff\.toml$`),
	"flake8":        lazyre.New(`^\.flake8$`),
	"pylint":        lazyre.New(`^\.?pylintrc$`),
	"pyright":       lazyre.New(`^pyrightconfig\.json$`),
	"golangci-lint": lazyre.New(`^\.golangci\.(?:ya?ml|toml|json)$`),
	"staticcheck":   lazyre.New(`^staticcheck\.conf$`),
	"cargo clippy":  lazyre.New(`^\.?clippy\.toml$`),
	"rubocop":       lazyre.New(`^\.rubocop(?:_todo)?\.yml$`),
	"phpstan":       lazyre.New(`^phpstan\.neon(?:\.dist)?$`),
	"psalm":         lazyre.New(`^psalm\.xml(?:\.dist)?$`),
	"prettier":      lazyre.New(`^\.prettierrc(?:\..+)?$`),
	"biome":         lazyre.New(`^biome\.jsonc?$`),
	"stylelint":     lazyre.New(`^\.stylelintrc(?:\..+)?$`),
	"shellcheck":    lazyre.New(`^\.shellcheckrc$`),
	"hadolint":      lazyre.New(`^\.hadolint\.ya?ml$`),
}

// toolSections are the pyproject.toml/setup.cfg sections of those checkers.
var toolSections = map[string][]string{
	"mypy": {"tool.mypy", "mypy"}, "ruff": {"tool.ruff"}, "pylint": {"tool.pylint"},
	"pyright": {"tool.pyright"}, "flake8": {"flake8"},
}

// isToolConfig reports a configuration file of a checker the criterion runs.
func (c criterion) isToolConfig(p string) bool {
	base := path.Base(p)
	for tool := range c.tools {
		if re := toolConfigRes[tool]; re != nil && re.MatchString(base) {
			return true
		}
	}
	return false
}

// granular files are judged line by line (which target, which script, which
// section), never as a whole.
func isGranular(p string) bool {
	switch path.Base(p) {
	case "Makefile", "makefile", "GNUmakefile", "justfile", "Justfile", ".justfile", "package.json",
		"pyproject.toml", "setup.cfg", "Taskfile.yml", "Taskfile.yaml":
		return true
	}
	return false
}

// criterionOf reads what the completion command depends on: the command
// analysed alone (its own words name the task files and the scripts it
// runs) and deps, the analysis of the command in the repository.
func criterionOf(cmd string, deps shellcmd.Depends) criterion {
	c := criterion{makeFiles: map[string][]string{}, scriptManifests: map[string][]string{}, files: map[string]bool{},
		support: map[string]bool{}, manifests: map[string]bool{}, tools: map[string]bool{}}
	a := shellcmd.Analyze(nil, cmd, ".")
	for _, s := range a.Steps {
		if len(s.Args) > 0 {
			c.tools[strings.TrimSuffix(shellcmd.ToolName(s.Args[0]), ".js")] = true
		}
		if s.Sig != "" {
			c.tools[s.Sig] = true
		}
		// Explicit configuration files: pytest -c ci/pytest.ini.
		for i, w := range s.Args {
			switch {
			case (w == "-c" || w == "--config" || w == "--config-file" || w == "--configuration" || w == "--rcfile") && i+1 < len(s.Args) && s.Args[i+1] != "":
				c.addFile(shellcmd.Join(s.Dir, s.Args[i+1]))
			case strings.HasPrefix(w, "--config=") && len(w) > len("--config="):
				c.addFile(shellcmd.Join(s.Dir, strings.TrimPrefix(w, "--config=")))
			}
		}
	}
	for _, d := range []shellcmd.Depends{a.Depends, deps} {
		if d.Runner != "" {
			c.tools[d.Runner] = true
		}
		for _, t := range d.Targets {
			file, name := shellcmd.SplitTarget(t)
			file = path.Clean(file)
			switch {
			case isTaskFile(file):
				c.makeFiles[file] = append(c.makeFiles[file], name)
			case isScriptManifest(file):
				names := []string{name}
				if path.Base(file) == "package.json" {
					names = append(names, "pre"+name, "post"+name)
				}
				c.scriptManifests[file] = append(c.scriptManifests[file], names...)
			default:
				c.addFile(file)
			}
		}
		for _, f := range d.Files {
			c.addFile(path.Clean(f))
		}
	}
	return c
}

// addFile sorts a file the criterion depends on by how its changes are
// judged.
func (c criterion) addFile(f string) {
	if f == "." || strings.HasPrefix(f, "..") || strings.HasPrefix(f, "/") {
		return
	}
	base := path.Base(f)
	switch {
	case isTaskFile(f):
		if _, ok := c.makeFiles[f]; !ok {
			c.makeFiles[f] = nil
		}
	case isScriptManifest(f):
		if _, ok := c.scriptManifests[f]; !ok {
			c.scriptManifests[f] = nil
		}
	case base == "conftest.py":
		c.support[f] = true
	case isBuildManifest(base):
		c.manifests[f] = true
	default:
		c.files[f] = true
	}
}

func isTaskFile(p string) bool {
	switch path.Base(p) {
	case "Makefile", "makefile", "GNUmakefile", "justfile", "Justfile", ".justfile", "Taskfile.yml", "Taskfile.yaml", "taskfile.yml", "taskfile.yaml", "Taskfile.dist.yml":
		return true
	}
	return false
}

func isScriptManifest(p string) bool {
	switch path.Base(p) {
	case "package.json", "composer.json", "deno.json", "deno.jsonc":
		return true
	}
	return false
}

// isBuildManifest reports the manifests and test support code a runner
// reads that an honest change edits too (a dependency, a fixture).
func isBuildManifest(base string) bool {
	switch base {
	case "go.mod", "go.work", "Cargo.toml", "pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts",
		"gradle.properties", "mix.exs", "Gemfile", "Pipfile", "CMakeLists.txt", "meson.build", "Directory.Build.props",
		"Directory.Build.targets", "pyproject.toml", "setup.cfg", "hatch.toml", "uv.toml", "pnpm-workspace.yaml", "angular.json",
		"spec_helper.rb", "rails_helper.rb", "test_helper.rb", "test_helper.exs", "test.exs", "bootstrap.php", "Pest.php",
		"manage.py", "babel.config.js", ".babelrc":
		return true
	}
	return strings.HasPrefix(base, "vite.config.")
}

// testConfigBases are test runner configuration files: a change to one of
// them changes what the criterion runs or how it judges.
var testConfigBaseRe = lazyre.New(`^(?:jest\.config\.[cm]?[jt]s(?:on)?|jest\.config\.json|vitest\.config\.[cm]?[jt]s|vitest\.workspace\.[cm]?[jt]s|\.mocharc(?:\.[cm]?js|\.json|\.ya?ml|\.jsonc)?|karma\.conf\.[cm]?[jt]s|ava\.config\.[cm]?js|playwright\.config\.[cm]?[jt]s|cypress\.config\.[cm]?[jt]s|\.nycrc(?:\.json|\.ya?ml)?|pytest\.ini|tox\.ini|noxfile\.py|\.coveragerc|phpunit\.xml(?:\.dist)?|phpunit\.dist\.xml|\.rspec|\.simplecov|codecov\.ya?ml|\.codecov\.ya?ml|.*\.runsettings|test_helper\.exs|\.c8rc(?:\.json)?)$`)

// isTestConfigFile reports files that are test configuration as a whole.
func isTestConfigFile(p string) bool {
	return testConfigBaseRe.MatchString(path.Base(p))
}

// isTestConfig reports files where test filters can be set: test
// configuration, CI, build files and whatever the criterion runs.
func (c criterion) isTestConfig(p string) bool {
	if isTestConfigFile(p) || isCIPath(p) || c.files[p] || c.support[p] || c.manifests[p] {
		return true
	}
	if _, ok := c.makeFiles[p]; ok {
		return true
	}
	if _, ok := c.scriptManifests[p]; ok {
		return true
	}
	switch path.Base(p) {
	case "pyproject.toml", "setup.cfg", "pom.xml", "build.gradle", "build.gradle.kts", "vite.config.ts", "vite.config.js",
		"vite.config.mjs", "Cargo.toml", "package.json":
		return true
	}
	return false
}

// ---- validation bypass ----

var (
	makeTargetRe   = lazyre.New(`^([A-Za-z0-9_.%/\-][A-Za-z0-9_.%/\- ]*?)\s*::?(?:[^=]|$)`)
	justRecipeRe   = lazyre.New(`^@?([A-Za-z0-9_\-]+)(?:\s+[^:=]*)?:(?:[^=]|$)`)
	makeVarRe      = lazyre.New(`^\s*(?:export\s+|override\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*(?:[:?+!]?=)`)
	tomlSectionRe  = lazyre.New(`^\s*\[\[?([^\]]+)\]\]?\s*$`)
	jsonKeyRe      = lazyre.New(`^\s*"([^"]+)"\s*:`)
	jsonObjectOpen = lazyre.New(`^\s*"([^"]+)"\s*:\s*\{\s*$`)
	pytestKeyRe    = lazyre.New(`^\s*(?:addopts|testpaths|python_files|python_classes|python_functions|norecursedirs|markers|filterwarnings|minversion|xfail_strict|required_plugins|fail_under|omit|source|branch)\s*=`)
	jestKeyRe      = lazyre.New(`^\s*"?(?:testPathIgnorePatterns|testMatch|testRegex|roots|modulePathIgnorePatterns|coverageThreshold|collectCoverageFrom|coveragePathIgnorePatterns|testEnvironment|passWithNoTests|bail|testTimeout|setupFilesAfterEnv|projects|include|exclude|thresholds)"?\s*:`)
)

func detectBypass(views []*fileView, crit criterion) []loop.Regression {
	var ci, config, script, snapshots []loop.Evidence
	for _, v := range views {
		if v.ignored {
			continue
		}
		p := v.path
		switch {
		case isCIPath(p) || (v.fd.OldPath != "" && isCIPath(v.fd.OldPath)):
			ci = append(ci, changedEvidence(v, 3)...)
		case isTestConfigFile(p) || (v.fd.OldPath != "" && isTestConfigFile(v.fd.OldPath)):
			config = append(config, changedEvidence(v, 3)...)
		case crit.files[p] && !isGranular(p):
			script = append(script, changedEvidence(v, 3)...)
		case crit.isToolConfig(p):
			config = append(config, changedEvidence(v, 3)...)
		}
		if targets, ok := crit.makeFiles[p]; ok {
			script = append(script, makeTargetChanges(v, targets)...)
		}
		if crit.support[p] {
			script = append(script, conftestChanges(v)...)
		}
		switch path.Base(p) {
		case "package.json", "composer.json", "deno.json", "deno.jsonc":
			script = append(script, packageJSONChanges(v, crit.scriptManifests[p])...)
		case "pyproject.toml", "setup.cfg":
			config = append(config, sectionChanges(v, crit)...)
		case "vite.config.ts", "vite.config.js", "vite.config.mjs", "vite.config.mts":
			config = append(config, viteTestChanges(v)...)
		}
	}
	snapshots = unexplainedSnapshots(views)
	var regs []loop.Regression
	add := func(ev []loop.Evidence, what string) {
		if len(ev) == 0 {
			return
		}
		files := map[string]bool{}
		var names []string
		for _, e := range ev {
			if !files[e.Path] {
				files[e.Path] = true
				names = append(names, e.Path)
			}
		}
		regs = append(regs, loop.Regression{
			Type: ValidationBypass, Severity: SeverityCritical,
			Summary:  fmt.Sprintf("%s: %s", what, listNames(names, 4)),
			Evidence: capEvidence(ev), Baseline: nil, Current: names,
		})
	}
	add(ci, "CI workflow changed")
	add(config, "test configuration changed")
	add(script, "the criterion's test script changed")
	add(snapshots, "snapshots or golden files rewritten without a source change that explains them")
	if th := loweredThresholds(views); len(th) > 0 {
		var ev []loop.Evidence
		var before, after []string
		for _, t := range th {
			ev = append(ev, t.ev)
			before = append(before, t.before)
			after = append(after, t.after)
		}
		regs = append(regs, loop.Regression{
			Type: ValidationBypass, Severity: SeverityCritical,
			Summary:  fmt.Sprintf("coverage threshold lowered (%s)", th[0].describe()),
			Evidence: capEvidence(ev), Baseline: before, Current: after,
		})
	}
	return regs
}

// changedEvidence returns up to n changed lines of a file (added first), or
// the file itself when nothing is visible (a binary or mode change).
func changedEvidence(v *fileView, n int) []loop.Evidence {
	var ev []loop.Evidence
	for _, l := range changedLines(v.newSide) {
		if strings.TrimSpace(l.text) == "" {
			continue
		}
		ev = append(ev, loop.Evidence{Path: v.path, Line: l.num, Text: evidenceText("+" + l.text)})
	}
	for _, l := range changedLines(v.oldSide) {
		if strings.TrimSpace(l.text) == "" {
			continue
		}
		p := v.fd.OldPath
		if p == "" {
			p = v.path
		}
		ev = append(ev, loop.Evidence{Path: p, Line: l.num, Text: evidenceText("-" + l.text)})
	}
	if len(ev) > n {
		ev = ev[:n]
	}
	if len(ev) == 0 {
		ev = append(ev, loop.Evidence{Path: v.path, Text: string(v.fd.Status)})
	}
	return ev
}

// makeTargetChanges returns changed lines inside the named targets' recipes
// (any target when targets is empty), and changed variables whose names say
// they feed the tests.
func makeTargetChanges(v *fileView, targets []string) []loop.Evidence {
	want := map[string]bool{}
	for _, t := range targets {
		want[t] = true
	}
	isJust := strings.EqualFold(path.Base(v.path), "justfile") || path.Base(v.path) == ".justfile"
	isTask := strings.HasPrefix(path.Base(v.path), "Taskfile")
	var ev []loop.Evidence
	scan := func(side []vline, section string, sign string, filePath string) {
		current := targetOf(section, isJust)
		for _, l := range side {
			if isTask {
				if l.changed && strings.TrimSpace(l.text) != "" {
					ev = append(ev, loop.Evidence{Path: filePath, Line: l.num, Text: evidenceText(sign + l.text)})
				}
				continue
			}
			if t := targetOf(l.text, isJust); t != "" && !strings.HasPrefix(l.text, "\t") && !strings.HasPrefix(l.text, " ") {
				current = t
			}
			if !l.changed || strings.TrimSpace(l.text) == "" || isCommentLine(langMake, l.text) {
				continue
			}
			inTarget := len(want) == 0 || want[current]
			if m := makeVarRe.FindStringSubmatch(l.text); m != nil && !strings.HasPrefix(l.text, "\t") {
				inTarget = len(want) == 0 || strings.Contains(strings.ToUpper(m[1]), "TEST") || strings.Contains(strings.ToUpper(m[1]), "COVER")
			}
			if t := targetOf(l.text, isJust); t != "" && want[t] {
				inTarget = true
			}
			if inTarget {
				ev = append(ev, loop.Evidence{Path: filePath, Line: l.num, Text: evidenceText(sign + l.text)})
			}
		}
	}
	scanSides(v, scan)
	return ev
}

// scanSides runs scan on both sides of every hunk of a file: the new side
// with "+" and its path, the old side with "-" and its old path.
func scanSides(v *fileView, scan func(side []vline, section, sign, filePath string)) {
	for h := range v.newSide {
		scan(v.newSide[h], v.sections[h], "+", v.path)
		old := v.fd.OldPath
		if old == "" {
			old = v.path
		}
		scan(v.oldSide[h], v.sections[h], "-", old)
	}
}

func targetOf(line string, just bool) string {
	if strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ".PHONY") {
		return ""
	}
	re := makeTargetRe
	if just {
		re = justRecipeRe
	}
	m := re.FindStringSubmatch(line)
	if m == nil || makeVarRe.MatchString(line) {
		return ""
	}
	return strings.TrimSpace(strings.Fields(m[1] + " ")[0])
}

// packageJSONChanges returns changed lines that define one of the
// criterion's scripts (package.json and composer.json "scripts", deno.json
// "tasks"), or that sit inside the "jest"/"mocha"/... config.
func packageJSONChanges(v *fileView, scripts []string) []loop.Evidence {
	want := map[string]bool{}
	for _, s := range scripts {
		want[s] = true
	}
	var ev []loop.Evidence
	scan := func(side []vline, sign, filePath string) {
		block := ""
		depth := 0
		for _, l := range side {
			if m := jsonObjectOpen.FindStringSubmatch(l.text); m != nil {
				block, depth = m[1], 1
			} else if block != "" {
				depth += strings.Count(l.text, "{") - strings.Count(l.text, "}")
				if depth <= 0 {
					block = ""
				}
			}
			if !l.changed {
				continue
			}
			hit := false
			if m := jsonKeyRe.FindStringSubmatch(l.text); m != nil && want[m[1]] && (block == "" || block == "scripts" || block == "tasks") {
				hit = true
			}
			switch block {
			case "jest", "mocha", "ava", "nyc", "c8", "vitest":
				hit = true
			}
			if block == "" && jestKeyRe.MatchString(l.text) && !jsonObjectOpen.MatchString(l.text) {
				hit = true
			}
			if hit {
				ev = append(ev, loop.Evidence{Path: filePath, Line: l.num, Text: evidenceText(sign + l.text)})
			}
		}
	}
	for h := range v.newSide {
		scan(v.newSide[h], "+", v.path)
		scan(v.oldSide[h], "-", v.path)
	}
	return ev
}

// pytestHookRe names what a conftest.py uses to decide which tests run and
// how their outcome is reported: pytest's collection, run and report hooks,
// the collect_ignore lists, plugins, and leaving the process early.
var pytestHookRe = lazyre.New(`\b(?:pytest_(?:collection\w*|ignore_collect|collect_file|pycollect_\w+|generate_tests|runtest_\w+|configure|unconfigure|sessionstart|sessionfinish|report_\w+|terminal_summary|deselected|cmdline_\w+|load_initial_conftests|addoption|plugins|make_parametrize_id|itemcollected|assertrepr_compare)|collect_ignore(?:_glob)?|os\._exit|sys\.exit)\b`)

// conftestChanges returns the changed lines of a conftest.py that define or
// change pytest's hooks (or sit inside one): what decides what runs.
func conftestChanges(v *fileView) []loop.Evidence {
	var ev []loop.Evidence
	scan := func(side []vline, section, sign, filePath string) {
		inHook := pytestHookRe.MatchString(section)
		for _, l := range side {
			if !strings.HasPrefix(l.text, " ") && !strings.HasPrefix(l.text, "\t") && strings.TrimSpace(l.text) != "" && !strings.HasPrefix(strings.TrimSpace(l.text), "#") && !strings.HasPrefix(strings.TrimSpace(l.text), "@") {
				inHook = pytestHookRe.MatchString(l.text) // a new top-level statement
			}
			if !l.changed || strings.TrimSpace(l.text) == "" || isCommentLine(langPython, l.text) {
				continue
			}
			if inHook || pytestHookRe.MatchString(l.text) {
				ev = append(ev, loop.Evidence{Path: filePath, Line: l.num, Text: evidenceText(sign + l.text)})
			}
		}
	}
	scanSides(v, scan)
	return ev
}

// sectionChanges returns changed lines of pyproject.toml/setup.cfg inside
// the pytest and coverage sections.
func sectionChanges(v *fileView, crit criterion) []loop.Evidence {
	var ev []loop.Evidence
	testSection := func(name string) bool {
		name = strings.TrimSpace(name)
		for tool := range crit.tools {
			for _, sec := range toolSections[tool] {
				if name == sec || strings.HasPrefix(name, sec+".") || strings.HasPrefix(name, sec+"-") {
					return true
				}
			}
		}
		return name == "tool.pytest.ini_options" || name == "tool:pytest" || name == "pytest" ||
			strings.HasPrefix(name, "tool.coverage") || strings.HasPrefix(name, "coverage:") ||
			name == "tool.tox" || strings.HasPrefix(name, "tool.hatch.envs.test") || name == "tool.poe.tasks"
	}
	scan := func(side []vline, sign string) {
		section := ""
		known := false
		for _, l := range side {
			if m := tomlSectionRe.FindStringSubmatch(l.text); m != nil {
				section, known = m[1], true
			}
			if !l.changed || strings.TrimSpace(l.text) == "" {
				continue
			}
			if (known && testSection(section)) || (!known && pytestKeyRe.MatchString(l.text)) || (l.changed && tomlSectionRe.MatchString(l.text) && testSection(section)) {
				ev = append(ev, loop.Evidence{Path: v.path, Line: l.num, Text: evidenceText(sign + l.text)})
			}
		}
	}
	for h := range v.newSide {
		scan(v.newSide[h], "+")
		scan(v.oldSide[h], "-")
	}
	return ev
}

// viteTestChanges returns changed lines of a vite config that concern tests.
func viteTestChanges(v *fileView) []loop.Evidence {
	var ev []loop.Evidence
	for h := range v.newSide {
		inTest := strings.Contains(v.sections[h], "test")
		for _, l := range v.newSide[h] {
			if viteTestKeyRe.MatchString(l.text) {
				inTest = true
			}
			if l.changed && (inTest || jestKeyRe.MatchString(l.text)) {
				ev = append(ev, loop.Evidence{Path: v.path, Line: l.num, Text: evidenceText("+" + l.text)})
			}
		}
	}
	return ev
}

// unexplainedSnapshots returns snapshot and golden files whose recorded
// values were rewritten (lines removed, or the file deleted) while no source
// file of the code they describe changed.
func unexplainedSnapshots(views []*fileView) []loop.Evidence {
	var sources []string
	for _, v := range views {
		if isSnapshotPath(v.path) || !v.lang.isCode() || v.test || isIgnoredPathExceptTestdata(v.path) {
			continue
		}
		sources = append(sources, v.path)
		if v.fd.OldPath != "" {
			sources = append(sources, v.fd.OldPath)
		}
	}
	var ev []loop.Evidence
	for _, v := range views {
		if !isSnapshotPath(v.path) && !(v.fd.OldPath != "" && isSnapshotPath(v.fd.OldPath)) {
			continue
		}
		if hasDir(v.path, "node_modules", "vendor") {
			continue
		}
		rewritten := v.fd.Status == StatusDeleted || len(changedLines(v.oldSide)) > 0 || (v.fd.Binary && v.fd.Status == StatusModified)
		if !rewritten {
			continue
		}
		owner := snapshotOwner(v.path)
		explained := false
		for _, s := range sources {
			if owner == "" || s == owner || strings.HasPrefix(s, owner+"/") {
				explained = true
				break
			}
		}
		if explained {
			continue
		}
		lines := changedLines(v.oldSide)
		if len(lines) == 0 {
			ev = append(ev, loop.Evidence{Path: v.path, Text: string(v.fd.Status)})
			continue
		}
		for i, l := range lines {
			if i == 3 {
				break
			}
			ev = append(ev, loop.Evidence{Path: v.path, Line: l.num, Text: evidenceText("-" + l.text)})
		}
	}
	return ev
}

func isIgnoredPathExceptTestdata(p string) bool {
	return hasDir(p, "vendor", "node_modules", "third_party", ".aiwg")
}

// ---- coverage thresholds ----

var (
	thresholdRe   = lazyre.New(`(?i)(fail[_-]?under|cov-fail-under|min(?:imum)?[_-]?coverage(?:[_-]?\w+)?|coverage[_-]?threshold|check-coverage|<minimum>|\bminimum\b|\b(?:branches|functions|lines|statements)\b|\bthreshold\b|\btarget\b|\bcoveredratio\b)["']?\s*(?:[:=]|=>|\s)?\s*["']?(\d+(?:\.\d+)?)`)
	viteTestKeyRe = lazyre.New(`^\s*test\s*:`)
	coverageHint  = lazyre.New(`(?i)cov|threshold|fail_under|fail-under`)
)

type threshold struct {
	ev            loop.Evidence
	key           string
	before, after string
}

func (t threshold) describe() string {
	if t.after == "" {
		return fmt.Sprintf("%s %s removed", t.key, t.before)
	}
	return fmt.Sprintf("%s %s -> %s", t.key, t.before, t.after)
}

// loweredThresholds pairs coverage thresholds removed and added in the same
// configuration file and reports each one that went down or away.
func loweredThresholds(views []*fileView) []threshold {
	var out []threshold
	for _, v := range views {
		if v.ignored || !isConfigLike(v.path) {
			continue
		}
		type val struct {
			n    float64
			raw  string
			line vline
		}
		removed := map[string][]val{}
		added := map[string][]val{}
		collect := func(side [][]vline, into map[string][]val) {
			for h, hunk := range side {
				hint := coverageHint.MatchString(v.sections[h]) || coverageHint.MatchString(v.path)
				for _, l := range hunk {
					if coverageHint.MatchString(l.text) {
						hint = true
					}
				}
				if !hint {
					continue
				}
				for _, l := range hunk {
					if !l.changed {
						continue
					}
					for _, m := range thresholdRe.FindAllStringSubmatch(l.text, -1) {
						n, err := strconv.ParseFloat(m[2], 64)
						if err != nil {
							continue
						}
						if n <= 1 && strings.Contains(m[2], ".") {
							n *= 100 // jacoco ratios
						}
						key := strings.ToLower(strings.Trim(m[1], "<>"))
						into[key] = append(into[key], val{n, m[2], l})
					}
				}
			}
		}
		collect(v.oldSide, removed)
		collect(v.newSide, added)
		for key, olds := range removed {
			news := added[key]
			for i, o := range olds {
				if i < len(news) {
					if news[i].n < o.n {
						out = append(out, threshold{
							ev:  loop.Evidence{Path: v.path, Line: news[i].line.num, Text: evidenceText(news[i].line.text)},
							key: key, before: o.raw, after: news[i].raw,
						})
					}
					continue
				}
				out = append(out, threshold{
					ev:  loop.Evidence{Path: v.path, Line: o.line.num, Text: evidenceText("-" + o.line.text)},
					key: key, before: o.raw,
				})
			}
		}
	}
	return out
}

// isConfigLike reports files that hold settings rather than program code.
func isConfigLike(p string) bool {
	base := path.Base(p)
	switch langOf(p) {
	case langJSON, langYAML, langTOML, langINI, langXML, langMake, langShell:
		return true
	case langJS:
		return strings.Contains(base, "config") || strings.HasPrefix(base, ".")
	case langKotlin:
		return strings.HasPrefix(base, "build.gradle")
	case langRuby:
		return base == ".simplecov" || strings.HasSuffix(base, "spec_helper.rb")
	}
	return base == ".simplecov" || base == ".coveragerc" || base == "build.gradle" || isTestConfigFile(p)
}
