package criteria

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/aiwg/agent-loop/internal/lazyre"
	"github.com/aiwg/agent-loop/internal/shellcmd"
)

// Host is what inference may know of the machine the check will run on:
// which programs it has. It never runs them; a matrix entry the machine can
// run (the interpreter it has) is the default one, and a generator it lacks
// is left out.
type Host interface {
	// Has reports whether the program name is on the PATH.
	Has(name string) bool
	// Python is the version of the default python3 ("3.11"), "" when
	// unknown.
	Python() string
}

// PathHost is the Host of this machine: programs are looked up on the PATH
// (once each); the default interpreter's version is asked once.
type PathHost struct {
	mu      sync.Mutex
	seen    map[string]bool
	pyOnce  sync.Once
	version string
}

// Python runs `python3 --version` once (a tool of the machine, never the
// repository's code; from the root directory, so no project file picks the
// version) and returns its major.minor.
func (h *PathHost) Python() string {
	h.pyOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "python3", "--version")
		cmd.Dir = "/"
		out, err := cmd.CombinedOutput()
		if err != nil {
			return
		}
		if m := pyVersionOutRe.FindStringSubmatch(string(out)); m != nil {
			h.version = m[1]
		}
	})
	return h.version
}

var pyVersionOutRe = lazyre.New(`Python (3\.[0-9]+)`)

// Has looks name up on the PATH.
func (h *PathHost) Has(name string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if v, ok := h.seen[name]; ok {
		return v
	}
	if h.seen == nil {
		h.seen = map[string]bool{}
	}
	_, err := exec.LookPath(name)
	h.seen[name] = err == nil
	return err == nil
}

var defaultHost = &PathHost{}

// StaticHost is a Host whose programs and Python are given (tests, and a
// caller that knows the machine the check will run on).
type StaticHost struct {
	Programs      map[string]bool
	PythonVersion string
}

// Has reports whether the program is one of h.Programs.
func (h StaticHost) Has(name string) bool { return h.Programs[name] }

// Python returns h.PythonVersion.
func (h StaticHost) Python() string { return h.PythonVersion }

// safeVars are variables a fresh shell on the loop's machine has, and the
// shell's own parameters.
var safeVars = map[string]bool{
	"HOME": true, "PATH": true, "PWD": true, "OLDPWD": true, "USER": true, "SHELL": true, "TMPDIR": true, "TMP": true,
	"TEMP": true, "LANG": true, "LC_ALL": true, "TERM": true, "HOSTNAME": true, "RANDOM": true, "SECONDS": true,
	"LINENO": true, "IFS": true, "BASH_SOURCE": true, "BASH_VERSION": true, "OSTYPE": true, "MAKE": true,
	"MAKEFLAGS": true, "UID": true, "EUID": true, "PPID": true,
}

// varRefRe finds variable references: $NAME, ${NAME...}.
var varRefRe = lazyre.New(`\$(?:\{([A-Za-z_][A-Za-z0-9_]*)[^}]*\}|([A-Za-z_][A-Za-z0-9_]*))`)

// assignRe finds names the command itself defines: NAME=..., export NAME=,
// for NAME in, read NAME.
var assignRe = lazyre.New(`(?:^|[\s;&|(])(?:export\s+|local\s+|declare\s+(?:-\S+\s+)*)?([A-Za-z_][A-Za-z0-9_]*)=|\bfor\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\b|\bread\s+(?:-\S+\s+)*([A-Za-z_][A-Za-z0-9_]*)`)

