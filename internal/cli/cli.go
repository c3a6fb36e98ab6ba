// Package cli is agent-loop's command line: subcommands and their flags,
// turned into calls of internal/app, and the exit codes (0 completed, 1 not
// completed, 2 bad input) in one place (internal/loop's Exit* constants).
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

	"github.com/aiwg/agent-loop/internal/actions"
	"github.com/aiwg/agent-loop/internal/app"
	"github.com/aiwg/agent-loop/internal/loop"
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
	}
	// The container action: main runs `agent-loop action`; the post step is
	// the same binary started as /agent-loop-post (see action.yml).
	if actions.IsPostInvocation(append([]string{c.Arg0}, args...)) {
		return app.ActionPost(ctx, c.io(), c.getenv, c.Stdout)
	}
	if len(args) == 0 {
		c.usage(c.Stderr)
		return loop.ExitConfig
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
	return loop.ExitConfig
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

func (c *Command) exit(err error) int {
	if err == nil {
		return loop.ExitCompleted
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var ee *app.ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil && ee.Err.Error() != "" {
			fmt.Fprintf(c.Stderr, "agent-loop: %v\n", ee.Err)
		}
		return ee.Code
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(c.Stderr, "agent-loop: %v\n", err)
		return loop.ExitConfig
	}
	fmt.Fprintf(c.Stderr, "agent-loop: %v\n", err)
	return loop.ExitNotCompleted
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

// flags returns a FlagSet for a subcommand with -C and help wired up.
func (c *Command) flags(name, usageLine string) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	dir := fs.String("C", ".", "run in `DIR` (any directory inside the repository)")
	fs.Usage = func() {
		fmt.Fprintf(c.Stderr, "Usage: agent-loop %s\n\nFlags:\n", usageLine)
		fs.PrintDefaults()
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
