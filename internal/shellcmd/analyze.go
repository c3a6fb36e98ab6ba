package shellcmd

import (
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
)

// Analysis is what one completion command runs in a repository.
type Analysis struct {
	// Command and Workdir are the command as given and the directory it
	// starts in (repository-relative).
	Command string
	Workdir string
	// Lines are the command's own simple commands, as parsed.
	Lines []Command
	// Steps are the runnable steps the command reaches, in order, with
	// wrappers taken off and named scripts and script files followed.
	Steps []Step
	// Depends is what the criterion depends on.
	Depends Depends
	// Problems say what could not be followed (a body that does not
	// parse, the depth limit, a cycle).
	Problems []string
}

// Step is one runnable command the criterion reaches.
type Step struct {
	// Args are the command's words with its wrappers taken off ("" for a
	// word that is not literal); Text is the line it is on, as written.
	Args []string
	Text string
	// Dir is where it runs (repository-relative); DirUnknown when a cd
	// before it went somewhere not literal.
	Dir        string
	DirUnknown bool
	// Wrappers are the commands around it, outermost first, each as
	// written: "nice -n 10", "env -u CI", "uv run", "npx".
	Wrappers []string
	// Env are the variables set for it (NAME=value); Unset those removed.
	Env   []string
	Unset []string
	// Via are the named scripts and files that lead to it, outermost
	// first: "Makefile:test", "scripts/test.sh", "sh -c".
	Via []string
	// Kind and Role are what it does; Sig identifies it ("go test").
	Kind Kind
	Role Role
	Sig  string
	// Runner is the test runner it runs ("go test", "pytest", "jest",
	// "cargo test", "mvn", ...), "" when none.
	Runner string
	// Selection are the arguments that change which tests run (kept);
	// Decoration those that only change how results are reported
	// (verbosity, coverage output, log groups: strippable); Plain is Args
	// without the decoration.
	Selection  []string
	Decoration []string
	Plain      []string
	// Fallback: its failure is ignored (`cmd || true`). Conditional: it
	// runs inside an if, a loop or a case. Background: it runs with &.
	// Piped: it reads the output of the command before it in a pipe.
	Fallback    bool
	Conditional bool
	Background  bool
	Piped       bool
	// Note explains a trap (watch mode, a placeholder script).
	Note string
}

// Depends is what a criterion depends on, as plain data for the judge,
// the held-out check and the loop's saved state.
type Depends struct {
	// Files are the repository files it reads to decide what runs: task
	// files, package manifests' scripts, the scripts it calls, and its
	// runners' configuration (repository-relative slash paths, sorted).
	Files []string `json:"files,omitempty"`
	// Targets are the named scripts it follows, as "file:name"
	// ("Makefile:test", "web/package.json:test:unit"), in the order
	// followed.
	Targets []string `json:"targets,omitempty"`
	// Runner is the test runner of its first test step ("" when none).
	Runner string `json:"runner,omitempty"`
}

// SplitTarget splits a "file:name" target of Depends.Targets.
func SplitTarget(t string) (file, name string) {
	// Files have no colon in practice; names may ("test:unit").
	if i := strings.Index(t, ":"); i >= 0 {
		return t[:i], t[i+1:]
	}
	return t, ""
}

// Gates returns the steps that decide the command's exit status as a check:
// tests, variants, lint and build steps that are no fallback.
func (a Analysis) Gates() []Step {
	var out []Step
	for _, s := range a.Steps {
		if s.Fallback || s.Background || s.Piped {
			continue
		}
		if s.Kind&GateKinds != 0 && s.Role != RoleSetup {
			out = append(out, s)
		}
	}
	return out
}

// Analyze analyses a completion command that runs in workdir, reading the
// repository through l (nil: the command's words alone). It never fails:
// what cannot be followed is listed in Problems.
func Analyze(l Lookup, command, workdir string) Analysis {
	a := Analysis{Command: command, Workdir: Clean(workdir)}
	if strings.HasPrefix(a.Workdir, "..") {
		a.Problems = append(a.Problems, fmt.Sprintf("the workdir %q is outside the repository", workdir))
		a.Workdir = "."
	}
	cmds, err := Parse(command)
	if err != nil {
		a.Problems = append(a.Problems, "the command does not parse as shell: "+firstLine(err.Error()))
		return a
	}
	a.Lines = cmds
	c := &cls{lookup: l, tr: newTrace()}
	for _, sc := range cmds {
		if sc.Compound {
			for _, in := range sc.Inner {
				c.line(in, a.Workdir, 0, true)
			}
			continue
		}
		c.line(sc, a.Workdir, 0, false)
	}
	a.Steps = c.tr.steps
	a.Problems = append(a.Problems, c.tr.problems...)
	a.Depends = depends(c, a.Steps)
	return a
}