// undefinedVars returns the variables the command reads that neither it
// nor a fresh shell defines (in the order they appear). References inside
// single quotes are literal text and do not count.
func undefinedVars(cmd string) []string {
	defined := map[string]bool{}
	for _, m := range assignRe.FindAllStringSubmatch(cmd, -1) {
		for _, g := range m[1:] {
			if g != "" {
				defined[g] = true
			}
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, seg := range unquotedSegments(cmd) {
		for _, m := range varRefRe.FindAllStringSubmatch(seg, -1) {
			name := firstNonEmpty(m[1], m[2])
			if defined[name] || safeVars[name] || seen[name] || strings.Contains(m[0], ":-") || strings.Contains(m[0], ":=") {
				continue
			}
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// unquotedSegments returns the parts of a shell text outside single
// quotes (where $ expands).
func unquotedSegments(s string) []string {
	var out []string
	var cur strings.Builder
	inSingle, inDouble := false, false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\\' && !inSingle && i+1 < len(s):
			cur.WriteByte(ch)
			cur.WriteByte(s[i+1])
			i++
		case ch == '\'' && !inDouble:
			if !inSingle {
				out = append(out, cur.String())
				cur.Reset()
			}
			inSingle = !inSingle
		case ch == '"' && !inSingle:
			inDouble = !inDouble
			cur.WriteByte(ch)
		default:
			if !inSingle {
				cur.WriteByte(ch)
			}
		}
	}
	return append(out, cur.String())
}

// producers build or create what a later command of the same chain runs or
// reads (a binary, a build directory).
func producesFiles(info cmdInfo, args []string) bool {
	if info.kind.Has(kBuild) || info.kind.Has(kInstall) {
		return true
	}
	if len(args) == 0 {
		return false
	}
	switch shellcmd.ToolName(args[0]) {
	case "mkdir", "cp", "mv", "tar", "unzip", "ln", "make", "cmake", "meson", "ninja", "configure", "autoreconf", "curl", "wget", "git":
		return true
	}
	return strings.HasSuffix(args[0], "configure") || strings.HasSuffix(args[0], "autogen.sh")
}

// outputDirs are directories a build writes: a path there that the
// repository lacks was made by a step of CI that the command leaves out.
var outputDirs = map[string]bool{"dist": true, "build": true, "target": true, "out": true, "artifacts": true, "_build": true, "bin": true, "obj": true, "wheelhouse": true, "pkg": true}

// installDirs are where the setup (composer install, npm ci, bundle
// install, a virtualenv) puts the tools a command runs.
var installDirs = map[string]bool{"vendor": true, "node_modules": true, ".venv": true, "venv": true, "env": true, ".bundle": true, "bin": true, ".tox": true, "_build": true, "deps": true}

// windowsGeneratorRe matches CMake generators and flags only Windows or
// macOS has.
var windowsGeneratorRe = lazyre.New(`(?i)^(visual studio|xcode|nmake|mingw|msys|borland|watcom)`)

// unrunnable says why a command cannot run in a fresh clone of the
// repository on this machine ("" when nothing is known against it): a CI
// expression or a variable that only CI sets, a directory or file that a
// left-out step creates, a generator for another platform.
func unrunnable(r *repo, command, workdir string) string {
	if strings.Contains(command, "${{") || placeholderRe.MatchString(command) || strings.Contains(workdir, "${{") || placeholderRe.MatchString(workdir) {
		return "it uses a GitHub Actions expression that only CI can resolve"
	}
	if workdir != "." && !r.isDir(workdir) {
		return "its directory " + workdir + " does not exist in the repository (a left-out CI step creates it)"
	}
	if vars := undefinedVars(command); len(vars) > 0 {
		return "it reads $" + strings.Join(vars, ", $") + ", which CI sets elsewhere and a fresh shell does not"
	}
	cmds, err := shellcmd.Parse(command)
	if err != nil {
		return ""
	}
	cl := classifier{}
	produced := false
	for _, sc := range cmds {
		if sc.DirUnknown {
			return "it changes to a directory that is not literal"
		}
		dir := join(workdir, sc.Dir)
		args := shellcmd.StripWrappers(sc.Args).Args
		if len(args) == 0 {
			continue
		}
		xargs := len(sc.Args) > 0 && shellcmd.ToolName(sc.Args[0]) == "xargs" || shellcmd.ToolName(args[0]) == "xargs"
		for _, p := range sc.Piped {
			xargs = xargs || len(p.Args) > 0 && shellcmd.ToolName(p.Args[0]) == "xargs"
		}
		if xargs {
			return "it takes the tests to run from its input (xargs), which CI computes"
		}
		if !produced && strings.Contains(args[0], "/") && !strings.HasPrefix(args[0], "/") && !strings.HasPrefix(args[0], "~") {
			p := join(dir, args[0])
			switch {
			case strings.HasPrefix(p, ".."):
			case r.isDir(p):
				return args[0] + " is a directory, not a command"
			case !r.exists(p) && !installDirs[strings.SplitN(strings.TrimPrefix(args[0], "./"), "/", 2)[0]]:
				return "it runs " + args[0] + ", which a fresh clone lacks (a left-out step builds or downloads it)"
			}
		}
		if !produced {
			for _, a := range args[1:] {
				if strings.HasPrefix(a, "-") {
					if _, v, ok := strings.Cut(a, "="); ok {
						a = v
					} else {
						continue
					}
				}
				first := strings.SplitN(strings.TrimPrefix(a, "./"), "/", 2)
				if len(first) == 2 && outputDirs[first[0]] && !r.exists(join(dir, first[0])) {
					return "it reads " + a + ", which a left-out step builds"
				}
			}
		}
		if shellcmd.ToolName(args[0]) == "cmake" {
			for i, a := range args {
				gen := ""
				switch {
				case a == "-G" && i+1 < len(args):
					gen = args[i+1]
				case strings.HasPrefix(a, "-G") && len(a) > 2:
					gen = a[2:]
				}
				if windowsGeneratorRe.MatchString(gen) {
					return "it generates a " + gen + " build, which this platform lacks"
				}
			}
		}
		if producesFiles(cl.classify(args, dir), args) {
			produced = true
		}
	}
	return ""
}

// repairGenerator drops a CMake generator the machine lacks (-G Ninja
// without ninja): CMake then writes Makefiles, which build and test the
// same.
func repairGenerator(command string, host Host) (string, string) {
	if host == nil || !strings.Contains(command, "-G") {
		return command, ""
	}
	for _, g := range []struct{ flag, tool string }{{"-G Ninja", "ninja"}, {"-GNinja", "ninja"}, {`-G "Ninja"`, "ninja"}, {"-G 'Ninja'", "ninja"}, {`-G "Ninja Multi-Config"`, "ninja"}} {
		if strings.Contains(command, g.flag+" ") || strings.HasSuffix(command, g.flag) {
			if host.Has(g.tool) {
				return command, ""
			}
			out := strings.Replace(command, " "+g.flag, "", 1)
			return out, "CI generates with `" + g.flag + "`; this machine has no " + g.tool + ", so CMake's default generator is used (it builds the same targets)"
		}
	}
	return command, ""
}

// checkRunnable marks every candidate of a pool that cannot run in a fresh
// clone as unusable, with the reason.
func checkRunnable(r *repo, pool []candidate) {
	for i := range pool {
		c := &pool[i]
		if c.unusable != "" {
			continue
		}
		if why := unrunnable(r, c.command, c.workdir); why != "" {
			c.unusable = why
			continue
		}
		if c.setup != "" {
			if why := unrunnable(r, c.setup, c.workdir); why != "" && !strings.Contains(why, "fresh clone lacks") && !strings.Contains(why, "left-out step builds") {
				repaired, dropped, essential := repairSetup(r, c.setup, c.workdir)
				if essential {
					c.unusable = "its setup cannot run: " + why
					continue
				}
				c.evidence = append(c.evidence, finding(c.layer, c.source, "setup steps that cannot run in a fresh clone left out ("+why+"): `"+strings.Join(dropped, "`, `")+"`"))
				c.setup = repaired
			}
		}
		if why := needsBuildTree(c.setup, c.command); why != "" {
			c.unusable = why
		}
	}
}

// repairSetup keeps the commands of a setup that can run in a fresh clone
// (a CI setup also downloads toolchains into paths of its own, or reads
// variables CI sets). essential: a command that cannot run configures the
// build the check tests (cmake, meson, ./configure): without it the check
// cannot run either.
func repairSetup(r *repo, setup, workdir string) (kept string, dropped []string, essential bool) {
	cmds, err := shellcmd.Parse(setup)
	if err != nil {
		return "", []string{setup}, false
	}
	var parts []string
	dir := "."
	for _, sc := range cmds {
		text := sc.Text
		if sc.Dir != dir && !sc.DirUnknown {
			text = inDir(dir, sc.Dir, text)
			dir = sc.Dir
		}
		if why := unrunnable(r, text, workdir); why != "" || sc.DirUnknown {
			args := shellcmd.StripWrappers(sc.Args).Args
			if len(args) > 0 {
				switch tool := shellcmd.ToolName(args[0]); {
				case tool == "cmake" || tool == "meson" || strings.HasSuffix(args[0], "configure"):
					return "", nil, true
				}
			}
			dropped = append(dropped, sc.Text)
			continue
		}
		parts = append(parts, text)
	}
	return strings.Join(parts, " && "), dropped, false
}

// needsBuildTree says why a ctest (or `make test` in a CMake build
// directory) cannot run: nothing before it, in the setup or the command,
// configures and builds the tree it tests.
func needsBuildTree(setup, command string) string {
	chain := command
	if setup != "" {
		chain = setup + " && " + command
	}
	cmds, err := shellcmd.Parse(chain)
	if err != nil {
		return ""
	}
	configured := false
	for _, sc := range cmds {
		args := shellcmd.StripWrappers(sc.Args).Args
		if len(args) == 0 {
			continue
		}
		switch tool := shellcmd.ToolName(args[0]); {
		case tool == "cmake" || tool == "meson" || strings.HasSuffix(args[0], "configure") || tool == "autoreconf":
			configured = true
		case tool == "ctest" && !configured:
			return "ctest runs the tests of a configured, built tree, and nothing before it configures one"
		}
	}
	return ""
}
