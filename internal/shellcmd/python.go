package shellcmd

import (
	"path"
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// pythonTool classifies Python, its test runners, environment managers
// (tox, nox, hatch, uv, poetry, pipenv, pdm, rye) and tools.
func (c *cls) pythonTool(k call) (Info, bool) {
	rest := k.rest
	switch k.tool {
	case "python":
		return c.classifyPython(rest, k.dir, k.depth), true
	case "pytest":
		kind := Test
		if hasArgPrefix(rest, "--cov") {
			kind |= Coverage
		}
		return Info{Kind: kind, Sig: "pytest"}, true
	case "coverage":
		p := positional(rest, set("--rcfile", "--source"))
		if len(p) > 0 && p[0] == "run" {
			inner := c.classifyDepth(dropRunnerFlags(rest[1:], set("--source", "--rcfile", "--omit", "--include", "--concurrency", "--data-file", "--context")), k.dir, k.depth+1)
			if inner.Kind.Has(Test) {
				return Info{Kind: Test | Coverage, Sig: inner.Sig, Runner: inner.Runner}, true
			}
			return Info{Kind: Test | Coverage, Sig: "coverage run"}, true
		}
		if len(p) > 0 && p[0] == "report" && hasArgPrefix(rest, "--fail-under") {
			return Info{Kind: Coverage, Sig: "coverage report"}, true
		}
		return Info{Kind: CIOnly | Report}, true
	case "ruff":
		p := positional(rest, nil)
		if len(p) > 0 && p[0] == "format" {
			if hasFlag(rest, "--check", "--diff") {
				return Info{Kind: Format, Sig: "ruff format"}, true
			}
			return Info{}, true
		}
		if hasFlag(rest, "--fix") {
			return Info{}, true
		}
		return Info{Kind: Lint, Sig: "ruff check"}, true
	case "mypy", "pyright", "basedpyright", "pytype", "pyre", "dmypy", "ty":
		return Info{Kind: Type, Sig: k.tool}, true
	case "mypyc":
		return Info{Kind: Build, Sig: k.tool}, true
	case "tox":
		return c.classifyTox(rest, k.dir, k.depth), true
	case "nox":
		return c.classifyNox(rest, k.dir, k.depth), true
	case "hatch":
		return c.classifyHatch(rest, k.dir, k.depth), true
	case "uv", "poetry", "pipenv", "pdm", "rye", "uvx", "pipx":
		return c.classifyPyRunner(k.tool, rest, k.dir, k.depth), true
	case "pip", "conda", "mamba", "micromamba":
		return classifyPip(k.tool, rest), true
	case "pre-commit", "prek":
		p := positional(rest, nil)
		if len(p) > 0 && (p[0] == "run" || p[0] == "try-repo") {
			return Info{Kind: Lint, Sig: "pre-commit run"}, true
		}
		return Info{Kind: Toolchain}, true
	case "twine", "ghp-import", "mkdocs", "sphinx-build":
		return Info{Kind: Deploy}, true
	}
	return Info{}, false
}

func (c *cls) classifyPython(rest []string, dir string, depth int) Info {
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "-m" && i+1 < len(rest):
			mod := rest[i+1]
			tail := rest[i+2:]
			switch mod {
			case "pytest", "py.test":
				k := Test
				if hasArgPrefix(tail, "--cov") {
					k |= Coverage
				}
				return Info{Kind: k, Sig: "pytest"}
			case "unittest":
				return Info{Kind: Test, Sig: "python -m unittest"}
			case "pip":
				return classifyPip("pip", tail)
			case "build":
				return Info{Kind: Build, Sig: "python -m build"}
			case "twine":
				return Info{Kind: Deploy}
			case "venv", "virtualenv", "ensurepip", "site", "uv", "pipx":
				if mod == "uv" {
					return c.classifyPyRunner("uv", tail, dir, depth)
				}
				return Info{Kind: CIOnly}
			case "nox":
				return c.classifyNox(tail, dir, depth)
			case "tox":
				return c.classifyTox(tail, dir, depth)
			case "coverage":
				return c.classifyDepth(append([]string{"coverage"}, tail...), dir, depth+1)
			case "mypy", "pyright", "pytype":
				return Info{Kind: Type, Sig: mod}
			case "ruff", "flake8", "pylint", "black", "isort", "pycodestyle", "pydocstyle", "bandit":
				return c.classifyDepth(append([]string{mod}, tail...), dir, depth+1)
			case "pre_commit":
				return c.classifyDepth(append([]string{"pre-commit"}, tail...), dir, depth+1)
			case "django", "sphinx", "mkdocs":
				return Info{}
			}
			return withSig(ClassifyName(mod)&^Watch, "python -m "+mod)
		case a == "-c":
			return Info{Kind: CIOnly}
		case strings.HasPrefix(a, "-"):
			continue
		default:
			c.noteFile(a, dir)
			base := path.Base(a)
			switch {
			case base == "setup.py":
				if hasAny(rest[i+1:], "test", "pytest") {
					return Info{Kind: Test, Sig: "python setup.py test"}
				}
				if hasAny(rest[i+1:], "build", "build_ext", "sdist", "bdist_wheel", "develop", "install") {
					return Info{Kind: Build | Install, Sig: "python setup.py build"}
				}
				return Info{}
			case base == "manage.py":
				if hasAny(rest[i+1:], "test") {
					return Info{Kind: Test, Sig: "python manage.py test"}
				}
				if hasAny(rest[i+1:], "migrate", "collectstatic", "check") {
					if hasAny(rest[i+1:], "check") {
						return Info{Kind: Lint, Sig: "python manage.py check"}
					}
					return Info{Kind: Install | Service, Sig: "python manage.py migrate"}
				}
				return Info{}
			}
			return withSig(nameKindOfPath(a), "python "+Clean(a))
		}
	}
	return Info{Kind: CIOnly}
}

