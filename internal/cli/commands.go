package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/aiwg/agent-loop/internal/app"
	"github.com/aiwg/agent-loop/internal/config"
	"github.com/aiwg/agent-loop/internal/criteria"
	"github.com/aiwg/agent-loop/internal/loop"
)

// minutes is a flag value in whole minutes (e.g. --timeout 60).
type minutes struct{ d *time.Duration }

func (m minutes) String() string {
	if m.d == nil {
		return "0"
	}
	return fmt.Sprint(int(m.d.Minutes()))
}

func (m minutes) Set(s string) error {
	var n float64
	if _, err := fmt.Sscanf(s, "%g", &n); err != nil || strings.TrimSpace(s) == "" {
		if d, err := time.ParseDuration(s); err == nil {
			*m.d = d
			return nil
		}
		return fmt.Errorf("%q is not a number of minutes", s)
	}
	*m.d = time.Duration(n * float64(time.Minute))
	return nil
}

// intFlag accepts only integers and reports a clear error otherwise.
type intFlag struct{ p *int }

func (f intFlag) String() string {
	if f.p == nil {
		return "0"
	}
	return fmt.Sprint(*f.p)
}

func (f intFlag) Set(s string) error {
	var n int
	if _, err := fmt.Sscanf(s, "%d", &n); err != nil || fmt.Sprint(n) != strings.TrimSpace(strings.TrimPrefix(s, "+")) {
		return fmt.Errorf("%q is not a whole number", s)
	}
	*f.p = n
	return nil
}

func init() {
	register(subcommand{name: "run", usage: "run [flags] TASK", summary: "run a loop until the completion command passes", run: (*Command).runCmd})
	register(subcommand{name: "infer", usage: "infer [--format yaml|json] TASK", summary: "show the completion command agent-loop would use, with its evidence", run: (*Command).inferCmd})
	register(subcommand{name: "status", usage: "status [--all] [--check-stale] [--format text|json] [LOOP_ID]", summary: "list loops, or show one", run: (*Command).statusCmd})
	register(subcommand{name: "attach", usage: "attach LOOP_ID", summary: "follow a running loop's output", run: (*Command).attachCmd})
	register(subcommand{name: "pause", usage: "pause LOOP_ID", summary: "pause a running loop after its current iteration", run: (*Command).pauseCmd})
	register(subcommand{name: "resume", usage: "resume [--approve|--reject] LOOP_ID", summary: "continue a paused or crashed loop", run: (*Command).resumeCmd})
	register(subcommand{name: "abort", usage: "abort LOOP_ID", summary: "stop a loop for good", run: (*Command).abortCmd})
	register(subcommand{name: "report", usage: "report [--format md|json] LOOP_ID", summary: "print a loop's report", run: (*Command).reportCmd})
	register(subcommand{name: "demo", usage: "demo [--keep]", summary: "run a real loop on a bundled project with a scripted agent (no API key)", run: (*Command).demoCmd})
	register(subcommand{name: "action", usage: "action", summary: "the GitHub Action's main step (run by action.yml)",
		run: func(c *Command, ctx context.Context, _ []string) error {
			if code := app.ActionMain(ctx, c.io(), c.getenv, c.Stdout); code != 0 {
				return &app.ExitError{Code: code, Err: errors.New("")}
			}
			return nil
		}})
	register(subcommand{name: "version", usage: "version", summary: "print the version",
		run: func(c *Command, _ context.Context, _ []string) error {
			fmt.Fprintf(c.Stdout, "agent-loop %s\n", c.version())
			return nil
		}})
}