// AnalyzeDir is Analyze on the repository at root, read through an
// os.Root (no path, nor a symlink in the repository, reads outside it).
func AnalyzeDir(root, command, workdir string) (Analysis, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return Analysis{}, fmt.Errorf("reading the repository %q to analyse the completion command: %w", root, err)
	}
	defer r.Close()
	return Analyze(NewTree(r.FS()), command, workdir), nil
}

// depends gathers the files, targets and runner the steps depend on.
func depends(c *cls, steps []Step) Depends {
	files := map[string]bool{}
	for _, f := range c.tr.files {
		if !strings.HasPrefix(f, "..") {
			files[f] = true
		}
	}
	if c.lookup != nil {
		seen := map[toolAt]bool{}
		for _, t := range c.tr.tools {
			if seen[t] {
				continue
			}
			seen[t] = true
			for _, f := range configFiles(c.lookup, t.tool, t.dir) {
				files[f] = true
			}
		}
		for _, s := range steps {
			if s.Runner == "" {
				continue
			}
			for _, f := range configFiles(c.lookup, s.Runner, s.Dir) {
				files[f] = true
			}
		}
	}
	d := Depends{Targets: append([]string(nil), c.tr.targets...)}
	for f := range files {
		d.Files = append(d.Files, f)
	}
	sort.Strings(d.Files)
	for _, s := range steps {
		if s.Runner != "" && s.Role == RoleTest && !s.Fallback {
			d.Runner = s.Runner
			break
		}
	}
	if d.Runner == "" {
		for _, s := range steps {
			if s.Runner != "" {
				d.Runner = s.Runner
				break
			}
		}
	}
	return d
}