func (c *cls) classifyTox(rest []string, dir string, depth int) Info {
	envs := toxEnvs(rest)
	if len(envs) == 0 {
		for _, f := range toxFactors(rest) {
			if f != "" {
				envs = append(envs, f)
			}
		}
	}
	if len(envs) == 0 {
		p := positional(rest, set("-c", "--conf", "-f", "-m", "--workdir", "-x"))
		if len(p) > 0 && (p[0] == "run" || p[0] == "r" || p[0] == "run-parallel" || p[0] == "p") || len(p) == 0 {
			c.followOnly("tox", dir, "", depth)
			return Info{Kind: Test, Sig: "tox"}
		}
		return Info{Kind: CIOnly}
	}
	var k Kind
	for _, e := range envs {
		k |= toxEnvKind(e)
		c.followOnly("tox", dir, e, depth)
	}
	return Info{Kind: k, Sig: "tox"}
}

// toxFactors returns the factors named with -f (tox 4 runs every env that
// has them): `tox run -f lint` is the lint envs.
func toxFactors(rest []string) []string {
	var out []string
	for i := 0; i < len(rest); i++ {
		switch a := rest[i]; {
		case (a == "-f" || a == "--factor") && i+1 < len(rest):
			out = append(out, strings.Split(rest[i+1], ",")...)
			i++
		case strings.HasPrefix(a, "-f="), strings.HasPrefix(a, "--factor="):
			_, v, _ := strings.Cut(a, "=")
			out = append(out, strings.Split(v, ",")...)
		}
	}
	return out
}

