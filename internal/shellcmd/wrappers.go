package shellcmd

import (
	"path"
	"strings"

	"github.com/aiwg/agent-loop/internal/lazyre"
)

// wrapperSpec describes a command that runs its arguments.
type wrapperSpec struct {
	// valued are the flags that take the next word as their value.
	valued map[string]bool
	// chdir are the flags whose value is a directory the command runs in.
	chdir map[string]bool
	// positionals is how many words after the flags belong to the wrapper
	// (taskset's mask, chrt's priority).
	positionals int
	// notRun are flags with which the wrapper runs nothing (command -v).
	notRun map[string]bool
}

// wrappers are commands that run their arguments: sudo go test, timeout 10m
// npm test, xvfb-run -a npm test, nice -n 10 make test, env -u CI make test.
var wrappers = map[string]wrapperSpec{
	"sudo":             {valued: set("-u", "--user", "-g", "--group", "-C", "--close-from", "-D", "--chdir", "-h", "--host", "-p", "--prompt", "-r", "--role", "-t", "--type", "-T", "--command-timeout"), chdir: set("-D", "--chdir")},
	"doas":             {valued: set("-u", "-C")},
	"env":              {valued: set("-u", "--unset", "-C", "--chdir", "-S", "--split-string"), chdir: set("-C", "--chdir")},
	"time":             {valued: set("-f", "--format", "-o", "--output")},
	"nice":             {valued: set("-n", "--adjustment")},
	"timeout":          {valued: set("-s", "-k", "--signal", "--kill-after"), positionals: 1},
	"xvfb-run":         {valued: set("-s", "-n", "--server-args", "-e", "--error-file", "-f", "--auth-file", "-p", "--xauth-protocol", "-w", "--wait")},
	"stdbuf":           {valued: set("-i", "-o", "-e", "--input", "--output", "--error")},
	"command":          {notRun: set("-v", "-V")},
	"exec":             {valued: set("-a")},
	"dbus-run-session": {valued: set("--config-file", "--dbus-daemon")},
	"catchsegv":        {},
	"unbuffer":         {},
	"nohup":            {},
	"retry":            {valued: set("-t", "--tries", "-d", "--delay", "-m", "--max-time")},
	"ionice":           {valued: set("-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid")},
	"taskset":          {valued: set("--cpu-list"), positionals: 1, notRun: set("-p", "--pid")},
	"chrt":             {valued: set("-T", "-P", "-D"), positionals: 1},
	"setsid":           {},
	"eatmydata":        {},
	"chronic":          {},
	"xargs":            {valued: set("-n", "--max-args", "-P", "--max-procs", "-I", "-L", "--max-lines", "-d", "--delimiter", "-a", "--arg-file", "-s", "--max-chars", "-E", "--eof")},
	"flock":            {valued: set("-w", "--timeout", "-E", "--conflict-exit-code"), positionals: 1},
	"valgrind":         {},
	"caffeinate":       {valued: set("-t", "-w")},
	// Coverage tools that run the test command they are given (nyc npm
	// test, c8 mocha): the tests are the inner command's.
	"nyc": {valued: set("-r", "--reporter", "--report-dir", "--temp-dir", "-t", "-n", "--include", "-x", "--exclude", "-e", "--extension", "-i", "--require", "--lines", "--branches", "--functions", "--statements", "--cwd", "--nycrc-path", "--per-file-threshold"), notRun: set("--version", "-v", "--help", "-h")},
	"c8":  {valued: set("-r", "--reporter", "--reports-dir", "-o", "--temp-directory", "-n", "--include", "-x", "--exclude", "-e", "--extension", "--lines", "--branches", "--functions", "--statements", "--src", "--config"), notRun: set("--version", "-v", "--help", "-h")},
}

// ownSubcommands are a wrapper's own subcommands: with one of them it runs
// no command of the user's.
var ownSubcommands = map[string]map[string]bool{
	"nyc": set("report", "check-coverage", "merge", "instrument"),
	"c8":  set("report", "check-coverage"),
}

