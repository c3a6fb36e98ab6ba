// Package cli is agent-loop's command line, one of its two front doors (the
// GitHub Action, internal/action, is the other): subcommands and their
// flags, turned into calls of internal/app, and the exit codes (0
// completed, 1 not completed, 2 bad input: internal/exitcode). The flags
// of `run` and `resume` come from the parameter table (internal/spec).
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/aiwg/agent-loop/internal/action"
	"github.com/aiwg/agent-loop/internal/actions"
	"github.com/aiwg/agent-loop/internal/app"
	"github.com/aiwg/agent-loop/internal/exitcode"
	"github.com/aiwg/agent-loop/internal/spec"
	"github.com/aiwg/agent-loop/internal/weaken"
)

// Command is one invocation of agent-loop.
type Command struct {
	// Arg0 is the name the binary was started as: the Action's post step
	// runs it as /agent-loop-post.
	Arg0    string
	Version string
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	Environ func() []string
	// IsTerminal reports whether stdin is a terminal a person answers.
	IsTerminal func() bool
	// Context is the root context (signals cancel it); nil = a context
	// cancelled by SIGINT and SIGTERM.
	Context context.Context
}

// New returns the command wired to the process's streams and signals.
func New(version string) *Command {
	return &Command{
		Arg0: os.Args[0], Version: version, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ,
		IsTerminal: func() bool {
			// A character device is not enough (/dev/null is one): ask the
			// terminal driver.
			_, err := unix.IoctlGetTermios(int(os.Stdin.Fd()), unix.TCGETS)
			return err == nil
		},
	}
}

type subcommand struct {
	name, usage, summary string
	run                  func(c *Command, ctx context.Context, args []string) error
}

var subcommands []subcommand

func register(s subcommand) { subcommands = append(subcommands, s) }

// Main runs the command and returns the process exit code.
func (c *Command) Main(args []string) int {
	ctx := c.Context
	if ctx == nil {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		// A closed stdout or stderr (`agent-loop run ... | head -1`) makes
		// writes fail with EPIPE instead of killing the harness with
		// SIGPIPE mid-loop: the loop goes on and ends as it would have.
		// (Notify, not Ignore: an ignored SIGPIPE would be inherited by
		// the agent and the check.)
		pipe := make(chan os.Signal, 1)
		signal.Notify(pipe, syscall.SIGPIPE)
		defer signal.Stop(pipe)
	}
	// Defences are switched off only in agent-loop's own tests.
	if err := weaken.Check(); err != nil {
		fmt.Fprintf(c.Stderr, "agent-loop: %v\n", err)
		return exitcode.BadInput
	}
	// The container action: main runs `agent-loop action`; the post step is
	// the same binary started as /agent-loop-post (see action.yml).
	if actions.IsPostInvocation(append([]string{c.Arg0}, args...)) {
		return action.Post(ctx, c.io(), c.getenv, c.Stdout)
	}
	if len(args) == 0 {
		c.usage(c.Stderr)
		return exitcode.BadInput
	}
	switch args[0] {
	case "-h", "--help", "help":
		c.usage(c.Stdout)
		return 0
	case "-v", "--version":
		args[0] = "version"
	}
	for _, s := range subcommands {
		if s.name == args[0] {
			return c.exit(s.run(c, ctx, args[1:]))
		}
	}
	fmt.Fprintf(c.Stderr, "agent-loop: unknown command %q (valid: %s)\n", args[0], strings.Join(names(), ", "))
	return exitcode.BadInput
}

func (c *Command) getenv(k string) string {
	env := c.Environ()
	for i := len(env) - 1; i >= 0; i-- {
		if kk, v, ok := strings.Cut(env[i], "="); ok && kk == k {
			return v
		}
	}
	return ""
}

// exit prints err and returns the exit code it means.
func (c *Command) exit(err error) int {
	if err == nil {
		return exitcode.Completed
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var ce *codeError
	if errors.As(err, &ce) {
		return ce.code
	}
	fmt.Fprintf(c.Stderr, "agent-loop: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) || app.IsUsage(err) {
		return exitcode.BadInput
	}
	return exitcode.NotCompleted
}

// codeError carries an exit code decided elsewhere (the Action's), with
// nothing more to print.
type codeError struct{ code int }

func (e *codeError) Error() string { return fmt.Sprintf("exit code %d", e.code) }

func exitWith(code int) error {
	if code == exitcode.Completed {
		return nil
	}
	return &codeError{code: code}
}

// usageError is a command-line mistake: exit 2.
type usageError struct{ error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

func names() []string {
	var ns []string
	for _, s := range subcommands {
		ns = append(ns, s.name)
	}
	sort.Strings(ns)
	return ns
}

func (c *Command) usage(w io.Writer) {
	fmt.Fprint(w, "agent-loop runs an AI coding agent in a bounded, verified loop until your repository's own completion command passes.\n\nUsage:\n")
	for _, s := range subcommands {
		fmt.Fprintf(w, "  agent-loop %-48s %s\n", s.usage, s.summary)
	}
	fmt.Fprint(w, "\nEvery command takes -C DIR (default .). Flags come before positional arguments.\nExit codes: 0 completed, 1 not completed, 2 bad input or configuration.\nRun `agent-loop <command> -h` for a command's flags.\n")
}

// flags returns a FlagSet for a subcommand with -C and help wired up. The
// help lists params (from the parameter table, as spec.Usage writes them)
// and then the subcommand's own flags.
func (c *Command) flags(name, usageLine string, params []*spec.Param) (*flag.FlagSet, *string) {
	paramUsage := spec.Usage
	if name == "resume" {
		paramUsage = spec.ResumeUsage
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	dir := fs.String("C", ".", "run in `DIR` (any directory inside the repository)")
	fs.Usage = func() {
		fmt.Fprintf(c.Stderr, "Usage: agent-loop %s\n\nFlags:\n", usageLine)
		fmt.Fprint(c.Stderr, paramUsage(params))
		own := map[string]bool{}
		for _, p := range params {
			own[p.Flag] = true
		}
		fs.VisitAll(func(f *flag.Flag) {
			if own[f.Name] {
				return
			}
			arg, help := flag.UnquoteUsage(f)
			dashes := "--"
			if len(f.Name) == 1 {
				dashes = "-"
			}
			fmt.Fprintf(c.Stderr, "  %s%s\n        %s", dashes, strings.TrimSpace(f.Name+" "+arg), help)
			if f.DefValue != "" && f.DefValue != "false" {
				fmt.Fprintf(c.Stderr, " (default: %s)", f.DefValue)
			}
			fmt.Fprintln(c.Stderr)
		})
	}
	return fs, dir
}

// parse parses flags; a parse error is a usage error (exit 2).
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	return nil
}

func (c *Command) io() app.IO {
	env := c.Environ()
	interactive := c.IsTerminal != nil && c.IsTerminal()
	for _, kv := range env {
		if kv == "CI=true" || kv == "CI=1" || strings.HasPrefix(kv, "GITHUB_ACTIONS=true") {
			interactive = false
		}
	}
	return app.IO{Stdin: c.Stdin, Stdout: c.Stdout, Stderr: c.Stderr, Environ: env, Interactive: interactive}
}

func (c *Command) version() string {
	if c.Version != "" {
		return c.Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
