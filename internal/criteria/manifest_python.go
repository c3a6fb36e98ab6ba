package criteria

import (
	"fmt"
	"sort"
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
	"github.com/aiwg/agent-loop/internal/shellcmd"
)

// pyProject is what pyproject.toml, setup.cfg, tox.ini and noxfile.py say.
type pyProject struct {
	doc      map[string]any
	runner   string // "uv run ", "poetry run ", "pdm run ", "pipenv run ", ""
	tool     string // uv, poetry, pdm, pipenv, hatch, pip
	toolFile string
	setup    string
	deps     map[string]bool // declared dependencies of every group, lower-cased
}

var pyReqNameRe = lazyre.New(`^\s*([A-Za-z0-9][A-Za-z0-9._-]*)`)

func addReqNames(deps map[string]bool, list []any) {
	for _, v := range list {
		if s, ok := v.(string); ok {
			if m := pyReqNameRe.FindStringSubmatch(s); m != nil {
				deps[strings.ToLower(m[1])] = true
			}
		}
	}
}

func (m *manifests) readPython(d *dirManifests) {
	pyFile := join(d.dir, "pyproject.toml")
	names := m.r.names(d.dir)
	has := func(n string) bool {
		i := sort.SearchStrings(names, n)
		return i < len(names) && names[i] == n
	}
	var reqFiles []string
	for _, n := range names {
		if strings.HasPrefix(n, "requirements") && strings.HasSuffix(n, ".txt") {
			reqFiles = append(reqFiles, n)
		}
	}
	if !has("pyproject.toml") && !has("setup.py") && !has("setup.cfg") && !has("tox.ini") && !has("noxfile.py") && len(reqFiles) == 0 && !has("Pipfile") && !has("pytest.ini") {
		return
	}
	d.eco("python")
	py := &pyProject{deps: map[string]bool{}}
	if data, ok := m.r.read(pyFile); ok {
		if err := parseTOML(data, &py.doc); err != nil {
			m.r.unreadable(LayerManifest, pyFile, err)
			py.doc = nil
			if !has("setup.py") && !has("setup.cfg") && !has("tox.ini") && !has("noxfile.py") && len(reqFiles) == 0 {
				return
			}
		}
	}
	if proj, ok := tomlTable(py.doc, "project"); ok {
		if list, ok := proj["dependencies"].([]any); ok {
			addReqNames(py.deps, list)
		}
		if opt, ok := proj["optional-dependencies"].(map[string]any); ok {
			for _, k := range sortedKeys(opt) {
				if list, ok := opt[k].([]any); ok {
					addReqNames(py.deps, list)
				}
			}
		}
	}
	if groups, ok := tomlTable(py.doc, "dependency-groups"); ok {
		for _, k := range sortedKeys(groups) {
			if list, ok := groups[k].([]any); ok {
				addReqNames(py.deps, list)
			}
		}
	}
	if poetry, ok := tomlTable(py.doc, "tool", "poetry"); ok {
		for _, key := range []string{"dependencies", "dev-dependencies"} {
			if deps, ok := poetry[key].(map[string]any); ok {
				for k := range deps {
					py.deps[strings.ToLower(k)] = true
				}
			}
		}
		if groups, ok := poetry["group"].(map[string]any); ok {
			for _, g := range sortedKeys(groups) {
				if deps, ok := tomlTable(groups, g, "dependencies"); ok {
					for k := range deps {
						py.deps[strings.ToLower(k)] = true
					}
				}
			}
		}
	}
	for _, rf := range reqFiles {
		if data, ok := m.r.read(join(d.dir, rf)); ok {
			for _, line := range strings.Split(string(data), "\n") {
				if mm := pyReqNameRe.FindStringSubmatch(line); mm != nil && !strings.HasPrefix(strings.TrimSpace(line), "#") && !strings.HasPrefix(strings.TrimSpace(line), "-") {
					py.deps[strings.ToLower(mm[1])] = true
				}
			}
		}
	}

	// The project's own environment manager decides how commands run.
	_, hasPoetry := tomlTable(py.doc, "tool", "poetry")
	_, hasUV := tomlTable(py.doc, "tool", "uv")
	_, hasPDM := tomlTable(py.doc, "tool", "pdm")
	switch {
	case has("uv.lock") || hasUV:
		py.runner, py.tool, py.setup, py.toolFile = "uv run ", "uv", "uv sync", firstOf(has("uv.lock"), join(d.dir, "uv.lock"), pyFile+" [tool.uv]")
	case has("poetry.lock") || hasPoetry:
		py.runner, py.tool, py.setup, py.toolFile = "poetry run ", "poetry", "poetry install", firstOf(has("poetry.lock"), join(d.dir, "poetry.lock"), pyFile+" [tool.poetry]")
	case has("pdm.lock") || hasPDM:
		py.runner, py.tool, py.setup, py.toolFile = "pdm run ", "pdm", "pdm install", firstOf(has("pdm.lock"), join(d.dir, "pdm.lock"), pyFile+" [tool.pdm]")
	case has("Pipfile"):
		py.runner, py.tool, py.setup, py.toolFile = "pipenv run ", "pipenv", "pipenv install --dev", join(d.dir, "Pipfile")
	default:
		py.tool = "pip"
		var parts []string
		for _, rf := range reqFiles {
			if rf == "requirements.txt" || strings.Contains(rf, "dev") || strings.Contains(rf, "test") {
				parts = append(parts, "-r "+rf)
			}
		}
		if has("pyproject.toml") || has("setup.py") {
			extra := ""
			if opt, ok := tomlTable(py.doc, "project", "optional-dependencies"); ok {
				for _, e := range []string{"test", "tests", "testing", "dev"} {
					if _, ok := opt[e]; ok {
						extra = "[" + e + "]"
						break
					}
				}
			}
			if extra != "" {
				parts = append(parts, "-e '."+extra+"'")
			} else {
				parts = append(parts, "-e .")
			}
		}
		if len(parts) > 0 {
			py.setup = "python -m pip install " + strings.Join(parts, " ")
		}
	}
	d.setup = py.setup
	if py.toolFile != "" {
		d.fact(py.toolFile, "Python project managed with "+py.tool+": commands run through `"+strings.TrimSpace(py.runner)+"`, install with `"+py.setup+"`")
	}
	m.readHatch(d, py)
	m.readPDMScripts(d, py)
	m.readTox(d, py)
	m.readNox(d)
	m.pytestCandidates(d, py, has)
	m.pyLintCandidates(d, py, has)
}

