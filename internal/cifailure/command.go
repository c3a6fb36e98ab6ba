package cifailure

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Shell is how the runner runs a run: script: a program and its
// arguments, "{0}" standing for the file the script is written to.
type Shell struct {
	// Name is the shell: as the workflow gives it ("bash", "sh", "python",
	// "pwsh", or a template such as "perl {0}"); "" for the default.
	Name string
	Argv []string
	// Ext is the extension of the script's file (".sh", ".py", ".ps1").
	Ext string
}

func (s Shell) String() string { return strings.Join(s.Argv, " ") }

// resolveShell gives the program and arguments the runner uses for a
// shell: value on Linux (actions/runner ScriptHandlerHelpers): no shell is
// `bash -e {0}` (`sh -e {0}` without bash), bash is `bash --noprofile
// --norc -e -o pipefail {0}`, sh is `sh -e {0}`, python is `python {0}`,
// pwsh and powershell need the program, cmd is Windows only, anything else
// is a template "program args..." that must contain {0}.
func resolveShell(spec string, lookPath func(string) (string, error)) (Shell, error) {
	spec = strings.TrimSpace(spec)
	has := func(p string) bool { _, err := lookPath(p); return err == nil }
	switch spec {
	case "":
		if has("bash") {
			return Shell{Argv: []string{"bash", "-e", "{0}"}, Ext: ".sh"}, nil
		}
		return Shell{Argv: []string{"sh", "-e", "{0}"}, Ext: ".sh"}, nil
	case "bash":
		if !has("bash") {
			return Shell{}, errors.New("it runs with shell: bash, and bash is not installed where the loop runs")
		}
		return Shell{Name: spec, Argv: []string{"bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "{0}"}, Ext: ".sh"}, nil
	case "sh":
		return Shell{Name: spec, Argv: []string{"sh", "-e", "{0}"}, Ext: ".sh"}, nil
	case "python":
		prog := "python"
		if !has(prog) {
			if !has("python3") {
				return Shell{}, errors.New("it runs with shell: python, and neither python nor python3 is installed where the loop runs")
			}
			prog = "python3"
		}
		return Shell{Name: spec, Argv: []string{prog, "{0}"}, Ext: ".py"}, nil
	case "pwsh", "powershell":
		if !has(spec) {
			return Shell{}, fmt.Errorf("it runs with shell: %s, and %s is not installed where the loop runs (install it with the setup input)", spec, spec)
		}
		return Shell{Name: spec, Argv: []string{spec, "-command", ". '{0}'"}, Ext: ".ps1"}, nil
	case "cmd":
		return Shell{}, errors.New("it runs with shell: cmd, which exists only on Windows runners")
	}
	prog, args, _ := strings.Cut(spec, " ")
	words, err := splitArgs(strings.TrimSpace(args))
	if err != nil {
		return Shell{}, fmt.Errorf("its shell: %q: %w", spec, err)
	}
	if len(words) == 0 {
		return Shell{}, fmt.Errorf("its shell: %q is not bash, sh, python, pwsh or a template with {0}", spec)
	}
	found := false
	for _, w := range words {
		found = found || strings.Contains(w, "{0}")
	}
	if !found {
		return Shell{}, fmt.Errorf("its shell: %q has no {0} for the script's file", spec)
	}
	if !has(prog) {
		return Shell{}, fmt.Errorf("it runs with shell: %s, and %s is not installed where the loop runs", spec, prog)
	}
	return Shell{Name: spec, Argv: append([]string{prog}, words...)}, nil
}

// splitArgs splits a shell template's arguments at blanks; double quotes
// group (as the runner's process start does).
func splitArgs(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in, any := false, false
	for _, r := range s {
		switch {
		case r == '"':
			in, any = !in, true
		case (r == ' ' || r == '\t') && !in:
			if any {
				out = append(out, cur.String())
				cur.Reset()
				any = false
			}
		default:
			cur.WriteRune(r)
			any = true
		}
	}
	if in {
		return nil, errors.New("an unclosed double quote")
	}
	if any {
		out = append(out, cur.String())
	}
	return out, nil
}

// MaxCommandBytes bounds the command: it is one argument of `sh -c`, and
// Linux limits one argument to 128 KiB.
const MaxCommandBytes = 120 << 10

// Command is the one shell command the loop's check runs, with `sh -c` at
// the repository root: every failed step, each written to a file of its
// own and run by its shell in its working directory with its environment,
// as the runner ran it; it runs them all and exits non-zero when any
// failed. No text of the workflow or the run reaches the shell unquoted:
// scripts, paths and values are single-quoted words.
func (c *Criterion) Command() (string, error) {
	if len(c.Steps) == 0 {
		return "", errors.New("the criterion has no step to run")
	}
	return script(c.Steps, c.Env, false, c.RunURL)
}

// SetupCommand runs the setup steps in order, stopping at the first that
// fails; "" when there are none.
func (c *Criterion) SetupCommand() (string, error) {
	if len(c.Setup) == 0 {
		return "", nil
	}
	return script(c.Setup, c.Env, true, c.RunURL)
}

// AddStep appends a command that must pass too, run with `sh -e` in
// workdir: the criterion inferred for a Fallback.
func (c *Criterion) AddStep(name, command, workdir string) {
	c.Steps = append(c.Steps, Step{Workflow: c.Workflow, Name: name, Run: command,
		Shell: Shell{Name: "sh", Argv: []string{"sh", "-e", "{0}"}, Ext: ".sh"}, WorkingDirectory: firstOf(workdir, ".")})
}

func script(steps []Step, defaults []EnvVar, stopAtFirst bool, runURL string) (string, error) {
	var b strings.Builder
	what := "the failed steps"
	if stopAtFirst {
		what = "the setup steps"
	}
	// The URL goes in a comment line: make sure it stays one.
	fmt.Fprintf(&b, "# agent-loop: %s of %s\n", what, strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, runURL))
	b.WriteString("agent_loop_rc=0\n")
	b.WriteString(`agent_loop_dir=$(mktemp -d "${TMPDIR:-/tmp}/agent-loop-ci.XXXXXX") || exit 1` + "\n")
	b.WriteString(`trap 'rm -rf "$agent_loop_dir"' EXIT` + "\n")
	if len(defaults) > 0 {
		b.WriteString("export")
		for _, e := range defaults {
			if !validEnvName(e.Name) {
				return "", fmt.Errorf("variable %q: not a valid name for the environment", e.Name)
			}
			b.WriteString(" " + quote(e.Name+"="+e.Value))
		}
		b.WriteString("\n")
	}
	for i, s := range steps {
		n := strconv.Itoa(i + 1)
		file := `"$agent_loop_dir/` + n + s.Shell.Ext + `"`
		content := s.Run
		if s.Shell.Name == "pwsh" || s.Shell.Name == "powershell" {
			content = "$ErrorActionPreference = 'stop'\n" + content + "\nif ((Test-Path -LiteralPath variable:\\LASTEXITCODE)) { exit $LASTEXITCODE }"
		}
		fmt.Fprintf(&b, "printf '%%s' %s >%s\n", quote(content), file)
		label := fmt.Sprintf("== step %d of %d: %s / %s", i+1, len(steps), s.Job, s.Name)
		if s.Job == "" {
			label = fmt.Sprintf("== step %d of %d: %s", i+1, len(steps), s.Name)
		}
		fmt.Fprintf(&b, "printf '%%s\\n' %s\n", quote(label))
		b.WriteString("(")
		if wd := firstOf(s.WorkingDirectory, "."); wd != "." {
			fmt.Fprintf(&b, "cd -- %s && ", quote(wd))
		}
		b.WriteString("exec env")
		for _, e := range s.Env {
			if !validEnvName(e.Name) {
				return "", fmt.Errorf("step %q: variable %q: not a valid name for the environment", s.Name, e.Name)
			}
			b.WriteString(" " + quote(e.Name+"="+e.Value))
		}
		for _, a := range s.Shell.Argv {
			b.WriteString(" " + argWord(a, file))
		}
		if stopAtFirst {
			b.WriteString(") || exit 1\n")
		} else {
			b.WriteString(") || agent_loop_rc=1\n")
		}
	}
	b.WriteString(`exit "$agent_loop_rc"` + "\n")
	if b.Len() > MaxCommandBytes {
		return "", fmt.Errorf("the command for %s is %d bytes, more than the %d one shell argument may hold; set the completion input to a shorter command", what, b.Len(), MaxCommandBytes)
	}
	return b.String(), nil
}

// quote makes s one single-quoted shell word.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// argWord renders an argument of a shell template as one shell word, {0}
// replaced by the script's file (a double-quoted variable expansion).
func argWord(a, file string) string {
	parts := strings.Split(a, "{0}")
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteString(file)
		}
		if p != "" {
			b.WriteString(quote(p))
		}
	}
	if b.Len() == 0 {
		return "''"
	}
	return b.String()
}
