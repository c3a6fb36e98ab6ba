package shellcmd

import (
	"path"
	"strings"
)

// Info is what one command is.
type Info struct {
	Kind Kind
	// Sig identifies the command for agreement between sources:
	// "go test", "npm test", "pytest", "make test".
	Sig string
	// Runner is the test runner the command runs, when it runs one:
	// "go test", "pytest", "jest", "cargo test", "mvn", "rspec", ...
	Runner string
	// ScriptTool and Script are set when the command runs a named script
	// of a task runner (ScriptTool "npm", Script "test").
	ScriptTool, Script string
	// Inner is the signature of what a named script runs, when it runs one
	// command: `npm run typecheck` -> "tsc"; Inners lists the signatures of
	// all the gates its body runs.
	Inner  string
	Inners []string
	// Note explains a trap (watch mode, a script that always fails).
	Note string
	// Fix, when set, is a local equivalent that avoids the trap.
	Fix string
}

// Lookup reads what a repository defines: the named scripts of its task
// runners and its script files. Tree implements it over an fs.FS.
type Lookup interface {
	// Script returns the body of script name of runner ("npm", "make",
	// "just", "task", "composer", "deno", "hatch", "pdm", "poe", "rake",
	// "tox", "nox", "mix") as defined in dir, and the file that defines it
	// (repository-relative). When the script is not defined, file is where
	// it would be (ConventionalFile when the runner has no file in dir).
	Script(runner, dir, name string) (body, file string, ok bool)
	// DefaultTarget returns what the runner runs when no target is named
	// (the first target of a Makefile, just's first recipe) and its file.
	DefaultTarget(runner, dir string) (name, file string)
	// ScriptFile returns the text of a shell script of the repository (a
	// repository-relative path), for ./ci/test or bash scripts/test.sh.
	ScriptFile(p string) (text string, ok bool)
	// Exists reports whether the repository has the path p.
	Exists(p string) bool
}

// Classifier classifies commands, following named scripts through Lookup.
// The zero value classifies commands by their words alone.
type Classifier struct {
	Lookup Lookup
}

// Classify returns what the command args (already split into words; a
// non-literal word is "") does when run in dir (repository-relative).
func (c Classifier) Classify(args []string, dir string) Info {
	cl := &cls{lookup: c.Lookup}
	return cl.classifyDepth(args, Clean(dir), 0)
}

// maxScriptDepth bounds how deep named scripts and script files are
// followed; maxVisits bounds the commands classified for one command.
const (
	maxScriptDepth = 6
	maxVisits      = 4096
)

// cls is one classification: the lookup, the work done and, for Analyze,
// the trace of what was reached.
type cls struct {
	lookup Lookup
	visits int
	tr     *trace
}

// call is one command to classify, wrappers stripped.
type call struct {
	tool  string   // normalised program name
	args  []string // the command; args[0] is the program as written
	rest  []string // its arguments
	dir   string
	depth int
}

func (c *cls) classifyDepth(raw []string, dir string, depth int) Info {
	c.visits++
	if c.visits > maxVisits {
		c.tr.problem("stopped following after " + itoa(maxVisits) + " commands")
		return Info{}
	}
	w := StripWrappers(raw)
	args := w.Args
	if w.Chdir != "" {
		dir = Join(dir, w.Chdir)
	}
	if len(args) == 0 {
		return Info{Kind: CIOnly}
	}
	n := c.tr.push(frame{raw: raw, args: args, wrapped: w, dir: dir})
	info := c.dispatch(call{tool: ToolName(args[0]), args: args, rest: args[1:], dir: dir, depth: depth})
	if info.Runner == "" && info.Kind.Has(Test|Bench) {
		info.Runner = runnerOf(info.Sig)
	}
	for _, wr := range w.Wrappers {
		if f := strings.Fields(wr); len(f) > 0 && coverageWrappers[ToolName(f[0])] && info.Kind.Has(Test) {
			info.Kind |= Coverage // nyc npm test: the tests, with coverage
		}
	}
	if c.tr.leafAt(n) {
		c.tr.leaf(info)
	}
	c.tr.pop()
	return info
}