func (c *Command) runCmd(ctx context.Context, args []string) error {
	cfg := config.Defaults()
	fs, dir := c.flags("run", "run [flags] TASK")
	fs.StringVar(&cfg.Completion, "completion", "", "shell `command` that exits 0 exactly when the task is done (inferred when omitted)")
	fs.Var(intFlag{&cfg.MaxIterations}, "max-iterations", "at most `N` iterations (default 10)")
	fs.Var(minutes{&cfg.Timeout}, "timeout", "wall-clock limit for the whole loop, in `minutes` (default 60)")
	fs.Var(minutes{&cfg.IterationTimeout}, "iteration-timeout", "limit for one agent run, in `minutes` (default: what is left of --timeout)")
	fs.Var(minutes{&cfg.IdleTimeout}, "idle-timeout", "stop an agent that prints nothing for this many `minutes` (default 15)")
	fs.Var(minutes{&cfg.CheckTimeout}, "check-timeout", "limit for one run of the completion command, in `minutes` (default 20)")
	fs.StringVar(&cfg.Provider, "provider", cfg.Provider, "agent `CLI`: "+strings.Join(config.Providers, ", "))
	fs.StringVar(&cfg.AgentCommand, "agent-command", "", "with --provider command: the `command` to run (prompt on stdin, AGENT_LOOP_* variables)")
	fs.StringVar(&cfg.Model, "model", "", "`model` passed to the agent CLI")
	fs.Var(intFlag{&cfg.MaxTurns}, "max-turns", "per-iteration turn limit for CLIs that take one (default 50)")
	fs.StringVar(&cfg.Branch, "branch", "", "loop `branch` (default agent-loop/<loop_id>); your own branch never moves")
	fs.BoolVar(&cfg.NoCommit, "no-commit", false, "leave the changes uncommitted in the work tree")
	fs.BoolVar(&cfg.Push, "push", false, "push the loop branch to origin after every iteration")
	fs.BoolVar(&cfg.NoInfer, "no-infer-completion", false, "require --completion; never infer it")
	fs.BoolVar(&cfg.AutoCriteria, "auto-criteria", false, "adopt an inferred completion command without asking (high confidence only)")
	fs.StringVar(&cfg.Workdir, "workdir", "", "`directory` (relative to the repository root) the completion command runs in")
	fs.StringVar(&cfg.Setup, "setup", "", "`command` run once before the baseline check (install dependencies)")
	fs.StringVar(&cfg.LoopID, "loop-id", "", "loop `id` (ralph-<slug>-<8 hex>; generated when omitted)")
	fs.Float64Var(&cfg.BudgetUSD, "budget-usd", 0, "stop when the agent has spent this many `dollars` (0 = no budget)")
	fs.Int64Var(&cfg.MaxTokens, "max-tokens", 0, "stop when the agent has used this many `tokens` (0 = no limit)")
	fs.Var(intFlag{&cfg.ConfirmRuns}, "confirm-runs", "extra runs of the completion command that must also pass before a pass counts (default 1)")
	fs.StringVar(&cfg.RegressionPolicy, "regression-policy", cfg.RegressionPolicy, "after a cheating iteration: "+strings.Join(config.RegressionPolicies, ", "))
	fs.BoolVar(&cfg.AllowDirty, "allow-dirty", false, "start even if the work tree has uncommitted changes")
	fs.BoolVar(&cfg.Force, "force", false, "start even if an active loop has the same task")
	fs.BoolVar(&cfg.Quiet, "quiet", false, "print only the final report")
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg.Dir = *dir
	if fs.NArg() > 1 {
		return usagef("run takes one TASK argument, got %d (%q); quote the task, and put flags before it", fs.NArg(), fs.Args())
	}
	cfg.Task = strings.TrimSpace(fs.Arg(0))
	// --agent-command alone means the command provider.
	if cfg.AgentCommand != "" && !flagSet(fs, "provider") {
		cfg.Provider = "command"
	}
	res, err := app.Run(ctx, cfg, c.io(), app.Hooks{})
	return c.finishRun(res, err)
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

func (c *Command) finishRun(res *app.RunResult, err error) error {
	if res != nil {
		fmt.Fprintf(c.Stdout, "\n%s\n", res.Report)
		fmt.Fprintf(c.Stdout, "State: %s\n", res.Dir.Rel("state.json"))
	}
	if err != nil {
		return err
	}
	if code := res.Outcome.ExitCode(); code != loop.ExitCompleted {
		return &app.ExitError{Code: code, Err: fmt.Errorf("not completed: %s", res.Outcome.StopReason)}
	}
	return nil
}

func (c *Command) inferCmd(ctx context.Context, args []string) error {
	fs, dir := c.flags("infer", "infer [--format yaml|json] [-C DIR] TASK")
	format := fs.String("format", "yaml", "output `format`: yaml or json")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("infer takes one TASK argument, e.g. agent-loop infer \"fix the failing tests\"")
	}
	if *format != "yaml" && *format != "json" {
		return usagef("--format: unknown format %q (valid: yaml, json)", *format)
	}
	root, err := app.RepoOrDir(*dir)
	if err != nil {
		return err
	}
	p, err := criteria.Infer(ctx, root, fs.Arg(0))
	if err != nil {
		return err
	}
	var b []byte
	if *format == "json" {
		b, err = p.JSON()
	} else {
		b, err = p.YAML()
	}
	if err != nil {
		return err
	}
	c.Stdout.Write(b)
	if len(b) > 0 && b[len(b)-1] != '\n' {
		fmt.Fprintln(c.Stdout)
	}
	return nil
}