func (m *manifests) readHatch(d *dirManifests, py *pyProject) {
	_, ok := tomlTable(py.doc, "tool", "hatch", "envs")
	_, hasHatchTest := tomlTable(py.doc, "tool", "hatch", "envs", "hatch-test")
	src := join(d.dir, "pyproject.toml")
	if !ok && !m.r.exists(join(d.dir, "hatch.toml")) {
		return
	}
	d.hatch = m.tree.Dir(d.dir).Hatch
	if py.tool == "pip" {
		py.tool, py.runner, py.toolFile = "hatch", "hatch run ", src+" [tool.hatch.envs]"
		py.setup = ""
		d.setup = ""
		d.fact(py.toolFile, "Python project managed with hatch: environments are created on demand")
	}
	cl := m.classifier()
	for _, name := range sortedKeys(d.hatch) {
		info := cl.classify([]string{"hatch", "run", name}, d.dir)
		if info.kind&gateKinds == 0 || info.kind.Has(kWatch) {
			continue
		}
		d.add(candidate{command: "hatch run " + name, kind: info.kind, sig: info.sig, source: src + " [tool.hatch.envs] scripts." + name, rank: scriptRank(name), strong: true, runner: "hatch", script: name,
			evidence: []Finding{finding(LayerManifest, src, fmt.Sprintf("hatch script %q runs `%s`", name, d.hatch[name]))}})
	}
	if hasHatchTest || len(d.hatch) == 0 {
		d.add(candidate{command: "hatch test", kind: kTest, sig: "hatch test", source: src, rank: 2, strong: hasHatchTest,
			evidence: []Finding{finding(LayerManifest, src, "`hatch test` runs pytest in hatch's test environment")}})
	}
}

func (m *manifests) readPDMScripts(d *dirManifests, py *pyProject) {
	scripts := m.tree.Dir(d.dir)
	d.pdm, d.poe = scripts.PDM, scripts.Poe
	cl := m.classifier()
	for _, name := range sortedKeys(d.pdm) {
		info := cl.classify([]string{"pdm", "run", name}, d.dir)
		if info.kind&gateKinds != 0 && !info.kind.Has(kWatch) {
			d.add(candidate{command: "pdm run " + name, kind: info.kind, sig: info.sig, source: join(d.dir, "pyproject.toml") + " [tool.pdm.scripts]." + name, rank: scriptRank(name), strong: true, runner: "pdm", script: name, inner: info.inner, setup: py.setup})
		}
	}
	for _, name := range sortedKeys(d.poe) {
		info := cl.classify([]string{"poe", name}, d.dir)
		if info.kind&gateKinds != 0 && !info.kind.Has(kWatch) {
			cmd := "poe " + name
			if py.runner != "" {
				cmd = py.runner + cmd
			}
			d.add(candidate{command: cmd, kind: info.kind, sig: info.sig, source: join(d.dir, "pyproject.toml") + " [tool.poe.tasks]." + name, rank: scriptRank(name), strong: true, runner: "poe", script: name, setup: py.setup})
		}
	}
}