// coverageWrappers measure the coverage of the command they run.
var coverageWrappers = map[string]bool{"nyc": true, "c8": true}

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// timeoutDurationRe is the duration argument of timeout(1).
var timeoutDurationRe = lazyre.New(`^[0-9.]+[smhd]?$`)

// Wrapped is a command with its wrappers taken off.
type Wrapped struct {
	// Args are the command the wrappers run (empty when they run none).
	Args []string
	// Wrappers are the wrappers, each as written: "nice -n 10",
	// "timeout 10m", "env -u CI".
	Wrappers []string
	// Env are the variables set for the command (NAME=value), Unset the
	// ones removed (env -u), ClearEnv is env -i.
	Env      []string
	Unset    []string
	ClearEnv bool
	// Chdir is the directory a wrapper moves to (env -C, sudo -D),
	// relative to where the command starts; "" when none.
	Chdir string
}

// StripWrappers removes leading variable assignments and wrapper commands.
func StripWrappers(args []string) Wrapped {
	var w Wrapped
	for len(args) > 0 {
		a := args[0]
		if IsAssignment(a) {
			w.Env = append(w.Env, a)
			args = args[1:]
			continue
		}
		name := path.Base(a)
		spec, ok := wrappers[name]
		if !ok {
			break
		}
		start := args
		args = args[1:]
		stop := false
		for len(args) > 0 {
			b := args[0]
			if IsAssignment(b) && name == "env" {
				w.Env = append(w.Env, b)
				args = args[1:]
				continue
			}
			if b == "--" {
				args = args[1:]
				break
			}
			if b == "-" && name == "env" {
				w.ClearEnv = true
				args = args[1:]
				continue
			}
			if !strings.HasPrefix(b, "-") || b == "-" {
				break
			}
			flag, value, hasValue := strings.Cut(b, "=")
			if !strings.HasPrefix(b, "--") {
				flag, hasValue = b, false
			}
			if spec.notRun[flag] {
				stop = true
				break
			}
			args = args[1:]
			if spec.valued[flag] && !hasValue && len(args) > 0 {
				value, hasValue = args[0], true
				args = args[1:]
			}
			switch {
			case name == "env" && (flag == "-i" || flag == "--ignore-environment"):
				w.ClearEnv = true
			case name == "env" && (flag == "-u" || flag == "--unset") && hasValue:
				w.Unset = append(w.Unset, value)
			case spec.chdir[flag] && hasValue:
				w.Chdir = Join(w.Chdir, value)
			case name == "env" && strings.HasPrefix(b, "-u") && len(b) > 2 && !strings.HasPrefix(b, "--"):
				w.Unset = append(w.Unset, b[2:])
			}
		}
		if !stop && len(args) > 0 && ownSubcommands[name][args[0]] {
			stop = true // c8 report, nyc check-coverage: the tool's own work
		}
		if stop {
			args = start
			break
		}
		for i := 0; i < spec.positionals && len(args) > 0; i++ {
			if name == "timeout" && !timeoutDurationRe.MatchString(args[0]) {
				break
			}
			args = args[1:]
		}
		if name == "retry" && len(args) > 0 && args[0] == "--" {
			args = args[1:]
		}
		if name == "flock" && len(args) > 1 && (args[0] == "-c" || args[0] == "--command") {
			// flock FILE -c 'script' runs the script with sh -c.
			w.Wrappers = append(w.Wrappers, strings.Join(start[:len(start)-len(args)], " "))
			args = append([]string{"sh", "-c"}, args[1:]...)
			continue
		}
		w.Wrappers = append(w.Wrappers, strings.Join(start[:len(start)-len(args)], " "))
	}
	if len(args) > 0 {
		w.Args = args
	}
	return w
}

// stripWrappers is StripWrappers' command.
func stripWrappers(args []string) []string { return StripWrappers(args).Args }