// runnerConfigs are the files a runner or tool reads to decide what it
// runs and how, looked up in the directory it runs in and its parents.
var runnerConfigs = map[string][]string{
	"go test":       {"go.mod", "go.work"},
	"pytest":        {"pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg", "conftest.py", ".coveragerc"},
	"unittest":      {"pyproject.toml", "setup.cfg"},
	"django":        {"manage.py", "pyproject.toml", "setup.cfg"},
	"tox":           {"tox.ini", "pyproject.toml", "setup.cfg"},
	"nox":           {"noxfile.py"},
	"hatch":         {"pyproject.toml", "hatch.toml"},
	"uv":            {"pyproject.toml", "uv.toml"},
	"poetry":        {"pyproject.toml"},
	"pipenv":        {"Pipfile"},
	"pdm":           {"pyproject.toml"},
	"jest":          {"jest.config.js", "jest.config.ts", "jest.config.mjs", "jest.config.cjs", "jest.config.json", "package.json", "babel.config.js", ".babelrc"},
	"vitest":        {"vitest.config.ts", "vitest.config.js", "vitest.config.mts", "vitest.config.mjs", "vitest.workspace.ts", "vitest.workspace.js", "vite.config.ts", "vite.config.js", "vite.config.mts", "vite.config.mjs"},
	"mocha":         {".mocharc.js", ".mocharc.cjs", ".mocharc.json", ".mocharc.jsonc", ".mocharc.yml", ".mocharc.yaml", "package.json"},
	"ava":           {"ava.config.js", "ava.config.cjs", "ava.config.mjs", "package.json"},
	"karma":         {"karma.conf.js", "karma.conf.ts", "angular.json"},
	"playwright":    {"playwright.config.ts", "playwright.config.js"},
	"cypress":       {"cypress.config.ts", "cypress.config.js", "cypress.json"},
	"node --test":   {"package.json"},
	"bun test":      {"bunfig.toml", "package.json"},
	"deno test":     {"deno.json", "deno.jsonc"},
	"npm":           {".npmrc", "package.json"},
	"npx":           {".npmrc"},
	"pnpm":          {".npmrc", "pnpm-workspace.yaml", "package.json"},
	"yarn":          {".npmrc", ".yarnrc", ".yarnrc.yml", "package.json"},
	"bun":           {"bunfig.toml", "package.json"},
	"cargo test":    {"Cargo.toml", ".cargo/config.toml", ".cargo/config"},
	"cargo nextest": {"Cargo.toml", ".cargo/config.toml", ".cargo/config", ".config/nextest.toml"},
	"cargo bench":   {"Cargo.toml", ".cargo/config.toml", ".cargo/config"},
	"mvn":           {"pom.xml", ".mvn/maven.config", ".mvn/jvm.config", ".mvn/extensions.xml"},
	"gradle":        {"build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts", "gradle.properties", "gradle/wrapper/gradle-wrapper.properties"},
	"rspec":         {".rspec", ".rspec-local", "spec/spec_helper.rb", "spec/rails_helper.rb"},
	"minitest":      {"test/test_helper.rb"},
	"rails test":    {"test/test_helper.rb"},
	"rake":          {"Rakefile"},
	"phpunit":       {"phpunit.xml", "phpunit.xml.dist", "phpunit.dist.xml", "tests/bootstrap.php"},
	"pest":          {"phpunit.xml", "phpunit.xml.dist", "tests/Pest.php"},
	"composer":      {"composer.json"},
	"mix test":      {"mix.exs", "test/test_helper.exs", "config/test.exs"},
	"mix":           {"mix.exs"},
	"dotnet test":   {"Directory.Build.props", "Directory.Build.targets", ".runsettings"},
	"ctest":         {"CMakeLists.txt", "CTestConfig.cmake"},
	"meson test":    {"meson.build"},
	"cargo":         {"Cargo.toml", ".cargo/config.toml", ".cargo/config", "clippy.toml", ".clippy.toml", "rustfmt.toml", ".rustfmt.toml"},
	// Checkers: relaxing their configuration makes them pass.
	"eslint":        {".eslintrc", ".eslintrc.js", ".eslintrc.cjs", ".eslintrc.json", ".eslintrc.yml", ".eslintrc.yaml", "eslint.config.js", "eslint.config.mjs", "eslint.config.cjs", "eslint.config.ts", ".eslintignore"},
	"tsc":           {"tsconfig.json"},
	"vue-tsc":       {"tsconfig.json"},
	"mypy":          {"mypy.ini", ".mypy.ini", "setup.cfg", "pyproject.toml"},
	"ruff":          {"ruff.toml", ".ruff.toml", "pyproject.toml"},
	"flake8":        {".flake8", "setup.cfg", "tox.ini"},
	"pylint":        {".pylintrc", "pylintrc", "pyproject.toml"},
	"pyright":       {"pyrightconfig.json", "pyproject.toml"},
	"golangci-lint": {".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json"},
	"staticcheck":   {"staticcheck.conf"},
	"rubocop":       {".rubocop.yml", ".rubocop_todo.yml"},
	"phpstan":       {"phpstan.neon", "phpstan.neon.dist", "phpstan.dist.neon"},
	"psalm":         {"psalm.xml", "psalm.xml.dist"},
	"prettier":      {".prettierrc", ".prettierrc.json", ".prettierrc.js", ".prettierrc.cjs", ".prettierrc.yml", ".prettierrc.yaml", ".prettierignore"},
	"biome":         {"biome.json", "biome.jsonc"},
	"stylelint":     {".stylelintrc", ".stylelintrc.json", ".stylelintrc.js", ".stylelintrc.yml"},
	"shellcheck":    {".shellcheckrc"},
	"hadolint":      {".hadolint.yaml", ".hadolint.yml"},
}

// configFiles returns the configuration files of a runner or tool that
// exist in dir and its parents up to the root.
func configFiles(l Lookup, runner, dir string) []string {
	names := runnerConfigs[runner]
	if len(names) == 0 {
		return nil
	}
	var out []string
	for d := Clean(dir); ; d = parentDir(d) {
		if strings.HasPrefix(d, "..") {
			break
		}
		for _, n := range names {
			if p := Join(d, n); l.Exists(p) {
				out = append(out, p)
			}
		}
		if d == "." {
			break
		}
	}
	if runner == "pytest" {
		// conftest.py files of the test directories under dir.
		for _, t := range []string{"tests", "test", "testing"} {
			if p := Join(Join(dir, t), "conftest.py"); l.Exists(p) {
				out = append(out, p)
			}
		}
	}
	return out
}

func parentDir(d string) string {
	if d == "." || d == "" {
		return "."
	}
	p := path.Dir(d)
	if p == "/" || p == "" {
		return "."
	}
	return p
}

// DependsAt is the Depends of a completion command in the repository at
// root (the zero Depends when root cannot be read: the judge then watches
// what the command's own words name).
func DependsAt(root, command, workdir string) Depends {
	a, err := AnalyzeDir(root, command, workdir)
	if err != nil {
		return Depends{}
	}
	return a.Depends
}