// pickToxEnv picks the environment for a kind: `py` (the interpreter at
// hand) for tests when the envlist is made of pyXY factors.
func pickToxEnv(envs []string, want kind) string {
	for _, e := range envs {
		k := shellcmd.ToxEnvKind(e)
		if want == kTest && k.Has(kTest) && !k.Has(kE2E) {
			parts := strings.Split(e, "-")
			if shellcmd.IsPythonFactor(parts[0]) {
				if len(parts) == 1 {
					return "py"
				}
				return e
			}
			return e
		}
		if want != kTest && k.Has(want) {
			return e
		}
	}
	return ""
}

func (m *manifests) readTox(d *dirManifests, py *pyProject) {
	var envs []string
	var source string
	if data, ok := m.r.read(join(d.dir, "tox.ini")); ok {
		ini := shellcmd.ParseINI(data)
		source = join(d.dir, "tox.ini")
		envlist := ini["tox"]["envlist"]
		if envlist == "" {
			envlist = ini["tox"]["env_list"]
		}
		envs = shellcmd.ExpandEnvList(envlist)
		for _, sec := range sortedKeys(ini) {
			if strings.HasPrefix(sec, "testenv:") {
				envs = append(envs, strings.TrimPrefix(sec, "testenv:"))
			}
		}
		if len(envs) == 0 && ini["testenv"] != nil {
			envs = []string{"py"}
		}
		if ini["tox"] == nil && ini["testenv"] == nil {
			source = "" // tox.ini holding only [flake8] or [pytest]
		}
	} else if tox, ok := tomlTable(py.doc, "tool", "tox"); ok {
		source = join(d.dir, "pyproject.toml") + " [tool.tox]"
		if legacy, ok := tox["legacy_tox_ini"].(string); ok {
			ini := shellcmd.ParseINI([]byte(legacy))
			envs = shellcmd.ExpandEnvList(ini["tox"]["envlist"] + "\n" + ini["tox"]["env_list"])
			if len(envs) == 0 {
				envs = []string{"py"}
			}
		} else {
			if list, ok := tox["env_list"].([]any); ok {
				for _, e := range list {
					if s, ok := e.(string); ok {
						envs = append(envs, s)
					}
				}
			}
			if envTables, ok := tox["env"].(map[string]any); ok {
				envs = append(envs, sortedKeys(envTables)...)
			}
		}
	}
	if source == "" {
		return
	}
	d.fact(source, "tox environments: "+strings.Join(limitList(envs, 8), ", "))
	for _, want := range []kind{kTest, kLint, kType} {
		env := pickToxEnv(envs, want)
		if env == "" && want == kTest {
			env = "py"
		}
		if env == "" {
			continue
		}
		cmd := "tox -e " + env
		k := shellcmd.ToxEnvKind(env)
		if env == "py" {
			k = kTest
		}
		d.add(candidate{command: cmd, kind: k, sig: "tox", source: source, rank: 1, strong: true, setup: "python -m pip install tox",
			evidence: []Finding{finding(LayerManifest, source, fmt.Sprintf("tox environment %q (tox -e py uses the interpreter at hand)", env))}})
	}
}

func limitList(xs []string, n int) []string {
	if len(xs) <= n {
		return xs
	}
	return append(append([]string(nil), xs[:n]...), fmt.Sprintf("... (%d in all)", len(xs)))
}

func (m *manifests) readNox(d *dirManifests) {
	file := join(d.dir, "noxfile.py")
	data, ok := m.r.read(file)
	if !ok {
		return
	}
	sessions := shellcmd.NoxSessions(string(data))
	if len(sessions) == 0 {
		d.fact(file, "noxfile.py defines no session this reader can see")
		return
	}
	d.fact(file, "nox sessions: "+strings.Join(limitList(sessions, 8), ", "))
	for _, want := range []kind{kTest, kLint, kType} {
		for _, s := range sessions {
			k := shellcmd.ToxEnvKind(s)
			if !k.Has(want) || k.Has(kE2E) && want == kTest {
				continue
			}
			d.add(candidate{command: "nox -s " + s, kind: k, sig: "nox", source: file, rank: 1, strong: true, setup: "python -m pip install nox",
				evidence: []Finding{finding(LayerManifest, file, fmt.Sprintf("nox session %q", s))}})
			break
		}
	}
}