// followOnly follows a named script for the analysis (its steps and
// files) without letting it change the command's kind: tox envs, nox
// sessions and mix aliases are classified by their names.
func (c *cls) followOnly(runner, dir, name string, depth int) {
	if c.tr == nil || c.tr.active(runner+"\x00"+dir+"\x00"+name) || !c.hasScript(runner, dir, name) {
		return
	}
	c.resolveScript(runner, dir, name, depth)
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

// IsPythonFactor reports a tox factor or nox suffix naming an interpreter:
// py, py312, pypy3.10.
func IsPythonFactor(f string) bool { return pyEnvRe.MatchString(f) }

// ToxEnvKind classifies a tox environment or nox session by name: py312 and
// py312-django42 are tests, lint is lint.
func ToxEnvKind(e string) Kind { return toxEnvKind(e) }

func toxEnvKind(e string) Kind {
	e = strings.ToLower(e)
	for _, f := range strings.Split(e, "-") {
		if pyEnvRe.MatchString(f) || f == "py" {
			return Test
		}
	}
	if k := ClassifyName(e); k != 0 {
		return k &^ Watch
	}
	return 0
}

func (c *cls) classifyNox(rest []string, dir string, depth int) Info {
	sessions := toxEnvs(rest)
	for i := 0; i < len(rest); i++ {
		if (rest[i] == "-t" || rest[i] == "--tags" || rest[i] == "-k") && i+1 < len(rest) {
			sessions = append(sessions, rest[i+1])
			i++
		}
	}
	if len(sessions) == 0 {
		if c.tr != nil && c.lookup != nil {
			if name, _ := c.lookup.DefaultTarget("nox", dir); name != "" {
				for _, s := range strings.Split(name, "\n") {
					c.followOnly("nox", dir, s, depth)
				}
			}
		}
		return Info{Kind: Test, Sig: "nox"}
	}
	var k Kind
	for _, s := range sessions {
		if i := strings.Index(s, "("); i > 0 {
			s = s[:i]
		}
		if i := strings.Index(s, "-"); i > 0 && pyEnvRe.MatchString(s[i+1:]) {
			s = s[:i]
		}
		k |= toxEnvKind(s)
		c.followOnly("nox", dir, s, depth)
	}
	return Info{Kind: k, Sig: "nox"}
}

func (c *cls) classifyHatch(rest []string, dir string, depth int) Info {
	p := positional(rest, set("-e", "--env", "-i", "--include", "-x", "--exclude", "--python", "-py"))
	if len(p) == 0 {
		return Info{}
	}
	switch p[0] {
	case "test":
		k := Test
		if hasFlag(rest, "--cover", "-c") {
			k |= Coverage
		}
		return Info{Kind: k, Sig: "hatch test", Runner: "pytest"}
	case "fmt":
		if hasFlag(rest, "--check") {
			return Info{Kind: Lint | Format, Sig: "hatch fmt"}
		}
		return Info{}
	case "build":
		return Info{Kind: Build, Sig: "hatch build"}
	case "publish":
		return Info{Kind: Deploy}
	case "env":
		return Info{Kind: Install, Sig: "hatch env create"}
	case "run":
		if len(p) < 2 {
			return Info{}
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
			if body, _, ok := c.lookup.Script("hatch", dir, key); ok {
				info := c.scriptInfo("hatch", "hatch run "+p[1], dir, key, depth)
				if info.Kind == 0 && strings.TrimSpace(body) == "" {
					info.Kind = ClassifyName(env) &^ (Watch | Install)
				}
				return info
			}
		}
		m := c.tr.mark()
		inner := c.classifyDepth(dropRunnerFlags(after(rest, "run"), nil), dir, depth+1)
		if inner.Kind != 0 {
			return inner
		}
		c.tr.rollback(m)
		k := ClassifyName(name) | ClassifyName(env)
		return Info{Kind: k &^ (Watch | Install), Sig: "hatch run " + p[1]}
	}
	return Info{}
}

var pyRunnerValued = set("--with", "--python", "-p", "--extra", "--group", "--only-group", "--package", "--directory", "--project", "-E", "--extras", "--with-requirements", "--env-file", "--from", "--only", "--without", "-G")

func (c *cls) classifyPyRunner(tool string, rest []string, dir string, depth int) Info {
	p := positional(rest, pyRunnerValued)
	if len(p) == 0 {
		return Info{}
	}
	if tool == "uvx" {
		return c.classifyDepth(dropRunnerFlags(rest, pyRunnerValued), dir, depth+1)
	}
	if tool == "pipx" && p[0] == "run" {
		return c.classifyDepth(dropRunnerFlags(after(rest, "run"), pyRunnerValued), dir, depth+1)
	}
	switch p[0] {
	case "run":
		if len(p) < 2 {
			return Info{}
		}
		if tool == "pdm" && c.hasScript("pdm", dir, p[1]) {
			return c.scriptInfo("pdm", "pdm run "+p[1], dir, p[1], depth)
		}
		if tool == "poetry" && c.hasScript("poe", dir, p[1]) {
			return c.scriptInfo("poe", "poe "+p[1], dir, p[1], depth)
		}
		// uv run --directory sub pytest runs in sub.
		for i := 0; i < len(rest)-1; i++ {
			if rest[i] == "--directory" {
				dir = Join(dir, rest[i+1])
			}
		}
		return c.classifyDepth(dropRunnerFlags(rest[indexOf(rest, "run")+1:], set("--with", "--python", "-p", "--extra", "--group", "--package", "--directory", "--project", "--env-file", "--only-group", "--with-requirements")), dir, depth+1)
	case "sync", "install", "lock", "venv", "add":
		if tool == "pipx" || tool == "uv" && p[0] == "tool" {
			return Info{Kind: Toolchain}
		}
		return Info{Kind: Install, Sig: tool + " " + p[0]}
	case "pip":
		return classifyPip("pip", p[1:])
	case "tool":
		if len(p) > 1 && p[1] == "run" {
			return c.classifyDepth(dropRunnerFlags(after(after(rest, "tool"), "run"), pyRunnerValued), dir, depth+1)
		}
		return Info{Kind: Toolchain}
	case "build":
		return Info{Kind: Build, Sig: tool + " build"}
	case "publish", "upload":
		return Info{Kind: Deploy}
	case "check":
		if tool == "poetry" {
			return Info{Kind: Lint, Sig: "poetry check"}
		}
	case "test":
		if tool == "rye" || tool == "pdm" {
			return Info{Kind: Test, Sig: "pytest"}
		}
	case "lint":
		return Info{Kind: Lint, Sig: tool + " lint"}
	case "self", "config", "env", "python", "cache", "--version", "version", "show", "export":
		return Info{Kind: CIOnly}
	}
	if tool == "pdm" && c.hasScript("pdm", dir, p[0]) {
		// pdm <script>
		return c.scriptInfo("pdm", "pdm run "+p[0], dir, p[0], depth)
	}
	return Info{}
}

// pyToolPackages are Python packages that are tools of the environment, not
// the project's dependencies.
var pyToolPackages = map[string]bool{
	"pip": true, "setuptools": true, "wheel": true, "tox": true, "nox": true, "uv": true, "poetry": true, "hatch": true,
	"pipx": true, "pipenv": true, "pdm": true, "virtualenv": true, "tox-gh-actions": true, "tox-uv": true, "build": true,
	"twine": true, "pre-commit": true, "codecov": true, "coveralls": true, "nox-uv": true, "hatchling": true, "rye": true,
}

// pyReqNameRe is the distribution name at the start of a requirement.
var pyReqNameRe = lazyre.New(`^\s*[A-Za-z0-9][A-Za-z0-9._-]*`)

func classifyPip(tool string, rest []string) Info {
	p := positional(rest, set("-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-n", "--name", "-p", "--prefix", "--python", "--group", "--only-binary", "--no-binary"))
	if len(p) == 0 || (p[0] != "install" && p[0] != "sync" && p[0] != "create" && p[0] != "env") {
		return Info{Kind: CIOnly}
	}
	if hasFlag(rest, "-r", "--requirement", "-e", "--editable", "--group") || hasAny(rest, ".") || hasArgPrefix(rest, ".[", "-e.", "./", "-r", "--requirement=") || tool != "pip" && (p[0] == "create" || p[0] == "env") {
		return Info{Kind: Install, Sig: "pip install"}
	}
	for _, a := range p[1:] {
		if strings.HasPrefix(a, ".") || strings.Contains(a, "requirements") {
			return Info{Kind: Install, Sig: "pip install"}
		}
	}
	// pip install pytest pytest-cov: the test dependencies, unless every
	// package is an environment manager (tox, poetry, uv, pip itself).
	for _, a := range p[1:] {
		name := strings.ToLower(pyReqNameRe.FindString(a))
		if name != "" && !pyToolPackages[strings.TrimSpace(name)] {
			return Info{Kind: Install, Sig: "pip install"}
		}
	}
	return Info{Kind: Toolchain, Sig: "pip install"}
}