func (c *Command) statusCmd(ctx context.Context, args []string) error {
	fs, dir := c.flags("status", "status [--all] [--check-stale] [--format text|json] [LOOP_ID]")
	var o app.StatusOptions
	fs.BoolVar(&o.All, "all", false, "list finished loops too")
	fs.BoolVar(&o.CheckStale, "check-stale", false, "mark loops whose process is gone as crashed")
	fs.StringVar(&o.Format, "format", "text", "output `format`: text or json")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usagef("status takes at most one LOOP_ID")
	}
	o.LoopID = fs.Arg(0)
	return app.Status(*dir, o, c.io())
}

func (c *Command) oneLoop(name string, args []string) (string, string, error) {
	fs, dir := c.flags(name, name+" LOOP_ID")
	if err := parse(fs, args); err != nil {
		return "", "", err
	}
	if fs.NArg() != 1 {
		return "", "", usagef("%s takes one LOOP_ID (see `agent-loop status`)", name)
	}
	return *dir, fs.Arg(0), nil
}

func (c *Command) attachCmd(ctx context.Context, args []string) error {
	dir, id, err := c.oneLoop("attach", args)
	if err != nil {
		return err
	}
	return app.Attach(ctx, dir, id, c.io())
}

func (c *Command) pauseCmd(ctx context.Context, args []string) error {
	dir, id, err := c.oneLoop("pause", args)
	if err != nil {
		return err
	}
	return app.Pause(dir, id, c.io())
}

func (c *Command) abortCmd(ctx context.Context, args []string) error {
	dir, id, err := c.oneLoop("abort", args)
	if err != nil {
		return err
	}
	return app.Abort(dir, id, c.io())
}

func (c *Command) reportCmd(ctx context.Context, args []string) error {
	fs, dir := c.flags("report", "report [--format md|json] LOOP_ID")
	format := fs.String("format", "md", "output `format`: md or json")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("report takes one LOOP_ID (see `agent-loop status --all`)")
	}
	return app.Report(*dir, fs.Arg(0), *format, c.io())
}

func (c *Command) resumeCmd(ctx context.Context, args []string) error {
	fs, dir := c.flags("resume", "resume [--approve|--reject] LOOP_ID")
	var ro app.ResumeOptions
	fs.BoolVar(&ro.Approve, "approve", false, "accept the iteration a human gate stopped at")
	fs.BoolVar(&ro.Reject, "reject", false, "reject the iteration a human gate stopped at (revert it and go on)")
	fs.BoolVar(&ro.Quiet, "quiet", false, "print only the final report")
	fs.Var(minutes{&ro.Timeout}, "timeout", "wall-clock limit for this run, in `minutes` (default: the loop's)")
	fs.Var(intFlag{&ro.MaxIterations}, "max-iterations", "raise the loop's iteration limit to `N`")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("resume takes one LOOP_ID (see `agent-loop status --all`)")
	}
	if ro.Approve && ro.Reject {
		return usagef("--approve and --reject exclude each other")
	}
	res, err := app.Resume(ctx, *dir, fs.Arg(0), ro, c.io(), app.Hooks{})
	return c.finishRun(res, err)
}

func (c *Command) demoCmd(ctx context.Context, args []string) error {
	fs, _ := c.flags("demo", "demo [--keep]")
	keep := fs.Bool("keep", true, "keep the demo repository (its path is printed)")
	quiet := fs.Bool("quiet", false, "print only the final report")
	if err := parse(fs, args); err != nil {
		return err
	}
	res, err := app.Demo(ctx, c.io(), app.DemoOptions{Keep: *keep, Quiet: *quiet})
	return c.finishRun(res, err)
}