func (m *manifests) pytestCandidates(d *dirManifests, py *pyProject, has func(string) bool) {
	_, pyIni := tomlTable(py.doc, "tool", "pytest")
	source := ""
	switch {
	case pyIni:
		source = join(d.dir, "pyproject.toml") + " [tool.pytest.ini_options]"
	case has("pytest.ini"):
		source = join(d.dir, "pytest.ini")
	case has("conftest.py"):
		source = join(d.dir, "conftest.py")
	case py.deps["pytest"]:
		source = "pytest among the declared dependencies"
	case has("setup.cfg"):
		if data, ok := m.r.read(join(d.dir, "setup.cfg")); ok && strings.Contains(string(data), "[tool:pytest]") {
			source = join(d.dir, "setup.cfg") + " [tool:pytest]"
		}
	}
	if source == "" && m.r.exists(join(d.dir, "tox.ini")) {
		if data, ok := m.r.read(join(d.dir, "tox.ini")); ok && strings.Contains(string(data), "[pytest]") {
			source = join(d.dir, "tox.ini") + " [pytest]"
		}
	}
	testDir := has("tests") || has("test")
	cmd := py.runner + "pytest"
	if py.runner == "" || py.runner == "hatch run " {
		cmd = "python -m pytest"
		if py.runner == "hatch run " {
			cmd = "hatch run pytest"
		}
	}
	switch {
	case source != "":
		d.add(candidate{command: cmd, kind: kTest, sig: "pytest", source: source, setup: py.setup, rank: 2, strong: true,
			evidence: []Finding{finding(LayerManifest, source, "pytest is the test runner")}})
		if py.deps["pytest-cov"] {
			d.add(candidate{command: cmd + " --cov", kind: kTest | kCoverage, sig: "pytest", source: "pytest-cov among the declared dependencies", setup: py.setup, rank: 3})
		}
	case testDir:
		d.add(candidate{command: py.runner + "python -m unittest discover", kind: kTest, sig: "python -m unittest", source: join(d.dir, firstOf(has("tests"), "tests", "test")), setup: py.setup, rank: 4,
			evidence: []Finding{finding(LayerManifest, join(d.dir, firstOf(has("tests"), "tests", "test")), "a tests directory and no pytest configuration: unittest discovery")}})
	}
	if py.tool == "uv" || py.tool == "poetry" || py.tool == "pdm" || py.tool == "hatch" {
		d.add(candidate{command: py.tool + " build", kind: kBuild, sig: py.tool + " build", source: py.toolFile, setup: py.setup, rank: 3})
	} else if has("pyproject.toml") || has("setup.py") {
		d.add(candidate{command: "python -m build", kind: kBuild, sig: "python -m build", source: join(d.dir, firstOf(has("pyproject.toml"), "pyproject.toml", "setup.py")), setup: "python -m pip install build", rank: 4})
	}
}

func (m *manifests) pyLintCandidates(d *dirManifests, py *pyProject, has func(string) bool) {
	run := py.runner
	if run == "hatch run " {
		run = ""
	}
	_, ruffCfg := tomlTable(py.doc, "tool", "ruff")
	if ruffCfg || has("ruff.toml") || has(".ruff.toml") || py.deps["ruff"] {
		src := firstOf(ruffCfg, join(d.dir, "pyproject.toml")+" [tool.ruff]", join(d.dir, firstOf(has("ruff.toml"), "ruff.toml", ".ruff.toml")))
		d.add(candidate{command: run + "ruff check .", kind: kLint, sig: "ruff check", source: src, setup: py.setup, rank: 2, strong: true,
			evidence: []Finding{finding(LayerManifest, src, "Ruff is configured")}})
	}
	if has(".flake8") || py.deps["flake8"] {
		d.add(candidate{command: run + "flake8", kind: kLint, sig: "flake8", source: join(d.dir, ".flake8"), setup: py.setup, rank: 3})
	}
	_, mypyCfg := tomlTable(py.doc, "tool", "mypy")
	if mypyCfg || has("mypy.ini") || has(".mypy.ini") || py.deps["mypy"] {
		src := firstOf(mypyCfg, join(d.dir, "pyproject.toml")+" [tool.mypy]", join(d.dir, "mypy.ini"))
		target := " ."
		if cfg, ok := tomlTable(py.doc, "tool", "mypy"); ok && cfg["files"] != nil {
			target = ""
		}
		d.add(candidate{command: run + "mypy" + target, kind: kType, sig: "mypy", source: src, setup: py.setup, rank: 2, strong: true,
			evidence: []Finding{finding(LayerManifest, src, "mypy is configured")}})
	}
	_, pyrightCfg := tomlTable(py.doc, "tool", "pyright")
	if pyrightCfg || has("pyrightconfig.json") || py.deps["pyright"] {
		d.add(candidate{command: run + "pyright", kind: kType, sig: "pyright", source: firstOf(pyrightCfg, join(d.dir, "pyproject.toml")+" [tool.pyright]", join(d.dir, "pyrightconfig.json")), setup: py.setup, rank: 2, strong: true})
	}
}