func (c *cls) dispatch(k call) Info {
	// The classifiers of each ecosystem, tried in order (a local: the
	// classifiers call back into dispatch).
	ecosystems := [...]func(*cls, call) (Info, bool){
		(*cls).goTool, (*cls).nodeTool, (*cls).pythonTool, (*cls).rustTool, (*cls).jvmTool, (*cls).rubyTool,
		(*cls).phpTool, (*cls).elixirTool, (*cls).dotnetTool, (*cls).cTool, (*cls).runnerTool, (*cls).shellTool,
		(*cls).otherTool,
	}
	if strings.Contains(k.args[0], "/") && (repoScriptNames[strings.TrimSuffix(path.Base(k.args[0]), path.Ext(k.args[0]))] || strings.HasSuffix(k.args[0], ".sh")) {
		// scripts/test, ./ci/install.sh: the repository's own scripts,
		// not the shell's test builtin or a tool of the same name.
		return c.classifyFile(k.args[0], k.dir, k.depth)
	}
	if inner, ok := unwrapRunner(k.tool, k.rest); ok {
		if inner.script != "" {
			if k.depth >= maxScriptDepth {
				c.tr.problem("stopped following at depth " + itoa(maxScriptDepth) + ": " + k.tool)
				return Info{}
			}
			return c.classifyScript(inner.script, k.dir, k.depth+1, k.tool+" --run")
		}
		return c.classifyDepth(inner.args, k.dir, k.depth+1)
	}
	if k.tool == "" {
		return Info{}
	}
	for _, eco := range ecosystems {
		if info, ok := eco(c, k); ok {
			return info
		}
	}
	// Scripts in the repository: ./test.sh, scripts/ci/test, ./run-tests.
	if strings.Contains(k.args[0], "/") || strings.HasSuffix(k.args[0], ".sh") {
		return c.classifyFile(k.args[0], k.dir, k.depth)
	}
	// An unknown tool that runs a known command: `vp exec pnpm test`,
	// `toolbox run -- make test`.
	rest := k.rest
	if len(rest) > 1 && (rest[0] == "exec" || rest[0] == "run" || rest[0] == "x" || rest[0] == "--") && k.depth < maxScriptDepth {
		m := c.tr.mark()
		inner := c.classifyDepth(dropRunnerFlags(rest[1:], nil), k.dir, k.depth+1)
		if inner.Kind&GateKinds != 0 && inner.Sig != "" {
			return inner
		}
		c.tr.rollback(m)
	}
	return Info{}
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
		for len(args) > 0 && IsAssignment(args[0]) {
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

func withSig(k Kind, sig string) Info {
	if k == 0 {
		return Info{}
	}
	return Info{Kind: k, Sig: sig}
}

// classifyFile classifies a script of the repository by its content when
// it can be read (a shell script), by its name otherwise.
func (c *cls) classifyFile(p, dir string, depth int) Info {
	byName := nameKindOfPath(p)
	sig := Clean(p)
	if c.lookup == nil && !strings.HasPrefix(p, "/") && !strings.HasPrefix(Join(dir, p), "..") {
		c.tr.script(Join(dir, p)) // only the command is known: the script it names
	}
	if c.lookup != nil && !strings.HasPrefix(p, "/") {
		f := Join(dir, p)
		if strings.HasPrefix(f, "..") || !c.lookup.Exists(f) {
			// Not in the repository: CI downloaded or generated it.
			return Info{Kind: Toolchain, Sig: sig}
		}
		c.tr.script(f)
	}
	if c.lookup != nil && depth < maxScriptDepth && !strings.HasPrefix(p, "/") {
		f := Join(dir, p)
		if body, ok := c.scriptFile(f); ok {
			info := c.classifyFileBody(body, dir, depth+1, f)
			info.Kind &^= Deploy | Service
			switch {
			case info.Kind&GateKinds == 0 && info.Kind.Has(Install):
				return Info{Kind: Install, Sig: sig}
			case info.Kind&GateKinds == 0 && info.Kind.Has(Toolchain):
				return Info{Kind: Toolchain, Sig: sig}
			}
			info.Kind &^= Install | Toolchain
			if info.Kind&GateKinds != 0 {
				k := info.Kind
				if byName&GateKinds != 0 && byName&^Watch != 0 && !IsCompositeName(strings.TrimSuffix(path.Base(p), path.Ext(p))) {
					// The name says what the script is for; the body may
					// also build or install on the way.
					k = byName&GateKinds | k&(Coverage|E2E)
				}
				return Info{Kind: k, Sig: sig, Inner: info.Sig, Inners: info.Inners, Runner: info.Runner}
			}
		}
	}
	return withSig(byName, sig)
}

// scriptFile reads a shell script of the repository.
func (c *cls) scriptFile(p string) (string, bool) {
	if c.lookup == nil || strings.HasPrefix(p, "..") {
		return "", false
	}
	return c.lookup.ScriptFile(p)
}

// classifyFileBody is classifyScript for the body of a script file.
func (c *cls) classifyFileBody(body, dir string, depth int, file string) Info {
	c.tr.push(frame{inFile: true})
	defer c.tr.pop()
	return c.classifyScript(body, dir, depth, file)
}

// classifyScript classifies a whole script body by the union of its
// commands. via names where the body comes from ("Makefile:test",
// "scripts/test.sh", "sh -c").
func (c *cls) classifyScript(body, dir string, depth int, via string) Info {
	cmds, err := Parse(body)
	if err != nil {
		c.tr.problem(via + ": does not parse as shell: " + firstLine(err.Error()))
		return Info{}
	}
	c.tr.push(frame{via: via, dir: dir})
	defer c.tr.pop()
	var out Info
	var sigs []string
	for _, sc := range cmds {
		if sc.Compound {
			// A loop or condition: its commands are steps of the analysis,
			// but the script is classified by its plain commands.
			if c.tr != nil {
				for _, in := range sc.Inner {
					c.line(in, dir, depth, true)
				}
			}
			continue
		}
		info := c.line(sc, dir, depth, false)
		if sc.OrFallback {
			continue
		}
		if info.Kind&GateKinds != 0 {
			sigs = append(sigs, info.Sig)
			out.Inners = append(out.Inners, info.Sig)
			out.Inners = append(out.Inners, info.Inners...)
			if out.Runner == "" && info.Kind.Has(Test) {
				out.Runner = info.Runner
			}
		}
		out.Kind |= info.Kind & (GateKinds | Watch | E2E | Service | Deploy | Install | Toolchain)
		if out.Note == "" {
			out.Note = info.Note
		}
	}
	if len(sigs) == 1 {
		out.Sig = sigs[0]
	}
	return out
}

// line classifies one command of a script, with the later stages of its
// pipe (recorded as steps, not counted in the kind).
func (c *cls) line(sc Command, dir string, depth int, conditional bool) Info {
	d := Join(dir, sc.Dir)
	c.tr.push(frame{line: sc.Text, fallback: sc.OrFallback, background: sc.Background, conditional: conditional, dirUnknown: sc.DirUnknown, dir: d})
	info := c.classifyDepth(sc.Args, d, depth)
	if c.tr != nil {
		for _, p := range sc.Piped {
			c.tr.push(frame{line: p.Text, piped: true, dir: d})
			c.classifyDepth(p.Args, Join(d, p.Dir), depth)
			c.tr.pop()
		}
	}
	c.tr.pop()
	return info
}

// hasScript reports whether runner defines script name in dir, without
// following it.
func (c *cls) hasScript(runner, dir, name string) bool {
	if c.lookup == nil {
		return false
	}
	_, _, ok := c.lookup.Script(runner, dir, name)
	return ok
}

// script returns the body of a named script and records it as followed.
func (c *cls) script(runner, dir, name string) (string, bool) {
	if c.lookup == nil {
		return "", false
	}
	body, file, ok := c.lookup.Script(runner, dir, name)
	if ok {
		c.tr.target(file, name)
	}
	return body, ok
}

// resolveScript classifies a named script of a runner by its body.
func (c *cls) resolveScript(runner, dir, name string, depth int) (Info, bool) {
	if c.lookup == nil {
		// Only the command is known: the script is read from its runner's
		// usual file, which the criterion depends on all the same.
		c.tr.target(ConventionalFile(runner, dir), name)
		return Info{}, false
	}
	if depth >= maxScriptDepth {
		if c.hasScript(runner, dir, name) {
			c.tr.problem("stopped following at depth " + itoa(maxScriptDepth) + ": " + runner + " " + name)
		}
		return Info{}, false
	}
	key := runner + "\x00" + dir + "\x00" + name
	if c.tr.active(key) {
		c.tr.problem("a cycle: " + runner + " " + name + " runs itself")
		return Info{}, false
	}
	body, file, ok := c.lookup.Script(runner, dir, name)
	// A script that is not defined is still a dependency: defining it
	// changes what the command runs.
	c.tr.target(file, name)
	if !ok {
		return Info{}, false
	}
	c.tr.enter(key)
	defer c.tr.leave(key)
	return c.classifyScript(body, dir, depth+1, file+":"+name), true
}

// scriptInfo gives the kind of a named script: by its body when it can be
// read, by its name otherwise. Composite names (ci, check) need the body.
func (c *cls) scriptInfo(runner, sig, dir, name string, depth int) Info {
	byName := ClassifyName(name)
	body, ok := c.resolveScript(runner, dir, name, depth)
	out := Info{Sig: sig, ScriptTool: runner, Script: name, Runner: body.Runner}
	body.Kind &^= Install | Toolchain
	switch {
	case ok && body.Kind != 0:
		out.Kind = body.Kind
		out.Note = body.Note
		out.Inner = body.Sig
		out.Inners = body.Inners
		if byName.Has(Coverage) {
			out.Kind |= Coverage
		}
		if byName != 0 && !byName.Has(Watch) && body.Kind&GateKinds == 0 {
			out.Kind |= byName
		}
	case ok:
		out.Kind = byName &^ Watch
	case IsCompositeName(name):
		out.Kind = Test // ci/check scripts run the tests, almost always
	default:
		out.Kind = byName
	}
	return out
}

// conventional are the files where each runner keeps its named scripts.
var conventional = map[string]string{
	"make": "Makefile", "just": "justfile", "task": "Taskfile.yml", "rake": "Rakefile", "npm": "package.json",
	"composer": "composer.json", "deno": "deno.json", "hatch": "pyproject.toml", "pdm": "pyproject.toml",
	"poe": "pyproject.toml", "tox": "tox.ini", "nox": "noxfile.py", "mix": "mix.exs",
}

// ConventionalFile is the file where runner keeps its named scripts in dir
// ("Makefile" for make, "package.json" for npm); "" for an unknown runner.
func ConventionalFile(runner, dir string) string {
	if f, ok := conventional[runner]; ok {
		return Join(dir, f)
	}
	return ""
}

// defaultTarget is what plain `make` (just, task) runs in dir.
func (c *cls) defaultTarget(runner, dir string) string {
	if c.lookup == nil {
		return ""
	}
	name, _ := c.lookup.DefaultTarget(runner, dir)
	return name
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
